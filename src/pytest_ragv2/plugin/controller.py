"""The controller's side of a session: gather records, decide the verdict, write reports.

Registered only in the controlling process (never in an xdist worker). Records arrive on
test reports, so a serial run and a ``-n N`` run aggregate exactly the same data.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pytest_ragv2.deciding.kept_records import RecordKeeper
from pytest_ragv2.deciding.records import RetrievalRecord, RunRecord
from pytest_ragv2.deciding.verdict import GateResult
from pytest_ragv2.layers.registry import layer_info
from pytest_ragv2.plugin.collect import INVALID_ITEM_NAME, CaseItem
from pytest_ragv2.plugin.manifest import write_run_manifest
from pytest_ragv2.report.model import Summary
from pytest_ragv2.report.page import page_pieces
from pytest_ragv2.report.summary import render_summary_markdown, write_summary
from pytest_ragv2.report.terminal import (
    DEFAULT_WIDTH,
    Screen,
    summary_counts,
    write_session_summary,
    write_terminal_summary,
)
from pytest_ragv2.run.context import RunContext

if TYPE_CHECKING:
    from pytest_ragv2.deciding.extensions import Extensions
    from pytest_ragv2.deciding.formal import RunKind
    from pytest_ragv2.deciding.pipeline import RunDecision, RunFacts
    from pytest_ragv2.plugin.budget import Budget
    from pytest_ragv2.plugin.progress import Progress
    from pytest_ragv2.report.plot_worker import PlotWorker
    from pytest_ragv2.run.session_end import SessionEnd
    from pytest_ragv2.systems.outputs import RetrievedItem

RECORD_ATTRIBUTE = "ragv2"
# the end's imports are warmed once the main thread is seen mostly waiting on the systems
WARM_PROBE_RUNS = 8
WARM_MAX_BUSY = 0.5  # of the wall time of the last WARM_PROBE_RUNS runs, in CPU time
WARM_MIN_LATENCY_S = 0.005  # their median latency
KEEP_STATUSES = (
    pytest.ExitCode.INTERRUPTED,
    pytest.ExitCode.INTERNAL_ERROR,
    pytest.ExitCode.USAGE_ERROR,
)


@dataclass(slots=True)
class Controller:
    ctx: RunContext
    options: Mapping[str, Any] = field(default_factory=dict)
    records: list[RunRecord] = field(default_factory=list)
    _keeper: RecordKeeper = field(default_factory=RecordKeeper, init=False, repr=False)
    expected_by_layer: dict[str, int] | None = None
    other_failures: int = 0
    # per layer, in the order the session runs them
    summaries: dict[str, Summary] = field(default_factory=dict)
    gates_by_layer: dict[str, list[GateResult]] = field(default_factory=dict)
    locations: list[str] = field(default_factory=list)
    decided_records: list[RunRecord] = field(default_factory=list)  # deduplicated, scored
    budget: Budget | None = None  # --ragv2-max-minutes
    progress_every_s: float | None = None  # --ragv2-progress (None: no progress lines)
    progress_writer: Callable[[str], None] | None = None
    progress: Progress | None = None
    raw_write_error: str | None = None  # the raw runs could not be written: exit status 3
    lost_runs: list[str] = field(default_factory=list)  # case runs reported with no record
    report_errors: list[str] = field(default_factory=list)  # reports that could not be written
    reused_runs: int = 0  # --ragv2-resume: runs scored from earlier sessions' raw runs
    _warming: threading.Thread | None = field(default=None, repr=False)
    _probe: tuple[float, float] | None = field(default=None, repr=False)  # wall, CPU time
    plot_workers: dict[str, PlotWorker] = field(default_factory=dict, repr=False)  # by layer
    # node id → the position in ``records`` and the report of a record still listing its
    # items: until the item's last report, which pytest-html waits for to show them
    _listing: dict[str, tuple[int, Any]] = field(default_factory=dict, repr=False)
    # system → the chunks its service listed at the session's end (None: it could not)
    stored_chunks: dict[str, list[RetrievedItem] | None] = field(default_factory=dict)
    # the conftests' and plugins' gates and report sections (their hooks)
    extensions: Extensions | None = None

    @property
    def expected_runs(self) -> int | None:
        return None if self.expected_by_layer is None else sum(self.expected_by_layer.values())

    @property
    def summary(self) -> Summary | None:
        """The first layer's summary (the only one, in a one-layer session)."""
        return next(iter(self.summaries.values()), None)

    @property
    def gates(self) -> list[GateResult]:
        """Every gate of the session, layer after layer."""
        return [gate for gates in self.gates_by_layer.values() for gate in gates]

    def warm_imports(self) -> None:
        """Import what the session's end needs (numpy, the plots' matplotlib, scipy when
        two systems are compared) in a background thread, once. Only worth it while the
        main thread waits: beside runs that keep it busy (a fast system) the imports take
        the GIL from it, and every socket call then waits for it to come back."""
        if self._warming is not None:
            return
        roles = {system.role for system in self.ctx.systems.values()}
        compared = {"baseline", "candidate"} <= roles
        self._warming = threading.Thread(
            target=_warm_imports,
            args=(compared, not self.plot_workers),
            name="ragv2-warm-imports",
            daemon=True,
        )
        self._warming.start()

    def _warm_if_waiting(self) -> None:
        """Start the imports once the main thread is seen waiting on the systems over the
        last few runs: their median latency is long enough to be a wait, and the thread's
        CPU time was under half their wall time (a busy thread on a loaded machine also
        falls behind the wall clock, so this alone does not tell)."""
        if self._warming is not None or len(self.records) % WARM_PROBE_RUNS:
            return
        now = (time.perf_counter(), time.thread_time())
        if self._probe is not None:
            wall, cpu = now[0] - self._probe[0], now[1] - self._probe[1]
            latencies = sorted(record.latency_s for record in self.records[-WARM_PROBE_RUNS:])
            waits = latencies[len(latencies) // 2] >= WARM_MIN_LATENCY_S
            if waits and wall > 0 and cpu < WARM_MAX_BUSY * wall:
                self.warm_imports()
        self._probe = now

    def start_plot_workers(self) -> None:
        """One helper process per layer draws report.html's plots, matplotlib imported
        there while the runs go on (``report/plot_worker.py``). Not when this process has
        matplotlib already (an in-process session run inside another): drawing here then
        costs less than a process's start."""
        if "matplotlib.figure" in sys.modules or os.name != "posix":
            return  # (the helper's readiness is polled with select on its pipe: POSIX)
        from pytest_ragv2.report.plot_worker import PlotWorker

        with contextlib.suppress(OSError):  # no helper: the plots are drawn here
            for layer in self.ctx.layers:
                self.plot_workers[layer] = PlotWorker()

    def stop_plot_workers(self) -> None:
        for worker in self.plot_workers.values():
            worker.close()
        self.plot_workers.clear()

    def wait_for_imports(self, timeout_s: float = 30.0) -> None:
        """Let the background imports finish: an interpreter that exits while a thread is
        inside a C extension's import (numpy, matplotlib) can crash on the way out."""
        if self._warming is not None:
            self._warming.join(timeout_s)

    def set_expected(self, counts: Mapping[str, int]) -> None:
        """The case runs collected per layer; the manifest is written before the first.
        A resumed run expects what its first session collected (a narrower selection in a
        later session leaves runs missing, as they are)."""
        self.expected_by_layer = dict(counts)
        if self.ctx.resumption is not None:
            from pytest_ragv2.run.resume import read_manifest

            recorded = read_manifest(self.ctx.run_dir).get("expected_by_layer") or {}
            for layer, count in recorded.items():
                if layer in self.expected_by_layer:
                    self.expected_by_layer[layer] = max(int(count), self.expected_by_layer[layer])
        if self.expected_runs and self.progress_every_s is not None and self.progress_writer:
            from pytest_ragv2.plugin.progress import Progress

            self.progress = Progress(
                self.expected_runs, self.progress_every_s, self.progress_writer
            )
        if self.expected_runs:
            try:
                write_run_manifest(
                    self.ctx,
                    self.options,
                    expected_runs=self.expected_runs,
                    expected_by_layer=self.expected_by_layer,
                )
            except OSError as exc:  # a full disk before the first run: no run starts
                where = exc.filename or self.ctx.run_dir
                self.raw_write_error = (
                    f"raw runs could not be written: {where}: {exc.strerror or exc}"
                )
                self.ctx.write_failure = self.raw_write_error

    def count_expected(self, items: Sequence[pytest.Item]) -> None:
        counts = dict.fromkeys(self.ctx.layers, 0)
        for item in items:
            if isinstance(item, CaseItem):
                counts[item.key.layer] = counts.get(item.key.layer, 0) + 1
        self.set_expected(counts)

    def add_report(self, report: pytest.TestReport | pytest.CollectReport) -> None:
        """Take a report once every other plugin has read it."""
        if getattr(report, "when", None) == "teardown":
            self._unlist(report.nodeid)
        record = getattr(report, RECORD_ATTRIBUTE, None)
        not_written = getattr(report, "ragv2_raw_write_error", None)
        if not_written is not None:
            # a worker could not write its raw runs: it starts no further run, and the
            # session ends with exit status 3 once the others have finished theirs
            self.raw_write_error = self.raw_write_error or str(not_written)
        elif record is not None:
            kept = self._keeper.keep(record)  # read back once from the report's JSON
            setattr(report, RECORD_ATTRIBUTE, kept)  # the report keeps no second form
            self.records.append(kept)
            if isinstance(kept, RetrievalRecord) and kept.top:
                self._listing[report.nodeid] = (len(self.records) - 1, report)
            self.reused_runs += bool(getattr(report, "ragv2_reused", False))
            self._warm_if_waiting()
            if self.progress is not None:
                self.progress.add(self.records[-1])
        elif report.failed and not report.nodeid.endswith(INVALID_ITEM_NAME):
            if self._is_case_run(report.nodeid):
                # a gold-case run with no record: its worker crashed (or the plugin failed
                # inside it); runs_complete counts it as lost, this says why
                reason = str(report.longrepr).strip().splitlines() or ["no record"]
                self.lost_runs.append(f"{report.nodeid}: {reason[-1]}")
            else:
                # an ordinary test (or a collection error) failed: the gates cannot clear that
                self.other_failures += 1

    def _unlist(self, nodeid: str) -> None:
        """The item's record from here to the session's end: without its listed items
        (about 0.6 KB a run), which pytest-html has shown by the item's last report and a
        case panel reads from the raw run."""
        listing = self._listing.pop(nodeid, None)
        if listing is not None:
            position, report = listing
            record = self.records[position]
            if isinstance(record, RetrievalRecord):
                kept = record.without_top()
                self.records[position] = kept
                setattr(report, RECORD_ATTRIBUTE, kept)

    def _is_case_run(self, nodeid: str) -> bool:
        """A node id of a gold-case item: it lies in the cases folder (xdist's controller
        has no items, only their reports)."""
        path, _, name = nodeid.partition("::")
        if not name:
            return False
        found = (self.ctx.rootdir / path).resolve()
        return found.is_relative_to(self.ctx.settings.cases.resolve())

    def read_stored_chunks(self, session: pytest.Session) -> None:
        """What each retrieval system's service stores, listed for its attainable ceiling
        (``attainable.py``), where the preflight did not list it already. These are calls
        to the systems, bounded as theirs are (``timeout_s``, ``max_response_mb``, the
        retry policy), made before the verdict's signal hold: an interrupt during them
        stops them (the plugin then ends the session as interrupted). An interrupted
        session, which is stopping, lists nothing."""
        if not self.expected_runs and not self.records:
            return
        if session.exitstatus == pytest.ExitCode.INTERRUPTED:
            return
        from pytest_ragv2.run.attainable import fetch_stored_chunks

        preflight = self.ctx.preflight.stored_chunks if self.ctx.preflight else {}
        allowed = sorted(self.ctx.allowlist.file_ids) if self.ctx.allowlist else []
        systems = {
            record.key.system for record in self.records if not layer_info(record.key.layer).chat
        }
        for name in sorted(systems - set(preflight)):
            try:  # the demo may not have started; a listing is never worth a report
                retrieval = self.ctx.system_settings(name).retrieval
            except Exception:
                continue
            self.stored_chunks[name] = fetch_stored_chunks(name, retrieval, allowed)

    def case_errors(self) -> list[str]:
        return [str(error) for error in self.ctx.catalog.errors] + self.ctx.allowlist_errors

    def finish(self, session: pytest.Session) -> None:
        interrupted_early = session.exitstatus == pytest.ExitCode.INTERRUPTED
        if not self.expected_runs and not self.records and not interrupted_early:
            return  # no case was collected: pytest's own status stands, nothing is written
        from pytest_ragv2.deciding.pipeline import decide_run
        from pytest_ragv2.run.session_end import SessionEnd

        status = session.exitstatus
        interrupted = status == pytest.ExitCode.INTERRUPTED
        several = len(self.ctx.layers) > 1
        self.locations = []
        cwd = Path.cwd()  # paths on screen as the user typed the command: relative to here
        protocol = self._run_kind()
        failed_fast = str(session.shouldfail) if session.shouldfail else None
        end = SessionEnd(
            interrupted=interrupted,
            stopped=self.raw_write_error is not None,
            budget=self.budget.spent() if self.budget is not None else None,
            failed_fast=failed_fast,
        )

        stored_chunks = self._stored_chunks()
        self._keep_session_end(end, stored_chunks)
        decided = decide_run(self.records, self._facts(protocol, stored_chunks, end))
        self.decided_records = decided.records
        if status not in KEEP_STATUSES:
            ok = decided.passed and not self.other_failures and not decided.incomplete
            if self.ctx.shard is not None:  # a shard's status: whether its runs are all made
                ok = not (self.other_failures or decided.incomplete or self.lost_runs)
            status = pytest.ExitCode.OK if ok else pytest.ExitCode.TESTS_FAILED
            if self.raw_write_error is not None:
                status = pytest.ExitCode.INTERNAL_ERROR
            session.exitstatus = status
        for layer, summary in decided.summaries.items():
            gates = decided.gates_by_layer[layer]
            report_dir = self.ctx.report_dir / layer if several else self.ctx.report_dir
            self.summaries[layer] = summary
            self.gates_by_layer[layer] = gates
            try:
                path = write_summary(
                    report_dir,
                    summary,
                    render_summary_markdown(summary, gates),
                    page_pieces(
                        summary,
                        gates,
                        decided.results_by_layer[layer].records,
                        self.ctx.catalog,
                        self.ctx.run_dir,
                        plots=self.plot_workers.pop(layer, None),
                    ),
                )
            except OSError as exc:
                # the verdict stands on screen; the exit status says the reports are missing
                self.report_errors.append(
                    f"reports could not be written: {exc.filename or report_dir}: "
                    f"{exc.strerror or exc}"
                )
                session.exitstatus = status = pytest.ExitCode.INTERNAL_ERROR
                continue
            self.locations.append(
                f"{'layer ' + layer + ' ' if several else ''}summary: {_relative(path, cwd)} "
                "(and summary.md, report.html)"
            )
        for summary in self.summaries.values():  # what the terminal says is what happened
            summary.exit_status = int(status)
        from pytest_ragv2.plugin.junit import gates_in_junit

        gates_in_junit(session.config, self.summaries, self.gates_by_layer)
        self.locations.extend(self.report_errors)
        if self.ctx.resumption is not None:
            made = len(self.records) - self.reused_runs
            self.locations.append(
                f"resumed run {self.ctx.run_id} (session {self.ctx.resumption.generation + 1}): "
                f"{self.reused_runs} run(s) taken from its earlier sessions' raw runs, "
                f"{made} made now"
            )
        if self.raw_write_error is not None:
            self.locations.append(
                f"{self.raw_write_error}; the session stopped (exit status 3): every run "
                "written before is intact, `ragv2 rescore` reads it"
            )
        if failed_fast:
            self.locations.append(
                f"pytest {failed_fast} (-x, --maxfail): the runs after it were not started"
            )
        self.locations.append(f"raw runs: {_relative(self.ctx.run_dir, cwd)}")
        if self.options.get("ragv2_compare"):
            self.locations.extend(self._comparison(str(self.options["ragv2_compare"]), decided))
        self.locations.append(f"protocol: {protocol.label}")
        self.locations.extend(f"protocol flag: {flag}" for flag in protocol.flags)
        if self.budget is not None:
            from pytest_ragv2.plugin.budget import describe_minutes

            self.locations.append(
                f"budget: {describe_minutes(self.budget.minutes)}; "
                + (
                    f"spent: {self.budget.left_out()}"
                    if self.budget.runs_not_started
                    else "every run started within it"
                )
            )
        if self.ctx.preflight is not None:
            self.locations.extend(
                f"preflight warning: {finding}" for finding in self.ctx.preflight.warnings
            )
        if self.lost_runs:
            self.locations.append(
                f"{len(self.lost_runs)} run(s) lost (counted by runs_complete): "
                + "; ".join(self.lost_runs[:3])
                + (f"; … {len(self.lost_runs) - 3} more" if len(self.lost_runs) > 3 else "")
            )
        self.locations.extend(_lost_hosts_lines(session, self.ctx.run_id))
        if self.other_failures:
            self.locations.append(
                f"{self.other_failures} ordinary test(s) or collector(s) failed besides the "
                "gold cases: the exit status is 1 whatever the gates say"
            )

    def _comparison(self, earlier: str, decided: RunDecision) -> list[str]:
        """``--ragv2-compare``: this run, as decided, compared with an earlier one."""
        if self.ctx.shard is not None:
            return [
                "comparison: not made for one shard; `ragv2 compare` the merged run (ragv2 merge)"
            ]
        from pytest_ragv2.tools.compare import earlier_run_dir, session_comparison
        from pytest_ragv2.tools.rescore import Rescored

        settings = self.ctx.settings
        cwd = Path.cwd()
        this_run = Rescored(
            decided.summaries,
            decided.gates_by_layer,
            decided.passed,
            records=decided.records,
            catalog=self.ctx.catalog,
            run_dir=self.ctx.run_dir,
        )
        where = earlier_run_dir(earlier, settings.raw_runs)
        return session_comparison(where, this_run, settings, cwd)

    def _run_kind(self) -> RunKind:
        """Development (a provisional case), holdout or formal; flagged when the gates
        changed after the holdout was seen."""
        from pytest_ragv2.deciding.formal import gates_changed_after_holdout, lock_path, run_kind

        settings = self.ctx.settings
        status = {record.key.case: record.gold_status for record in self.records}
        flag = gates_changed_after_holdout(
            settings, self.ctx.rootdir, lock_path(settings, self.ctx.rootdir)
        )
        return run_kind(
            status,
            holdout="holdout" in settings.splits,
            formal=bool(self.options.get("ragv2_formal")),
            flags=[flag] if flag else [],
        )

    def _stored_chunks(self) -> dict[str, list[RetrievedItem] | None]:
        """What each system's service stores: listed at the preflight, else at the end."""
        stored: dict[str, list[RetrievedItem] | None] = dict(self.stored_chunks)
        if self.ctx.preflight is not None:
            for name, chunks in self.ctx.preflight.stored_chunks.items():
                if chunks is not None or name not in stored:
                    stored[name] = chunks
        return stored

    def _facts(
        self,
        protocol: RunKind,
        stored_chunks: Mapping[str, Sequence[RetrievedItem] | None],
        end: SessionEnd,
    ) -> RunFacts:
        from pytest_ragv2.deciding.pipeline import RunFacts

        ctx = self.ctx
        return RunFacts(
            run_id=ctx.run_id,
            seed=ctx.seed,
            layers=tuple(ctx.layers),
            settings=ctx.settings,
            roles={name: system.role for name, system in ctx.systems.items()},
            configured_roles=ctx.configured_roles,
            expected_by_layer=self.expected_by_layer or {},
            case_errors=self.case_errors(),
            allowlist_present=ctx.allowlist is not None,
            adjudications=ctx.catalog.adjudications,
            descriptors={name: system.descriptors for name, system in ctx.systems.items()},
            raw_runs=_relative(ctx.run_dir, ctx.rootdir),
            protocol=protocol,
            catalog=ctx.catalog,
            stored_chunks=stored_chunks,
            end=end,
            shard=ctx.shard_plan,
            **({"extensions": self.extensions} if self.extensions is not None else {}),
        )

    def _keep_session_end(
        self, end: SessionEnd, stored_chunks: Mapping[str, Sequence[RetrievedItem] | None]
    ) -> None:
        """How the session ended and what the systems store, beside the raw runs, so that
        ``ragv2 rescore`` decides as the session did; a failure to keep them is reported
        and costs nothing else."""
        from pytest_ragv2.run.rawruns import write_stored_chunks

        try:
            end.write(self.ctx.run_dir)
            if stored_chunks:
                write_stored_chunks(self.ctx.run_dir, stored_chunks)
        except OSError as exc:
            self.report_errors.append(
                f"the session's end could not be kept beside the raw runs: "
                f"{exc.filename or self.ctx.run_dir}: {exc.strerror or exc}"
            )

    def terminal_summary(self, reporter: Any) -> None:
        """The tables, the runs that missed, the gates and the verdict, last on screen (the
        plugin calls this after pytest's own summary sections); pytest's final line then
        counts the failed gates beside the items."""
        if not self.summaries:
            return
        screen = Screen(
            reporter.write_sep,
            reporter.write_line,
            screen_width(getattr(reporter, "_tw", None)),
            int(getattr(reporter, "verbosity", 0)),
        )
        if len(self.summaries) == 1:
            (layer,) = self.summaries
            write_terminal_summary(
                screen,
                self.summaries[layer],
                self.gates_by_layer[layer],
                self.locations,
                self.decided_records,
            )
        else:
            write_session_summary(
                screen, self.summaries, self.gates_by_layer, self.locations, self.decided_records
            )
        stats = getattr(reporter, "stats", None)
        if isinstance(stats, dict) and self.ctx.shard is None:  # a shard's gates decide nothing
            add = getattr(reporter, "_add_stats", None)  # it lets pytest's last line count them
            for key, count in summary_counts(self.gates).items():
                counted = [GateCount() for _ in range(count)]
                if callable(add):
                    add(key, counted)
                else:
                    stats.setdefault(key, []).extend(counted)


@dataclass(frozen=True, slots=True)
class GateCount:
    """One failed gate, as pytest's final summary line counts it beside the items."""

    count_towards_summary: bool = True


RUNS_NAMED = 10
CI_WIDTH = 120  # a CI log's width when COLUMNS does not say: no job log is 80 wide


def screen_width(writer: Any) -> int:
    """The terminal's width; in a log (no terminal) COLUMNS, else 120 — pytest's 80 wraps
    a gate table into pieces no CI log needs."""
    stream = getattr(writer, "_file", None)
    isatty = getattr(stream, "isatty", None)
    if callable(isatty) and isatty():
        return int(getattr(writer, "fullwidth", DEFAULT_WIDTH))
    columns = os.environ.get("COLUMNS", "")
    return int(columns) if columns.isdigit() and int(columns) >= 40 else CI_WIDTH


def _lost_hosts_lines(session: pytest.Session, run_id: str) -> list[str]:
    """The hosts lost during the session and the runs they left unmade, named; those are
    made by resuming the run here (its raw runs are all on this machine)."""
    hooks = session.config.pluginmanager.get_plugin("ragv2-xdist")
    if hooks is None:
        return []
    hosts, unmade = hooks.runs_not_made()
    if not hosts:
        return []
    named = ", ".join(node_id.rpartition("::")[2] for node_id in unmade[:RUNS_NAMED])
    more = f", … {len(unmade) - RUNS_NAMED} more" if len(unmade) > RUNS_NAMED else ""
    return [
        f"host(s) lost: {'; '.join(hosts)}: the session stopped with every finished run kept; "
        f"{len(unmade)} run(s) not made: {named or 'none'}{more}; make them on this machine, "
        f"where the run's raw runs are: the same command with --ragv2-resume={run_id} and "
        "local workers (-n N) instead of --tx"
    ]


def _warm_imports(compared: bool, plots: bool) -> None:
    """Only a head start: the session imports these itself when it needs them, so a
    failure here (an in-process pytester run restoring sys.modules under this thread) is
    not the session's and must not print a traceback into its output."""
    try:
        # report.html's plots unless a plot worker draws them (half a second), numpy, and
        # the comparison gates' bootstrap and permutation tests (another half)
        if plots:
            import matplotlib.backends.backend_svg
            import matplotlib.figure  # noqa: F401
        import numpy  # noqa: F401

        if compared:
            import scipy.stats  # noqa: F401
    except Exception:
        return


def _relative(path: Path, root: Path) -> Path:
    """A path as the report shows it: relative to the rootdir when inside it."""
    try:
        return path.relative_to(root)
    except ValueError:
        return path
