"""The terminal summary: tables, the runs that missed, the gates, and the verdict last.

Everything fits the terminal's width (120 columns when pytest cannot tell): tables wrap
their text columns or split into column groups, long lines are cut at a word with an
ellipsis, and every list is capped with a pointer to where the whole of it is.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pytest_ragv2.deciding.records import ChatRecord, RunRecord
from pytest_ragv2.deciding.verdict import GateResult
from pytest_ragv2.layers.registry import layer_info
from pytest_ragv2.report.excerpts import excerpt
from pytest_ragv2.report.safe_text import printable
from pytest_ragv2.report.tables import column_legend, gate_table, metric_sections
from pytest_ragv2.report.text_table import render_text
from pytest_ragv2.run.keys import NOT_DECISIVE
from pytest_ragv2.scoring.metrics import ANSWER_METRICS, RETRIEVAL_METRICS

if TYPE_CHECKING:
    from pytest_ragv2.report.model import Summary

DEFAULT_WIDTH = 120
CASES_SHOWN = 10  # cases listed under "did not meet their case"; the rest in report.html
TABLE_ROWS_SHOWN = 15  # rows of a long table (one per case); every row in report.html
GATE_DETAILS_SHOWN = 5  # detail lines per failing gate; the rest in summary.json


def decisive(role: str) -> bool:
    """A run whose miss means something for the decision: the candidate's (or a system
    with no comparison role)."""
    return role not in NOT_DECISIVE


def clip(text: str, width: int) -> str:
    """One line no wider than ``width``: cut at a word, with an ellipsis."""
    return excerpt(text.replace("\n", " "), width)


@dataclass(frozen=True, slots=True)
class Screen:
    """pytest's terminal reporter as the summary uses it, and the width to fit."""

    raw_write_sep: Callable[..., None]  # (sep, title, **markup)
    raw_write_line: Callable[..., None]  # (line, **markup)
    width: int = DEFAULT_WIDTH
    # pytest's verbosity: -1 (-q) the gates and the verdict only, -2 (-qq) the verdict only
    verbosity: int = 0

    def write_line(self, text: str, **markup: bool) -> None:
        self.raw_write_line(printable(text), **markup)

    def write_sep(self, sep: str, title: str, **markup: bool) -> None:
        self.raw_write_sep(sep, printable(title), **markup)

    def line(self, text: str = "", **markup: bool) -> None:
        self.raw_write_line(clip(printable(text), self.width) if text else "", **markup)

    def wrapped(self, text: str, indent: str = "  ", **markup: bool) -> None:
        """A paragraph wrapped to the width, continuation lines indented; a word wider than
        the line (a path) is kept whole on a line of its own."""
        import textwrap

        for line in textwrap.wrap(
            printable(text),
            self.width,
            subsequent_indent=indent,
            break_on_hyphens=False,
            break_long_words=False,
        ) or [""]:
            self.raw_write_line(line, **markup)

    def table(self, table: Any) -> None:
        """A table fitted to the width; a long one (a row per case) is cut short."""
        header, rows = table
        shown = [[printable(cell) for cell in row] for row in rows[:TABLE_ROWS_SHOWN]]
        for line in render_text(([printable(cell) for cell in header], shown), width=self.width):
            self.raw_write_line(line)
        if len(rows) > TABLE_ROWS_SHOWN:
            self.write_line(f"  … {len(rows) - TABLE_ROWS_SHOWN} more row(s) in report.html")


def _metrics_of(layer: str) -> Sequence[Any]:
    return ANSWER_METRICS if layer_info(layer).chat else RETRIEVAL_METRICS


def _tables(screen: Screen, summary: Summary) -> None:
    if not summary.systems:
        return
    for section, table in metric_sections(summary):
        screen.line()
        screen.wrapped(f"{section}:")
        screen.table(table)
        legend = column_legend(table[0], _metrics_of(summary.layer))
        if legend:
            screen.wrapped("  legend: " + "; ".join(legend), indent="    ")


def _runs_of_system(records: Sequence[RunRecord]) -> list[str]:
    """``demo-v2 ×10 (de, en)``: per system, how many runs missed and in which languages."""
    by_system: dict[str, list[RunRecord]] = {}
    for record in records:
        by_system.setdefault(record.key.system, []).append(record)
    shown = []
    for system, runs in by_system.items():
        langs = ", ".join(sorted({run.key.lang for run in runs}))
        count = f" ×{len(runs)}" if len(runs) > 1 else f" r{runs[0].key.rep}"
        shown.append(f"{system}{count} ({langs})")
    return shown


