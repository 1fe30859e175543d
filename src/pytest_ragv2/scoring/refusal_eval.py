"""Precision and recall of the refusal detector on a labelled set (refusal = positive class).

Pure functions, no I/O: :func:`read_heldout` parses the text of a set written as
``{fr: {refusals: [...], non_refusals: [...]}, de: ..., en: ...}`` (YAML), and
:func:`precision_recall` scores :func:`pytest_ragv2.scoring.refusal.is_refusal` on it per
language. ``benchmarks/bench_refusal.py`` prints the figures.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import yaml

from pytest_ragv2.scoring.refusal import is_refusal

Labelled = Mapping[str, Mapping[str, Sequence[str]]]


@dataclass(frozen=True, slots=True)
class RefusalScore:
    """The detector's counts on one language's set; None for an undefined ratio."""

    true_positives: int
    false_positives: int
    false_negatives: int
    true_negatives: int
    misses: tuple[str, ...]  # refusals not recognised
    false_alarms: tuple[str, ...]  # non-refusals read as refusals

    @property
    def precision(self) -> float | None:
        flagged = self.true_positives + self.false_positives
        return self.true_positives / flagged if flagged else None

    @property
    def recall(self) -> float | None:
        positives = self.true_positives + self.false_negatives
        return self.true_positives / positives if positives else None


def read_heldout(text: str) -> dict[str, dict[str, list[str]]]:
    """The labelled sets of a YAML text, per language (missing lists are empty)."""
    data = yaml.safe_load(text) or {}
    if not isinstance(data, dict):
        raise ValueError("a refusal set is a mapping of language to refusals/non_refusals")
    sets: dict[str, dict[str, list[str]]] = {}
    for lang, entry in data.items():
        entry = entry or {}
        sets[str(lang)] = {
            kind: [str(text) for text in entry.get(kind) or []]
            for kind in ("refusals", "non_refusals")
        }
    return sets


def precision_recall(
    sets: Labelled, phrases: Mapping[str, Sequence[str]]
) -> dict[str, RefusalScore]:
    """Per language: the detector (with ``phrases`` as additions) against the labels."""
    scores: dict[str, RefusalScore] = {}
    for lang, entry in sets.items():
        refusals = list(entry.get("refusals", ()))
        others = list(entry.get("non_refusals", ()))
        misses = tuple(text for text in refusals if not is_refusal(text, lang, phrases))
        alarms = tuple(text for text in others if is_refusal(text, lang, phrases))
        scores[lang] = RefusalScore(
            true_positives=len(refusals) - len(misses),
            false_positives=len(alarms),
            false_negatives=len(misses),
            true_negatives=len(others) - len(alarms),
            misses=misses,
            false_alarms=alarms,
        )
    return scores
