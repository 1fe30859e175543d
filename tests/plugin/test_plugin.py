"""The plugin in real pytest sessions (pytester): collection, runs, gates, exit status."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import pyproject

RUN_ID = ["--ragv2-run-id=testrun"]


def summary_of(pytester: pytest.Pytester, run_id: str = "testrun") -> dict[str, Any]:
    path = pytester.path / "reports" / run_id / "summary.json"
    return json.loads(path.read_text(encoding="utf-8"))


def gate(summary: dict[str, Any], name: str) -> dict[str, Any]:
    return next(g for g in summary["gates"] if g["name"] == name)


def raw_lines(pytester: pytest.Pytester, run_id: str = "testrun") -> list[dict[str, Any]]:
    """Every line of the run's raw-run files, plain or compressed, none left out."""
    from pytest_ragv2.run.rawruns import raw_run_files
    from tests.artifacts import artifact_text

    lines: list[dict[str, Any]] = []
    for path in raw_run_files(pytester.path / "raw-runs" / run_id):
        lines += [json.loads(line) for line in artifact_text(path).splitlines()]
    return lines


def test_plugin_is_inert_without_a_layer(project: pytest.Pytester) -> None:
    project.makepyfile(test_plain="def test_ok():\n    assert True\n")
    result = project.runpytest()
    result.assert_outcomes(passed=1)
    assert "pytest-ragv2" not in result.stdout.str()
    assert not (project.path / "raw-runs").exists()


def test_layer_a_collects_case_system_language_repetition(project: pytest.Pytester) -> None:
    result = project.runpytest("--ragv2-layer=A", "--collect-only", "-q", "--ragv2-reps=2")
    names = [line for line in result.outlines if "::" in line]
    # C01 and C02 have en+de, C03 en only: (2*2 + 1) prompts x 2 systems x 2 reps
    assert len(names) == 20
    assert "cases/development.yaml::C02[v2-de-r2]" in names
    assert not any("H01" in name for name in names), "holdout must not be collected by default"


def test_serial_run_scores_gates_and_exit_status(project: pytest.Pytester) -> None:
    result = project.runpytest("--ragv2-layer=A", *RUN_ID)
    # the weak baseline misses its evidence on C01/C02 (4 runs); that alone fails no session:
    # pytest counts those as expected failures, and the exit status is the verdict's
    result.assert_outcomes(passed=6, xfailed=4)
    assert result.ret == pytest.ExitCode.OK
    out = result.stdout.str()
    assert "verdict: PASS" in out
    assert "4 baseline/reference run(s) missed too" in out
    summary = summary_of(project)
    missed = {run["run"]: run for run in summary["unmet_runs"]}
    assert any(
        "datasheet.pdf p.2 (document at rank 2" in reason
        for reason in missed["C01[v1-en-r1]"]["reasons"]
    )
    assert summary["verdict"] == "pass"
    assert summary["runs"] == {"expected": 10, "recorded": 10}
    assert summary["systems"]["v2"]["recall@5"] == 1.0
    assert summary["systems"]["v1"]["recall@5"] == 0.0
    assert summary["systems"]["v2"]["mrr"] == 1.0
    assert summary["systems"]["v1"]["descriptors"] == {"index_version": "v1-2026-11"}
    assert gate(summary, "recall_improvement")["value"] == pytest.approx(1.0)
    assert gate(summary, "exact_lookup")["decision"] == "pass"
    assert set(summary["by_category"]["v2"]) == {
        "technical_table",
        "exact_lookup",
        "safe_no_answer",
    }
    assert set(summary["by_language"]["v1"]) == {"en", "de"}
    raws = raw_lines(project)
    assert len(raws) == 10
    assert {raw["key"]["system"] for raw in raws} == {"v1", "v2"}
    manifest = json.loads((project.path / "raw-runs" / "testrun" / "manifest.json").read_text())
    assert manifest["run_id"] == "testrun"
    assert "cases/development.yaml" in manifest["case_files"]
    assert manifest["systems"]["v1"]["descriptors"]["index_version"] == "v1-2026-11"


