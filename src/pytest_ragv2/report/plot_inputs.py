"""What the figures read of a layer's summary, in plain types: a helper process drawing them
unpickles it with this module alone (not the summary's), and is sent no more than the
figures read.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pydantic import JsonValue

    from pytest_ragv2.deciding.results import SystemRow
    from pytest_ragv2.report.model import Summary


@dataclass(frozen=True, slots=True)
class PlotRow:
    """What a figure reads of a summary's row (a system's, a category's or a case's)."""

    role: str | None
    metrics: dict[str, float | None]
    runs: int
    cases: int
    latency_p50: float | None
    p95: float | None


@dataclass(frozen=True, slots=True)
class PlotGate:
    """What a figure reads of a gate."""

    name: str
    description: str
    threshold: str
    decision: str
    reason: str
    details: tuple[str, ...]
    evidence: dict[str, JsonValue] | None


@dataclass(frozen=True, slots=True)
class PlotInputs:
    """What the figures read of a layer's summary, in plain types: a helper process drawing
    them unpickles it with this module alone (not the summary's, which import pytest,
    pydantic and httpx), and is sent no more than the figures read."""

    run_id: str
    layer: str
    systems: dict[str, PlotRow]
    by_category: dict[str, dict[str, PlotRow]]
    gates: tuple[PlotGate, ...]
    # a chat layer's: per system, the runs of each rubric outcome, and of each veto
    rubric: dict[str, dict[str, dict[str, int]]] | None = None
    vetoes_by_system: dict[str, dict[str, int]] | None = None
    # the compared metric (case_metric) of each case, the candidate's and the baseline's
    # only: what the per-case figure reads of a row (a float per case, not a row per case)
    case_values: dict[str, dict[str, float | None]] = field(default_factory=dict)
    case_metric: str = ""
    headline: str = "met"  # the layer's headline metric (recall@k at a retrieval layer)


def _plot_row(row: SystemRow) -> PlotRow:
    return PlotRow(row.role, dict(row.metrics), row.runs, row.cases, row.latency_p50.value, row.p95)


def plot_inputs(summary: Summary) -> PlotInputs:
    """What :func:`draw` reads of a summary (what a helper process drawing the figures is
    sent): of the per-case rows only the compared metric, and only a candidate's and its
    baseline's; of the layer's figures only the plotted ones."""

    def rows(table: Mapping[str, SystemRow]) -> dict[str, PlotRow]:
        return {name: _plot_row(row) for name, row in table.items()}

    inputs = PlotInputs(
        run_id=summary.run_id,
        layer=summary.layer,
        systems=rows(summary.systems),
        by_category={name: rows(table) for name, table in summary.by_category.items()},
        gates=tuple(
            PlotGate(
                gate.name,
                gate.description,
                gate.threshold,
                gate.decision,
                gate.reason,
                tuple(str(line) for line in gate.details),
                dict(gate.evidence) if gate.evidence is not None else None,
            )
            for gate in summary.gates
        ),
        rubric=summary.rubric,
        vetoes_by_system=summary.vetoes_by_system,
        headline=summary.headline_metric,
    )
    compared = [_role_system(inputs, "candidate"), _role_system(inputs, "baseline")]
    if None in compared:
        return inputs
    metric = inputs.headline
    values = {
        str(name): {case: row.metrics.get(metric) for case, row in summary.by_case[name].items()}
        for name in compared
        if name in summary.by_case
    }
    return dataclasses.replace(inputs, case_values=values, case_metric=metric)


def _role_system(summary: PlotInputs, role: str) -> str | None:
    return next((name for name, row in summary.systems.items() if row.role == role), None)
