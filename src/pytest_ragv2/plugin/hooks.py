"""pytest11 entry point. Every hook delegates; the plugin is inert without a layer.

Only this module, ``options``, ``keys`` and ``stash`` are imported when pytest starts: all
else (pydantic, httpx, scipy, the demo) is imported once a layer is asked for, so an ordinary
test run of another project pays nothing for having the plugin installed.
"""

from __future__ import annotations

import gc
import sys
from pathlib import Path
from typing import Any

import pytest

from pytest_ragv2.plugin.options import INI_LAYER, OPTIONS
from pytest_ragv2.plugin.stash import CONTEXT_KEY, CONTROLLER_KEY, DEMO_KEY, PRELOAD_KEY
from pytest_ragv2.run.keys import NOT_DECISIVE

if any(argument.startswith("--ragv2-layer") for argument in sys.argv[1:]):
    # a session of the plugin's: a cancelled CI job's SIGTERM during pytest's own start-up
    # is kept for the session (signals.py), rather than killing it before its handlers
    from pytest_ragv2.plugin.signals import note_early_signals

    note_early_signals()


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    """The hooks a conftest or a plugin implements to add gates and report sections."""
    from pytest_ragv2.plugin import hookspecs

    pluginmanager.add_hookspecs(hookspecs)


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("ragv2", "pytest-ragv2: evaluate RAG systems against gold cases")
    for option in OPTIONS:
        if option.flag_only:
            group.addoption(option.flag, dest=option.dest, action="store_true", help=option.help)
            continue
        group.addoption(
            option.flag,
            dest=option.dest,
            default=None,
            help=option.help,
            metavar=option.metavar,
            choices=option.choices,
            type=option.type,
        )
    parser.addini(INI_LAYER, "default of --ragv2-layer (A, B or C)", default="")


_CONFIGURED = 0  # pytest sessions configured and not yet cleaned up in this process
FREEZE_EVERY_RUNS = 500
# runs since the last freeze of what they left (None: this process never freezes)
_runs_since_freeze: int | None = None


def _unconfigured() -> None:
    global _CONFIGURED, _runs_since_freeze
    _CONFIGURED -= 1
    _runs_since_freeze = None


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "gold_case(layer, category, system, lang): one run of a pytest-ragv2 gold case"
    )
    config.addinivalue_line("markers", "xdist_group(name): run in one xdist worker (loadgroup)")
    global _CONFIGURED
    _CONFIGURED += 1
    config.add_cleanup(_unconfigured)
    requested = _requested_layer(config)
    if not requested or hasattr(config, "workerinput"):
        from pytest_ragv2.plugin.signals import end_early_signals

        end_early_signals()
    if requested:
        if not hasattr(config, "workerinput"):
            from pytest_ragv2.plugin.signals import (
                hold_until_collection,
                interrupt_once,
                raise_early_signal,
            )

            # SIGTERM (a cancelled CI job) as Ctrl-C, and one interrupt obeyed, from the
            # session's first moment: the reports are written whatever follows it, and a
            # signal during start-up ends in exit status 2 with the run folder unlocked
            config.add_cleanup(interrupt_once())
            raise_early_signal()
            hold_until_collection()
        drawing = not (config.option.collectonly or config.getoption("ragv2_plan"))
        if drawing and not hasattr(config, "workerinput"):  # xdist's workers draw nothing
            from pytest_ragv2.report.plot_worker import discard_early, start_early

            start_early()  # its imports beside this process's (activate's are 0.2 s)
            config.add_cleanup(discard_early)
        from pytest_ragv2.plugin.activate import activate

        activate(config)
        ctx = config.stash.get(CONTEXT_KEY, None)
        if ctx is None:  # inert after all: nothing waits for its collection
            from pytest_ragv2.plugin.signals import collection_begins

            collection_begins()
        else:  # no secret of the session's in pytest's own tracebacks
            from pytest_ragv2.plugin.trace_secrets import register

            register(config, ctx.systems)


