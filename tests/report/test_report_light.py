"""report.html of the bundled benchmark at layers A and B stays light (the case panels'
contents ride in one compressed block), and in headless Chromium a reviewer gets the "what
changed" panel, the side-by-side table of a case and the text search. One session of both
layers serves every test here, run once whichever xdist worker asks first."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from filelock import FileLock

from pytest_ragv2.report.case_data import decode, inline
from tests.browser import PageErrors, follow_link, open_file
from tests.conftest import REPO_ROOT

if TYPE_CHECKING:
    from playwright.sync_api import Page

PAGE_LIMIT_BYTES = 3_000_000  # a page of the bundled benchmark (11.5 MB at layer B before)
RUN_ID = "light"


@dataclass(frozen=True, slots=True)
class Pages:
    folder: Path

    def page(self, layer: str) -> Path:
        return self.folder / "reports" / RUN_ID / layer / "report.html"

    def summary(self, layer: str) -> dict[str, Any]:
        path = self.folder / "reports" / RUN_ID / layer / "summary.json"
        data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
        return data


def _run_bundled(folder: Path) -> None:
    """``python -m pytest --ragv2-layer=A,B`` on a copy of the bundled benchmark."""
    folder.mkdir(parents=True, exist_ok=True)
    for name in ("cases", "gold", "corpus"):
        if not (folder / name).exists():
            shutil.copytree(REPO_ROOT / name, folder / name)
    (folder / "pyproject.toml").write_text('[tool.ragv2]\ncorpus = "corpus"\n', encoding="utf-8")
    env = {key: value for key, value in os.environ.items() if not key.startswith("PYTEST_")}
    subprocess.run(
        [sys.executable, "-m", "pytest", "--ragv2-layer=A,B", f"--ragv2-run-id={RUN_ID}", "-q"],
        cwd=folder,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        check=False,
        timeout=900,
    )


@pytest.fixture(scope="session")
def bundled_pages(tmp_path_factory: pytest.TempPathFactory) -> Pages:
    shared = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):  # each worker has its own folder below
        shared = shared.parent
    folder = shared / "bundled-light"
    with FileLock(str(folder) + ".lock"):
        pages = Pages(folder)
        if not pages.page("B").exists():
            _run_bundled(folder)
    assert pages.page("A").exists(), "the session wrote no layer-A page"
    assert pages.page("B").exists(), "the session wrote no layer-B page"
    return pages


def test_the_bundled_pages_stay_light_and_carry_every_panel(
    bundled_pages: Pages, capsys: pytest.CaptureFixture[str]
) -> None:
    for layer in ("A", "B"):
        path = bundled_pages.page(layer)
        size = path.stat().st_size
        with capsys.disabled():
            print(f"\nbundled layer-{layer} report.html: {size:,} bytes")
        assert size < PAGE_LIMIT_BYTES, (layer, size)
        page = path.read_text(encoding="utf-8")
        data = decode(page)
        cases = {case for rows in bundled_pages.summary(layer)["by_case"].values() for case in rows}
        assert set(data) == cases  # every case's contents, none left out
        for entry in data.values():
            assert set(entry) == {"gold", "side", "runs", "text"}
        whole = inline(page)
        assert whole.count("<div class='run-body'></div>") == 0  # every run filled in
        assert page.count("<details class='run'") == whole.count("<details class='run'")
    answers = inline(bundled_pages.page("B").read_text(encoding="utf-8"))
    assert "<pre class='answer'>" in answers
    assert "<table class='side-by-side'>" in answers


def _shown(page: Page, selector: str, attribute: str) -> list[str]:
    found: list[str] = page.evaluate(
        """([s, a]) => Array.from(document.querySelectorAll(s))
        .filter((e) => e.offsetParent !== null).map((e) => e.getAttribute(a))""",
        [selector, attribute],
    )
    return found


@pytest.mark.browser
def test_what_changed_side_by_side_and_the_search_in_the_bundled_layer_b_page(
    bundled_pages: Pages, browser_page: Page, page_errors: PageErrors
) -> None:
    page = browser_page
    open_file(page, bundled_pages.page("B"))
    changes = page.locator("#changes")
    assert changes.is_visible()
    text = changes.inner_text()
    assert "(candidate) meets" in text
    assert "Vetoes" in text
    gained = _shown(page, "#changed-gained li[data-case]", "data-case")
    assert gained, "the demo candidate meets cases its baseline does not"
    count = page.locator("#changed-gained td.count").inner_text()
    assert count == str(len(gained))

    # a case from the panel: its side-by-side table, the differing rows marked
    case = gained[0]
    follow_link(
        page, f'#changed-gained a[href="#case-{case}"]', f'details.case-panel[data-case="{case}"]'
    )
    panel = page.locator(f'details.case-panel[data-case="{case}"]')
    table = panel.locator("table.side-by-side")
    assert table.is_visible()
    roles = table.locator("thead th[data-role]").evaluate_all(
        "(cells) => cells.map((c) => c.getAttribute('data-role'))"
    )
    assert roles[:2] == ["baseline", "candidate"]
    outcome = table.locator("tbody tr").first
    assert "differs" in (outcome.get_attribute("class") or "")  # met against not met
    assert table.locator("tr.answer-row pre.answer").count() == len(roles)
    assert table.locator("tr.gold-row.differs .side-missed").count() > 0
    assert panel.locator("details.run .claim-met, details.run .claim-missed").count() > 0

    # the text search: a word of that case's answers keeps the cases that hold it
    total = page.locator("#case-list > details.case-panel").count()
    page.fill("#filter-text", "zzzz-no-answer-says-this")
    page.wait_for_function(
        "() => document.getElementById('filter-count').textContent.startsWith('0 of')"
    )
    assert _shown(page, "#unmet tr[data-case]", "data-case") == []
    page.fill("#filter-text", case.lower())
    page.wait_for_function(
        f"() => !document.getElementById('filter-count').textContent.startsWith('{total} of')"
    )
    shown = _shown(page, "#case-list > details.case-panel", "data-case")
    assert case in shown
    assert len(shown) < total
    for row in _shown(page, "#unmet tr[data-case]", "data-case"):
        assert row in shown  # the unmet list follows the search
    page.fill("#filter-text", "")

    # the per-case plot names each case, and its bar opens the case's panel
    page.select_option("#filter-system", "")
    link = page.locator("#plots figure.plot svg a").first
    target = link.evaluate("(a) => a.getAttribute('xlink:href') || a.getAttribute('href')")
    assert target.startswith("#case-")
    link.click()
    page.wait_for_function(
        "(id) => { const p = document.getElementById(id);"
        " return p && p.open && p.hasAttribute('data-loaded'); }",
        arg=target[1:],
        timeout=5000,
    )

    # the unmet list follows the language and system filters
    page.select_option("#filter-lang", "de")
    assert set(_shown(page, "#unmet tr[data-case]", "data-lang")) == {"de"}
    page.select_option("#filter-lang", "")
    page.select_option("#filter-system", "demo-v1")  # the list's first 300 are the candidate's
    assert _shown(page, "#unmet tr[data-case]", "data-case") == []
    page.select_option("#filter-system", "demo-v2")
    assert set(_shown(page, "#unmet tr[data-case]", "data-system")) == {"demo-v2"}
    assert page_errors.all == []
