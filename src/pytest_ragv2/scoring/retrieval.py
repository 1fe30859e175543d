"""Layer-A retrieval metrics of one run: a gold case against one ranked result list.

Pure: no I/O, no pytest, no state (the only module-level state is memoisation of pure
functions of strings, which cannot change a result). Definitions (DESIGN.md §6, normative):

- **Order.** Items are taken in rank order: a stable sort by ``item.rank``. The rank used in
  every metric below is the 1-based *position* in that order, so gaps or ties in the
  system's rank numbers change nothing, and tied items keep the order they were returned in.
- **Match.** "Matched" means matched at full granularity (file identity plus every location
  field the gold gives), see :mod:`pytest_ragv2.scoring.evidence`. For every required entry
  the first position matched at each granularity (document, page, section, row, full) is
  reported in :class:`EvidenceHit` so a miss can be located.
- ``recall@k`` — the fraction of required evidence entries matched by any item within the
  first k positions. An item may match several entries; an entry counts once however many
  items match it (a repeated item cannot raise recall). The system figure is the mean over
  cases (the aggregator's job).
- ``hit@k`` — 1.0 if any required entry is matched within the first k positions, else 0.0.
- ``mrr`` — 1 / position of the first item matching any required entry; 0.0 if no item in
  the list matches.
- A case with **no required evidence** (safe no-answer): recall, hit and MRR are not
  defined and are NaN (``null`` in JSON); the aggregator excludes NaN cases from those
  means.
- ``exact_metadata`` — only for exact-lookup categories (``Case.is_exact_lookup``) with
  required evidence, else None: True when the top item matches some required entry at full
  granularity by its metadata alone, anchors not counted (False on an empty list).
- ``table_integrity`` — None when no required entry names ``table_cells``; otherwise True
  when, for every entry with ``table_cells``, some item anywhere in the list matches that
  entry at document level and contains all its named cells
  (:func:`~pytest_ragv2.scoring.evidence.table_integrity`).
- ``duplicate_rate`` — the fraction of returned items that repeat an earlier item of the
  same list, either (a) by source location: same file (file_id, else normalised filename)
  and equal page, section, table, row and row key, with at least one of those location
  fields present; or (b) by near-identical text: Jaccard similarity ≥ 0.9 between the sets
  of word 3-shingles of the two texts. Words are the whitespace-separated tokens of the
  text after NFKC and casefolding (punctuation stays attached); a text of fewer than three
  words has its whole word sequence as its single shingle; an empty text is never a text
  duplicate. 0.0 on an empty list. Note that (a) also counts two different chunks of one
  page when the system gives no finer location than the page.
- ``irrelevant_rate`` — the fraction of returned items that match no required entry even at
  document level. With no required evidence every returned item is irrelevant (1.0); 0.0
  on an empty list.
- ``leaked`` — items from outside the allow-list, as their file_id or filename, one entry
  per file (filenames compared normalised; the first spelling is shown), in rank order.
  When neither ``allowed_file_ids`` nor ``allowed_filenames`` is given nothing leaks.
  Otherwise an item with a file_id is checked against ``allowed_file_ids`` when that is
  given (its filename is then ignored); else an item with a filename is checked against
  ``allowed_filenames`` (normalised like filenames) when that is given; an item the given
  lists cannot check (no file_id where only file ids are allowed, no filename where only
  filenames are allowed, or no identity at all) counts as leaked — an allow-list exists to
  prove where evidence came from.
"""

from __future__ import annotations

import math
import unicodedata
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from itertools import islice
from typing import Any

from pytest_ragv2.gold.schema import Case, Evidence
from pytest_ragv2.scoring.evidence import (
    FULL_STEP,
    GRANULARITIES,
    match_step,
    normalise_filename,
    normalise_label,
    section_path,
    table_integrity,
)
from pytest_ragv2.systems.outputs import RetrievedItem