def test_candidate_worse_than_baseline_fails_the_session(project: pytest.Pytester) -> None:
    (project.path / "pyproject.toml").write_text(pyproject(baseline="good", candidate="weak"))
    result = project.runpytest("--ragv2-layer=A", *RUN_ID)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    out = result.stdout.str()
    assert "verdict: FAIL" in out
    summary = summary_of(project)
    assert gate(summary, "recall_improvement")["decision"] == "fail"
    assert gate(summary, "recall_improvement")["evidence"]["estimate"] < 0
    # every category has one or two cases here: reported, too small to decide alone
    regression = gate(summary, "category_regression")
    assert regression["decision"] == "pass"
    assert "worst:" in regression["reason"]
    assert all("not decisive" in line for line in regression["details"])


def test_leak_is_a_hard_veto(project: pytest.Pytester) -> None:
    (project.path / "pyproject.toml").write_text(pyproject(baseline="weak", candidate="leaky"))
    result = project.runpytest("--ragv2-layer=A", *RUN_ID)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    leak = gate(summary_of(project), "no_leak")
    assert leak["decision"] == "fail"
    assert leak["hard"] is True
    assert any("secret" in detail for detail in leak["details"])


def test_failing_system_is_recorded_as_errors_without_traceback(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "120")
    (project.path / "pyproject.toml").write_text(pyproject(baseline="weak", candidate="broken"))
    result = project.runpytest("--ragv2-layer=A", *RUN_ID)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    out = result.stdout.str()
    assert "Traceback" not in out
    summary = summary_of(project)
    assert summary["systems"]["v2"]["errors"] == 5
    assert gate(summary, "error_rate")["decision"] == "fail"
    assert "index offline" in out


def test_unreachable_rag_api_completes_with_errors(project: pytest.Pytester) -> None:
    extra = ""
    text = pyproject().replace(
        'retrieval = {adapter = "python", callable = "ragsystems:good"}',
        'retrieval = {adapter = "rag-api", url = "http://127.0.0.1:9", timeout_s = 2, '
        "retry = {attempts = 1}}",
    )
    (project.path / "pyproject.toml").write_text(text + extra)
    result = project.runpytest("--ragv2-layer=A", *RUN_ID)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert "Traceback" not in result.stdout.str()
    summary = summary_of(project)
    assert summary["systems"]["v2"]["errors"] == summary["systems"]["v2"]["runs"] == 5
    error_gate = gate(summary, "error_rate")
    assert error_gate["decision"] == "fail"
    assert error_gate["reason"].startswith("v2: 5 of 5 runs failed (transport: all, e.g. C01: ")
    assert error_gate["reason"].endswith("; v1: 0 of 5 runs failed")
    assert all(
        raw["error"]["kind"] == "transport"
        for raw in raw_lines(project)
        if raw["key"]["system"] == "v2"
    )


def test_malformed_case_file_is_located_and_others_still_run(project: pytest.Pytester) -> None:
    (project.path / "cases" / "broken.yaml").write_text(
        "- id: X01\n  category: semantic\n  prompt_en: 'ok'\n  required_evidance: []\n"
    )
    result = project.runpytest("--ragv2-layer=A", *RUN_ID)
    out = result.stdout.str()
    assert "cases/broken.yaml:4" in out
    assert "required_evidance" in out
    # the 10 runs of development.yaml (the baseline's 4 misses expected) + the error item
    result.assert_outcomes(passed=6, xfailed=4, failed=1)
    summary = summary_of(project)
    assert summary["runs"]["recorded"] == 10
    assert gate(summary, "gold_valid")["decision"] == "fail"
    assert result.ret == pytest.ExitCode.TESTS_FAILED


