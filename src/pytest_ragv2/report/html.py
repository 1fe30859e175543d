"""pytest-html integration: per-run columns and the verdict, gates and systems on top.

Registered only when pytest-html writes a report (``--html``); every hook is optional, so
the plugin loads without pytest-html. The controller aggregates in a tryfirst sessionfinish, before
pytest-html's trylast sessionfinish writes the file, so the summary is complete there.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape
from typing import Any, Protocol

import pytest

from pytest_ragv2.gates import GateResult
from pytest_ragv2.layer_registry import layer_info
from pytest_ragv2.report.page import table_html
from pytest_ragv2.report.summary import Summary
from pytest_ragv2.report.tables import answer_system_table, gate_table, system_table
from pytest_ragv2.run_record import ChatRecord, as_record

COLUMNS = ("System", "Case", "Lang", "Rep", "R@5", "MRR", "Latency ms")
CHAT_COLUMNS = ("System", "Case", "Lang", "Rep", "Exact", "Rubric", "Vetoes", "Latency s")


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


class HtmlHooks:
    def __init__(self, decided: Decided, layers: Sequence[str]) -> None:
        self._controller = decided
        self._chat = any(layer_info(layer).chat for layer in layers)
        self._columns = CHAT_COLUMNS if self._chat else COLUMNS

    @pytest.hookimpl(optionalhook=True)
    def pytest_html_results_table_header(self, cells: list[str]) -> None:
        cells[2:2] = [f"<th>{name}</th>" for name in self._columns]

    @pytest.hookimpl(optionalhook=True)
    def pytest_html_results_table_row(self, report: pytest.TestReport, cells: list[str]) -> None:
        data = getattr(report, "ragv2", None)
        if data is None:
            cells[2:2] = ["<td></td>"] * len(self._columns)
            return
        record = as_record(data)
        key = record.key
        where = [_cell(key.system), _cell(key.case), _cell(key.lang), _cell(key.rep)]
        if isinstance(record, ChatRecord):
            row = [
                *where,
                _cell(record.metric("exact_answer")),
                _cell(record.rubric.get("overall", record.skipped)),
                _cell(", ".join(veto["kind"] for veto in record.vetoes) or None),
                _cell(record.latency_s),
            ]
        else:
            row = [
                *where,
                _cell(record.metric("recall@5")),
                _cell(record.metric("mrr")),
                _cell(record.latency_s * 1000),
            ]
        # a session of several layers shows every run under one header: as many cells
        width = len(self._columns)
        cells[2:2] = (row + ["<td></td>"] * width)[:width]

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
        prefix.append("<h3>Gates</h3>" + table_html(gate_table(self._controller.gates)))
        table = answer_system_table if self._chat else system_table
        prefix.append("<h3>Systems</h3>" + table_html(table(result.systems)))
