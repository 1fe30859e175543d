"""The evaluation protocol's weighted quality score, behind the hard vetoes (pure).

The protocol weighs six areas — answer correctness 30 %, retrieval quality 25 %, citation
and grounding 20 %, completeness 10 %, refusal and constraint handling 10 %, latency and
reliability 5 % — and uses the score "only after hard safety gates": a system that tripped
any hard veto shows ``VETO`` and the vetoes' names, never a number. The score is a summary
figure: it decides no gate and not the exit status.

Each area is the mean of its components, each normalised to [0, 1] (1 is best): a
higher-is-better rate as it is, a lower-is-better rate ``1 - x``, the fabrication count per
run ``1 / (1 + x)``, reliability ``1 - error_rate`` and latency ``min(1, limit / p95)``
against the layer's p95 gate limit. A component a layer does not measure (or that is
undefined for the cases run) is left out of its area; an area with no component measured is
"not measured" and the remaining weights are renormalised to sum to 1. The rules are in
docs/quality-score.md.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from pytest_ragv2.scoring.metrics import ANSWER_METRICS, RETRIEVAL_METRICS, Metric

if TYPE_CHECKING:
    from pytest_ragv2.config.settings import Settings
    from pytest_ragv2.deciding.results import SessionResults, SystemRow

Area = Literal[
    "answer_correctness",
    "retrieval_quality",
    "citation_grounding",
    "completeness",
    "refusal_constraints",
    "latency_reliability",
]
AREAS: tuple[Area, ...] = (
    "answer_correctness",
    "retrieval_quality",
    "citation_grounding",
    "completeness",
    "refusal_constraints",
    "latency_reliability",
)
AREA_LABELS: dict[Area, str] = {
    "answer_correctness": "answer correctness",
    "retrieval_quality": "retrieval quality",
    "citation_grounding": "citation and grounding",
    "completeness": "completeness",
    "refusal_constraints": "refusal and constraint handling",
    "latency_reliability": "latency and reliability",
}
VETO = "VETO"
FABRICATIONS = "fabrications"  # a count per run, normalised 1 / (1 + x)
RELIABILITY = "reliability"  # 1 - error_rate
LATENCY = "latency"  # min(1, limit / p95)


@dataclass(frozen=True, slots=True)
class Weights:
    """The areas' weights (the protocol's by default); normalised by their sum."""

    answer_correctness: float = 0.30
    retrieval_quality: float = 0.25
    citation_grounding: float = 0.20
    completeness: float = 0.10
    refusal_constraints: float = 0.10
    latency_reliability: float = 0.05

    def of(self, area: Area) -> float:
        weight: float = getattr(self, area)
        return weight


def _declared(metrics: tuple[Metric, ...], *names: str) -> tuple[Metric, ...]:
    by_name = {metric.name: metric for metric in metrics}
    return tuple(by_name[name] for name in names)


# the declared metrics each area reads, per kind of layer (metrics.py declares them once)
def retrieval_areas(recall_k: int = 5) -> dict[Area, tuple[Metric, ...]]:
    """A retrieval layer's areas: its recall is at the gates' ``recall_k``."""
    return {
        "retrieval_quality": _declared(
            RETRIEVAL_METRICS,
            f"recall@{recall_k}",
            "mrr",
            "exact_metadata",
            "table_integrity",
            "duplicate_rate",
        ),
    }


ANSWER_AREAS: dict[Area, tuple[Metric, ...]] = {
    "answer_correctness": _declared(ANSWER_METRICS, "exact_answer", "claim_correctness"),
    "citation_grounding": _declared(
        ANSWER_METRICS,
        "grounded_rate",
        "citation_correctness",
        "citation_completeness",
        FABRICATIONS,
    ),
    "completeness": _declared(ANSWER_METRICS, "completeness"),
    "refusal_constraints": _declared(
        ANSWER_METRICS, "safe_refusal", "over_refusal", "constraint_ok"
    ),
}


@dataclass(frozen=True, slots=True)
class MetricValue:
    name: str
    value: float | None  # the case mean, as the tables show it


@dataclass(frozen=True, slots=True)
class SystemFigures:
    """What the score reads of one system's row: its declared metrics' case means, its error
    rate and latency p95, and the hard vetoes it tripped (gate names)."""

    system: str
    metrics: tuple[MetricValue, ...]
    error_rate: float | None
    p95_s: float | None
    vetoes: tuple[str, ...] = ()

    def metric(self, name: str) -> float | None:
        for found in self.metrics:
            if found.name == name:
                return found.value
        return None


@dataclass(frozen=True, slots=True)
class Part:
    """One component of an area: its raw figure and its value normalised to [0, 1]."""

    name: str
    raw: float
    normalised: float


@dataclass(frozen=True, slots=True)
class Component:
    """One area of a system's score: its parts, its value (their mean), its configured and
    its renormalised weight; ``value`` None when the layer does not measure it."""

    area: Area
    weight: float
    effective_weight: float
    value: float | None
    parts: tuple[Part, ...]

    @property
    def measured(self) -> bool:
        return self.value is not None


@dataclass(frozen=True, slots=True)
class SystemScore:
    system: str
    vetoes: tuple[str, ...]
    components: tuple[Component, ...]
    score: float | None  # None behind a veto, or when no area is measured

    def component(self, area: str) -> Component:
        return next(component for component in self.components if component.area == area)

    @property
    def shown(self) -> str:
        if self.vetoes:
            return f"{VETO} ({', '.join(self.vetoes)})"
        return "n/a" if self.score is None else f"{self.score:.3f}"

    def to_json(self) -> dict[str, object]:
        return {
            "score": self.score,
            "shown": self.shown,
            "vetoes": list(self.vetoes),
            "components": {
                component.area: {
                    "value": component.value,
                    "weight": component.weight,
                    "effective_weight": component.effective_weight,
                    "measured": component.measured,
                    "parts": {part.name: part.normalised for part in component.parts},
                }
                for component in self.components
            },
        }


@dataclass(frozen=True, slots=True)
class QualityScores:
    layer: str
    systems: tuple[SystemScore, ...]

    def to_json(self) -> dict[str, object]:
        return {
            "layer": self.layer,
            "systems": {score.system: score.to_json() for score in self.systems},
        }


def normalise(metric: Metric, raw: float) -> float:
    """A declared metric's case mean in [0, 1], 1 best."""
    if metric.name == FABRICATIONS:
        return 1.0 / (1.0 + max(raw, 0.0))
    value = 1.0 - raw if metric.direction == "lower" else raw
    return min(1.0, max(0.0, value))


