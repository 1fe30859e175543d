"""report.html from real sessions: the banner names the failing gates, each case has a panel
with its gold, and each run shows what failed it (the missed evidence or claim, marked), its
ranked list and its answer, escaped; skipped runs say why; capped lists say so."""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any

import pytest

import pytest_ragv2.report.case_html as case_html
import pytest_ragv2.report.case_view as case_view
import pytest_ragv2.report.page as page_module
from pytest_ragv2.config.settings import load_settings
from pytest_ragv2.gold.cases import load_catalog
from pytest_ragv2.report.case_data import inline
from pytest_ragv2.report.excerpts import excerpt
from pytest_ragv2.report.page import page_pieces
from pytest_ragv2.tools.rescore import rescore_run
from tests.conftest import REPO_ROOT, pyproject
from tests.gold.test_adjudication import FLIP
from tests.layers.test_layer_b import CHAT_CASES, CHATBOT, chat_pyproject
from tests.plugin.test_plugin import summary_of

HOSTILE = "<img src=x onerror=alert(1)></script><script>alert(2)</script>"


def render_page(*args: Any, **kwargs: Any) -> str:
    """The page with its panels filled in, as the browser fills one when it opens."""
    return inline("".join(page_pieces(*args, **kwargs)))


def report(pytester: pytest.Pytester, run_id: str, layer: str | None = None) -> str:
    folder = pytester.path / "reports" / run_id
    if layer is not None:
        folder = folder / layer
    return inline((folder / "report.html").read_text(encoding="utf-8"))


def panel(page: str, case: str) -> str:
    """The case's panel: from its opening tag to the next panel (or the section's end)."""
    found = re.search(f"<details class='case-panel'[^>]*? data-case='{re.escape(case)}'", page)
    assert found is not None, case
    start = found.start() + found.group(0).index("data-case=")
    end = page.find("<details class='case-panel'", start)
    return page[start : end if end != -1 else page.index("</section>", start)]


def runs_of(panel_html: str, system: str) -> list[str]:
    parts = panel_html.split("<details class='run'")[1:]
    return [part for part in parts if f"data-system='{system}'" in part.split(">", 1)[0]]


def failing_gates(summary: dict[str, object]) -> list[str]:
    gates = summary["gates"]
    assert isinstance(gates, list)
    return [gate["name"] for gate in gates if gate["decision"] == "fail"]


@pytest.fixture
def weak_candidate(project: pytest.Pytester) -> pytest.Pytester:
    """Layer A: the candidate finds the right file but never the page or row."""
    (project.path / "pyproject.toml").write_text(pyproject(baseline="good", candidate="weak"))
    project.runpytest("--ragv2-layer=A", "--ragv2-run-id=pg")
    return project


def test_the_banner_names_every_failing_gate_and_links_the_failing_cases(
    weak_candidate: pytest.Pytester,
) -> None:
    page = report(weak_candidate, "pg")
    summary = summary_of(weak_candidate, "pg")
    banner = page[page.index("id='verdict'") : page.index("</div>", page.index("id='verdict'"))]
    assert "Verdict: FAIL" in banner
    failing = failing_gates(summary)
    assert failing
    for name in failing:
        assert name in banner
    assert 'href="#case-C01"' in page  # the banner links the cases the candidate missed
    assert "<section id='gates'>" in page
    assert "<section id='plots'>" in page
    # the system descriptors sit beside each system
    systems = page[page.index("<section id='systems'>") :]
    assert "<dt>index_version</dt><dd>v1-2026-11</dd>" in systems[: systems.index("</section>")]


def test_a_failing_case_panel_shows_the_missed_evidence_the_ranked_list_and_the_query(
    weak_candidate: pytest.Pytester,
) -> None:
    page = report(weak_candidate, "pg")
    c01 = panel(page, "C01")
    assert "data-outcome='unmet'" in c01.split(">", 1)[0]
    assert "data-delta='-1.000'" in c01.split(">", 1)[0]  # candidate minus baseline, R@5
    assert "What is the maximum pressure?" in c01  # the prompt
    assert "<ul class='gold-evidence'><li>datasheet.pdf p.2</li></ul>" in c01
    candidate = runs_of(c01, "v2")
    assert len(candidate) == 2
    assert all("data-outcome='unmet'" in run for run in candidate)
    assert " open>" in candidate[0].split("</summary>")[0]  # the reason is in view
    first = candidate[0]
    # the gold evidence it missed, marked, with where it was found instead
    assert re.search(
        r"class='claim-missed evidence-missed'[^>]*>evidence: <b>datasheet.pdf p.2", first
    )
    assert "(file at rank 2)" in first
    # the query and the ranked list, the gold file marked at its granularity (file only)
    assert "<span class='query'>" in first
    assert "<ol class='topk'>" in first
    assert "class='gold-hit' data-level='file'" in first
    assert "noise.md" in first
    # the baseline found it: a full match, marked met
    baseline = runs_of(c01, "v1")[0]
    assert "class='gold-hit' data-level='full'" in baseline
    assert "class='claim-met evidence-met'" in baseline
    # the exact-lookup case: the row the candidate lost
    c02 = runs_of(panel(page, "C02"), "v2")[0]
    assert "evidence-missed" in c02
    assert "parts.xlsx" in c02


