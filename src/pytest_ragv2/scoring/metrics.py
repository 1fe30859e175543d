"""Every metric, declared once — as pytest-benchmark declares its ``Stats.fields``.

A declaration names the metric as records, rows and summary.json know it, gives its column
label and the table it shows in, says which direction is better, and, for an answer metric,
how one run's value is read from its score. The session's per-case means, the layers' case
metrics, the report columns and a layer-B record's ``metrics`` are all built from these
tuples, so adding a metric is one declaration here plus its scorer;
``tests/scoring/test_metrics.py`` checks that every metric a table, a layer or a record
names is declared.

Per-run metrics are averaged per case, then over cases (the case is the unit). A row-only
metric (``per_run=False``) is computed for a whole system row (the attainable ceiling).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from pytest_ragv2.layers.registry import LayerInfo
    from pytest_ragv2.scoring.answer_records import AnswerScore
    from pytest_ragv2.systems.transcripts import Transcript

Direction = Literal["higher", "lower", "neither"]
Table = Literal["systems", "answers", "discipline"]
AnswerReader = Callable[["AnswerScore", "Transcript"], "float | None"]


@dataclass(frozen=True, slots=True)
class Metric:
    name: str
    label: str
    direction: Direction
    description: str
    tables: tuple[Table, ...] = ()  # none: in records, rows and summary.json, not in a table
    per_run: bool = True
    read: AnswerReader | None = None  # layer B: the run's value from its score

    def __post_init__(self) -> None:
        if not self.name or " " in self.name:
            raise ValueError(f"metric name {self.name!r}")


def _rate(value: bool | float | int | None) -> float | None:
    return None if value is None else float(value)


def _output_tokens(transcript: Transcript) -> float | None:
    totals: dict[str, int] = {}
    for turn in transcript.turns:
        for name, value in turn.usage.items():
            totals[name] = totals.get(name, 0) + value
    return _rate(totals.get("completion_tokens", totals.get("output_tokens")))


MET = Metric(
    "met", "met", "higher", "share of runs that met their case", tables=("systems", "answers")
)

RETRIEVAL_METRICS: tuple[Metric, ...] = (
    *(
        Metric(
            f"recall@{k}",
            f"R@{k}",
            "higher",
            f"required entries found in the top {k}",
            tables=("systems",),
        )
        for k in (1, 3, 5, 10)
    ),
    Metric(
        "ceiling",
        "ceiling",
        "higher",
        "the recall of a perfect ranker over what the system stores (attainable ceiling)",
        tables=("systems",),
        per_run=False,
    ),
    Metric("hit@5", "hit@5", "higher", "some required entry in the top 5", tables=("systems",)),
    *(
        Metric(f"hit@{k}", f"hit@{k}", "higher", f"some required entry in the top {k}")
        for k in (1, 3, 10)
    ),
    Metric("mrr", "MRR", "higher", "1 / rank of the first required entry", tables=("systems",)),
    Metric(
        "exact_metadata",
        "exact",
        "higher",
        "exact lookups: the top item matches at full granularity by its metadata",
        tables=("systems",),
    ),
    Metric(
        "table_integrity",
        "table",
        "higher",
        "one item holds the header, row, unit and footnote the gold names",
        tables=("systems",),
    ),
    Metric(
        "duplicate_rate",
        "dup",
        "lower",
        "returned items repeating an earlier item's location or text",
        tables=("systems",),
    ),
    Metric(
        "irrelevant_rate",
        "irrel",
        "lower",
        "returned items from no required document",
        tables=("systems",),
    ),
    MET,
)

ANSWER_METRICS: tuple[Metric, ...] = (
    Metric(
        "exact_answer",
        "exact",
        "higher",
        "every required claim made, none wrong (a turn expecting a refusal: refused)",
        tables=("answers",),
        read=lambda score, _: _rate(score.exact_answer),
    ),
    Metric(
        "claim_correctness",
        "claims",
        "higher",
        "claims made that are right",
        tables=("answers",),
        read=lambda score, _: score.claim_correctness,
    ),
    Metric(
        "completeness",
        "complete",
        "higher",
        "required claims made",
        tables=("answers",),
        read=lambda score, _: score.completeness,
    ),
    Metric(
        "grounded_rate",
        "grounded",
        "higher",
        "facts of the answer supported by its evidence",
        tables=("answers",),
        read=lambda score, _: score.grounded_claim_rate,
    ),
    Metric(
        "fabrications",
        "fabric./run",
        "lower",
        "numbers, identifiers and file names found nowhere in the evidence",
        tables=("answers",),
        read=lambda score, _: float(score.fabrication_count),
    ),
    Metric(
        "citation_correctness",
        "cite ok",
        "higher",
        "citations whose source backs their sentence",
        tables=("answers",),
        read=lambda score, _: score.citation_correctness,
    ),
    Metric(
        "citation_completeness",
        "cite compl",
        "higher",
        "facts carrying a citation",
        tables=("answers",),
        read=lambda score, _: score.citation_completeness,
    ),
    Metric(
        "source_type_ok",
        "source type",
        "higher",
        "the source type the case asks for",
        tables=("discipline",),
        read=lambda score, _: _rate(score.source_type_discipline),
    ),
    Metric(
        "constraint_ok",
        "constraints",
        "higher",
        "the mandatory constraints kept",
        tables=("discipline",),
        read=lambda score, _: _rate(score.constraint_compliance),
    ),
    Metric(
        "safe_refusal",
        "safe refusal",
        "higher",
        "a safe refusal where one is required",
        tables=("discipline",),
        read=lambda score, _: _rate(score.safe_refusal_accuracy),
    ),
    Metric(
        "over_refusal",
        "over-refusal",
        "lower",
        "a refusal where an answer is due",
        tables=("discipline",),
        read=lambda score, _: float(score.over_refusals > 0),
    ),
    Metric(
        "language_ok",
        "language",
        "higher",
        "the answer in the language asked",
        tables=("discipline",),
        read=lambda score, _: _rate(score.language_ok),
    ),
    Metric(
        "format_ok",
        "format",
        "higher",
        "the format asked (table, one sentence, list)",
        tables=("discipline",),
        read=lambda score, _: _rate(score.format_ok),
    ),
    Metric(
        "tools_ok",
        "tool use",
        "higher",
        "the tool-use expectations met",
        tables=("discipline",),
        read=lambda score, _: _rate(score.tools_ok),
    ),
    Metric(
        "rubric_pass",
        "rubric PASS",
        "higher",
        "runs whose rubric is PASS on every dimension",
        tables=("answers",),
        read=lambda score, _: float(score.verdict == "PASS"),
    ),
    Metric(
        "tool_calls",
        "tools/run",
        "neither",
        "tool calls per run",
        read=lambda _, transcript: float(len(transcript.tool_calls)),
    ),
    Metric(
        "output_tokens",
        "out tokens",
        "lower",
        "output tokens per run",
        read=lambda _, transcript: _output_tokens(transcript),
    ),
    MET,
)

# The harness rubric: five dimensions graded PASS / PARTIAL / FAIL per run, the worst wins.
RUBRIC_DIMENSIONS: tuple[str, ...] = ("Accuracy", "Grounding", "Completeness", "Language", "Format")
GRADES: tuple[str, ...] = ("PASS", "PARTIAL", "FAIL")
# the rubric's columns in records, rows and tables: each dimension, then the overall grade
RUBRIC_COLUMNS: tuple[str, ...] = (*(name.lower() for name in RUBRIC_DIMENSIONS), "overall")

EVIDENCE_RECALL = Metric(
    "evidence_recall",
    "evidence R@5",
    "higher",
    "layer C: recall@5 of the frozen evidence itself",
)


def case_metric_names(metrics: tuple[Metric, ...]) -> tuple[str, ...]:
    """The per-run metrics, averaged per case then over cases, in declaration order."""
    return tuple(metric.name for metric in metrics if metric.per_run)


def layer_case_metrics(info: LayerInfo) -> tuple[str, ...]:
    """A layer's per-run metrics, averaged per case: a retrieval layer's or an answer
    layer's, and the recall of the evidence its records carry where it has one."""
    declared = case_metric_names(ANSWER_METRICS if info.chat else RETRIEVAL_METRICS)
    return (*declared, *((info.evidence_metric,) if info.evidence_metric else ()))


def columns(metrics: tuple[Metric, ...], table: Table) -> tuple[tuple[str, str], ...]:
    """(name, label) of the metrics shown in ``table``, in declaration order."""
    return tuple((metric.name, metric.label) for metric in metrics if table in metric.tables)


def answer_values(score: AnswerScore, transcript: Transcript) -> dict[str, float | None]:
    """One layer-B run's metric values, read as the declarations say."""
    return {
        metric.name: metric.read(score, transcript)
        for metric in ANSWER_METRICS
        if metric.read is not None
    }
