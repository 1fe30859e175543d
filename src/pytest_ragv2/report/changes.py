"""report.html's "what changed" panel: where the candidate and the baseline part ways.

A system *meets* a case when every run of it on the case met it (skipped runs aside) and
it has at least one such run; it *does not* when one of them did not (unmet or error). A
case where either has no run that counts is in neither list. The vetoes are compared by
kind per case: a kind the candidate tripped on a case and the baseline did not there is
the candidate's, and the reverse. Every case is counted, whether it has a panel or not.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Container, Sequence
from dataclasses import dataclass, field

from pytest_ragv2.deciding.records import ChatRecord, RunRecord
from pytest_ragv2.report.case_html import _link
from pytest_ragv2.report.case_view import outcome_of
from pytest_ragv2.report.excerpts import ELLIPSIS
from pytest_ragv2.report.safe_text import html_escape as escape

CASES_LINKED = 100  # per list; the rest are counted


@dataclass(slots=True)
class Changes:
    candidate: str
    baseline: str
    gained: list[str] = field(default_factory=list)  # the candidate meets, the baseline not
    lost: list[str] = field(default_factory=list)  # the baseline meets, the candidate not
    new_vetoes: dict[str, list[str]] = field(default_factory=dict)  # case: kinds
    gone_vetoes: dict[str, list[str]] = field(default_factory=dict)


def _first_with_role(records: Sequence[RunRecord], role: str) -> str | None:
    return next((record.key.system for record in records if record.role == role), None)


def changes(records: Sequence[RunRecord]) -> Changes | None:
    """The differences between the first candidate and the first baseline; None without
    both."""
    candidate = _first_with_role(records, "candidate")
    baseline = _first_with_role(records, "baseline")
    if candidate is None or baseline is None:
        return None
    outcomes: dict[tuple[str, str], set[str]] = defaultdict(set)
    vetoes: dict[tuple[str, str], set[str]] = defaultdict(set)
    for record in records:
        system = record.key.system
        if system not in (candidate, baseline):
            continue
        outcome = outcome_of(record)
        if outcome != "skipped":
            outcomes[(record.key.case, system)].add(outcome)
        if isinstance(record, ChatRecord):
            vetoes[(record.key.case, system)].update(veto.kind for veto in record.vetoes)
    found = Changes(candidate, baseline)
    for case in sorted({record.key.case for record in records}):
        ours, theirs = outcomes.get((case, candidate)), outcomes.get((case, baseline))
        if ours and theirs:
            if ours == {"met"} and theirs != {"met"}:
                found.gained.append(case)
            elif theirs == {"met"} and ours != {"met"}:
                found.lost.append(case)
        new = vetoes.get((case, candidate), set()) - vetoes.get((case, baseline), set())
        gone = vetoes.get((case, baseline), set()) - vetoes.get((case, candidate), set())
        if new:
            found.new_vetoes[case] = sorted(new)
        if gone:
            found.gone_vetoes[case] = sorted(gone)
    return found


def _case_items(cases: dict[str, list[str]], panels: Container[str]) -> str:
    shown = list(cases.items())[:CASES_LINKED]
    items = "".join(
        f"<li data-case='{escape(case)}'>"
        + (_link(case) if case in panels else escape(case))
        + (f" <span class='note'>({escape(', '.join(kinds))})</span>" if kinds else "")
        + "</li>"
        for case, kinds in shown
    )
    if len(cases) > len(shown):
        items += (
            f"<li class='more'>{escape(ELLIPSIS)} and {len(cases) - len(shown)} more "
            "(the case table lists every case)</li>"
        )
    return f"<ul class='changed-cases'>{items}</ul>" if items else ""


def changes_html(records: Sequence[RunRecord], panels: Container[str]) -> str:
    """The panel; empty without a candidate and a baseline. ``panels``: the cases with a
    panel on the page (the others are named, not linked)."""
    found = changes(records)
    if found is None:
        return ""
    candidate, baseline = escape(found.candidate), escape(found.baseline)
    chat = any(isinstance(record, ChatRecord) for record in records)
    rows: list[tuple[str, str, dict[str, list[str]]]] = [
        (
            "gained",
            f"Cases {candidate} (candidate) meets and {baseline} (baseline) does not",
            {case: [] for case in found.gained},
        ),
        (
            "lost",
            f"Cases {baseline} (baseline) meets and {candidate} (candidate) does not",
            {case: [] for case in found.lost},
        ),
    ]
    if chat:
        rows += [
            (
                "new-vetoes",
                f"Vetoes {candidate} (candidate) has that {baseline} (baseline) has not",
                found.new_vetoes,
            ),
            (
                "gone-vetoes",
                f"Vetoes {baseline} (baseline) has that {candidate} (candidate) has not",
                found.gone_vetoes,
            ),
        ]
    body = "".join(
        f"<tr id='changed-{name}'><th>{title}</th><td class='count'>{len(cases)}</td>"
        f"<td>{_case_items(cases, panels)}</td></tr>"
        for name, title, cases in rows
    )
    return (
        "<section id='changes'><h2>What changed</h2><p class='note'>A system meets a case when "
        "every run of it on the case met it (skipped runs aside); vetoes are compared by kind "
        "per case. Counts are over every case; the lists follow the filters below.</p>"
        f"<table class='changes'><tbody>{body}</tbody></table></section>"
    )
