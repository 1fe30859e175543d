"""Every performance target of the plugin, each against a bare pytest partner in the same run.

Each measured pytest-ragv2 session has a bare partner: a parametrized pytest + httpx test
making the same HTTP calls against the same loopback server. The sessions of one target run
interleaved (ragv2, bare, ragv2, bare, ...) and the whole sequence is repeated ``--repeat``
times, so machine noise reaches both sides alike. Every figure is printed as
``median (min–max)`` over the repeats, a ratio or difference is taken per repeat (a ragv2
session against the bare session next to it), and PASS/MISS is judged on its median.

    python benchmarks/bench_targets.py                # full sizes (50,000 items; ~20 min)
    python benchmarks/bench_targets.py --quick        # small sizes, a smoke check (~2.5 min)
    python benchmarks/bench_targets.py --only layer-a,collection --repeat 5

Targets (names for ``--only``):

- layer-a: wall time at most 1.3x the bare test's at 1,000 and at 50,000 items; at most
  0.3 ms added per item (the slope between the two sizes, so the fixed cost stays apart);
- layer-b: at most 1.0 ms added per conversation over a bare chat test (the slope between
  two sizes), and a serial end-to-end run at most 2 % over the model's own latency at
  50 ms per call;
- collection: ``--collect-only`` of 50,000 items at most 1.5x bare pytest's collection of
  50,000 parametrized items;
- memory: peak RSS at most 5 KiB per item over the bare test's (at 5,000 and 50,000 items,
  layer A run in full), and 100,000 items under 1 GiB (extrapolated, or measured with
  ``--memory-items 5000 50000 100000``);
- startup: a one-case session at most 0.3 s over a one-item bare test, at layers A and B
  (external servers: the embedded demo's own start is not counted);
- xdist: ``-n 4`` speeds layer A up at least as much as it speeds the bare test up;
- raw-runs: at most 5 KB (1,000 bytes) of raw runs per conversation on the bundled
  benchmark at layer B with ``-n 2`` (run from the repository root with a configuration
  that sends raw runs and reports to a temporary folder; once, the sizes do not vary).
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import statistics
import sys
import tempfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import (
    REPO,
    bundled_config,
    chat_run_times,
    demo_server,
    measured_pytest,
    serve,
    write_chat_project,
    write_project,
)

from ragv2_demo.server import DemoServer

TARGETS = ("layer-a", "layer-b", "collection", "memory", "startup", "xdist", "raw-runs")
OK = (0,)
VERDICT = (0, 1)  # a session whose gates fail still ran every item (the bundled benchmark)
MIB_PER_GIB = 1024


@dataclass(frozen=True)
class Sizes:
    """The sizes of one profile (full or ``--quick``); every one can be overridden."""

    layer_a: tuple[int, int]
    collection: int
    memory: tuple[int, ...]
    layer_b: tuple[int, int]
    xdist: int
    raw_runs_reps: int | None  # None: the bundled configuration's own repetitions
    repeat: int


FULL = Sizes(
    layer_a=(1000, 50000),
    collection=50000,
    memory=(5000, 50000),
    layer_b=(100, 300),
    xdist=200,
    raw_runs_reps=None,
    repeat=3,
)
QUICK = Sizes(
    layer_a=(200, 1000),
    collection=1000,
    memory=(200, 1000),
    layer_b=(10, 50),
    xdist=200,
    raw_runs_reps=1,
    repeat=2,
)


@dataclass
class Run:
    """One timed pytest session: wall seconds, peak RSS (MiB), CPU seconds (its processes'
    user and system time) and target-specific extras."""

    seconds: float
    peak_mb: float
    cpu_s: float = float("nan")
    extra: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class Row:
    target: str
    ragv2: str
    bare: str
    compared: str
    goal: str
    met: bool | None  # None: information, no target


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def session(root: Path, *args: str, ok: tuple[int, ...] = OK) -> Run:
    """A pytest session in ``root`` (see ``timed_pytest``); an unexpected status stops here."""
    measured = measured_pytest(root, *args)
    if measured.status not in ok:
        raise SystemExit(
            f"pytest {' '.join(args)} exited {measured.status}:\n{measured.out[-3000:]}"
        )
    return Run(measured.seconds, measured.peak_mb, measured.cpu_s)


def remove_run_folders(root: Path) -> None:
    """A ragv2 session's raw runs and reports: gone before the next session (disk, and no
    session reads another's)."""
    for name in ("raw-runs", "reports"):
        shutil.rmtree(root / name, ignore_errors=True)