DEFAULT_KS = (1, 3, 5, 10)
NEAR_DUPLICATE_JACCARD = 0.9
UNIDENTIFIED = "<no file identity>"

_LEVEL_NAMES = (*GRANULARITIES, "full")  # steps 1..4, then "full" (= step 4)


@dataclass(frozen=True, slots=True)
class EvidenceHit:
    """Where one required evidence entry (``index`` into the required list) was first found:
    the 1-based position of the first item matching it at each granularity, or None."""

    index: int
    first_rank: dict[str, int | None]

    def to_json(self) -> dict[str, Any]:
        return {"index": self.index, "first_rank": dict(self.first_rank)}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> EvidenceHit:
        ranks = data.get("first_rank") or {}
        return cls(
            int(data.get("index", -1)),
            {name: rank if isinstance(rank, int) else None for name, rank in ranks.items()},
        )


@dataclass(frozen=True, slots=True)
class RetrievalScore:
    """Every layer-A metric of one run (definitions in the module docstring)."""

    recall: dict[int, float]
    hit: dict[int, float]
    mrr: float
    exact_metadata: bool | None
    table_integrity: bool | None
    duplicate_rate: float
    irrelevant_rate: float
    leaked: tuple[str, ...]
    n_items: int
    evidence_hits: tuple[EvidenceHit, ...]

    def first_full_matches(self) -> dict[int, tuple[int, ...]]:
        """Position → the required entries (indices) first matched at full granularity by
        the item at that position (of :func:`in_rank_order`): the per-item match results
        recall and MRR are computed from (a TREC export gives that item those entries'
        document ids). An item may be the first full match of several entries."""
        found: dict[int, list[int]] = {}
        for hit in self.evidence_hits:
            position = hit.first_rank.get("full")
            if position is not None:
                found.setdefault(position, []).append(hit.index)
        return {position: tuple(indices) for position, indices in sorted(found.items())}

    def to_json(self) -> dict[str, Any]:
        """Flat JSON: ``recall@5``/``hit@5`` keys; NaN (undefined) becomes null."""
        data: dict[str, Any] = {}
        for k in sorted(self.recall):
            data[f"recall@{k}"] = _json_float(self.recall[k])
        for k in sorted(self.hit):
            data[f"hit@{k}"] = _json_float(self.hit[k])
        data.update(
            mrr=_json_float(self.mrr),
            exact_metadata=self.exact_metadata,
            table_integrity=self.table_integrity,
            duplicate_rate=self.duplicate_rate,
            irrelevant_rate=self.irrelevant_rate,
            leaked=list(self.leaked),
            n_items=self.n_items,
            evidence_hits=[hit.to_json() for hit in self.evidence_hits],
        )
        return data


def _json_float(value: float) -> float | None:
    return None if math.isnan(value) else value


def _rank(item: RetrievedItem) -> int:
    return item.rank


def in_rank_order(items: Sequence[RetrievedItem]) -> list[RetrievedItem]:
    """The items in the order every metric reads them: a stable sort by ``item.rank``."""
    return sorted(items, key=_rank)


