"""The session's tables as rows of cells, rendered as plain text or Markdown.

One place decides which figures appear and how they are formatted, so the terminal, the
Markdown summary and the HTML report always agree.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pytest_ragv2.gates import GateResult, fmt_delta
from pytest_ragv2.metrics import ANSWER_METRICS, RETRIEVAL_METRICS, RUBRIC_COLUMNS, columns

Table = tuple[list[str], list[list[str]]]

SYSTEM_COLUMNS = columns(RETRIEVAL_METRICS, "systems")


def fmt_rate(value: Any) -> str:
    return "—" if value is None else f"{float(value):.3f}"


def fmt_ms(estimate: Mapping[str, Any] | None, *, scale: float = 1000.0, digits: int = 1) -> str:
    """A latency estimate and its interval, in ms (``scale=1, digits=2``: in seconds)."""
    if not estimate or estimate.get("value") is None:
        return "—"
    text = f"{estimate['value'] * scale:.{digits}f}"
    if estimate.get("low") is not None and estimate.get("high") is not None:
        text += f" [{estimate['low'] * scale:.{digits}f}, {estimate['high'] * scale:.{digits}f}]"
    return text


def fmt_s(estimate: Mapping[str, Any] | None) -> str:
    return fmt_ms(estimate, scale=1.0, digits=2)


def system_table(systems: Mapping[str, Mapping[str, Any]]) -> Table:
    header = ["system", "role", "runs", "errors", *(label for _, label in SYSTEM_COLUMNS)]
    header += ["p50 ms [95% CI]", "p95 ms [95% CI]", "leaks"]
    rows = []
    for name, row in systems.items():
        rows.append(
            [
                name,
                str(row.get("role", "")),
                str(row["runs"]),
                str(row["errors"]),
                *(fmt_rate(row.get(metric)) for metric, _ in SYSTEM_COLUMNS),
                fmt_ms(row.get("latency_p50")),
                fmt_ms(row.get("latency_p95")),
                str(row["leaking_runs"]),
            ]
        )
    return header, rows


def breakdown_table(
    label: str,
    by_system: Mapping[str, Mapping[str, Mapping[str, Any]]],
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
        values = {system: by_system[system].get(name, {}).get(metric) for system in systems}
        cases = max(by_system[system].get(name, {}).get("cases", 0) for system in systems)
        row = [name, str(cases), *(fmt_rate(values[system]) for system in systems)]
        if candidate and baseline:
            cand, base = values[candidate], values[baseline]
            row.append("—" if cand is None or base is None else fmt_delta(cand - base))
        rows.append(row)
    return header, rows


def roles_of(systems: Mapping[str, Mapping[str, Any]]) -> dict[str, str]:
    return {name: str(row.get("role", "")) for name, row in systems.items()}


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


def render_text(table: Table, indent: str = "  ") -> list[str]:
    header, rows = table
    widths = [max(len(cell) for cell in column) for column in zip(header, *rows, strict=True)]
    lines = [
        indent + "  ".join(cell.ljust(width) for cell, width in zip(header, widths, strict=True))
    ]
    lines.append(indent + "  ".join("-" * width for width in widths))
    for row in rows:
        lines.append(
            indent + "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True))
        )
    return [line.rstrip() for line in lines]


def render_markdown(table: Table) -> list[str]:
    header, rows = table

    def line(cells: Sequence[str]) -> str:
        return "| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |"

    return [line(header), line(["---"] * len(header)), *(line(row) for row in rows)]


def case_table(by_case: Mapping[str, Mapping[str, Mapping[str, Any]]], layer: str = "A") -> Table:
    """One row per case, every system side by side: the layer's case table."""
    from pytest_ragv2.layer_registry import load_layer

    return load_layer(layer).case_table(by_case)


