"""report.html in headless Chromium: the sections a reviewer reads are there and visible,
the plots are drawn, hostile text from a system stays text, and a 5,000-run report opens
in seconds. Skipped, with the reason, where no Chromium or playwright is available
(tests/browser.py)."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pytest_ragv2.tools.cli import main
from tests.browser import PageErrors, open_file, wait_filled

if TYPE_CHECKING:
    from playwright.sync_api import Page

pytestmark = pytest.mark.browser

PAGE_LIMIT_MB = 8.0  # a 5,000-run layer-A report (5.0 MB when this was written)
ELEMENT_LIMIT = 150_000  # its elements (116,000)
PANELS_PENDING = "report.html panels not built yet"
PLOTS_PENDING = "report.html plots not built yet"


def summary_of(pytester: pytest.Pytester, run_id: str) -> dict[str, Any]:
    path = pytester.path / "reports" / run_id / "summary.json"
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def failing_gates(summary: dict[str, Any]) -> list[str]:
    return [gate["name"] for gate in summary["gates"] if gate["decision"] == "fail"]


def check_banner_and_gates(page: Page, summary: dict[str, Any]) -> None:
    verdict = page.locator("#verdict")
    assert verdict.is_visible()
    banner = verdict.inner_text()
    assert summary["verdict"].upper() in banner.upper()
    failing = failing_gates(summary)
    assert failing, "these sessions are made to fail some gates"
    for name in failing:
        assert name in banner, f"the banner does not name the failing gate {name}"
    gates = page.locator("#gates")
    assert gates.is_visible()
    table = gates.inner_text()
    for gate in summary["gates"]:
        assert gate["name"] in table


def check_plots(page: Page) -> int:
    """The plots are inline SVGs with a drawn size; their number."""
    if page.locator("#plots").count() == 0:
        pytest.xfail(PLOTS_PENDING)
    svgs = page.locator("#plots figure.plot svg")
    count = svgs.count()
    assert count > 0
    for index in range(count):
        box = svgs.nth(index).bounding_box()
        assert box is not None, f"plot {index} is not rendered"
        assert box["width"] > 100, box
        assert box["height"] > 50, box
    return count


def case_panels(page: Page) -> int:
    if page.locator("#cases details.case-panel").count() == 0:
        pytest.xfail(PANELS_PENDING)
    return page.locator("#cases details.case-panel").count()


def open_panel(page: Page, case: str) -> None:
    """Open a case panel and every run in it, as a reviewer's clicks would."""
    page.evaluate(
        """(c) => { const p = document.querySelector(`details.case-panel[data-case="${c}"]`);
        p.open = true; p.querySelectorAll('details').forEach((d) => { d.open = true; }); }""",
        case,
    )
    selector = f'details.case-panel[data-case="{case}"]'
    wait_filled(page, selector)  # its contents come from the page's compressed block
    page.evaluate(
        "(s) => document.querySelector(s).querySelectorAll('details')"
        ".forEach((d) => { d.open = true; })",
        selector,
    )


def visible_runs(page: Page) -> list[dict[str, str | None]]:
    runs: list[dict[str, str | None]] = page.evaluate(
        """() => Array.from(document.querySelectorAll('#cases .run'))
        .filter((r) => !r.hidden && !r.closest('details.case-panel').hidden)
        .map((r) => ({system: r.getAttribute('data-system'),
                      lang: r.getAttribute('data-lang'),
                      outcome: r.getAttribute('data-outcome')}))"""
    )
    return runs


# --- layer A, the bundled benchmark -------------------------------------------------------


