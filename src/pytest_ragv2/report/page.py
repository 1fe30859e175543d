"""report.html: one self-contained page a reviewer can work from, offline.

The banner names the failing gates and links the cases the candidate did not meet; the
systems sit beside their descriptors; the gates, the plots (:mod:`.plots`, when present)
and the layer's tables follow; then one collapsible panel per case (:mod:`.case_view`):
its prompts, gold claims and evidence, and each run with its query, its ranked list (gold
hits marked at their granularity), its whole answer, the claims and evidence met and
missed, citations, tool calls, latency and sizes. A small inline script filters the panels
by system, category, language and outcome and sorts them by delta; without it every panel
is still there. Every text that comes from a case, a system or a run is escaped, and the
page holds no data inside its script, so no answer can end it.

Every list is complete or says how many it leaves out and where they all are.
"""

from __future__ import annotations

import importlib
from collections import Counter, defaultdict
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from pytest_ragv2.deciding.verdict import GateResult
from pytest_ragv2.report.case_html import _cases_html, _link, run_anchor
from pytest_ragv2.report.case_view import CaseView, RunView, build_case_views
from pytest_ragv2.report.changes import changes_html
from pytest_ragv2.report.excerpts import ELLIPSIS, capped_note, excerpt
from pytest_ragv2.report.safe_text import html_escape as escape
from pytest_ragv2.report.tables import case_table, gate_table, metric_sections
from pytest_ragv2.report.text_table import Table

if TYPE_CHECKING:
    from pytest_ragv2.deciding.formal import RunKind
    from pytest_ragv2.deciding.records import RunRecord
    from pytest_ragv2.gold.cases import Catalog
    from pytest_ragv2.report.model import ListedRun, Summary
    from pytest_ragv2.report.plot_worker import PlotWorker

UNMET_SHOWN = 300  # runs in the list of unmet runs (summary.json holds every one)
# case panels, past which only the cases with a run not met and the first met ones get one:
# a panel is about 2 KB of page and a browser slows down past a few tens of megabytes
CASE_PANELS_SHOWN = 2_000
UNMET_REASON_CHARS = 200  # of an unmet run's first reason in that list
FAILING_CASES_SHOWN = 60  # case links in the banner
SKIPPED_NAMES_SHOWN = 20  # runs named per skip reason

