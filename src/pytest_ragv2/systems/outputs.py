"""What an adapter returns, in the project's own terms: ranked retrieved items, the error
of a failed call, and the request/response pairs on the wire.

These are plain, slotted dataclasses: they are built on the per-item hot path, so they
must be cheap, and they must turn into JSON without a library (a raw run and an item
record carry them, also between xdist workers and the controller).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

# "too_large": a response, a stream or a command's output over its size bound;
# "limit": a cap of the harness on one conversation reached (max_tool_rounds,
# max_tool_calls_per_round); "scoring_budget": the answer could not be scored within its
# budget (the scorer's bound, not the system's failure: left out of the error rate,
# counted on its own)
ErrorKind = Literal[
    "timeout",
    "transport",
    "http_status",
    "malformed",
    "too_large",
    "limit",
    "adapter",
    "internal",
    "scoring_budget",
]
SCORING_ERROR_KINDS = frozenset({"scoring_budget"})


@dataclass(frozen=True, slots=True)
class RetrievedItem:
    """One ranked item a retrieval path returned, in the project's own terms.

    ``page`` is 1-based, as a person cites a page (rag_api's 0-based ``page`` is converted
    by its adapter). ``section`` is a heading or numbered clause ("3.2 Limites"), or a
    heading path joined with " > ". ``table`` names a table or an XLSX sheet; ``row`` is
    the 1-based data row inside it and ``row_key`` the row's label (its first cell).
    """

    rank: int
    text: str
    file_id: str | None = None
    filename: str | None = None
    page: int | None = None
    section: str | None = None
    table: str | None = None
    row: int | None = None
    row_key: str | None = None
    score: float | None = None
    metadata: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        # by hand: dataclasses.asdict deep-copies, which dominated the per-item cost
        return {
            "rank": self.rank,
            "text": self.text,
            "file_id": self.file_id,
            "filename": self.filename,
            "page": self.page,
            "section": self.section,
            "table": self.table,
            "row": self.row,
            "row_key": self.row_key,
            "score": self.score,
            "metadata": self.metadata,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> RetrievedItem:
        return cls(**data)


@dataclass(frozen=True, slots=True)
class RunError:
    """A failure of one call, recorded on the run instead of raised out of the session."""

    kind: ErrorKind
    message: str
    status_code: int | None = None

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "message": self.message, "status_code": self.status_code}


@dataclass(slots=True)
class Exchange:
    """One request/response pair on the wire, kept verbatim (secrets redacted) for raw runs."""

    request: dict[str, Any]
    status_code: int | None
    response_body: Any
    latency_s: float
    attempt: int = 1

    def to_json(self) -> dict[str, Any]:
        return {
            "request": self.request,
            "status_code": self.status_code,
            "response_body": self.response_body,
            "latency_s": self.latency_s,
            "attempt": self.attempt,
        }


@dataclass(slots=True)
class RetrievalResult:
    """What one retrieval call produced: ranked items or an error, timing, and the raw wire."""

    items: list[RetrievedItem]
    latency_s: float
    error: RunError | None = None
    exchanges: list[Exchange] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.error is None
