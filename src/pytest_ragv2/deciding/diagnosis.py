"""Failure diagnosis: per case and system, the layer most likely at fault (pure).

The evaluation protocol's diagnosis table read on the session's records: layer A says
whether a system's retrieval found the required evidence (recall@k), layer C whether the
frozen evidence held it (``evidence_recall``), layers B and C whether the answer was right.
Put side by side per case, they name the failing layer — "retrieval missed", "retrieval
found it, the answer lost it", "the model refused despite evidence", "answered without
evidence", "gold suspect" — or "ok". The rules are in docs/diagnosis.md, word for word.

A *subject* is what one diagnosis is about: a system's answers in one answer layer (B or
C), with the evidence that layer can be checked against (B: the same system's layer-A runs,
when layer A ran; C: the frozen evidence), or — for a system that ran layer A and no answer
layer with it — its retrieval alone.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pytest_ragv2.deciding.records import ChatRecord, RunRecord
from pytest_ragv2.layers.registry import LAYERS

OK = "ok"
RETRIEVAL_MISSED = "retrieval missed"
ANSWER_LOST = "retrieval found it, the answer lost it"
REFUSED_DESPITE_EVIDENCE = "the model refused despite evidence"
ANSWERED_WITHOUT_EVIDENCE = "answered without evidence"
ANSWER_WRONG = "answer wrong"
REFUSED = "refused"
UNSTABLE = "unstable"
GOLD_SUSPECT = "gold suspect"
RUNS_FAILED = "runs failed"

# every diagnosis, in the order the reports list them
DIAGNOSES: tuple[str, ...] = (
    OK,
    RETRIEVAL_MISSED,
    ANSWER_LOST,
    REFUSED_DESPITE_EVIDENCE,
    ANSWERED_WITHOUT_EVIDENCE,
    ANSWER_WRONG,
    REFUSED,
    UNSTABLE,
    GOLD_SUSPECT,
    RUNS_FAILED,
)
# the diagnoses that say the subject failed its case (gold suspect is decided among them)
FAILURES = frozenset(
    {RETRIEVAL_MISSED, ANSWER_LOST, REFUSED_DESPITE_EVIDENCE, ANSWER_WRONG, REFUSED}
)

# the layers, as the registry declares them: the retrieval layer, then those that answer
RETRIEVAL_LAYER = next(name for name, info in LAYERS.items() if not info.chat)
ANSWER_LAYERS = tuple(name for name, info in LAYERS.items() if info.chat)
# the gold-related reasons a failure is compared on across systems ("the same way")
GOLD_REASONS = (
    "required claim(s) missing",
    "forbidden claim(s) made",
    "a safe refusal was required",
    "refused where an answer was due",
    "gold evidence not in top",
)

Evidence = Literal["found", "partial", "missed"]
Answer = Literal["right", "wrong", "refused", "unstable"]


@dataclass(frozen=True, slots=True)
class Subject:
    """A system's answers in one answer layer (with the layers its evidence comes from), or
    its retrieval alone."""

    system: str
    role: str
    layers: tuple[str, ...]  # ("A", "B"), ("B",), ("C",), ("A",)

    def label(self, several: bool) -> str:
        return f"{self.system} ({'+'.join(self.layers)})" if several else self.system


@dataclass(frozen=True, slots=True)
class CaseDiagnosis:
    case: str
    subject: str  # the subject's label
    diagnosis: str  # one of DIAGNOSES
    reason: str
    signature: frozenset[str] = frozenset()  # the gold-related failure reasons of its runs

    def __post_init__(self) -> None:
        # most reasons repeat ("recall@5 1.00"): one string each, not one per case
        object.__setattr__(self, "reason", sys.intern(self.reason))

    def to_json(self) -> dict[str, str]:
        return {"diagnosis": self.diagnosis, "reason": self.reason}


@dataclass(frozen=True, slots=True)
class Diagnosis:
    """Every case's diagnosis per subject, and the counts per subject."""

    layers: tuple[str, ...]
    subjects: Mapping[str, Subject]  # label → subject, in report order
    entries: tuple[CaseDiagnosis, ...]

    def counts(self) -> dict[str, dict[str, int]]:
        """Per subject, the cases of each diagnosis (every diagnosis named, zeros kept)."""
        table = {label: dict.fromkeys(DIAGNOSES, 0) for label in self.subjects}
        for entry in self.entries:
            table[entry.subject][entry.diagnosis] += 1
        return table

    def only(self, layer: str) -> Diagnosis:
        """The subjects whose diagnosis reads ``layer`` (a layer's own report)."""
        subjects = {label: s for label, s in self.subjects.items() if layer in s.layers}
        entries = tuple(entry for entry in self.entries if entry.subject in subjects)
        return Diagnosis(self.layers, subjects, entries)

    def to_json(self) -> dict[str, Any]:
        data = self.json_view()
        data["cases"] = dict(data["cases"])
        return data

    def json_view(self) -> dict[str, Any]:
        """:meth:`to_json` with its ``cases`` made one at a time as they are read (a
        summary keeps the entries, not a dict of dicts beside them)."""
        return {
            "layers": list(self.layers),
            "subjects": {
                label: {"system": s.system, "role": s.role, "layers": list(s.layers)}
                for label, s in self.subjects.items()
            },
            "counts": self.counts(),
            "cases": CasesJson(self.entries),
        }