def _unmet(screen: Screen, records: Sequence[RunRecord], several_layers: bool) -> None:
    """The decisive runs that did not meet their case, grouped by case and capped; the
    baseline's and reference's misses are counted (pytest shows them as xfailed)."""
    missed = [r for r in records if not r.met and not r.skipped]
    if not missed:
        return
    by_case: dict[str, list[RunRecord]] = {}
    others = 0
    for record in missed:
        if decisive(record.role):
            name = f"{record.key.layer}:{record.key.case}" if several_layers else record.key.case
            by_case.setdefault(name, []).append(record)
        else:
            others += 1
    runs = sum(len(found) for found in by_case.values())
    screen.line()
    heading = (
        f"runs that did not meet their case: {runs} in {len(by_case)} case(s)"
        if by_case
        else "every decisive run met its case"
    )
    if others:
        heading += f"; {others} baseline/reference run(s) missed too (xfailed: they decide nothing)"
    screen.wrapped(heading + (":" if by_case else ""))
    width = max((len(name) for name in by_case), default=0)
    for name in list(by_case)[:CASES_SHOWN]:
        found = by_case[name]
        labels = ", ".join(_runs_of_system(found))
        reason = found[0].reasons[0] if found[0].reasons else "did not meet its case"
        screen.line(f"  {name.ljust(width)}  {labels} — {reason}")
    if len(by_case) > CASES_SHOWN:
        screen.line(f"  … {len(by_case) - CASES_SHOWN} more case(s) in report.html")


def _review_queue(screen: Screen, records: Sequence[RunRecord]) -> None:
    """The runs the scorer left to a reviewer, capped; summary.json lists every one."""
    waiting = [r for r in records if isinstance(r, ChatRecord) and r.review]
    if not waiting:
        return
    screen.line()
    screen.wrapped(
        f"review queue: {len(waiting)} run(s) the scorer could not decide (rule on them in "
        "gold/adjudications.yaml, then `ragv2 rescore`):"
    )
    for record in waiting[:CASES_SHOWN]:
        screen.wrapped(f"  {record.key.item_name} ({record.role}) — {'; '.join(record.review)}")
    if len(waiting) > CASES_SHOWN:
        screen.line(f"  … {len(waiting) - CASES_SHOWN} more in summary.json")


def _gates(screen: Screen, gates: Sequence[GateResult], title: str) -> None:
    screen.line()
    screen.line(f"{title}:")
    screen.table(gate_table(gates))
    for gate in gates:
        if gate.decision == "fail" and gate.details:
            screen.line(f"  {gate.name}:")
            for detail in gate.details[:GATE_DETAILS_SHOWN]:
                screen.line(f"    {detail}")
            if len(gate.details) > GATE_DETAILS_SHOWN:
                screen.line(f"    … {len(gate.details) - GATE_DETAILS_SHOWN} more in summary.json")


def _waiting(gates: Iterable[GateResult]) -> int:
    """Runs that wait for a reviewer's ruling, over the ``review_settled`` gates."""
    return sum(int(gate.value) for gate in gates if gate.name == "review_settled" and gate.value)


