"""Keys of the per-session state kept on ``config.stash`` (cheap to import)."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from pytest_ragv2.plugin.controller import Controller
    from pytest_ragv2.run.context import RunContext
    from pytest_ragv2.run.demo import DemoService

CONTEXT_KEY: pytest.StashKey[RunContext] = pytest.StashKey()
CONTROLLER_KEY: pytest.StashKey[Controller] = pytest.StashKey()
DEMO_KEY: pytest.StashKey[DemoService] = pytest.StashKey()
# the language identifier loading in the background (joined before the session exits)
PRELOAD_KEY: pytest.StashKey[threading.Thread] = pytest.StashKey()