def test_layer_a_report_shows_verdict_gates_plots_and_cases(
    bundled: pytest.Pytester, browser_page: Page, page_errors: PageErrors
) -> None:
    bundled.runpytest("--ragv2-layer=A", "--ragv2-run-id=a", "-q")
    summary = summary_of(bundled, "a")
    opened = open_file(browser_page, bundled.path / "reports" / "a" / "report.html")
    print(f"bundled layer-A report.html opened in {opened.wall_s:.2f} s")
    check_banner_and_gates(browser_page, summary)
    assert page_errors.all == []

    check_plots(browser_page)

    panels = case_panels(browser_page)
    assert panels == len({case for rows in summary["by_case"].values() for case in rows})
    unmet = browser_page.locator('#cases details.case-panel[data-outcome="unmet"]')
    assert unmet.count() > 0
    case = unmet.first.get_attribute("data-case")
    assert case
    open_panel(browser_page, case)
    panel = browser_page.locator(f'details.case-panel[data-case="{case}"]')
    assert panel.locator(".run").first.is_visible()
    assert panel.locator(".claim-missed").first.is_visible()  # the evidence that failed it
    # the ranked lists mark gold hits with their granularity
    levels = set(
        panel.locator(".gold-hit[data-level]").evaluate_all(
            "(found) => found.map((e) => e.getAttribute('data-level'))"
        )
    )
    assert levels
    assert levels <= {"document", "file", "page", "section", "row", "full"}

    # the filters: one system, then one outcome
    assert browser_page.locator("#filters").is_visible()
    browser_page.select_option("#filter-system", "demo-v1")
    runs = visible_runs(browser_page)
    assert runs
    assert {run["system"] for run in runs} == {"demo-v1"}
    browser_page.select_option("#filter-system", "")
    browser_page.select_option("#filter-outcome", "met")
    runs = visible_runs(browser_page)
    assert runs
    assert {run["outcome"] for run in runs} == {"met"}
    assert page_errors.all == []


# --- layer B, a system whose output is hostile ---------------------------------------------

HOSTILE = (
    '<img src=x onerror="window.__pwned=1">'
    " </script><script>window.__pwned=2</script>"
    ' <svg onload="window.__pwned=6"></svg> ]]> --> {{7*7}}'
)
HOSTILE_FILE = '<img src=x onerror="window.__pwned=5">.pdf'
HOSTILE_SYSTEM = '<img src=x onerror="window.__pwned=3">'
HOSTILE_CATEGORY = "<script>window.__pwned=4</script>"

CHATBOT = f'''
"""A chat system (Codex JSON lines) whose answers, tool results and citations hold markup."""
import json
import sys

mode, prompt = sys.argv[1], sys.argv[2]
HOSTILE = {HOSTILE!r}
FILE = {HOSTILE_FILE!r}
cited = "datasheet.pdf" if mode == "good" else FILE
answer = f"The maximum pressure is 16 bar ({{cited}}). {{HOSTILE}}"


def emit(event):
    print(json.dumps(event), flush=True)


emit({{"type": "thread.started", "thread_id": "t-1"}})
emit({{"type": "turn.started"}})
emit({{"type": "item.completed", "item": {{
    "id": "item_0", "type": "mcp_tool_call", "server": "kb", "tool": "search",
    "arguments": {{"query": prompt}}, "status": "completed",
    "result": {{"content": [{{"type": "text", "text": f"{{FILE}} p.2: {{HOSTILE}}"}}]}}}}}})
emit({{"type": "item.completed", "item": {{"id": "item_1", "type": "agent_message",
                                          "text": answer}}}})
emit({{"type": "turn.completed", "usage": {{"input_tokens": 10, "output_tokens": 5}}}})
'''

HOSTILE_CASES = f"""\
- id: C01
  category: {json.dumps(HOSTILE_CATEGORY)}
  prompt_en: "What is the maximum pressure? <b>bold</b>"
  expected_answer:
    required_claims: [{{text: "16 bar", number: 16, unit: bar, severity: high}}]
  required_evidence:
    - {{file_id: datasheet, filename: datasheet.pdf, page: 2}}
- id: C02
  category: exact_lookup
  prompt_en: "Which part is the seal kit?"
  expected_answer:
    required_claims: [{{text: "NX-450B", severity: high}}]
  required_evidence:
    - {{file_id: parts, filename: {json.dumps("parts " + HOSTILE_FILE)}, table: Parts, row: 4}}
"""


