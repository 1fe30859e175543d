"""The terminal: the verdict last, every line within the width, outcomes pytest can count."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from pytest_ragv2.deciding.records import RetrievalRecord
from pytest_ragv2.plugin.collect import REASONS_SHOWN, shown_reasons
from pytest_ragv2.plugin.progress import Progress, fmt_duration, progress_interval
from pytest_ragv2.report.tables import column_legend
from pytest_ragv2.report.terminal import clip
from pytest_ragv2.report.text_table import render_text
from pytest_ragv2.run.keys import RunKey
from pytest_ragv2.scoring.metrics import RETRIEVAL_METRICS
from tests.conftest import pyproject

WIDTH = 120


@pytest.fixture
def wide(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", str(WIDTH))


def _summary(pytester: pytest.Pytester, run_id: str) -> dict[str, Any]:
    path = pytester.path / "reports" / run_id / "summary.json"
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_the_bundled_layer_a_ends_with_the_failing_gates_and_the_verdict(
    bundled: pytest.Pytester, wide: None, workers: list[str]
) -> None:
    result = bundled.runpytest("--ragv2-layer=A", "--ragv2-run-id=a", *workers)
    lines = result.outlines
    assert max(len(line) for line in lines) <= WIDTH, max(lines, key=len)
    summary = _summary(bundled, "a")
    failed = [gate["name"] for gate in summary["gates"] if gate["decision"] == "fail"]
    assert failed
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    # the last lines: the gate table (each failing gate with its reason), the verdict
    # naming them, and pytest's count line saying why the exit status is 1
    verdict = lines[-2]
    assert verdict.startswith("=")
    assert "verdict: FAIL" in verdict
    assert all(name in verdict for name in failed)
    gates_at = max(i for i, line in enumerate(lines) if line == "gates:")
    gate_rows = "\n".join(lines[gates_at:-2])
    for gate in summary["gates"]:
        if gate["decision"] == "fail":
            assert f"{gate['name']} " in gate_rows
            assert " ".join(gate["reason"].split()[:3]) in " ".join(gate_rows.split())
    outcomes = result.parseoutcomes()
    assert outcomes["gates"] == len(failed)
    # the candidate's misses are failures (unmet), the baseline's expected ones (xfailed);
    # together with the passes they are every run
    assert outcomes["unmet"] + outcomes["xfailed"] + outcomes["passed"] == 164
    candidate = (
        sum(1 for run in summary["unmet_runs"] if run["role"] == "candidate") or outcomes["unmet"]
    )
    assert outcomes["unmet"] == candidate
    # pytest's own failure sections would repeat every run: they show nothing of ours
    assert "short test summary info" not in result.stdout.str()
    assert not any(line.startswith("FAILED") for line in lines)


def test_the_runs_that_missed_are_grouped_by_case_and_capped(
    bundled: pytest.Pytester, wide: None
) -> None:
    result = bundled.runpytest("--ragv2-layer=A", "--ragv2-run-id=a")
    lines = result.outlines
    start = next(i for i, line in enumerate(lines) if line.startswith("runs that did not meet"))
    heading = " ".join(" ".join(lines[start : start + 2]).split())
    outcomes = result.parseoutcomes()
    assert f"{outcomes['unmet']} in " in heading
    assert f"{outcomes['xfailed']} baseline/reference run(s) missed too" in heading
    rows = [line for line in lines[start + 1 : start + 14] if re.match(r"  ([A-Z]+\d+  |… )", line)]
    cases = [row.split()[0] for row in rows if not row.startswith("  …")]
    assert len(cases) == 10
    assert len(set(cases)) == 10
    more = next(row for row in rows if row.startswith("  …"))
    assert more.endswith("more case(s) in report.html")
    assert all("demo-v2" in row and " — " in row for row in rows if row.split()[0] in cases)


def test_a_passing_system_with_a_failing_gate_says_so_on_the_count_line(
    project: pytest.Pytester, wide: None
) -> None:
    (project.path / "pyproject.toml").write_text(pyproject(baseline="good", candidate="good"))
    # the baseline is deselected: every run passes, but nothing can be compared
    result = project.runpytest("--ragv2-layer=A", "--ragv2-systems=v2", "--ragv2-run-id=t")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    last = result.outlines[-1]
    assert "5 passed" in last
    assert "2 gates failed" in last
    assert "verdict: FAIL" in result.outlines[-2]


def test_a_passing_session_counts_no_gate(project: pytest.Pytester, wide: None) -> None:
    result = project.runpytest("--ragv2-layer=A", "--ragv2-run-id=t")
    assert result.ret == pytest.ExitCode.OK
    assert "gate" not in result.outlines[-1]
    assert "verdict: PASS" in result.outlines[-2]


def test_an_unmet_run_is_listed_in_verbose_mode_and_reported_whole_in_junit(
    project: pytest.Pytester, wide: None
) -> None:
    (project.path / "pyproject.toml").write_text(pyproject(baseline="good", candidate="weak"))
    result = project.runpytest("--ragv2-layer=A", "--ragv2-run-id=t", "-v", "--junitxml=junit.xml")
    result.stdout.fnmatch_lines(["*::C01?v2-en-r1? UNMET*"])
    result.stdout.fnmatch_lines(["*::C03?v1-en-r1? PASSED*"])
    junit = (project.path / "junit.xml").read_text(encoding="utf-8")
    assert 'failures="7"' in junit  # 4 unmet runs, 2 failed gates and the verdict
    assert "C01[v2-en-r1] did not meet its case" in junit


def test_progress_lines_on_request_and_none_under_q(project: pytest.Pytester) -> None:
    shown = project.runpytest("--ragv2-layer=A", "--ragv2-run-id=p1", "--ragv2-progress=0")
    progress = [line for line in shown.outlines if line.startswith("ragv2: ")]
    assert len(progress) == 9  # after every run but the last
    assert progress[0].startswith("ragv2: 1/10 runs (10%), 0 error(s), ")
    assert "ETA " in progress[0]
    assert "; latest C0" in progress[0]
    quiet = project.runpytest("--ragv2-layer=A", "--ragv2-run-id=p2", "-q")
    assert not any(line.startswith("ragv2: ") for line in quiet.outlines)
    wrong = project.runpytest("--ragv2-layer=A", "--ragv2-progress=sometimes")
    assert wrong.ret == pytest.ExitCode.USAGE_ERROR
    assert "--ragv2-progress: 'sometimes' is not auto, on, off" in wrong.stderr.str()


def test_progress_counts_errors_and_paces_the_eta() -> None:
    now = [0.0]
    written: list[str] = []
    progress = Progress(4, 10.0, written.append, clock=lambda: now[0])
    key = RunKey("C01", "v2", 1, "en", "A")
    ok = RetrievalRecord(key, "semantic", "development", "candidate", True, True, 0.02)
    failed = RetrievalRecord(key, "semantic", "development", "candidate", False, False, 0.5)
    now[0] = 5.0
    progress.add(ok)
    assert written == []  # not due yet
    now[0] = 12.0
    progress.add(failed)
    assert written == [
        "ragv2: 2/4 runs (50%), 1 error(s), 1 unmet, mean latency 260 ms, ETA 12s; "
        "latest C01 on v2 (en, r1)"
    ]
    now[0] = 30.0
    progress.add(ok)
    progress.add(ok)  # the last run: the summary follows, no progress line
    assert len(written) == 2


@pytest.mark.parametrize(
    ("setting", "verbosity", "interactive", "env", "expected"),
    [
        ("auto", 0, True, "", 15.0),
        ("auto", -1, True, "", None),
        ("auto", 0, False, "", None),
        ("auto", 0, True, "true", None),
        (None, 0, True, "", 15.0),
        ("on", -1, False, "true", 15.0),
        ("off", 1, True, "", None),
        ("2.5", 0, False, "", 2.5),
    ],
)
def test_progress_interval(
    monkeypatch: pytest.MonkeyPatch,
    setting: str | None,
    verbosity: int,
    interactive: bool,
    env: str,
    expected: float | None,
) -> None:
    monkeypatch.setenv("CI", env)
    assert progress_interval(setting, verbosity=verbosity, interactive=interactive) == expected


def test_durations() -> None:
    assert [fmt_duration(s) for s in (0.4, 59, 61, 3725)] == ["0s", "59s", "1m01s", "1h02m"]


def test_a_table_wider_than_the_terminal_wraps_its_text_columns() -> None:
    reason = "Δ +0.052 [-0.038, +0.162] (95.0% BCa bootstrap over 38 cases, 10,000 resamples)"
    table = (
        ["gate", "value", "threshold", "decision", "reason"],
        [
            ["recall_improvement", "0.052", "interval lower bound >= +0.050", "FAIL", reason * 2],
            ["error_rate", "0.000", "<= 0.01", "PASS", "0 of 82 runs failed"],
        ],
    )
    lines = render_text(table, width=80)
    assert max(len(line) for line in lines) <= 80
    assert len(lines) > 4  # the long reason took continuation lines
    assert " ".join(" ".join(lines).split()).count("10,000 resamples") == 2
    assert lines[-1].startswith("  error_rate")
    assert render_text(table) == render_text(table, width=10_000)


def test_a_table_of_many_numbers_splits_into_column_groups() -> None:
    header = ["system", *(f"metric{i}" for i in range(20))]
    rows = [["demo-v2", *(f"{i / 10:.3f}" for i in range(20))]]
    lines = render_text((header, rows), width=60)
    assert max(len(line) for line in lines) <= 60
    groups = [line for line in lines if line.startswith("  system")]
    assert len(groups) > 1  # each group repeats the naming column
    assert sum(line.count("metric") for line in groups) == 20


def test_clip_cuts_at_a_word_with_an_ellipsis() -> None:
    text = "gold evidence not in top 5: datenblatt-tvs-75.pdf p.2 § 4. Zulässige Medien"
    assert clip(text, 200) == text
    cut = clip(text, 40)
    assert len(cut) <= 40
    assert cut.endswith("…")
    assert text.startswith(cut[:-1])
    assert not text[len(cut) - 1].isalnum()


def test_the_legend_explains_the_short_metric_labels() -> None:
    legend = column_legend(["system", "R@5", "exact", "dup", "met", "leaks"], RETRIEVAL_METRICS)
    labels = [entry.split(":")[0] for entry in legend]
    assert labels == ["R@5", "exact", "dup", "met"]
    assert any(entry.startswith("dup: ") and "lower is better" in entry for entry in legend)


def test_a_failure_report_shows_the_first_reasons_each_cut() -> None:
    reasons = "\n".join(f"invented number {i}: " + "9" * 400 for i in range(5_000))
    shown = shown_reasons(reasons).splitlines()
    assert len(shown) == REASONS_SHOWN + 1
    assert all(len(line) <= 300 for line in shown)
    assert shown[-1] == f"… {5_000 - REASONS_SHOWN} more reason(s) in report.html"


def test_paths_on_screen_are_relative_to_where_pytest_ran(
    project: pytest.Pytester, wide: None
) -> None:
    result = project.runpytest("--ragv2-layer=A", "--ragv2-run-id=t")
    out = result.stdout.str()
    assert f"summary: {Path('reports') / 't' / 'summary.json'} (and summary.md" in out
    assert f"raw runs: {Path('raw-runs') / 't'}" in out


def test_control_characters_from_a_system_never_reach_the_terminal_raw(
    project: pytest.Pytester, wide: None
) -> None:
    # a file name with an escape sequence that would print a fake verdict line
    hostile = "\\x1b[2K\\r\\x1b[32mverdict: PASS (exit status 0)\\x1b[0m\\u202e.pdf"
    module = project.path / "ragsystems.py"
    module.write_text(
        module.read_text(encoding="utf-8") + f"\n\ndef hostile(query, k, **options):\n"
        f"    return [{{'file_id': '{hostile}', 'filename': '{hostile}', 'text': 'x'}}]\n"
    )
    (project.path / "pyproject.toml").write_text(pyproject(candidate="hostile"))
    result = project.runpytest("--ragv2-layer=A", "--ragv2-run-id=t", "--ragv2-progress=0")
    out = result.stdout.str()
    assert "\x1b" not in out
    assert "\u202e" not in out
    # the leaked file is named, escaped, in the runs that missed and the gate's reason
    assert "\\x1b[32mverdict: PASS" in out
    assert result.ret == pytest.ExitCode.TESTS_FAILED


def test_printable_escapes_controls_and_bidi_overrides() -> None:
    from pytest_ragv2.report.safe_text import printable

    assert (
        printable("a\x1b[31mb\x07c\x9bd\u202ee\u2066f") == "a\\x1b[31mb\\x07c\\x9bd\\u202ee\\u2066f"
    )
    assert printable("Zulässige Medien — 5 °C\tok") == "Zulässige Medien — 5 °C\tok"


def test_summary_markdown_keeps_system_and_case_text_inert(project: pytest.Pytester) -> None:
    hostile = "<img src=x onerror=alert(1)>*[x](javascript:alert(1))*|"
    module = project.path / "ragsystems.py"
    module.write_text(
        module.read_text(encoding="utf-8") + f"\n\ndef hostile(query, k, **options):\n"
        f"    return [{{'file_id': {hostile!r}, 'filename': {hostile!r}, 'text': 'x'}}]\n"
    )
    (project.path / "pyproject.toml").write_text(pyproject(candidate="hostile"))
    cases = project.path / "cases" / "development.yaml"
    cases.write_text(
        cases.read_text(encoding="utf-8").replace(
            "category: technical_table", "category: 'tech<b>nical</b>'", 1
        ),
        encoding="utf-8",
    )
    project.runpytest("--ragv2-layer=A", "--ragv2-run-id=t")
    markdown = (project.path / "reports" / "t" / "summary.md").read_text(encoding="utf-8")
    assert "onerror" in markdown  # the leaked file is named in the gate's details
    assert "<img" not in markdown
    assert "tech&lt;b&gt;nical&lt;/b&gt;" in markdown  # the category, in its table
    assert "<b>" not in markdown
    assert "[x](javascript" not in markdown
    assert "&lt;img src=x onerror=alert(1)&gt;" in markdown
