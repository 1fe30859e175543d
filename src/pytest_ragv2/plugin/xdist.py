"""xdist integration, registered only in the controller and only when xdist is active.

The controller chooses the run id, seed and demo URL and sends them to every worker (workers
re-parse the command line, so anything decided at random must travel this way). The
controller never collects: the expected run count comes from the workers' collections.

At the chat layers the controller also schedules: every item of one inference slot goes to
one worker (``SlotScheduling``). xdist's own ``loadgroup`` cannot be relied on for this: it
groups by a suffix it writes into ``item._nodeid`` on the workers, which pytest 9.2 no longer
reads (node ids are structured there), so on pytest 9.2 ``xdist_group`` marks are silently
ignored and the "grouped" items spread over every worker. The slot of an item is read from
its node id instead (``CASE[system-lang-rN]``), which works on every pytest version.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import pytest

from pytest_ragv2.layers.registry import layer_info
from pytest_ragv2.plugin.collect import INVALID_ITEM_NAME
from pytest_ragv2.plugin.gateways import (
    RAW_LINES_ATTRIBUTE,
    WORKER_SHIPS_RAW_RUNS,
    HostExpectation,
    ShippedRawRuns,
    check_host,
    defining_files,
    is_remote,
    python_modules,
    relative_path,
    without_implicit_rsync,
    worker_of,
)
from pytest_ragv2.run.context import RunContext

WORKER_RUN_ID = "ragv2_run_id"
WORKER_SEED = "ragv2_seed"
WORKER_DEMO_URL = "ragv2_demo_url"
WORKER_DEMO_ERROR = "ragv2_demo_error"
WORKER_RESUME = "ragv2_resume"


def system_of_node(node_id: str, systems: Iterable[str]) -> str | None:
    """The system of a case item's node id ``path::CASE[system-lang-rN]`` (an ``@group``
    suffix, as older pytest-xdist/pytest pairs write it, is ignored); None for other ids.
    Matched against the known system names, longest first, since both system names and
    language codes may contain hyphens (``demo-v2``, ``pt-BR``)."""
    _, _, name = node_id.split("@", 1)[0].partition("::")
    if not name.endswith("]") or "[" not in name:
        return None
    params = name[name.index("[") + 1 : -1]
    head, _, rep = params.rpartition("-")
    if not rep.startswith("r") or not rep[1:].isdigit():
        return None
    for system in sorted(systems, key=len, reverse=True):
        if head.startswith(system + "-") and len(head) > len(system) + 1:
            return system
    return None


def layer_of_node(node_id: str, layers: Sequence[str]) -> tuple[str, str]:
    """(layer, node id without the layer) of a case item of a session of several layers
    (``CASE[B-system-lang-rN]``); a one-layer session's ids carry no layer."""
    if len(layers) < 2 or "[" not in node_id:
        return (layers[0] if layers else "", node_id)
    head, _, params = node_id.partition("[")
    layer, dash, rest = params.partition("-")
    if not dash or layer not in layers:
        return ("", node_id)
    return layer, f"{head}[{rest}"


def make_slot_scheduler(
    config: Any, log: Any, slots: Mapping[str, str], layers: Sequence[str] = ()
) -> Any:
    """A load-scope scheduler whose scope is the item's inference slot: a slot's items run
    on one worker, in collection order; different slots, retrieval items (no slot) and
    ordinary tests run in parallel."""
    from xdist.scheduler.loadscope import LoadScopeScheduling

    chat_layers = {layer for layer in layers if layer_info(layer).chat}

    class SlotScheduling(LoadScopeScheduling):  # type: ignore[misc]
        def _split_scope(self, nodeid: str) -> str:
            layer, plain = layer_of_node(nodeid, layers)
            if layers and layer not in chat_layers:
                return nodeid  # a retrieval item: no inference slot
            system = system_of_node(plain, slots)
            if system is None or system not in slots:
                return nodeid
            return f"ragv2-slot-{slots[system]}"

    return SlotScheduling(config, log)


def case_runs(node_ids: Iterable[str]) -> Iterable[str]:
    """The node ids of case runs: items of a YAML case file, not its error item."""
    for node_id in node_ids:
        path, _, name = node_id.partition("::")
        in_case_file = path.lower().endswith((".yaml", ".yml")) and "[" in name
        if in_case_file and not name.endswith(INVALID_ITEM_NAME):
            yield node_id


