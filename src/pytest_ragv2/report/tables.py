"""The session's tables as rows of cells, rendered as plain text or Markdown.

One place decides which figures appear and how they are formatted, so the terminal, the
Markdown summary and the HTML report always agree.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from pytest_ragv2.deciding.results import Latency, SystemRow
from pytest_ragv2.deciding.verdict import GateResult, fmt_delta
from pytest_ragv2.report.excerpts import excerpt
from pytest_ragv2.report.safe_text import html_escape
from pytest_ragv2.report.text_table import Table
from pytest_ragv2.scoring.metrics import (
    ANSWER_METRICS,
    RETRIEVAL_METRICS,
    RUBRIC_COLUMNS,
    Metric,
    columns,
)

if TYPE_CHECKING:
    from pytest_ragv2.report.model import Summary


SYSTEM_COLUMNS = columns(RETRIEVAL_METRICS, "systems")


def fmt_rate(value: Any) -> str:
    return "—" if value is None else f"{float(value):.3f}"


def fmt_ms(estimate: Latency | None, *, scale: float = 1000.0, digits: int = 1) -> str:
    """A latency estimate and its interval, in ms (``scale=1, digits=2``: in seconds)."""
    if estimate is None or estimate.value is None:
        return "—"
    text = f"{estimate.value * scale:.{digits}f}"
    if estimate.low is not None and estimate.high is not None:
        text += f" [{estimate.low * scale:.{digits}f}, {estimate.high * scale:.{digits}f}]"
    return text


def fmt_s(estimate: Latency | None) -> str:
    return fmt_ms(estimate, scale=1.0, digits=2)


def system_table(systems: Mapping[str, SystemRow]) -> Table:
    header = ["system", "role", "runs", "errors", *(label for _, label in SYSTEM_COLUMNS)]
    header += ["p50 ms [95% CI]", "p95 ms [95% CI]", "leaks"]
    rows = []
    for name, row in systems.items():
        rows.append(
            [
                name,
                row.role or "",
                str(row.runs),
                str(row.errors),
                *(fmt_rate(_figure(row, metric)) for metric, _ in SYSTEM_COLUMNS),
                fmt_ms(row.latency_p50),
                fmt_ms(row.latency_p95),
                str(row.value("leaking_runs") or 0),
            ]
        )
    return header, rows


def breakdown_table(
    label: str,
    by_system: Mapping[str, Mapping[str, SystemRow]],
    metric: str,
    roles: Mapping[str, str] | None = None,
) -> Table:
    """One row per category (or language), one column per system, and Δ = candidate −
    baseline when both roles are present."""
    systems = list(by_system)
    roles = roles or {}
    candidate = next((name for name in systems if roles.get(name) == "candidate"), None)
    baseline = next((name for name in systems if roles.get(name) == "baseline"), None)
    names = sorted({name for rows in by_system.values() for name in rows})
    header = [label, "cases", *(f"{system} {metric}" for system in systems)]
    if candidate and baseline:
        header.append("Δ cand − base")
    rows = []
    for name in names:
        found = {system: by_system[system].get(name) for system in systems}
        values = {system: row.value(metric) if row else None for system, row in found.items()}
        cases = max(row.cases if row else 0 for row in found.values())
        row = [name, str(cases), *(fmt_rate(values[system]) for system in systems)]
        if candidate and baseline:
            cand, base = values[candidate], values[baseline]
            row.append("—" if cand is None or base is None else fmt_delta(cand - base))
        rows.append(row)
    return header, rows


def roles_of(systems: Mapping[str, SystemRow]) -> dict[str, str]:
    return {name: row.role or "" for name, row in systems.items()}


def _figure(row: SystemRow, name: str) -> Any:
    """A column's figure: the row's own (the ceiling) or a declared metric's mean."""
    return row.ceiling if name == "ceiling" else row.value(name)


