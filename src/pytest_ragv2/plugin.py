"""pytest11 entry point. Every hook delegates; the plugin is inert without a layer."""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pytest_ragv2.collect import CONTEXT_KEY, CaseFile, CaseItem, order_items
from pytest_ragv2.options import INI_LAYER, OPTIONS, split_list

if TYPE_CHECKING:  # imported lazily at run time: an inert plugin costs no start-up
    from pytest_ragv2.context import RunContext
    from pytest_ragv2.controller import Controller
    from pytest_ragv2.demo_systems import DemoService
    from pytest_ragv2.settings import Settings

CONTROLLER_KEY = pytest.StashKey["Controller"]()
DEMO_KEY = pytest.StashKey["DemoService"]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("ragv2", "pytest-ragv2: evaluate RAG systems against gold cases")
    for option in OPTIONS:
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


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "ragv2(layer, category, system, lang): a gold-case run")
    config.addinivalue_line("markers", "xdist_group(name): run in one xdist worker (loadgroup)")
    config.addinivalue_line("markers", "layer_a: a layer-A (retrieval only) run")
    _activate(config)


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> CaseFile | None:
    ctx = parent.config.stash.get(CONTEXT_KEY, None)
    if ctx is None or file_path.suffix not in (".yaml", ".yml"):
        return None
    if not file_path.resolve().is_relative_to(ctx.settings.cases):
        return None
    return CaseFile.from_parent(parent, path=file_path)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if CONTEXT_KEY in config.stash:
        order_items(items, config.stash[CONTEXT_KEY].seed)


def pytest_collection_finish(session: pytest.Session) -> None:
    controller = session.config.stash.get(CONTROLLER_KEY, None)
    if controller is not None:
        controller.expected_runs = sum(isinstance(item, CaseItem) for item in session.items)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    report = yield
    if call.when == "call" and isinstance(item, CaseItem) and item.record is not None:
        report.ragv2 = item.record
    return report


@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session: pytest.Session) -> None:
    controller = session.config.stash.get(CONTROLLER_KEY, None)
    if controller is not None:
        controller.finish(session)
    if CONTEXT_KEY in session.config.stash:
        session.config.stash[CONTEXT_KEY].close()


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    controller = config.stash.get(CONTROLLER_KEY, None)
    if controller is not None:
        controller.terminal_summary(terminalreporter)


def pytest_unconfigure(config: pytest.Config) -> None:
    demo = config.stash.get(DEMO_KEY, None)
    if demo is not None:
        demo.stop()


class _ReportSink:
    """Feeds the controller every report: registered in the controlling process only."""

    def __init__(self, controller: Controller) -> None:
        self._controller = controller

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self._controller.add_report(report)


def _layer(config: pytest.Config) -> str | None:
    layer = config.getoption("ragv2_layer") or config.getini(INI_LAYER) or None
    return str(layer).upper() if layer else None


def _activate(config: pytest.Config) -> None:
    """Build this process's RunContext when a layer is asked for; otherwise stay inert."""
    from pytest_ragv2.settings import SettingsError, load_settings

    layer = _layer(config)
    overrides: dict[str, Any] = {
        "layer": layer,
        "repetitions": config.getoption("ragv2_reps"),
        "splits": split_list(config.getoption("ragv2_split")),
        "languages": split_list(config.getoption("ragv2_lang")),
        "seed": config.getoption("ragv2_seed"),
    }
    try:
        settings = load_settings(config.rootpath, config.getoption("ragv2_config"), overrides)
    except SettingsError as exc:
        if layer is None:
            return
        raise pytest.UsageError(str(exc)) from None
    if settings.layer is None:
        return
    _start(config, settings)


def _start(config: pytest.Config, settings: Settings) -> None:
    from pytest_ragv2.context import RunContext
    from pytest_ragv2.demo_systems import DemoService, DemoUnavailable, check_demo_importable
    from pytest_ragv2.demo_systems import demo_systems as make_demo_systems
    from pytest_ragv2.rawruns import new_run_id
    from pytest_ragv2.xdist import WORKER_DEMO_URL, WORKER_RUN_ID, WORKER_SEED

    layer = settings.layer
    if layer != "A":
        _check_chat_layer_dist(config)
        raise pytest.UsageError(
            f"--ragv2-layer={layer}: only layer A (retrieval only) is available in this version"
        )
    workerinput: dict[str, Any] | None = getattr(config, "workerinput", None)
    if workerinput is not None:
        seed = int(workerinput[WORKER_SEED])
        run_id = str(workerinput[WORKER_RUN_ID])
        worker = str(workerinput.get("workerid", "gw"))
    else:
        seed = settings.seed if settings.seed is not None else random.Random().getrandbits(31)
        run_id = config.getoption("ragv2_run_id") or new_run_id(seed)
        worker = "main"

    systems = dict(settings.systems)
    selected = split_list(config.getoption("ragv2_systems"))
    demo_url: Callable[[], str] | None = None
    if not systems:
        if workerinput is not None:
            url = str(workerinput[WORKER_DEMO_URL])
            demo_url = lambda: url  # noqa: E731
        else:
            try:
                check_demo_importable()
            except DemoUnavailable as exc:
                raise pytest.UsageError(str(exc)) from None
            demo = DemoService(settings.corpus).start()
            config.stash[DEMO_KEY] = demo
            demo_url = lambda: demo.url  # noqa: E731
        systems = make_demo_systems("http://demo.invalid")
    if selected:
        unknown = sorted(set(selected) - set(systems))
        if unknown:
            raise pytest.UsageError(
                f"--ragv2-systems: unknown system(s) {', '.join(unknown)}; "
                f"configured: {', '.join(systems)}"
            )
        systems = {name: systems[name] for name in selected}

    ctx = RunContext(
        settings=settings,
        rootdir=config.rootpath,
        layer=layer,
        run_id=run_id,
        seed=seed,
        worker=worker,
        systems=systems,
        demo_url=demo_url,
    )
    config.stash[CONTEXT_KEY] = ctx
    if config.args_source != pytest.Config.ArgsSource.ARGS:
        config.args = [str(settings.cases)]
    if workerinput is None:
        _start_controller(config, ctx, demo_url)


def _start_controller(
    config: pytest.Config, ctx: RunContext, demo_url: Callable[[], str] | None
) -> None:
    from pytest_ragv2.controller import Controller, write_run_manifest

    controller = Controller(ctx)
    config.stash[CONTROLLER_KEY] = controller
    config.pluginmanager.register(_ReportSink(controller), "ragv2-report-sink")
    if config.pluginmanager.hasplugin("xdist") and getattr(config.option, "numprocesses", None):
        from pytest_ragv2.xdist import XdistHooks

        def on_expected(count: int) -> None:
            controller.expected_runs = count

        config.pluginmanager.register(XdistHooks(ctx, demo_url, on_expected), "ragv2-xdist")
    write_run_manifest(ctx, {option.dest: config.getoption(option.dest) for option in OPTIONS})


def _check_chat_layer_dist(config: pytest.Config) -> None:
    """Chat layers share one inference slot per system: refuse a schedule that could overlap."""
    processes = getattr(config.option, "numprocesses", None)
    dist = getattr(config.option, "dist", "no")
    if processes and dist != "loadgroup":
        raise pytest.UsageError(
            f"layer {_layer(config)} runs each inference slot serially: with -n use "
            f"--dist loadgroup (got --dist {dist}), or run without -n"
        )
