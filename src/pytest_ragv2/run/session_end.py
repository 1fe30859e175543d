"""How a session ended, kept beside its raw runs so that ``ragv2 rescore`` decides as the
session did: whether it was interrupted or stopped, and what ``--ragv2-max-minutes`` left out.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# what the session's end adds to its raw runs, for a rescore to decide as the session did
SESSION_END_NAME = "session-end.json"


@dataclass(frozen=True, slots=True)
class BudgetSpent:
    """What ``--ragv2-max-minutes`` left out: runs not started, by (layer, system)."""

    minutes: float
    unstarted: Mapping[tuple[str, str], int] = field(default_factory=dict)

    @property
    def runs_not_started(self) -> int:
        return sum(self.unstarted.values())

    def not_started_in(self, layer: str) -> int:
        return sum(count for (run_layer, _), count in self.unstarted.items() if run_layer == layer)

    def to_json(self) -> dict[str, Any]:
        return {
            "max_minutes": self.minutes,
            "runs_not_started": self.runs_not_started,
            "not_started": [
                {"layer": layer, "system": system, "runs": count}
                for (layer, system), count in sorted(self.unstarted.items())
            ],
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> BudgetSpent:
        return cls(
            float(data["max_minutes"]),
            {
                (str(entry["layer"]), str(entry["system"])): int(entry["runs"])
                for entry in data.get("not_started", [])
            },
        )


@dataclass(frozen=True, slots=True)
class SessionEnd:
    """How the session ended, kept beside its raw runs (:data:`SESSION_END_NAME`)."""

    interrupted: bool = False
    stopped: bool = False  # the raw runs could not be written (exit status 3)
    budget: BudgetSpent | None = None
    # pytest stopped at a failure (-x, --maxfail): why, as pytest said it
    failed_fast: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "interrupted": self.interrupted,
            "stopped": self.stopped,
            "budget": self.budget.to_json() if self.budget is not None else None,
            **({"failed_fast": self.failed_fast} if self.failed_fast else {}),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> SessionEnd:
        budget = data.get("budget")
        return cls(
            interrupted=bool(data.get("interrupted")),
            stopped=bool(data.get("stopped")),
            budget=BudgetSpent.from_json(budget) if budget else None,
            failed_fast=str(data["failed_fast"]) if data.get("failed_fast") else None,
        )

    def write(self, run_dir: Path) -> None:
        (run_dir / SESSION_END_NAME).write_text(
            json.dumps(self.to_json(), indent=1) + "\n", encoding="utf-8"
        )

    @classmethod
    def read(cls, run_dir: Path) -> SessionEnd:
        """The recorded end; a run that never reached its end (killed) ended plainly."""
        path = run_dir / SESSION_END_NAME
        if not path.is_file():
            return cls()
        return cls.from_json(json.loads(path.read_text(encoding="utf-8")))
