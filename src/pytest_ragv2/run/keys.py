"""The identity of one run: (case, system, repetition, language, layer).

Records are keyed by this, never by pytest node id (xdist's loadgroup rewrites node ids).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

# roles whose runs decide nothing on their own: their misses are pytest's expected failures
NOT_DECISIVE = ("baseline", "reference")


@dataclass(frozen=True, slots=True, order=True)
class RunKey:
    case: str
    system: str
    rep: int
    lang: str
    layer: str

    def sort_key(self) -> tuple[str, str, int, str, str]:
        """The key's fields in order: sorting by it gives the keys' own order, without a
        comparison method called per pair (a session sorts every run's key)."""
        return (self.case, self.system, self.rep, self.lang, self.layer)

    @property
    def item_name(self) -> str:
        """The readable pytest item name, e.g. ``B07[v2-de-r3]``."""
        return f"{self.case}[{self.system}-{self.lang}-r{self.rep}]"

    def to_json(self) -> dict[str, Any]:
        return {
            "case": self.case,
            "system": self.system,
            "rep": self.rep,
            "lang": self.lang,
            "layer": self.layer,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> RunKey:
        return cls(
            case=str(data["case"]),
            system=str(data["system"]),
            rep=int(data["rep"]),
            lang=str(data["lang"]),
            layer=str(data["layer"]),
        )