def pytest_collect_directory(path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    ctx = parent.config.stash.get(CONTEXT_KEY, None)
    if ctx is None:
        return None
    from pytest_ragv2.plugin.collect import collect_cases_dir

    return collect_cases_dir(ctx, path, parent)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if CONTEXT_KEY in config.stash:
        from pytest_ragv2.plugin.collect import order_items

        order_items(items, config.stash[CONTEXT_KEY].seed)


def pytest_sessionstart(session: pytest.Session) -> None:
    config = session.config
    ctx = config.stash.get(CONTEXT_KEY, None)
    # xdist's controller runs no item; its workers each load their own
    if ctx is None or config.option.collectonly or config.pluginmanager.has_plugin("dsession"):
        return
    from pytest_ragv2.layers.registry import layer_info

    if any(layer_info(layer).chat for layer in ctx.layers):
        from pytest_ragv2.scoring.language import preload_identifier

        # while the cases load and the first conversations wait on their systems
        config.stash[PRELOAD_KEY] = preload_identifier()


@pytest.hookimpl(wrapper=True)
def pytest_collection(session: pytest.Session) -> Any:
    if CONTEXT_KEY not in session.config.stash:
        return (yield)
    from pytest_ragv2.plugin.signals import collection_begins

    collection_begins()  # an interrupt since the configuration ends the started session
    # Collection builds the cases and items, hundreds of thousands of objects that all live
    # on and hold no garbage cycle: the cyclic collector's passes over them were half of a
    # 50,000-item collection's time. It runs again once they are built (frozen, below).
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        return (yield)
    finally:
        if was_enabled:
            gc.enable()


def pytest_collection_finish(session: pytest.Session) -> None:
    controller = session.config.stash.get(CONTROLLER_KEY, None)
    if controller is not None:
        controller.count_expected(session.items)
    if CONTEXT_KEY in session.config.stash and _CONFIGURED == 1:
        # the cases and items live as long as the process: out of the cyclic collector's
        # reach, its full collections during the runs, pytest's at the end and the
        # interpreter's at exit no longer walk them (a third of a 20,000-item collection's
        # time). Not in a session run inside another (pytester): its host lives on.
        gc.freeze()
        global _runs_since_freeze
        _runs_since_freeze = 0


def pytest_runtest_logfinish() -> None:
    # What the runs keep (records, pytest's reports) grows by a quarter again and again
    # after the freeze above, and every growth set off a full collection over all of it
    # (2 s of a 20,000-item session; bare pytest's 0.35). Every few hundred runs, one
    # collection over what they left frees its cyclic garbage and the rest is frozen.
    global _runs_since_freeze
    if _runs_since_freeze is None:
        return
    _runs_since_freeze += 1
    if _runs_since_freeze >= FREEZE_EVERY_RUNS:
        _runs_since_freeze = 0
        gc.collect()
        gc.freeze()


@pytest.hookimpl(tryfirst=True)
def pytest_keyboard_interrupt(excinfo: pytest.ExceptionInfo[BaseException]) -> None:
    """An interrupt anywhere (the controller under xdist takes one at any instruction) is
    reported by pytest from its traceback: its entries without a line number, which a
    CPython 3.11 frame can have, are left out so that pytest can format it."""
    raw = getattr(excinfo, "_excinfo", None)
    if raw is None or not isinstance(raw, tuple) or len(raw) != 3:
        return
    from pytest_ragv2.plugin.signals import without_unnumbered_frames

    kind, value, tb = raw
    cleaned = without_unnumbered_frames(tb)
    if cleaned is not tb and cleaned is not None:
        excinfo._excinfo = (kind, value.with_traceback(cleaned), cleaned)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Any:
    if CONTEXT_KEY not in item.config.stash:
        return (yield)
    from pytest_ragv2.plugin.signals import item_protocol

    # an interrupt between the run and pytest's context managers waits for the item's end
    with item_protocol():
        return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    report = yield
    ctx = item.config.stash.get(CONTEXT_KEY, None)
    if ctx is not None and ctx.ship_raw_runs:  # a worker on another host: the controller
        lines = ctx.take_shipped_lines()  # writes these raw lines (gateways.py)
        if lines:
            report.ragv2_raw_lines = lines
    record = getattr(item, "ragv2_record", None)
    if call.excinfo is not None and call.excinfo.typename == "RunsNotWritten":
        report.ragv2_raw_write_error = str(call.excinfo.value)  # the controller stops
    if call.when == "call" and record is not None:
        report.ragv2 = record  # as JSON where the report is serialised (below)
        item.ragv2_record = None  # type: ignore[attr-defined]  # held by the report now
        if getattr(item, "ragv2_reused", False):
            report.ragv2_reused = True  # scored from an earlier session's raw run
        if report.failed and record.role in NOT_DECISIVE:
            # the baseline's or the reference's miss decides nothing: pytest's own
            # "expected failure", off the failure list, out of --lf, counted as xfailed
            report.outcome = "skipped"
            report.wasxfail = f"the {record.role} did not meet its case (it decides nothing)"
    return report


@pytest.hookimpl(wrapper=True)
def pytest_report_to_serializable(report: Any) -> Any:
    """The record crosses xdist (and any report log) as JSON; in the process that made it,
    the report holds the record itself, shared with the item and the session's list."""
    data = yield
    record = data.get("ragv2") if isinstance(data, dict) else None
    if record is not None and hasattr(record, "to_json"):
        data["ragv2"] = record.to_json()
    return data


def pytest_report_teststatus(report: pytest.TestReport) -> tuple[str, str, Any] | None:
    """A decisive run that did not meet its case is a failure (``--lf`` reruns it) shown as
    ``unmet``: the terminal's summary lists those grouped by case, and pytest's failure
    sections stay free for real errors."""
    if report.when == "call" and report.failed and hasattr(report, "ragv2"):
        return "unmet", "U", ("UNMET", {"red": True})
    return None


@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session: pytest.Session) -> None:
    controller = session.config.stash.get(CONTROLLER_KEY, None)
    ctx = session.config.stash.get(CONTEXT_KEY, None)
    try:
        if controller is not None:
            from pytest_ragv2.plugin.signals import hold

            try:
                # the systems' listings for the ceiling: calls to them, bounded as theirs
                # are, and open to an interrupt (the first one; signals.py)
                controller.read_stored_chunks(session)
                hold()  # from here the verdict is written whatever signal comes
            except KeyboardInterrupt:
                session.exitstatus = pytest.ExitCode.INTERRUPTED
                hold()
            controller.finish(session)
    except Exception:  # no verdict could be reached: never let that pass as a gate failure
        import traceback

        sys.stderr.write("pytest-ragv2: INTERNALERROR while deciding the verdict\n")
        traceback.print_exc()
        session.exitstatus = pytest.ExitCode.INTERNAL_ERROR
    finally:
        if ctx is not None:
            ctx.close()


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> Any:
    # the outermost wrapper: after pytest's own sections and short summary, so the gates
    # and the verdict are the last lines before pytest's count line
    result = yield
    controller = config.stash.get(CONTROLLER_KEY, None)
    if controller is not None:
        controller.terminal_summary(terminalreporter)
    return result