def hostile_project(pytester: pytest.Pytester) -> None:
    (pytester.path / "chatbot.py").write_text(CHATBOT, encoding="utf-8")
    (pytester.path / "cases").mkdir()
    (pytester.path / "cases" / "development.yaml").write_text(HOSTILE_CASES, encoding="utf-8")

    def chat(mode: str) -> str:
        argv = json.dumps([sys.executable, "chatbot.py", mode, "{prompt}"])
        return f'chat = {{adapter = "command", argv = {argv}, timeout_s = 30}}'

    (pytester.path / "pyproject.toml").write_text(
        textwrap.dedent(
            f"""\
            [tool.ragv2]
            repetitions = 1

            [tool.ragv2.systems.'{HOSTILE_SYSTEM}']
            role = "baseline"
            {chat("hostile")}

            [tool.ragv2.systems.v2]
            role = "candidate"
            {chat("good")}
            """
        ),
        encoding="utf-8",
    )


def test_hostile_text_in_a_layer_b_report_stays_text(
    pytester: pytest.Pytester, browser_page: Page, page_errors: PageErrors
) -> None:
    hostile_project(pytester)
    pytester.runpytest("--ragv2-layer=B", "--ragv2-run-id=b", "-q")
    summary = summary_of(pytester, "b")
    assert set(summary["systems"]) == {HOSTILE_SYSTEM, "v2"}
    page = browser_page
    open_file(page, pytester.path / "reports" / "b" / "report.html")
    check_banner_and_gates(page, summary)

    # nothing ran: no handler fired, no element a hostile string would have made exists
    assert page.evaluate("() => typeof window.__pwned") == "undefined"
    assert page.locator('img[src="x"], svg[onload]').count() == 0
    injected: list[str] = page.evaluate(
        """() => Array.from(document.querySelectorAll('*')).flatMap((e) =>
            Array.from(e.attributes)
              .filter((a) => a.name.startsWith('on'))
              .map((a) => `${e.tagName} ${a.name}=${a.value}`))
          .concat(Array.from(document.scripts)
              .filter((s) => s.textContent.includes('__pwned'))
              .map((s) => 'SCRIPT ' + s.textContent.slice(0, 80)))"""
    )
    assert injected == []
    assert page_errors.all == []

    # ... and every hostile string is on the page as the text it is (what is inside the
    # panels once they are opened, filled in from the compressed block)
    for case in ("C01", "C02"):
        open_panel(page, case)
    text: str = page.evaluate("() => document.body.textContent")
    for hostile in (HOSTILE_SYSTEM, HOSTILE_CATEGORY, HOSTILE_FILE):
        assert hostile in text, hostile
    assert page.evaluate("() => typeof window.__pwned") == "undefined"
    assert page.locator('img[src="x"], svg[onload]').count() == 0
    banner_and_tables = page.locator("body").inner_text()
    assert HOSTILE_SYSTEM in banner_and_tables  # visible, not only in the DOM

    check_plots(page)
    case_panels(page)
    options = page.locator("#filter-system option").all_inner_texts()
    assert HOSTILE_SYSTEM in options
    assert HOSTILE_CATEGORY in page.locator("#filter-category option").all_inner_texts()
    open_panel(page, "C01")
    panel = page.locator('details.case-panel[data-case="C01"]')
    shown = panel.inner_text()
    assert '<img src=x onerror="window.__pwned=1">' in shown  # the whole answer, as text
    assert "</script><script>window.__pwned=2</script>" in shown
    assert panel.locator(".claim-met, .claim-missed").count() > 0
    assert page.evaluate("() => typeof window.__pwned") == "undefined"
    assert page_errors.all == []


# --- a 5,000-run report ----------------------------------------------------------------------

BIG_CASES = 250  # x 2 languages x 2 systems x 5 repetitions = 5,000 runs
BIG_REPS = 5


