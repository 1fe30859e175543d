"""Two runs of the same systems compared: per system and metric the paired difference
b − a over the cases both runs hold, the cases whose outcome changed, the vetoes that
appeared or went (``ragv2 compare``, :mod:`pytest_ragv2.tools.compare`).

Each case's value is its mean over its runs (repetitions, languages), as the aggregate
takes it (:func:`pytest_ragv2.deciding.aggregate.case_metric_means`); the difference has
the comparison gates' interval and test (:func:`pytest_ragv2.deciding.stats.paired_comparison`:
BCa bootstrap over cases, paired sign-flip permutation). A case is met when every run of it
met its case. Cases held by one run only are counted and named, never paired.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pytest_ragv2.deciding.aggregate import case_metric_means
from pytest_ragv2.deciding.records import ChatRecord, RunRecord
from pytest_ragv2.deciding.stats import PairedComparison, paired_comparison
from pytest_ragv2.scoring.metrics import (
    ANSWER_METRICS,
    EVIDENCE_RECALL,
    RETRIEVAL_METRICS,
    Direction,
)

_DECLARED = {
    metric.name: metric for metric in (*RETRIEVAL_METRICS, *ANSWER_METRICS, EVIDENCE_RECALL)
}


@dataclass(frozen=True, slots=True)
class MetricDelta:
    """One metric of one system: b − a paired by case."""

    layer: str
    system: str
    metric: str
    label: str
    direction: Direction
    mean_a: float  # over the paired cases
    mean_b: float
    paired: PairedComparison

    @property
    def reading(self) -> str:
        """What the interval says, in the metric's direction: better, worse or unclear."""
        low, high = self.paired.low, self.paired.high
        if self.paired.n == 0 or math.isnan(low) or math.isnan(high):
            return "undefined"
        if low == high == self.paired.estimate == 0.0:
            return "unchanged"
        if low <= 0.0 <= high:
            return "no clear change"
        if self.direction == "neither":
            return "changed"
        return "better" if (low > 0.0) == (self.direction == "higher") else "worse"

    def to_json(self) -> dict[str, Any]:
        return {
            "layer": self.layer,
            "system": self.system,
            "metric": self.metric,
            "label": self.label,
            "direction": self.direction,
            "mean_a": _finite(self.mean_a),
            "mean_b": _finite(self.mean_b),
            "delta": _finite(self.paired.estimate),
            "low": _finite(self.paired.low),
            "high": _finite(self.paired.high),
            "cases": self.paired.n,
            "p_two_sided": _finite(self.paired.p_two_sided),
            "interval": self.paired.interval,
            "test": self.paired.test,
            "reading": self.reading,
        }


@dataclass(frozen=True, slots=True)
class OutcomeChange:
    """A case whose outcome changed for a system: runs met out of runs, in a and in b."""

    layer: str
    system: str
    case: str
    met_a: tuple[int, int]
    met_b: tuple[int, int]

    @property
    def change(self) -> str:
        return "newly missed" if self.met_a[0] == self.met_a[1] else "newly met"

    def to_json(self) -> dict[str, Any]:
        return {
            "layer": self.layer,
            "system": self.system,
            "case": self.case,
            "change": self.change,
            "met_a": list(self.met_a),
            "met_b": list(self.met_b),
        }


@dataclass(frozen=True, slots=True)
class VetoChange:
    """A veto kind that appeared in (or went from) a case's runs of a system."""

    layer: str
    system: str
    case: str
    veto: str
    change: str  # "appeared" or "went"

    def to_json(self) -> dict[str, Any]:
        return {
            "layer": self.layer,
            "system": self.system,
            "case": self.case,
            "veto": self.veto,
            "change": self.change,
        }


@dataclass(slots=True)
class SystemCases:
    """The cases of one system in a and in b: paired, and those of one run only."""

    layer: str
    system: str
    paired: tuple[str, ...]
    only_a: tuple[str, ...]
    only_b: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "layer": self.layer,
            "system": self.system,
            "paired": len(self.paired),
            "only_a": list(self.only_a),
            "only_b": list(self.only_b),
        }


