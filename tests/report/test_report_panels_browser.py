"""report.html's case panels in headless Chromium: from the banner or the case list, the
evidence or claim that failed a case is in view after at most two clicks, with the ranked
list and the answer; the filters and the sort work. Skipped where no browser is available
(tests/browser.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

pytest.importorskip("tests.browser")

from tests.browser import PageErrors, follow_link, open_file, wait_filled
from tests.conftest import pyproject
from tests.layers.test_layer_b import CHAT_CASES, chat_pyproject
from tests.layers.test_layer_b import CHATBOT as CHAT_SYSTEM

if TYPE_CHECKING:
    from playwright.sync_api import Page

pytestmark = pytest.mark.browser


def visible(page: Page, selector: str) -> list[str]:
    """The ``data-case`` (or text) of every element matching ``selector`` that is shown."""
    shown: list[str] = page.evaluate(
        """(s) => Array.from(document.querySelectorAll(s))
        .filter((e) => e.offsetParent !== null)
        .map((e) => e.getAttribute('data-case') || e.getAttribute('data-system') || '')""",
        selector,
    )
    return shown


def test_two_clicks_from_the_banner_or_the_case_list_reach_the_failing_evidence(
    project: pytest.Pytester, browser_page: Page, page_errors: PageErrors
) -> None:
    (project.path / "pyproject.toml").write_text(pyproject(baseline="good", candidate="weak"))
    project.runpytest("--ragv2-layer=A", "--ragv2-run-id=two")
    path = project.path / "reports" / "two" / "report.html"
    page = browser_page
    open_file(page, path)
    assert page.locator("#verdict").is_visible()
    assert "recall_improvement" in page.locator("#verdict").inner_text()
    # from the banner: one click on the failing case
    follow_link(page, 'p.failing a[href="#case-C01"]', 'details.case-panel[data-case="C01"]')
    panel = page.locator('details.case-panel[data-case="C01"]')
    assert panel.get_attribute("open") is not None
    missed = panel.locator(".claim-missed").first
    assert missed.is_visible()
    assert "datasheet.pdf p.2" in missed.inner_text()
    assert panel.locator("ol.topk").first.is_visible()
    assert panel.locator("ol.topk li.gold-hit[data-level=file]").first.is_visible()
    # from the case list: one click on the case, the failing run is already open
    open_file(page, path)
    page.locator('details.case-panel[data-case="C02"] > summary').click()
    wait_filled(page, 'details.case-panel[data-case="C02"]')
    c02 = page.locator('details.case-panel[data-case="C02"]')
    assert c02.locator(".claim-missed").first.is_visible()
    assert c02.locator("ol.topk").first.is_visible()
    # a run that is not open yet: the second click opens it
    closed = c02.locator("details.run:not([open]) > summary").first
    closed.click()
    assert c02.locator("details.run[open] ol.topk").count() >= 2
    assert page_errors.all == []


def test_the_filters_and_the_sort_by_delta_work(
    project: pytest.Pytester, browser_page: Page, page_errors: PageErrors
) -> None:
    (project.path / "pyproject.toml").write_text(pyproject(baseline="good", candidate="weak"))
    project.runpytest("--ragv2-layer=A", "--ragv2-run-id=flt")
    page = browser_page
    open_file(page, project.path / "reports" / "flt" / "report.html")
    panels = "#cases details.case-panel"
    assert sorted(visible(page, panels)) == ["C01", "C02", "C03"]
    page.select_option("#filter-category", "exact_lookup")
    assert visible(page, panels) == ["C02"]
    page.select_option("#filter-category", "")
    page.select_option("#filter-outcome", "unmet")
    assert sorted(visible(page, panels)) == ["C01", "C02"]
    page.select_option("#filter-system", "v1")  # the baseline met every case
    assert visible(page, panels) == []
    page.select_option("#filter-outcome", "")
    page.select_option("#filter-lang", "de")
    langs: list[str] = page.evaluate(
        """() => Array.from(document.querySelectorAll('#cases .run'))
        .filter((r) => !r.hidden && !r.closest('details.case-panel').hidden)
        .map((r) => r.getAttribute('data-system') + '-' + r.getAttribute('data-lang'))"""
    )
    assert langs
    assert set(langs) == {"v1-de"}
    page.select_option("#filter-system", "")
    page.select_option("#filter-lang", "")
    page.select_option("#sort-delta", "asc")
    order = page.evaluate(
        "() => Array.from(document.querySelectorAll('#case-list > details.case-panel'),"
        " (p) => p.getAttribute('data-delta'))"
    )
    numbers = [float(value) for value in order if value]
    assert numbers == sorted(numbers)
    assert order[-1] == ""  # a case with no delta (no recall defined) sorts last
    assert "of 3 cases shown" in page.locator("#filter-count").inner_text()
    assert page_errors.all == []


def test_a_layer_b_panel_shows_the_missed_claim_and_the_answer_after_one_click(
    project: pytest.Pytester, browser_page: Page, page_errors: PageErrors
) -> None:
    (project.path / "chatbot.py").write_text(CHAT_SYSTEM)
    (project.path / "cases" / "development.yaml").write_text(CHAT_CASES)
    (project.path / "pyproject.toml").write_text(chat_pyproject(candidate="fabricate"))
    project.runpytest("--ragv2-layer=B", "--ragv2-run-id=chat")
    page = browser_page
    open_file(page, project.path / "reports" / "chat" / "report.html")
    follow_link(page, 'p.failing a[href="#case-C02"]', 'details.case-panel[data-case="C02"]')
    run = page.locator('details.case-panel[data-case="C02"] details.run[open]').first
    assert run.get_attribute("data-outcome") == "unmet"
    missed = run.locator(".claim-missed").first
    assert missed.is_visible()
    assert "NX-450B" in missed.inner_text()
    answer = run.locator("pre.answer").first
    assert answer.is_visible()
    assert "NX-451C" in answer.inner_text()
    assert run.locator("table.tool-calls").first.is_visible()
    assert page_errors.all == []


def test_a_browser_without_decompression_says_why_the_panels_stay_empty(
    project: pytest.Pytester, browser_page: Page, page_errors: PageErrors
) -> None:
    project.runpytest("--ragv2-layer=A", "--ragv2-run-id=old")
    page = browser_page
    page.add_init_script("delete window.DecompressionStream;")
    open_file(page, project.path / "reports" / "old" / "report.html")
    page.locator('details.case-panel[data-case="C01"] > summary').click()
    note = page.locator("#case-data-note")
    note.wait_for(state="visible", timeout=5000)
    assert "DecompressionStream" in note.inner_text()
    assert "summary.json" in note.inner_text()
    # the summary lines, the filters and the banner are there all the same
    assert page.locator('details.case-panel[data-case="C01"] details.run').count() > 0
    assert page.locator("#verdict").is_visible()
    assert page_errors.exceptions == []