def gate_table(gates: Sequence[GateResult]) -> Table:
    header = ["gate", "value", "threshold", "decision", "reason"]
    rows = []
    for gate in gates:
        value = gate.value
        shown = (
            "—" if value is None else (f"{value:.3f}" if isinstance(value, float) else str(value))
        )
        name = f"{gate.name} (hard)" if gate.hard else gate.name
        rows.append([name, shown, gate.threshold, gate.decision.upper(), gate.reason])
    return header, rows


def column_legend(header: Sequence[str], metrics: Sequence[Metric]) -> list[str]:
    """What the table's short metric labels mean (``exact``, ``dup``...), from their
    declarations: one ``label: description`` per abbreviated column."""
    shown = set(header)
    return [
        f"{metric.label}: {metric.description}"
        + (" (lower is better)" if metric.direction == "lower" else "")
        for metric in metrics
        if metric.label in shown and (metric.label != metric.name or metric.name == "met")
    ]


# what Markdown (and the HTML a Markdown viewer renders) would act on in a cell
_MARKDOWN_ACTIVE = re.compile(r"([\\`*_\[\]|~#!])")
_LAYOUT = re.compile("[\t\n\r]")


def md_text(text: str) -> str:
    """Text from a system, a case file or the configuration as Markdown shows it, inert:
    HTML escaped (no live ``<img onerror>``), Markdown's active characters backslashed,
    line breaks and tabs flattened to spaces, every other control or bidirectional
    character shown as its escape (``\\u202e``)."""
    flat = html_escape(_LAYOUT.sub(" ", text), quote=False)
    return _MARKDOWN_ACTIVE.sub(r"\\\1", flat)


def render_markdown(table: Table) -> list[str]:
    header, rows = table

    def line(cells: Sequence[str]) -> str:
        return "| " + " | ".join(md_text(cell) for cell in cells) + " |"

    return [line(header), line(["---"] * len(header)), *(line(row) for row in rows)]


def case_table(summary: Summary) -> Table:
    """One row per case, every system side by side: the layer's case table."""
    from pytest_ragv2.layers.protocol import load_layer

    return load_layer(summary.layer).case_table(summary)


def retrieval_case_table(
    by_case: Mapping[str, Mapping[str, SystemRow]], recall_k: int = 5
) -> Table:
    """Layer A: runs met, recall@k and MRR of every system side by side."""
    systems = list(by_case)
    cases = sorted({case for rows in by_case.values() for case in rows})
    header = ["case"]
    for system in systems:
        header += [f"{system} met", f"{system} R@{recall_k}", f"{system} MRR"]
    rows = []
    for case in cases:
        row = [case]
        for system in systems:
            data = by_case[system].get(case)
            if data is None:
                row += ["—", "—", "—"]
                continue
            met = data.value("met")
            met_runs = "—" if met is None else f"{round(met * data.runs)}/{data.runs}"
            recall = data.value(f"recall@{recall_k}")
            row += [met_runs, fmt_rate(recall), fmt_rate(data.value("mrr"))]
        rows.append(row)
    return header, rows


def metric_sections(summary: Summary) -> list[tuple[str, Table]]:
    """The metric tables every report shows, titled, in order (gates are shown apart): the
    sections of the summary's layer, then those a ``pytest_ragv2_summary`` hook added."""
    from pytest_ragv2.layers.protocol import load_layer

    own = [(s.title, (list(s.header), [list(row) for row in s.rows])) for s in summary.sections]
    return [*load_layer(summary.layer).sections(summary), *own]


def retrieval_sections(summary: Summary) -> list[tuple[str, Table]]:
    """Layer A's tables: systems, recall by category and language, the attainable ceiling."""
    roles = roles_of(summary.systems)
    recall = summary.headline_metric
    return [
        (
            "Systems (rates are means of per-case means; latency over runs, 95 % bootstrap CI)",
            system_table(summary.systems),
        ),
        (
            f"Recall@{summary.recall_k} by category",
            breakdown_table("category", summary.by_category, recall, roles),
        ),
        (
            f"Recall@{summary.recall_k} by language",
            breakdown_table("language", summary.by_language, recall, roles),
        ),
        *(
            [("Attainable ceiling by category", ceiling_table(summary))]
            if summary.attainable
            else []
        ),
    ]


