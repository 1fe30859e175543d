"""Keys of the per-session state kept on ``config.stash`` (cheap to import)."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol

import pytest

if TYPE_CHECKING:
    from pytest_ragv2.run.context import RunContext
    from pytest_ragv2.run.demo import DemoService


class SessionController(Protocol):
    """What the hooks ask of the controller (:class:`pytest_ragv2.plugin.controller.Controller`):
    the hooks stay cheap to import, and the controller's module imports the items'."""

    def count_expected(self, items: Sequence[pytest.Item]) -> None: ...

    def read_stored_chunks(self, session: pytest.Session) -> None: ...

    def finish(self, session: pytest.Session) -> None: ...

    def terminal_summary(self, reporter: Any) -> None: ...

    def stop_plot_workers(self) -> None: ...

    def wait_for_imports(self, timeout_s: float = 30.0) -> None: ...


CONTEXT_KEY: pytest.StashKey[RunContext] = pytest.StashKey()
CONTROLLER_KEY: pytest.StashKey[SessionController] = pytest.StashKey()
DEMO_KEY: pytest.StashKey[DemoService] = pytest.StashKey()
# the language identifier loading in the background (joined before the session exits)
PRELOAD_KEY: pytest.StashKey[threading.Thread] = pytest.StashKey()