def test_the_filters_and_sort_controls_are_there_with_the_values_of_the_runs(
    weak_candidate: pytest.Pytester,
) -> None:
    page = report(weak_candidate, "pg")
    filters = page[page.index("<div id='filters'>") :]
    filters = filters[: filters.index("</div>")]
    for control in ("filter-system", "filter-category", "filter-lang", "filter-outcome"):
        assert f"<select id='{control}'>" in filters
    assert "<select id='sort-delta'>" in filters
    assert "<option value='v1'>" in filters
    assert "<option value='exact_lookup'>" in filters
    assert page.count("<details class='case-panel'") == 3
    assert "<script>" in page
    assert "http" not in page.split("<script>")[1]


def test_capped_lists_say_how_many_more_and_where(
    weak_candidate: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(page_module, "UNMET_SHOWN", 1)
    monkeypatch.setattr(case_view, "ITEMS_SHOWN", 1)
    weak_candidate.runpytest("--ragv2-layer=A", "--ragv2-run-id=capped")
    page = report(weak_candidate, "capped")
    summary = summary_of(weak_candidate, "capped")
    unmet = summary["unmet_runs"]
    assert len(unmet) == 4  # summary.json: every unmet run, none dropped
    assert f"Runs that did not meet their case ({len(unmet)})" in page
    assert f"… and {len(unmet) - 1} more, all in summary.json" in page
    # a ranked list cut to one item says how many more and where they are
    assert re.search(r"<li class='more'>… and \d+ more, all in the raw runs \(", page)


def test_past_the_panel_limit_every_case_not_met_keeps_its_panel_and_a_note_counts_them(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the baseline (weak) misses every case with page-level gold, the candidate meets all
    project.runpytest("--ragv2-layer=A", "--ragv2-run-id=all")
    every = re.findall(
        r"<details class='case-panel'[^>]*data-case='([^']+)'", report(project, "all")
    )
    monkeypatch.setattr(page_module, "CASE_PANELS_SHOWN", 1)
    project.runpytest("--ragv2-layer=A", "--ragv2-run-id=few")
    page = report(project, "few")
    summary = summary_of(project, "few")
    not_met = {run["case"] for run in summary["unmet_runs"]}
    shown = re.findall(r"<details class='case-panel'[^>]*data-case='([^']+)'", page)
    assert len(every) > len(shown) >= 1
    assert not_met <= set(shown)
    if not not_met:
        assert shown == every[:1]  # the met cases in case order, up to the limit
    assert f"Panels for {len(shown):,} of the {len(every):,} cases" in page
    table = page.split("<table class='case-table'>", 1)[1].split("</table>", 1)[0]
    for case in every:  # every case is still a row of the case table
        assert f"<td>{case}</td>" in table or f"#case-{case}" in table


def test_excerpts_end_at_a_word_with_an_ellipsis() -> None:
    text = "The maximum pressure is sixteen bar at twenty degrees Celsius"
    cut = excerpt(text, 30)
    assert cut == "The maximum pressure is…"
    assert len(cut) <= 30
    assert excerpt(text, 200) == text
    assert excerpt("x" * 50, 10) == "x" * 9 + "…"  # one long word is cut where it must be


@pytest.fixture
def hostile_chat(project: pytest.Pytester) -> pytest.Pytester:
    """Layer B: the candidate answers the seal-kit question with hostile markup and a wrong
    part number; W09 needs web search no system has (skipped)."""
    chatbot = CHATBOT.replace(
        'answer = "The seal kit is part NX-451C."',
        f'answer = "The seal kit is part NX-451C. {HOSTILE} " + "and more words " * 40',
    )
    assert chatbot != CHATBOT
    (project.path / "chatbot.py").write_text(chatbot)
    (project.path / "cases" / "development.yaml").write_text(CHAT_CASES)
    (project.path / "pyproject.toml").write_text(chat_pyproject(candidate="fabricate"))
    project.runpytest("--ragv2-layer=B", "--ragv2-run-id=hb", "--html=pytest-html.html")
    return project


def test_layer_b_panels_show_claims_the_whole_answer_escaped_and_skip_reasons(
    hostile_chat: pytest.Pytester,
) -> None:
    page = report(hostile_chat, "hb")
    assert "<img" not in page
    assert "alert(2)</script>" not in page
    escaped = (
        "&lt;img src=x onerror=alert(1)&gt;&lt;/script&gt;&lt;script&gt;alert(2)&lt;/script&gt;"
    )
    assert escaped in page
    c02 = panel(page, "C02")
    assert "<ul class='gold-claims'><li>required: NX-450B</li></ul>" in c02
    candidate = next(run for run in runs_of(c02, "v2") if "data-lang='en'" in run)
    assert re.search(r"class='claim-missed'[^>]*>required claim: <b>NX-450B</b>", candidate)
    # the whole answer (not the record's 240-character excerpt), in a collapsible block
    answer = candidate[candidate.index("<details class='answer' open>") :]
    answer = answer[: answer.index("</details>")]
    assert "(whole, " in answer
    assert answer.count("and more words") == 40
    # the tool call with its query, and the prompt
    assert "<table class='tool-calls'>" in candidate
    assert "search" in candidate
    assert "Which part is the seal kit?" in candidate
    baseline = runs_of(c02, "v1")[0]
    assert re.search(r"class='claim-met'[^>]*>required claim: <b>NX-450B</b>", baseline)
    # W09 needs web search: skipped, with the reason, in its panel and in the list
    w09 = panel(page, "W09")
    assert "data-outcome='skipped'" in w09.split(">", 1)[0]
    assert "Skipped: needs a setup the system does not provide: " in w09
    assert "Skipped runs and why" in page
    # the case table links each case to its panel and says why runs were skipped
    table = page[page.index("<table class='case-table'>") :]
    table = table[: table.index("</table>")]
    assert '<td><a href="#case-W09">W09</a></td>' in table
    assert "<th>skipped runs, why</th>" in table
    assert "v2, v1: needs a setup the system does not provide" in table
    # summary.json's excerpt is cut at a word with an ellipsis
    summary = summary_of(hostile_chat, "hb")
    answers = [run["answer"] for run in summary["unmet_runs"] if run["run"].startswith("C02[v2")]
    assert answers
    assert all(a.endswith("…") and a[:-1] == a[:-1].rstrip() for a in answers)
    assert all("and more word…" not in a for a in answers)


def test_pytest_html_rows_carry_the_runs_extras_escaped(hostile_chat: pytest.Pytester) -> None:
    html = (hostile_chat.path / "pytest-html.html").read_text(encoding="utf-8")
    assert "ragv2-run" in html  # the extras block under each row
    assert "NX-450B" in html
    assert "claim-missed" in html
    assert "needs a setup the system does not provide" in html  # a skipped run's reason
    assert "<img src=x onerror" not in html
    assert "onerror=alert(1)" in html  # there, as text


def test_pytest_html_of_layer_a_lists_the_top_items_with_gold_hits(
    project: pytest.Pytester,
) -> None:
    (project.path / "pyproject.toml").write_text(pyproject(baseline="good", candidate="weak"))
    project.runpytest("--ragv2-layer=A", "--ragv2-run-id=ph", "--html=pytest-html.html")
    html = (project.path / "pytest-html.html").read_text(encoding="utf-8")
    assert "Top items" in html
    assert "gold-hit" in html
    assert "data-level" in html
    assert "gold evidence not in top 5" in html
    assert "R@5" in html
    assert "B/C: Exact" not in html


def test_a_page_without_raw_runs_or_catalog_still_shows_every_run(
    weak_candidate: pytest.Pytester,
) -> None:
    """An interrupted session may leave records without raw runs: the panels keep the
    record's short list and say the rest is missing; with no record at all, no panel."""
    root = weak_candidate.path
    settings = load_settings(root, None)
    rescored = rescore_run(root / "raw-runs" / "pg", settings)
    summary, gates = rescored.summary, rescored.gates_by_layer["A"]
    page = render_page(summary, gates, rescored.records, rescored.catalog, run_dir=None)
    c01 = runs_of(panel(page, "C01"), "v2")[0]
    assert "The raw run is missing" in c01
    assert "class='gold-hit' data-level='file'" in c01  # from the scorer's first ranks
    bare = render_page(summary, gates, rescored.records)
    assert "This case is no longer in the catalog." in bare
    assert "<details class='case-panel'" in bare

    def broken(*args: object) -> None:
        raise RuntimeError("<b>a bug</b>")

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(case_view, "run_view", broken)
        failed = render_page(summary, gates, rescored.records, rescored.catalog)
    assert "The case panels could not be built: RuntimeError(&#x27;&lt;b&gt;a bug" in failed
    assert "id='verdict'" in failed
    empty = render_page(summary, gates)
    assert "No run was recorded." in empty
    assert "id='verdict'" in empty
    catalog = load_catalog(root / "cases", root / "gold")
    shutil.rmtree(root / "raw-runs" / "pg")
    assert "The raw run is missing" in render_page(
        summary, gates, rescored.records, catalog, Path(root / "raw-runs" / "pg")
    )


def test_a_multi_layer_session_writes_a_page_per_layer_with_its_own_runs(
    bundled: pytest.Pytester,
) -> None:
    (bundled.path / "evidence").mkdir()
    shutil.copy(REPO_ROOT / "evidence" / "demo-v2.json", bundled.path / "evidence")
    (bundled.path / "pyproject.toml").write_text(
        '[tool.ragv2]\ncorpus = "corpus"\nevidence = "evidence/demo-v2.json"\n'
    )
    bundled.runpytest(
        "--ragv2-layer=A,B,C", "--ragv2-reps=1", "--ragv2-run-id=ab",
        "-k", "B06 or K01 or W01 or T01", "--ragv2-seed=5", "--html=ab.html",
    )  # fmt: skip
    layer_a, layer_b = report(bundled, "ab", "A"), report(bundled, "ab", "B")
    assert "<ol class='topk'>" in layer_a
    assert "<pre class='answer'>" not in layer_a
    assert "<pre class='answer'>" in layer_b
    layer_c = report(bundled, "ab", "C")  # frozen evidence: the answers and what they saw
    assert "<pre class='answer'>" in layer_c
    assert "data-case='K01'" in layer_c
    assert "data-case='W01'" not in layer_a
    assert "data-case='W01'" in layer_b
    for page in (layer_a, layer_b):
        assert "data-case='K01'" in page
        assert "id='verdict'" in page
    # a conversation: each turn's prompt, tool calls and evidence, gold hits marked against
    # that turn's own gold evidence
    t01 = panel(layer_b, "T01")
    assert "turn 2: contrat-cadre-meridia.docx" in t01
    run = runs_of(t01, "demo-v2")[0]
    assert "Turn 10: Prompt" in run
    turn_2 = run[run.index("Turn 2: Prompt") : run.index("Turn 3: Prompt")]
    assert "class='gold-hit' data-level='full'" in turn_2
    html = (bundled.path / "ab.html").read_text(encoding="utf-8")
    assert "B/C: Exact" in html
    assert "A: R@5" in html


def test_an_adjudicated_run_says_who_ruled_in_its_panel(project: pytest.Pytester) -> None:
    (project.path / "gold" / "adjudications.yaml").write_text(FLIP)
    project.runpytest("--ragv2-layer=A", "--ragv2-run-id=adj")
    page = report(project, "adj")
    ruled = [run for run in runs_of(panel(page, "C01"), "v2") if "ruled by" in run]
    assert ruled
    assert "<span class='badge ruled'>ruled by Dana Reviewer</span>" in ruled[0]
    assert "adjudicated by Dana Reviewer on 2026-11-30" in ruled[0]
    assert page.index("id='verdict'") < page.index("Dana Reviewer")  # after the banner


def test_a_baseline_miss_reads_as_pytest_reads_it(project: pytest.Pytester) -> None:
    # the weak baseline misses C01 and C02: its runs decide nothing, as pytest's xfailed
    project.runpytest("--ragv2-layer=A", "--ragv2-run-id=x")
    page = report(project, "x")
    baseline = runs_of(panel(page, "C01"), "v1")
    assert baseline
    assert all("XFAIL</span> <b>v1</b> (baseline)" in run for run in baseline)
    assert all("data-outcome='unmet'" in run.split(">", 1)[0] for run in baseline)


def test_pytest_html_shows_a_hostile_case_file_name_as_text(project: pytest.Pytester) -> None:
    import html
    import json

    hostile = "x<img src=x onerror=alert(1)>.yaml"
    shutil.copy(project.path / "cases" / "development.yaml", project.path / "cases" / hostile)
    (project.path / "cases" / "development.yaml").unlink()
    project.runpytest("--ragv2-layer=A", "--ragv2-run-id=hh", "--html=pytest-html.html")
    page = (project.path / "pytest-html.html").read_text(encoding="utf-8")
    blob = re.search(r'data-jsonblob="([^"]*)"', page)
    assert blob is not None
    tests = json.loads(html.unescape(blob.group(1)))["tests"]
    cells = [row for runs in tests.values() for run in runs for row in run["resultsTableRow"]]
    ids = [cell for cell in cells if cell.startswith('<td class="col-testId">')]
    assert len(ids) == 10
    assert all("&lt;img src=x onerror=alert(1)&gt;.yaml::C0" in cell for cell in ids)
    assert not any("<img" in cell for cell in ids)


def test_a_run_whose_items_are_neither_kept_nor_on_disk_says_so() -> None:
    """The session keeps no listed items past a run's report: with the raw run gone, its
    panel says the items cannot be listed, and counts none as "more"; a rescored record
    still shows its first items."""
    listed = case_view.ListedItem(rank=1, where="a.pdf, p. 2", text="", level=None)
    empty = case_html.items_html(case_view.ItemList((), 7, complete=False), "raw", "Retrieved")
    assert "(7 returned)" in empty
    assert "the raw run is missing: its items cannot be listed" in empty
    assert "more" not in empty
    short = case_html.items_html(
        case_view.ItemList((listed,), 7, complete=False), "raw", "Retrieved"
    )
    assert "the raw run is missing: the record's first items" in short
    assert "and 6 more, all in raw" in short
    whole = case_html.items_html(case_view.ItemList((listed,), 7), "raw", "Retrieved")
    assert "missing" not in whole
    assert "and 6 more, all in raw" in whole


def _changed(page: str, row: str) -> list[str]:
    """The cases listed in a row of the "what changed" panel."""
    start = page.index(f"<tr id='changed-{row}'>")
    return re.findall(r"<li data-case='([^']+)'>", page[start : page.index("</tr>", start)])


def test_what_changed_lists_the_cases_each_system_alone_meets_and_the_new_vetoes(
    hostile_chat: pytest.Pytester, weak_candidate: pytest.Pytester
) -> None:
    page = report(hostile_chat, "hb")
    summary = summary_of(hostile_chat, "hb")
    assert page.index("<section id='changes'>") < page.index("<section id='gates'>")
    assert _changed(page, "lost") == ["C02"]  # the candidate's wrong part number
    assert _changed(page, "gained") == []
    unmet_cases = {run["case"] for run in summary["unmet_runs"] if run["role"] == "candidate"}
    assert set(_changed(page, "lost")) <= unmet_cases
    new = page[page.index("<tr id='changed-new-vetoes'>") :]
    new = new[: new.index("</tr>")]
    assert "C02" in new  # a veto the candidate tripped there and the baseline did not
    assert '<a href="#case-C02">C02</a>' in new
    assert "<tr id='changed-gone-vetoes'><th>" in page
    # layer A: no veto rows, the cases the weak candidate lost
    layer_a = report(weak_candidate, "pg")
    assert _changed(layer_a, "lost") == ["C01", "C02"]
    assert "changed-new-vetoes" not in layer_a


def test_side_by_side_puts_the_roles_in_columns_and_marks_what_differs(
    hostile_chat: pytest.Pytester, weak_candidate: pytest.Pytester
) -> None:
    c02 = panel(report(hostile_chat, "hb"), "C02")
    side = c02[c02.index("<table class='side-by-side'>") :]
    side = side[: side.index("</table>")]
    heads = re.findall(r"<th data-role='([^']+)'>", side)
    assert heads == ["baseline", "candidate"]
    rows = re.findall(r"<tr( class='[^']*')?><th>(.*?)</th>(.*?)</tr>", side)
    by_label = {re.sub(r" <span.*", "", label): (css, cells) for css, label, cells in rows}
    assert "differs" in by_label["outcome"][0]
    assert "differs" in by_label["answer"][0]  # the answers differ
    css, cells = by_label["required claim: NX-450B"]
    assert "differs" in css
    assert cells.index("side-met") < cells.index("side-missed")  # baseline met, candidate not
    assert "&lt;img src=x" in by_label["answer"][1]  # escaped as everywhere
    # layer A: the top items, an item only one column has marked
    c01 = panel(report(weak_candidate, "pg"), "C01")
    side = c01[c01.index("<table class='side-by-side'>") :]
    side = side[: side.index("</table>")]
    assert "<tr class='items-row differs'>" in side
    assert "only-here" in side
    assert "noise.md" in side  # the weak candidate's first item, in no baseline list
