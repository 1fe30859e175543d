"""The terminal summary: per-system metrics, breakdowns, gates and the verdict."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

from pytest_ragv2.gates import GateResult
from pytest_ragv2.report.tables import gate_table, metric_sections, render_text

if TYPE_CHECKING:
    from pytest_ragv2.report.summary import Summary


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
    if summary.systems:
        for title, table in metric_sections(summary):
            write_line("")
            write_line(f"{title}:")
            for line in render_text(table):
                write_line(line)
    write_line("")
    write_line("gates:")
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
    for location in locations:
        write_line(location)
    failed = [gate.name for gate in gates if gate.decision == "fail"]
    if summary.verdict == "interrupted":
        text = "verdict: INTERRUPTED — no promotion decision (partial results written)"
    elif failed:
        text = f"verdict: FAIL — {len(failed)} gate(s) failed: {', '.join(failed)}"
    else:
        text = "verdict: PASS — every promotion gate holds"
    write_sep("=", f"{text} (exit status {summary.exit_status})")


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
        if summary.systems:
            for title, table in metric_sections(summary):
                write_line("")
                write_line(f"{title}:")
                for line in render_text(table):
                    write_line(line)
        write_line("")
        write_line(f"gates of layer {layer}:")
        for line in render_text(gate_table(gates_by_layer[layer])):
            write_line(line)
        for gate in gates_by_layer[layer]:
            if gate.decision == "fail" and gate.details:
                write_line(f"  {gate.name}:")
                for detail in gate.details[:20]:
                    write_line(f"    {detail}")
                if len(gate.details) > 20:
                    write_line(f"    … {len(gate.details) - 20} more in summary.json")
        write_line("")
    for location in locations:
        write_line(location)
    first = next(iter(summaries.values()))
    failed = [
        f"{layer}:{gate.name}"
        for layer, gates in gates_by_layer.items()
        for gate in gates
        if gate.decision == "fail"
    ]
    if first.verdict == "interrupted":
        text = "verdict: INTERRUPTED — no promotion decision (partial results written)"
    elif failed:
        text = f"verdict: FAIL — {len(failed)} gate(s) failed: {', '.join(failed)}"
    else:
        text = f"verdict: PASS — every promotion gate of layers {', '.join(summaries)} holds"
    write_sep("=", f"{text} (exit status {first.exit_status})")
