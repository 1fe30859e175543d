"""Turning the plugin on for one process: settings, run identity, systems, controller.

The controller (the only process when xdist is off) chooses the run id and seed, starts the
embedded demo when no system is configured, writes the run manifest and registers the
session controller; xdist workers receive those choices through ``workerinput``.
"""

from __future__ import annotations

import contextlib
import random
import sys
from collections.abc import Callable, Generator
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import pytest

from pytest_ragv2.config.settings import Settings, SettingsError, SystemSettings, load_settings
from pytest_ragv2.gold.allowlist import Allowlist
from pytest_ragv2.gold.cases import Catalog
from pytest_ragv2.layers.registry import UnknownLayer, demo_layer, layer_info
from pytest_ragv2.plugin.checks import check_layers, check_usable, checked_inputs
from pytest_ragv2.plugin.gateways import (
    WORKER_SHIPS_RAW_RUNS,
    check_remote_session,
    refuse_remote_resume,
)
from pytest_ragv2.plugin.options import INI_LAYER, OPTIONS, split_list
from pytest_ragv2.plugin.stash import CONTEXT_KEY, CONTROLLER_KEY, DEMO_KEY
from pytest_ragv2.plugin.xdist import (
    WORKER_DEMO_ERROR,
    WORKER_DEMO_URL,
    WORKER_RESUME,
    WORKER_RUN_ID,
    WORKER_SEED,
    XdistHooks,
)
from pytest_ragv2.report.safe_text import printable
from pytest_ragv2.run.context import RunContext, load_run_catalog
from pytest_ragv2.run.demo import (
    DemoService,
    DemoUnavailable,
    check_demo_importable,
    demo_systems,
)
from pytest_ragv2.run.rawruns import RawRunWriteError, RunIdError, claim_run_dir
from pytest_ragv2.run.resume import (
    ResumeError,
    Resumption,
    SessionLock,
    SessionLockWarning,
    differences,
    read_manifest,
    resolve_run,
)

if TYPE_CHECKING:
    from pytest_ragv2.deciding.extensions import Extensions
    from pytest_ragv2.deciding.results import SessionResults
    from pytest_ragv2.plugin.controller import Controller
    from pytest_ragv2.report.model import Summary
    from pytest_ragv2.run.shards import Shard