@pytest.mark.parametrize("parallel", [(), ("-n", "2")], ids=["serial", "xdist"])
def test_a_case_file_without_cases_is_a_located_warning(
    project: pytest.Pytester, parallel: tuple[str, ...]
) -> None:
    (project.path / "cases" / "empty.yaml").write_text("# cases to come\n")
    result = project.runpytest("--ragv2-layer=A", *RUN_ID, *parallel)
    out = result.stdout.str()
    assert "warnings summary" in out
    assert "cases/empty.yaml:1: CaseFileWarning: no case: the file is empty or only comments" in out
    # under xdist each worker collects the file and warns once (pytest groups the lines)
    result.assert_outcomes(passed=6, xfailed=4, warnings=2 if parallel else 1)
    assert gate(summary_of(project), "gold_valid")["decision"] == "pass"
    assert result.ret == pytest.ExitCode.OK


def test_gold_that_cannot_be_used_fails_gold_valid_and_is_not_run(
    project: pytest.Pytester,
) -> None:
    """An invalid claim pattern and an invalid split are located errors: those cases never
    run (nothing is blamed on a system's error rate), the other files still do."""
    (project.path / "cases" / "extra.yaml").write_text(
        "split: holdot\ncases:\n  - id: X01\n    category: semantic\n"
        "    prompt_en: 'ok'\n    required_evidence: []\n"
    )
    (project.path / "cases" / "claims.yaml").write_text(
        "- id: X02\n  category: semantic\n  prompt_en: 'ok'\n  required_evidence: []\n"
        "  expected_answer:\n    required_claims: [{text: x, pattern: '(x'}]\n"
    )
    result = project.runpytest("--ragv2-layer=A", *RUN_ID)
    out = result.stdout.str()
    assert "cases/extra.yaml:1: split: expected one of development, holdout (got 'holdot')" in out
    assert "cases/claims.yaml:6: case X02: expected_answer.required_claims[0].pattern:" in out
    assert "X01[" not in out
    assert "X02[" not in out
    result.assert_outcomes(passed=6, xfailed=4, failed=2)  # the runs + one error item a file
    summary = summary_of(project)
    assert summary["runs"]["recorded"] == 10
    assert gate(summary, "gold_valid")["decision"] == "fail"
    assert gate(summary, "error_rate")["decision"] == "pass"
    assert result.ret == pytest.ExitCode.TESTS_FAILED


def test_holdout_only_when_asked(project: pytest.Pytester) -> None:
    result = project.runpytest("--ragv2-layer=A", "--ragv2-split=holdout", "--collect-only", "-q")
    names = [line for line in result.outlines if "::" in line]
    assert names
    assert all("H01" in name for name in names)


def test_order_alternates_systems_and_is_reproducible_from_the_seed(
    project: pytest.Pytester,
) -> None:
    args = ("--ragv2-layer=A", "--collect-only", "-q", "--ragv2-seed=7", "--ragv2-reps=2")
    first = [line for line in project.runpytest(*args).outlines if "::" in line]
    second = [line for line in project.runpytest(*args).outlines if "::" in line]
    assert first == second
    leaders: dict[str, str] = {}
    for name in first:
        case = name.split("::")[1].split("[")[0]
        leaders.setdefault(case, name.split("[")[1].split("-")[0])
    ordered_cases = list(leaders)
    for previous, current in itertools.pairwise(ordered_cases):
        assert leaders[previous] != leaders[current], first
    # repetitions interleave: both systems' r1 come before any r2 of the same case
    case_items = [name for name in first if "::C01[" in name]
    assert [name.rsplit("-", 1)[1] for name in case_items[:4]] == ["r1]", "r1]", "r1]", "r1]"]


def test_mark_selection_and_strict_markers(project: pytest.Pytester) -> None:
    result = project.runpytest(
        "--ragv2-layer=A", "--strict-markers", "-m", "v2 and lang_de", "--collect-only", "-q"
    )
    names = [line for line in result.outlines if "::" in line]
    assert sorted(names) == [
        "cases/development.yaml::C01[v2-de-r1]",
        "cases/development.yaml::C02[v2-de-r1]",
    ]


