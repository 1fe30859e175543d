"""xdist integration, registered only in the controller and only when xdist is active.

The controller chooses the run id, seed and demo URL and sends them to every worker (workers
re-parse the command line, so anything decided at random must travel this way). The
controller never collects: the expected run count comes from the workers' collections.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from pytest_ragv2.collect import INVALID_ITEM_NAME
from pytest_ragv2.context import RunContext

WORKER_RUN_ID = "ragv2_run_id"
WORKER_SEED = "ragv2_seed"
WORKER_DEMO_URL = "ragv2_demo_url"
WORKER_DEMO_ERROR = "ragv2_demo_error"


def count_case_runs(node_ids: Sequence[str]) -> int:
    """Case runs among collected node ids: items of a YAML case file, not its error item
    (ordinary parametrized tests collected in the same session are not case runs)."""
    count = 0
    for node_id in node_ids:
        path, _, name = node_id.partition("::")
        if path.lower().endswith((".yaml", ".yml")) and "[" in name:
            count += not name.endswith(INVALID_ITEM_NAME)
    return count


class XdistHooks:
    def __init__(
        self,
        ctx: RunContext,
        demo_url: Callable[[], str] | None,
        on_expected: Callable[[int], None],
    ) -> None:
        self._ctx = ctx
        self._demo_url = demo_url
        self._on_expected = on_expected
        self._counted = False

    def pytest_configure_node(self, node: Any) -> None:
        node.workerinput[WORKER_RUN_ID] = self._ctx.run_id
        node.workerinput[WORKER_SEED] = self._ctx.seed
        if self._demo_url is not None:
            try:
                node.workerinput[WORKER_DEMO_URL] = self._demo_url()
            except RuntimeError as exc:  # the demo failed to start: workers record it per run
                node.workerinput[WORKER_DEMO_URL] = ""
                node.workerinput[WORKER_DEMO_ERROR] = str(exc)

    def pytest_xdist_node_collection_finished(self, node: Any, ids: Sequence[str]) -> None:
        if not self._counted:
            self._counted = True
            self._on_expected(count_case_runs(ids))
