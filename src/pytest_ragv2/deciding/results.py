"""What the aggregation makes of a layer's records: table rows (:class:`SystemRow`) and the
session's tables (:class:`SessionResults`). Data only — the gates, the reports and the layer
protocol read them; :mod:`pytest_ragv2.deciding.aggregate` builds them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Mapping

    from pytest_ragv2.deciding.records import RunRecord
    from pytest_ragv2.deciding.stats import Estimate

Row = dict[str, Any]  # a row's JSON form, as summary.json holds it
RowFigures = dict[str, float | int | None]  # a layer's own figures of a row (row_extras)


@dataclass(frozen=True, slots=True)
class Latency:
    """A latency percentile of a row, in seconds: the value alone (the rows of a category,
    a language or a case), or with its distribution-free interval (a system's row)."""

    value: float | None
    low: float | None = None
    high: float | None = None
    n: int | None = None
    method: str | None = None  # None: no interval was computed

    @classmethod
    def estimated(cls, estimate: Estimate) -> Latency:
        return cls(
            _finite(estimate.value),
            _finite(estimate.low),
            _finite(estimate.high),
            estimate.n,
            estimate.method,
        )

    def to_json(self) -> dict[str, Any]:
        if self.method is None:
            return {"value": self.value}
        return {
            "value": self.value,
            "low": self.low,
            "high": self.high,
            "n": self.n,
            "method": self.method,
        }


@dataclass(slots=True)
class SystemRow:
    """One table row — a system, or one of its categories, languages or cases: counts, the
    case means of the layer's declared metrics, the layer's own figures and latencies."""

    runs: int
    cases: int
    errors: int
    error_rate: float | None
    skipped: int
    metrics: dict[str, float | None]  # the case means of the layer's per-run metrics
    latency_p50: Latency
    latency_p95: Latency
    error_kinds: dict[str, int] = field(default_factory=dict)  # most frequent first
    error_example: str = ""
    extras: RowFigures = field(default_factory=dict)  # the layer's own (row_extras)
    headline_ci: tuple[str, Estimate] | None = None  # (metric, its case-clustered CI)
    role: str | None = None
    ceiling: float | None = None  # the attainable ceiling (retrieval layers, where known)
    scoring_errors: int = 0  # runs not scored within the scoring bound (not in ``errors``)

    def value(self, name: str) -> float | int | None:
        """A figure by its declared name: a metric mean, or one of the layer's figures."""
        if name in self.metrics:
            return self.metrics[name]
        return self.extras.get(name)

    @property
    def p95(self) -> float | None:
        return self.latency_p95.value

    def to_json(self) -> Row:
        data: Row = {
            "runs": self.runs,
            "cases": self.cases,
            "errors": self.errors,
            "error_rate": self.error_rate,
            "skipped": self.skipped,
        }
        if self.scoring_errors:
            data["scoring_errors"] = self.scoring_errors
        if self.error_kinds:
            data["error_kinds"] = dict(self.error_kinds)
            data["error_example"] = self.error_example
        data.update(self.extras)
        data.update(self.metrics.items())
        data["latency_p50"] = self.latency_p50.to_json()
        data["latency_p95"] = self.latency_p95.to_json()
        if self.headline_ci is not None:
            data[f"{self.headline_ci[0]}_ci"] = estimate_json(self.headline_ci[1])
        if self.role is not None:
            data["role"] = self.role
        if self.ceiling is not None:
            data["ceiling"] = self.ceiling
        return data


def _as_number(value: Any) -> float | None:
    if value is None or isinstance(value, str):
        return None
    number = float(value)
    return None if math.isnan(number) else number


def estimate_json(estimate: Estimate) -> dict[str, Any]:
    return {
        "value": _finite(estimate.value),
        "low": _finite(estimate.low),
        "high": _finite(estimate.high),
        "n": estimate.n,
        "method": estimate.method,
    }


def _finite(value: float | None) -> float | None:
    return None if value is None or math.isnan(value) else value


@dataclass(slots=True)
class SessionResults:
    """Everything the gates and the reports need, built from the records alone."""

    records: list[RunRecord]
    roles: dict[str, str]
    expected_runs: int | None
    layer: str = "A"
    recall_k: int = 5  # the gates' recall@k: the headline of a retrieval layer's tables
    systems: dict[str, SystemRow] = field(default_factory=dict)
    by_category: dict[str, dict[str, SystemRow]] = field(default_factory=dict)
    by_language: dict[str, dict[str, SystemRow]] = field(default_factory=dict)
    by_case: dict[str, Mapping[str, SystemRow]] = field(default_factory=dict)  # CaseRows
    # the reviewers' rulings applied to these records, and the verdict without them
    adjudication: dict[str, Any] | None = None

    @property
    def recorded_runs(self) -> int:
        return len(self.records)

    def role_system(self, role: str) -> str | None:
        for name, system_role in self.roles.items():
            if system_role == role:
                return name
        return None

    def records_of(self, system: str) -> list[RunRecord]:
        return [record for record in self.records if record.key.system == system]