def activate(config: pytest.Config) -> None:
    _register_adapters(config)
    settings = _settings(config)
    if settings.layer is None:
        return
    for layer in settings.layers:
        try:
            layer_info(layer)
        except UnknownLayer as exc:
            raise pytest.UsageError(f"--ragv2-layer={settings.layer}: {exc}") from None
    shard = _shard(config)
    workerinput: dict[str, Any] | None = getattr(config, "workerinput", None)
    if workerinput is None and not (config.option.collectonly or config.getoption("ragv2_plan")):
        if config.getoption("ragv2_resume"):  # from the command line alone, no gateway opened
            refuse_remote_resume(config, str(config.getoption("ragv2_resume")))
        check_remote_session(config, demo=not settings.systems)
    systems, demo_url, configured_roles = _systems(config, settings, workerinput)
    try:
        check_layers(settings, systems)
    except ValueError as exc:
        raise pytest.UsageError(str(exc)) from None
    if workerinput is None and not (config.option.collectonly or config.getoption("ragv2_plan")):
        check_usable(settings, systems)
    resumption: Resumption | None = None
    lock: SessionLock | None = None
    fresh_root = False
    allowlist: Allowlist | None = None
    catalog: Catalog | None = None
    if workerinput is None:  # before anything is written: a bad input is a usage error
        allowlist, catalog = checked_inputs(config, settings)
        if shard is not None:
            if catalog is None:  # kept for the session, which loads it anyway
                catalog = load_run_catalog(settings, allowlist)
            _check_share(shard, catalog, settings)
    if workerinput is not None:
        seed = int(workerinput[WORKER_SEED])
        run_id = str(workerinput[WORKER_RUN_ID])
        worker = str(workerinput.get("workerid", "gw"))
        if WORKER_RESUME in workerinput:
            resumption = Resumption.from_workerinput(
                settings.raw_runs / run_id, workerinput[WORKER_RESUME]
            )
    elif config.getoption("ragv2_resume"):
        seed, run_id, resumption, lock = _resume(config, settings)
        worker = "main"
    else:
        if config.getoption("ragv2_retry_errors"):
            raise pytest.UsageError("--ragv2-retry-errors: only with --ragv2-resume=<run|last>")
        seed = settings.seed if settings.seed is not None else random.Random().getrandbits(31)
        fresh_root = not settings.raw_runs.exists()
        claimed: str | None = None
        try:  # the run's folder is created here, atomically: one session per folder
            run_id = claimed = claim_run_dir(
                settings.raw_runs,
                config.getoption("ragv2_run_id"),
                seed,
                claim=not config.getoption("ragv2_plan"),
            )
            if not config.getoption("ragv2_plan") and not config.option.collectonly:
                lock = SessionLock.acquire(settings.raw_runs / run_id)
        except (RunIdError, ResumeError) as exc:
            raise pytest.UsageError(str(exc)) from None
        except OSError as exc:  # a full or read-only disk, before the first run
            if claimed is not None and not config.getoption("ragv2_plan"):
                _unclaim(settings.raw_runs / claimed, settings.raw_runs if fresh_root else None)
            _stop_unwritable(settings.raw_runs, exc)
        worker = "main"
    if lock is not None and lock.taken_over is not None:
        _say_taken_over(config, lock)
    ctx = RunContext(
        settings=settings,
        rootdir=config.rootpath,
        layer=settings.layer,
        run_id=run_id,
        seed=seed,
        worker=worker,
        systems=systems,
        demo_url=demo_url,
        configured_roles=configured_roles,
        resumption=resumption,
        session_lock=lock,
        ship_raw_runs=bool(workerinput and workerinput.get(WORKER_SHIPS_RAW_RUNS)),
        shard=shard,
        _catalog=catalog,
        _allowlist=allowlist,
        _allowlist_loaded=workerinput is None,
    )
    if workerinput is None and resumption is None and not config.getoption("ragv2_plan"):
        ctx.created_dirs = (ctx.run_dir, *((settings.raw_runs,) if fresh_root else ()))
    config.stash[CONTEXT_KEY] = ctx
    if config.args_source != pytest.Config.ArgsSource.ARGS:
        config.args = [str(settings.cases)]
    if config.getoption("ragv2_plan"):
        _start_plan(config, ctx)
        return
    controller = None
    if workerinput is None and not config.option.collectonly:
        _protocol(config, ctx)
        if settings.systems and not config.getoption("ragv2_no_preflight"):
            _preflight(config, ctx)
        controller = _start_controller(config, ctx, demo_url)
    if settings.max_minutes is not None and not config.option.collectonly:
        _start_budget(config, settings.max_minutes, workerinput, controller)


def _report_pages(config: pytest.Config, ctx: RunContext) -> dict[str, str]:
    """Each layer's report.html as a link from pytest-html's page (``--html``)."""
    import os

    html = Path(str(config.getoption("htmlpath")))
    start = (config.invocation_params.dir / html).resolve().parent
    several = len(ctx.layers) > 1
    return {
        layer: Path(
            os.path.relpath(
                (ctx.report_dir / layer if several else ctx.report_dir) / "report.html", start
            )
        ).as_posix()
        for layer in ctx.layers
    }


def _shard(config: pytest.Config) -> Shard | None:
    given = config.getoption("ragv2_shard")
    if not given:
        return None
    from pytest_ragv2.run.shards import Shard, ShardError

    try:
        return Shard.parse(str(given))
    except ShardError as exc:
        raise pytest.UsageError(str(exc)) from None


