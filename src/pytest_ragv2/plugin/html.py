"""pytest-html integration: per-run columns and the verdict, gates and systems on top.

Registered only when pytest-html writes a report (``--html``); every hook is optional, so
the plugin loads without pytest-html. The controller aggregates in a tryfirst sessionfinish, before
pytest-html's trylast sessionfinish writes the file, so the summary is complete there.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

import pytest

from pytest_ragv2.deciding.records import ChatRecord, RetrievalRecord, RunRecord, as_record
from pytest_ragv2.deciding.verdict import GateResult
from pytest_ragv2.layers.registry import layer_info
from pytest_ragv2.report.case_html import case_anchor, gold_marks_html, items_html
from pytest_ragv2.report.case_view import GoldMark, listed_from_record, outcome_of
from pytest_ragv2.report.excerpts import ELLIPSIS, excerpt
from pytest_ragv2.report.model import Summary
from pytest_ragv2.report.page import table_html
from pytest_ragv2.report.safe_text import html_escape as escape
from pytest_ragv2.report.tables import answer_system_table, gate_table, system_table

# "{k}": the gates' recall_k
COLUMNS = ("System", "Case", "Lang", "Rep", "R@{k}", "MRR", "Latency ms")
CHAT_COLUMNS = ("System", "Case", "Lang", "Rep", "Exact", "Rubric", "Vetoes", "Latency s")
# a session of a retrieval and a chat layer: every column named for the layer it is of
MIXED_COLUMNS = (
    "System", "Case", "Lang", "Rep", "Layer", "A: R@{k}", "A: MRR", "B/C: Exact", "B/C: Rubric",
    "B/C: Vetoes", "Latency s",
)  # fmt: skip
REASONS_SHOWN = 20
# pytest-html's page has none of report.html's stylesheet: the gates' decisions coloured
GATE_STYLE = (
    "<style>.ragv2-gates td.PASS{background:#dafbe1}"
    ".ragv2-gates td.FAIL{background:#ffebe9;font-weight:600}"
    ".ragv2-gates td.SKIP{background:#fff8c5}</style>"
)
ANSWER_CHARS = 600


def _cell(value: Any) -> str:
    if value is None:
        return "<td>—</td>"
    if isinstance(value, float):
        return f"<td>{value:.3f}</td>"
    return f"<td>{escape(str(value))}</td>"


class Decided(Protocol):
    """What the report needs of the session's decision once it is made (the controller)."""

    @property
    def summary(self) -> Summary | None: ...

    @property
    def gates(self) -> Sequence[GateResult]: ...


TEST_ID_CELL = '<td class="col-testId">'


def _escape_test_id(report: pytest.TestReport, cells: list[str]) -> None:
    """pytest-html puts the node id into its row as HTML, unescaped, and its page inserts the
    row with innerHTML: a case file named ``<img src=x onerror=…>.yaml`` would run script.
    The plugin writes that cell again, escaped (only where it is the cell pytest-html made)."""
    if len(cells) > 1 and cells[1].startswith(TEST_ID_CELL):
        test_id = report.nodeid if report.when == "call" else f"{report.nodeid}::{report.when}"
        cells[1] = f"{TEST_ID_CELL}{escape(test_id)}</td>"


