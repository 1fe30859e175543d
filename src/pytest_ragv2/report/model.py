"""One layer's decision as the reports show it: :class:`Summary`, whose ``to_json()`` is
summary.json. The data model only; :mod:`pytest_ragv2.report.summary` builds and writes it.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pytest_ragv2.deciding.results import SystemRow
from pytest_ragv2.deciding.verdict import GateResult

if TYPE_CHECKING:
    from pytest_ragv2.deciding.diagnosis import Diagnosis
    from pytest_ragv2.deciding.formal import RunKind
    from pytest_ragv2.deciding.quality_score import QualityScores
    from pytest_ragv2.run.attainable import Ceiling
    from pytest_ragv2.run.session_end import BudgetSpent
    from pytest_ragv2.run.shards import ShardPlan

# per system, the runs that tripped each hard veto (a chat layer's)
VetoCounts = dict[str, dict[str, int]]
# per system, per rubric criterion, the runs of each outcome
RubricCounts = dict[str, dict[str, dict[str, int]]]
# per system, the judge's advisory labels counted
JudgeCounts = dict[str, dict[str, int]]


def _clean(value: Any) -> Any:
    """NaN is not JSON: undefined figures become null."""
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, Mapping):
        return {str(key): _clean(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_clean(item) for item in value]
    return value


@dataclass(frozen=True, slots=True)
class ListedRun:
    """A run a reviewer reads first: one that did not meet its case (``unmet_runs``, with
    its reasons) or one the scorer left to a reviewer (``review_queue``, with why)."""

    run: str  # the item's name
    case: str
    system: str
    role: str
    reasons: tuple[str, ...]
    answer: str | None = None  # the chat layers' answer
    reasons_more: int = 0  # the reasons left out of ``reasons``
    lang: str | None = None  # the review queue names the prompt language and repetition
    rep: int | None = None

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"run": self.run, "case": self.case, "system": self.system}
        if self.lang is not None:
            data["lang"] = self.lang
        if self.rep is not None:
            data["rep"] = self.rep
        data["role"] = self.role
        data["reasons"] = list(self.reasons)
        if self.reasons_more:
            data["reasons_more"] = self.reasons_more
        if self.answer is not None:
            data["answer"] = self.answer
        return data


@dataclass(frozen=True, slots=True)
class ReportSection:
    """A section a ``pytest_ragv2_summary`` hook adds to a layer's reports: a title and a
    table of text (docs/extending.md)."""

    title: str
    header: list[str]
    rows: list[list[str]]

    def to_json(self) -> dict[str, Any]:
        return {
            "title": self.title,
            "header": list(self.header),
            "rows": [list(r) for r in self.rows],
        }


@dataclass(frozen=True, slots=True)
class LayerFigures:
    """What a layer adds to its summary beyond the common tables (``Layer.summary_figures``):
    the weighted quality score and the failure diagnosis of every layer, and a chat layer's
    vetoes, rubric and judge counts."""

    quality_score: QualityScores | None = None
    diagnosis: Diagnosis | None = None
    vetoes_by_system: VetoCounts | None = None
    rubric: RubricCounts | None = None
    judge: JudgeCounts | None = None


@dataclass(frozen=True, slots=True)
class SessionFigures:
    """A session of several layers: its layers and its one verdict, on every layer's
    summary."""

    layers: tuple[str, ...]
    verdict: str

    def to_json(self) -> dict[str, Any]:
        return {"layers": list(self.layers), "verdict": self.verdict}


@dataclass(slots=True)
class Summary:
    """One layer's decision as the reports show it; ``to_json()`` is summary.json."""

    run_id: str
    seed: int
    layer: str
    # "pass", "fail", "review" (runs wait for a ruling), "interrupted", "incomplete",
    # "stopped", or "partial" (one shard of a run: not a decision)
    verdict: str
    exit_status: int
    raw_runs: str
    runs_expected: int | None
    runs_recorded: int
    systems: dict[str, SystemRow]
    descriptors: dict[str, dict[str, str]]
    by_category: dict[str, dict[str, SystemRow]]
    by_language: dict[str, dict[str, SystemRow]]
    by_case: dict[str, Mapping[str, SystemRow]]
    gates: list[GateResult]
    unmet_runs: list[ListedRun]
    # the runs the scorer could not decide, waiting for a reviewer's ruling
    review_queue: list[ListedRun] = field(default_factory=list)
    recall_k: int = 5  # the gates' recall@k, which a retrieval layer's tables show
    sections: list[ReportSection] = field(default_factory=list)  # the hooks' own sections
    # what the layer adds (LayerFigures)
    quality_score: QualityScores | None = None
    diagnosis: Diagnosis | None = None  # several layers: the one diagnosis, this layer's part
    vetoes_by_system: VetoCounts | None = None
    rubric: RubricCounts | None = None
    judge: JudgeCounts | None = None
    # the reviewers' rulings applied (deciding.adjudicate.outcome_json)
    adjudication: Mapping[str, Any] | None = None
    # what the run adds: its kind, the ceilings of a retrieval layer, what the budget left
    # out, and the session's layers and verdict when it ran several
    protocol: RunKind | None = None
    attainable: dict[str, Ceiling] | None = None
    budget: BudgetSpent | None = None
    session: SessionFigures | None = None
    shard: ShardPlan | None = None  # one shard's share: its verdict is "partial"

    def add_figures(self, figures: LayerFigures) -> None:
        self.quality_score = figures.quality_score
        self.diagnosis = figures.diagnosis
        self.vetoes_by_system = figures.vetoes_by_system
        self.rubric = figures.rubric
        self.judge = figures.judge

    @property
    def session_verdict(self) -> str:
        """The session's verdict: this layer's, or that of the layers run together."""
        return self.session.verdict if self.session is not None else self.verdict

    @property
    def headline_metric(self) -> str:
        from pytest_ragv2.layers.registry import layer_info

        return layer_info(self.layer).headline(self.recall_k)

    @property
    def _reads_recall_k(self) -> bool:
        from pytest_ragv2.layers.registry import layer_info

        return "{k}" in layer_info(self.layer).headline_metric

    def to_json(self) -> dict[str, Any]:
        cleaned: dict[str, Any] = _clean(self._json_as_built())
        return cleaned

    def _json_as_built(self) -> dict[str, Any]:
        """:meth:`to_json` before NaN became null (and keys strings, tuples lists)."""
        return {
            "run_id": self.run_id,
            "seed": self.seed,
            "layer": self.layer,
            **({"recall_k": self.recall_k} if self._reads_recall_k else {}),
            "verdict": self.verdict,
            "exit_status": self.exit_status,
            "raw_runs": self.raw_runs,
            "runs": {"expected": self.runs_expected, "recorded": self.runs_recorded},
            "systems": {
                name: {**row.to_json(), "descriptors": dict(self.descriptors.get(name, {}))}
                for name, row in self.systems.items()
            },
            "by_category": _rows_json(self.by_category),
            "by_language": _rows_json(self.by_language),
            "by_case": _rows_json(self.by_case, lazy=True),
            "gates": [gate.to_json() for gate in self.gates],
            "unmet_runs": [run.to_json() for run in self.unmet_runs],
            "review_queue": [run.to_json() for run in self.review_queue],
            **({"sections": [s.to_json() for s in self.sections]} if self.sections else {}),
            **self._figures_json(),
        }

    def _figures_json(self) -> dict[str, Any]:
        """The layer's and the run's figures, each under its key when the summary has it."""
        found: dict[str, Any] = {
            "vetoes_by_system": self.vetoes_by_system,
            "quality_score": self.quality_score.to_json() if self.quality_score else None,
            "rubric": self.rubric,
            "diagnosis": self.diagnosis.json_view() if self.diagnosis else None,
            "judge": self.judge or None,
            "adjudication": self.adjudication or None,
            "protocol": self.protocol.to_json() if self.protocol else None,
            "attainable": (
                {name: c.to_json() for name, c in self.attainable.items()}
                if self.attainable
                else None
            ),
            "budget": self.budget.to_json() if self.budget else None,
            "session": self.session.to_json() if self.session else None,
            "shard": (
                {
                    "index": self.shard.shard.index,
                    "count": self.shard.shard.count,
                    "cases": len(self.shard.cases),
                    "plan_cases": self.shard.plan_cases,
                }
                if self.shard
                else None
            ),
        }
        return {key: value for key, value in found.items() if value is not None}


def _rows_json(
    rows: Mapping[str, Mapping[str, SystemRow]], *, lazy: bool = False
) -> dict[str, Mapping[str, dict[str, Any]]]:
    """Each system's rows in their JSON form; ``lazy``: made one at a time as they are read
    (the per-case table: summary.json of 100,000 cases never holds them all)."""
    if lazy:
        return {system: _RowsJson(by_name) for system, by_name in rows.items()}
    return {
        system: {name: row.to_json() for name, row in by_name.items()}
        for system, by_name in rows.items()
    }


class _RowsJson(Mapping[str, dict[str, Any]]):
    """One system's rows, each in its JSON form when it is read."""

    __slots__ = ("_rows",)

    def __init__(self, rows: Mapping[str, SystemRow]) -> None:
        self._rows = rows

    def __getitem__(self, name: str) -> dict[str, Any]:
        return self._rows[name].to_json()

    def __iter__(self) -> Iterator[str]:
        return iter(self._rows)

    def __len__(self) -> int:
        return len(self._rows)
