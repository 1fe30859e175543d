"""The reviewers' rulings applied: records in, new records out (``dataclasses.replace``),
each changed record carrying who ruled, when and why; and summary.json's ``adjudication``,
the verdict without the rulings and with them. Pure; the rulings themselves are read and
validated in :mod:`pytest_ragv2.gold.adjudication`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pytest_ragv2.deciding.records import ChatRecord, Ruling, Rulings, RunRecord
from pytest_ragv2.gold.adjudication import (
    KEPT_VETOES,
    METRICS_BY_LAYER,
    RUNS_LISTED,
    Adjudication,
    AdjudicationEntry,
    Adjudications,
    _shown,
)

if TYPE_CHECKING:
    from pytest_ragv2.deciding.verdict import GateResult


@dataclass(slots=True)
class Applied:
    """One entry and the runs it changed: per run, each dimension's value before and after."""

    adjudication: Adjudication
    runs: dict[str, dict[str, tuple[Any, Any]]] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        names = list(self.runs)
        data = self.adjudication.to_json()
        data["runs_affected"] = len(names)
        data["runs"] = names[:RUNS_LISTED]
        if len(names) > RUNS_LISTED:
            data["runs_more"] = len(names) - RUNS_LISTED
        data["changes"] = {
            run: {name: list(pair) for name, pair in changes.items()}
            for run, changes in list(self.runs.items())[:RUNS_LISTED]
            if changes
        }
        return data


def apply(
    records: Iterable[RunRecord], adjudications: Adjudications
) -> tuple[list[RunRecord], list[Applied]]:
    """New records with the adjudications applied (pure: the given records are untouched).

    On one run, case-wide entries apply first, then a system's, then the run's own (the
    most specific wins); disputed gold leaves the run out (skipped) whatever else applies.
    """
    ordered = sorted(
        adjudications.entries, key=lambda a: (a.entry.specificity, a.location.line or 0)
    )
    applied = [Applied(adjudication) for adjudication in ordered]
    result: list[RunRecord] = []
    for record in records:
        matching = [item for item in applied if item.adjudication.entry.covers(record)]
        if not matching:
            result.append(record)
            continue
        disputed = [item for item in matching if item.adjudication.entry.disputed]
        if disputed:
            result.append(_disputed(record, disputed[0]))
            continue
        for item in matching:
            record = _ruled(record, item)
        result.append(record)
    return result, applied


def ruled(record: RunRecord, adjudications: Adjudications | None) -> RunRecord:
    """One run as the reviewers ruled it: what a live item's outcome shows (the record the
    session aggregates stays the machine's; :func:`pytest_ragv2.deciding.decision.decide`
    applies the rulings to every record, once)."""
    if not adjudications or not adjudications.entries:
        return record
    (found,), _ = apply([record], adjudications)
    return found


def _stamp(entry: AdjudicationEntry) -> str:
    return f"adjudicated by {entry.reviewer} on {entry.date.isoformat()}"


def _provenance(
    record: RunRecord, adjudication: Adjudication, changes: Mapping[str, tuple[Any, Any]]
) -> Rulings:
    entry = adjudication.entry
    previous = record.adjudication or Rulings((), (), False)
    ruling = Ruling(
        entry.reviewer,
        entry.date.isoformat(),
        entry.note,
        entry.kind,
        adjudication.location.line,
        dict(changes),
    )
    return Rulings(
        tuple(dict.fromkeys([*previous.by, entry.reviewer])),
        (*previous.rulings, ruling),
        bool(entry.disputed or previous.disputed),
    )


def _disputed(record: RunRecord, item: Applied) -> RunRecord:
    adjudication = item.adjudication
    entry = adjudication.entry
    changes: dict[str, tuple[Any, Any]] = {"skipped": (record.skipped, "disputed gold")}
    replaced: dict[str, Any] = {}
    if isinstance(record, ChatRecord) and record.vetoes:
        kept = tuple(veto for veto in record.vetoes if veto.kind in KEPT_VETOES)
        if len(kept) != len(record.vetoes):
            lifted = sorted({veto.kind for veto in record.vetoes} - KEPT_VETOES)
            changes["vetoes"] = (lifted, [])
            replaced["vetoes"] = kept
    item.runs[record.key.item_name] = changes
    return dataclasses.replace(
        record,
        skipped=f"gold disputed, left out of the comparisons: {_stamp(entry)}: {entry.note}",
        reasons=(f"{_stamp(entry)}: gold disputed: {entry.note}", *record.reasons),
        adjudication=_provenance(record, adjudication, changes),
        **replaced,
    )