def retrieval_case_table(by_case: Mapping[str, Mapping[str, Mapping[str, Any]]]) -> Table:
    """Layer A: runs met, recall@5 and MRR of every system side by side."""
    systems = list(by_case)
    cases = sorted({case for rows in by_case.values() for case in rows})
    header = ["case"]
    for system in systems:
        header += [f"{system} met", f"{system} R@5", f"{system} MRR"]
    rows = []
    for case in cases:
        row = [case]
        for system in systems:
            data = by_case[system].get(case)
            if data is None:
                row += ["—", "—", "—"]
                continue
            met = data.get("met")
            met_runs = "—" if met is None else f"{round(met * data['runs'])}/{data['runs']}"
            row += [met_runs, fmt_rate(data.get("recall@5")), fmt_rate(data.get("mrr"))]
        rows.append(row)
    return header, rows


def metric_sections(summary: Mapping[str, Any]) -> list[tuple[str, Table]]:
    """The metric tables every report shows, titled, in order (gates are shown apart): the
    sections of the summary's layer."""
    from pytest_ragv2.layer_registry import load_layer

    return load_layer(str(summary.get("layer", "A"))).sections(summary)


def retrieval_sections(summary: Mapping[str, Any]) -> list[tuple[str, Table]]:
    """Layer A's tables: systems, recall by category and language, the attainable ceiling."""
    roles = roles_of(summary["systems"])
    return [
        (
            "Systems (rates are means of per-case means; latency over runs, 95 % bootstrap CI)",
            system_table(summary["systems"]),
        ),
        (
            "Recall@5 by category",
            breakdown_table("category", summary["by_category"], "recall@5", roles),
        ),
        (
            "Recall@5 by language",
            breakdown_table("language", summary["by_language"], "recall@5", roles),
        ),
        *(
            [("Attainable ceiling by category", ceiling_table(summary))]
            if summary.get("attainable")
            else []
        ),
    ]


def ceiling_table(summary: Mapping[str, Any]) -> Table:
    """Recall@5 beside the attainable ceiling (a perfect ranker over what the system
    stores), per category and system: a low ceiling is a loader or gold problem, a recall
    far under its ceiling a ranking problem."""
    attainable: Mapping[str, Mapping[str, Any]] = summary["attainable"]
    systems = list(attainable)
    categories = sorted({c for found in attainable.values() for c in found["by_category"]})
    header = ["category", *(f"{name} R@5 / ceiling" for name in systems)]
    rows = []
    for category in [*categories, "all"]:
        cells = [category]
        for name in systems:
            if category == "all":
                recall = summary["systems"].get(name, {}).get("recall@5")
                limit = attainable[name]["ceiling"]
            else:
                recall = summary["by_category"].get(name, {}).get(category, {}).get("recall@5")
                limit = attainable[name]["by_category"].get(category)
            cells.append(f"{fmt_rate(recall)} / {fmt_rate(limit)}")
        rows.append(cells)
    return header, rows


ANSWER_COLUMNS = columns(ANSWER_METRICS, "answers")
DISCIPLINE_COLUMNS = columns(ANSWER_METRICS, "discipline")


def answer_system_table(systems: Mapping[str, Mapping[str, Any]]) -> Table:
    header = ["system", "role", "runs", "skipped", "errors", "vetoed"]
    header += [label for _, label in ANSWER_COLUMNS]
    header += ["p50 s [95% CI]", "p95 s [95% CI]"]
    rows = []
    for name, row in systems.items():
        rows.append(
            [
                name,
                str(row.get("role", "")),
                str(row["runs"]),
                str(row.get("skipped", 0)),
                str(row["errors"]),
                str(row.get("vetoed_runs", 0)),
                *(fmt_rate(row.get(metric)) for metric, _ in ANSWER_COLUMNS),
                fmt_s(row.get("latency_p50")),
                fmt_s(row.get("latency_p95")),
            ]
        )
    return header, rows


