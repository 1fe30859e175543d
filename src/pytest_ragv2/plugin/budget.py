"""The session's time budget (``--ragv2-max-minutes``): once spent, no new run starts.

A :class:`Budget` is registered in every process of the session (the controller and each
xdist worker, which receives the controller's deadline). An item that would start after the
deadline is skipped in its setup, with the reason, and its report says so
(``ragv2_unstarted``), so the controller counts the runs left out whichever process skipped
them. Everything that ran is kept: its raw runs, its records and the reports.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Generator
from typing import Any

import pytest

from pytest_ragv2.plugin.collect import CaseItem
from pytest_ragv2.run.session_end import BudgetSpent

WORKER_DEADLINE = "ragv2_deadline"
UNSTARTED_ATTRIBUTE = "ragv2_unstarted"


def describe_minutes(minutes: float) -> str:
    """``0.01`` -> ``0.01 min (0.6 s)``, ``30`` -> ``30 min``."""
    text = f"{minutes:g} min"
    return text if minutes >= 1 else f"{text} ({minutes * 60:.3g} s)"


class Budget:
    def __init__(self, minutes: float, deadline: float, started: float | None = None) -> None:
        self.minutes = minutes
        self.deadline = deadline  # time.time() after which no run starts
        self.started = started if started is not None else deadline - minutes * 60
        self.spent_at: float | None = None
        self.unstarted: Counter[tuple[str, str]] = Counter()  # (layer, system) -> runs

    @classmethod
    def starting_now(cls, minutes: float) -> Budget:
        now = time.time()
        return cls(minutes, now + minutes * 60, now)

    @property
    def reason(self) -> str:
        return f"not started: the budget of {describe_minutes(self.minutes)} was spent"

    @property
    def runs_not_started(self) -> int:
        return sum(self.unstarted.values())

    def not_started_in(self, layer: str) -> int:
        return sum(count for (run_layer, _), count in self.unstarted.items() if run_layer == layer)

    def left_out(self) -> str:
        """``5 run(s) not started (layer A: v1 3, v2 2)``."""
        by_layer: dict[str, list[str]] = {}
        for (layer, system), count in sorted(self.unstarted.items()):
            by_layer.setdefault(layer, []).append(f"{system} {count}")
        parts = "; ".join(f"layer {layer}: {', '.join(runs)}" for layer, runs in by_layer.items())
        return f"{self.runs_not_started} run(s) not started ({parts})"

    def spent(self) -> BudgetSpent:
        """What the budget left out, as the session's decision reads it."""
        return BudgetSpent(self.minutes, dict(self.unstarted))

    def to_json(self) -> dict[str, Any]:
        return self.spent().to_json()

    # hooks ---------------------------------------------------------------------------------

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> None:
        setattr(item, UNSTARTED_ATTRIBUTE, False)  # a rerun is judged afresh
        if isinstance(item, CaseItem) and time.time() >= self.deadline:
            if self.spent_at is None:
                self.spent_at = time.time()
            setattr(item, UNSTARTED_ATTRIBUTE, True)
            pytest.skip(self.reason)

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(
        self, item: pytest.Item, call: pytest.CallInfo[None]
    ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
        report = yield
        unstarted = getattr(item, UNSTARTED_ATTRIBUTE, False)
        if call.when == "setup" and isinstance(item, CaseItem) and unstarted:
            # JSON on the report: it crosses xdist workers
            setattr(report, UNSTARTED_ATTRIBUTE, item.key.to_json())
        return report

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        key = getattr(report, UNSTARTED_ATTRIBUTE, None)
        if isinstance(key, dict):
            self.unstarted[(str(key["layer"]), str(key["system"]))] += 1

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: Any) -> None:
        """xdist (controller): every worker stops at the controller's deadline."""
        node.workerinput[WORKER_DEADLINE] = self.deadline
