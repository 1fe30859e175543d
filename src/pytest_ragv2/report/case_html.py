"""report.html's case panels: each case with its runs (candidate first), each run with its
turns, the items it retrieved or cited and the gold they met, its reasons and its raw run's
place on disk.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence

from pytest_ragv2.report.case_data import GOLD_SLOT, RUN_SLOT, SIDE_SLOT, CaseData
from pytest_ragv2.report.case_view import (
    OUTCOMES,
    CaseView,
    GoldMark,
    ItemList,
    RunView,
    TurnView,
)
from pytest_ragv2.report.excerpts import ELLIPSIS, capped_note, excerpt
from pytest_ragv2.report.safe_text import html_escape as escape
from pytest_ragv2.report.side_by_side import side_by_side_html
from pytest_ragv2.run.keys import NOT_DECISIVE

REASONS_SHOWN = 50  # of one run's reasons
SUMMARY_REASON_CHARS = 160


def case_anchor(case_id: str) -> str:
    return f"case-{case_id}"


def _link(case_id: str, text: str | None = None) -> str:
    return f'<a href="#{escape(case_anchor(case_id))}">{escape(text or case_id)}</a>'


def _fmt(value: float | None, digits: int = 3) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def gold_marks_html(marks: Sequence[GoldMark]) -> str:
    if not marks:
        return ""
    items = []
    for mark in marks:
        css = "claim-met" if mark.met else "claim-missed"
        extra = " evidence-met" if mark.kind == "evidence" and mark.met else ""
        extra = " evidence-missed" if mark.kind == "evidence" and not mark.met else extra
        detail = f" <span class='note'>({escape(mark.detail)})</span>" if mark.detail else ""
        items.append(
            f"<li class='{css}{extra}' data-kind='{escape(mark.kind)}'>{escape(mark.kind)}: "
            f"<b>{escape(mark.text)}</b>{detail}</li>"
        )
    return f"<ul class='gold-marks'>{''.join(items)}</ul>"


LEVEL_WORDS = {
    "full": "gold: full match",
    "section": "gold: file, page and section only",
    "page": "gold: file and page only",
    "file": "gold: same file only",
}


def items_html(listed: ItemList, raw_runs: str, title: str) -> str:
    rows = []
    for item in listed.items:
        attrs = (
            f" class='gold-hit' data-level='{escape(item.level)}'" if item.level is not None else ""
        )
        level = (  # the space: pytest-html shows these without report.html's stylesheet
            f" <span class='level'>{escape(LEVEL_WORDS[item.level])}</span>"
            if item.level is not None
            else ""
        )
        score = f" <span class='note'>score {item.score:.3f}</span>" if item.score else ""
        text = f" <span class='text'>{escape(item.text)}</span>" if item.text else ""
        rows.append(
            f"<li value='{item.rank}'{attrs}><span class='where'>{escape(item.where)}</span>"
            f"{level}{score}{text}</li>"
        )
    if listed.more and rows:
        rows.append(
            f"<li class='more'>{escape(capped_note(len(listed.items), listed.total, raw_runs))}"
            "</li>"
        )
    note = ""
    if not listed.complete:
        shown = "the record's first items" if listed.items else "its items cannot be listed"
        note = f" <span class='note'>(the raw run is missing: {shown})</span>"
    empty = "<p class='note'>nothing returned</p>" if not listed.total else ""
    return (
        f"<div class='ranked'><b>{escape(title)}</b> ({listed.total} returned){note}"
        f"<ol class='topk'>{''.join(rows)}</ol>{empty}</div>"
    )


def _turn_html(turn: TurnView, turns: int, raw_runs: str) -> str:
    parts = []
    head = f"Turn {turn.number}: " if turns > 1 else ""
    parts.append(
        f"<p><b>{escape(head)}Prompt</b> ({turn.latency_s:.2f} s): "
        f"<span class='prompt'>{escape(turn.prompt)}</span></p>"
    )
    if turn.tool_calls:
        rows = "".join(
            f"<tr><td>{escape(call.name)}</td><td><code>{escape(call.arguments)}</code></td>"
            f"<td>{escape(call.status)}</td><td>{escape(call.result)}</td></tr>"
            for call in turn.tool_calls
        )
        parts.append(
            "<table class='tool-calls'><thead><tr><th>tool</th><th>arguments (the query)</th>"
            f"<th>status</th><th>result</th></tr></thead><tbody>{rows}</tbody></table>"
        )
    else:
        parts.append("<p class='note'>No tool call.</p>")
    if turn.evidence is not None:
        parts.append(items_html(turn.evidence, raw_runs, "Evidence the system retrieved"))
    if turn.citations:
        rows = "".join(
            f"<li{' class=gold-hit data-level=file' if c.gold else ''}>"
            f"<code>{escape(c.marker)}</code> → <span class='where'>{escape(c.target)}</span>"
            + (" <span class='level'>gold file</span>" if c.gold else "")
            + (f" <span class='text'>{escape(c.text)}</span>" if c.text else "")
            + "</li>"
            for c in turn.citations
        )
        parts.append(f"<p><b>Citations</b></p><ul class='citations'>{rows}</ul>")
    if turns > 1:
        parts.append(
            f"<details class='answer'><summary>Answer of turn {turn.number} "
            f"({len(turn.answer)} chars)</summary><pre class='answer'>{escape(turn.answer)}</pre>"
            "</details>"
        )
    return f"<div class='turn'>{''.join(parts)}</div>"


def reasons_html(reasons: Sequence[str]) -> str:
    if not reasons:
        return ""
    shown = reasons[:REASONS_SHOWN]
    items = "".join(f"<li>{escape(reason)}</li>" for reason in shown)
    if len(reasons) > len(shown):
        items += (
            f"<li class='more'>{escape(ELLIPSIS)} and {len(reasons) - len(shown)} more "
            "(summary.json keeps the first of them; `ragv2 rescore` lists them all)</li>"
        )
    return f"<ul class='reasons'>{items}</ul>"


def _run_summary(run: RunView, headline: str) -> str:
    key = run.key
    first = f" — {escape(excerpt(run.reasons[0], SUMMARY_REASON_CHARS))}" if run.reasons else ""
    if run.skipped:
        first = f" — skipped: {escape(run.skipped)}"
    role = f" ({escape(run.role)})" if run.role else ""
    if run.ruled_by:
        role += f" <span class='badge ruled'>ruled by {escape(', '.join(run.ruled_by))}</span>"
    # the words pytest uses: a baseline's or reference's miss decides nothing (xfailed)
    label = "XFAIL" if run.outcome == "unmet" and run.role in NOT_DECISIVE else run.outcome.upper()
    return (
        f"<summary><span class='badge {escape(run.outcome)}'>{escape(label)}"
        f"</span> <b>{escape(key.system)}</b>{role} · {escape(key.lang)} · r{key.rep} · "
        f"{run.latency_s:.2f} s · {escape(headline)} {_fmt(run.headline)}{first}</summary>"
    )


def run_body_html(run: RunView, raw_runs: str) -> str:
    """What a run's block holds under its summary line (carried in the compressed block)."""
    body: list[str] = []
    if run.skipped:
        body.append(f"<p class='skip-reason'>Skipped: {escape(run.skipped)}</p>")
    body.append(reasons_html(run.reasons))
    body.append(gold_marks_html(run.gold))
    if run.raw_missing:
        body.append(
            "<p class='note'>The raw run is missing (an interrupted session?): the query, the "
            "whole list and the whole answer are not at hand.</p>"
        )
    if run.query is not None:
        body.append(f"<p><b>Query</b>: <span class='query'>{escape(run.query)}</span></p>")
    if run.retrieved is not None:
        body.append(items_html(run.retrieved, raw_runs, "Retrieved"))
    for turn in run.turns:
        body.append(_turn_html(turn, len(run.turns), raw_runs))
    if run.answer is not None:
        whole = "whole" if run.answer_whole else "its beginning only: the raw run is missing"
        body.append(
            f"<details class='answer' open><summary>Answer ({whole}, {len(run.answer)} chars)"
            f"</summary><pre class='answer'>{escape(run.answer)}</pre></details>"
        )
    if run.vetoes:
        body.append(
            "<p><b>Vetoes</b></p><ul class='vetoes'>"
            + "".join(f"<li class='claim-missed'>{escape(v)}</li>" for v in run.vetoes)
            + "</ul>"
        )
    facts = [*((f"rubric {name}", grade) for name, grade in run.rubric)]
    facts += [(name, str(value)) for name, value in run.sizes]
    if facts:
        body.append(
            "<p class='facts'>"
            + " · ".join(f"{escape(name)}: {escape(value)}" for name, value in facts)
            + "</p>"
        )
    return "".join(body)


