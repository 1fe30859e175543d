"""Comparison gates decided on evidence, not on point estimates.

A comparison is paired by case (:func:`pytest_ragv2.deciding.stats.paired_comparison`): the
candidate's per-case mean minus the baseline's, over the cases both ran. Each gate row
reads: the estimate, its interval, the test with its p-value, the rule, the decision.

- ``recall_improvement`` (*improves*): with ``decision_rule = "interval"`` the interval's
  lower bound must reach the margin; with ``"test"`` the one-sided paired test of
  "difference > margin" must be significant at ``alpha``.
- ``category_regression`` (*materially worse*): a category is materially worse when, under
  ``"interval"``, the upper bound of its simultaneous interval (Bonferroni over the m
  categories compared, confidence 1 - alpha/m) lies below -margin, or, under ``"test"``,
  its Holm-adjusted one-sided p-value of "difference < -margin" is below ``alpha``.
  Categories with fewer than ``category_min_cases`` paired cases are reported, never
  decisive on their own.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from pytest_ragv2.deciding.stats import PairedComparison, holm, paired_comparison
from pytest_ragv2.deciding.verdict import GateResult, fmt_delta

Rule = Literal["interval", "test"]


@dataclass(frozen=True, slots=True)
class Paired:
    """Per-case means of one metric, aligned over the cases both systems ran."""

    cases: tuple[str, ...]
    categories: tuple[str, ...]
    candidate: tuple[float, ...]
    baseline: tuple[float, ...]


def _interval(comparison: PairedComparison, confidence: float) -> str:
    return (
        f"{fmt_delta(comparison.estimate)} [{fmt_delta(comparison.low)}, "
        f"{fmt_delta(comparison.high)}] ({confidence:.1%} {comparison.interval})"
    )


def improvement_gate(
    name: str,
    description: str,
    paired: Paired,
    *,
    margin: float,
    rule: Rule,
    alpha: float,
) -> GateResult:
    confidence = 1.0 - alpha
    comparison = paired_comparison(
        paired.candidate, paired.baseline, margin=margin, confidence=confidence
    )
    if rule == "interval":
        holds = comparison.low >= margin - 1e-12
        rule_text = f"interval lower bound >= {fmt_delta(margin)}"
    else:
        holds = comparison.p_greater < alpha
        rule_text = f"one-sided test of Δ > {fmt_delta(margin)} at alpha {alpha:g}"
    reason = (
        f"Δ {_interval(comparison, confidence)}; {comparison.test}: "
        f"p = {comparison.p_greater:.3g} for Δ > {fmt_delta(margin)}, "
        f"p = {comparison.p_two_sided:.3g} for Δ ≠ 0; rule: {rule_text}"
    )
    return GateResult(
        name=name,
        description=description,
        value=comparison.estimate,
        threshold=rule_text,
        decision="pass" if holds else "fail",
        reason=reason,
        details=[f"{len(paired.cases)} cases compared: {', '.join(paired.cases)}"],
        evidence=comparison.to_json(),
    )


def regression_gate(
    name: str,
    description: str,
    paired: Paired,
    *,
    margin: float,
    rule: Rule,
    alpha: float,
    min_cases: int,
) -> GateResult:
    by_category: dict[str, tuple[list[float], list[float]]] = {}
    for category, cand, base in zip(
        paired.categories, paired.candidate, paired.baseline, strict=True
    ):
        pair = by_category.setdefault(category, ([], []))
        pair[0].append(cand)
        pair[1].append(base)
    eligible = sorted(name for name, (cand, _) in by_category.items() if len(cand) >= min_cases)
    m = max(1, len(eligible))
    confidence = 1.0 - alpha / m if rule == "interval" else 1.0 - alpha
    comparisons = {
        category: paired_comparison(
            cand, base, margin=margin, confidence=confidence if category in eligible else 0.95
        )
        for category, (cand, base) in sorted(by_category.items())
    }
    adjusted = dict(
        zip(eligible, holm([comparisons[category].p_less for category in eligible]), strict=True)
    )
    worse: list[str] = []
    details: list[str] = []
    for category, comparison in sorted(comparisons.items(), key=lambda item: item[1].estimate):
        shown = confidence if category in eligible else 0.95
        line = f"{category}: Δ {_interval(comparison, shown)}, {comparison.n} cases"
        if category not in eligible:
            details.append(f"{line} — under {min_cases} cases: reported, not decisive")
            continue
        materially = comparison.high < -margin if rule == "interval" else adjusted[category] < alpha
        details.append(
            f"{line}; Holm-adjusted p = {adjusted[category]:.3g} for Δ < {fmt_delta(-margin)}"
            + ("; materially worse" if materially else "")
        )
        if materially:
            worse.append(category)
    if rule == "interval":
        rule_text = (
            f"no category's upper bound below {fmt_delta(-margin)} "
            f"(simultaneous {confidence:.1%} intervals)"
        )
    else:
        rule_text = f"no Holm-adjusted one-sided p < {alpha:g} for Δ < {fmt_delta(-margin)}"
    if not comparisons:
        return GateResult(
            name, description, None, rule_text, "skip", "no category run on both systems"
        )
    worst_category, worst = min(comparisons.items(), key=lambda item: item[1].estimate)
    reason = (
        f"materially worse: {', '.join(worse)}"
        if worse
        else f"no category materially worse (worst: {worst_category} {fmt_delta(worst.estimate)};"
        f" {len(eligible)} of {len(comparisons)} categories have {min_cases}+ cases)"
    )
    return GateResult(
        name=name,
        description=description,
        value=worst.estimate,
        threshold=rule_text,
        decision="fail" if worse else "pass",
        reason=reason,
        details=details,
    )


def paired_values(
    cases: Sequence[str],
    categories: Sequence[str],
    candidate: Sequence[float],
    baseline: Sequence[float],
) -> Paired:
    return Paired(tuple(cases), tuple(categories), tuple(candidate), tuple(baseline))
