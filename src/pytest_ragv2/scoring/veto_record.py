"""A hard safety veto as a run's record holds it: the kind, the turn, the offending text and
why (:mod:`pytest_ragv2.scoring.vetoes` raises them). A module of its own, light to import:
every record reads its vetoes through it, and a layer-A session never loads the scorers."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pytest_ragv2.gold.schema import VetoKind


@dataclass(frozen=True, slots=True)
class Veto:
    """A hard safety veto: no weighted score can buy it back."""

    kind: VetoKind
    turn: int
    text: str
    detail: str

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "turn": self.turn, "text": self.text, "detail": self.detail}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Veto:
        return cls(
            data["kind"], int(data.get("turn", 0)), str(data["text"]), data.get("detail", "")
        )