def ceiling_table(summary: Summary) -> Table:
    """Recall@k beside the attainable ceiling (a perfect ranker over what the system
    stores), per category and system: a low ceiling is a loader or gold problem, a recall
    far under its ceiling a ranking problem."""
    attainable = summary.attainable or {}
    systems = list(attainable)
    categories = sorted({c for found in attainable.values() for c in found.by_category})
    header = ["category", *(f"{name} R@{summary.recall_k} / ceiling" for name in systems)]
    rows = []
    for category in [*categories, "all"]:
        cells = [category]
        for name in systems:
            if category == "all":
                row = summary.systems.get(name)
                limit = attainable[name].value
            else:
                row = summary.by_category.get(name, {}).get(category)
                limit = attainable[name].by_category.get(category)
            recall = row.value(summary.headline_metric) if row is not None else None
            cells.append(f"{fmt_rate(recall)} / {fmt_rate(limit)}")
        rows.append(cells)
    return header, rows


ANSWER_COLUMNS = columns(ANSWER_METRICS, "answers")
DISCIPLINE_COLUMNS = columns(ANSWER_METRICS, "discipline")


def answer_system_table(systems: Mapping[str, SystemRow]) -> Table:
    header = ["system", "role", "runs", "skipped", "errors", "vetoed"]
    header += [label for _, label in ANSWER_COLUMNS]
    header += ["p50 s [95% CI]", "p95 s [95% CI]"]
    rows = []
    for name, row in systems.items():
        rows.append(
            [
                name,
                row.role or "",
                str(row.runs),
                str(row.skipped),
                str(row.errors),
                str(row.value("vetoed_runs") or 0),
                *(fmt_rate(row.value(metric)) for metric, _ in ANSWER_COLUMNS),
                fmt_s(row.latency_p50),
                fmt_s(row.latency_p95),
            ]
        )
    return header, rows


def discipline_table(systems: Mapping[str, SystemRow]) -> Table:
    header = ["system", *(label for _, label in DISCIPLINE_COLUMNS)]
    rows = [
        [name, *(fmt_rate(row.value(metric)) for metric, _ in DISCIPLINE_COLUMNS)]
        for name, row in systems.items()
    ]
    return header, rows


def rubric_table(rubric: Mapping[str, Mapping[str, Mapping[str, int]]]) -> Table:
    """Per system and dimension: PASS / PARTIAL / FAIL run counts."""
    dimensions = RUBRIC_COLUMNS
    header = ["system", *dimensions]
    rows = []
    for system, counts in rubric.items():
        cells = [system]
        for dimension in dimensions:
            grades = counts.get(dimension, {})
            cells.append(
                f"{grades.get('PASS', 0)}/{grades.get('PARTIAL', 0)}/{grades.get('FAIL', 0)}"
            )
        rows.append(cells)
    return header, rows


def veto_table(vetoes: Mapping[str, Mapping[str, int]]) -> Table:
    """Per system, the runs that tripped each hard safety veto."""
    kinds = sorted({kind for counts in vetoes.values() for kind in counts})
    header = ["veto", *vetoes]
    rows = [[kind, *(str(vetoes[system].get(kind, 0)) for system in vetoes)] for kind in kinds]
    return header, rows