def pytest_unconfigure(config: pytest.Config) -> None:
    preload = config.stash.get(PRELOAD_KEY, None)
    if preload is not None:
        preload.join(60.0)
    controller = config.stash.get(CONTROLLER_KEY, None)
    if controller is not None:
        controller.stop_plot_workers()
        controller.wait_for_imports()
    demo = config.stash.get(DEMO_KEY, None)
    if demo is not None:
        demo.stop()
    ctx = config.stash.get(CONTEXT_KEY, None)
    if ctx is not None:
        import contextlib

        if ctx.session_lock is not None:
            ctx.session_lock.release()  # the run folder is free for a resumption
        # a session that stopped before its first write leaves no empty folder behind; a
        # folder with anything in it (the usual case) is never touched
        for folder in ctx.created_dirs:
            with contextlib.suppress(OSError):
                folder.rmdir()


def _requested_layer(config: pytest.Config) -> bool:
    """A layer on the command line, in the ini, or as ``layer`` in the ragv2 configuration."""
    if config.getoption("ragv2_layer") == "":  # given, naming nothing: never silently inert
        raise pytest.UsageError("--ragv2-layer=: names nothing; name a layer (A, B or C)")
    if config.getoption("ragv2_layer") or config.getini(INI_LAYER):
        return True
    from pytest_ragv2.config.file import SettingsError, find_config, read_config

    try:
        path = find_config(
            config.rootpath, config.getoption("ragv2_config"), config.invocation_params.dir
        )
        return bool(path and read_config(path).get("layer"))
    except SettingsError:
        return config.getoption("ragv2_config") is not None