def score_retrieval(
    case: Case,
    items: Sequence[RetrievedItem],
    *,
    allowed_file_ids: Collection[str] | None = None,
    allowed_filenames: Collection[str] | None = None,
    ks: Sequence[int] = DEFAULT_KS,
    evidence: Sequence[Evidence] | None = None,
) -> RetrievalScore:
    """Score one ranked result list against the case's required evidence.

    ``evidence`` overrides ``case.evidence`` (e.g. one turn's required evidence of a
    multi-turn case); ``ks`` are the cut-offs of recall@k and hit@k (each ≥ 1).
    """
    if any(k < 1 for k in ks):
        raise ValueError(f"every k must be at least 1, got {list(ks)}")
    ordered = in_rank_order(items)
    required = case.evidence if evidence is None else list(evidence)
    n_items = len(ordered)
    steps = [[match_step(item, entry) for entry in required] for item in ordered]

    # The ladder is cumulative and positions only grow, so the levels already found for an
    # entry are always a prefix of the ladder: fill it up to each item's step.
    first: list[list[int | None]] = []
    for entry_index in range(len(required)):
        found: list[int | None] = [None] * FULL_STEP
        filled = 0
        for position, item_steps in enumerate(steps, start=1):
            step = item_steps[entry_index]
            while filled < step:
                found[filled] = position
                filled += 1
            if filled == FULL_STEP:
                break
        found.append(found[FULL_STEP - 1])  # "full" is the last step of the ladder
        first.append(found)
    evidence_hits = tuple(
        EvidenceHit(index=i, first_rank=dict(zip(_LEVEL_NAMES, found, strict=True)))
        for i, found in enumerate(first)
    )

    full_ranks = [found[-1] for found in first]
    recall: dict[int, float] = {}
    hit: dict[int, float] = {}
    if required:
        matched_ranks = [rank for rank in full_ranks if rank is not None]
        best = min(matched_ranks, default=None)
        for k in ks:
            within = sum(1 for rank in matched_ranks if rank <= k)
            recall[k] = within / len(required)
            hit[k] = 1.0 if best is not None and best <= k else 0.0
        mrr = 1.0 / best if best is not None else 0.0
    else:
        recall = dict.fromkeys(ks, math.nan)
        hit = dict.fromkeys(ks, math.nan)
        mrr = math.nan

    exact_metadata: bool | None = None
    if case.is_exact_lookup and required:
        exact_metadata = bool(ordered) and any(
            match_step(ordered[0], entry, anchors=False) == FULL_STEP for entry in required
        )

    integrity: bool | None = None
    with_cells = [(i, entry.table_cells) for i, entry in enumerate(required) if entry.table_cells]
    if with_cells:
        integrity = all(
            any(
                item_steps[i] >= 1 and table_integrity(item, cells)
                for item, item_steps in zip(ordered, steps, strict=True)
            )
            for i, cells in with_cells
        )

    irrelevant = sum(1 for item_steps in steps if not any(item_steps))
    return RetrievalScore(
        recall=recall,
        hit=hit,
        mrr=mrr,
        exact_metadata=exact_metadata,
        table_integrity=integrity,
        duplicate_rate=count_duplicates(ordered) / n_items if n_items else 0.0,
        irrelevant_rate=irrelevant / n_items if n_items else 0.0,
        leaked=leaked_files(ordered, allowed_file_ids, allowed_filenames),
        n_items=n_items,
        evidence_hits=evidence_hits,
    )


def location_key(item: RetrievedItem) -> tuple[Any, ...] | None:
    """The item's source location for duplicate detection, or None when it has no file
    identity or no location field at all."""
    if (
        item.page is None
        and item.section is None
        and item.table is None
        and item.row is None
        and item.row_key is None
    ):
        return None
    if item.file_id:
        file: tuple[str, str] = ("id", item.file_id)
    elif item.filename:
        file = ("name", normalise_filename(item.filename))
    else:
        return None
    return (
        file,
        item.page,
        None if item.section is None else tuple(c.text for c in section_path(item.section)),
        None if item.table is None else normalise_label(item.table),
        item.row,
        None if item.row_key is None else normalise_label(item.row_key),
    )


def word_shingles(text: str) -> frozenset[int]:
    """The word 3-shingles of a text (see the module docstring for "word"), each stored as
    the hash of its word triple: set operations on ints are several times cheaper than on
    tuples, and a 64-bit hash collision between two shingles of one list is negligible."""
    if not text.isascii():
        text = unicodedata.normalize("NFKC", text)
    words = text.casefold().split()
    if len(words) < 3:
        return frozenset((hash(tuple(words)),)) if words else frozenset()
    return frozenset(map(hash, zip(words, words[1:], words[2:], strict=False)))