def _latency_parts(figures: SystemFigures, p95_limit_s: float) -> tuple[Part, ...]:
    parts: list[Part] = []
    if figures.error_rate is not None:
        parts.append(Part(RELIABILITY, figures.error_rate, 1.0 - figures.error_rate))
    if figures.p95_s is not None:
        latency = 1.0 if figures.p95_s <= p95_limit_s else p95_limit_s / figures.p95_s
        parts.append(Part(LATENCY, figures.p95_s, latency))
    return tuple(parts)


def _parts(metrics: tuple[Metric, ...], figures: SystemFigures) -> tuple[Part, ...]:
    parts = []
    for metric in metrics:
        raw = figures.metric(metric.name)
        if raw is not None and raw == raw:  # a NaN mean is not measured
            parts.append(Part(metric.name, raw, normalise(metric, raw)))
    return tuple(parts)


def score_system(
    figures: SystemFigures,
    *,
    answers: bool,
    weights: Weights,
    p95_limit_s: float,
    recall_k: int = 5,
) -> SystemScore:
    """One system's weighted score at a retrieval (``answers=False``) or an answer layer."""
    areas = ANSWER_AREAS if answers else retrieval_areas(recall_k)
    found: list[tuple[Area, tuple[Part, ...]]] = []
    for area in AREAS:
        if area == "latency_reliability":
            parts = _latency_parts(figures, p95_limit_s)
        else:
            parts = _parts(areas.get(area, ()), figures)
        found.append((area, parts))
    total = sum(weights.of(area) for area, parts in found if parts)
    components = tuple(
        Component(
            area,
            weights.of(area),
            weights.of(area) / total if parts and total > 0 else 0.0,
            sum(part.normalised for part in parts) / len(parts) if parts else None,
            parts,
        )
        for area, parts in found
    )
    score = None
    if not figures.vetoes and total > 0:
        score = sum(c.effective_weight * c.value for c in components if c.value is not None)
    return SystemScore(figures.system, figures.vetoes, components, score)


def score_layer(
    layer: str,
    systems: Sequence[SystemFigures],
    *,
    answers: bool,
    weights: Weights,
    p95_limit_s: float,
    recall_k: int = 5,
) -> QualityScores:
    return QualityScores(
        layer,
        tuple(
            score_system(
                figures,
                answers=answers,
                weights=weights,
                p95_limit_s=p95_limit_s,
                recall_k=recall_k,
            )
            for figures in systems
        ),
    )


def figures_of(system: str, row: SystemRow, vetoes: Sequence[str]) -> SystemFigures:
    """What the score reads of a system's table row (its declared metrics' case means)."""
    return SystemFigures(
        system,
        tuple(MetricValue(name, value) for name, value in row.metrics.items()),
        row.error_rate,
        row.p95,
        tuple(vetoes),
    )


def session_scores(
    layer: str,
    results: SessionResults,
    settings: Settings | None,
    vetoes: Mapping[str, Sequence[str]],
    *,
    answers: bool,
) -> QualityScores:
    """Every system's score in one layer's results: ``vetoes`` names, per system, the hard
    vetoes it tripped; the weights and the layer's p95 limit come from the settings (the
    protocol's and the gates' defaults without them)."""
    from pytest_ragv2.config.settings import Settings

    found = settings if settings is not None else Settings()
    weights = Weights(**found.score_weights.model_dump())
    limit = found.answer_gates.e2e_p95_max_s if answers else found.gates.retrieval_p95_max_s
    systems = [figures_of(name, row, vetoes.get(name, ())) for name, row in results.systems.items()]
    return score_layer(
        layer,
        systems,
        answers=answers,
        weights=weights,
        p95_limit_s=limit,
        recall_k=results.recall_k,
    )