def _ruled(record: RunRecord, item: Applied) -> RunRecord:
    adjudication = item.adjudication
    entry = adjudication.entry
    changes: dict[str, tuple[Any, Any]] = {}
    replaced: dict[str, Any] = {}
    if entry.met is not None:
        changes["met"] = (record.met, entry.met)
        replaced["met"] = entry.met
    metrics = dict(record.metrics)
    chat = isinstance(record, ChatRecord)
    rubric = dict(record.rubric) if isinstance(record, ChatRecord) else {}
    vetoes = tuple(record.vetoes) if isinstance(record, ChatRecord) else ()
    for name, value in entry.override.items():
        if name.startswith("rubric."):
            if not chat:
                continue
            dimension = name.removeprefix("rubric.")
            changes[name] = (rubric.get(dimension), value)
            rubric[dimension] = str(value)
        elif name.startswith("veto."):
            kind = name.removeprefix("veto.")
            if not any(veto.kind == kind for veto in vetoes):
                continue
            changes[name] = (True, False)
            vetoes = tuple(veto for veto in vetoes if veto.kind != kind)
        elif name in METRICS_BY_LAYER.get(record.key.layer, ()):
            changes[name] = (metrics.get(name), value)
            metrics[name] = value
    if not changes:
        return record  # nothing this entry names exists on this run (e.g. another layer's)
    replaced["metrics"] = metrics
    if chat:
        replaced["rubric"] = rubric
        replaced["vetoes"] = vetoes
        if isinstance(record, ChatRecord) and record.review:  # ruled on: settled
            changes["review"] = (list(record.review), [])
            replaced["review"] = ()
    item.runs[record.key.item_name] = changes
    what = ", ".join(f"{name} {_shown(a)} → {_shown(b)}" for name, (a, b) in changes.items())
    return dataclasses.replace(
        record,
        reasons=(f"{_stamp(entry)}: {what}: {entry.note}", *record.reasons),
        adjudication=_provenance(record, adjudication, changes),
        **replaced,
    )


def outcome_json(
    adjudications: Adjudications,
    applied: Sequence[Applied],
    before: Sequence[GateResult],
    after: Sequence[GateResult],
    cases: Collection[str] | None = None,
) -> dict[str, Any]:
    """``summary.json``'s ``adjudication``: every entry with the runs it changed, the errors,
    the gates' verdict without the adjudications (the machine's) and with them.

    Only the entries on ``cases`` (the session's) are listed, the others counted: a ruling
    on a holdout case never reaches a development run's reports."""
    from pytest_ragv2.deciding.verdict import verdict

    if cases is not None:
        applied = [item for item in applied if item.adjudication.entry.case in cases]

    before_by_name = {gate.name: gate for gate in before}
    changed = []
    moved = []  # a value the rulings changed, the decision the same
    for gate in after:
        old = before_by_name.get(gate.name)
        if old is not None and old.decision == gate.decision:
            if old.value != gate.value:
                moved.append(gate.name)
        else:
            changed.append(
                {
                    "name": gate.name,
                    "before": old.decision if old else None,
                    "after": gate.decision,
                    "reason_before": old.reason if old else None,
                    "reason_after": gate.reason,
                }
            )
    entries = [item.to_json() for item in applied]
    disputed = [
        {
            "case": item.adjudication.entry.case,
            "runs_left_out": len(item.runs),
            "reviewer": item.adjudication.entry.reviewer,
            "date": item.adjudication.entry.date.isoformat(),
            "note": item.adjudication.entry.note,
        }
        for item in applied
        if item.adjudication.entry.disputed
    ]
    runs = {run for item in applied for run in item.runs}
    return {
        "file": adjudications.shown_path,
        "entries": entries,
        "entries_applied": sum(1 for item in applied if item.runs),
        "entries_invalid": adjudications.invalid,
        "entries_other_cases": len(adjudications.entries) - len(applied),
        "errors": [str(error) for error in adjudications.errors],
        "runs_adjudicated": len(runs),
        "reviewers": sorted({item.adjudication.entry.reviewer for item in applied if item.runs}),
        "disputed_cases": disputed,
        "verdict_before": "pass" if verdict(before) else "fail",
        "verdict_after": "pass" if verdict(after) else "fail",
        "gates_changed": changed,
        "gate_values_changed": moved,
    }
