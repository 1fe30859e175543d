"""What the reports say of the reviewers' rulings: the terminal's lines and summary.md's
section, read from a summary's ``adjudication``
(:func:`pytest_ragv2.deciding.adjudicate.outcome_json`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from pytest_ragv2.gold.adjudication import ADJUDICATIONS_FILE, LINE_WIDTH, TERMINAL_LINES

if TYPE_CHECKING:
    from pytest_ragv2.report.model import Summary


def adjudication_found(summary: Summary | Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The ``adjudication`` of a summary (or of its summary.json); None when it has none."""
    found = summary.get("adjudication") if isinstance(summary, Mapping) else summary.adjudication
    return found if isinstance(found, Mapping) else None


def _entry_line(entry: Mapping[str, Any]) -> str:
    runs = entry.get("runs_affected", 0)
    return (
        f"{entry['case']} {entry['scope']}: by {entry['reviewer']} on {entry['date']}: "
        f"{entry['ruling']} ({runs} run{'s' * (runs != 1)}): {entry['note']}"
    )


def adjudication_lines(summary: Summary | Mapping[str, Any]) -> list[str]:
    """The terminal's lines on the human rulings (none without an adjudications file); each
    line at most 120 characters."""
    found = adjudication_found(summary)
    if found is None:
        return []
    before, after = str(found["verdict_before"]).upper(), str(found["verdict_after"]).upper()
    reviewers = ", ".join(found.get("reviewers", [])) or "nobody"
    lines = [
        f"adjudication by {reviewers}: {found['entries_applied']} of {len(found['entries'])} "
        f"entries applied to {found['runs_adjudicated']} runs "
        f"({found.get('file') or ADJUDICATIONS_FILE})",
        f"verdict without adjudication {before}, with it {after}"
        + (" (human rulings changed it)" if before != after else ""),
    ]
    for gate in found.get("gates_changed", []):
        lines.append(
            f"  gate {gate['name']}: {gate['before']} → {gate['after']} ({gate['reason_after']})"
        )
    if found.get("gate_values_changed"):
        moved = ", ".join(found["gate_values_changed"])
        lines.append(f"  gate values changed, decisions the same: {moved}")
    entries, errors = list(found["entries"]), list(found.get("errors", []))
    lines += ["  " + _entry_line(entry) for entry in entries[:TERMINAL_LINES]]
    if len(entries) > TERMINAL_LINES:
        lines.append(f"  … and {len(entries) - TERMINAL_LINES} more entries in report.html")
    lines += [f"  not applied: {error}" for error in errors[:TERMINAL_LINES]]
    if len(errors) > TERMINAL_LINES:
        lines.append(f"  … and {len(errors) - TERMINAL_LINES} more errors (gate gold_valid)")
    from pytest_ragv2.report.excerpts import excerpt

    return [excerpt(line, LINE_WIDTH) for line in lines]


def adjudication_markdown(summary: Summary | Mapping[str, Any]) -> list[str]:
    """summary.md's Adjudication section (empty without an adjudications file)."""
    found = adjudication_found(summary)
    if found is None:
        return []
    before, after = str(found["verdict_before"]).upper(), str(found["verdict_after"]).upper()
    lines = [
        "## Adjudication",
        "",
        f"Human rulings from `{found.get('file') or ADJUDICATIONS_FILE}`: "
        f"{found['entries_applied']} of {len(found['entries'])} entries applied to "
        f"{found['runs_adjudicated']} runs. **Verdict without adjudication: {before}; "
        f"with it: {after}.**",
        "",
    ]
    if found.get("gates_changed"):
        lines += ["| gate | before | after | reason after |", "|---|---|---|---|"]
        lines += [
            f"| {gate['name']} | {gate['before']} | {gate['after']} | {_md(gate['reason_after'])} |"
            for gate in found["gates_changed"]
        ]
        lines.append("")
    if found.get("gate_values_changed"):
        moved = ", ".join(found["gate_values_changed"])
        lines += [f"Gate values changed, decisions the same: {_md(moved)}.", ""]
    if found["entries"]:
        lines += [
            "| case | scope | ruling | runs | reviewer | date | note |",
            "|---|---|---|---|---|---|---|",
        ]
        lines += [
            f"| {_md(e['case'])} | {_md(e['scope'])} | {_md(e['ruling'])} | "
            f"{e.get('runs_affected', 0)} | {_md(e['reviewer'])} | {e['date']} | "
            f"{_md(e['note'])} |"
            for e in found["entries"]
        ]
        lines.append("")
    for case in found.get("disputed_cases", []):
        lines.append(
            f"- Disputed gold: **{_md(case['case'])}**, {case['runs_left_out']} run(s) left out "
            f"of the comparisons (by {_md(case['reviewer'])} on {case['date']}: "
            f"{_md(case['note'])})"
        )
    for error in found.get("errors", []):
        lines.append(f"- Not applied: {_md(error)}")
    if found.get("disputed_cases") or found.get("errors"):
        lines.append("")
    return lines


def _md(value: Any) -> str:
    """A reviewer's text in summary.md, inert (HTML escaped, Markdown backslashed)."""
    from pytest_ragv2.report.tables import md_text

    return md_text(str(value))