class HtmlHooks:
    def __init__(
        self,
        decided: Decided,
        layers: Sequence[str],
        recall_k: int = 5,
        pages: Mapping[str, str] | None = None,
    ) -> None:
        self._controller = decided
        # layer -> report.html of that layer, as a link from pytest-html's page
        self._pages = dict(pages or {})
        chat = [layer_info(layer).chat for layer in layers]
        self._chat = any(chat)
        self._mixed = any(chat) and not all(chat)
        columns = MIXED_COLUMNS if self._mixed else CHAT_COLUMNS if self._chat else COLUMNS
        self._columns = tuple(name.format(k=recall_k) for name in columns)
        self._recall = f"recall@{recall_k}"

    @pytest.hookimpl(tryfirst=True)  # before pytest-html reads the report's extras
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """pytest-html's Links column: the run's case panel in report.html."""
        data = getattr(report, "ragv2", None)
        if data is None or report.when != "call":
            return
        key = as_record(data).key
        page = self._pages.get(key.layer)
        if page is None:
            return
        try:
            from pytest_html import extras
        except ImportError:  # pragma: no cover - registered only with pytest-html
            return
        link = extras.url(f"{page}#{case_anchor(key.case)}", name="case panel")
        report.extras = [*getattr(report, "extras", []), link]  # type: ignore[attr-defined]

    @pytest.hookimpl(optionalhook=True)
    def pytest_html_results_table_header(self, cells: list[str]) -> None:
        cells[2:2] = [f"<th>{name}</th>" for name in self._columns]

    @pytest.hookimpl(optionalhook=True)
    def pytest_html_results_table_row(self, report: pytest.TestReport, cells: list[str]) -> None:
        _escape_test_id(report, cells)
        data = getattr(report, "ragv2", None)
        if data is None:
            cells[2:2] = ["<td></td>"] * len(self._columns)
            return
        record = as_record(data)
        key = record.key
        where = [_cell(key.system), _cell(key.case), _cell(key.lang), _cell(key.rep)]
        if self._mixed:
            chat = isinstance(record, ChatRecord)
            row = [
                *where,
                _cell(key.layer),
                *([_cell(None)] * 2 if chat else _retrieval_cells(record, self._recall)),
                *(_chat_cells(record) if isinstance(record, ChatRecord) else [_cell(None)] * 3),
                _cell(record.latency_s),
            ]
        elif isinstance(record, ChatRecord):
            row = [*where, *_chat_cells(record), _cell(record.latency_s)]
        else:
            row = [*where, *_retrieval_cells(record, self._recall), _cell(record.latency_s * 1000)]
        # a session of several layers shows every run under one header: as many cells
        width = len(self._columns)
        cells[2:2] = (row + ["<td></td>"] * width)[:width]

    @pytest.hookimpl(optionalhook=True)
    def pytest_html_results_table_html(self, report: pytest.TestReport, data: list[str]) -> None:
        """The run's extras under its row: what report.html's case panel shows of it."""
        record = getattr(report, "ragv2", None)
        if record is not None and report.when == "call":
            data.append(run_extras_html(as_record(record)))

    @pytest.hookimpl(optionalhook=True)
    def pytest_html_results_summary(
        self, prefix: list[str], summary: list[str], postfix: list[str], session: Any
    ) -> None:
        result = self._controller.summary
        if result is None:
            return
        verdict = result.verdict.upper()
        prefix.append(
            f"<h2>pytest-ragv2 layer {escape(result.layer)}: verdict {verdict} "
            f"(exit status {result.exit_status})</h2>"
            f"<p>run {escape(result.run_id)}, seed {result.seed}</p>"
        )
        prefix.append(
            GATE_STYLE
            + "<h3>Gates</h3><div class='ragv2-gates'>"
            + table_html(gate_table(self._controller.gates), decision_column=3)
            + "</div>"
        )
        table = answer_system_table if self._chat else system_table
        prefix.append("<h3>Systems</h3>" + table_html(table(result.systems)))


def _retrieval_cells(record: RunRecord, recall: str) -> list[str]:
    return [_cell(record.metric(recall)), _cell(record.metric("mrr"))]


def _chat_cells(record: ChatRecord) -> list[str]:
    return [
        _cell(record.metric("exact_answer")),
        _cell(record.rubric.get("overall", record.skipped)),
        _cell(", ".join(veto.kind for veto in record.vetoes) or None),
    ]


def run_extras_html(record: RunRecord) -> str:
    """One run as pytest-html shows it under its row, from its record alone (escaped): why
    it was skipped or did not meet its case, its ranked list with the gold hits marked
    (layer A), the beginning of its answer, the claims it missed or made and its vetoes."""
    parts = [
        f"<p><b>pytest-ragv2</b> {escape(record.key.item_name)} ({escape(record.role)}): "
        f"{escape(outcome_of(record))}; the whole run is in report.html's case panel "
        f"#{escape(case_anchor(record.key.case))}</p>"
    ]
    if record.skipped:
        parts.append(f"<p class='skip-reason'>Skipped: {escape(record.skipped)}</p>")
    shown = record.reasons[:REASONS_SHOWN]
    if shown:
        more = len(record.reasons) - len(shown)
        parts.append(
            "<ul class='reasons'>"
            + "".join(f"<li>{escape(reason)}</li>" for reason in shown)
            + (f"<li>{escape(ELLIPSIS)} and {more} more, in report.html</li>" if more else "")
            + "</ul>"
        )
    if isinstance(record, RetrievalRecord):
        listed = listed_from_record(record, raw_missing=False)  # the raw run is on disk
        parts.append(items_html(listed, "the raw runs", "Top items"))
    if isinstance(record, ChatRecord):
        marks = [GoldMark("required claim", text, False) for text in record.claims_missed]
        marks += [
            GoldMark("forbidden claim", text, False, "made") for text in record.claims_forbidden
        ]
        parts.append(gold_marks_html(marks))
        if record.answer is not None:
            parts.append(
                f"<p><b>Answer</b> (beginning)</p><blockquote class='answer'>"
                f"{escape(excerpt(record.answer, ANSWER_CHARS))}</blockquote>"
            )
        if record.cited_files:
            parts.append(f"<p>Cited: {escape(', '.join(record.cited_files))}</p>")
        if record.vetoes:
            parts.append(
                "<ul class='vetoes'>"
                + "".join(
                    f"<li class='claim-missed'>VETO {escape(veto.kind)}: {escape(veto.text)}</li>"
                    for veto in record.vetoes
                )
                + "</ul>"
            )
    return f"<div class='ragv2-run'>{''.join(parts)}</div>"