def count_case_runs(node_ids: Sequence[str], layers: Sequence[str]) -> dict[str, int]:
    """Case runs per layer among collected node ids: items of a YAML case file, not its
    error item (ordinary parametrized tests collected in the same session are not case
    runs)."""
    counts = dict.fromkeys(layers, 0)
    for node_id in case_runs(node_ids):
        layer, _ = layer_of_node(node_id.partition("::")[2], layers)
        if layer in counts:
            counts[layer] += 1
    return counts


class XdistHooks:
    def __init__(
        self,
        ctx: RunContext,
        demo_url: Callable[[], str] | None,
        on_expected: Callable[[dict[str, int]], None],
    ) -> None:
        self._ctx = ctx
        self._slots = {name: system.slot for name, system in ctx.systems.items()}
        self._demo_url = demo_url
        self._on_expected = on_expected
        self._counted = False
        self._shipped = ShippedRawRuns(ctx.raw_run_writer)  # remote workers' raw runs
        self._expected: HostExpectation | None = None
        # with workers on other hosts: the case runs collected and those reported, so the
        # runs a lost host never made are named at the end
        self._remote = False
        self._collected: list[str] = []
        self._reported: set[str] = set()
        self._lost_hosts: list[str] = []

    def pytest_configure_node(self, node: Any) -> None:
        node.workerinput[WORKER_RUN_ID] = self._ctx.run_id
        node.workerinput[WORKER_SEED] = self._ctx.seed
        if self._ctx.resumption is not None:
            node.workerinput[WORKER_RESUME] = self._ctx.resumption.to_workerinput()
        if self._demo_url is not None:
            try:
                node.workerinput[WORKER_DEMO_URL] = self._demo_url()
            except RuntimeError as exc:  # the demo failed to start: workers record it per run
                node.workerinput[WORKER_DEMO_URL] = ""
                node.workerinput[WORKER_DEMO_ERROR] = str(exc)
        if is_remote(node.gateway.spec):
            node.workerinput[WORKER_SHIPS_RAW_RUNS] = True
            self._remote = True
            self._check_host(node)

    def _check_host(self, node: Any) -> None:
        ctx, settings = self._ctx, self._ctx.settings
        if self._expected is None:
            wanted = defining_files(
                ctx.rootdir,
                settings.source,
                settings.cases,
                settings.gold,
                settings.allowlist,
                python_modules(ctx.systems),
            )
            self._expected = HostExpectation.here(ctx.rootdir, wanted)
        rootdir = relative_path(ctx.rootdir, node.config.invocation_params.dir)
        ctx.remote_hosts[str(node.gateway.id)] = check_host(node, rootdir, self._expected)

    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        if error is not None and is_remote(node.gateway.spec):
            self._lost_hosts.append(f"{node.gateway.id} ({error})".strip())

    def runs_not_made(self) -> tuple[list[str], list[str]]:
        """The hosts lost, and the case runs collected that no report came back for."""
        if not self._lost_hosts:
            return [], []
        return list(self._lost_hosts), [
            node_id for node_id in self._collected if node_id not in self._reported
        ]

    def pytest_xdist_setupnodes(self, config: Any, specs: Sequence[Any]) -> None:
        without_implicit_rsync(config)

    @pytest.hookimpl(tryfirst=True)  # before the controller aggregates the report
    def pytest_runtest_logreport(self, report: Any) -> None:
        if self._remote:
            self._reported.add(report.nodeid)
        lines = report.__dict__.pop(RAW_LINES_ATTRIBUTE, None)  # kept on no report after
        worker = worker_of(report)
        if lines and worker is not None:
            failure = self._shipped.receive(worker, lines)
            if failure is not None:  # recorded as a worker's own write failure is
                report.ragv2_raw_write_error = failure

    def pytest_sessionfinish(self) -> None:
        self._shipped.close()

    def pytest_xdist_make_scheduler(self, config: Any, log: Any) -> Any:
        if not any(layer_info(layer).chat for layer in self._ctx.layers):
            return None  # retrieval runs have no inference slot: xdist's own scheduling
        return make_slot_scheduler(config, log, self._slots, self._ctx.layers)

    def pytest_xdist_node_collection_finished(self, node: Any, ids: Sequence[str]) -> None:
        if not self._counted:
            self._counted = True
            self._on_expected(count_case_runs(ids, self._ctx.layers))
            if self._remote:
                self._collected = list(case_runs(ids))