def _check_share(shard: Shard, catalog: Catalog, settings: Settings) -> None:
    from pytest_ragv2.run.shards import ShardPlan

    plan = ShardPlan.of_catalog(shard, catalog, settings.splits, settings.layers)
    if not plan.cases:
        raise pytest.UsageError(
            f"--ragv2-shard={shard.label}: this shard's share is empty: the plan has "
            f"{plan.plan_cases} case(s), so it splits into at most {plan.plan_cases} shard(s)"
        )


def _resume(
    config: pytest.Config, settings: Settings
) -> tuple[int, str, Resumption, SessionLock | None]:
    """--ragv2-resume: the earlier run's id and seed, this session's generation, its lock.
    Whether the run is unchanged is checked once the systems are known (``_check_resumable``)."""
    given = str(config.getoption("ragv2_resume"))
    refuse_remote_resume(config, given)
    if config.getoption("ragv2_run_id"):
        raise pytest.UsageError(
            "--ragv2-resume: the run id is the resumed run's; drop --ragv2-run-id"
        )
    if config.getoption("ragv2_plan"):
        raise pytest.UsageError("--ragv2-resume and --ragv2-plan: a plan runs nothing to resume")
    try:
        run_id = resolve_run(settings.raw_runs, given)
        run_dir = settings.raw_runs / run_id
        manifest = read_manifest(run_dir)
        seed = int(manifest["seed"])
        if settings.seed is not None and settings.seed != seed:
            raise ResumeError(
                f"--ragv2-resume={given}: the run's seed is {seed}, not {settings.seed} "
                "(a resumed run keeps its seed: drop --ragv2-seed)"
            )
        lock = SessionLock.acquire(run_dir) if not config.option.collectonly else None
    except (ResumeError, KeyError, ValueError) as exc:
        raise pytest.UsageError(str(exc)) from None
    except OSError as exc:  # the lock cannot be written: a full or read-only disk
        _stop_unwritable(settings.raw_runs, exc)
    generation = len(manifest.get("resumed") or []) + 1
    retry = bool(config.getoption("ragv2_retry_errors"))
    return seed, run_id, Resumption(run_dir, generation, retry), lock


def _say_taken_over(config: pytest.Config, lock: SessionLock) -> None:
    """A stale lock taken over, in pytest's warnings summary, located at the lock file."""
    import warnings

    warning = SessionLockWarning(f"taken over: {lock.taken_over}")
    record = warnings.WarningMessage(warning, SessionLockWarning, str(lock.path), 1, line="")
    config.hook.pytest_warning_recorded.call_historic(
        kwargs={"warning_message": record, "when": "config", "nodeid": "", "location": None}
    )


def _stop_unwritable(raw_runs: Path, exc: OSError) -> NoReturn:
    """A run folder that cannot be created or locked (a full disk, a read-only one) stops
    the session before its first run, exit status 3, in one line."""
    if isinstance(exc, RawRunWriteError):
        message = str(exc)
    else:
        where = exc.filename if exc.filename is not None else raw_runs
        message = f"raw runs could not be written: {where}: {exc.strerror or exc}"
    pytest.exit(
        f"pytest-ragv2: {printable(message)}; the session stopped before its first run "
        "(exit status 3)",
        returncode=pytest.ExitCode.INTERNAL_ERROR,
    )


def _unclaim(run_dir: Path, fresh_root: Path | None) -> None:
    """Remove the run folder this session created and could not use (and ``raw_runs``
    when this session created it), when nothing is in them."""
    for folder in (run_dir, fresh_root):
        if folder is not None:
            with contextlib.suppress(OSError):
                folder.rmdir()


def _check_resumable(ctx: RunContext, options: dict[str, Any]) -> None:
    """Refuse to resume a run whose definition changed, naming every difference."""
    from pytest_ragv2.plugin.manifest import run_manifest

    if ctx.resumption is None:
        return
    recorded = read_manifest(ctx.run_dir)
    changed = differences(recorded, run_manifest(ctx, options))
    if changed:
        if ctx.session_lock is not None:
            ctx.session_lock.release()
        lines = "\n".join(f"  {change}" for change in changed)
        raise pytest.UsageError(
            f"--ragv2-resume={ctx.run_id}: the run cannot be resumed, "
            f"{len(changed)} thing(s) changed since it started:\n{lines}\n"
            "(start a new run instead, or restore what changed)"
        )


