"""A comparison of two runs (``ragv2 compare``) as the terminal, summary.md and a small
self-contained report page show it: the same sections, each a table or a line saying it is
empty. Every name from a run (a system, a case, a veto) is escaped for where it goes.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from pytest_ragv2.deciding.verdict import fmt_delta
from pytest_ragv2.report.safe_text import html_escape, printable
from pytest_ragv2.report.tables import md_text, render_markdown
from pytest_ragv2.report.text_table import Table, render_text

if TYPE_CHECKING:
    from pytest_ragv2.deciding.run_comparison import MetricDelta, RunComparison

Section = tuple[str, Table | None, str]  # title, table (None: empty), the line when empty

NAMES_SHOWN = 12  # cases of one run only, named in a table cell before "…"


def _value(value: float) -> str:
    return "—" if math.isnan(value) else f"{value:.3f}"


def _delta(value: float) -> str:
    return "—" if math.isnan(value) else fmt_delta(value)


def _interval(delta: MetricDelta) -> str:
    paired = delta.paired
    if paired.n == 0 or math.isnan(paired.low):
        return "—"
    return f"[{fmt_delta(paired.low)}, {fmt_delta(paired.high)}]"


def _p(value: float) -> str:
    return "—" if math.isnan(value) else f"{value:.3g}"


def _names(names: tuple[str, ...]) -> str:
    if not names:
        return "—"
    shown = ", ".join(names[:NAMES_SHOWN])
    return f"{len(names)}: {shown}" + (", …" if len(names) > NAMES_SHOWN else "")


def _with_layer(comparison: RunComparison, layer: str, row: list[str]) -> list[str]:
    return [layer, *row] if len(comparison.layers) > 1 else row


def _header(comparison: RunComparison, header: list[str]) -> list[str]:
    return ["layer", *header] if len(comparison.layers) > 1 else header


def headline(comparison: RunComparison) -> list[str]:
    """What is compared with what, and how."""
    layers = ",".join(comparison.layers)
    lines = [
        f"run a: {comparison.run_a} (seed {comparison.seed_a}); run b: {comparison.run_b} "
        f"(seed {comparison.seed_b}); layer {layers}",
        f"both rescored with the configuration {comparison.configuration}",
        f"Δ = b − a, paired by case (each case's mean over its runs); {comparison.confidence:.0%}"
        " BCa bootstrap interval over the paired cases, paired sign-flip permutation test of"
        " Δ ≠ 0; one interval per metric, not simultaneous",
    ]
    if comparison.systems_only_a:
        lines.append(f"systems only in run a: {', '.join(comparison.systems_only_a)}")
    if comparison.systems_only_b:
        lines.append(f"systems only in run b: {', '.join(comparison.systems_only_b)}")
    return lines


def sections(comparison: RunComparison) -> list[Section]:
    """The comparison's tables, in reading order."""
    metric_rows = [
        _with_layer(
            comparison,
            delta.layer,
            [
                delta.system,
                delta.label,
                str(delta.paired.n),
                _value(delta.mean_a),
                _value(delta.mean_b),
                _delta(delta.paired.estimate),
                _interval(delta),
                _p(delta.paired.p_two_sided),
                delta.reading,
            ],
        )
        for delta in comparison.deltas
    ]
    metrics: Table = (
        _header(
            comparison,
            [
                "system",
                "metric",
                "cases",
                "a",
                "b",
                "Δ b−a",
                f"{comparison.confidence:.0%} interval",
                "p (Δ≠0)",
                "reading",
            ],
        ),
        metric_rows,
    )
    cases: Table = (
        _header(comparison, ["system", "paired cases", "only in a", "only in b"]),
        [
            _with_layer(
                comparison,
                held.layer,
                [held.system, str(len(held.paired)), _names(held.only_a), _names(held.only_b)],
            )
            for held in comparison.cases
        ],
    )
    outcomes: Table = (
        _header(comparison, ["system", "case", "change", "met in a", "met in b"]),
        [
            _with_layer(
                comparison,
                change.layer,
                [
                    change.system,
                    change.case,
                    change.change,
                    f"{change.met_a[0]}/{change.met_a[1]} runs",
                    f"{change.met_b[0]}/{change.met_b[1]} runs",
                ],
            )
            for change in comparison.outcomes
        ],
    )
    veto_rows = [
        _with_layer(comparison, layer, [system, kind, str(in_a), str(in_b)])
        for layer, systems in comparison.veto_counts.items()
        for system, kinds in systems.items()
        for kind, (in_a, in_b) in kinds.items()
        if in_a or in_b  # a kind no run tripped in either run says nothing
    ]
    vetoes: Table = (_header(comparison, ["system", "veto", "runs in a", "runs in b"]), veto_rows)
    veto_changes: Table = (
        _header(comparison, ["system", "case", "veto", "change"]),
        [
            _with_layer(
                comparison, change.layer, [change.system, change.case, change.veto, change.change]
            )
            for change in comparison.veto_changes
        ],
    )
    return [
        ("Metrics: paired difference b − a", metrics if metric_rows else None, "no system in both"),
        ("Cases", cases if comparison.cases else None, "no system in both runs"),
        (
            "Changed outcomes",
            outcomes if comparison.outcomes else None,
            "no case changed outcome",
        ),
        ("Vetoes", vetoes if veto_rows else None, _no_veto(comparison)),
        (
            "Vetoes that appeared or went",
            veto_changes if comparison.veto_changes else None,
            "no veto appeared or went",
        ),
    ]


