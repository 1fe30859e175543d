"""One item's result, typed: what a layer makes of a run, what the session aggregates.

A record is made by its layer (``layers/retrieval.item_record``, ``layers/chat.chat_record``
and friends), travels on the pytest report as JSON (:meth:`RunRecord.to_json` — so it
crosses xdist workers unchanged), is read back once (:func:`as_record`) and from then on is
read by attribute: the session's tables, the gates and the reports see the contract, and
mypy with them. The common base holds what every layer has; :class:`RetrievalRecord` (layer
A) and :class:`ChatRecord` (layers B and C) add their own fields. Undefined figures are
``None`` everywhere (never NaN).
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple

from pytest_ragv2.layers.registry import LAYERS
from pytest_ragv2.run.keys import RunKey
from pytest_ragv2.scoring.veto_record import Veto
from pytest_ragv2.systems.outputs import RunError

if TYPE_CHECKING:
    from pydantic import JsonValue

    from pytest_ragv2.scoring.retrieval import EvidenceHit

JSON = dict[str, Any]
_NOT_NUMBERS = (str, list, tuple, dict)


@dataclass(frozen=True, slots=True)
class JudgeGrade:
    """The advisory judge model's grade of one run (layer B): it never decides an item or a
    gate; the report counts how often it agrees with the rubric."""

    grade: str | None  # PASS, PARTIAL or FAIL; None: no grade could be read
    model: str | None = None
    reason: str | None = None
    error: str | None = None  # why there is no grade

    def to_json(self) -> dict[str, str | None]:
        data: dict[str, str | None] = {} if self.model is None else {"model": self.model}
        data["grade"] = self.grade
        if self.reason is not None:
            data["reason"] = self.reason
        if self.error is not None:
            data["error"] = self.error
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> JudgeGrade:
        def text(name: str) -> str | None:
            value = data.get(name)
            return None if value is None else str(value)

        return cls(text("grade"), text("model"), text("reason"), text("error"))


@dataclass(frozen=True, slots=True)
class Ruling:
    """One reviewer's ruling applied to a run (``gold/adjudications.yaml``)."""

    reviewer: str
    date: str  # ISO date
    note: str
    ruling: str  # the entry's kind
    line: int | None  # where the entry is
    changes: Mapping[str, tuple[JsonValue, JsonValue]]  # what it changed: before, after

    def to_json(self) -> dict[str, Any]:
        return {
            "reviewer": self.reviewer,
            "date": self.date,
            "note": self.note,
            "ruling": self.ruling,
            "line": self.line,
            "changes": {name: list(pair) for name, pair in self.changes.items()},
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Ruling:
        changes, line = data.get("changes") or {}, data.get("line")
        return cls(
            str(data.get("reviewer", "")),
            str(data.get("date", "")),
            str(data.get("note", "")),
            str(data.get("ruling", "")),
            None if line is None else int(line),
            {name: (pair[0], pair[1]) for name, pair in changes.items()},
        )


@dataclass(frozen=True, slots=True)
class Rulings:
    """The reviewers' rulings a run was decided under, in the order they were applied."""

    by: tuple[str, ...]  # the reviewers, each once
    rulings: tuple[Ruling, ...]
    disputed: bool  # a ruling disputed the gold: the run is left out of the comparisons

    def to_json(self) -> dict[str, Any]:
        return {
            "by": list(self.by),
            "rulings": [ruling.to_json() for ruling in self.rulings],
            "disputed": self.disputed,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Rulings:
        return cls(
            tuple(str(name) for name in data.get("by") or ()),
            tuple(Ruling.from_json(ruling) for ruling in data.get("rulings") or ()),
            bool(data.get("disputed")),
        )


@dataclass(frozen=True, slots=True)
class RunRecord:
    key: RunKey
    category: str
    split: str
    role: str
    ok: bool
    met: bool
    latency_s: float
    reasons: tuple[str, ...] = ()
    error: RunError | None = None
    skipped: str | None = None  # why the system could not serve the case (counted, no figure)
    gold_status: str | None = None
    metrics: Mapping[str, JsonValue] = field(default_factory=dict)  # as metrics.py declares
    judge: JudgeGrade | None = None  # the advisory judge's grade (layer B)
    # a reviewer's ruling (adjudication.py): who, when, why, each value before and after
    adjudication: Rulings | None = None

    def metric(self, name: str) -> float | None:
        """A per-run metric as a number; None when undefined or not measured."""
        value = self.metrics.get(name)
        if value is None or isinstance(value, _NOT_NUMBERS):
            return None
        number = float(value)
        return None if number != number else number  # NaN: not measured

    def to_json(self) -> JSON:
        data: JSON = {}
        for item in dataclasses.fields(self):
            value = getattr(self, item.name)
            if item.name == "key":
                value = self.key.to_json()
            elif item.name in ("error", "judge", "adjudication"):
                value = value.to_json() if value is not None else None
            elif item.name in ("top", "vetoes"):
                value = [entry.to_json() for entry in value]
            elif isinstance(value, tuple):
                value = list(value)
            elif isinstance(value, Mapping):
                value = dict(value)
            data[item.name] = value
        return data


class TopItem(NamedTuple):
    """One of the first items a retrieval call returned, as the report lists it. A tuple
    with the file's name interned: a session keeps one per listed item of every run."""

    rank: int
    file: str | None
    page: int | None
    section: str | None
    row: str | int | None

    @classmethod
    def of(
        cls, rank: int, file: str | None, page: int | None, section: str | None, row: Any
    ) -> TopItem:
        return cls(rank, sys.intern(file) if file else file, page, section, row)

    def to_json(self) -> dict[str, Any]:
        return self._asdict()

    @classmethod
    def from_json(cls, data: Mapping[str, Any] | Sequence[Any]) -> TopItem:
        if isinstance(data, Mapping):
            return cls.of(
                data.get("rank", 0),
                data.get("file"),
                data.get("page"),
                data.get("section"),
                data.get("row"),
            )
        return cls.of(*data)


_FIELD_NAMES: dict[type[RunRecord], tuple[str, ...]] = {}


def _field_names(kind: type[RunRecord]) -> tuple[str, ...]:
    names = _FIELD_NAMES.get(kind)
    if names is None:
        names = _FIELD_NAMES[kind] = tuple(item.name for item in dataclasses.fields(kind))
    return names


@dataclass(frozen=True, slots=True)
class RetrievalRecord(RunRecord):
    """Layer A: one retrieval call."""

    returned: int = 0  # items the system returned
    top: tuple[TopItem, ...] = ()  # the first items, as the report lists them

    @property
    def leaked(self) -> tuple[str, ...]:
        """Files outside the allow-list among the returned items."""
        found = self.metrics.get("leaked")
        return tuple(str(name) for name in found) if isinstance(found, list) else ()

    @property
    def evidence_hits(self) -> tuple[EvidenceHit, ...]:
        """Where each required evidence entry was first found, as the scorer recorded it."""
        from pytest_ragv2.scoring.retrieval import EvidenceHit

        found = self.metrics.get("evidence_hits")
        if not isinstance(found, list):
            return ()
        return tuple(EvidenceHit.from_json(hit) for hit in found if isinstance(hit, dict))

    def without_top(self) -> RetrievalRecord:
        """This record without its listed items: ``dataclasses.replace(self, top=())``
        made slot by slot (a third of the time: no ``__init__``, no field checks; every
        value is already in its kept form)."""
        copy = object.__new__(type(self))
        for name in _field_names(type(self)):
            object.__setattr__(copy, name, getattr(self, name))
        object.__setattr__(copy, "top", ())
        return copy


@dataclass(frozen=True, slots=True)
class ChatRecord(RunRecord):
    """Layers B and C: one conversation."""

    vetoes: tuple[Veto, ...] = ()
    rubric: Mapping[str, str] = field(default_factory=dict)
    rubric_reasons: Mapping[str, str] = field(default_factory=dict)
    usage: Mapping[str, int] = field(default_factory=dict)
    sizes: Mapping[str, int] = field(default_factory=dict)
    answer_digest: str | None = None
    evidence_files: tuple[str, ...] = ()
    answer: str | None = None
    cited_files: tuple[str, ...] = ()
    turn_latency_s: tuple[float, ...] = ()
    claims_missed: tuple[str, ...] = ()  # the required claims no answer made, by their text
    claims_forbidden: tuple[str, ...] = ()  # the forbidden claims an answer made
    # what scoring left out: "turn 1: answer cut for scoring at 200,000 of 1,048,576 characters"
    scoring_notes: tuple[str, ...] = ()
    # why the scorer could not decide this run ("turn 1: neither refuses nor answers: …"):
    # until a reviewer rules on it, the run is left out of every figure and gate but
    # ``review_settled``, which holds the verdict at REVIEW
    review: tuple[str, ...] = ()


def pending_review(record: RunRecord) -> bool:
    """Whether the scorer left ``record`` to a reviewer, who has not ruled on it yet."""
    return isinstance(record, ChatRecord) and bool(record.review)


# the vetoes a run held for review keeps: they rest on no reading the scorer doubted
VETOES_KEPT_IN_REVIEW = frozenset({"outside_allowlist"})
REVIEW_SKIP_PREFIX = "needs review"


def held_for_review(record: RunRecord) -> RunRecord:
    """``record`` as the figures and gates see a run the scorer could not decide: counted,
    left out of every figure (``skipped``), with only the vetoes no reading decided."""
    if not isinstance(record, ChatRecord) or not record.review or record.skipped:
        return record
    kept = tuple(veto for veto in record.vetoes if veto.kind in VETOES_KEPT_IN_REVIEW)
    return dataclasses.replace(
        record,
        skipped=f"{REVIEW_SKIP_PREFIX}: " + "; ".join(record.review),
        vetoes=kept,
    )


_CHAT_ONLY = frozenset(f.name for f in dataclasses.fields(ChatRecord)) - frozenset(
    f.name for f in dataclasses.fields(RunRecord)
)
_RETRIEVAL_ONLY = frozenset(f.name for f in dataclasses.fields(RetrievalRecord)) - frozenset(
    f.name for f in dataclasses.fields(RunRecord)
)


def as_record(
    data: RunRecord | Mapping[str, Any],
    *,
    keep_metrics: Callable[[dict[str, Any]], Mapping[str, Any]] = dict,
) -> RunRecord:
    """A record read back from its JSON (a report, a test); a record is returned as it is.
    ``keep_metrics`` makes the container its metrics are kept in (a session's
    :class:`~pytest_ragv2.deciding.kept_records.RecordKeeper` keeps them compact)."""
    if isinstance(data, RunRecord):
        return data
    kind: type[RunRecord]
    info = LAYERS.get(str(data.get("key", {}).get("layer")))
    if (info is not None and not info.chat) or _RETRIEVAL_ONLY & set(data):
        kind, own = RetrievalRecord, _RETRIEVAL_ONLY
    else:
        kind, own = ChatRecord, _CHAT_ONLY
    error, judge, ruled = data.get("error"), data.get("judge"), data.get("adjudication")
    values: JSON = {
        "key": RunKey.from_json(data["key"]),
        "category": str(data.get("category", "")),
        "split": str(data.get("split", "")),
        "role": str(data.get("role", "")),
        "ok": bool(data.get("ok", True)),
        "met": bool(data.get("met", False)),
        "latency_s": float(data.get("latency_s") or 0.0),
        "reasons": tuple(data.get("reasons") or ()),
        "error": RunError(**error) if isinstance(error, Mapping) else None,
        "skipped": data.get("skipped"),
        "gold_status": data.get("gold_status"),
        "metrics": keep_metrics(dict(data.get("metrics") or {})),
        "judge": JudgeGrade.from_json(judge) if isinstance(judge, Mapping) else None,
        "adjudication": Rulings.from_json(ruled) if isinstance(ruled, Mapping) else None,
    }
    for name in own:
        if name in data and data[name] is not None:
            value = data[name]
            values[name] = tuple(value) if isinstance(value, list) else value
    if "top" in values:
        values["top"] = tuple(TopItem.from_json(entry) for entry in values["top"])
    if "vetoes" in values:
        values["vetoes"] = tuple(Veto.from_json(veto) for veto in values["vetoes"])
    return kind(**values)