def interleave(
    name: str, steps: Sequence[tuple[str, Callable[[], Run]]], repeat: int
) -> dict[str, list[Run]]:
    """Every step in order, the whole sequence ``repeat`` times: {step label: its runs}."""
    runs: dict[str, list[Run]] = {label: [] for label, _ in steps}
    for round_ in range(1, repeat + 1):
        for label, step in steps:
            run = step()
            runs[label].append(run)
            log(f"[{name} {round_}/{repeat}] {label}: {run.seconds:.3f} s, {run.peak_mb:.0f} MiB")
    return runs


def spread(values: Sequence[float], unit: Callable[[float], str]) -> str:
    """``median (min–max)``, or the one value."""
    if len(values) == 1:
        return unit(values[0])
    middle = statistics.median(values)
    return f"{unit(middle)} ({unit(min(values))}–{unit(max(values))})"


def seconds(value: float) -> str:
    return f"{value:.3f} s"


def millis(value: float) -> str:
    return f"{value * 1000:.3f} ms"


def times(value: float) -> str:
    return f"{value:.2f}×"


def mib(value: float) -> str:
    return f"{value:.0f} MiB"


def kib(value: float) -> str:
    return f"{value:.2f} KiB"


def percent(value: float) -> str:
    return f"{value * 100:+.2f} %"


def per_pair(
    ragv2: Sequence[float], bare: Sequence[float], how: Callable[[float, float], float]
) -> list[float]:
    return [how(r, b) for r, b in zip(ragv2, bare, strict=True)]


def wall(runs: Iterable[Run]) -> list[float]:
    return [run.seconds for run in runs]


def cpu(runs: Iterable[Run]) -> list[float]:
    return [run.cpu_s for run in runs]


def peaks(runs: Iterable[Run]) -> list[float]:
    return [run.peak_mb for run in runs]


def slopes(small: Sequence[float], big: Sequence[float], span: int) -> list[float]:
    """Per repeat: the added value per item between two sizes."""
    return [(b - s) / span for s, b in zip(small, big, strict=True)]


