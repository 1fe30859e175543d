"""``--ragv2-plan``: what a session would run and how long it would take, running nothing.

The items are collected as for a real session; the expected duration of each layer and
system is its item count × the median latency of that system at that layer in the newest
raw-run folder holding such runs. Retrieval items run one after another (spread over the
workers under xdist); chat-layer items of one inference slot never overlap, so a slot's
items add up, and different slots overlap only under xdist.
"""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from pytest_ragv2.layers.registry import layer_info
from pytest_ragv2.plugin.collect import CaseItem
from pytest_ragv2.run.keys import RunKey
from pytest_ragv2.run.rawruns import raw_run_files, read_raw_runs

Pair = tuple[str, str]  # (system, layer)


@dataclass(frozen=True, slots=True)
class Latency:
    median_s: float
    runs: int
    run_dir: Path


def _run_files(raw_runs: Path) -> list[tuple[float, Path]]:
    """The raw-run folders under ``raw_runs``, newest first (by their runs files' times)."""
    found: list[tuple[float, Path]] = []
    if not raw_runs.is_dir():
        return found
    for folder in raw_runs.iterdir():
        files = raw_run_files(folder) if folder.is_dir() else []
        if files:
            found.append((max(path.stat().st_mtime for path in files), folder))
    found.sort(key=lambda entry: entry[0], reverse=True)
    return found


def _latencies(folder: Path, wanted: set[Pair]) -> dict[Pair, list[float]]:
    latencies: dict[Pair, list[float]] = {}
    try:
        for run in read_raw_runs(folder):
            key = run.get("key") if isinstance(run, dict) else None
            latency = run.get("latency_s") if isinstance(key, dict) else None
            if not isinstance(latency, int | float) or isinstance(latency, bool):
                continue  # a skipped run, or no latency recorded
            pair = (str(key.get("system")), str(key.get("layer")))  # type: ignore[union-attr]
            if pair in wanted:
                latencies.setdefault(pair, []).append(float(latency))
    except (OSError, ValueError):
        pass  # a folder being written, or damaged: what was read stands
    return latencies


def latest_latencies(raw_runs: Path, wanted: Iterable[Pair]) -> dict[Pair, Latency]:
    """Per (system, layer): the median latency in the newest folder holding such runs."""
    missing = set(wanted)
    found: dict[Pair, Latency] = {}
    for _, folder in _run_files(raw_runs):
        if not missing:
            break
        for pair, values in _latencies(folder, missing).items():
            found[pair] = Latency(statistics.median(values), len(values), folder)
            missing.discard(pair)
    return found


@dataclass(slots=True)
class LayerPlan:
    layer: str
    items: Counter[str] = field(default_factory=Counter)  # system -> items

    @property
    def total(self) -> int:
        return sum(self.items.values())


def count_items(items: Sequence[pytest.Item], layers: Sequence[str]) -> dict[str, LayerPlan]:
    return count_keys((item.key for item in items if isinstance(item, CaseItem)), layers)


def count_keys(keys: Iterable[RunKey], layers: Sequence[str]) -> dict[str, LayerPlan]:
    plans = {layer: LayerPlan(layer) for layer in layers}
    for key in keys:
        plans.setdefault(key.layer, LayerPlan(key.layer)).items[key.system] += 1
    return plans


def narrowed(config: pytest.Config) -> bool:
    """Whether pytest's own options narrow the collected items (-k, -m, --deselect, --lf,
    paths on the command line): the plan then counts collected items."""
    return bool(
        config.option.keyword
        or config.option.markexpr
        or getattr(config.option, "deselect", None)
        or getattr(config.option, "lf", False)
        or config.args_source == pytest.Config.ArgsSource.ARGS
    )


def seconds(value: float) -> str:
    """``0.42`` -> ``0.42 s``, ``754`` -> ``12 min 34 s``, ``7260`` -> ``2 h 1 min``."""
    if value < 60:
        return f"{value:.2g} s" if value < 10 else f"{value:.0f} s"
    minutes, secs = divmod(round(value), 60)
    if minutes < 60:
        return f"{minutes} min {secs} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes} min"