def run_anchor(case_id: str, index: int) -> str:
    return f"{case_anchor(case_id)}--{index}"


def _run_html(run: RunView, headline: str, open_: bool, index: int) -> str:
    """A run's block on the page: its summary line and an empty slot for its body."""
    key = run.key
    return (
        f"<details class='run' id='{escape(run_anchor(key.case, index))}' "
        f"data-system='{escape(key.system)}' "
        f"data-lang='{escape(key.lang)}' data-outcome='{escape(run.outcome)}' "
        f"data-role='{escape(run.role)}'{' open' if open_ else ''}>"
        f"{_run_summary(run, headline)}{RUN_SLOT}</details>"
    )


def search_text(case: CaseView) -> str:
    """The words the text search looks in: the case, its prompts, and every run's query,
    prompts, answer and reasons, lower-cased."""
    parts = [case.case_id, *(text for _, text in case.prompts)]
    for run in case.runs:
        parts += [run.query or "", run.answer or "", *run.reasons, run.skipped or ""]
        parts += [turn.prompt for turn in run.turns]
        parts += [turn.answer for turn in run.turns[:-1]]
    return "\n".join(part for part in parts if part).lower()


def _case_html(case: CaseView, headline: str, raw_runs: str, data: CaseData) -> str:
    """A case's panel: its summary line, empty slots for its gold and side-by-side table,
    and its runs' summary lines; what goes in the slots is added to ``data``."""
    met: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for run in case.runs:
        if run.outcome != "skipped":
            met[run.key.system][1] += 1
            met[run.key.system][0] += run.outcome == "met"
    counts = " · ".join(f"{escape(s)} {m}/{n} met" for s, (m, n) in met.items())
    skipped = sum(run.outcome == "skipped" for run in case.runs)
    if skipped:
        counts += f" · {skipped} skipped"
    delta = "" if case.delta is None else f"{case.delta:.3f}"
    shown_delta = f" · Δ {case.delta:+.3f}" if case.delta is not None else ""
    gold: list[str] = []
    if not case.known:
        gold.append("<p class='note'>This case is no longer in the catalog.</p>")
    if case.prompts:
        gold.append(
            "<p><b>Prompts</b></p><dl class='prompts'>"
            + "".join(
                f"<dt>{escape(lang)}</dt><dd>{escape(text)}</dd>" for lang, text in case.prompts
            )
            + "</dl>"
        )
    if case.claims:
        gold.append(
            "<p><b>Gold claims</b></p><ul class='gold-claims'>"
            + "".join(f"<li>{escape(kind)}: {escape(text)}</li>" for kind, text in case.claims)
            + "</ul>"
        )
    if case.known:
        evidence = "".join(f"<li>{escape(entry)}</li>" for entry in case.evidence)
        gold.append(
            f"<p><b>Gold evidence</b></p><ul class='gold-evidence'>{evidence}</ul>"
            if evidence
            else "<p class='note'>No evidence required.</p>"
        )
    # the first run of each system that missed the case is open: the reason is in view
    opened: set[str] = set()
    runs = []
    for index, run in enumerate(case.runs, start=1):
        open_ = run.outcome in ("unmet", "error") and run.key.system not in opened
        if open_:
            opened.add(run.key.system)
        runs.append(_run_html(run, headline, open_, index))
    data.add(
        case.case_id,
        "".join(gold),
        side_by_side_html(case),
        [run_body_html(run, raw_runs) for run in case.runs],
        search_text(case),
    )
    return (
        f"<details class='case-panel' id='{escape(case_anchor(case.case_id))}' "
        f"data-case='{escape(case.case_id)}' data-category='{escape(case.category)}' "
        f"data-systems='{escape(' '.join(case.systems))}' "
        f"data-langs='{escape(' '.join(case.langs))}' data-outcome='{escape(case.outcome)}' "
        f"data-delta='{delta}'><summary><b>{escape(case.case_id)}</b> · "
        f"{escape(case.category)} · <span class='badge {escape(case.outcome)}'>"
        f"{escape(case.outcome)}</span>{shown_delta} · {counts}</summary>"
        f"{GOLD_SLOT}{SIDE_SLOT}{''.join(runs)}</details>"
    )