def _start_plan(config: pytest.Config, ctx: RunContext) -> None:
    """--ragv2-plan: collect in this process (never on xdist workers), print, run nothing."""
    from pytest_ragv2.plugin.collect import planned_run_keys
    from pytest_ragv2.plugin.plan import PlanHooks, narrowed

    workers = len(getattr(config.option, "tx", None) or ()) if _distributed(config) else 0
    config.option.dist = "no"  # read by xdist's pytest_configure, which runs after this one
    slots = {name: system.slot for name, system in ctx.systems.items()}
    settings = ctx.settings
    hooks = PlanHooks(
        ctx.layers,
        slots,
        settings.raw_runs,
        ctx.rootdir,
        workers,
        settings.max_minutes,
        planned=None if narrowed(config) else lambda: planned_run_keys(ctx),
    )
    config.pluginmanager.register(hooks, "ragv2-plan")


def _protocol(config: pytest.Config, ctx: RunContext) -> None:
    """The formal protocol's refusals (usage errors: exit status 4) and the holdout's look."""
    from pytest_ragv2.deciding import formal as protocol

    settings, root = ctx.settings, ctx.rootdir
    path = protocol.lock_path(settings, root)
    holdout = "holdout" in settings.splits
    try:
        if config.getoption("ragv2_formal"):
            narrowed = [
                flag
                for flag, given in (
                    ("-k", config.option.keyword),
                    ("-m", config.option.markexpr),
                    ("--ragv2-systems", config.getoption("ragv2_systems")),
                    ("--ragv2-lang", config.getoption("ragv2_lang")),
                    ("paths on the command line", config.args_source == config.ArgsSource.ARGS),
                )
                if given
            ]
            layers = set(ctx.layers)  # a case this session does not collect is not named
            provisional = [
                loaded.case_id
                for loaded in ctx.catalog.cases(settings.splits)
                if loaded.case.gold_status != "adjudicated" and layers & set(loaded.case.layers)
            ]
            lock = protocol.check_formal(
                settings, root, path, provisional=provisional, narrowed_by=narrowed
            )
            if holdout:
                protocol.record_holdout_look(path, lock, ctx.run_id)
        elif holdout:
            lock = protocol.check_holdout(settings, root, path)
            protocol.record_holdout_look(path, lock, ctx.run_id)
    except protocol.ProtocolError as exc:
        raise pytest.UsageError(str(exc)) from None
    except OSError as exc:  # the holdout's look cannot be recorded: no holdout run
        where = exc.filename if exc.filename is not None else path
        pytest.exit(
            f"pytest-ragv2: the gate lock could not be written: {where}: "
            f"{exc.strerror or exc}; the session stopped before its first run (exit status 3)",
            returncode=pytest.ExitCode.INTERNAL_ERROR,
        )


def _distributed(config: pytest.Config) -> bool:
    return bool(
        config.pluginmanager.hasplugin("xdist")
        and getattr(config.option, "dist", "no") != "no"
        and getattr(config.option, "tx", None)
    )


def _start_budget(
    config: pytest.Config,
    minutes: float,
    workerinput: dict[str, Any] | None,
    controller: Controller | None,
) -> None:
    """--ragv2-max-minutes: every process stops starting runs at the controller's deadline."""
    from pytest_ragv2.plugin.budget import WORKER_DEADLINE, Budget

    if workerinput is not None and WORKER_DEADLINE in workerinput:
        budget = Budget(minutes, float(workerinput[WORKER_DEADLINE]))
    else:
        budget = Budget.starting_now(minutes)
    config.pluginmanager.register(budget, "ragv2-budget")
    if controller is not None:
        controller.budget = budget