def answer_sections(summary: Summary) -> list[tuple[str, Table]]:
    roles = roles_of(summary.systems)
    sections = [
        (
            "Answers by system (rates are means of per-case means; latency of the whole "
            "conversation over runs, 95 % bootstrap CI)",
            answer_system_table(summary.systems),
        ),
        (
            "Discipline (share of the runs where it applies; over-refusal: lower is better)",
            discipline_table(summary.systems),
        ),
        (
            "Rubric (runs graded PASS/PARTIAL/FAIL; overall = the worst dimension)",
            rubric_table(summary.rubric or {}),
        ),
        (
            "Hard safety vetoes (runs tripping each; only the candidate's block promotion)",
            veto_table(summary.vetoes_by_system or {}),
        ),
        (
            "Consistency and cost (consistency: share of a case's repetitions giving its most "
            "frequent answer / evidence files; sizes per run)",
            consistency_table(summary.systems),
        ),
        (
            "Exact-answer accuracy by category",
            breakdown_table("category", summary.by_category, "exact_answer", roles),
        ),
        (
            "Exact-answer accuracy by language",
            breakdown_table("language", summary.by_language, "exact_answer", roles),
        ),
    ]
    if summary.judge:
        sections.append(
            ("Judge model (advisory: never decides an item or a gate)", judge_table(summary.judge))
        )
    return sections


def _fmt_count(value: Any) -> str:
    return "—" if value is None else f"{float(value):.1f}"


def consistency_table(systems: Mapping[str, SystemRow]) -> Table:
    header = [
        "system",
        "answer cons.",
        "evidence cons.",
        "timeouts",
        "tool errors",
        "tool calls/run",
        "repeated searches/run",
        "input chars",
        "evidence chars",
        "output chars",
        "tokens in",
        "tokens out",
    ]
    rows = []
    for name, row in systems.items():
        rows.append(
            [
                name,
                fmt_rate(row.value("answer_consistency")),
                fmt_rate(row.value("evidence_consistency")),
                str(row.value("timeouts") or 0),
                str(row.value("tool_errors") or 0),
                _fmt_count(row.value("tool_calls_per_run")),
                _fmt_count(row.value("repeated_searches_per_run")),
                _fmt_count(row.value("input_chars_per_run")),
                _fmt_count(row.value("evidence_chars_per_run")),
                _fmt_count(row.value("output_chars_per_run")),
                _fmt_count(row.value("input_tokens_per_run")),
                _fmt_count(row.value("output_tokens_per_run")),
            ]
        )
    return header, rows


def judge_table(judge: Mapping[str, Mapping[str, int]]) -> Table:
    columns = ("PASS", "PARTIAL", "FAIL", "no grade", "agrees with rubric")
    header = ["system", *columns]
    rows = [[system, *(str(counts.get(c, 0)) for c in columns)] for system, counts in judge.items()]
    return header, rows


def answer_case_table(by_case: Mapping[str, Mapping[str, SystemRow]]) -> Table:
    systems = list(by_case)
    cases = sorted({case for rows in by_case.values() for case in rows})
    header = ["case"]
    for system in systems:
        header += [
            f"{system} correct",
            f"{system} met",
            f"{system} same answer",
            f"{system} tools/run",
        ]
    rows = []
    for case in cases:
        row = [case]
        for system in systems:
            data = by_case[system].get(case)
            if data is None or not data.runs:
                row += ["—", "—", "—", "—"]
                continue
            runs = data.runs
            exact, met = data.value("exact_answer"), data.value("met")
            row += [
                "—" if exact is None else f"{round(exact * runs)}/{runs}",
                "—" if met is None else f"{round(met * runs)}/{runs}",
                fmt_rate(data.value("answer_consistency")),
                fmt_rate(data.value("tool_calls")),
            ]
        rows.append(row)
    return header, rows


