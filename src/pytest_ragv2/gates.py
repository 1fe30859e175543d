"""Promotion gates → verdict. Pure, and never raises: a gate that cannot be evaluated says so.

Each gate compares one figure of the candidate (or the candidate against the baseline) with a
configured threshold and carries its own reason, so a reader sees value, threshold and
decision side by side. Hard safety gates are vetoes: no other figure can compensate for them.
A later statistical definition of "materially" slots in as a gate's ``test`` (its p-value and
effect size printed beside the decision).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from pytest_ragv2.session import SessionResults
from pytest_ragv2.settings import GateSettings

Decision = Literal["pass", "fail", "skip"]


@dataclass(frozen=True, slots=True)
class GateResult:
    name: str
    description: str
    value: float | int | str | None
    threshold: str
    decision: Decision
    reason: str
    hard: bool = False
    details: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def _fmt(value: float | None, digits: int = 3) -> str:
    return "n/a" if value is None or math.isnan(value) else f"{value:.{digits}f}"


def _decide(ok: bool) -> Decision:
    return "pass" if ok else "fail"


def case_file_gate(errors: Sequence[str]) -> GateResult:
    return GateResult(
        name="gold_valid",
        description="every case and gold file loads without error",
        value=len(errors),
        threshold="= 0 errors",
        decision=_decide(not errors),
        reason="all case and gold files valid" if not errors else f"{len(errors)} error(s)",
        details=list(errors),
    )


def completeness_gate(results: SessionResults) -> GateResult:
    expected = results.expected_runs
    recorded = results.recorded_runs
    if expected is None:
        return GateResult(
            "runs_complete",
            "every collected run has a record",
            recorded,
            "= collected",
            "skip",
            "expected run count unknown",
        )
    lost = expected - recorded
    return GateResult(
        name="runs_complete",
        description="every collected run has a record (none lost to a crash or interrupt)",
        value=recorded,
        threshold=f"= {expected}",
        decision=_decide(lost <= 0),
        reason=f"{recorded} of {expected} runs recorded" + (f"; {lost} lost" if lost > 0 else ""),
    )


def leak_gate(results: SessionResults, candidate: str) -> GateResult:
    offending = [
        f"{record['key']['case']}[{candidate}-{record['key']['lang']}-r{record['key']['rep']}]: "
        + ", ".join(record["metrics"]["leaked"])
        for record in results.records_of(candidate)
        if record["metrics"].get("leaked")
    ]
    return GateResult(
        name="no_leak",
        description="no run returns a file outside the corpus allow-list (hard safety gate)",
        value=len(offending),
        threshold="= 0 runs",
        decision=_decide(not offending),
        reason="no file outside the allow-list"
        if not offending
        else f"{len(offending)} run(s) returned files outside the allow-list",
        hard=True,
        details=offending,
    )


def exact_lookup_gate(row: Mapping[str, Any], minimum: float) -> GateResult:
    value = row.get("exact_metadata")
    if value is None:
        return GateResult(
            "exact_lookup",
            "exact identifier/document lookup: top result matches the gold location",
            None,
            f">= {minimum:.2f}",
            "skip",
            "no exact-lookup case in this run",
        )
    return GateResult(
        name="exact_lookup",
        description="exact identifier/document lookup: top result matches the gold location",
        value=value,
        threshold=f">= {minimum:.2f}",
        decision=_decide(value >= minimum),
        reason=f"exact-metadata success {_fmt(value)}",
    )


def recall_improvement_gate(
    candidate: Mapping[str, Any], baseline: Mapping[str, Any] | None, k: int, margin: float
) -> GateResult:
    metric = f"recall@{k}"
    description = f"{metric} improves over the baseline by at least the margin"
    if baseline is None:
        return GateResult(
            "recall_improvement", description, None, f">= +{margin:.2f}", "skip", "no baseline"
        )
    cand, base = candidate.get(metric), baseline.get(metric)
    if cand is None or base is None:
        return GateResult(
            "recall_improvement",
            description,
            None,
            f">= +{margin:.2f}",
            "fail",
            f"{metric} undefined (no case with required evidence, or no runs)",
        )
    delta = cand - base
    return GateResult(
        name="recall_improvement",
        description=description,
        value=delta,
        threshold=f">= +{margin:.2f}",
        decision=_decide(delta >= margin - 1e-12),
        reason=f"candidate {_fmt(cand)} vs baseline {_fmt(base)}",
    )


def category_regression_gate(
    candidate: Mapping[str, Mapping[str, Any]],
    baseline: Mapping[str, Mapping[str, Any]] | None,
    k: int,
    margin: float,
) -> GateResult:
    metric = f"recall@{k}"
    description = f"no category's {metric} falls below the baseline's by more than the margin"
    if baseline is None:
        return GateResult(
            "category_regression", description, None, f">= -{margin:.2f}", "skip", "no baseline"
        )
    deltas: list[tuple[float, str]] = []
    for category, row in candidate.items():
        base_row = baseline.get(category)
        if base_row is None or row.get(metric) is None or base_row.get(metric) is None:
            continue
        deltas.append((row[metric] - base_row[metric], category))
    if not deltas:
        return GateResult(
            "category_regression",
            description,
            None,
            f">= -{margin:.2f}",
            "skip",
            "no category with required evidence run on both systems",
        )
    worst, worst_category = min(deltas)
    return GateResult(
        name="category_regression",
        description=description,
        value=worst,
        threshold=f">= -{margin:.2f}",
        decision=_decide(worst >= -margin - 1e-12),
        reason=f"worst category: {worst_category} ({worst:+.3f})",
        details=[f"{category}: {delta:+.3f}" for delta, category in sorted(deltas)],
    )


def latency_gate(row: Mapping[str, Any], maximum_s: float) -> GateResult:
    p95 = row.get("latency_p95", {}).get("value")
    description = "retrieval latency p95 below the limit"
    if p95 is None:
        return GateResult(
            "retrieval_p95", description, None, f"< {maximum_s:g} s", "fail", "no runs"
        )
    return GateResult(
        name="retrieval_p95",
        description=description,
        value=p95,
        threshold=f"< {maximum_s:g} s",
        decision=_decide(p95 < maximum_s),
        reason=f"p95 {p95 * 1000:.1f} ms",
    )


def error_rate_gate(row: Mapping[str, Any], maximum: float) -> GateResult:
    rate = row.get("error_rate")
    description = "share of runs that failed (timeout, transport, non-2xx, malformed)"
    if rate is None:
        return GateResult("error_rate", description, None, f"<= {maximum:.2f}", "fail", "no runs")
    return GateResult(
        name="error_rate",
        description=description,
        value=rate,
        threshold=f"<= {maximum:.2f}",
        decision=_decide(rate <= maximum),
        reason=f"{row['errors']} of {row['runs']} runs failed",
    )


def evaluate_layer_a(
    results: SessionResults, settings: GateSettings, case_errors: Sequence[str]
) -> list[GateResult]:
    """Every layer-A gate, in the order the report prints them."""
    gates = [case_file_gate(case_errors), completeness_gate(results)]
    candidate = results.role_system("candidate")
    if candidate is None or candidate not in results.systems:
        gates.append(
            GateResult(
                "candidate_present",
                "a candidate system was run",
                None,
                "present",
                "fail",
                "no candidate system configured or no candidate run recorded",
            )
        )
        return gates
    baseline = results.role_system("baseline")
    if baseline not in results.systems:
        baseline = None
    row = results.systems[candidate]
    gates.append(leak_gate(results, candidate))
    gates.append(exact_lookup_gate(row, settings.exact_lookup_min))
    gates.append(
        recall_improvement_gate(
            row,
            results.systems[baseline] if baseline else None,
            settings.recall_k,
            settings.recall_improvement_min,
        )
    )
    gates.append(
        category_regression_gate(
            results.by_category[candidate],
            results.by_category[baseline] if baseline else None,
            settings.recall_k,
            settings.category_regression_max,
        )
    )
    gates.append(latency_gate(row, settings.retrieval_p95_max_s))
    gates.append(error_rate_gate(row, settings.error_rate_max))
    return gates


def verdict(gates: Sequence[GateResult]) -> bool:
    """True when no gate failed (skipped gates say why they could not be evaluated)."""
    return all(gate.decision != "fail" for gate in gates)