def big_cases(count: int) -> str:
    lines = []
    for index in range(count):
        if index % 2:
            lines.append(
                f"- id: P{index:03d}\n  category: exact_lookup\n"
                f'  prompt_en: "Which part is the seal kit {index}?"\n'
                f'  prompt_de: "Welches Teil ist der Dichtsatz {index}?"\n'
                "  required_evidence:\n    - {file_id: parts, table: Parts, row: NX-450B}\n"
            )
        else:
            lines.append(
                f"- id: P{index:03d}\n  category: technical_table\n"
                f'  prompt_en: "What is the maximum pressure {index}?"\n'
                f'  prompt_de: "Wie hoch ist der maximale Druck {index}?"\n'
                "  required_evidence:\n"
                "    - {file_id: datasheet, filename: datasheet.pdf, page: 2}\n"
            )
    return "".join(lines)


def synthetic_run(project: pytest.Pytester) -> Path:
    """A real layer-A session's raw runs, multiplied to 5,000 over 250 cases: each raw run
    is a recorded one (same system, language and case kind) under a new case and
    repetition; the manifest is the session's with the new count."""
    project.runpytest("--ragv2-layer=A", "--ragv2-run-id=big", "-q")
    run_dir = project.path / "raw-runs" / "big"
    recorded = [
        json.loads(line)
        for path in sorted(run_dir.glob("runs-*.jsonl"))
        for line in path.read_text(encoding="utf-8").splitlines()
    ]
    template = {
        (raw["key"]["case"], raw["key"]["system"], raw["key"]["lang"]): raw for raw in recorded
    }
    (project.path / "cases" / "development.yaml").write_text(big_cases(BIG_CASES), encoding="utf-8")
    lines = []
    for index in range(BIG_CASES):
        kind = "C02" if index % 2 else "C01"
        for system in ("v1", "v2"):
            for lang in ("en", "de"):
                for rep in range(1, BIG_REPS + 1):
                    raw = dict(template[(kind, system, lang)])
                    raw["key"] = {**raw["key"], "case": f"P{index:03d}", "rep": rep}
                    raw["latency_s"] = 0.01 + 0.001 * ((index * 7 + rep * 3) % 50)
                    lines.append(json.dumps(raw, ensure_ascii=False))
    for path in run_dir.glob("runs-*.jsonl"):
        path.unlink()
    (run_dir / "runs-main.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    manifest_path = run_dir / "manifest.json"
    manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    manifest["expected_runs"] = len(lines)
    if manifest.get("expected_by_layer"):
        manifest["expected_by_layer"] = {"A": len(lines)}
    manifest_path.write_text(json.dumps(manifest), encoding="utf-8")
    return run_dir


def test_a_5000_run_report_opens_with_its_size_and_elements_bounded(
    project: pytest.Pytester,
    browser_page: Page,
    page_errors: PageErrors,
    capsys: pytest.CaptureFixture[str],
) -> None:
    run_dir = synthetic_run(project)
    project.chdir()
    main(["rescore", str(run_dir), "--output", str(project.path / "big-report")])
    report = project.path / "big-report" / "report.html"
    summary = json.loads((project.path / "big-report" / "summary.json").read_text())
    assert summary["runs"] == {"expected": 5000, "recorded": 5000}

    opened = open_file(browser_page, report)
    size_mb = report.stat().st_size / 1e6
    elements = browser_page.evaluate("() => document.getElementsByTagName('*').length")
    with capsys.disabled():
        print(
            f"\n5,000-run report.html ({size_mb:.1f} MB, {elements:,} elements): opened in"
            f" {opened.wall_s:.2f} s (DOMContentLoaded {opened.dom_content_loaded_ms:.0f} ms,"
            f" load {opened.load_ms:.0f} ms)"
        )
    # what the time to open grows with, counted (0.4 s in Chromium on 2 cores for 5.0 MB and
    # 116,000 elements when this was written; the time itself is the benchmarks'): the page's
    # bytes and its elements, with the case panels built lazily as they are opened
    assert size_mb < PAGE_LIMIT_MB, size_mb
    assert elements < ELEMENT_LIMIT, elements
    assert browser_page.locator("#verdict").is_visible()
    assert page_errors.all == []
    if browser_page.locator("#cases").count():
        assert browser_page.locator("#cases details.case-panel").count() == BIG_CASES