def _preflight(config: pytest.Config, ctx: RunContext) -> None:
    """The checks of :mod:`pytest_ragv2.run.preflight`; a stop is a usage error naming them all."""
    from pytest_ragv2.run.preflight import run_preflight

    allowed = sorted(ctx.allowlist.file_ids) if ctx.allowlist else []
    report = run_preflight(ctx.systems, ctx.layers, allowed)
    ctx.preflight = report
    if report.stops:
        lines = "\n".join(f"  {finding}" for finding in report.stops)
        raise pytest.UsageError(
            f"preflight: {len(report.stops)} problem(s) stop this run before its first item:\n"
            f"{lines}\n(--ragv2-no-preflight skips these checks)"
        )


def _register_adapters(config: pytest.Config) -> None:
    """The adapters the conftests and plugins add (``pytest_ragv2_adapters``), known to the
    configuration before it is read."""
    from pytest_ragv2.systems.registry import AdapterRegistrationError, register_adapters

    answers: list[Any] = config.hook.pytest_ragv2_adapters()
    try:
        register_adapters([row for answer in answers for row in answer or ()])
    except AdapterRegistrationError as exc:
        raise pytest.UsageError(str(exc)) from None


def _settings(config: pytest.Config) -> Settings:
    layer = config.getoption("ragv2_layer") or config.getini(INI_LAYER) or None
    overrides: dict[str, Any] = {
        "layer": str(layer).upper() if layer else None,
        "repetitions": config.getoption("ragv2_reps"),
        "splits": option_list(config, "ragv2_split"),
        "languages": option_list(config, "ragv2_lang"),
        "seed": config.getoption("ragv2_seed"),
        "evidence": config.getoption("ragv2_evidence"),
        "max_minutes": config.getoption("ragv2_max_minutes"),
    }
    try:
        return load_settings(
            config.rootpath,
            config.getoption("ragv2_config"),
            overrides,
            invocation_dir=config.invocation_params.dir,
        )
    except SettingsError as exc:
        raise pytest.UsageError(str(exc)) from None


def _systems(
    config: pytest.Config, settings: Settings, workerinput: dict[str, Any] | None
) -> tuple[dict[str, SystemSettings], Callable[[], str] | None, dict[str, str]]:
    """The selected systems, or the embedded demo's (whose URL is known once it started),
    and the roles of every configured system (selected or not)."""
    systems = dict(settings.systems)
    demo_url: Callable[[], str] | None = None
    if not systems:
        if workerinput is not None:
            demo_url = _worker_demo_url(workerinput)
        elif not config.option.collectonly and not config.getoption("ragv2_plan"):
            try:
                check_demo_importable()
            except DemoUnavailable as exc:
                raise pytest.UsageError(str(exc)) from None
            if not settings.corpus.is_dir():
                raise pytest.UsageError(
                    "no systems are configured, so pytest-ragv2 runs its embedded demo "
                    f"systems over the corpus directory {settings.corpus}, which does not "
                    "exist (set [tool.ragv2] corpus, or configure [tool.ragv2.systems])"
                )
            demo = DemoService(settings.corpus).start()
            config.stash[DEMO_KEY] = demo
            demo_url = lambda: demo.url  # noqa: E731
        systems = demo_systems("http://demo.invalid", demo_layer(settings.layers))
    if settings.demo_faults:
        if settings.systems:
            raise pytest.UsageError(
                f"{settings.where('demo_faults')}: demo_faults: fault modes apply to the "
                "embedded demo systems only, and systems are configured"
            )
        unknown_faulted = sorted(set(settings.demo_faults) - set(systems))
        if unknown_faulted:
            raise pytest.UsageError(
                f"{settings.where('demo_faults', unknown_faulted[0])}: demo_faults: no demo "
                f"system named {', '.join(unknown_faulted)} "
                f"(demo systems: {', '.join(systems)})"
            )
    configured_roles: dict[str, str] = {name: system.role for name, system in systems.items()}
    selected = option_list(config, "ragv2_systems")
    if selected:
        unknown = sorted(set(selected) - set(systems))
        if unknown:
            raise pytest.UsageError(
                f"--ragv2-systems: unknown system(s) {', '.join(unknown)}; "
                f"configured: {', '.join(systems)}"
            )
        systems = {name: systems[name] for name in selected}
    return systems, demo_url, configured_roles


