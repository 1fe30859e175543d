"""What the aggregation makes of a layer's records: table rows (:class:`SystemRow`) and the
session's tables (:class:`SessionResults`). Data only — the gates, the reports and the layer
protocol read them; :mod:`pytest_ragv2.deciding.aggregate` builds them.
"""

from __future__ import annotations

import math
from collections.abc import ItemsView, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pytest_ragv2.deciding.records import RunRecord
    from pytest_ragv2.deciding.stats import Estimate

Row = dict[str, Any]  # a row's JSON form, as summary.json holds it


class MetricMeans(Mapping[str, float | None]):
    """A row's metric means, read as a mapping: the layer's metric names (one tuple every
    row shares) and the values in their order. A per-case table has a row per case and
    system; a dict of a dozen means is three times the bytes of the tuple."""

    __slots__ = ("_names", "_values")

    def __init__(self, names: tuple[str, ...], values: tuple[float | None, ...]) -> None:
        if len(names) != len(values):
            raise ValueError(f"{len(names)} metric names for {len(values)} values")
        self._names = names
        self._values = values

    def __getitem__(self, name: str) -> float | None:
        try:
            return self._values[self._names.index(name)]
        except ValueError:
            raise KeyError(name) from None

    def __iter__(self) -> Iterator[str]:
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)

    def items(self) -> ItemsView[str, float | None]:
        return _MeansItems(self)

    def __repr__(self) -> str:
        return f"MetricMeans({dict(zip(self._names, self._values, strict=True))!r})"

    def __reduce__(self) -> tuple[type[MetricMeans], tuple[tuple[str, ...], tuple[Any, ...]]]:
        return MetricMeans, (self._names, self._values)


class PointEstimate(Mapping[str, float | None]):
    """A figure without an interval, read as its JSON form ``{"value": x}``: each per-case
    row holds two latencies, and a one-entry dict is four times the bytes."""

    __slots__ = ("value",)

    def __init__(self, value: float | None) -> None:
        self.value = value

    def __getitem__(self, name: str) -> float | None:
        if name != "value":
            raise KeyError(name)
        return self.value

    def __iter__(self) -> Iterator[str]:
        return iter(("value",))

    def __len__(self) -> int:
        return 1

    def __repr__(self) -> str:
        return f"PointEstimate({self.value!r})"

    def __reduce__(self) -> tuple[type[PointEstimate], tuple[float | None]]:
        return PointEstimate, (self.value,)


# the layers' per-row figures, one dict per distinct content (most per-case rows hold
# zeros): shared, so read-only (``SystemRow.extras`` is a Mapping)
_SHARED_EXTRAS: dict[tuple[tuple[str, Any], ...], Mapping[str, Any]] = {}
_SHARED_EXTRAS_KEPT = 1024


def _shared_extras(extras: dict[str, Any]) -> Mapping[str, Any]:
    try:
        key = tuple(extras.items())
        shared = _SHARED_EXTRAS.get(key)
    except TypeError:  # a value that cannot be hashed (a list): kept as it is
        return extras
    if shared is None:
        if len(_SHARED_EXTRAS) >= _SHARED_EXTRAS_KEPT:
            return extras
        shared = _SHARED_EXTRAS[key] = extras
    return shared


class _MeansItems(ItemsView[str, float | None]):
    _mapping: MetricMeans

    def __iter__(self) -> Iterator[tuple[str, float | None]]:
        means = self._mapping
        return zip(means._names, means._values, strict=True)


@dataclass(slots=True)
class SystemRow:
    """One table row — a system, or one of its categories, languages or cases: counts, the
    case means of the layer's declared metrics, the layer's own figures and latencies."""

    runs: int
    cases: int
    errors: int
    error_rate: float | None
    skipped: int
    metrics: Mapping[str, float | None]  # the case means of the layer's per-run metrics
    latency_p50: Mapping[str, Any]  # an estimate: value (and low, high, method with intervals)
    latency_p95: Mapping[str, Any]
    error_kinds: Mapping[str, int] = field(default_factory=dict)  # most frequent first
    error_example: str = ""
    extras: Mapping[str, Any] = field(default_factory=dict)  # the layer's own (row_extras)
    headline_ci: tuple[str, dict[str, Any]] | None = None  # (metric, its case-clustered CI)
    role: str | None = None
    ceiling: float | None = None  # the attainable ceiling (retrieval layers, where known)
    scoring_errors: int = 0  # runs not scored within the scoring bound (not in ``errors``)

    def value(self, name: str) -> Any:
        """A figure by its declared name: a metric mean, or one of the layer's figures."""
        if name in self.metrics:
            return self.metrics[name]
        return self.extras.get(name)

    @property
    def p95(self) -> float | None:
        value = self.latency_p95.get("value")
        return None if value is None else float(value)

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
        data["latency_p50"] = dict(self.latency_p50)
        data["latency_p95"] = dict(self.latency_p95)
        if self.headline_ci is not None:
            data[f"{self.headline_ci[0]}_ci"] = self.headline_ci[1]
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
    by_case: dict[str, dict[str, SystemRow]] = field(default_factory=dict)
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
