"""The terminal summary: per-system metrics, breakdowns, gates and the verdict."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

from pytest_ragv2.gates import GateResult
from pytest_ragv2.report.tables import gate_table, metric_sections, render_text

if TYPE_CHECKING:
    from pytest_ragv2.report.summary import Summary


def _layer_body(
    write_line: Callable[[str], None], summary: Summary, gates: Sequence[GateResult], title: str
) -> None:
    """One layer's metric tables and gates (with the failing gates' details)."""
    if summary.systems:
        for section, table in metric_sections(summary):
            write_line("")
            write_line(f"{section}:")
            for line in render_text(table):
                write_line(line)
    write_line("")
    write_line(f"{title}:")
    for line in render_text(gate_table(gates)):
        write_line(line)
    for gate in gates:
        if gate.decision == "fail" and gate.details:
            write_line(f"  {gate.name}:")
            for detail in gate.details[:20]:
                write_line(f"    {detail}")
            if len(gate.details) > 20:
                write_line(f"    … {len(gate.details) - 20} more in summary.json")
    write_line("")


def _verdict_line(
    write_sep: Callable[[str, str], None],
    first: Summary,
    failed: Sequence[str],
    passing: str,
) -> None:
    verdict = first.extras.get("session", {}).get("verdict", first.verdict)
    if verdict == "interrupted":
        text = "verdict: INTERRUPTED — no promotion decision (partial results written)"
    elif verdict == "incomplete":
        budget = first.extras.get("budget", {})
        text = (
            f"verdict: INCOMPLETE — the budget of {float(budget.get('max_minutes', 0)):g} min was "
            f"spent and {budget.get('runs_not_started', '?')} run(s) were not started: "
            f"not a pass; gate(s) failed: {', '.join(failed) or 'none'}"
        )
    elif failed:
        text = f"verdict: FAIL — {len(failed)} gate(s) failed: {', '.join(failed)}"
    else:
        text = f"verdict: PASS — {passing}"
    write_sep("=", f"{text} (exit status {first.exit_status})")


def write_terminal_summary(
    write_sep: Callable[[str, str], None],
    write_line: Callable[[str], None],
    summary: Summary,
    gates: Sequence[GateResult],
    locations: Sequence[str],
) -> None:
    write_sep("=", f"pytest-ragv2 layer {summary.layer} — run {summary.run_id}")
    write_line(
        f"seed {summary.seed} (reproduce the order with --ragv2-seed={summary.seed}); "
        f"runs recorded {summary.runs_recorded}"
        + (f" of {summary.runs_expected}" if summary.runs_expected is not None else "")
    )
    _layer_body(write_line, summary, gates, "gates")
    for location in locations:
        write_line(location)
    failed = [gate.name for gate in gates if gate.decision == "fail"]
    _verdict_line(write_sep, summary, failed, "every promotion gate holds")


def write_session_summary(
    write_sep: Callable[[str, str], None],
    write_line: Callable[[str], None],
    summaries: Mapping[str, Summary],
    gates_by_layer: Mapping[str, Sequence[GateResult]],
    locations: Sequence[str],
) -> None:
    """A session of several layers: each layer's tables and gates, then one verdict."""
    for layer, summary in summaries.items():
        write_sep("=", f"pytest-ragv2 layer {layer} — run {summary.run_id}")
        _layer_body(write_line, summary, gates_by_layer[layer], f"gates of layer {layer}")
    for location in locations:
        write_line(location)
    failed = [
        f"{layer}:{gate.name}"
        for layer, gates in gates_by_layer.items()
        for gate in gates
        if gate.decision == "fail"
    ]
    layers = ", ".join(summaries)
    first = next(iter(summaries.values()))
    _verdict_line(write_sep, first, failed, f"every promotion gate of layers {layers} holds")