def option_list(config: pytest.Config, dest: str) -> list[str] | None:
    """A comma-separated option's names (None: the option was not given). Given but naming
    nothing (``--ragv2-lang=``, ``--ragv2-lang=,``) is a usage error: it would otherwise
    mean "all", the opposite of what an empty list says."""
    value = config.getoption(dest)
    names = split_list(value)
    if value is not None and names is None:
        flag = next(option.flag for option in OPTIONS if option.dest == dest)
        raise pytest.UsageError(
            f"{flag}={printable(str(value))}: names nothing; name at least one, or leave "
            "the option out"
        )
    return names


def _worker_demo_url(workerinput: dict[str, Any]) -> Callable[[], str]:
    url = str(workerinput[WORKER_DEMO_URL])
    error = str(workerinput.get(WORKER_DEMO_ERROR, ""))

    def provide() -> str:
        if not url:
            raise DemoUnavailable(error or "the demo service did not start")
        return url

    return provide


class _ReportSink:
    """Feeds the controller every report; registered in the controlling process only."""

    def __init__(self, controller: Controller) -> None:
        self._controller = controller

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> Generator[None, None, None]:
        # after every other plugin: pytest-html lists a run's items from its record at the
        # item's last report, and only then may the controller drop them
        try:
            return (yield)
        finally:
            self._controller.add_report(report)

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        self._controller.add_report(report)


def _extensions(config: pytest.Config) -> Extensions:
    """The gates and report sections the conftests and plugins implement, as hooks."""
    from pytest_ragv2.deciding.extensions import Extensions

    hook = config.hook

    def gates(layer: str, results: SessionResults, settings: Settings) -> Any:
        return hook.pytest_ragv2_gates(layer=layer, results=results, settings=settings)

    def sections(summary: Summary) -> Any:
        return hook.pytest_ragv2_summary(summary=summary)

    return Extensions(gates, sections)


def _start_controller(
    config: pytest.Config, ctx: RunContext, demo_url: Callable[[], str] | None
) -> Controller:
    # the controller's modules (aggregation, statistics, numpy) are never needed by workers
    from pytest_ragv2.plugin.controller import Controller

    options = {option.dest: config.getoption(option.dest) for option in OPTIONS}
    _check_resumable(ctx, options)
    controller = Controller(ctx, options, extensions=_extensions(config))
    if not config.option.collectonly and not config.getoption("ragv2_plan"):
        controller.start_plot_workers()
    from pytest_ragv2.plugin.progress import progress_interval

    try:
        controller.progress_every_s = progress_interval(
            config.getoption("ragv2_progress"),
            verbosity=config.get_verbosity(),
            interactive=sys.stdout.isatty(),
        )
    except ValueError as exc:
        raise pytest.UsageError(str(exc)) from None

    def write_progress(line: str) -> None:
        # looked up when a line is due: the terminal reporter registers after this plugin
        reporter = config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            reporter.write_line(line)

    controller.progress_writer = write_progress
    config.stash[CONTROLLER_KEY] = controller
    config.pluginmanager.register(_ReportSink(controller), "ragv2-report-sink")
    if _distributed(config):  # -n N, or --tx gateways (local or on other hosts)
        config.pluginmanager.register(
            XdistHooks(ctx, demo_url, controller.set_expected), "ragv2-xdist"
        )
        controller.warm_imports()  # the controller only waits for its workers' reports
    if config.pluginmanager.hasplugin("html") and config.getoption("htmlpath", None):
        # pytest-html's per-item report costs about a millisecond per item, so it is the
        # user's choice (--html); report.html from the summary is always written
        from pytest_ragv2.plugin.html import HtmlHooks

        config.pluginmanager.register(
            HtmlHooks(
                controller, ctx.layers, ctx.settings.gates.recall_k, _report_pages(config, ctx)
            ),
            "ragv2-html",
        )
    return controller