def near_identical(
    first: frozenset[int], second: frozenset[int], threshold: float = NEAR_DUPLICATE_JACCARD
) -> bool:
    """Jaccard(first, second) ≥ threshold; empty sets are never near-identical."""
    small, large = (first, second) if len(first) <= len(second) else (second, first)
    if not small or len(small) < threshold * len(large):  # Jaccard ≤ |small| / |large|
        return False
    # Jaccard ≥ t implies |small \ large| ≤ (1 - t)·|small|, so any subset of `small` with
    # more elements than that shares one with `large`: a cheap, exact early rejection.
    sample_size = len(small) - math.floor(threshold * len(small)) + 1
    if large.isdisjoint(islice(small, sample_size)):
        return False
    common = len(small & large)
    return common >= threshold * (len(small) + len(large) - common)


def _prefix_length(size: int, threshold: float = NEAR_DUPLICATE_JACCARD) -> int:
    """Prefix-filter length for a shingle set of ``size`` (Bayardo et al., "Scaling up all
    pairs similarity search"): under one global order of shingles, two sets with Jaccard ≥ t
    share an element within their first ``size - ceil(t·size) + 1`` elements each. Using
    floor instead of ceil can only lengthen the prefix, which keeps the filter exact."""
    return min(size, size - math.floor(threshold * size) + 1)


@dataclass(frozen=True, slots=True)
class TextSketch:
    """A text's shingle set and its prefix (smallest shingle hashes) for the prefix filter."""

    shingles: frozenset[int]
    prefix: frozenset[int]


# Repetitions of a case return the same chunk texts again and again, so the sketches are
# memoised (a pure function of the text; bounded to keep memory to a few megabytes).
@lru_cache(maxsize=2048)
def text_sketch(text: str) -> TextSketch:
    shingles = word_shingles(text)
    prefix = frozenset(sorted(shingles)[: _prefix_length(len(shingles))])
    return TextSketch(shingles, prefix)


def count_duplicates(ordered: Sequence[RetrievedItem]) -> int:
    """How many items repeat an earlier item's location or near-identical text.

    Only text pairs whose prefixes intersect (the prefix filter) are compared in full."""
    if len(ordered) < 2:
        return 0
    seen_locations: set[tuple[Any, ...]] = set()
    earlier: list[TextSketch] = []
    duplicates = 0
    for item in ordered:
        key = location_key(item)
        repeated = key is not None and key in seen_locations
        sketch = text_sketch(item.text)
        if sketch.shingles:
            if not repeated:
                repeated = any(
                    not sketch.prefix.isdisjoint(other.prefix)
                    and near_identical(sketch.shingles, other.shingles)
                    for other in earlier
                )
            earlier.append(sketch)
        duplicates += repeated
        if key is not None:
            seen_locations.add(key)
    return duplicates


def leaked_files(
    ordered: Sequence[RetrievedItem],
    allowed_file_ids: Collection[str] | None,
    allowed_filenames: Collection[str] | None,
) -> tuple[str, ...]:
    """The leak rule of the module docstring: labels of leaked items, unique, in order."""
    if allowed_file_ids is None and allowed_filenames is None:
        return ()
    ids = None if allowed_file_ids is None else frozenset(allowed_file_ids)
    names = (
        None
        if allowed_filenames is None
        else frozenset(normalise_filename(name) for name in allowed_filenames)
    )
    leaked: dict[tuple[str, str], str] = {}  # identity → the first spelling seen
    for item in ordered:
        if item.file_id and ids is not None:
            if item.file_id not in ids:
                leaked.setdefault(("id", item.file_id), item.file_id)
        elif item.filename and names is not None:
            if normalise_filename(item.filename) not in names:
                leaked.setdefault(("name", normalise_filename(item.filename)), item.filename)
        elif item.file_id:
            leaked.setdefault(("id", item.file_id), item.file_id)
        elif item.filename:
            leaked.setdefault(("name", normalise_filename(item.filename)), item.filename)
        else:
            leaked.setdefault(("none", ""), UNIDENTIFIED)
    return tuple(leaked.values())
