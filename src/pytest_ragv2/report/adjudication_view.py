"""report.html's adjudication section: which verdicts are human, by whom, why, and the
verdict before and after (the page places it right after the banner)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from pytest_ragv2.gold.adjudication import ADJUDICATIONS_FILE
from pytest_ragv2.report.adjudication import adjudication_found
from pytest_ragv2.report.safe_text import html_escape

if TYPE_CHECKING:
    from pytest_ragv2.report.model import Summary


def adjudication_html(summary: Summary) -> str:
    """report.html's adjudication section (escaped; empty without an adjudications file)."""
    found = adjudication_found(summary)
    if found is None:
        return ""
    e = html_escape
    before, after = str(found["verdict_before"]).upper(), str(found["verdict_after"]).upper()
    parts = [
        '<section class="adjudication" id="adjudication"><h2>Adjudication</h2>',
        f"<p>Human rulings from <code>{e(str(found.get('file') or ADJUDICATIONS_FILE))}</code>:"
        f" {found['entries_applied']} of {len(found['entries'])} entries applied to "
        f"{found['runs_adjudicated']} runs. <strong>Verdict without adjudication: {e(before)};"
        f" with it: {e(after)}.</strong></p>",
    ]
    if found.get("gates_changed"):
        parts.append(
            "<table><thead><tr><th>gate</th><th>before</th><th>after</th><th>reason after</th>"
            "</tr></thead><tbody>"
        )
        parts += [
            f"<tr><td>{e(str(g['name']))}</td><td>{e(str(g['before']))}</td>"
            f"<td>{e(str(g['after']))}</td><td>{e(str(g['reason_after']))}</td></tr>"
            for g in found["gates_changed"]
        ]
        parts.append("</tbody></table>")
    if found.get("gate_values_changed"):
        moved = ", ".join(str(name) for name in found["gate_values_changed"])
        parts.append(f"<p>Gate values changed, decisions the same: {e(moved)}.</p>")
    if found["entries"]:
        parts.append(
            "<table><thead><tr><th>case</th><th>scope</th><th>ruling</th><th>runs</th>"
            "<th>reviewer</th><th>date</th><th>note</th></tr></thead><tbody>"
        )
        for entry in found["entries"]:
            parts.append(
                f"<tr><td>{e(str(entry['case']))}</td><td>{e(str(entry['scope']))}</td>"
                f"<td>{e(str(entry['ruling']))}</td><td>{_runs(entry)}</td>"
                f"<td>{e(str(entry['reviewer']))}</td><td>{e(str(entry['date']))}</td>"
                f"<td>{e(str(entry['note']))}</td></tr>"
            )
        parts.append("</tbody></table>")
    items = [
        f"<li>Disputed gold: <strong>{e(str(case['case']))}</strong>, {case['runs_left_out']}"
        f" run(s) left out of the comparisons (by {e(str(case['reviewer']))} on "
        f"{e(str(case['date']))}: {e(str(case['note']))})</li>"
        for case in found.get("disputed_cases", [])
    ]
    items += [f"<li>Not applied: {e(str(error))}</li>" for error in found.get("errors", [])]
    if items:
        parts.append("<ul>" + "".join(items) + "</ul>")
    parts.append("</section>")
    return "".join(parts)


def _runs(entry: Mapping[str, Any]) -> str:
    """The runs an entry changed, each with its values before and after, collapsed."""
    e = html_escape
    count = int(entry.get("runs_affected", 0))
    if not count:
        return "0 (no run of this session)"
    changes = entry.get("changes", {})
    items = []
    for run in entry.get("runs", []):
        changed = changes.get(run, {})
        what = ", ".join(
            f"{name} {_value(pair[0])} → {_value(pair[1])}" for name, pair in changed.items()
        )
        items.append(f"<li>{e(str(run))}" + (f": {e(what)}" if what else "") + "</li>")
    more = entry.get("runs_more")
    if more:
        items.append(f"<li>… and {int(more)} more, all in summary.json</li>")
    return f"<details><summary>{count}</summary><ul>{''.join(items)}</ul></details>"


def _value(value: Any) -> str:
    if value is None:
        return "n/a"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, list):
        return ", ".join(str(item) for item in value) or "none"
    return f"{value:g}" if isinstance(value, float) else str(value)
