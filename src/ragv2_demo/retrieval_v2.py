"""The demo's V2 retrieval path: exact, lexical and vector channels, fused and reranked
(``V2Retriever``).

Three candidate channels over the allowed chunks (a V2 chunk is indexed with its section,
table and row label):

1. exact — identifiers, acronym+number ids, phone numbers, quarter tokens, quoted strings
   («…», "…") and exact numbers ≥ 10 from the query (terms present in more than half of
   the chunks are not discriminative and ignored); chunks ranked by the idf-weighted sum
   of the exact terms they contain;
2. lexical — BM25 (``bm25s``, Lucene variant, k1=1.5, b=0.75) over words, stems,
   concepts and extra tokens;
3. vector — the same kind of ``VectorIndex`` as V1 (top 50).

The rankings are fused by reciprocal-rank fusion, ``rrf(c) = Σ 1 / (60 + rank)``. The best
``max(40, 4k)`` fused candidates are then reranked by

    score = 0.5·rrf/rrf_max + 0.3·coverage + 0.1·proximity + 0.1·structure

where ``rrf_max = 3/61`` (first in all three channels). The query is split into units —
each distinct content word, each exact term — weighted by idf (a word the corpus does not
know at all gets the weight of a term no chunk contains, so an off-corpus question never
looks fully covered). ``coverage`` is the weighted fraction of units a chunk covers (by
the word itself 1.0, its stem 0.8, its concept 0.6); ``proximity`` is
``1 / (1 + (gap − 1) / 4)`` for the smallest word gap between two different query words
in the chunk (0 with fewer than two); ``structure`` is the same weighted fraction over
the chunk's section / table / row-label header only, plus 0.5 when the row label is
itself a query token ("T4"), capped at 1. Ties keep the chunk order. Walking down that
order, a chunk whose content-word set has a Jaccard similarity ≥ 0.9 with an already kept
chunk (or the same text) is dropped as a near duplicate. The reported score is the
distance ``1 − score``, in [0, 1] and non-decreasing with rank.
"""

from __future__ import annotations

import itertools
import logging
import math
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from ragv2_demo.analysis import Analysis, analyze, concept_of, fold, stem
from ragv2_demo.retrieval_v1 import Embedder, FloatArray, VectorIndex, _FileFilter, _ranked

if TYPE_CHECKING:
    from ragv2_demo.chunks import Chunk


@dataclass(frozen=True, slots=True)
class _ChunkProfile:
    """What the reranker needs to know about one chunk, computed once at build time."""

    terms: frozenset[str]  # index terms of text + header
    header_terms: frozenset[str]  # index terms of section / table / row label
    positions: dict[str, tuple[int, ...]]  # content word or its stem → word positions
    words: frozenset[str]  # content words (near-duplicate detection)
    row_key_terms: frozenset[str]  # words and extra tokens of the row label
    folded_text: str  # whitespace-collapsed folded text (quoted phrase search)


def _header_text(chunk: Chunk) -> str:
    return " ".join(p for p in (chunk.section, chunk.table, chunk.row_key) if p)


def _profile(chunk: Chunk, body: Analysis, header: Analysis) -> _ChunkProfile:
    positions: dict[str, list[int]] = {}
    for position, word in enumerate(body.words):
        positions.setdefault(word, []).append(position)
        stemmed = stem(word)
        if stemmed:
            positions.setdefault(stemmed, []).append(position)
    return _ChunkProfile(
        terms=frozenset(body.index_terms) | frozenset(header.index_terms),
        header_terms=frozenset(header.index_terms),
        positions={term: tuple(p) for term, p in positions.items()},
        words=frozenset(body.content),
        row_key_terms=_row_key_terms(chunk.row_key),
        folded_text=" ".join(fold(chunk.text).split()),
    )


def _row_key_terms(row_key: str | None) -> frozenset[str]:
    if not row_key:
        return frozenset()
    analysis = analyze(row_key)
    return frozenset(analysis.words) | frozenset(analysis.extra)


