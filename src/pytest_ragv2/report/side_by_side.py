"""A case's baseline, candidate and reference side by side, the parts that differ marked.

One run per role is compared: the candidate's first run that did not meet the case (its
first run when every run met it), and the baseline's and reference's run of the same
language and repetition (else of the same language, else their first). Rows: outcome, the
answer (chat layers) or the first ranked items (layer A), each gold item met or missed,
the vetoes and the first reason. A row whose cells differ is marked ``differs``; a ranked
item no other column has is marked ``only-here``.
"""

from __future__ import annotations

from collections.abc import Sequence

from pytest_ragv2.report.case_view import CaseView, RunView
from pytest_ragv2.report.excerpts import excerpt
from pytest_ragv2.report.safe_text import html_escape as escape

ROLES = ("baseline", "candidate", "reference")
ITEMS_COMPARED = 5  # of a ranked list
REASON_CHARS = 240


def compared_runs(case: CaseView) -> list[RunView]:
    """The run of each role to compare, in :data:`ROLES` order (roles without a run left
    out)."""
    by_role = {role: [run for run in case.runs if run.role == role] for role in ROLES}
    candidates = by_role["candidate"]
    anchor = next((run for run in candidates if run.outcome in ("unmet", "error")), None)
    anchor = anchor or (candidates[0] if candidates else None)
    chosen: list[RunView] = []
    for role in ROLES:
        runs = by_role[role]
        if not runs:
            continue
        if anchor is None or role == "candidate":
            chosen.append(anchor if anchor is not None and role == "candidate" else runs[0])
            continue
        same = [run for run in runs if run.key.lang == anchor.key.lang]
        exact = [run for run in same if run.key.rep == anchor.key.rep]
        chosen.append((exact or same or runs)[0])
    return chosen


def _row(label: str, cells: Sequence[str], differs: bool, css: str = "") -> str:
    mark = " <span class='differs-mark' title='differs'>≠</span>" if differs else ""
    classes = " ".join(filter(None, (css, "differs" if differs else "")))
    attr = f" class='{classes}'" if classes else ""
    return (
        f"<tr{attr}><th>{escape(label)}{mark}</th>"
        + "".join(f"<td>{cell}</td>" for cell in cells)
        + "</tr>"
    )


def _items_cell(run: RunView, others: set[str]) -> str:
    listed = run.retrieved
    if listed is None:
        return "<span class='note'>—</span>"
    rows = []
    for item in listed.items[:ITEMS_COMPARED]:
        classes = ["gold-hit"] if item.level is not None else []
        if item.where not in others:
            classes.append("only-here")
        attrs = f" class='{' '.join(classes)}'" if classes else ""
        attrs += f" data-level='{escape(item.level)}'" if item.level is not None else ""
        rows.append(f"<li{attrs}><span class='where'>{escape(item.where)}</span></li>")
    if not rows:
        return "<span class='note'>nothing returned</span>"
    return f"<ol class='topk'>{''.join(rows)}</ol>"


def side_by_side_html(case: CaseView) -> str:
    runs = compared_runs(case)
    if len(runs) < 2:
        return ""
    head = "".join(
        f"<th data-role='{escape(run.role)}'>{escape(run.role)}: {escape(run.key.system)}"
        f" <span class='note'>{escape(run.key.lang)} r{run.key.rep}</span></th>"
        for run in runs
    )
    rows = [
        _row(
            "outcome",
            [f"<span class='badge {escape(r.outcome)}'>{escape(r.outcome)}</span>" for r in runs],
            len({run.outcome for run in runs}) > 1,
        )
    ]
    if any(run.answer is not None for run in runs):
        answers = [run.answer for run in runs]
        rows.append(
            _row(
                "answer",
                [
                    f"<pre class='answer'>{escape(answer)}</pre>"
                    if answer is not None
                    else "<span class='note'>—</span>"
                    for answer in answers
                ],
                len({" ".join((answer or "").split()) for answer in answers}) > 1,
                "answer-row",
            )
        )
    if any(run.retrieved is not None for run in runs):
        tops = [
            [item.where for item in (run.retrieved.items if run.retrieved else ())][:ITEMS_COMPARED]
            for run in runs
        ]
        cells = []
        for index, run in enumerate(runs):
            others = {where for other, top in enumerate(tops) if other != index for where in top}
            cells.append(_items_cell(run, others))
        rows.append(_row("top items", cells, len({tuple(top) for top in tops}) > 1, "items-row"))
    marks: dict[tuple[str, str], list[bool | None]] = {}
    for index, run in enumerate(runs):
        for mark in run.gold:
            marks.setdefault((mark.kind, mark.text), [None] * len(runs))[index] = mark.met
    for (kind, text), met in marks.items():
        words = ("not made", "made") if kind == "forbidden claim" else ("met", "missed")
        cells = [
            "<span class='note'>—</span>"
            if value is None
            else f"<span class='{'side-met' if value else 'side-missed'}'>"
            f"{words[0] if value else words[1]}</span>"
            for value in met
        ]
        rows.append(_row(f"{kind}: {text}", cells, len(set(met)) > 1, "gold-row"))
    if any(run.vetoes for run in runs):
        kinds = [sorted({veto.split(":", 1)[0] for veto in run.vetoes}) for run in runs]
        rows.append(
            _row(
                "vetoes",
                [
                    "<ul class='vetoes'>"
                    + "".join(f"<li class='side-veto'>{escape(v)}</li>" for v in run.vetoes)
                    + "</ul>"
                    if run.vetoes
                    else "<span class='note'>none</span>"
                    for run in runs
                ],
                len({tuple(kind) for kind in kinds}) > 1,
                "vetoes-row",
            )
        )
    reasons = [excerpt(run.reasons[0], REASON_CHARS) if run.reasons else "" for run in runs]
    if any(reasons):
        rows.append(
            _row("first reason", [escape(reason) for reason in reasons], len(set(reasons)) > 1)
        )
    return (
        "<div class='side-by-side'><p><b>Side by side</b> <span class='note'>(rows marked ≠ "
        "differ; items marked ◆ are in no other column)</span></p>"
        f"<table class='side-by-side'><thead><tr><th></th>{head}</tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table></div>"
    )
