"""Every layer-A gate on hand-made records, through the one decide() the session uses."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_ragv2.config.settings import Settings
from pytest_ragv2.deciding.decision import Decision
from tests.deciding.json_records import decide

ROLES = {"v1": "baseline", "v2": "candidate"}


def run(
    case: str,
    system: str,
    recall5: float,
    *,
    category: str = "semantic",
    rep: int = 1,
    exact: float | None = None,
    leaked: tuple[str, ...] = (),
    ok: bool = True,
    latency: float = 0.1,
    returned: int = 5,
    error: dict[str, Any] | None = None,
) -> dict[str, Any]:
    metrics: dict[str, Any] = {"recall@5": recall5, "mrr": recall5, "leaked": list(leaked)}
    if exact is not None:
        metrics["exact_metadata"] = exact
    return {
        "key": {"case": case, "system": system, "rep": rep, "lang": "en", "layer": "A"},
        "category": category,
        "ok": ok,
        "met": ok and recall5 == 1.0,
        "latency_s": latency,
        "metrics": metrics,
        "returned": returned if ok else 0,
        "error": error,
    }


def decided(records: list[dict[str, Any]], **gates: Any) -> Decision:
    settings = Settings.model_validate({"gates": gates}) if gates else Settings()
    return decide(records, layer="A", settings=settings, roles=ROLES, expected_runs=len(records))


def gate(decision: Decision, name: str) -> Any:
    return next(found for found in decision.gates if found.name == name)


def pair(case: str, base: float, cand: float, **kwargs: Any) -> list[dict[str, Any]]:
    return [run(case, "v1", base, **kwargs), run(case, "v2", cand, **kwargs)]


GOOD = [
    *pair("C1", 0.5, 1.0, category="exact_lookup", exact=1.0),
    *pair("C2", 0.5, 1.0, category="semantic"),
]


def test_a_candidate_that_is_better_everywhere_passes_every_gate() -> None:
    decision = decided(GOOD)
    assert [found.decision for found in decision.gates] == ["pass"] * len(decision.gates)
    assert decision.passed
    assert [found.name for found in decision.gates] == [
        "gold_valid",
        "runs_complete",
        "results_returned",
        "no_leak",
        "exact_lookup",
        "recall_improvement",
        "category_regression",
        "retrieval_p95",
        "error_rate",
    ]


def test_runs_complete_counts_the_lost_runs() -> None:
    decision = decide(
        GOOD, layer="A", settings=Settings(), roles=ROLES, expected_runs=len(GOOD) + 2
    )
    found = gate(decision, "runs_complete")
    assert (found.decision, found.reason) == ("fail", "4 of 6 runs recorded; 2 lost")


def test_a_broken_case_file_fails_gold_valid() -> None:
    decision = decide(
        GOOD, layer="A", settings=Settings(), roles=ROLES, case_errors=["cases/x.yaml:3: bad"]
    )
    assert gate(decision, "gold_valid").decision == "fail"
    assert not decision.passed


def test_a_leak_is_a_hard_veto_no_average_buys_back() -> None:
    records = [*GOOD, run("C3", "v1", 1.0), run("C3", "v2", 1.0, leaked=("secret.pdf",))]
    found = gate(decided(records), "no_leak")
    assert (found.decision, found.hard) == ("fail", True)
    assert found.details == ["C3[v2-en-r1]: secret.pdf"]


def test_a_system_answering_everything_with_nothing_is_named() -> None:
    records = [run("C1", "v1", 0.0, returned=0), run("C1", "v2", 1.0)]
    found = gate(decided(records), "results_returned")
    assert found.decision == "fail"
    assert found.reason == "v1: all 1 successful runs returned no item"


def test_exact_lookup_reads_the_exact_metadata_of_the_candidate() -> None:
    records = [
        *pair("C1", 1.0, 1.0, category="exact_lookup", exact=1.0),
        *pair("C2", 1.0, 1.0, category="exact_lookup", exact=0.0),
    ]
    found = gate(decided(records, exact_lookup_min=0.95), "exact_lookup")
    assert (found.decision, found.value) == ("fail", 0.5)


def test_recall_improvement_needs_its_interval_to_clear_the_margin() -> None:
    # 12 cases, each +0.25: the gain is certain, the interval clears the 0.05 margin
    steady = [row for n in range(12) for row in pair(f"C{n}", 0.5, 0.75)]
    found = gate(decided(steady), "recall_improvement")
    assert found.decision == "pass"
    assert found.value == pytest.approx(0.25)
    assert found.evidence is not None
    assert found.evidence["low"] >= 0.05
    assert "paired sign-flip permutation (exact)" in found.reason
    # the same mean gain, carried by a few cases while others lose: the point estimate
    # clears the margin, the interval does not
    noisy = [
        row
        for n in range(12)
        for row in pair(f"C{n}", 0.0 if n % 3 == 0 else 1.0, 1.0 if n % 3 == 0 else 0.875)
    ]
    found = gate(decided(noisy), "recall_improvement")
    assert found.value > 0.05
    assert found.evidence is not None
    assert found.evidence["low"] < 0.05
    assert found.decision == "fail"
    assert found.reason.startswith(f"Δ {found.value:+.3f} [")


def test_the_test_rule_decides_on_the_one_sided_p_value() -> None:
    steady = [row for n in range(12) for row in pair(f"C{n}", 0.5, 0.75)]
    found = gate(decided(steady, decision_rule="test", alpha=0.05), "recall_improvement")
    assert found.decision == "pass"
    assert found.evidence is not None
    assert found.evidence["p_greater"] < 0.05
    assert found.threshold == "one-sided test of Δ > +0.050 at alpha 0.05"


def test_category_regression_needs_a_material_loss_in_a_large_enough_category() -> None:
    records = [
        # technical_table: 6 cases, every one 0.5 worse: materially worse
        *(row for n in range(6) for row in pair(f"T{n}", 1.0, 0.5, category="technical_table")),
        # semantic: 2 cases, 1.0 worse: reported, too few cases to decide alone
        *(row for n in range(2) for row in pair(f"S{n}", 1.0, 0.0, category="semantic")),
    ]
    found = gate(decided(records), "category_regression")
    assert found.decision == "fail"
    assert found.reason == "materially worse: technical_table"
    assert any("semantic" in line and "not decisive" in line for line in found.details)
    only_small = [
        *(row for n in range(2) for row in pair(f"S{n}", 1.0, 0.0, category="semantic")),
        *(row for n in range(6) for row in pair(f"T{n}", 0.5, 0.5, category="technical_table")),
    ]
    assert gate(decided(only_small), "category_regression").decision == "pass"


def test_without_a_baseline_the_comparisons_are_skipped_and_a_deselected_one_fails() -> None:
    alone = [run("C1", "v2", 1.0)]
    decision = decide(alone, layer="A", settings=Settings(), roles={"v2": "candidate"})
    assert gate(decision, "recall_improvement").decision == "skip"
    deselected = decide(
        alone,
        layer="A",
        settings=Settings(),
        roles={"v2": "candidate"},
        configured_roles=ROLES,
    )
    assert gate(deselected, "recall_improvement").decision == "fail"
    assert "not run" in gate(deselected, "category_regression").reason


def test_latency_is_judged_on_the_candidate_and_errors_on_both_compared_systems() -> None:
    slow = [*pair("C1", 1.0, 1.0, latency=3.0), *pair("C2", 1.0, 1.0, latency=3.0)]
    assert gate(decided(slow, retrieval_p95_max_s=2.0), "retrieval_p95").decision == "fail"
    error = {"kind": "timeout", "message": "read timed out", "status_code": None}
    failing = [*GOOD, run("C3", "v1", 1.0), run("C3", "v2", 0.0, ok=False, error=error)]
    found = gate(decided(failing, error_rate_max=0.01), "error_rate")
    assert found.decision == "fail"
    assert found.reason == (
        "v2: 1 of 3 runs failed (timeout: all, e.g. C3: read timed out); v1: 0 of 3 runs failed"
    )


TIMEOUT = {"kind": "timeout", "message": "read timed out", "status_code": None}


def test_a_comparison_is_over_the_cases_both_systems_answered() -> None:
    """A baseline's failed run is no recall 0 of its own: the case it failed on is left out
    of the paired comparison, which then finds no improvement where there is none."""
    records = [record for n in range(1, 41) for record in pair(f"C{n}", 1.0, 1.0)]
    # the baseline times out on one case of 40 (within an error_rate_max of 0.05)
    records[0] = run("C1", "v1", 0.0, ok=False, error=TIMEOUT)
    decision = decided(records, error_rate_max=0.05)
    improvement = gate(decision, "recall_improvement")
    assert improvement.decision == "fail"  # +0.00, not +0.025 from the baseline's failure
    assert improvement.value == pytest.approx(0.0)
    assert gate(decision, "error_rate").decision == "pass"


@pytest.mark.parametrize("failed", [3, 40])
def test_a_baseline_failing_past_the_error_rate_cannot_carry_a_comparison(failed: int) -> None:
    records = [record for n in range(1, 41) for record in pair(f"C{n}", 0.0, 1.0)]
    for index in range(failed):
        records[2 * index] = run(f"C{index + 1}", "v1", 0.0, ok=False, error=TIMEOUT)
    decision = decided(records, error_rate_max=0.05)
    for name in ("recall_improvement", "category_regression"):
        found = gate(decision, name)
        assert found.decision == "fail"
        assert found.value is None
        if failed == 40:
            assert found.reason.startswith("the baseline v1 has no successful run: all 40")
        else:
            assert found.reason.startswith("the baseline v1 failed 3 of 40 runs (0.07 > ")
    errors = gate(decision, "error_rate")
    assert errors.decision == "fail"
    assert f"v1: {failed} of 40 runs failed" in errors.reason
    assert not decision.passed
