"""Promotion gates → verdict. Pure, and never raises: a gate that cannot be evaluated says so.

Each gate compares one figure of the candidate (or the candidate against the baseline) with a
configured threshold and carries its own reason, so a reader sees value, threshold and
decision side by side. Hard safety gates are vetoes: no other figure can compensate for them.
A later statistical definition of "materially" slots in as a gate's ``test`` (its p-value and
effect size printed beside the decision).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from pytest_ragv2.config.settings import GateSettings
from pytest_ragv2.deciding.aggregate import case_metric_means
from pytest_ragv2.deciding.records import RetrievalRecord, RunRecord
from pytest_ragv2.deciding.results import SessionResults, SystemRow
from pytest_ragv2.deciding.verdict import GateResult, _decide, _fmt


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


def empty_results_gate(results: SessionResults, compared: Sequence[str] = ()) -> GateResult:
    """Fails when a system answered every run successfully with nothing: an unindexed file
    id, a token of a user who owns no file, an empty index — recall 0 with no error; and
    when a ``compared`` system (candidate, baseline) returned nothing because every run
    failed."""
    silent = []
    for name, row in results.systems.items():
        if not row.runs:
            continue
        if row.errors >= row.runs:
            if name in compared:
                silent.append(f"{name}: all {row.runs} runs failed ({_dominant_error(row)})")
        elif row.value("empty_runs") == row.runs - row.errors:
            silent.append(f"{name}: all {row.runs - row.errors} successful runs returned no item")
    return GateResult(
        name="results_returned",
        description="every system returns items for some query (an all-empty system is "
        "misconfigured, not bad at retrieval)",
        value=len(silent),
        threshold="= 0",
        decision=_decide(not silent),
        reason="; ".join(silent) if silent else "every system returned items",
        details=silent,
    )


def leak_gate(results: SessionResults, candidate: str, allowlist_present: bool) -> GateResult:
    offending = [
        f"{record.key.item_name}: " + ", ".join(record.leaked)
        for record in results.records_of(candidate)
        if isinstance(record, RetrievalRecord) and record.leaked
    ]
    description = "no run returns a file outside the corpus allow-list (hard safety gate)"
    if not allowlist_present:
        return GateResult(
            name="no_leak",
            description=description,
            value=None,
            threshold="= 0 runs",
            decision="fail",
            reason="no corpus allow-list (gold/allowlist.yaml or [tool.ragv2] allowlist): "
            "leaks cannot be checked",
            hard=True,
        )
    return GateResult(
        name="no_leak",
        description=description,
        value=len(offending),
        threshold="= 0 runs",
        decision=_decide(not offending),
        reason="no file outside the allow-list"
        if not offending
        else f"{len(offending)} run(s) returned files outside the allow-list",
        hard=True,
        details=offending,
    )


def minimum_gate(
    name: str,
    description: str,
    row: SystemRow,
    metric: str,
    minimum: float,
    *,
    label: str | None = None,
    undefined: str | None = None,
) -> GateResult:
    """``row[metric]`` (a mean of per-case means) at least ``minimum``; SKIP when no run
    defined the metric (``undefined`` says why)."""
    value = row.value(metric)
    threshold = f">= {minimum:.2f}"
    if value is None:
        reason = undefined or f"{metric} undefined"
        return GateResult(name, description, None, threshold, "skip", reason)
    return GateResult(
        name=name,
        description=description,
        value=value,
        threshold=threshold,
        decision=_decide(value >= minimum - 1e-12),
        reason=f"{label or metric} {_fmt(value)}",
    )


def exact_lookup_gate(row: SystemRow, minimum: float) -> GateResult:
    return minimum_gate(
        "exact_lookup",
        "exact identifier/document lookup: top result matches the gold location",
        row,
        "exact_metadata",
        minimum,
        label="exact-metadata success",
        undefined="no exact-lookup case in this run",
    )


@dataclass(frozen=True, slots=True)
class PairedCases:
    """Per-case means of one metric for the candidate and the baseline, over the cases
    both systems ran with the metric defined: comparisons are paired by case."""

    cases: tuple[str, ...]
    categories: tuple[str, ...]
    candidate: tuple[float, ...]
    baseline: tuple[float, ...]

    @property
    def deltas(self) -> list[float]:
        return [c - b for c, b in zip(self.candidate, self.baseline, strict=True)]


def successful(records: Iterable[RunRecord]) -> list[RunRecord]:
    """The runs that ended with an answer: a comparison is over these only, on both sides.
    A failed call says nothing about retrieval quality; ``error_rate`` judges it."""
    return [record for record in records if record.ok and not record.skipped]


def paired_cases(
    results: SessionResults, candidate: str, baseline: str, metric: str
) -> PairedCases:
    """Paired over the cases where both systems have successful runs, each case's mean taken
    over its successful runs (a baseline that failed cannot make a candidate look better)."""
    cand = case_metric_means(successful(results.records_of(candidate)))
    base = case_metric_means(successful(results.records_of(baseline)))
    category = {record.key.case: record.category for record in results.records_of(candidate)}
    common = sorted(case for case in cand if metric in cand[case] and metric in base.get(case, {}))
    return PairedCases(
        cases=tuple(common),
        categories=tuple(category[case] for case in common),
        candidate=tuple(cand[case][metric] for case in common),
        baseline=tuple(base[case][metric] for case in common),
    )


BaselineState = Literal["none", "not_run", "run"]


@dataclass(frozen=True, slots=True)
class Comparison:
    """Who the candidate is compared with, and why that comparison cannot be made (if so)."""

    baseline: str | None
    state: BaselineState
    blocked: str | None = None  # the baseline failed too often to be compared with


def comparison_of(
    results: SessionResults, roles: Mapping[str, str], error_rate_max: float
) -> Comparison:
    """The session's baseline, whether it ran, and whether its runs can carry a comparison:
    one with no successful run, or an error rate over ``error_rate_max``, cannot."""
    baseline = next((name for name, role in roles.items() if role == "baseline"), None)
    if baseline is None:
        return Comparison(None, "none")
    row = results.systems.get(baseline)
    if row is None:
        return Comparison(baseline, "not_run")
    return Comparison(baseline, "run", comparison_blocker(baseline, row, error_rate_max))


def comparison_blocker(name: str, row: SystemRow, error_rate_max: float) -> str | None:
    if row.runs == 0 or row.errors >= row.runs:
        failed = f"all {row.runs} runs failed ({_dominant_error(row)})" if row.runs else "no run"
        return f"the baseline {name} has no successful run: {failed}; nothing to compare with"
    rate = row.errors / row.runs
    if rate > error_rate_max + 1e-12:
        return (
            f"the baseline {name} failed {row.errors} of {row.runs} runs ({rate:.2f} > "
            f"error_rate_max {error_rate_max:.2f}; {_dominant_error(row)}): a comparison with "
            "it proves nothing"
        )
    return None


def comparison_unavailable(
    name: str, description: str, threshold: str, comparison: Comparison
) -> GateResult | None:
    """The gate's result when the comparison cannot be made; None when it can."""
    if comparison.state == "none":
        return GateResult(name, description, None, threshold, "skip", "no baseline configured")
    if comparison.state == "not_run":
        return GateResult(
            name,
            description,
            None,
            threshold,
            "fail",
            "the configured baseline was not run (deselected?): nothing to compare with",
        )
    if comparison.blocked is not None:
        return GateResult(name, description, None, threshold, "fail", comparison.blocked)
    return None