class Bench:
    """The servers, generated projects and sessions shared by the targets of one run."""

    def __init__(self, directory: Path, sizes: Sizes, args: argparse.Namespace) -> None:
        self.directory = directory
        self.sizes = sizes
        self.repeat: int = args.repeat
        self.latency_ms: float = args.latency_ms
        self.xdist_latency_ms: float = args.xdist_latency_ms
        self.workers: int = args.workers
        self.stub, self.stub_url = serve()
        self.demo: DemoServer | None = None
        self.projects: dict[int, Path] = {}
        self.layer_a_runs: dict[tuple[str, int], list[Run]] = {}
        self.warmed = False

    def close(self) -> None:
        self.stub.shutdown()
        if self.demo is not None:
            self.demo.stop()

    def demo_url(self) -> str:
        """The demo server (robotics corpus) for the chat projects, started on first use."""
        if self.demo is None:
            log("indexing the demo corpus for the layer-B projects")
            self.demo = demo_server().start()
        return self.demo.url

    def project(self, items: int) -> Path:
        """A layer-A project of ``items`` cases against the instant stub, with test_bare.py."""
        if items not in self.projects:
            root = self.directory / f"layer-a-{items}"
            write_project(root, self.stub_url, items)
            self.projects[items] = root
        return self.projects[items]

    def warm_up(self) -> None:
        """One unmeasured session of each kind: byte code written, files in the page cache."""
        if not self.warmed:
            root = self.project(1)
            session(root, "--ragv2-layer=A")
            session(root, "test_bare.py")
            remove_run_folders(root)
            self.warmed = True

    def layer_a(self, root: Path, *args: str) -> Run:
        run = session(root, "--ragv2-layer=A", *args)
        remove_run_folders(root)
        return run

    def layer_a_sessions(self, sizes: Iterable[int]) -> None:
        """Layer A and its bare partner at every size not measured yet in this run (the
        layer-a and memory targets share the sessions of a size they both use)."""
        self.warm_up()
        for size in sizes:
            if ("ragv2", size) in self.layer_a_runs:
                continue
            root = self.project(size)
            runs = interleave(
                f"layer A, {size:,} items",
                [
                    ("ragv2", partial(self.layer_a, root)),
                    ("bare", partial(session, root, "test_bare.py")),
                ],
                self.repeat,
            )
            self.layer_a_runs["ragv2", size] = runs["ragv2"]
            self.layer_a_runs["bare", size] = runs["bare"]

    @staticmethod
    def cpu_slope_row(
        title: str,
        ragv2: str,
        bare: str,
        small: int,
        big: int,
        runs: Mapping[tuple[str, int], Sequence[Run]],
    ) -> Row:
        """The CPU seconds each side adds per item between the two sizes (information: the
        wall-time slope is the target; CPU time does not carry the server's or the sleeps'
        jitter, so it shows a small difference the wall time's spread hides)."""
        span = big - small
        ragv2_slope = slopes(cpu(runs[ragv2, small]), cpu(runs[ragv2, big]), span)
        bare_slope = slopes(cpu(runs[bare, small]), cpu(runs[bare, big]), span)
        added = per_pair(ragv2_slope, bare_slope, lambda r, b: r - b)
        return Row(
            title,
            spread(ragv2_slope, millis),
            spread(bare_slope, millis),
            spread(added, millis),
            "(information)",
            None,
        )

    # -- the targets ------------------------------------------------------------------------

    def target_layer_a(self) -> list[Row]:
        small, big = self.sizes.layer_a
        self.layer_a_sessions((small, big))
        rows = []
        for size in (small, big):
            ragv2 = wall(self.layer_a_runs["ragv2", size])
            bare = wall(self.layer_a_runs["bare", size])
            ratios = per_pair(ragv2, bare, lambda r, b: r / b)
            rows.append(
                Row(
                    f"layer A wall time, {size:,} items",
                    spread(ragv2, seconds),
                    spread(bare, seconds),
                    spread(ratios, times),
                    "≤ 1.3×",
                    statistics.median(ratios) <= 1.3,
                )
            )
        span = big - small
        ragv2_slope = slopes(
            wall(self.layer_a_runs["ragv2", small]), wall(self.layer_a_runs["ragv2", big]), span
        )
        bare_slope = slopes(
            wall(self.layer_a_runs["bare", small]), wall(self.layer_a_runs["bare", big]), span
        )
        added = per_pair(ragv2_slope, bare_slope, lambda r, b: r - b)
        rows.append(
            Row(
                f"layer A added per item (slope {small:,}→{big:,})",
                spread(ragv2_slope, millis),
                spread(bare_slope, millis),
                spread(added, millis),
                "≤ 0.3 ms",
                statistics.median(added) <= 0.0003,
            )
        )
        rows.append(
            self.cpu_slope_row(
                f"layer A CPU added per item (slope {small:,}→{big:,})",
                "ragv2",
                "bare",
                small,
                big,
                self.layer_a_runs,
            )
        )
        fixed = [
            (r_small - r_slope * small) - (b_small - b_slope * small)
            for r_small, r_slope, b_small, b_slope in zip(
                wall(self.layer_a_runs["ragv2", small]),
                ragv2_slope,
                wall(self.layer_a_runs["bare", small]),
                bare_slope,
                strict=True,
            )
        ]
        rows.append(
            Row(
                "layer A fixed cost over bare (intercept)",
                "",
                "",
                spread(fixed, seconds),
                "(information)",
                None,
            )
        )
        return rows

    def target_memory(self) -> list[Row]:
        sizes = sorted(self.sizes.memory)
        self.layer_a_sessions(sizes)
        rows = []
        for size in sizes:
            ragv2 = peaks(self.layer_a_runs["ragv2", size])
            bare = peaks(self.layer_a_runs["bare", size])
            per_item = [(r - b) * 1024 / size for r, b in zip(ragv2, bare, strict=True)]
            rows.append(
                Row(
                    f"peak RSS over bare per item, {size:,} items",
                    spread(ragv2, mib),
                    spread(bare, mib),
                    spread(per_item, kib),
                    "≤ 5 KiB/item",
                    statistics.median(per_item) <= 5,
                )
            )
        small, big = sizes[0], sizes[-1]
        ragv2_big = peaks(self.layer_a_runs["ragv2", big])
        ragv2_slope = slopes(peaks(self.layer_a_runs["ragv2", small]), ragv2_big, big - small)
        bare_slope = slopes(
            peaks(self.layer_a_runs["bare", small]),
            peaks(self.layer_a_runs["bare", big]),
            big - small,
        )
        added = per_pair(ragv2_slope, bare_slope, lambda r, b: (r - b) * 1024)
        rows.append(
            Row(
                f"peak RSS added per item (slope {small:,}→{big:,})",
                spread([s * 1024 for s in ragv2_slope], kib),
                spread([s * 1024 for s in bare_slope], kib),
                spread(added, kib),
                "(information)",
                None,
            )
        )
        if 100_000 in sizes:
            at_100k = peaks(self.layer_a_runs["ragv2", 100_000])
            how = "measured"
        else:
            at_100k = [
                peak + slope * (100_000 - big)
                for peak, slope in zip(ragv2_big, ragv2_slope, strict=True)
            ]
            how = f"extrapolated from {small:,}→{big:,}"
        rows.append(
            Row(
                f"peak RSS at 100,000 items ({how})",
                spread(at_100k, mib),
                "",
                "",
                "< 1 GiB",
                statistics.median(at_100k) < MIB_PER_GIB,
            )
        )
        return rows

    def target_collection(self) -> list[Row]:
        self.warm_up()
        size = self.sizes.collection
        root = self.project(size)
        runs = interleave(
            f"collection, {size:,} items",
            [
                ("ragv2", lambda: self.layer_a(root, "--collect-only")),
                ("bare", lambda: session(root, "--collect-only", "test_bare.py")),
            ],
            self.repeat,
        )
        ragv2, bare = wall(runs["ragv2"]), wall(runs["bare"])
        ratios = per_pair(ragv2, bare, lambda r, b: r / b)
        return [
            Row(
                f"collection (--collect-only), {size:,} items",
                spread(ragv2, seconds),
                spread(bare, seconds),
                spread(ratios, times),
                "≤ 1.5×",
                statistics.median(ratios) <= 1.5,
            )
        ]

    def chat_project(self, items: int, latency_ms: float) -> Path:
        root = self.directory / f"layer-b-{items}-{latency_ms:g}ms"
        if not root.exists():
            write_chat_project(root, self.demo_url(), items, latency_ms)
        return root

    def layer_b(self, root: Path, *args: str, ok: tuple[int, ...] = OK) -> Run:
        """A layer-B session, with the model's time (server side) and the harness's searches'
        time (client side, from the raw runs) of its conversations."""
        assert self.demo is not None
        before = len(self.demo.request_log)
        run = session(root, "--ragv2-layer=B", "--ragv2-run-id=bench", *args, ok=ok)
        log_ = self.demo.request_log[before:]
        run.extra["model_s"] = sum(end - start for path, start, end in log_ if "/chat/" in path)
        run_dir = root / "raw-runs" / "bench"
        if run_dir.is_dir():
            run.extra["search_s"], _, run.extra["conversations"] = chat_run_times(run_dir)
        remove_run_folders(root)
        return run

    def bare_b(self, root: Path, *args: str, ok: tuple[int, ...] = OK) -> Run:
        """The bare chat test, with its model's time (server side)."""
        assert self.demo is not None
        before = len(self.demo.request_log)
        run = session(root, "test_bare_chat.py", *args, ok=ok)
        log_ = self.demo.request_log[before:]
        run.extra["model_s"] = sum(end - start for path, start, end in log_ if "/chat/" in path)
        return run

    def target_layer_b(self) -> list[Row]:
        small, big = self.sizes.layer_b
        latency = self.latency_ms
        roots = {size: self.chat_project(size, latency) for size in (small, big)}
        session(roots[small], "--ragv2-layer=B", "-k", "no_such_case", ok=(0, 5))  # warm-up
        session(roots[small], "test_bare_chat.py")
        steps: list[tuple[str, Callable[[], Run]]] = []
        for size, root in roots.items():
            steps.append((f"ragv2 {size}", partial(self.layer_b, root)))
            steps.append((f"bare {size}", partial(self.bare_b, root)))
        steps.append(
            (
                "ragv2 start-up (every case deselected)",
                lambda: self.layer_b(roots[big], "-k", "no_such_case", ok=(0, 5)),
            )
        )
        steps.append(
            (
                "bare start-up (every case deselected)",
                lambda: self.bare_b(roots[big], "-k", "no_such_case", ok=(0, 5)),
            )
        )
        runs = interleave(f"layer B, {latency:g} ms per model call", steps, self.repeat)
        for size in (small, big):
            for run in runs[f"ragv2 {size}"]:
                if run.extra.get("conversations") != size:
                    raise SystemExit(f"layer B: {run.extra} conversations, expected {size}")
        span = big - small
        ragv2_slope = slopes(wall(runs[f"ragv2 {small}"]), wall(runs[f"ragv2 {big}"]), span)
        bare_slope = slopes(wall(runs[f"bare {small}"]), wall(runs[f"bare {big}"]), span)
        added = per_pair(ragv2_slope, bare_slope, lambda r, b: r - b)
        rows = [
            Row(
                f"layer B added per conversation (slope {small}→{big}, {latency:g} ms/call)",
                spread(ragv2_slope, millis),
                spread(bare_slope, millis),
                spread(added, millis),
                "≤ 1.0 ms",
                statistics.median(added) <= 0.001,
            )
        ]
        by_size = {
            (kind, size): runs[f"{kind} {size}"]
            for kind in ("ragv2", "bare")
            for size in (small, big)
        }
        rows.append(
            self.cpu_slope_row(
                f"layer B CPU added per conversation (slope {small}→{big})",
                "ragv2",
                "bare",
                small,
                big,
                by_size,
            )
        )
        # the protocol's bar: (session - start-up - model - searches) / (model + searches)
        system = [run.extra["model_s"] + run.extra["search_s"] for run in runs[f"ragv2 {big}"]]
        harness = [
            run.seconds - startup.seconds
            for run, startup in zip(
                runs[f"ragv2 {big}"], runs["ragv2 start-up (every case deselected)"], strict=True
            )
        ]
        overhead = per_pair(harness, system, lambda h, s: (h - s) / s)
        rows.append(
            Row(
                f"layer B end to end over model latency ({big} conv., {latency:g} ms/call)",
                spread(harness, seconds),
                spread(system, seconds),
                spread(overhead, percent),
                "≤ 2 %",
                statistics.median(overhead) <= 0.02,
            )
        )
        # the same end-to-end figure over the chat calls alone, for both sides: what the bare
        # test itself spends over the model is the floor under the protocol's bar
        over_model = {
            kind: [
                (run.seconds - startup.seconds - run.extra["model_s"]) / run.extra["model_s"]
                for run, startup in zip(
                    runs[f"{kind} {big}"],
                    runs[f"{kind} start-up (every case deselected)"],
                    strict=True,
                )
            ]
            for kind in ("ragv2", "bare")
        }
        rows.append(
            Row(
                f"end to end over the chat calls' own time ({big} conv., both sides)",
                spread(over_model["ragv2"], percent),
                spread(over_model["bare"], percent),
                spread(
                    per_pair(over_model["ragv2"], over_model["bare"], lambda r, b: r - b), percent
                ),
                "(information)",
                None,
            )
        )
        per_conversation = [
            (slope - (run.extra["model_s"] + run.extra["search_s"]) / big)
            / ((run.extra["model_s"] + run.extra["search_s"]) / big)
            for slope, run in zip(ragv2_slope, runs[f"ragv2 {big}"], strict=True)
        ]
        rows.append(
            Row(
                "layer B per conversation over model latency (slope)",
                "",
                "",
                spread(per_conversation, percent),
                "(information)",
                None,
            )
        )
        return rows

    def target_startup(self) -> list[Row]:
        self.warm_up()
        layer_a_root = self.project(1)
        layer_b_root = self.chat_project(1, 0)
        session(layer_b_root, "--ragv2-layer=B")  # warm-up of the chat layer's modules
        remove_run_folders(layer_b_root)
        runs = interleave(
            "start-up, one case",
            [
                ("ragv2 A", lambda: self.layer_a(layer_a_root)),
                ("bare A", lambda: session(layer_a_root, "test_bare.py")),
                ("ragv2 B", lambda: self.layer_b(layer_b_root)),
                ("bare B", lambda: session(layer_b_root, "test_bare_chat.py")),
            ],
            self.repeat,
        )
        rows = []
        for layer in ("A", "B"):
            ragv2, bare = wall(runs[f"ragv2 {layer}"]), wall(runs[f"bare {layer}"])
            added = per_pair(ragv2, bare, lambda r, b: r - b)
            rows.append(
                Row(
                    f"start-up over bare, layer {layer}, one case",
                    spread(ragv2, seconds),
                    spread(bare, seconds),
                    spread(added, seconds),
                    "≤ 0.3 s",
                    statistics.median(added) <= 0.3,
                )
            )
        return rows

    def target_xdist(self) -> list[Row]:
        self.warm_up()
        items, workers = self.sizes.xdist, str(self.workers)
        stub, url = serve(delay_s=self.xdist_latency_ms / 1000)
        try:
            root = self.directory / f"xdist-{items}"
            write_project(root, url, items)
            runs = interleave(
                f"xdist, {items} items at {self.xdist_latency_ms:g} ms",
                [
                    ("ragv2 serial", lambda: self.layer_a(root)),
                    ("bare serial", lambda: session(root, "test_bare.py")),
                    (f"ragv2 -n {workers}", lambda: self.layer_a(root, "-n", workers)),
                    (f"bare -n {workers}", lambda: session(root, "test_bare.py", "-n", workers)),
                ],
                self.repeat,
            )
        finally:
            stub.shutdown()
        speed_up = {
            kind: per_pair(
                wall(runs[f"{kind} serial"]), wall(runs[f"{kind} -n {workers}"]), lambda s, p: s / p
            )
            for kind in ("ragv2", "bare")
        }
        ratios = per_pair(speed_up["ragv2"], speed_up["bare"], lambda r, b: r / b)
        return [
            Row(
                f"-n {workers} speed-up, layer A ({items} items, {self.xdist_latency_ms:g} ms)",
                spread(speed_up["ragv2"], times),
                spread(speed_up["bare"], times),
                spread(ratios, times),
                "≥ 1.00× (the bare test's)",
                statistics.median(ratios) >= 1.0,
            )
        ]

    def target_raw_runs(self) -> list[Row]:
        """The bundled benchmark, run from the repository root; its raw runs and reports go
        to a temporary folder through a configuration naming every path absolutely."""
        from pytest_ragv2.run.rawruns import read_raw_runs

        folder = self.directory / "bundled"
        folder.mkdir()
        path = bundled_config(folder)
        args = ["--ragv2-layer=B", "-n", "2", f"--ragv2-config={path}", "--ragv2-seed=20261130"]
        if self.sizes.raw_runs_reps is not None:
            args.append(f"--ragv2-reps={self.sizes.raw_runs_reps}")
        run = session(REPO, *args, "--ragv2-run-id=bench", ok=VERDICT)
        log(f"[raw-runs] bundled layer B, -n 2: {run.seconds:.1f} s")
        run_dir = folder / "raw-runs" / "bench"
        size = sum(file.stat().st_size for file in run_dir.glob("runs-*.jsonl.gz"))
        conversations = sum(1 for _ in read_raw_runs(run_dir))
        reps = self.sizes.raw_runs_reps
        what = f"{conversations:,} conv." + (f", --ragv2-reps={reps}" if reps else "")
        per_conversation = size / conversations / 1000
        return [
            Row(
                f"raw runs per conversation, bundled B -n 2 ({what})",
                f"{per_conversation:.2f} KB",
                "",
                f"{size / 1e6:.2f} MB in all",
                "≤ 5 KB",
                per_conversation <= 5,
            ),
            Row(
                f"bundled B -n 2 wall time ({what}, one run)",
                seconds(run.seconds),
                "",
                "",
                "≈ 1 min",
                None,
            ),
        ]