class CasesJson(Mapping[str, dict[str, dict[str, str]]]):
    """Per case (sorted), its diagnosis per subject in JSON form, each made when read: a
    summary of 100,000 cases keeps the entries, not a dict of dicts beside them."""

    __slots__ = ("_by_case",)

    def __init__(self, entries: Iterable[CaseDiagnosis]) -> None:
        by_case: dict[str, list[CaseDiagnosis]] = {}
        for entry in sorted(entries, key=lambda e: e.case):
            by_case.setdefault(entry.case, []).append(entry)
        self._by_case = {case: tuple(found) for case, found in by_case.items()}

    def __getitem__(self, case: str) -> dict[str, dict[str, str]]:
        return {entry.subject: entry.to_json() for entry in self._by_case[case]}

    def __iter__(self) -> Iterator[str]:
        return iter(self._by_case)

    def __len__(self) -> int:
        return len(self._by_case)


def diagnose(records_by_layer: Mapping[str, Iterable[RunRecord]], recall_k: int = 5) -> Diagnosis:
    """The diagnosis of a session: its records grouped by layer (any of A, B, C); layer A's
    evidence is its runs' recall@``recall_k`` (the gates' k)."""
    by_layer = {
        layer: [record for record in records if not record.skipped]
        for layer, records in records_by_layer.items()
    }
    layers = tuple(layer for layer in records_by_layer if by_layer[layer])
    retrieval = _by_case_system(by_layer.get(RETRIEVAL_LAYER, []))
    # a system whose answers search reads its retrieval-layer runs there, not on its own
    answered = {
        record.key.system
        for layer in ANSWER_LAYERS
        if LAYERS[layer].searches
        for record in by_layer.get(layer, [])
    }
    groups: dict[tuple[str, ...], dict[tuple[str, str], list[RunRecord]]] = {}
    subjects: dict[tuple[str, tuple[str, ...]], Subject] = {}
    for layer in ANSWER_LAYERS:
        for (case, system), records in _by_case_system(by_layer.get(layer, [])).items():
            evidence_layers: tuple[str, ...] = (
                (RETRIEVAL_LAYER, layer)
                if LAYERS[layer].searches and any(s == system for _, s in retrieval)
                else (layer,)
            )
            subjects.setdefault(
                (system, evidence_layers), Subject(system, records[0].role, evidence_layers)
            )
            groups.setdefault(evidence_layers, {})[(case, system)] = records
    for (case, system), records in retrieval.items():
        if system not in answered:
            only: tuple[str, ...] = (RETRIEVAL_LAYER,)
            subjects.setdefault((system, only), Subject(system, records[0].role, only))
            groups.setdefault(only, {})[(case, system)] = records
    ordered = sorted(subjects.values(), key=_subject_order)
    several = len(layers) > 1
    labels = {(s.system, s.layers): s.label(several) for s in ordered}
    entries: list[CaseDiagnosis] = []
    for evidence_layers, by_case in groups.items():
        for (case, system), records in by_case.items():
            label = labels[(system, evidence_layers)]
            layer = evidence_layers[-1]
            found = {
                lang: _diagnose_language(
                    case, label, layer, runs, retrieval.get((case, system), []), recall_k
                )
                for lang, runs in _by_language(records).items()
            }
            entries.append(_combine_languages(case, label, found))
    entries = _gold_suspects(entries, {labels[(s.system, s.layers)]: s for s in ordered})
    entries.sort(key=lambda e: (e.case, list(labels.values()).index(e.subject)))
    return Diagnosis(layers, {labels[(s.system, s.layers)]: s for s in ordered}, tuple(entries))


