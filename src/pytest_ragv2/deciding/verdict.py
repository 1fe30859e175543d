"""A gate's result and the verdict the gates make: the types every gate, report and the
layer protocol read (a leaf of the decision: it imports nothing of the package).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from pydantic import JsonValue

Decision = Literal["pass", "fail", "skip"]


@dataclass(frozen=True, slots=True)
class GateResult:
    name: str
    description: str
    value: float | int | str | None
    threshold: str
    decision: Decision
    reason: str
    hard: bool = False
    details: list[str] = field(default_factory=list)
    # a comparison gate's evidence: estimate, interval, test and p-values (stats.py)
    evidence: dict[str, JsonValue] | None = None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def _fmt(value: float | None, digits: int = 3) -> str:
    return "n/a" if value is None or math.isnan(value) else f"{value:.{digits}f}"


def fmt_delta(value: float) -> str:
    """A signed difference to three places, never "-0.000" for a rounding residue."""
    return f"{round(value, 9) + 0.0:+.3f}"


def _decide(ok: bool) -> Decision:
    return "pass" if ok else "fail"


def verdict(gates: Sequence[GateResult]) -> bool:
    """True when no gate failed (skipped gates say why they could not be evaluated)."""
    return all(gate.decision != "fail" for gate in gates)