def recall_improvement_gate(
    paired: PairedCases | None, comparison: Comparison, settings: GateSettings
) -> GateResult:
    from pytest_ragv2.deciding.comparisons import improvement_gate, paired_values

    metric = f"recall@{settings.recall_k}"
    margin = settings.recall_improvement_min
    description = f"{metric} improves over the baseline by at least the margin (paired by case)"
    threshold = f">= {margin:+.2f}"  # a negative margin: not worse by more than it
    unavailable = comparison_unavailable("recall_improvement", description, threshold, comparison)
    if unavailable is not None or paired is None:
        return unavailable or _not_paired("recall_improvement", description, threshold)
    if not paired.cases:
        return GateResult(
            "recall_improvement",
            description,
            None,
            threshold,
            "fail",
            f"no case with required evidence has a successful run on both systems ({metric} "
            "undefined)",
        )
    return improvement_gate(
        "recall_improvement",
        description,
        paired_values(paired.cases, paired.categories, paired.candidate, paired.baseline),
        margin=margin,
        rule=settings.decision_rule,
        alpha=settings.alpha,
    )


def category_regression_gate(
    paired: PairedCases | None, comparison: Comparison, settings: GateSettings
) -> GateResult:
    from pytest_ragv2.deciding.comparisons import paired_values, regression_gate

    metric = f"recall@{settings.recall_k}"
    margin = settings.category_regression_max
    description = f"no category's {metric} is materially worse than the baseline's"
    threshold = f">= -{margin:.2f}"
    unavailable = comparison_unavailable("category_regression", description, threshold, comparison)
    if unavailable is not None or paired is None:
        return unavailable or _not_paired("category_regression", description, threshold)
    return regression_gate(
        "category_regression",
        description,
        paired_values(paired.cases, paired.categories, paired.candidate, paired.baseline),
        margin=margin,
        rule=settings.decision_rule,
        alpha=settings.alpha,
        min_cases=settings.category_min_cases,
    )


def _not_paired(name: str, description: str, threshold: str) -> GateResult:
    return GateResult(name, description, None, threshold, "fail", "no paired case")