def found_and_answered_table(by_case: Mapping[str, Mapping[str, SystemRow]]) -> Table:
    """Layer C, one row per case: the recall@5 of the frozen evidence (the same for every
    answer model) and each model's correct runs, with the diagnosis the pair gives."""
    systems = list(by_case)
    cases = sorted({case for rows in by_case.values() for case in rows})
    header = ["case", "evidence R@5", *(f"{system} correct" for system in systems), "reading"]
    rows = []
    for case in cases:
        found = next(
            (
                rows[case].value("evidence_recall")
                for rows in by_case.values()
                if case in rows and rows[case].value("evidence_recall") is not None
            ),
            None,
        )
        row = [case, fmt_rate(found)]
        shares = []
        for system in systems:
            data = by_case[system].get(case)
            exact = data.value("exact_answer") if data and data.runs else None
            if exact is None:
                row.append("—")
                continue
            runs = data.runs if data else 0
            shares.append(exact)
            row.append(f"{round(exact * runs)}/{runs}")
        row.append(_reading(found, shares))
        rows.append(row)
    return header, rows


def _reading(found: float | None, shares: Sequence[float]) -> str:
    if found is None or not shares:
        return ""
    if found < 1.0:
        return "answered beyond the evidence?" if max(shares) == 1.0 else "retrieval missed some"
    if max(shares) == 0.0:
        return "retrieval found it, every model lost it"
    if min(shares) < 1.0:
        return "retrieval found it, some answers lost it"
    return ""


REASON_CHARS = 200  # a diagnosis' reason in a table (summary.json holds it whole)


def diagnosis_sections(summary: Summary) -> list[tuple[str, Table]]:
    """The failure diagnosis (:mod:`pytest_ragv2.deciding.diagnosis`, ``summary.diagnosis``):
    cases per diagnosis and system, then every case a system did not get right, with the
    diagnosis and its reason; nothing when the summary holds none."""
    from pytest_ragv2.deciding.diagnosis import DIAGNOSES, OK

    diagnosis = summary.diagnosis
    if diagnosis is None or not diagnosis.subjects:
        return []
    counts = diagnosis.counts()
    subjects = list(counts)
    header = ["diagnosis", *subjects]
    rows = [
        [name, *(str(counts[subject].get(name, 0)) for subject in subjects)]
        for name in DIAGNOSES
        if any(counts[subject].get(name, 0) for subject in subjects)
    ]
    failing = [
        [entry.case, entry.subject, entry.diagnosis, excerpt(entry.reason, REASON_CHARS)]
        for entry in sorted(diagnosis.entries, key=lambda e: e.case)  # stable: subject order
        if entry.diagnosis != OK
    ]
    return [
        (
            "Diagnosis: cases per diagnosis and system (the most likely failing layer; "
            "rules in docs/diagnosis.md)",
            (header, rows),
        ),
        (
            "Diagnosis per case (every case a system did not get right)",
            (["case", "system", "diagnosis", "reason"], failing),
        ),
    ]


def quality_sections(summary: Summary) -> list[tuple[str, Table]]:
    """The weighted quality score (:mod:`pytest_ragv2.deciding.quality_score`,
    ``summary.quality_score``) per system, behind its hard vetoes: the vetoes, the score
    (``VETO`` when any tripped), then each area's value and renormalised weight; nothing
    when the summary holds none."""
    from pytest_ragv2.deciding.quality_score import AREA_LABELS, AREAS

    scores = summary.quality_score
    if scores is None or not scores.systems:
        return []
    names = [score.system for score in scores.systems]
    rows = [
        ["hard vetoes", *(", ".join(score.vetoes) or "none" for score in scores.systems)],
        ["weighted score", *(score.shown for score in scores.systems)],
    ]
    for area in AREAS:
        cells = []
        for score in scores.systems:
            component = score.component(area)
            if component.value is None:
                cells.append("not measured")
            else:
                cells.append(f"{component.value:.3f} (weight {component.effective_weight:.2f})")
        first = scores.systems[0].component(area)
        rows.append([f"{AREA_LABELS[area]} ({first.weight:g})", *cells])
    return [
        (
            "Weighted quality score (behind the hard vetoes; decides no gate; "
            "docs/quality-score.md)",
            (["", *names], rows),
        )
    ]
