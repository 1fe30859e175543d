"""report.html: the run's summary as one self-contained page for reviewers.

Written from the summary alone (no per-item hooks), so it costs the session nothing per
item; pytest-html's own report, when asked for with ``--html``, gets the same tables on top.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape
from typing import TYPE_CHECKING, Any

from pytest_ragv2.gates import GateResult
from pytest_ragv2.report.tables import Table, case_table, gate_table, metric_sections

if TYPE_CHECKING:
    from pytest_ragv2.report.summary import Summary

STYLE = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 2rem; color: #1b1f24; }
h1 { font-size: 1.4rem; } h2 { font-size: 1.1rem; margin-top: 2rem; }
table { border-collapse: collapse; margin: .5rem 0; }
th, td { border: 1px solid #d0d7de; padding: .25rem .5rem; text-align: left; }
th { background: #f6f8fa; }
td.PASS { background: #dafbe1; } td.FAIL { background: #ffebe9; font-weight: 600; }
td.SKIP { background: #fff8c5; }
.verdict { font-size: 1.2rem; font-weight: 700; padding: .5rem 1rem; display: inline-block; }
.pass { background: #dafbe1; } .fail, .interrupted { background: #ffebe9; }
"""


def table_html(table: Table, decision_column: int | None = None) -> str:
    header, rows = table
    head = "".join(f"<th>{escape(cell)}</th>" for cell in header)
    body = []
    for row in rows:
        cells = []
        for index, cell in enumerate(row):
            css = f' class="{escape(cell)}"' if index == decision_column else ""
            cells.append(f"<td{css}>{escape(cell)}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def _unmet_html(runs: Sequence[Mapping[str, Any]]) -> str:
    if not runs:
        return ""
    items = []
    for run in runs:
        reasons = "".join(f"<li>{escape(str(reason))}</li>" for reason in run["reasons"])
        answer = (
            f"<blockquote>{escape(str(run['answer']))}</blockquote>" if run.get("answer") else ""
        )
        items.append(
            f"<details><summary>{escape(str(run['run']))} ({escape(str(run['role']))})"
            f"</summary><ul>{reasons}</ul>{answer}</details>"
        )
    return "<h2>Runs that did not meet their case</h2>" + "".join(items)


def _protocol_html(protocol: dict[str, Any] | None) -> list[str]:
    """The run's kind, and any protocol flag shown as a failing verdict is."""
    if not protocol:
        return []
    return [f"<p>Protocol: {escape(protocol['label'])}.</p>"] + [
        f"<p class='verdict fail'>Protocol flag: {escape(flag)}.</p>"
        for flag in protocol.get("flags", [])
    ]


def render_page(summary: Summary, gates: Sequence[GateResult]) -> str:
    verdict = summary.verdict
    details = "".join(
        f"<li><b>{escape(gate.name)}</b><ul>"
        + "".join(f"<li>{escape(detail)}</li>" for detail in gate.details)
        + "</ul></li>"
        for gate in gates
        if gate.details
    )
    parts = [
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>",
        f"<title>pytest-ragv2 {escape(summary.run_id)}</title>",
        f"<style>{STYLE}</style></head><body>",
        f"<h1>pytest-ragv2 layer {escape(summary.layer)} — run {escape(summary.run_id)}</h1>",
        f"<p class='verdict {escape(verdict)}'>Verdict: {escape(verdict.upper())} "
        f"(exit status {summary.exit_status})</p>",
        f"<p>Seed {summary.seed}; {summary.runs_recorded} runs recorded"
        + (f" of {summary.runs_expected} expected" if summary.runs_expected is not None else "")
        + f"; raw runs in <code>{escape(summary.raw_runs)}</code>.</p>",
        *_protocol_html(summary.extras.get("protocol")),
        "<h2>Gates</h2>",
        table_html(gate_table(gates), decision_column=3),
        f"<ul>{details}</ul>" if details else "",
        *(
            f"<h2>{escape(title)}</h2>{table_html(table)}"
            for title, table in metric_sections(summary)
        ),
        "<h2>Cases</h2>",
        table_html(case_table(summary.by_case, summary.layer)),
        _unmet_html(summary.unmet_runs),
        "</body></html>",
    ]
    return "\n".join(parts)