def _cases_html(
    cases: Sequence[CaseView],
    headline: str,
    raw_runs: str,
    total: int | None = None,
    limit: int = 0,
) -> list[str]:
    """The case panels' section, in pieces (one per panel: never joined in memory);
    ``total``: the layer's cases, when only some (``limit`` at most) have a panel."""
    if not cases:
        return [
            "<section id='cases'><h2>Cases</h2><p class='note'>No run was recorded.</p></section>"
        ]
    left_out = (
        f"<p class='note'>Panels for {len(cases):,} of the {total:,} cases: every case with a "
        "run that did not meet it, then the met cases in case order up to "
        f"{limit:,}. The other met cases are in the case table above, and their "
        f"runs in {escape(raw_runs)}.</p>"
        if total is not None and total > len(cases)
        else ""
    )
    data = CaseData()
    return [
        "<section id='cases'><h2>Cases, run by run</h2>"
        f"<p class='note'>One panel per case; Δ is the candidate's {escape(headline)} minus the "
        "baseline's. Gold items are marked ✓ met, ✗ missed; ranked items matching gold evidence "
        f"are marked with the granularity they match.</p>{left_out}"
        "<noscript><p class='note'>The panels' contents are filled in by the page's script "
        "when a panel is opened; without it only their summary lines show (summary.json and "
        "the raw runs hold every run).</p></noscript><p id='case-data-note' class='note' "
        f"hidden></p>{_filters_html(cases)}<div id='case-list'>",
        *(_case_html(case, headline, raw_runs, data) for case in cases),
        "</div></section>",
        data.block(),
    ]


def _options(select_id: str, label: str, values: Iterable[str], every: str) -> str:
    options = "".join(f"<option value='{escape(v)}'>{escape(v)}</option>" for v in values)
    return (
        f"<label>{escape(label)} <select id='{select_id}'><option value=''>{escape(every)}"
        f"</option>{options}</select></label>"
    )


def _filters_html(cases: Sequence[CaseView]) -> str:
    systems = dict.fromkeys(system for case in cases for system in case.systems)
    categories = sorted({case.category for case in cases})
    langs = sorted({lang for case in cases for lang in case.langs})
    return (
        "<div id='filters'>"
        + _options("filter-system", "System", systems, "every system")
        + _options("filter-category", "Category", categories, "every category")
        + _options("filter-lang", "Language", langs, "every language")
        + _options("filter-outcome", "Outcome", OUTCOMES, "every outcome")
        + "<label>Text <input id='filter-text' type='search' size='18' "
        "placeholder='answers, queries, reasons'></label>"
        + "<label>Sort <select id='sort-delta'><option value=''>by case</option>"
        "<option value='asc'>by delta, candidate worst first</option>"
        "<option value='desc'>by delta, candidate best first</option></select></label>"
        f"<span id='filter-count'>{len(cases)} cases</span></div>"
    )
