"""The demo server's fault modes: a comma list of faults switched on through a path segment
(``/fault/<spec>/...`` for rag_api, ``/chat/<v>/fault/<spec>/...`` for chat; docs/demo.md)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

_FAULT = re.compile(
    r"^(?:latency-(\d+(?:\.\d+)?)|hang-(\d+(?:\.\d+)?)|(5xx)|(5xx-once)"
    r"|(malformed)|(truncate))$"
)


@dataclass(frozen=True, slots=True)
class _Faults:
    latency_s: float = 0.0
    hang_s: float = 0.0
    always_5xx: bool = False
    every_other_5xx: bool = False
    malformed: bool = False
    truncate: bool = False


def _parse_faults(spec: str) -> _Faults | None:
    """The faults of a comma list such as "latency-200,5xx-once"; None when unknown."""
    latency = hang = 0.0
    flags = {"5xx": False, "5xx-once": False, "malformed": False, "truncate": False}
    for item in spec.split(","):
        match = _FAULT.match(item.strip())
        if match is None:
            return None
        if match.group(1):
            latency += float(match.group(1)) / 1000.0
        elif match.group(2):
            hang += float(match.group(2))
        else:
            flags[item.strip()] = True
    return _Faults(
        latency_s=latency,
        hang_s=hang,
        always_5xx=flags["5xx"],
        every_other_5xx=flags["5xx-once"],
        malformed=flags["malformed"],
        truncate=flags["truncate"],
    )


class _Capture:
    """Collects what a rag_api route would send, so a fault can mangle it."""

    def __init__(self) -> None:
        self.status = 0
        self.payload = b""

    def send_json(self, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
        self.status = status
        self.payload = json.dumps(body, ensure_ascii=False, default=str).encode("utf-8")