def discipline_table(systems: Mapping[str, Mapping[str, Any]]) -> Table:
    header = ["system", *(label for _, label in DISCIPLINE_COLUMNS)]
    rows = [
        [name, *(fmt_rate(row.get(metric)) for metric, _ in DISCIPLINE_COLUMNS)]
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


def answer_sections(summary: Mapping[str, Any]) -> list[tuple[str, Table]]:
    roles = roles_of(summary["systems"])
    sections = [
        (
            "Answers by system (rates are means of per-case means; latency of the whole "
            "conversation over runs, 95 % bootstrap CI)",
            answer_system_table(summary["systems"]),
        ),
        (
            "Discipline (share of the runs where it applies; over-refusal: lower is better)",
            discipline_table(summary["systems"]),
        ),
        (
            "Rubric (runs graded PASS/PARTIAL/FAIL; overall = the worst dimension)",
            rubric_table(summary.get("rubric", {})),
        ),
        (
            "Hard safety vetoes (runs tripping each; only the candidate's block promotion)",
            veto_table(summary.get("vetoes_by_system", {})),
        ),
        (
            "Consistency and cost (consistency: share of a case's repetitions giving its most "
            "frequent answer / evidence files; sizes per run)",
            consistency_table(summary["systems"]),
        ),
        (
            "Exact-answer accuracy by category",
            breakdown_table("category", summary["by_category"], "exact_answer", roles),
        ),
        (
            "Exact-answer accuracy by language",
            breakdown_table("language", summary["by_language"], "exact_answer", roles),
        ),
    ]
    if summary.get("judge"):
        sections.append(
            (
                "Judge model (advisory: never decides an item or a gate)",
                judge_table(summary["judge"]),
            )
        )
    return sections


def _fmt_count(value: Any) -> str:
    return "—" if value is None else f"{float(value):.1f}"


def consistency_table(systems: Mapping[str, Mapping[str, Any]]) -> Table:
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
                fmt_rate(row.get("answer_consistency")),
                fmt_rate(row.get("evidence_consistency")),
                str(row.get("timeouts", 0)),
                str(row.get("tool_errors", 0)),
                _fmt_count(row.get("tool_calls_per_run")),
                _fmt_count(row.get("repeated_searches_per_run")),
                _fmt_count(row.get("input_chars_per_run")),
                _fmt_count(row.get("evidence_chars_per_run")),
                _fmt_count(row.get("output_chars_per_run")),
                _fmt_count(row.get("input_tokens_per_run")),
                _fmt_count(row.get("output_tokens_per_run")),
            ]
        )
    return header, rows


def judge_table(judge: Mapping[str, Mapping[str, int]]) -> Table:
    columns = ("PASS", "PARTIAL", "FAIL", "no grade", "agrees with rubric")
    header = ["system", *columns]
    rows = [[system, *(str(counts.get(c, 0)) for c in columns)] for system, counts in judge.items()]
    return header, rows


def answer_case_table(by_case: Mapping[str, Mapping[str, Mapping[str, Any]]]) -> Table:
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
            if data is None or not data.get("runs"):
                row += ["—", "—", "—", "—"]
                continue
            runs = data["runs"]
            exact, met = data.get("exact_answer"), data.get("met")
            row += [
                "—" if exact is None else f"{round(exact * runs)}/{runs}",
                "—" if met is None else f"{round(met * runs)}/{runs}",
                fmt_rate(data.get("answer_consistency")),
                fmt_rate(data.get("tool_calls")),
            ]
        rows.append(row)
    return header, rows


def found_and_answered_table(by_case: Mapping[str, Mapping[str, Mapping[str, Any]]]) -> Table:
    """Layer C, one row per case: the recall@5 of the frozen evidence (the same for every
    answer model) and each model's correct runs, with the diagnosis the pair gives."""
    systems = list(by_case)
    cases = sorted({case for rows in by_case.values() for case in rows})
    header = ["case", "evidence R@5", *(f"{system} correct" for system in systems), "reading"]
    rows = []
    for case in cases:
        found = next(
            (
                rows[case]["evidence_recall"]
                for rows in by_case.values()
                if case in rows and rows[case].get("evidence_recall") is not None
            ),
            None,
        )
        row = [case, fmt_rate(found)]
        shares = []
        for system in systems:
            data = by_case[system].get(case)
            exact = data.get("exact_answer") if data and data.get("runs") else None
            if exact is None:
                row.append("—")
                continue
            runs = data["runs"] if data else 0
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
