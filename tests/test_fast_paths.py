"""The session's cheap paths: what a fast system's session never pays for, and report
files whose layout keeps their writing linear in json's C encoder."""

from __future__ import annotations

import gc
import json
import math
import textwrap
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from pytest_ragv2.report.summary import summary_json_pieces, write_summary


def summary_json_text(data: Mapping[str, Any]) -> str:
    return "".join(summary_json_pieces(data))


# records every thread a session starts, by name, into threads.txt at its end
THREAD_LOG = textwrap.dedent(
    """\
    import threading

    STARTED = []
    _start = threading.Thread.start


    def _recording_start(self, *args, **kwargs):
        STARTED.append(self.name)
        return _start(self, *args, **kwargs)


    threading.Thread.start = _recording_start


    def pytest_unconfigure(config):
        with open("threads.txt", "w") as out:
            out.write("\\n".join(STARTED))
    """
)

SLOW_SYSTEMS = textwrap.dedent(
    """\
    import time

    from ragsystems import good, weak


    def slow_good(query, k, **options):
        time.sleep(0.02)
        return good(query, k)


    def slow_weak(query, k, **options):
        time.sleep(0.02)
        return weak(query, k)
    """
)


def _threads(pytester: pytest.Pytester, *args: str) -> list[str]:
    pytester.makeconftest(THREAD_LOG)
    result = pytester.runpytest_subprocess("--ragv2-layer=A", "--ragv2-reps=3", *args)
    assert result.ret in (0, 1), result.stdout.str()
    return (pytester.path / "threads.txt").read_text().split("\n")


def test_a_fast_systems_session_never_imports_in_the_background(
    project: pytest.Pytester,
) -> None:
    # instant systems keep the main thread busy: background imports would only take the
    # GIL from it, so the end's modules are imported when the end needs them
    assert "ragv2-warm-imports" not in _threads(project)


def test_a_session_waiting_on_its_systems_imports_the_end_s_modules_meanwhile(
    project: pytest.Pytester,
) -> None:
    project.makepyfile(slowsystems=SLOW_SYSTEMS)
    pyproject = (project.path / "pyproject.toml").read_text()
    pyproject = pyproject.replace("ragsystems:weak", "slowsystems:slow_weak")
    (project.path / "pyproject.toml").write_text(
        pyproject.replace("ragsystems:good", "slowsystems:slow_good")
    )
    assert "ragv2-warm-imports" in _threads(project)


def test_summary_json_text_is_json_dumps_indent_2_outside_the_per_case_tables() -> None:
    data = {"a": {"b": [1, {"c": None}], "d": "é\u0085"}, "e": [], "f": {}, "g": 1.5}
    assert summary_json_text(data) == json.dumps(data, indent=2, ensure_ascii=False)


def test_summary_json_text_puts_each_case_row_and_unmet_run_on_one_line() -> None:
    data = {
        "run_id": "r",
        "by_case": {"v1": {"Q1": {"recall@5": 1.0, "ci": {"low": 0.5}}, "Q2": {}}, "v2": {}},
        "unmet_runs": [{"case": "Q1", "reasons": ["missed"]}],
        "gates": [{"name": "g"}],
    }
    text = summary_json_text(data)
    assert json.loads(text) == data
    lines = text.splitlines()
    assert '      "Q1": {"recall@5": 1.0, "ci": {"low": 0.5}},' in lines
    assert '    {"case": "Q1", "reasons": ["missed"]}' in lines
    assert '    "v2": {}' in lines
    assert '      "name": "g"' in lines  # other tables keep json.dumps's indenting


def test_each_case_of_the_diagnosis_stands_on_one_line_made_when_written() -> None:
    from pytest_ragv2.deciding.diagnosis import CaseDiagnosis, CasesJson

    entries = [
        CaseDiagnosis("Q2", "v1", "ok", "found"),
        CaseDiagnosis("Q1", "v2", "retrieval_missed", "not in the top 5"),
        CaseDiagnosis("Q1", "v1", "ok", "found"),
    ]
    cases = CasesJson(entries)
    assert not isinstance(cases, dict)  # a view: each case's dict is made when it is read
    assert list(cases) == ["Q1", "Q2"]
    data = {"diagnosis": {"layers": ["A"], "cases": cases}, "empty": {"cases": CasesJson([])}}
    text = summary_json_text(data)
    plain = json.loads(json.dumps(data, default=dict))
    assert json.loads(text) == plain
    q1 = plain["diagnosis"]["cases"]["Q1"]
    assert q1 == {
        "v2": {"diagnosis": "retrieval_missed", "reason": "not in the top 5"},
        "v1": {"diagnosis": "ok", "reason": "found"},
    }
    assert f'      "Q1": {json.dumps(q1)},' in text.splitlines()
    assert '      "A"' in text.splitlines()  # the rest keeps json.dumps's indenting


FREEZE_LOG = textwrap.dedent(
    """\
    import gc


    def pytest_sessionfinish(session):
        with open("frozen.txt", "w") as out:
            out.write(str(gc.get_freeze_count()))
    """
)