def revision() -> str:
    """The measured plugin's commit, marked when src/ differs from it."""
    import subprocess

    def git(*args: str) -> str:
        done = subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True, check=False)
        return done.stdout.strip() if done.returncode == 0 else ""

    commit = git("rev-parse", "--short", "HEAD") or "unknown commit"
    changed = git("status", "--porcelain", "src")
    return commit + (" with uncommitted changes in src/" if changed else "")


def print_table(rows: Sequence[Row]) -> None:
    header = ("target", "ragv2", "bare", "ratio / difference", "goal", "result")
    cells = [header] + [
        (
            row.target,
            row.ragv2,
            row.bare,
            row.compared,
            row.goal,
            "—" if row.met is None else ("PASS" if row.met else "MISS"),
        )
        for row in rows
    ]
    widths = [max(len(line[column]) for line in cells) for column in range(len(header))]

    def line(values: Sequence[str]) -> str:
        return "| " + " | ".join(v.ljust(w) for v, w in zip(values, widths, strict=True)) + " |"

    print(line(header))
    print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for values in cells[1:]:
        print(line(values))


def pair(given: list[int] | None, default: tuple[int, int]) -> tuple[int, int]:
    """Two sizes, the smaller first."""
    small, big = sorted(given) if given else default
    return small, big