def test_unknown_config_field_is_a_usage_error(project: pytest.Pytester) -> None:
    (project.path / "pyproject.toml").write_text(pyproject(extra="repetitons = 3"))
    result = project.runpytest("--ragv2-layer=A")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "repetitons" in result.stderr.str()


def _comparable(summary: dict[str, Any]) -> dict[str, Any]:
    def strip(row: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in row.items() if not k.startswith("latency")}

    return {
        "systems": {name: strip(row) for name, row in summary["systems"].items()},
        "by_category": {
            system: {name: strip(row) for name, row in rows.items()}
            for system, rows in summary["by_category"].items()
        },
        "runs": summary["runs"],
        "gates": [
            (g["name"], g["decision"]) for g in summary["gates"] if g["name"] != "retrieval_p95"
        ],
    }


def test_xdist_gives_the_same_aggregate_as_serial(project: pytest.Pytester) -> None:
    serial = project.runpytest("--ragv2-layer=A", "--ragv2-run-id=serial", "--ragv2-reps=2")
    parallel = project.runpytest(
        "--ragv2-layer=A", "--ragv2-run-id=parallel", "--ragv2-reps=2", "-n", "2"
    )
    assert serial.ret == parallel.ret == pytest.ExitCode.OK
    first, second = summary_of(project, "serial"), summary_of(project, "parallel")
    assert first["systems"]["v2"]["recall@5_ci"]["value"] == 1.0
    assert _comparable(first) == _comparable(second)
    workers = sorted(p.name for p in (project.path / "raw-runs" / "parallel").glob("runs-*.jsonl"))
    assert workers == ["runs-gw0.jsonl", "runs-gw1.jsonl"]
    assert "verdict: PASS" in parallel.stdout.str()


def test_raw_runs_hold_the_request_before_scoring(project: pytest.Pytester) -> None:
    project.runpytest("--ragv2-layer=A", *RUN_ID)
    raws = raw_lines(project)
    c01 = next(
        r
        for r in raws
        if r["key"] == {"case": "C01", "system": "v2", "rep": 1, "lang": "de", "layer": "A"}
    )
    assert c01["query"] == "Wie hoch ist der maximale Druck?"
    assert c01["items"][0]["file_id"] == "datasheet"
    assert c01["role"] == "candidate"


def test_report_paths_are_printed(project: pytest.Pytester) -> None:
    result = project.runpytest("--ragv2-layer=A", *RUN_ID)
    assert (
        f"summary: {Path('reports') / 'testrun' / 'summary.json'}"
        in result.stdout.str().replace(str(project.path) + "/", "")
    )


def test_interrupt_keeps_pytest_status_and_writes_partial_results(
    project: pytest.Pytester,
) -> None:
    (project.path / "pyproject.toml").write_text(pyproject(candidate="interrupting"))
    # in a subprocess: an in-process run would pass the KeyboardInterrupt to this session
    result = project.runpytest_subprocess("--ragv2-layer=A", "--ragv2-seed=5", *RUN_ID)
    assert result.ret == pytest.ExitCode.INTERRUPTED
    summary = summary_of(project)
    assert summary["verdict"] == "interrupted"
    assert summary["exit_status"] == 2
    assert 0 < summary["runs"]["recorded"] < summary["runs"]["expected"]
    assert len(raw_lines(project)) == summary["runs"]["recorded"]
    assert "verdict: INTERRUPTED" in result.stdout.str()