def render_plan(
    plans: Mapping[str, LayerPlan],
    slots: Mapping[str, str],
    latencies: Mapping[Pair, Latency],
    *,
    workers: int,
    rootdir: Path,
    budget_minutes: float | None = None,
) -> list[str]:
    """The plan as terminal lines (see the module docstring for the arithmetic)."""
    lines: list[str] = []
    total = 0.0
    unknown = 0
    known = 0
    for layer, plan in plans.items():
        info = layer_info(layer)
        lines.append(f"layer {layer} ({info.title}): {plan.total} item(s)")
        width = max((len(name) for name in plan.items), default=6)
        estimates: dict[str, float] = {}
        for system, count in sorted(plan.items.items()):
            latency = latencies.get((system, layer))
            if latency is None:
                unknown += count
                lines.append(
                    f"  {system:<{width}}  {count:>6} item(s)  "
                    f"no earlier runs of {system} at layer {layer}"
                )
                continue
            known += count
            estimates[system] = count * latency.median_s
            lines.append(
                f"  {system:<{width}}  {count:>6} item(s) × median {seconds(latency.median_s)} "
                f"= {seconds(estimates[system])}  (from {latency.runs} run(s) in "
                f"{_relative(latency.run_dir, rootdir)})"
            )
        layer_s = _layer_duration(lines, info.chat, estimates, slots, workers)
        total += layer_s
        if estimates:
            lines.append(f"  layer {layer}: about {seconds(layer_s)}")
    if not known:
        lines.append("expected duration: unknown (no earlier runs to estimate it from)")
        return lines
    note = f"; {unknown} item(s) without an estimate are not counted" if unknown else ""
    lines.append(f"expected duration: about {seconds(total)}{note}")
    if budget_minutes is not None:
        fits = "fits in it" if total <= budget_minutes * 60 else "exceeds it"
        lines.append(f"budget: {budget_minutes:g} min (--ragv2-max-minutes); the estimate {fits}")
    return lines


def _layer_duration(
    lines: list[str],
    chat: bool,
    estimates: Mapping[str, float],
    slots: Mapping[str, str],
    workers: int,
) -> float:
    serial = sum(estimates.values())
    if not chat:
        if workers > 1:
            lines.append(f"  retrieval items spread over {workers} xdist workers")
            return serial / workers
        return serial
    by_slot: dict[str, float] = {}
    for system, estimate in estimates.items():
        slot = slots.get(system, "default")
        by_slot[slot] = by_slot.get(slot, 0.0) + estimate
    for slot, estimate in by_slot.items():
        names = ", ".join(name for name in estimates if slots.get(name, "default") == slot)
        lines.append(
            f"  inference slot {slot} ({names}): {seconds(estimate)}, its items one at a time"
        )
    if workers > 1 and len(by_slot) > 1:
        lines.append(f"  slots run in parallel on {workers} xdist workers: the longest slot counts")
        return max(max(by_slot.values()), serial / workers)
    if len(by_slot) > 1:
        lines.append("  slots run one after another: in parallel only under xdist (-n)")
    return serial


def _relative(path: Path, root: Path) -> Path:
    try:
        return path.relative_to(root)
    except ValueError:
        return path


class PlanHooks:
    """Registered instead of the controller under ``--ragv2-plan``: collection happens as
    usual, then the plan is printed and no item runs."""

    def __init__(
        self,
        layers: Sequence[str],
        slots: Mapping[str, str],
        raw_runs: Path,
        rootdir: Path,
        workers: int,
        budget_minutes: float | None = None,
        planned: Callable[[], Iterable[RunKey]] | None = None,
    ) -> None:
        self.layers = tuple(layers)
        self.slots = dict(slots)
        self.raw_runs = raw_runs
        self.rootdir = rootdir
        self.workers = workers
        self.budget_minutes = budget_minutes
        # the runs read from the catalog, when nothing narrows the selection: no item made
        self.planned = planned
        self.counted: dict[str, LayerPlan] | None = None

    @pytest.hookimpl(tryfirst=True)
    def pytest_collection(self, session: pytest.Session) -> bool | None:
        if self.planned is None:
            return None  # pytest collects, and the plan counts its items
        self.counted = count_keys(self.planned(), self.layers)
        session.testscollected = sum(plan.total for plan in self.counted.values())
        return True

    def lines(self, items: Sequence[pytest.Item]) -> list[str]:
        plans = self.counted if self.counted is not None else count_items(items, self.layers)
        wanted = {(system, layer) for layer, plan in plans.items() for system in plan.items}
        latencies = latest_latencies(self.raw_runs, wanted)
        return render_plan(
            plans,
            self.slots,
            latencies,
            workers=self.workers,
            rootdir=self.rootdir,
            budget_minutes=self.budget_minutes,
        )

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtestloop(self, session: pytest.Session) -> bool:
        write: Callable[[str], Any] = print
        reporter = session.config.pluginmanager.getplugin("terminalreporter")
        if reporter is not None:
            reporter.write_sep("=", f"pytest-ragv2 plan — layer {','.join(self.layers)}")
            write = reporter.write_line
        for line in self.lines(session.items):
            write(line)
        write("nothing was run (--ragv2-plan)")
        return True