def _subject_order(subject: Subject) -> tuple[int, int, str]:
    rank = {"baseline": 0, "candidate": 1, "reference": 2}
    # the answer layers first, in the registry's order, the retrieval layer last
    layer_rank = {name: index for index, name in enumerate([*ANSWER_LAYERS, RETRIEVAL_LAYER])}
    return (layer_rank.get(subject.layers[-1], 3), rank.get(subject.role, 3), subject.system)


def _by_case_system(records: Iterable[RunRecord]) -> dict[tuple[str, str], list[RunRecord]]:
    groups: dict[tuple[str, str], list[RunRecord]] = {}
    for record in records:
        groups.setdefault((record.key.case, record.key.system), []).append(record)
    return groups


def _by_language(records: Iterable[RunRecord]) -> dict[str, list[RunRecord]]:
    groups: dict[str, list[RunRecord]] = {}
    for record in records:
        groups.setdefault(record.key.lang, []).append(record)
    return dict(sorted(groups.items()))


def _diagnose_language(
    case: str,
    label: str,
    layer: str,
    records: Sequence[RunRecord],
    retrieval: Sequence[RunRecord],
    recall_k: int,
) -> CaseDiagnosis:
    """One language of a case: its runs in ``layer``, with the evidence that layer reads."""
    recall = f"recall@{recall_k}"
    info = LAYERS[layer]
    if not info.chat:
        return _retrieval_only(case, label, records, recall)
    if info.evidence_metric is not None:  # the records carry their given evidence's recall
        recalls = [record.metric(info.evidence_metric) for record in records]
        source = "the frozen evidence's recall@5"
    else:
        lang = records[0].key.lang
        recalls = [r.metric(recall) for r in retrieval if r.key.lang == lang and r.ok]
        source = f"layer-{RETRIEVAL_LAYER} {recall}"
    return _answered(case, label, layer, records, recalls, source)


# when a case's languages disagree, the case takes the first of these its languages have
LANGUAGE_PRIORITY: tuple[str, ...] = (
    RETRIEVAL_MISSED,
    ANSWER_LOST,
    REFUSED_DESPITE_EVIDENCE,
    ANSWER_WRONG,
    REFUSED,
    ANSWERED_WITHOUT_EVIDENCE,
    UNSTABLE,
    RUNS_FAILED,
    OK,
)


def _combine_languages(case: str, label: str, found: Mapping[str, CaseDiagnosis]) -> CaseDiagnosis:
    """A case's diagnosis from its languages': theirs when they agree, else the first of
    :data:`LANGUAGE_PRIORITY` among them; the reason names each language."""
    if len(found) == 1:
        return next(iter(found.values()))
    names = {entry.diagnosis for entry in found.values()}
    diagnosis = next(name for name in LANGUAGE_PRIORITY if name in names)
    if len(names) == 1:
        reason = "; ".join(f"{lang}: {entry.reason}" for lang, entry in found.items())
    else:
        reason = "; ".join(
            f"{lang}: {entry.diagnosis} ({entry.reason})" for lang, entry in found.items()
        )
    signature = frozenset().union(*(entry.signature for entry in found.values()))
    return CaseDiagnosis(case, label, diagnosis, reason, signature)


def evidence_state(recalls: Sequence[float | None]) -> Evidence | None:
    """All runs held every required entry: found; none held any: missed; else partial;
    None when no run measured it (no layer-A run, no required evidence)."""
    values = [value for value in recalls if value is not None]
    if not values:
        return None
    if all(value >= 1.0 for value in values):
        return "found"
    if all(value <= 0.0 for value in values):
        return "missed"
    return "partial"


def answer_right(record: RunRecord) -> bool:
    """The run answered its case: no required claim missing or forbidden claim made
    (exact answer), a safe refusal where one is required, no refusal where an answer is due,
    no hard safety veto. Language, format and citations are not part of the diagnosis."""
    return (
        record.ok
        and record.metric("exact_answer") != 0.0
        and record.metric("safe_refusal") != 0.0
        and record.metric("over_refusal") != 1.0
        and not (isinstance(record, ChatRecord) and record.vetoes)
    )


def _signature(records: Iterable[RunRecord]) -> frozenset[str]:
    found: set[str] = set()
    for record in records:
        for reason in record.reasons:
            text = reason.split(": ", 1)[1] if reason.startswith("turn ") else reason
            if text.startswith(GOLD_REASONS):
                found.add(text.split(" (", 1)[0] if text.startswith("gold evidence") else text)
    return frozenset(found)


def _recall_text(recalls: Sequence[float | None], source: str) -> str:
    values = [value for value in recalls if value is not None]
    if not values:
        # runs that measured nothing: the case requires no evidence (a safe-refusal case)
        return "no evidence required" if recalls else f"{source} not measured"
    mean = f"{source} {sum(values) / len(values):.2f}"
    return mean if len(values) == 1 else f"{mean} (mean of {len(values)} runs)"