@dataclass(slots=True)
class RunComparison:
    run_a: str
    run_b: str
    seed_a: int
    seed_b: int
    layers: tuple[str, ...]
    configuration: str
    confidence: float
    cases: list[SystemCases] = field(default_factory=list)
    deltas: list[MetricDelta] = field(default_factory=list)
    outcomes: list[OutcomeChange] = field(default_factory=list)
    # layer -> system -> veto kind -> (runs in a, runs in b)
    veto_counts: dict[str, dict[str, dict[str, tuple[int, int]]]] = field(default_factory=dict)
    veto_changes: list[VetoChange] = field(default_factory=list)
    systems_only_a: list[str] = field(default_factory=list)
    systems_only_b: list[str] = field(default_factory=list)

    @property
    def name(self) -> str:
        return f"compare-{self.run_a}-vs-{self.run_b}"

    def to_json(self) -> dict[str, Any]:
        return {
            "run_a": self.run_a,
            "run_b": self.run_b,
            "seed_a": self.seed_a,
            "seed_b": self.seed_b,
            "layers": list(self.layers),
            "configuration": self.configuration,
            "confidence": self.confidence,
            "difference": "b - a, paired by case",
            "systems_only_a": self.systems_only_a,
            "systems_only_b": self.systems_only_b,
            "cases": [cases.to_json() for cases in self.cases],
            "metrics": [delta.to_json() for delta in self.deltas],
            "outcome_changes": [change.to_json() for change in self.outcomes],
            "vetoes": {
                layer: {
                    system: {kind: {"a": a, "b": b} for kind, (a, b) in kinds.items()}
                    for system, kinds in systems.items()
                }
                for layer, systems in self.veto_counts.items()
            },
            "veto_changes": [change.to_json() for change in self.veto_changes],
        }


def _finite(value: float) -> float | None:
    return value if math.isfinite(value) else None


def by_system(records: Iterable[RunRecord], layer: str) -> dict[str, list[RunRecord]]:
    systems: dict[str, list[RunRecord]] = {}
    for record in records:
        if record.key.layer == layer and not record.skipped:
            systems.setdefault(record.key.system, []).append(record)
    return systems


def _met_counts(records: Sequence[RunRecord]) -> dict[str, tuple[int, int]]:
    """Per case: runs that met it, and runs."""
    counts: dict[str, tuple[int, int]] = {}
    for record in records:
        met, runs = counts.get(record.key.case, (0, 0))
        counts[record.key.case] = (met + record.met, runs + 1)
    return counts


def _veto_kinds(records: Sequence[RunRecord]) -> dict[str, set[str]]:
    kinds: dict[str, set[str]] = {}
    for record in records:
        found = kinds.setdefault(record.key.case, set())
        if isinstance(record, ChatRecord):
            found.update(str(veto.kind) for veto in record.vetoes)
    return kinds


def compare_system(
    result: RunComparison,
    layer: str,
    system: str,
    records_a: Sequence[RunRecord],
    records_b: Sequence[RunRecord],
    metrics: Sequence[str],
) -> None:
    means_a = case_metric_means(records_a, metrics)
    means_b = case_metric_means(records_b, metrics)
    paired = tuple(sorted(case for case in means_a if case in means_b))
    result.cases.append(
        SystemCases(
            layer,
            system,
            paired,
            tuple(sorted(case for case in means_a if case not in means_b)),
            tuple(sorted(case for case in means_b if case not in means_a)),
        )
    )
    for metric in metrics:
        common = [case for case in paired if metric in means_a[case] and metric in means_b[case]]
        values_a = [means_a[case][metric] for case in common]
        values_b = [means_b[case][metric] for case in common]
        declared = _DECLARED.get(metric)
        result.deltas.append(
            MetricDelta(
                layer=layer,
                system=system,
                metric=metric,
                label=declared.label if declared else metric,
                direction=declared.direction if declared else "neither",
                mean_a=sum(values_a) / len(values_a) if values_a else math.nan,
                mean_b=sum(values_b) / len(values_b) if values_b else math.nan,
                paired=paired_comparison(values_b, values_a, confidence=result.confidence),
            )
        )
    met_a, met_b = _met_counts(records_a), _met_counts(records_b)
    for case in paired:
        all_a = met_a[case][0] == met_a[case][1]
        all_b = met_b[case][0] == met_b[case][1]
        if all_a != all_b:
            result.outcomes.append(OutcomeChange(layer, system, case, met_a[case], met_b[case]))
    vetoes_a, vetoes_b = _veto_kinds(records_a), _veto_kinds(records_b)
    for case in paired:
        before, after = vetoes_a.get(case, set()), vetoes_b.get(case, set())
        for kind in sorted(after - before):
            result.veto_changes.append(VetoChange(layer, system, case, kind, "appeared"))
        for kind in sorted(before - after):
            result.veto_changes.append(VetoChange(layer, system, case, kind, "went"))


def veto_counts(
    counts_a: Mapping[str, Mapping[str, int]] | None,
    counts_b: Mapping[str, Mapping[str, int]] | None,
) -> dict[str, dict[str, tuple[int, int]]]:
    """Per system in either run, runs per veto kind in a and in b (empty at a layer that
    records no vetoes)."""
    counts_a, counts_b = counts_a or {}, counts_b or {}
    table: dict[str, dict[str, tuple[int, int]]] = {}
    for system in dict.fromkeys([*counts_a, *counts_b]):
        of_a, of_b = counts_a.get(system, {}), counts_b.get(system, {})
        table[system] = {
            kind: (int(of_a.get(kind, 0)), int(of_b.get(kind, 0)))
            for kind in sorted({*of_a, *of_b})
        }
    return table
