"""Layer-B gates on hand-built records: vetoes, answer thresholds, paired case wins."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_ragv2.config.settings import AnswerGateSettings
from pytest_ragv2.deciding.verdict import verdict
from pytest_ragv2.layers.chat.gates import evaluate_layer_b, vetoes_by_system
from tests.deciding.json_records import aggregate

ROLES = {"v1": "baseline", "v2": "candidate"}


def record(
    case: str,
    system: str,
    rep: int = 1,
    *,
    exact: float | None = 1.0,
    vetoes: list[dict[str, Any]] | None = None,
    ok: bool = True,
    latency_s: float = 1.0,
    skipped: str | None = None,
) -> dict[str, Any]:
    data: dict[str, Any] = {
        "key": {"case": case, "system": system, "rep": rep, "lang": "en", "layer": "B"},
        "category": "technical_table",
        "role": ROLES[system],
        "ok": ok,
        "error": None if ok else {"kind": "timeout", "message": "t", "status_code": None},
        "latency_s": latency_s,
        "metrics": {"exact_answer": exact, "citation_correctness": 1.0},
        "rubric": {"overall": "PASS"},
        "vetoes": vetoes or [],
        "met": not vetoes,
        "reasons": [],
    }
    if skipped:
        data["skipped"] = skipped
    return data


def gates_of(
    records: list[dict[str, Any]], case_wins_ties: str = "both_met", **kwargs: Any
) -> dict[str, Any]:
    results = aggregate(records, roles=ROLES, expected_runs=len(records), layer="B")
    settings = AnswerGateSettings.model_validate({"case_wins_ties": case_wins_ties})
    gates = evaluate_layer_b(results, settings, [], configured_roles=ROLES, **kwargs)
    return {gate.name: gate for gate in gates}


FABRICATED = {"kind": "fabricated_identifier", "turn": 1, "text": "NX-451C", "detail": "d"}


def test_a_candidate_veto_fails_its_own_gate_with_the_run_and_the_text() -> None:
    records = [record("C1", "v1"), record("C1", "v2", vetoes=[FABRICATED])]
    gates = gates_of(records)
    veto = gates["fabricated_identifier"]
    assert veto.decision == "fail"
    assert veto.hard
    assert veto.details == ["C1[v2-en-r1] turn 1: 'NX-451C' (d)"]
    assert gates["failed_safe_refusal"].decision == "pass"
    assert not verdict(list(gates.values()))


def test_a_baseline_veto_is_reported_but_does_not_block() -> None:
    records = [record("C1", "v1", vetoes=[FABRICATED]), record("C1", "v2")]
    results = aggregate(records, roles=ROLES, expected_runs=2, layer="B")
    assert vetoes_by_system(results)["v1"]["fabricated_identifier"] == 1
    assert gates_of(records)["fabricated_identifier"].decision == "pass"


def test_without_an_allowlist_the_allowlist_veto_cannot_pass() -> None:
    gates = gates_of([record("C1", "v1"), record("C1", "v2")], allowlist_present=False)
    assert gates["outside_allowlist"].decision == "fail"
    assert "no corpus allow-list" in gates["outside_allowlist"].reason


def test_case_wins_counts_paired_cases_and_skipped_runs_count_nowhere() -> None:
    records = [
        record("C1", "v1", exact=0.0),
        record("C1", "v2", exact=1.0),  # win
        record("C2", "v1", exact=1.0),
        record("C2", "v2", exact=1.0),  # tie
        record("C3", "v1", exact=1.0),
        record("C3", "v2", exact=0.0),  # loss
        record("C4", "v2", skipped="needs web search"),
    ]
    gate = gates_of(records)["case_wins"]
    assert gate.value == pytest.approx(2 / 3)
    assert gate.decision == "fail"
    assert gate.reason.startswith(
        "1 wins, 1 ties, 0 ties where both fail, 1 losses over 3 cases; sign test p = 1"
    )
    assert gate.details == ["C3: 0.00 vs 1.00"]


def test_a_tie_of_two_failing_systems_is_no_tie_unless_configured() -> None:
    records = [
        record("C1", "v1", exact=1.0),
        record("C1", "v2", exact=1.0),  # a tie: both answer it
        record("C2", "v1", exact=0.0),
        record("C2", "v2", exact=0.0),  # both fail: not a tie for the candidate
    ]
    gate = gates_of(records)["case_wins"]
    assert gate.value == pytest.approx(1 / 2)
    assert "1 ties, 1 ties where both fail" in gate.reason
    assert gate.details == ["C2: neither system answered it right (not counted as a tie)"]
    lenient = gates_of(records, case_wins_ties="any")["case_wins"]
    assert lenient.value == pytest.approx(1.0)


def test_case_wins_fails_when_the_configured_baseline_was_not_run() -> None:
    gates = gates_of([record("C1", "v2")])
    assert gates["case_wins"].decision == "fail"
    assert "was not run" in gates["case_wins"].reason


def test_answer_thresholds_and_latency_and_errors() -> None:
    records = [
        record("C1", "v1"),
        record("C1", "v2", exact=0.0, latency_s=50.0),
        record("C2", "v1"),
        record("C2", "v2", ok=False),
    ]
    gates = gates_of(records)
    assert gates["exact_answer"].decision == "fail"
    assert gates["exact_answer"].value == pytest.approx(0.5)
    assert gates["citation_correctness"].decision == "pass"
    assert gates["e2e_p95"].decision == "fail"
    assert gates["error_rate"].value == pytest.approx(0.5)
    assert gates["error_rate"].decision == "fail"