def _no_veto(comparison: RunComparison) -> str:
    if any(comparison.veto_counts.values()):
        return "no run tripped a veto in either run"
    return "no veto recorded at this layer"


def comparison_lines(comparison: RunComparison, width: int | None = None) -> list[str]:
    """The comparison as terminal lines."""
    lines = [printable(line) for line in headline(comparison)]
    for title, table, empty in sections(comparison):
        lines.append("")
        if table is None:
            lines.append(f"{title}: {empty}")
            continue
        lines.append(f"{title}:")
        header, rows = table
        safe: Table = (header, [[printable(cell) for cell in row] for row in rows])
        lines.extend(render_text(safe, width=width))
    return lines


def comparison_markdown(comparison: RunComparison) -> str:
    """summary.md of a comparison."""
    lines = [
        f"# Comparison: {md_text(comparison.run_a)} → {md_text(comparison.run_b)}",
        "",
        *(f"- {md_text(line)}" for line in headline(comparison)),
    ]
    for title, table, empty in sections(comparison):
        lines += ["", f"## {md_text(title)}", ""]
        lines += render_markdown(table) if table is not None else [f"_{md_text(empty)}_"]
    return "\n".join(lines) + "\n"


_STYLE = (
    "body{font-family:system-ui,sans-serif;margin:2em;color:#222}"
    "table{border-collapse:collapse;margin:.5em 0 1.5em}"
    "th,td{border:1px solid #ccc;padding:.25em .6em;text-align:left;vertical-align:top}"
    "th{background:#f3f3f3}td.better{color:#176a2c}td.worse{color:#a11}"
)


def _html_table(table: Table) -> list[str]:
    header, rows = table
    reading = header.index("reading") if "reading" in header else -1
    lines = ["<table>", "<tr>" + "".join(f"<th>{html_escape(cell)}</th>" for cell in header)]
    for row in rows:
        cells = []
        for index, cell in enumerate(row):
            kind = f' class="{html_escape(cell)}"' if index == reading else ""
            cells.append(f"<td{kind}>{html_escape(cell)}</td>")
        lines.append("<tr>" + "".join(cells) + "</tr>")
    lines.append("</table>")
    return lines


def comparison_html(comparison: RunComparison) -> str:
    """report.html of a comparison: one page, no script, no outside resource."""
    title = f"Comparison: {comparison.run_a} → {comparison.run_b}"
    lines = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{html_escape(title)}</title><style>{_STYLE}</style></head><body>",
        f"<h1>{html_escape(title)}</h1>",
        "<ul>",
        *(f"<li>{html_escape(line)}</li>" for line in headline(comparison)),
        "</ul>",
    ]
    for heading, table, empty in sections(comparison):
        lines.append(f"<h2>{html_escape(heading)}</h2>")
        lines += _html_table(table) if table is not None else [f"<p>{html_escape(empty)}</p>"]
    lines.append("</body></html>")
    return "\n".join(lines) + "\n"
