"""summary.json as a typed document: what :meth:`pytest_ragv2.report.model.Summary.to_json`
writes, read back by tools and CI jobs, and the JSON Schema committed in
``schemas/summary.schema.json`` (``ragv2 schema summary``).

The top level and every part the package defines forbid undeclared keys, so a change to the
summary that is not declared here fails the schema test. A table row names the layer's own
metrics (declared in :mod:`pytest_ragv2.scoring.metrics`), so its further keys are figures.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue, TypeAdapter


class _Part(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Estimate(_Part):
    """A figure with its interval (the bootstrap's, or a single value)."""

    value: float | None = None
    low: float | None = None
    high: float | None = None
    n: int | None = None
    method: str | None = None


class Row(BaseModel):
    """One table row: a system, or one of its categories, languages or cases. Beside the
    counts: the case means of the layer's metrics (``recall@5``, ``exact_answer``, ...), the
    layer's own figures and the headline's interval (``<metric>_ci``)."""

    model_config = ConfigDict(extra="allow", frozen=True)

    runs: int
    cases: int
    errors: int
    error_rate: float | None
    skipped: int
    scoring_errors: int = 0
    error_kinds: dict[str, int] = Field(default_factory=dict)
    error_example: str = ""
    latency_p50: Estimate
    latency_p95: Estimate
    role: str | None = None
    ceiling: float | None = None
    descriptors: dict[str, str] = Field(default_factory=dict)  # systems table only


class Runs(_Part):
    expected: int | None
    recorded: int


class Gate(_Part):
    name: str
    description: str
    value: JsonValue
    threshold: str
    decision: Literal["pass", "fail", "skip"]
    reason: str
    hard: bool = False
    details: list[str] = Field(default_factory=list)
    evidence: dict[str, JsonValue] | None = None


class UnmetRun(_Part):
    run: str
    case: str
    system: str
    role: str | None
    reasons: list[str]
    reasons_more: int = 0
    answer: str | None = None


class ReviewRun(_Part):
    run: str
    case: str
    system: str
    lang: str
    rep: int
    role: str | None
    reasons: list[str]
    answer: str | None = None


class Section(_Part):
    title: str
    header: list[str]
    rows: list[list[str]]


class ScoreComponent(_Part):
    value: float | None
    weight: float
    effective_weight: float
    measured: bool
    parts: dict[str, float]


class SystemScore(_Part):
    score: float | None
    shown: str
    vetoes: list[str]
    components: dict[str, ScoreComponent]


class QualityScore(_Part):
    layer: str
    systems: dict[str, SystemScore]


class DiagnosisSubject(_Part):
    system: str
    role: str
    layers: list[str]


class CaseDiagnosis(_Part):
    diagnosis: str
    reason: str


class Diagnosis(_Part):
    layers: list[str]
    subjects: dict[str, DiagnosisSubject]
    counts: dict[str, dict[str, int]]
    cases: dict[str, dict[str, CaseDiagnosis]]


class Protocol(_Part):
    kind: Literal["development", "holdout", "formal"]
    label: str
    provisional_cases: int
    cases: int
    flags: list[str]


class Ceiling(_Part):
    stored_chunks: int
    ceiling: float | None
    by_category: dict[str, float]
    by_case: dict[str, float]
    unattainable: list[str]


class NotStarted(_Part):
    layer: str
    system: str
    runs: int


class Budget(_Part):
    max_minutes: float
    runs_not_started: int
    not_started: list[NotStarted]


class Session(_Part):
    layers: list[str]
    verdict: str


class ShardShare(_Part):
    """One shard's share of a run (``--ragv2-shard=I/N``): its verdict is "partial"."""

    index: int
    count: int
    cases: int
    plan_cases: int


class SummaryDocument(_Part):
    """One layer's summary.json."""

    run_id: str
    seed: int
    layer: str
    recall_k: int | None = None  # a retrieval layer's: the gates' recall@k its tables show
    verdict: Literal["pass", "fail", "review", "interrupted", "incomplete", "stopped", "partial"]
    exit_status: int
    raw_runs: str
    runs: Runs
    systems: dict[str, Row]
    by_category: dict[str, dict[str, Row]]
    by_language: dict[str, dict[str, Row]]
    by_case: dict[str, dict[str, Row]]
    gates: list[Gate]
    unmet_runs: list[UnmetRun]
    review_queue: list[ReviewRun] = Field(default_factory=list)  # added later
    sections: list[Section] = Field(default_factory=list)
    vetoes_by_system: dict[str, dict[str, int]] | None = None
    quality_score: QualityScore | None = None
    rubric: dict[str, dict[str, dict[str, int]]] | None = None
    diagnosis: Diagnosis | None = None
    judge: dict[str, dict[str, int]] | None = None
    adjudication: dict[str, JsonValue] | None = None
    protocol: Protocol | None = None
    attainable: dict[str, Ceiling] | None = None
    budget: Budget | None = None
    session: Session | None = None
    shard: ShardShare | None = None


SUMMARY: TypeAdapter[SummaryDocument] = TypeAdapter(SummaryDocument)


def read_summary(data: dict[str, Any]) -> SummaryDocument:
    """A summary.json's content as the typed document (raises pydantic.ValidationError)."""
    return SummaryDocument.model_validate(data)


def summary_schema() -> dict[str, Any]:
    """The JSON Schema of summary.json."""
    schema = SummaryDocument.model_json_schema()
    schema["title"] = "pytest-ragv2 summary.json"
    return schema