def test_a_session_s_cases_and_items_are_frozen_out_of_the_cyclic_collector(
    project: pytest.Pytester,
) -> None:
    # a session of its own process freezes what lives until its end; one run inside another
    # (this very test's in-process run) never freezes its host's objects
    project.makeconftest(FREEZE_LOG)
    assert project.runpytest_subprocess("--ragv2-layer=A").ret in (0, 1)
    assert int((project.path / "frozen.txt").read_text()) > 1000
    assert project.runpytest("--ragv2-layer=A").ret in (0, 1)
    assert int((project.path / "frozen.txt").read_text()) == 0


# whether the cyclic collector runs: while the cases are collected, and in the first test
GC_STATE_LOG = textwrap.dedent(
    """\
    import gc

    import pytest

    SEEN = {}


    def pytest_collection_modifyitems(items):
        SEEN["collecting"] = gc.isenabled()


    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_call(item):
        SEEN.setdefault("running", gc.isenabled())


    def pytest_unconfigure(config):
        with open("gc.txt", "w") as out:
            out.write(f"{SEEN.get('collecting')} {SEEN.get('running')}")
    """
)


@pytest.mark.parametrize("in_process", [False, True])
def test_the_cyclic_collector_sleeps_through_collection_only(
    project: pytest.Pytester, in_process: bool
) -> None:
    project.makeconftest(GC_STATE_LOG)
    run = project.runpytest if in_process else project.runpytest_subprocess
    assert run("--ragv2-layer=A").ret in (0, 1)
    assert (project.path / "gc.txt").read_text() == "False True"
    assert gc.isenabled()
    # an ordinary session (no layer) is left alone
    assert run("--collect-only", "-q").ret in (0, 5)
    assert (project.path / "gc.txt").read_text().startswith("True")


# every two runs, what they left is frozen; a garbage cycle made in each run is freed
RUN_FREEZE_LOG = textwrap.dedent(
    """\
    import gc
    import weakref

    import pytest

    import pytest_ragv2.plugin.hooks

    pytest_ragv2.plugin.hooks.FREEZE_EVERY_RUNS = 2
    FROZEN = {}
    CYCLES = []


    class Node:
        pass


    @pytest.hookimpl(trylast=True)
    def pytest_collection_finish(session):
        FROZEN["collected"] = gc.get_freeze_count()


    def pytest_runtest_call(item):
        node = Node()
        node.self = node  # a cycle nothing else refers to, once this hook returns
        CYCLES.append(weakref.ref(node))


    def pytest_sessionfinish(session):
        alive = sum(ref() is not None for ref in CYCLES)
        with open("frozen.txt", "w") as out:
            out.write(f"{FROZEN['collected']} {gc.get_freeze_count()} {len(CYCLES)} {alive}")
    """
)


def test_what_the_runs_leave_is_frozen_every_few_runs_and_their_garbage_freed(
    project: pytest.Pytester,
) -> None:
    project.makeconftest(RUN_FREEZE_LOG)
    assert project.runpytest_subprocess("--ragv2-layer=A", "--ragv2-reps=3").ret in (0, 1)
    collected, finished, runs, alive = map(int, (project.path / "frozen.txt").read_text().split())
    assert runs >= 6
    assert finished > collected > 1000
    assert alive == 0


@pytest.mark.parametrize("nan", [False, True])
def test_summary_json_is_written_as_to_json_gives_it_with_or_without_a_nan(
    tmp_path: Path, nan: bool
) -> None:
    # written straight from the summary as built (tuples, no copy), or from the cleaned
    # copy when a NaN is in it: the same text as to_json()'s either way
    from tests.report.test_report_plots import ROLES_A, retrieval_records, session

    summary = session(retrieval_records(ROLES_A), "A", ROLES_A)
    ruled: dict[str, object] = {"listed": {"pair": ("a", 1), "nested": [("b", 2.5)]}}
    if nan:
        ruled["undefined"] = {"value": math.nan, "also": [math.nan, ("x", math.inf)]}
    summary.adjudication = ruled
    path = write_summary(tmp_path, summary, "", "")
    expected = summary_json_text(summary.to_json())
    assert path.read_text(encoding="utf-8") == expected
    written = json.loads(expected)
    assert written["adjudication"]["listed"] == {"pair": ["a", 1], "nested": [["b", 2.5]]}
    if nan:
        assert written["adjudication"]["undefined"] == {
            "value": None,
            "also": [None, ["x", math.inf]],
        }
    assert not list(tmp_path.glob(".*.tmp"))


def test_a_page_that_fails_midway_leaves_the_summaries_written_and_no_torn_page(
    tmp_path: Path,
) -> None:
    # report.html's pieces are made as they are written, after summary.json and summary.md
    from tests.report.test_report_plots import ROLES_A, retrieval_records, session

    summary = session(retrieval_records(ROLES_A), "A", ROLES_A)

    def pieces() -> Iterator[str]:
        yield "<!DOCTYPE html>"
        raise RuntimeError("a case panel could not be made")

    with pytest.raises(RuntimeError):
        write_summary(tmp_path, summary, "# summary", pieces())
    assert json.loads((tmp_path / "summary.json").read_text())["layer"] == "A"
    assert (tmp_path / "summary.md").read_text() == "# summary"
    assert sorted(path.name for path in tmp_path.iterdir()) == ["summary.json", "summary.md"]
