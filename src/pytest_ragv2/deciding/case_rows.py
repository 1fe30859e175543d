"""A system's per-case rows, kept compact until they are read.

A session of 100,000 runs has a row per case and system, and those rows live until the
reports are written: as plain :class:`SystemRow` objects (a dict of a dozen means, a dict
of the layer's figures, two latencies, a dict of error kinds each) they would cost a
quarter of the 1 GiB the session may use. So the aggregation keeps them here, behind the
``Mapping[str, SystemRow]`` every reader sees: each row's values in a tuple, the metric
and figure names once per table, and a row is made whole again — a plain ``SystemRow`` —
when it is read. A row with anything a per-case row does not have (an interval, a role, a
ceiling) is kept as it is.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from pytest_ragv2.deciding.results import Latency, SystemRow

# runs, cases, errors, error_rate, skipped, means, p50, p95, error kinds, example,
# the layer's figures' names and values, scoring errors
_Packed = tuple[
    int,
    int,
    int,
    float | None,
    int,
    tuple[float | None, ...],
    float | None,
    float | None,
    dict[str, int] | None,
    str,
    tuple[str, ...],
    tuple[float | int | None, ...],
    int,
]


class CaseRows(Mapping[str, SystemRow]):
    """One system's rows by case, in the order they were added."""

    __slots__ = ("_figure_names", "_metrics", "_rows")

    def __init__(self) -> None:
        self._metrics: tuple[str, ...] = ()  # every row's metric names, in order
        self._figure_names: dict[tuple[str, ...], tuple[str, ...]] = {}  # one tuple per shape
        self._rows: dict[str, _Packed | SystemRow] = {}

    def add(self, case: str, row: SystemRow) -> None:
        names = tuple(row.metrics)
        if not self._rows:
            self._metrics = names
        plain = (
            names == self._metrics
            and row.headline_ci is None
            and row.role is None
            and row.ceiling is None
            and row.latency_p50.method is None
            and row.latency_p95.method is None
        )
        if not plain:
            self._rows[case] = row
            return
        figures = tuple(row.extras)
        self._rows[case] = (
            row.runs,
            row.cases,
            row.errors,
            row.error_rate,
            row.skipped,
            tuple(row.metrics.values()),
            row.latency_p50.value,
            row.latency_p95.value,
            row.error_kinds or None,
            row.error_example,
            self._figure_names.setdefault(figures, figures),
            tuple(row.extras.values()),
            row.scoring_errors,
        )

    def __getitem__(self, case: str) -> SystemRow:
        kept = self._rows[case]
        if isinstance(kept, SystemRow):
            return kept
        (runs, cases, errors, rate, skipped, means, p50, p95, kinds, example, names, values,
         scoring_errors) = kept  # fmt: skip
        return SystemRow(
            runs=runs,
            cases=cases,
            errors=errors,
            error_rate=rate,
            skipped=skipped,
            metrics=dict(zip(self._metrics, means, strict=True)),
            latency_p50=Latency(p50),
            latency_p95=Latency(p95),
            error_kinds=dict(kinds) if kinds else {},
            error_example=example,
            extras=dict(zip(names, values, strict=True)),
            scoring_errors=scoring_errors,
        )

    def __contains__(self, case: object) -> bool:
        return case in self._rows

    def __iter__(self) -> Iterator[str]:
        return iter(self._rows)

    def __len__(self) -> int:
        return len(self._rows)

    def __repr__(self) -> str:
        return f"CaseRows({len(self)} cases)"