def parse_args(argv: Sequence[str] | None) -> tuple[argparse.Namespace, Sizes, list[str]]:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="\n\n".join(__doc__.split("\n\n")[1:]),
    )
    parser.add_argument("--quick", action="store_true", help="small sizes: a smoke check")
    parser.add_argument("--only", help=f"comma-separated targets among {', '.join(TARGETS)}")
    parser.add_argument("--repeat", type=int, help="rounds of interleaved sessions (3; quick 2)")
    parser.add_argument(
        "--layer-a-items", type=int, nargs=2, metavar="N", help="two sizes (1000 50000)"
    )
    parser.add_argument("--collection-items", type=int, metavar="N", help="(50000)")
    parser.add_argument(
        "--memory-items", type=int, nargs="+", metavar="N", help="two sizes or more (5000 50000)"
    )
    parser.add_argument(
        "--layer-b-items", type=int, nargs=2, metavar="N", help="two sizes (100 300)"
    )
    parser.add_argument(
        "--latency-ms", type=float, default=50.0, help="layer B: per model call (50)"
    )
    parser.add_argument("--xdist-items", type=int, metavar="N", help="(200)")
    parser.add_argument(
        "--xdist-latency-ms", type=float, default=20.0, help="xdist: per request (20)"
    )
    parser.add_argument("--workers", type=int, default=4, help="xdist workers (4)")
    parser.add_argument(
        "--raw-runs-reps", type=int, metavar="N", help="bundled run's repetitions (quick: 1)"
    )
    args = parser.parse_args(argv)
    base = QUICK if args.quick else FULL
    sizes = Sizes(
        layer_a=pair(args.layer_a_items, base.layer_a),
        collection=args.collection_items or base.collection,
        memory=tuple(args.memory_items or base.memory),
        layer_b=pair(args.layer_b_items, base.layer_b),
        xdist=args.xdist_items or base.xdist,
        raw_runs_reps=args.raw_runs_reps or base.raw_runs_reps,
        repeat=args.repeat or base.repeat,
    )
    args.repeat = sizes.repeat
    only = [name.strip() for name in args.only.split(",")] if args.only else list(TARGETS)
    unknown = sorted(set(only) - set(TARGETS))
    if unknown:
        parser.error(f"unknown target(s) {', '.join(unknown)}; choose among {', '.join(TARGETS)}")
    if len(sizes.memory) < 2 and "memory" in only:
        parser.error("--memory-items needs two sizes at least (the slope)")
    return args, sizes, only


def main(argv: Sequence[str] | None = None) -> int:
    args, sizes, only = parse_args(argv)
    import pytest

    log(f"sizes: {sizes}")
    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="ragv2-bench-") as directory:
        bench = Bench(Path(directory), sizes, args)
        try:
            for name in TARGETS:  # always in this order, whatever the order of --only
                if name in only:
                    rows += getattr(bench, "target_" + name.replace("-", "_"))()
        finally:
            bench.close()
    print(
        f"pytest-ragv2 performance targets ({revision()}) — {'quick' if args.quick else 'full'}"
        f" run, {sizes.repeat} interleaved rounds, median (min–max); Python "
        f"{platform.python_version()}, pytest {pytest.__version__}, "
        f"{platform.machine()} with {os.cpu_count()} CPUs"
    )
    print_table(rows)
    missed = [row.target for row in rows if row.met is False]
    print(f"{len(missed)} target(s) missed" + (": " + "; ".join(missed) if missed else ""))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