@pytest.mark.filterwarnings("ignore::pytest.PytestUnknownMarkWarning")  # data-derived names
def test_chat_layer_items_carry_their_slot_group_from_creation() -> None:
    from pytest_ragv2.plugin.collect import item_marks, slot_group

    chat = item_marks("B", "exact_lookup", "v2", "de", slot="qwen-slot")
    groups = [m.kwargs.get("name") for m in chat if m.name == "xdist_group"]
    assert groups == [slot_group("qwen-slot")]
    retrieval = item_marks("A", "exact_lookup", "v2", "de", slot="qwen-slot")
    assert not any(m.name == "xdist_group" for m in retrieval)
    assert {m.name for m in retrieval} >= {"gold_case", "layer_a", "exact_lookup", "v2", "lang_de"}


def test_rescore_from_raw_runs_reproduces_the_session(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pytest_ragv2.tools.cli import main

    result = project.runpytest("--ragv2-layer=A", *RUN_ID)
    assert result.ret == pytest.ExitCode.OK
    monkeypatch.chdir(project.path)
    status = main(["rescore", "raw-runs/testrun"])
    assert status == 0
    session = summary_of(project)
    rescored = json.loads(
        (project.path / "reports" / "testrun" / "rescored" / "summary.json").read_text()
    )
    assert _comparable(rescored)["systems"] == _comparable(session)["systems"]
    assert rescored["verdict"] == "pass"
    # the gold changes (an adjudicated page): the same raw runs now miss it
    (project.path / "cases" / "development.yaml").write_text(
        (project.path / "cases" / "development.yaml").read_text().replace("page: 2", "page: 3")
    )
    assert main(["rescore", "raw-runs/testrun", "--output", "rescored-again"]) == 0
    again = json.loads((project.path / "rescored-again" / "summary.json").read_text())
    assert again["by_case"]["v2"]["C01"]["recall@5"] == 0.0
    assert gate(again, "recall_improvement")["value"] == pytest.approx(0.5)


def test_tables_order_systems_by_role_and_delta_is_candidate_minus_baseline(
    project: pytest.Pytester,
) -> None:
    text = pyproject().replace("systems.v1]", "systems.old]").replace("systems.v2]", "systems.new]")
    (project.path / "pyproject.toml").write_text(text)
    result = project.runpytest("--ragv2-layer=A", *RUN_ID)
    assert result.ret == pytest.ExitCode.OK
    summary = summary_of(project)
    assert list(summary["systems"]) == ["old", "new"]
    lines = result.stdout.lines
    exact = next(line for line in lines if line.strip().startswith("exact_lookup "))
    assert exact.split()[-1] == "+1.000"


def test_configured_baseline_not_run_fails_the_comparison(project: pytest.Pytester) -> None:
    result = project.runpytest("--ragv2-layer=A", "--ragv2-systems=v2", *RUN_ID)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    improvement = gate(summary_of(project), "recall_improvement")
    assert improvement["decision"] == "fail"
    assert "not run" in improvement["reason"]


def test_missing_allowlist_fails_the_leak_gate(project: pytest.Pytester) -> None:
    (project.path / "gold" / "allowlist.yaml").unlink()
    result = project.runpytest("--ragv2-layer=A", *RUN_ID)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    leak = gate(summary_of(project), "no_leak")
    assert leak["decision"] == "fail"
    assert "allow-list" in leak["reason"]


def test_broken_allowlist_is_a_located_usage_error(project: pytest.Pytester) -> None:
    """A session without a valid allow-list cannot check leaks: it stops before its first
    item (exit status 4) with the located error, and writes nothing."""
    (project.path / "gold" / "allowlist.yaml").write_text("files: [ {file_id: x\n")
    result = project.runpytest("--ragv2-layer=A", *RUN_ID)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "Traceback" not in result.stdout.str() + result.stderr.str()
    assert "allowlist.yaml:2: YAML syntax error" in result.stderr.str()
    assert not (project.path / "raw-runs").exists()


def test_ordinary_failing_tests_are_never_hidden_by_the_verdict(project: pytest.Pytester) -> None:
    project.makepyfile(
        test_other="""
        import pytest

        def test_fails():
            assert False

        @pytest.mark.parametrize("n", [1, 2])
        def test_param(n):
            assert n
        """
    )
    serial = project.runpytest("--ragv2-layer=A", "cases", "test_other.py", *RUN_ID)
    assert serial.ret == pytest.ExitCode.TESTS_FAILED
    assert summary_of(project)["verdict"] == "pass"
    parallel = project.runpytest(
        "--ragv2-layer=A", "cases", "test_other.py", "--ragv2-run-id=par", "-n", "2"
    )
    assert parallel.ret == pytest.ExitCode.TESTS_FAILED
    assert summary_of(project, "par")["runs"] == {"expected": 10, "recorded": 10}


def test_no_case_collected_leaves_pytest_status_alone(project: pytest.Pytester) -> None:
    project.makepyfile(test_other="def test_ok():\n    assert True\n")
    result = project.runpytest("--ragv2-layer=A", "test_other.py")
    assert result.ret == pytest.ExitCode.OK
    assert not (project.path / "reports").exists()
    assert not (project.path / "raw-runs").exists()


def test_run_ids_are_never_reused(project: pytest.Pytester) -> None:
    assert project.runpytest("--ragv2-layer=A", *RUN_ID).ret == pytest.ExitCode.OK
    again = project.runpytest("--ragv2-layer=A", *RUN_ID)
    assert again.ret == pytest.ExitCode.USAGE_ERROR
    assert "already exists" in again.stderr.str()


def test_case_files_pytest_would_skip_still_run(project: pytest.Pytester) -> None:
    (project.path / "cases" / "build").mkdir()
    (project.path / "cases" / "build" / "more.YAML").write_text(
        "- id: M01\n  category: semantic\n  prompt_en: 'pressure?'\n"
        "  required_evidence: [{file_id: datasheet, page: 2}]\n"
    )
    result = project.runpytest("--ragv2-layer=A", "--collect-only", "-q")
    assert "cases/build/more.YAML::M01[v2-en-r1]" in result.stdout.str()


def test_last_failed_reruns_only_the_candidates_unmet_runs(project: pytest.Pytester) -> None:
    # the candidate misses C01/C02 (4 runs, unmet: failures); a baseline's miss never is one
    (project.path / "pyproject.toml").write_text(pyproject(baseline="weak", candidate="weak"))
    first = project.runpytest("--ragv2-layer=A", *RUN_ID)
    outcomes = first.parseoutcomes()
    assert (outcomes["unmet"], outcomes["xfailed"]) == (4, 4)
    result = project.runpytest("--ragv2-layer=A", "--lf", "--collect-only", "-q")
    names = [line for line in result.outlines if "::" in line]
    assert len(names) == 4
    assert all("[v2-" in name for name in names)


def test_a_crashed_worker_costs_only_its_run_and_is_counted(project: pytest.Pytester) -> None:
    (project.path / "pyproject.toml").write_text(pyproject(candidate="crashing"))
    result = project.runpytest("--ragv2-layer=A", "-n", "2", *RUN_ID)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    summary = summary_of(project)
    assert summary["runs"] == {"expected": 10, "recorded": 9}
    complete = gate(summary, "runs_complete")
    assert complete["decision"] == "fail"
    assert complete["reason"] == "9 of 10 runs recorded; 1 lost"
    assert len(raw_lines(project)) == 9
    # named as a lost run of its case, never as an ordinary test that failed
    screen = " ".join(result.stdout.str().split())
    assert "1 run(s) lost (counted by runs_complete): cases/development.yaml::" in screen
    assert "crashed while running" in screen
    assert "ordinary test" not in screen


def test_cases_of_other_layers_are_not_collected(project: pytest.Pytester) -> None:
    (project.path / "cases" / "chat.yaml").write_text(
        "- id: W05\n  category: behaviour_matrix\n  layers: [B]\n"
        "  prompt_en: 'Hello, who are you?'\n"
        "  required_evidence: []\n  expect_tools: {any_tool: {calls: 0}}\n"
    )
    result = project.runpytest("--ragv2-layer=A", "--collect-only", "-q")
    assert "W05" not in result.stdout.str()
    assert "C01[v2-en-r1]" in result.stdout.str()


def test_language_scoped_evidence_is_required_only_of_its_language(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the fact sits in a German and in an English datasheet: each run must find its own
    (project.path / "cases" / "development.yaml").write_text(
        "- id: L01\n  category: language_pair\n"
        "  prompt_en: 'maximum pressure?'\n  prompt_de: 'maximaler Druck?'\n"
        "  required_evidence:\n"
        "    - {file_id: datasheet, page: 2, lang: en}\n"
        "    - {file_id: parts, table: Parts, row: NX-450B, lang: de}\n"
    )
    monkeypatch.setenv("COLUMNS", "120")
    result = project.runpytest("--ragv2-layer=A", "--ragv2-systems=v2", *RUN_ID)
    summary = summary_of(project)
    # "pressure" finds the datasheet (en entry met); "Druck" finds the datasheet too, but
    # the German run is asked for the parts row, which it does not return
    assert summary["by_language"]["v2"]["en"]["recall@5"] == 1.0
    assert summary["by_language"]["v2"]["de"]["recall@5"] == 0.0
    result.stdout.fnmatch_lines(
        ["*L01  v2 r1 (de) — gold evidence not in top 5: parts table Parts row NX-450B*"]
    )


def test_a_run_id_outside_the_safe_set_is_a_usage_error(project: pytest.Pytester) -> None:
    result = project.runpytest("--ragv2-layer=A", "--ragv2-run-id=../escaped")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "a run id is 1 to 128 letters" in result.stderr.str()
    assert not (project.path / "escaped").exists()
    assert not (project.path / "raw-runs").exists() or not any(
        (project.path / "raw-runs").iterdir()
    )


def test_a_session_stopped_before_its_first_write_leaves_no_run_folder(
    project: pytest.Pytester,
) -> None:
    result = project.runpytest("--ragv2-layer=A", "--ragv2-run-id=t", "--ragv2-systems=nope")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert not (project.path / "raw-runs" / "t").exists()


def test_an_ordinary_failing_test_beside_the_cases_fails_the_session(
    project: pytest.Pytester,
) -> None:
    project.makepyfile(test_other="def test_bad():\n    assert False\n")
    result = project.runpytest("--ragv2-layer=A", *RUN_ID, "cases", "test_other.py")
    assert summary_of(project)["verdict"] == "pass"  # every gate holds ...
    assert result.ret == pytest.ExitCode.TESTS_FAILED  # ... and the failing test still counts
    screen = " ".join(result.stdout.str().split())
    assert "1 ordinary test(s) or collector(s) failed besides the gold cases" in screen
    assert "run(s) lost" not in screen


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_the_session_keeps_no_listed_items_past_a_runs_last_report(
    project: pytest.Pytester, workers: list[str]
) -> None:
    """A layer-A record lists its first items for pytest-html, which shows them at the
    item's last report; from there the session keeps the record without them (the case
    panels read the raw run), on the report too: no second form of it stays."""
    from pytest_ragv2.deciding.records import RetrievalRecord

    recorder = project.inline_run("--ragv2-layer=A", *RUN_ID, *workers, "--html=html.html")
    calls = [
        report
        for report in recorder.getreports("pytest_runtest_logreport")
        if report.when == "call" and hasattr(report, "ragv2")
    ]
    assert len(calls) == 10
    assert all(type(report.ragv2) is RetrievalRecord for report in calls)
    assert [report.nodeid for report in calls if report.ragv2.top] == []
    assert sum(report.ragv2.returned for report in calls) >= 10  # what was listed
    html = (project.path / "html.html").read_text(encoding="utf-8")
    assert html.count("Top items") == 10
    assert "the raw run is missing" not in html  # pytest-html lists them while on disk
    assert "datasheet" in html