def latency_gate(
    row: SystemRow,
    maximum_s: float,
    *,
    name: str = "retrieval_p95",
    description: str = "retrieval latency p95 below the limit",
) -> GateResult:
    p95 = row.p95
    if p95 is None:
        reason = (
            f"no successful run: all {row.runs} failed ({_dominant_error(row)})"
            if row.runs
            else "no runs"
        )
        return GateResult(name, description, None, f"< {maximum_s:g} s", "fail", reason)
    shown = f"{p95 * 1000:.1f} ms" if p95 < 1.0 else f"{p95:.2f} s"
    return GateResult(
        name=name,
        description=description,
        value=p95,
        threshold=f"< {maximum_s:g} s",
        decision=_decide(p95 < maximum_s),
        reason=f"p95 {shown}",
    )


def error_rate_gate(
    rows: Sequence[tuple[str, SystemRow]],
    maximum: float,
    *,
    description: str = "share of runs that failed (timeout, transport, non-2xx, malformed)",
    noun: str = "runs",
) -> GateResult:
    """The share of failed runs of every compared system (the candidate first, then the
    baseline): a baseline that fails is no yardstick, so it fails this gate too. The value
    is the highest share."""
    threshold = f"<= {maximum:.2f}"
    if not rows or all(row.error_rate is None for _, row in rows):
        return GateResult("error_rate", description, None, threshold, "fail", "no runs")
    parts = []
    worst = 0.0
    failing = False
    for name, row in rows:
        if row.error_rate is None:
            parts.append(f"{name}: no runs")
            failing = True
            continue
        worst = max(worst, row.error_rate)
        failing = failing or row.error_rate > maximum
        parts.append(
            f"{row.errors} of {row.runs} {noun} failed"
            + (f" ({_dominant_error(row)})" if row.errors else "")
        )
        if len(rows) > 1:
            parts[-1] = f"{name}: {parts[-1]}"
    return GateResult(
        name="error_rate",
        description=description,
        value=worst,
        threshold=threshold,
        decision=_decide(not failing),
        reason="; ".join(parts),
    )


def compared_rows(
    results: SessionResults, candidate: str, comparison: Comparison
) -> list[tuple[str, SystemRow]]:
    """The rows the error-rate gate judges: the candidate's, and the baseline's when run."""
    rows = [(candidate, results.systems[candidate])]
    if comparison.baseline is not None and comparison.state == "run":
        rows.append((comparison.baseline, results.systems[comparison.baseline]))
    return rows


def _dominant_error(row: SystemRow) -> str:
    """ "mostly timeout (12 of 14), e.g. K03: read timed out" from a row's error kinds."""
    kinds = row.error_kinds
    if not kinds:
        return "error kinds not recorded"
    kind, count = next(iter(kinds.items()))
    example = row.error_example
    if len(example) > 160:
        example = example[:159] + "…"
    share = "all" if count == row.errors else f"{count} of {row.errors}"
    return f"{kind}: {share}" + (f", e.g. {example}" if example else "")


def evaluate_layer_a(
    results: SessionResults,
    settings: GateSettings,
    case_errors: Sequence[str],
    *,
    configured_roles: Mapping[str, str] | None = None,
    allowlist_present: bool = True,
) -> list[GateResult]:
    """Every layer-A gate, in the order the report prints them. ``configured_roles`` names
    every configured system, run or not: a configured baseline that was not run fails the
    comparisons instead of letting them pass unexamined."""
    roles = dict(configured_roles) if configured_roles else dict(results.roles)
    compared = [name for name, role in roles.items() if role in ("candidate", "baseline")]
    gates = [
        case_file_gate(case_errors),
        completeness_gate(results),
        empty_results_gate(results, compared),
    ]
    candidate = next((name for name, role in roles.items() if role == "candidate"), None)
    if candidate is None or candidate not in results.systems:
        gates.append(
            GateResult(
                "candidate_present",
                "a candidate system was run",
                None,
                "present",
                "fail",
                "no candidate system configured"
                if candidate is None
                else f"the candidate {candidate} was not run (deselected?)",
            )
        )
        return gates
    comparison = comparison_of(results, roles, settings.error_rate_max)
    metric = f"recall@{settings.recall_k}"
    paired = (
        paired_cases(results, candidate, comparison.baseline, metric)
        if comparison.baseline and comparison.state == "run"
        else None
    )
    row = results.systems[candidate]
    gates.append(leak_gate(results, candidate, allowlist_present))
    gates.append(exact_lookup_gate(row, settings.exact_lookup_min))
    gates.append(recall_improvement_gate(paired, comparison, settings))
    gates.append(category_regression_gate(paired, comparison, settings))
    gates.append(latency_gate(row, settings.retrieval_p95_max_s))
    gates.append(
        error_rate_gate(compared_rows(results, candidate, comparison), settings.error_rate_max)
    )
    return gates