def _joined(header: Analysis, body: Analysis) -> Analysis:
    return Analysis(
        header.words + body.words,
        header.content + body.content,
        header.extra + body.extra,
        header.quoted + body.quoted,
    )


def _exact_terms(analysis: Analysis) -> list[str]:
    """Query terms that must be matched literally: ids, phones, numbers ≥ 10."""
    terms: list[str] = []
    for token in analysis.extra:
        if token.replace(".", "").isdigit():
            try:
                if float(token) < 10:
                    continue
            except ValueError:
                continue
        terms.append(token)
    for word in analysis.content:
        if word.isdigit() and int(word) >= 10:
            terms.append(word)
    return list(dict.fromkeys(terms))


def _proximity(profile: _ChunkProfile, query_terms: Iterable[str]) -> float:
    hits = sorted(
        (position, term) for term in query_terms for position in profile.positions.get(term, ())
    )
    best: int | None = None
    for (pos_a, term_a), (pos_b, term_b) in itertools.pairwise(hits):
        if term_a != term_b and pos_a != pos_b:
            gap = pos_b - pos_a
            best = gap if best is None else min(best, gap)
    return 0.0 if best is None else 1.0 / (1.0 + (best - 1) / 4.0)


class V2Retriever:
    """Exact + BM25 + vector, fused by RRF, reranked and de-duplicated (see module doc)."""

    RRF_K = 60
    VECTOR_DEPTH = 50
    DUPLICATE_JACCARD = 0.9

    def __init__(self, chunks: Sequence[Chunk], *, embedder: Embedder | None = None) -> None:
        import bm25s

        # bm25s logs its index build at DEBUG; under pytest that line would be captured
        # into the report of whichever test item runs while the demo starts
        logging.getLogger("bm25s").setLevel(logging.WARNING)
        self._chunks = tuple(chunks)
        self._filter = _FileFilter(self._chunks)
        bodies = [analyze(c.text) for c in self._chunks]
        headers = [analyze(_header_text(c)) for c in self._chunks]
        self._profiles = [
            _profile(*triple) for triple in zip(self._chunks, bodies, headers, strict=True)
        ]
        texts = [f"{_header_text(c)}\n{c.text}" for c in self._chunks]
        joined = [_joined(h, b) for h, b in zip(headers, bodies, strict=True)]
        self._index = VectorIndex(texts, analyses=joined, embedder=embedder)
        self._postings: dict[str, list[int]] = {}
        for position, profile in enumerate(self._profiles):
            for term in profile.terms:
                self._postings.setdefault(term, []).append(position)
        self._doc_freq = {term: len(p) for term, p in self._postings.items()}
        self._bm25 = bm25s.BM25(k1=1.5, b=0.75, method="lucene")
        corpus_terms = [a.index_terms or [""] for a in joined]
        if self._chunks:
            self._bm25.index(corpus_terms, show_progress=False)

    @property
    def chunks(self) -> Sequence[Chunk]:
        return self._chunks

    def _idf(self, term: str) -> float:
        n = len(self._chunks)
        return math.log((n + 1.0) / (self._doc_freq.get(term, 0) + 0.5))

    def _query_units(
        self, analysis: Analysis, exact: list[str]
    ) -> list[tuple[tuple[tuple[str, float], ...], float]]:
        """The query's content words and exact terms, each with the forms that cover it
        (word 1.0, stem 0.8, lexicon concept 0.6) and an idf weight; a word the corpus
        does not know at all keeps the weight of a term no chunk contains."""
        units: list[tuple[tuple[tuple[str, float], ...], float]] = []
        seen: set[str] = set()
        for word in analysis.content:
            if word in seen or word.isdigit():
                continue
            seen.add(word)
            forms = [(word, 1.0)]
            stemmed, concept = stem(word), concept_of(word)
            if stemmed:
                forms.append((stemmed, 0.8))
            if concept:
                forms.append(("@" + concept, 0.6))
            known = [t for t, _ in forms if t in self._doc_freq]
            units.append((tuple(forms), max(map(self._idf, known or [word]))))
        for term in exact:
            if term not in seen:
                seen.add(term)
                units.append((((term, 1.0),), self._idf(term)))
        return units

    def _bm25_scores(self, terms: list[str]) -> FloatArray:
        vocab: dict[str, int] = self._bm25.vocab_dict
        ids = [vocab[t] for t in terms if t in vocab]
        if not ids:
            return np.zeros(len(self._chunks))
        return np.asarray(self._bm25.get_scores_from_ids(ids), dtype=np.float64)

    def _exact_scores(
        self, exact: list[str], quoted: Sequence[str], allowed: npt.NDArray[np.bool_]
    ) -> FloatArray:
        scores = np.zeros(len(self._chunks))
        n_allowed = int(allowed.sum())
        for term in exact:
            postings = self._postings.get(term)
            if not postings or (n_allowed >= 4 and len(postings) > len(self._chunks) / 2):
                continue
            scores[postings] += self._idf(term)
        for phrase in quoted:
            for position in np.flatnonzero(allowed):
                if phrase in self._profiles[position].folded_text:
                    scores[position] += 2.0 * self._idf(phrase)
        return scores

    def search(
        self, query: str, k: int, file_ids: Collection[str] | None = None
    ) -> list[tuple[Chunk, float]]:
        allowed = self._filter.mask(file_ids)
        if k <= 0 or not allowed.any():
            return []
        analysis = analyze(query)
        exact = _exact_terms(analysis)
        query_terms = list(dict.fromkeys(analysis.index_terms))

        channels = [
            _ranked(s, allowed & (s > 0), len(self._chunks))
            for s in (
                self._exact_scores(exact, analysis.quoted, allowed),
                self._bm25_scores(query_terms),
            )
        ]
        channels.append(_ranked(self._index.similarities(query), allowed, self.VECTOR_DEPTH))
        fused: dict[int, float] = {}
        for ranking in channels:
            for rank, position in enumerate(ranking, start=1):
                fused[position] = fused.get(position, 0.0) + 1.0 / (self.RRF_K + rank)
        candidates = sorted(fused, key=lambda p: (-fused[p], p))[: max(40, 4 * k)]
        if not candidates:
            return []

        units = self._query_units(analysis, exact)
        total_weight = sum(weight for _, weight in units) or 1.0
        query_labels = {*analysis.words, *analysis.extra}
        proximity_terms = [*analysis.content, *(s for s in map(stem, analysis.content) if s)]
        max_fused = len(channels) / (self.RRF_K + 1.0)
        scored: list[tuple[float, int]] = []
        for position in candidates:
            profile = self._profiles[position]
            coverage = structure = 0.0
            for forms, weight in units:
                coverage += weight * max((c for t, c in forms if t in profile.terms), default=0.0)
                structure += weight * max(
                    (c for t, c in forms if t in profile.header_terms), default=0.0
                )
            coverage /= total_weight
            structure /= total_weight
            if profile.row_key_terms & query_labels:
                structure += 0.5
            score = (
                0.5 * fused[position] / max_fused
                + 0.3 * coverage
                + 0.1 * _proximity(profile, proximity_terms)
                + 0.1 * min(1.0, structure)
            )
            scored.append((score, position))
        scored.sort(key=lambda pair: (-pair[0], pair[1]))

        results: list[tuple[Chunk, float]] = []
        kept: list[_ChunkProfile] = []
        for score, position in scored:
            profile = self._profiles[position]
            if any(_near_duplicate(profile, other, self.DUPLICATE_JACCARD) for other in kept):
                continue
            kept.append(profile)
            results.append((self._chunks[position], max(0.0, 1.0 - score)))
            if len(results) == k:
                break
        return results


def _near_duplicate(a: _ChunkProfile, b: _ChunkProfile, threshold: float) -> bool:
    if a.folded_text == b.folded_text:
        return True
    if not a.words or not b.words:
        return False
    return len(a.words & b.words) / len(a.words | b.words) >= threshold