def _verdict(
    screen: Screen, first: Summary, failed: Sequence[str], passing: str, waiting: int = 0
) -> None:
    verdict = first.session_verdict
    names = ", ".join(failed)
    if verdict == "interrupted":
        text = "verdict: INTERRUPTED — no promotion decision (partial results written)"
    elif verdict == "stopped":
        text = "verdict: STOPPED — the raw runs could not be written: no promotion decision"
    elif verdict == "incomplete":
        budget = first.budget
        minutes = budget.minutes if budget is not None else 0.0
        not_started = budget.runs_not_started if budget is not None else "?"
        text = (
            f"verdict: INCOMPLETE — the budget of {minutes:g} min was "
            f"spent and {not_started} run(s) were not started: "
            f"not a pass; gate(s) failed: {names or 'none'}"
        )
    elif verdict == "partial":
        shard = first.shard
        which = f"shard {shard.shard.label}, " if shard is not None else ""
        text = (
            f"verdict: PARTIAL — {which}one share of the run, not a decision: "
            "`ragv2 merge` of every shard's raw runs decides"
        )
    elif verdict == "review":
        text = (
            f"verdict: REVIEW — {waiting} run(s) need a ruling (gold/adjudications.yaml; "
            "then `ragv2 rescore`): not promotable until ruled"
        )
    elif failed:
        text = f"verdict: FAIL — {len(failed)} gate(s) failed: {names}"
    else:
        text = f"verdict: PASS — {passing}"
    text += f" (exit status {first.exit_status})"
    ok = verdict == "pass"
    if len(text) > screen.width - 4:  # the separator line needs room for its "= " ends
        # the whole sentence wrapped, then the separator line with its first words
        screen.wrapped(text, green=ok, red=not ok, bold=True)
        text = clip(text.split(" — ")[0] + f" (exit status {first.exit_status})", screen.width)
    screen.write_sep("=", text, green=ok, red=not ok, bold=True)


def _adjudication(screen: Screen, summary: Summary) -> None:
    if not summary.adjudication:
        return
    try:
        from pytest_ragv2.report.adjudication import adjudication_lines
    except ImportError:
        return
    screen.line()
    for line in adjudication_lines(summary):
        screen.line(line)


def write_terminal_summary(
    screen: Screen,
    summary: Summary,
    gates: Sequence[GateResult],
    locations: Sequence[str],
    records: Sequence[RunRecord] = (),
) -> None:
    failed = [gate.name for gate in gates if gate.decision == "fail"]
    if screen.verbosity < 0:
        if screen.verbosity == -1:
            _gates(screen, gates, "gates")
        _verdict(screen, summary, failed, "every promotion gate holds", _waiting(gates))
        return
    screen.write_sep("=", f"pytest-ragv2 layer {summary.layer} — run {summary.run_id}")
    screen.wrapped(
        f"seed {summary.seed} (reproduce the order with --ragv2-seed={summary.seed}); "
        f"runs recorded {summary.runs_recorded}"
        + (f" of {summary.runs_expected}" if summary.runs_expected is not None else "")
    )
    _tables(screen, summary)
    _unmet(screen, records, several_layers=False)
    _review_queue(screen, records)
    screen.line()
    for location in locations:
        screen.wrapped(location)
    _adjudication(screen, summary)
    _gates(screen, gates, "gates")
    _verdict(screen, summary, failed, "every promotion gate holds", _waiting(gates))


def write_session_summary(
    screen: Screen,
    summaries: Mapping[str, Summary],
    gates_by_layer: Mapping[str, Sequence[GateResult]],
    locations: Sequence[str],
    records: Sequence[RunRecord] = (),
) -> None:
    """A session of several layers: each layer's tables, the runs that missed, then every
    layer's gates together and one verdict."""
    quiet = screen.verbosity < 0
    for layer, summary in summaries.items() if not quiet else ():
        screen.write_sep("=", f"pytest-ragv2 layer {layer} — run {summary.run_id}")
        _tables(screen, summary)
    if not quiet:
        _unmet(screen, records, several_layers=True)
        _review_queue(screen, records)
        screen.line()
        for location in locations:
            screen.wrapped(location)
        for summary in summaries.values():
            _adjudication(screen, summary)
    for layer, gates in gates_by_layer.items() if screen.verbosity >= -1 else ():
        _gates(screen, gates, f"gates of layer {layer}")
    failed = [
        f"{layer}:{gate.name}"
        for layer, gates in gates_by_layer.items()
        for gate in gates
        if gate.decision == "fail"
    ]
    layers = ", ".join(summaries)
    first = next(iter(summaries.values()))
    _verdict(
        screen,
        first,
        failed,
        f"every promotion gate of layers {layers} holds",
        _waiting(gate for gates in gates_by_layer.values() for gate in gates),
    )


def summary_counts(gates: Sequence[GateResult]) -> dict[str, int]:
    """What pytest's final line counts besides its items: the failed gates, so
    ``3 passed, 1 gate failed`` says why the exit status is 1."""
    failed = sum(1 for gate in gates if gate.decision == "fail")
    if not failed:
        return {}
    return {"gate failed" if failed == 1 else "gates failed": failed}