STYLE = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 2rem; color: #1b1f24; }
h1 { font-size: 1.4rem; } h2 { font-size: 1.1rem; margin-top: 2rem; }
table { border-collapse: collapse; margin: .5rem 0; }
th, td { border: 1px solid #d0d7de; padding: .25rem .5rem; text-align: left; vertical-align: top; }
th { background: #f6f8fa; }
td.PASS { background: #dafbe1; } td.FAIL { background: #ffebe9; font-weight: 600; }
td.SKIP { background: #fff8c5; }
.verdict { font-size: 1.2rem; font-weight: 700; padding: .5rem 1rem; display: inline-block; }
.pass { background: #dafbe1; } .fail, .interrupted, .incomplete { background: #ffebe9; }
#verdict .gates { display: block; font-size: 1rem; font-weight: 600; }
#verdict a, .failing a { margin-right: .4rem; }
figure.plot { display: inline-block; margin: .5rem 1rem .5rem 0; vertical-align: top; }
figure.plot figcaption { font-size: .9rem; color: #57606a; max-width: 40rem; }
#filters { position: sticky; top: 0; background: #fff; padding: .4rem 0; z-index: 1;
  border-bottom: 1px solid #d0d7de; }
#filters label { margin-right: .8rem; }
details.case-panel { border: 1px solid #d0d7de; border-radius: 6px; margin: .35rem 0;
  padding: .2rem .6rem; }
details.case-panel > summary { cursor: pointer; }
details.case-panel, details.run { scroll-margin-top: 3.5rem; }
dl.descriptors, dl.prompts { display: grid; grid-template-columns: max-content auto;
  gap: 0 .8rem; margin: .2rem 0; }
dl.descriptors dt, dl.prompts dt { font-weight: 600; } dl dd { margin: 0; }
details.run { border-left: 4px solid #d0d7de; margin: .4rem 0 .4rem .5rem; padding-left: .6rem; }
details.run[data-outcome=unmet], details.run[data-outcome=error] { border-left-color: #cf222e; }
details.run[data-outcome=met] { border-left-color: #1a7f37; }
details.run[data-outcome=skipped] { border-left-color: #bf8700; }
.badge { font-size: .8rem; font-weight: 700; padding: 0 .35rem; border-radius: 4px; }
.badge.met { background: #dafbe1; } .badge.unmet, .badge.error { background: #ffebe9; }
.badge.skipped { background: #fff8c5; } .badge.ruled { background: #ddf4ff; }
.claim-met::before { content: "✓ "; color: #1a7f37; font-weight: 700; }
.claim-missed::before { content: "✗ "; color: #cf222e; font-weight: 700; }
.claim-missed { background: #fff0ee; }
ol.topk li.gold-hit { background: #dafbe1; }
ol.topk li.gold-hit[data-level=file], ol.topk li.gold-hit[data-level=page],
ol.topk li.gold-hit[data-level=section] { background: #fff8c5; }
.level { font-size: .8rem; font-weight: 700; margin-left: .3rem; }
.where { font-family: ui-monospace, monospace; }
.text, .note { color: #57606a; }
pre.answer { white-space: pre-wrap; word-break: break-word; background: #f6f8fa;
  padding: .5rem; margin: .2rem 0; }
.more { list-style: none; color: #57606a; font-style: italic; }
table.side-by-side { width: 100%; table-layout: fixed; }
table.side-by-side th:first-child { width: 14rem; }
table.side-by-side tr.differs > th { background: #fff1c2; }
table.side-by-side tr.differs > td { background: #fffbe6; }
.differs-mark { color: #9a6700; font-weight: 700; }
.side-met::before { content: "✓ "; color: #1a7f37; font-weight: 700; }
.side-missed::before, .side-veto::before { content: "✗ "; color: #cf222e; font-weight: 700; }
table.side-by-side li.only-here::before { content: "◆ "; color: #9a6700; }
table.side-by-side pre.answer { max-height: 24rem; overflow: auto; }
#changes ul.changed-cases { margin: 0; padding: 0; list-style: none; }
#changes ul.changed-cases li { display: inline; margin-right: .6rem; }
#changes td.count { font-weight: 700; text-align: right; }
"""

SCRIPT = """
(function () {
  var list = document.getElementById('case-list');
  if (!list) { return; }
  var panels = Array.prototype.slice.call(list.querySelectorAll('details.case-panel'));
  var byCase = {};
  panels.forEach(function (p) { byCase[p.getAttribute('data-case')] = p; });
  var count = document.getElementById('filter-count');
  var note = document.getElementById('case-data-note');
  var store = null, loaded = null;
  function value(id) { var e = document.getElementById(id); return e ? e.value : ''; }
  function trouble(message) {
    if (note) { note.hidden = false; note.textContent = message; }
  }
  // the panels' contents: one gzip block, decompressed once, on first need
  function data() {
    if (store) { return store; }
    var block = document.getElementById('case-data');
    if (!block) { store = Promise.resolve({}); return store; }
    if (typeof DecompressionStream === 'undefined') {
      store = Promise.reject(new Error('this browser has no DecompressionStream'));
    } else {
      var text = atob(block.textContent.trim()), bytes = new Uint8Array(text.length);
      for (var i = 0; i < text.length; i++) { bytes[i] = text.charCodeAt(i); }
      var stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream('gzip'));
      store = new Response(stream).text().then(JSON.parse);
    }
    store.then(function (all) { loaded = all; }, function (e) {
      trouble('The case panels could not be filled in (' + e.message + '): summary.json '
        + 'and the raw runs hold every run.');
    });
    return store;
  }
  function fill(panel) {
    if (panel.hasAttribute('data-loaded') || panel.hasAttribute('data-loading')) { return; }
    panel.setAttribute('data-loading', '');
    data().then(function (all) {
      var body = all[panel.getAttribute('data-case')];
      if (!body) { return; }
      var gold = panel.querySelector(':scope > div.gold');
      var side = panel.querySelector(':scope > div.side');
      if (gold) { gold.innerHTML = body.gold; }
      if (side) { side.innerHTML = body.side; }
      var runs = panel.querySelectorAll(':scope > details.run > div.run-body');
      for (var i = 0; i < runs.length && i < body.runs.length; i++) {
        runs[i].innerHTML = body.runs[i];
      }
      panel.removeAttribute('data-loading');
      panel.setAttribute('data-loaded', '');
      var id = decodeURIComponent(location.hash.slice(1));
      var target = id && document.getElementById(id);
      if (target && panel.contains(target)) { target.scrollIntoView(); }
    }, function () { panel.removeAttribute('data-loading'); });
  }
  panels.forEach(function (panel) {
    panel.addEventListener('toggle', function () { if (panel.open) { fill(panel); } });
    if (panel.open) { fill(panel); }
  });
  function runFits(run, s, l, o) {
    return (!s || run.getAttribute('data-system') === s)
      && (!l || run.getAttribute('data-lang') === l)
      && (!o || run.getAttribute('data-outcome') === o);
  }
  function apply() {
    var s = value('filter-system'), c = value('filter-category');
    var l = value('filter-lang'), o = value('filter-outcome'), shown = 0;
    var q = value('filter-text').trim().toLowerCase();
    if (q && !loaded) { data().then(apply); }
    panels.forEach(function (panel) {
      var text = q && loaded ? (loaded[panel.getAttribute('data-case')] || {}).text || '' : '';
      var visible = (!c || panel.getAttribute('data-category') === c)
        && (s || !o || panel.getAttribute('data-outcome') === o)
        && (!q || !loaded || text.indexOf(q) !== -1);
      var runs = panel.querySelectorAll(':scope > .run'), any = false;
      for (var i = 0; i < runs.length; i++) {
        var fits = runFits(runs[i], s, l, o);
        runs[i].hidden = !fits;
        any = any || fits;
      }
      panel.hidden = !(visible && (any || runs.length === 0 && !s && !l));
      if (!panel.hidden) { shown++; }
    });
    // the lists that name cases or runs follow the panels: a hidden case is left out
    function caseShown(id) { var p = byCase[id]; return !p || !p.hidden; }
    document.querySelectorAll('#changes li[data-case]').forEach(function (item) {
      item.hidden = !caseShown(item.getAttribute('data-case'));
    });
    document.querySelectorAll('#changes tr').forEach(function (row) {
      var items = row.querySelectorAll('li[data-case]'), left = 0;
      for (var i = 0; i < items.length; i++) { if (!items[i].hidden) { left++; } }
      var cell = row.querySelector('td.count');
      if (cell) {
        var all = items.length ? cell.getAttribute('data-all') || cell.textContent : null;
        if (all !== null) {
          cell.setAttribute('data-all', all);
          cell.textContent = left === items.length ? all : left + ' shown of ' + all;
        }
      }
    });
    document.querySelectorAll('#unmet tr[data-case]').forEach(function (row) {
      row.hidden = !(caseShown(row.getAttribute('data-case')) && runFits(row, s, l, o));
    });
    if (count) {
      count.textContent = shown + ' of ' + panels.length + ' cases shown'
        + (q && !loaded ? ' (searching…)' : '');
    }
  }
  function sort() {
    var how = value('sort-delta');
    var ordered = panels.slice();
    function delta(p) {
      var d = p.getAttribute('data-delta');
      return d === '' || d === null ? null : parseFloat(d);
    }
    if (how === 'asc' || how === 'desc') {
      var sign = how === 'asc' ? 1 : -1;
      ordered.sort(function (a, b) {
        var x = delta(a), y = delta(b);
        if (x === null && y === null) { return 0; }
        if (x === null) { return 1; }
        if (y === null) { return -1; }
        return sign * (x - y);
      });
    }
    ordered.forEach(function (panel) { list.appendChild(panel); });
  }
  ['filter-system', 'filter-category', 'filter-lang', 'filter-outcome'].forEach(function (id) {
    var e = document.getElementById(id);
    if (e) { e.addEventListener('change', apply); }
  });
  var search = document.getElementById('filter-text');
  if (search) { search.addEventListener('input', apply); }
  var sorter = document.getElementById('sort-delta');
  if (sorter) { sorter.addEventListener('change', sort); }
  function reveal() {
    var id = decodeURIComponent(location.hash.slice(1));
    var target = id && document.getElementById(id);
    if (!target) { return; }
    for (var e = target; e; e = e.parentElement) {
      if (e.tagName === 'DETAILS') { e.open = true; e.hidden = false; }
      if (e.tagName === 'DETAILS' && e.classList.contains('case-panel')) { fill(e); }
    }
    target.scrollIntoView();
  }
  window.addEventListener('hashchange', reveal);
  reveal();
  apply();
})();
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


def _case_table_html(table: Table, cases: Sequence[CaseView]) -> str:
    """The layer's case table, each case linked to its panel, with the skipped runs and why
    (a skipped run has no figure: its cells alone would show "—")."""
    header, rows = table
    panels = {case.case_id: case for case in cases}
    skipped: dict[str, str] = {}
    for case in cases:
        reasons: dict[str, list[str]] = defaultdict(list)
        for run in case.runs:
            if run.skipped and run.key.system not in reasons[run.skipped]:
                reasons[run.skipped].append(run.key.system)
        skipped[case.case_id] = "; ".join(
            f"{', '.join(systems)}: {reason}" for reason, systems in reasons.items()
        )
    with_skips = any(skipped.values())
    head = "".join(f"<th>{escape(cell)}</th>" for cell in header)
    head += "<th>skipped runs, why</th>" if with_skips else ""
    body = []
    for row in rows:
        case_id = row[0] if row else ""
        first = _link(case_id) if case_id in panels else escape(case_id)
        cells = [f"<td>{first}</td>", *(f"<td>{escape(cell)}</td>" for cell in row[1:])]
        if with_skips:
            cells.append(f"<td>{escape(skipped.get(case_id, ''))}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    return (
        f"<table class='case-table'><thead><tr>{head}</tr></thead>"
        f"<tbody>{''.join(body)}</tbody></table>"
    )


def _protocol_html(protocol: RunKind | None) -> list[str]:
    """The run's kind, and any protocol flag shown as a failing verdict is."""
    if protocol is None:
        return []
    return [f"<p>Protocol: {escape(protocol.label)}.</p>"] + [
        f"<p class='verdict fail'>Protocol flag: {escape(flag)}.</p>" for flag in protocol.flags
    ]


def _banner(summary: Summary, gates: Sequence[GateResult], cases: Sequence[CaseView]) -> str:
    verdict = summary.verdict
    failing = [gate for gate in gates if gate.decision == "fail"]
    named = (
        "<span class='gates'>Failing gates: "
        + ", ".join(
            f"<a href='#gates'>{escape(gate.name)}</a>"
            + (f" — {escape(excerpt(gate.reason, 160))}" if gate.reason else "")
            for gate in failing
        )
        + "</span>"
        if failing
        else "<span class='gates'>No gate failed.</span>"
    )
    if verdict == "partial" and summary.shard is not None:
        named = (
            f"<span class='gates'>Shard {escape(summary.shard.shard.label)}: one share of the "
            "run, not a decision; its gates read its share only, and `ragv2 merge` of every "
            "shard's raw runs decides.</span>"
        )
    unmet = [case for case in cases if case.outcome in ("unmet", "error")]
    links = ""
    if unmet:
        shown = unmet[:FAILING_CASES_SHOWN]
        more = (
            f" {escape(ELLIPSIS)} and {len(unmet) - len(shown)} more (filter the cases by "
            "outcome below; all in summary.json)"
            if len(unmet) > len(shown)
            else ""
        )
        who = (
            "candidate's " if any(run.role == "candidate" for c in unmet for run in c.runs) else ""
        )
        links = (
            f"<p class='failing'>Cases with {who}runs that did not meet them ({len(unmet)}): "
            + " ".join(_link(case.case_id) for case in shown)
            + more
            + "</p>"
        )
    return (
        f"<div id='verdict' class='verdict {escape(verdict)}'>Verdict: "
        f"{escape(verdict.upper())} (exit status {summary.exit_status}){named}</div>{links}"
    )


def _systems_html(summary: Summary) -> str:
    names = list(dict.fromkeys([*summary.systems, *summary.descriptors]))
    if not names:
        return ""
    rows = []
    for name in names:
        row = summary.systems.get(name)
        role = row.role if row is not None and row.role else ""
        descriptors = summary.descriptors.get(name) or {}
        listed = "".join(
            f"<dt>{escape(str(key))}</dt><dd>{escape(str(value))}</dd>"
            for key, value in descriptors.items()
        )
        described = f"<dl class='descriptors'>{listed}</dl>" if listed else "<i>none given</i>"
        runs = f"{row.runs} runs, {row.skipped} skipped" if row is not None else "no run"
        rows.append(
            f"<tr data-system='{escape(name)}'><td><b>{escape(name)}</b></td>"
            f"<td>{escape(role)}</td><td>{escape(runs)}</td><td>{described}</td></tr>"
        )
    return (
        "<section id='systems'><h2>Systems</h2><table><thead><tr><th>system</th><th>role</th>"
        "<th>runs</th><th>descriptors (deployment, index version, models, prompt version)"
        f"</th></tr></thead><tbody>{''.join(rows)}</tbody></table></section>"
    )


def _gates_html(gates: Sequence[GateResult]) -> str:
    details = "".join(
        f"<li><b>{escape(gate.name)}</b><ul>"
        + "".join(f"<li>{escape(detail)}</li>" for detail in gate.details)
        + "</ul></li>"
        for gate in gates
        if gate.details
    )
    return (
        "<section id='gates'><h2>Gates</h2>"
        + table_html(gate_table(gates), decision_column=3)
        + (f"<ul>{details}</ul>" if details else "")
        + "</section>"
    )


def _plots_html(
    summary: Summary, records: Sequence[RunRecord], worker: PlotWorker | None = None
) -> str:
    figures = worker.figures(summary, records) if worker is not None else None
    try:
        if figures is None:
            from pytest_ragv2.report import plots

            figures = plots.figures(summary, records)
    except ImportError:
        return ""
    except Exception as exc:  # a plot must never cost the report
        return f"<p class='note'>The plots could not be drawn: {escape(repr(exc))}</p>"
    return "".join(
        f"<figure class='plot'><figcaption>{escape(figure.title)} — "
        f"{escape(figure.caption)}</figcaption>{figure.svg}</figure>"
        for figure in figures
    )


def _adjudication_html(summary: Summary) -> str:
    # the adjudication view is optional: imported by name, so the page works without it
    try:
        module = importlib.import_module("pytest_ragv2.report.adjudication_view")
    except ImportError:
        return ""
    render = getattr(module, "adjudication_html", None)
    return str(render(summary)) if render is not None else ""


def _unmet_html(runs: Sequence[ListedRun], cases: Sequence[CaseView]) -> str:
    """The runs that did not meet their case, one row each (system, role, language, first
    reason), linked to its run in its case panel; the rows follow the filters."""
    if not runs:
        return ""
    where: dict[str, tuple[str, int, RunView]] = {
        run.key.item_name: (case.case_id, index, run)
        for case in cases
        for index, run in enumerate(case.runs, start=1)
    }
    shown = runs[:UNMET_SHOWN]
    rows = []
    for run in shown:
        found = where.get(run.run)
        view = found[2] if found is not None else None
        lang = view.key.lang if view is not None else (run.lang or "")
        outcome = view.outcome if view is not None else "unmet"
        name = (
            f'<a href="#{escape(run_anchor(found[0], found[1]))}">{escape(run.run)}</a>'
            if found is not None
            else escape(run.run)
        )
        reason = excerpt(run.reasons[0], UNMET_REASON_CHARS) if run.reasons else ""
        others = len(run.reasons) - 1 + run.reasons_more
        reason += f" (and {others} more)" if reason and others > 0 else ""
        rows.append(
            f"<tr data-case='{escape(run.case)}' data-system='{escape(run.system)}' "
            f"data-lang='{escape(lang)}' data-outcome='{escape(outcome)}'><td>{name}</td>"
            f"<td>{escape(run.role)}</td><td>{escape(reason)}</td></tr>"
        )
    more = (
        f"<p class='more'>{escape(capped_note(len(shown), len(runs)))}</p>"
        if len(runs) > len(shown)
        else ""
    )
    return (
        f"<section id='unmet'><h2>Runs that did not meet their case ({len(runs)})</h2>"
        "<p class='note'>The candidate's first; each run links to its block in its case "
        "panel (its answer, reasons and gold there). The rows follow the filters above.</p>"
        "<table class='unmet-runs'><thead><tr><th>run</th><th>role</th><th>first reason</th>"
        f"</tr></thead><tbody>{''.join(rows)}</tbody></table>" + more + "</section>"
    )


def _review_html(runs: Sequence[ListedRun], linked: bool) -> str:
    """The runs the scorer left to a reviewer, each with why and its answer."""
    if not runs:
        return ""
    items = []
    for run in runs:
        reasons = "".join(f"<li>{escape(reason)}</li>" for reason in run.reasons)
        answer = f"<blockquote>{escape(run.answer)}</blockquote>" if run.answer else ""
        where = f" {_link(run.case, 'case panel')}" if linked and run.case else ""
        items.append(
            f"<details open><summary>{escape(run.run)} ({escape(run.role)})"
            f"</summary>{where}<ul>{reasons}</ul>{answer}</details>"
        )
    return (
        f"<section id='review'><h2>Review queue ({len(runs)})</h2><p>The scorer could not "
        "decide these runs and did not guess: each waits for a reviewer's ruling in "
        "<code>gold/adjudications.yaml</code>, then <code>ragv2 rescore</code> decides.</p>"
        + "".join(items)
        + "</section>"
    )


def _skipped_html(cases: Sequence[CaseView]) -> str:
    by_reason: dict[str, list[str]] = defaultdict(list)
    for case in cases:
        for run in case.runs:
            if run.skipped:
                by_reason[run.skipped].append(run.key.item_name)
    if not by_reason:
        return ""
    items = []
    for reason, names in sorted(by_reason.items(), key=lambda kv: -len(kv[1])):
        shown = names[:SKIPPED_NAMES_SHOWN]
        listed = ", ".join(shown) + (
            f" {capped_note(len(shown), len(names), 'the case panels')}"
            if len(names) > len(shown)
            else ""
        )
        items.append(f"<li><b>{escape(reason)}</b> — {len(names)} run(s): {escape(listed)}</li>")
    return f"<section id='skipped'><h2>Skipped runs and why</h2><ul>{''.join(items)}</ul></section>"


def page_pieces(
    summary: Summary,
    gates: Sequence[GateResult],
    records: Sequence[RunRecord] = (),
    catalog: Catalog | None = None,
    run_dir: Path | None = None,
    plots: PlotWorker | None = None,
) -> Iterator[str]:
    """The page, in pieces made as they are written (a page of 20,000 cases is 40 MB:
    joined, then encoded, it was held three times over). ``records`` (the session's, of any
    layer: this layer's are taken), the case ``catalog`` and the ``run_dir`` holding the raw
    runs feed the case panels; each may be missing, and the page says what it then cannot
    show. The plots are
    handed to their helper at once; the page is built as its pieces are asked for, after
    summary.json is written."""
    layer_records = [record for record in records if record.key.layer == summary.layer]
    if plots is not None:  # the helper draws while the session writes and builds the rest
        plots.submit(summary, layer_records)
    return _page_pieces(summary, gates, layer_records, catalog, run_dir, plots)


def _page_pieces(
    summary: Summary,
    gates: Sequence[GateResult],
    layer_records: Sequence[RunRecord],
    catalog: Catalog | None,
    run_dir: Path | None,
    plots: PlotWorker | None,
) -> Iterator[str]:

    headline = summary.headline_metric
    trouble = ""
    try:
        cases = build_case_views(summary, layer_records, catalog, run_dir, CASE_PANELS_SHOWN)
    except Exception as exc:  # the verdict, gates and tables must reach the reviewer anyway
        cases = []
        trouble = f"<p class='note'>The case panels could not be built: {escape(repr(exc))}</p>"
    raw_runs = f"the raw runs ({summary.raw_runs})"
    skipped = Counter(run.outcome for case in cases for run in case.runs)["skipped"]
    parts: list[str | list[str]] = [
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>",
        f"<title>pytest-ragv2 {escape(summary.run_id)}</title>",
        f"<style>{STYLE}</style></head><body>",
        f"<h1>pytest-ragv2 layer {escape(summary.layer)} — run {escape(summary.run_id)}</h1>",
        _banner(summary, gates, cases),
        _adjudication_html(summary),
        changes_html(layer_records, {case.case_id for case in cases}),
        f"<p>Seed {summary.seed}; {summary.runs_recorded} runs recorded"
        + (f" of {summary.runs_expected} expected" if summary.runs_expected is not None else "")
        + (f", {skipped} skipped" if skipped else "")
        + f"; raw runs in <code>{escape(summary.raw_runs)}</code>.</p>",
        *_protocol_html(summary.protocol),
        _systems_html(summary),
        _gates_html(gates),
        _review_html(summary.review_queue, linked=bool(cases)),
        f"<section id='plots'><h2>Plots</h2>{_plots_html(summary, layer_records, plots)}</section>",
        *(
            f"<h2>{escape(title)}</h2>{table_html(table)}"
            for title, table in metric_sections(summary)
        ),
        "<h2>Cases</h2>",
        _case_table_html(case_table(summary), cases),
        [trouble]
        if trouble
        else _cases_html(
            cases,
            headline,
            raw_runs,
            len({record.key.case for record in layer_records}),
            CASE_PANELS_SHOWN,
        ),
        _skipped_html(cases),
        _unmet_html(summary.unmet_runs, cases),
        f"<script>{SCRIPT}</script>",
        "</body></html>",
    ]
    for index, part in enumerate(parts):
        if index:
            yield "\n"
        yield from [part] if isinstance(part, str) else part
