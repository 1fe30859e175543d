"""Layer B on the bundled benchmark against the embedded demo (real loopback server, real
OpenAI-compatible chat with harness-executed searches, a real reference-runner command)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.layers.test_bundled_benchmark import _summary
from tests.plugin.test_plugin import gate


def _raw(pytester: pytest.Pytester, run_id: str) -> list[dict[str, Any]]:
    from pytest_ragv2.run.rawruns import read_raw_runs

    return list(read_raw_runs(pytester.path / "raw-runs" / run_id))


def test_the_demo_candidate_trips_one_veto_on_the_whole_benchmark(
    bundled: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "120")
    # the demo is deterministic: one repetition shows what five would
    result = bundled.runpytest(
        "--ragv2-layer=B", "--ragv2-reps=1", "--ragv2-run-id=b", "--ragv2-seed=5",
        "-n", "2", "--dist", "loadgroup",
    )  # fmt: skip
    summary = _summary(bundled, "b")
    assert summary["runs"]["recorded"] == summary["runs"]["expected"] > 250
    assert set(summary["systems"]) == {"demo-v1", "demo-v2", "demo-ref"}
    # one wrong answer of the candidate is a veto: asked for the oil separator of a revision-C
    # TVS 75 (K16), its English answer quotes the manual's TS-7508-S, the part of revision D
    vetoed = [g["details"] for g in summary["gates"] if g["hard"] and g["decision"] == "fail"]
    assert {k: n for k, n in summary["vetoes_by_system"]["demo-v2"].items() if n} == {
        "unsupported_high_severity_number": 1
    }, vetoed
    assert vetoed == [
        [
            "K16[demo-v2-en-r1] turn 1: 'TS-7508-S' (not the gold value of the high-severity "
            "claim 'TS-7508-5' (the value is held elsewhere in the sources))"
        ]
    ]
    for name, system in summary["systems"].items():
        assert system["errors"] == 0, name
    # the weaker baseline does trip vetoes (it answers where it must refuse)
    assert summary["vetoes_by_system"]["demo-v1"]["failed_safe_refusal"] > 0
    v1, v2 = summary["systems"]["demo-v1"], summary["systems"]["demo-v2"]
    assert v2["exact_answer"] > v1["exact_answer"]
    assert v2["safe_refusal"] > v1["safe_refusal"]
    assert gate(summary, "failed_safe_refusal")["decision"] == "pass"
    # web-search cases need a setup the demo does not provide: skipped, with the reason
    assert v2["skipped"] >= 3
    assert "Rubric" in result.stdout.str()
    # at 120 columns, the last screen is the failing gates with their reasons and the
    # verdict, then pytest's count line; no line is wider than the terminal
    lines = result.outlines
    assert max(len(line) for line in lines) <= 120
    assert lines[-1].startswith("=")
    assert "gates failed" in lines[-1]
    verdict = next(i for i, line in enumerate(lines) if "verdict: FAIL" in line)
    assert len(lines) - verdict <= 3
    gates_at = max(i for i, line in enumerate(lines) if line == "gates:")
    assert verdict - gates_at < 40
    failed = [g["name"] for g in summary["gates"] if g["decision"] == "fail"]
    assert all(name in lines[verdict] for name in failed)
    assert not any(line.startswith("FAILED ") for line in lines)


def test_t01_runs_as_one_ten_turn_conversation_and_the_reference_is_a_real_command(
    bundled: pytest.Pytester,
) -> None:
    bundled.runpytest("--ragv2-layer=B", "--ragv2-reps=1", "--ragv2-run-id=t", "-k", "T01 or W01")
    raws = {(raw["key"]["case"], raw["key"]["system"]): raw for raw in _raw(bundled, "t")}
    t01 = raws[("T01", "demo-v2")]["transcript"]["turns"]
    assert len(t01) == 10
    assert all(turn["ran"] and turn["error"] is None for turn in t01)
    # turn 10 recalls turn 4's figures from the conversation, without a search
    assert t01[9]["tool_calls"] == []
    assert "1 689" in t01[9]["answer"]
    # the follow-up of turn 3 searched with the subject of turn 2 resolved
    assert any("Meridia" in call["arguments"]["query"] for call in t01[2]["tool_calls"])
    # the reference runner resumes one thread: its memory turn recalls turn 4 as well
    ref_t01 = raws[("T01", "demo-ref")]["transcript"]["turns"]
    assert all(turn["error"] is None for turn in ref_t01)
    assert "--resume" in ref_t01[9]["exchanges"][0]["request"]["argv"]
    assert "1 689" in ref_t01[9]["answer"]
    reference = raws[("W01", "demo-ref")]
    assert reference["adapter"] == "command"
    turn = reference["transcript"]["turns"][0]
    assert turn["tool_calls"][0]["name"].endswith("search_knowledge_base")
    assert turn["exchanges"][0]["status_code"] == 0
    assert turn["answer"]


@pytest.mark.parametrize(
    ("spec", "kind"),
    [("5xx", "http_status"), ("malformed", "malformed"), ("truncate", "transport")],
)
def test_a_faulty_demo_system_is_recorded_as_errors(
    bundled: pytest.Pytester, spec: str, kind: str
) -> None:
    (bundled.path / "pyproject.toml").write_text(
        f'[tool.ragv2]\ncorpus = "corpus"\ndemo_faults = {{demo-v2 = "{spec}"}}\n'
    )
    result = bundled.runpytest(
        "--ragv2-layer=B", "--ragv2-reps=1", "--ragv2-run-id=f", "-k", "W01 or W03"
    )
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert "Traceback" not in result.stdout.str()
    summary = _summary(bundled, "f")
    assert summary["systems"]["demo-v2"]["errors"] == summary["systems"]["demo-v2"]["runs"] == 2
    assert summary["systems"]["demo-v1"]["errors"] == 0
    assert gate(summary, "error_rate")["decision"] == "fail"
    errors = [raw["error"] for raw in _raw(bundled, "f") if raw["key"]["system"] == "demo-v2"]
    assert {error["kind"] for error in errors} == {kind}


def test_a_hang_past_the_timeout_costs_one_run_not_the_session(
    bundled: pytest.Pytester,
) -> None:
    (bundled.path / "pyproject.toml").write_text(
        '[tool.ragv2]\ncorpus = "corpus"\ndemo_timeout_s = 0.5\n'
        'demo_faults = {demo-v2 = "hang-3"}\n'
    )
    result = bundled.runpytest(
        "--ragv2-layer=B", "--ragv2-reps=1", "--ragv2-run-id=h", "-k", "W01",
        "--ragv2-systems=demo-v1,demo-v2",
    )  # fmt: skip
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    summary = _summary(bundled, "h")
    assert summary["runs"]["recorded"] == summary["runs"]["expected"] == 2
    v2 = [raw for raw in _raw(bundled, "h") if raw["key"]["system"] == "demo-v2"]
    assert v2[0]["error"]["kind"] == "timeout"


def test_demo_faults_name_demo_systems_only(bundled: pytest.Pytester) -> None:
    (bundled.path / "pyproject.toml").write_text(
        '[tool.ragv2]\ncorpus = "corpus"\ndemo_faults = {demo-v3 = "5xx"}\n'
    )
    result = bundled.runpytest("--ragv2-layer=B", "--ragv2-reps=1")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "no demo system named demo-v3" in result.stderr.str()
