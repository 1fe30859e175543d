"""Headless Chromium for the report tests, driven by playwright.

playwright's own browser download is not used: the tests drive the system's Chromium
(Debian's ``chromium`` package, which ``.ci/run`` installs), found on PATH as ``chromium``,
``chromium-browser`` or ``google-chrome``, or named by the ``RAGV2_CHROMIUM`` environment
variable (a path, or a name looked up on PATH). Where there is no such browser, or no
playwright, the browser tests are skipped with the reason.

Fixtures (made available by ``tests/conftest.py``):

- ``chromium_browser`` — one browser per test process, session-scoped: under
  ``pytest -n 2`` each xdist worker launches its own.
- ``browser_page`` — a fresh page in its own offline browser context per test; its
  uncaught exceptions and console errors are collected by the ``page_errors`` fixture.

Mark browser tests ``@pytest.mark.browser`` (``-m "not browser"`` leaves them out).
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from playwright.sync_api import Browser, ConsoleMessage, Error, Page

CHROMIUM_ENV = "RAGV2_CHROMIUM"
CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome")
LAUNCH_ARGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)


def find_chromium() -> str | None:
    """The Chromium to drive: ``$RAGV2_CHROMIUM`` (a path, or a name on PATH), else the
    first of :data:`CHROMIUM_NAMES` on PATH; None when there is none."""
    override = os.environ.get(CHROMIUM_ENV, "").strip()
    if override:
        if Path(override).is_file():
            return override
        return shutil.which(override)
    for name in CHROMIUM_NAMES:
        found = shutil.which(name)
        if found:
            return found
    return None


def unavailable() -> str | None:
    """Why no browser test can run here, or None when one can."""
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "playwright is not installed (it is part of the test extra)"
    if find_chromium() is None:
        override = os.environ.get(CHROMIUM_ENV, "").strip()
        if override:
            return f"{CHROMIUM_ENV}={override!r} is neither a file nor a program on PATH"
        names = ", ".join(CHROMIUM_NAMES)
        return (
            f"no Chromium on PATH ({names}) and {CHROMIUM_ENV} not set; "
            ".ci/run installs Debian's chromium"
        )
    return None


@dataclass(slots=True)
class PageErrors:
    """The page's uncaught exceptions and console errors, as they happen."""

    exceptions: list[str] = field(default_factory=list)
    console: list[str] = field(default_factory=list)

    def attach(self, page: Page) -> None:
        # plain functions: playwright stores its wrapper on a bound method's instance
        page.on("pageerror", lambda error: self._exception(error))
        page.on("console", lambda message: self._console(message))

    def _exception(self, error: Error) -> None:
        self.exceptions.append(f"{error.name}: {error.message}")

    def _console(self, message: ConsoleMessage) -> None:
        if message.type == "error":
            self.console.append(message.text)

    @property
    def all(self) -> list[str]:
        return [*self.exceptions, *self.console]


@dataclass(frozen=True, slots=True)
class Opened:
    """How long a page took to open: wall clock for ``page.goto`` until the load event,
    and the navigation timing's DOMContentLoaded and load (ms from navigation start)."""

    wall_s: float
    dom_content_loaded_ms: float
    load_ms: float


def follow_link(page: Page, link: str, opens: str) -> None:
    """Click ``link`` and wait until the ``<details>`` element ``opens`` is open: the page
    opens it on the hashchange event, which follows the click; and until the case panel
    holding it is filled in from the page's compressed block."""
    page.locator(link).click()
    page.wait_for_function(
        "(selector) => { const e = document.querySelector(selector); return e && e.open; }",
        arg=opens,
        timeout=5000,
    )
    wait_filled(page, opens)


def wait_filled(page: Page, selector: str) -> None:
    """Wait until the case panel ``selector`` is (or is inside) has been filled in."""
    page.wait_for_function(
        """(selector) => { const e = document.querySelector(selector);
        const p = e && e.closest('details.case-panel');
        return !p || p.hasAttribute('data-loaded'); }""",
        arg=selector,
        timeout=5000,
    )


def open_file(page: Page, path: Path) -> Opened:
    """Open a local file and wait for its load event; the timings."""
    started = time.perf_counter()
    page.goto(path.resolve().as_uri(), wait_until="load")
    wall = time.perf_counter() - started
    timing: dict[str, Any] = page.evaluate(
        "() => { const n = performance.getEntriesByType('navigation')[0];"
        " return {dcl: n.domContentLoadedEventEnd, load: n.loadEventEnd}; }"
    )
    return Opened(wall, float(timing["dcl"]), float(timing["load"]))


@pytest.fixture(scope="session")
def chromium_browser() -> Iterator[Browser]:
    """One headless Chromium per test process (per xdist worker)."""
    reason = unavailable()
    if reason is not None:
        pytest.skip(reason)
    from playwright.sync_api import sync_playwright

    executable = find_chromium()
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, args=list(LAUNCH_ARGS))
        try:
            yield browser
        finally:
            browser.close()


@pytest.fixture
def page_errors() -> PageErrors:
    return PageErrors()


@pytest.fixture
def browser_page(chromium_browser: Browser, page_errors: PageErrors) -> Iterator[Page]:
    """A fresh page in its own context (no state shared between tests), offline: the
    report must need no network; errors go to the ``page_errors`` fixture."""
    context = chromium_browser.new_context(offline=True)
    page = context.new_page()
    page_errors.attach(page)
    try:
        yield page
    finally:
        context.close()