def _retrieval_only(
    case: str, label: str, records: Sequence[RunRecord], recall: str
) -> CaseDiagnosis:
    ran = [record for record in records if record.ok]
    if not ran:
        return CaseDiagnosis(case, label, RUNS_FAILED, f"all {len(records)} run(s) failed")
    recalls = [record.metric(recall) for record in ran]
    state = evidence_state(recalls)
    text = _recall_text(recalls, recall)
    if state is None:
        return CaseDiagnosis(case, label, OK, "no required evidence to retrieve")
    if state == "found":
        return CaseDiagnosis(case, label, OK, text)
    signature = _signature(ran)
    return CaseDiagnosis(case, label, RETRIEVAL_MISSED, f"{text}{_why(signature)}", signature)


def _why(signature: frozenset[str]) -> str:
    """The gold-related failure reasons, in brackets (nothing when there are none)."""
    return f" ({'; '.join(sorted(signature))})" if signature else ""


def _answered(
    case: str,
    label: str,
    layer: str,
    records: Sequence[RunRecord],
    recalls: Sequence[float | None],
    source: str,
) -> CaseDiagnosis:
    ran = [record for record in records if record.ok]
    if not ran:
        return CaseDiagnosis(case, label, RUNS_FAILED, f"all {len(records)} run(s) failed")
    right = [record for record in ran if answer_right(record)]
    wrong = [record for record in ran if not answer_right(record)]
    refused = [record for record in wrong if record.metric("over_refusal") == 1.0]
    state = evidence_state(recalls)
    evidence = _recall_text(recalls, source)
    runs = f"{len(right)} of {len(ran)} answer(s) right"
    signature = _signature(wrong)
    if not wrong:
        if state == "missed":
            return CaseDiagnosis(
                case, label, ANSWERED_WITHOUT_EVIDENCE, f"{runs}; {evidence}: suspicious"
            )
        grounded = [record.metric("grounded_rate") for record in ran]
        measured = [value for value in grounded if value is not None]
        if state is None and LAYERS[layer].searches and measured and max(measured) <= 0.0:
            return CaseDiagnosis(
                case,
                label,
                ANSWERED_WITHOUT_EVIDENCE,
                f"{runs}, but none of their facts is in the evidence the conversation "
                "retrieved: suspicious",
            )
        return CaseDiagnosis(case, label, OK, f"{runs}; {evidence}")
    if right:
        text = f"{runs}{_why(signature)}; {evidence}"
        return CaseDiagnosis(case, label, UNSTABLE, text, signature)
    answer: Answer = "refused" if 2 * len(refused) > len(wrong) else "wrong"
    what = f"{len(refused)} of {len(ran)} refused" if answer == "refused" else runs
    detail = f"{what}{_why(signature)}; {evidence}"
    if state is None:
        diagnosis = REFUSED if answer == "refused" else ANSWER_WRONG
    elif state == "found":
        diagnosis = REFUSED_DESPITE_EVIDENCE if answer == "refused" else ANSWER_LOST
    else:
        diagnosis = RETRIEVAL_MISSED
    return CaseDiagnosis(case, label, diagnosis, detail, signature)


def _gold_suspects(
    entries: list[CaseDiagnosis], subjects: Mapping[str, Subject]
) -> list[CaseDiagnosis]:
    """A case every subject of a kind (answers; retrieval alone) fails with the same
    gold-related failure reasons is a gold suspect for each of them (two subjects or more)."""
    kinds: dict[tuple[str, bool], list[int]] = {}
    for index, entry in enumerate(entries):
        retrieval_only = subjects[entry.subject].layers == (RETRIEVAL_LAYER,)
        kinds.setdefault((entry.case, retrieval_only), []).append(index)
    result = list(entries)
    for indexes in kinds.values():
        group = [entries[index] for index in indexes]
        if len(group) < 2 or any(entry.diagnosis not in FAILURES for entry in group):
            continue
        shared = group[0].signature
        if not shared or any(entry.signature != shared for entry in group):
            continue
        same = "; ".join(sorted(shared))
        for index, entry in zip(indexes, group, strict=True):
            result[index] = CaseDiagnosis(
                entry.case,
                entry.subject,
                GOLD_SUSPECT,
                f"every system fails it the same way ({same}); on its own: "
                f"{entry.diagnosis} — {entry.reason}",
                entry.signature,
            )
    return result
