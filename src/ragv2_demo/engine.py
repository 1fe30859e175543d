"""Deterministic retrieval over the demo corpus: the V1 (vector only) and V2 (hybrid) paths.

Nothing here downloads a model or reads anything but the chunks it is given; every result is
a pure function of (chunks, query, k, file ids), so two runs give identical rankings.

Text analysis (shared by both paths)
    ``fold`` casefolds, strips accents and unifies exotic spaces, apostrophes and dashes, so
    "Disponibilité" and "disponibilite" meet. ``analyze`` splits on non-alphanumerics and adds
    extra tokens that plain splitting destroys: identifiers with letters and digits
    ("NX-450B" → ``nx450b``, "T1–T4"), upper-case acronym + number ("ISO 27001" → ``iso27001``),
    phone numbers, numbers written with French/German separators ("1 689" → ``1689``,
    "99,7" → ``99.7``; "1.689" yields both ``1689`` and ``1.689`` because it is ambiguous) and
    quarter names in the three languages ("T4", "quatrième trimestre", "Q4", "4. Quartal" →
    ``q4``). Stop words (French, English, German) are dropped from the content terms. A crude
    prefix stem (first six letters, ``contra~``) and the word's lexicon concept (below,
    ``@contract``) are indexed beside each word.

Concept lexicon
    A small hand-written French/English/German lexicon of generic business and IT vocabulary
    (``_CONCEPTS``) maps words to concepts, so "availability", "Verfügbarkeit" and
    "disponibilité" meet. It is the demo's stand-in for a multilingual embedding model; it was
    written as general vocabulary, not from any evaluation question.

Vector space (``VectorIndex``)
    TF-IDF (sublinear tf, smoothed idf, L2) over word stems, concepts, extra tokens and
    character 3/4-grams of each word (robust to inflection and typos), each family weighted
    (``_FAMILY_WEIGHT``, ``_CHAR_WEIGHT``). With at most ``dim`` (512) chunks the cosine is
    taken in that space as is — a truncated SVD to ``dim`` dimensions would be lossless there;
    with more chunks documents and queries are compared in the ``dim``-dimensional LSA space
    (truncated SVD computed through the eigen-decomposition of the chunk-by-chunk Gram matrix,
    exact and deterministic). A real sentence-embedding model already on disk can replace the
    TF-IDF space (``embedder=``, ``sentence_transformer_embedder``); off by default.

V1 (``V1Retriever``)
    The vector space alone, top k by cosine; the score is the cosine DISTANCE ``1 - sim``,
    as LibreChat rag_api reports it. A vector store always answers k items.

V2 (``V2Retriever``)
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

import dataclasses
import hashlib
import itertools
import logging
import math
import re
import unicodedata
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import numpy as np
import numpy.typing as npt
from scipy import sparse

if TYPE_CHECKING:
    from ragv2_demo.chunks import Chunk

FloatArray = npt.NDArray[np.float64]
Embedder = Callable[[Sequence[str]], npt.NDArray[np.floating]]

# --------------------------------------------------------------------------------------------
# Text analysis
# --------------------------------------------------------------------------------------------

_CHAR_MAP = {
    **dict.fromkeys(map(ord, "\u00a0\u202f\u2007\u2009\u2002\u2003\t\r\n"), " "),
    **dict.fromkeys(map(ord, "’‘`´ʼ"), "'"),
    **dict.fromkeys(map(ord, "‐‑‒–—−"), "-"),
    **dict.fromkeys(map(ord, "«»“”„"), '"'),
    ord("œ"): "oe",
    ord("Œ"): "OE",
    ord("æ"): "ae",
    ord("Æ"): "AE",
    ord("ß"): "ss",
}
_COMBINING = re.compile(r"[\u0300-\u036f]")
_WORD = re.compile(r"[^\W_]+")
# Words joined by - _ . / that contain at least one letter and one digit: NX-450B, T4, AES-256.
_IDENT = re.compile(r"(?<![\w.-])(?=[\w./-]*[a-z])(?=[\w./-]*\d)[a-z0-9]+(?:[-_./][a-z0-9]+)*")
_ACRONYM_NUMBER = re.compile(r"\b([A-Z][A-Z0-9]{1,7})[ -](\d+(?:\.\d+)*)\b")
_PHONE = re.compile(r"(?:\+\d{1,3}|\b0\d)(?:[ .]\d{1,4}){3,}\b")
_NUMBER = re.compile(r"(?<![\w.,])(\d{1,3}(?:[ .]\d{3})+(?!\d)|\d+)(?:,(\d+)(?!\d))?")
_DECIMAL_POINT = re.compile(r"(?<![\w.,])(\d+)\.(\d+)(?![\d.])")
_ID_SEPARATORS = dict.fromkeys(map(ord, "-_./"))
_QUOTED = re.compile(r'"([^"]{2,200})"')


def _stop_words() -> frozenset[str]:
    from bm25s.stopwords import STOPWORDS_EN, STOPWORDS_FRENCH, STOPWORDS_GERMAN

    words: set[str] = set()
    for word in (*STOPWORDS_EN, *STOPWORDS_FRENCH, *STOPWORDS_GERMAN):
        words.update(_WORD.findall(fold(word)))
    words.update({"quel", "quelle", "quels", "quelles", "combien", "est", "sont", "nous", "notre"})
    return frozenset(words)


def fold(text: str) -> str:
    """Casefold and strip accents; exotic spaces, apostrophes, dashes and quotes unified."""
    text = unicodedata.normalize("NFKD", text.translate(_CHAR_MAP))
    return _COMBINING.sub("", text).casefold()


_STOP_WORDS = _stop_words()


def _strip_accents_keep_case(text: str) -> str:
    return _COMBINING.sub("", unicodedata.normalize("NFKD", text.translate(_CHAR_MAP)))


@lru_cache(maxsize=1 << 16)
def stem(word: str) -> str:
    """Prefix stem of a long alphabetic word ("disponibilite" → "dispon~"), else ""."""
    if len(word) > 6 and word.isalpha():
        return word[:6] + "~"
    return ""


@dataclass(frozen=True, slots=True)
class Analysis:
    """What the analyzer found in one text, every string folded."""

    words: tuple[str, ...]  # every alphanumeric word, in order (positions for proximity)
    content: tuple[str, ...]  # words minus stop words, in order
    extra: tuple[str, ...]  # identifiers, acronym+number ids, phones, canonical numbers
    quoted: tuple[str, ...]  # quoted phrases (queries)

    @property
    def index_terms(self) -> list[str]:
        """Terms for the lexical index: content words, stems, lexicon concepts, extra tokens."""
        terms = list(self.content)
        terms.extend(s for s in map(stem, self.content) if s)
        terms.extend("@" + c for c in map(concept_of, self.content) if c)
        terms.extend(self.extra)
        return terms


def _numbers(folded: str) -> list[str]:
    found: list[str] = []
    for match in _NUMBER.finditer(folded):
        integer, decimals = match.group(1), match.group(2)
        if " " in integer or "." in integer:
            digits = re.sub(r"[ .]", "", integer)
            found.append(digits if decimals is None else f"{digits}.{decimals}")
            if "." in integer and integer.count(".") == 1 and decimals is None:
                found.append(integer)  # "1.689": German thousands or an English decimal
        elif decimals is not None:
            found.append(f"{integer}.{decimals}")
    for match in _DECIMAL_POINT.finditer(folded):
        found.append(f"{match.group(1)}.{match.group(2)}")
    return found


_QUARTER = re.compile(r"\b(?:[tq]([1-4])|([a-z0-9]+\.?) (?:trimestre|quarter|quartal))\b")
_ORDINAL = {
    **dict.fromkeys(
        ("premier", "1er", "1re", "first", "1st", "erstes", "erste", "ersten", "1."), "1"
    ),
    **dict.fromkeys(("deuxieme", "second", "2e", "2nd", "zweites", "zweite", "zweiten", "2."), "2"),
    **dict.fromkeys(("troisieme", "3e", "third", "3rd", "drittes", "dritte", "dritten", "3."), "3"),
    **dict.fromkeys(
        ("quatrieme", "4e", "fourth", "4th", "viertes", "vierte", "vierten", "4."), "4"
    ),
}


def _quarters(folded: str) -> list[str]:
    """Quarter names in any of the three languages as q1..q4 ("T4", "quatrième trimestre")."""
    found: list[str] = []
    for match in _QUARTER.finditer(folded):
        number = match.group(1) or _ORDINAL.get(match.group(2) or "")
        if number:
            found.append("q" + number)
    return found


def analyze(text: str, stop_words: frozenset[str] | None = None) -> Analysis:
    """Split ``text`` into folded words plus the extra tokens described in the module doc."""
    stops = _STOP_WORDS if stop_words is None else stop_words
    folded = fold(text)
    words = tuple(_WORD.findall(folded))
    content = tuple(w for w in words if w not in stops)
    extra: list[str] = []
    for match in _IDENT.finditer(folded):
        token = match.group(0).translate(_ID_SEPARATORS)
        if not token.isdigit():
            extra.append(token)
    for match in _ACRONYM_NUMBER.finditer(_strip_accents_keep_case(text)):
        extra.append((match.group(1) + match.group(2)).casefold())
    for match in _PHONE.finditer(folded):
        extra.append(re.sub(r"\D", "", match.group(0)))
    extra.extend(_numbers(folded))
    extra.extend(_quarters(folded))
    quoted = tuple(q.strip() for q in _QUOTED.findall(folded) if q.strip())
    return Analysis(words, content, tuple(extra), quoted)


# Generic business/IT vocabulary in French, English and German, as folded prefixes separated
# by spaces (an entry ending in "=" must match the whole word, optionally plus a plural "s").
# It lets the vector space bridge languages and synonyms the way a multilingual embedding would.
_CONCEPTS: dict[str, str] = {
    "price": (
        "tarif prix price pricing cout cost preis kosten abonnement subscription redevance "
        "fee= gebuhr facturat"
    ),
    "plan": "plan= formule offre offer tier= paket edition",
    "availability": "disponibil availab uptime verfugbar sla=",
    "contract": "contrat contract vertrag agreement accord vereinbarung",
    "termination": "resili terminat cancel kundig kuendig beend",
    "notice": "preavis notice frist=",
    "duration": "duree duration laufzeit dauer",
    "month": "mois= month monat mensuel monatlich",
    "year": "annee annuel year annual jahr jahrlich exercice",
    "quarter": "trimestr quarter quartal",
    "revenue": "revenu revenue umsatz ventes sales= affaires erlos",
    "customer": "client customer kunde",
    "new": "nouveau nouvel new= neu= neue signe signed gewonnen",
    "staff": "effectif employe salarie staff headcount mitarbeit personnel personal equipe team",
    "expense": "charge depense expense ausgabe aufwand kosten",
    "security": "securit security sicherheit",
    "encryption": "chiffrement chiffre= encrypt verschlussel aes tls",
    "recovery": (
        "sauvegard backup restaur recover reprise wiederherstell sinistre disaster "
        "katastroph notfall pra= rpo rto"
    ),
    "test": "test exercice drill ubung",
    "hosting": "heberg hosting hosted datacenter centre rechenzentrum serveur server cloud",
    "certification": "certif zertifi audit iso soc=",
    "logs": "journa log= logs= protokoll",
    "retention": "conserv retention retain aufbewahr archiv",
    "deletion": "purge suppress delet losch effac",
    "export": "export",
    "support": "support assistance helpdesk hotline astreinte on-call bereitschaft service",
    "response_time": "delai response reponse antwort reaktion respond",
    "incident": "incident violation breach vorfall datenpann notifi meldung cnil",
    "maintenance": "maintenance wartung",
    "penalty": (
        "penalit penalty avoir= credit gutschrift compensation indemn entschadig strafe "
        "remise rabatt"
    ),
    "liability": "responsabil liabil haftung",
    "cap": "plafon cap= capped limit maximum grenz obergrenz hochst",
    "target": "objectif cible target goal ziel",
    "churn": "churn attrition abwanderung",
    "launch": "lancement lancer launch roadmap markteinf sortie release beta=",
    "integration": "integrat connect schnittstell",
    "office": "bureau office buro implant expansion ouverture filiale standort niederlass",
    "market": "marche= market markt",
    "forecast": "predict prevision forecast prognos vorhersag",
    "accuracy": "precision accuracy erreur error fehler mape genauigk",
    "user": "utilisateur user nutzer benutzer seat licence license",
    "refresh": "rafraich refresh actualis aktualisier update frequen",
    "downgrade": "downgrade retrograd herabstuf upgrade",
    "phone": "telephon phone telefon appel call= anruf numero",
    "guarantee": "garanti guarantee gewahrleist zusich engagement commit",
    "hour": "heure hour stunde",
    "day": "jour day= days= tag= tage",
    "week": "semaine week woche",
    "minute": "minute",
    "share": "part= parts= share anteil pourcentage percent prozent",
    "country": "pays country land= lander",
    "growth": "croissance growth wachstum hausse increase augment",
}


def _concept_tables() -> tuple[dict[str, str], dict[str, str], tuple[int, ...]]:
    exact: dict[str, str] = {}
    prefixes: dict[str, str] = {}
    for concept, entries in _CONCEPTS.items():
        for entry in entries.split():
            if entry.endswith("="):
                exact.setdefault(entry[:-1], concept)
            else:
                prefixes.setdefault(entry, concept)
    lengths = tuple(sorted({len(p) for p in prefixes}, reverse=True))
    return exact, prefixes, lengths


_CONCEPT_EXACT, _CONCEPT_PREFIXES, _CONCEPT_PREFIX_LENGTHS = _concept_tables()


@lru_cache(maxsize=1 << 16)
def concept_of(word: str) -> str | None:
    """The lexicon concept of a folded word (longest matching prefix wins), or None."""
    hit = _CONCEPT_EXACT.get(word)
    if hit is None and word.endswith("s"):
        hit = _CONCEPT_EXACT.get(word[:-1])
    if hit is not None:
        return hit
    for length in _CONCEPT_PREFIX_LENGTHS:
        if length <= len(word):
            hit = _CONCEPT_PREFIXES.get(word[:length])
            if hit is not None:
                return hit
    return None


@lru_cache(maxsize=1 << 16)
def _word_features(word: str) -> tuple[str, ...]:
    if word.isdigit():
        return ("x:" + word,)  # the same feature as a canonical number token
    features = ["w:" + (stem(word) or word)]
    concept = concept_of(word)
    if concept is not None:
        features.append("c:" + concept)
    if len(word) > 2:
        padded = f" {word} "
        features.extend(padded[i : i + n] for n in (3, 4) for i in range(len(padded) - n + 1))
    return tuple(features)


def vector_features(analysis: Analysis) -> Counter[str]:
    """The sparse features of one text: word stems, concepts and character 3/4-grams."""
    features: Counter[str] = Counter()
    for word in analysis.content:
        features.update(_word_features(word))
    features.update("x:" + token for token in analysis.extra)
    return features


# Relative weight of each feature family in the vector space (by key prefix).
_FAMILY_WEIGHT = {"w": 1.0, "c": 1.5, "x": 1.5}
_CHAR_WEIGHT = 0.25


def _family_weight(feature: str) -> float:
    if len(feature) > 2 and feature[1] == ":":
        return _FAMILY_WEIGHT.get(feature[0], _CHAR_WEIGHT)
    return _CHAR_WEIGHT


# --------------------------------------------------------------------------------------------
# Vector space
# --------------------------------------------------------------------------------------------


class VectorIndex:
    """A vector space over a list of texts; cosine similarity of a query to each text.

    With at most ``dim`` texts the TF-IDF space is used as it is (a truncated SVD to ``dim``
    dimensions would be lossless there); with more, documents and queries are compared in
    the ``dim``-dimensional LSA space.
    """

    def __init__(
        self,
        texts: Sequence[str],
        *,
        analyses: Sequence[Analysis] | None = None,
        dim: int = 512,
        embedder: Embedder | None = None,
    ) -> None:
        self._embedder = embedder
        self._size = len(texts)
        self._vocab: dict[str, int] = {}
        self._idf_weight: FloatArray = np.zeros(0)
        self._by_feature: sparse.csr_matrix = sparse.csr_matrix((0, self._size))
        self._projection: FloatArray | None = None  # n×k: X·q ↦ the query in the LSA space
        self._docs: FloatArray | None = None  # unit document vectors (LSA or embedder)
        if embedder is not None:
            if texts:
                self._docs = _unit_rows(np.asarray(embedder(list(texts)), dtype=np.float64))
            return
        if analyses is None:
            analyses = [analyze(t) for t in texts]
        self._build_tfidf([vector_features(a) for a in analyses], dim)

    def _build_tfidf(self, feature_rows: list[Counter[str]], dim: int) -> None:
        vocab = self._vocab
        n_docs = self._size
        cols: list[int] = []
        values: list[float] = []
        lengths: list[int] = []
        for features in feature_rows:
            cols.extend(vocab.setdefault(feature, len(vocab)) for feature in features)
            values.extend(features.values())
            lengths.append(len(features))
        col_array = np.asarray(cols, dtype=np.int64)
        row_array = np.repeat(np.arange(n_docs, dtype=np.int64), lengths)
        counts = sparse.csr_matrix(
            (1.0 + np.log(np.asarray(values, dtype=np.float64)), (row_array, col_array)),
            shape=(n_docs, len(vocab)),
        )
        doc_freq = np.bincount(col_array, minlength=len(vocab))
        idf = np.log((1.0 + n_docs) / (1.0 + doc_freq)) + 1.0
        family = np.fromiter((_family_weight(f) for f in vocab), np.float64, count=len(vocab))
        self._idf_weight = idf * family
        weighted = sparse.csr_matrix(counts.multiply(self._idf_weight[np.newaxis, :]))
        norms = np.sqrt(np.asarray(weighted.multiply(weighted).sum(axis=1)).ravel())
        norms[norms == 0.0] = 1.0
        matrix = sparse.csr_matrix(weighted.multiply(1.0 / norms[:, np.newaxis]))
        self._by_feature = sparse.csr_matrix(matrix.T)
        if n_docs <= dim:
            return
        # Truncated SVD X ≈ U·Σ·Vᵀ through the n×n Gram matrix X·Xᵀ = U·Σ²·Uᵀ (exact and
        # deterministic up to signs, which cosine ignores). Documents are the rows of U·Σ;
        # a query q maps to Vᵀ·q = Uᵀ·(X·q) / Σ.
        eigenvalues, eigenvectors = np.linalg.eigh((matrix @ matrix.T).toarray())
        order = np.argsort(-eigenvalues, kind="stable")[:dim]
        keep = order[eigenvalues[order] > 1e-10]
        sigma = np.sqrt(eigenvalues[keep])
        basis = eigenvectors[:, keep]
        self._projection = basis / sigma[np.newaxis, :]
        self._docs = _unit_rows(basis * sigma[np.newaxis, :])

    def __len__(self) -> int:
        return self._size

    @property
    def reduced(self) -> bool:
        """Whether documents are compared in a truncated-SVD (LSA) space."""
        return self._projection is not None

    def similarities(self, query: str) -> FloatArray:
        """Cosine similarity of ``query`` to every text, in text order."""
        if self._size == 0:
            return np.zeros(0)
        if self._embedder is not None:
            assert self._docs is not None
            vector = np.asarray(self._embedder([query]), dtype=np.float64).reshape(-1)
            return np.asarray(self._docs @ _unit_rows(vector[np.newaxis, :])[0])
        cols: list[int] = []
        values: list[float] = []
        for feature, count in vector_features(analyze(query)).items():
            col = self._vocab.get(feature)
            if col is not None:
                cols.append(col)
                values.append((1.0 + math.log(count)) * float(self._idf_weight[col]))
        if not cols:
            return np.zeros(self._size)
        overlap = self._overlap(np.asarray(cols, dtype=np.int64), np.asarray(values))
        overlap /= math.hypot(*values)
        if self._projection is None or self._docs is None:
            return overlap  # exactly the TF-IDF cosine (document rows are unit vectors)
        return np.asarray(self._docs @ (overlap @ self._projection), dtype=np.float64)

    def _overlap(self, cols: npt.NDArray[np.int64], values: FloatArray) -> FloatArray:
        """X·q for a sparse query (feature columns, weights), vectorised over the rows of Xᵀ."""
        matrix = self._by_feature
        starts, ends = matrix.indptr[cols], matrix.indptr[cols + 1]
        lengths = ends - starts
        total = int(lengths.sum())
        if total == 0:
            return np.zeros(self._size)
        positions = np.repeat(starts - (np.cumsum(lengths) - lengths), lengths) + np.arange(total)
        weights = matrix.data[positions] * np.repeat(values, lengths)
        overlap = np.bincount(matrix.indices[positions], weights=weights, minlength=self._size)
        return np.asarray(overlap, dtype=np.float64)


def _unit_rows(matrix: FloatArray) -> FloatArray:
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    norms[norms == 0.0] = 1.0
    return np.asarray(matrix / norms, dtype=np.float64)


def sentence_transformer_embedder(model_name_or_path: str) -> Embedder:
    """An embedder backed by a sentence-transformers model already on disk (no download)."""
    from sentence_transformers import SentenceTransformer  # type: ignore[import-not-found]

    model = SentenceTransformer(model_name_or_path, local_files_only=True)

    def embed(texts: Sequence[str]) -> npt.NDArray[np.floating]:
        return np.asarray(model.encode(list(texts), normalize_embeddings=True))

    return embed


# --------------------------------------------------------------------------------------------
# Retrievers
# --------------------------------------------------------------------------------------------


class Retriever(Protocol):
    """What the server needs from a retrieval path."""

    @property
    def chunks(self) -> Sequence[Chunk]: ...

    def search(
        self, query: str, k: int, file_ids: Collection[str] | None = None
    ) -> list[tuple[Chunk, float]]: ...


class _FileFilter:
    """Chunk positions per file id, to restrict a search to some files cheaply."""

    def __init__(self, chunks: Sequence[Chunk]) -> None:
        positions: dict[str, list[int]] = {}
        for position, chunk in enumerate(chunks):
            positions.setdefault(chunk.file_id, []).append(position)
        self._positions = {f: np.asarray(p, dtype=np.int64) for f, p in positions.items()}
        self._size = len(chunks)

    def mask(self, file_ids: Collection[str] | None) -> npt.NDArray[np.bool_]:
        if file_ids is None:
            return np.ones(self._size, dtype=bool)
        allowed = np.zeros(self._size, dtype=bool)
        for file_id in set(file_ids):
            positions = self._positions.get(file_id)
            if positions is not None:
                allowed[positions] = True
        return allowed


def _ranked(scores: FloatArray, allowed: npt.NDArray[np.bool_], limit: int) -> list[int]:
    """Positions of the allowed entries by score descending, ties by position; at most limit."""
    candidates = np.flatnonzero(allowed)
    if candidates.size == 0 or limit <= 0:
        return []
    order = np.lexsort((candidates, -scores[candidates]))
    return [int(candidates[i]) for i in order[:limit]]


class V1Retriever:
    """Vector-only retrieval, like rag_api's PGVector path; scores are cosine distances."""

    def __init__(self, chunks: Sequence[Chunk], *, embedder: Embedder | None = None) -> None:
        self._chunks = tuple(chunks)
        self._index = VectorIndex([c.text for c in self._chunks], embedder=embedder)
        self._filter = _FileFilter(self._chunks)

    @property
    def chunks(self) -> Sequence[Chunk]:
        return self._chunks

    def search(
        self, query: str, k: int, file_ids: Collection[str] | None = None
    ) -> list[tuple[Chunk, float]]:
        allowed = self._filter.mask(file_ids)
        if k <= 0 or not allowed.any():
            return []
        sims = self._index.similarities(query)
        return [(self._chunks[i], float(1.0 - sims[i])) for i in _ranked(sims, allowed, k)]


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


# --------------------------------------------------------------------------------------------
# Both paths over one corpus
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class DemoIndex:
    """The two retrieval paths of the demo deployment over the same corpus."""

    v1: V1Retriever
    v2: V2Retriever
    # file_id -> a PDF's information dictionary (ParsedDocument.info)
    file_info: Mapping[str, Mapping[str, str]] = field(default_factory=dict)

    @classmethod
    def from_chunks(
        cls,
        v1_chunks: Sequence[Chunk],
        v2_chunks: Sequence[Chunk],
        *,
        embedder: Embedder | None = None,
    ) -> DemoIndex:
        return cls(
            V1Retriever(v1_chunks, embedder=embedder), V2Retriever(v2_chunks, embedder=embedder)
        )

    @classmethod
    def from_corpus(cls, corpus_dir: Path, *, sentence_model: str | None = None) -> DemoIndex:
        """V1 over fixed-size chunks, V2 over structure-aware chunks of the same corpus.

        ``sentence_model`` names a sentence-transformers model already on disk to use
        instead of the built-in TF-IDF space (both paths); None keeps it off.
        """
        from ragv2_demo.chunks import chunk_fixed, chunk_structured, load_corpus

        docs = load_corpus(corpus_dir)
        embedder = sentence_transformer_embedder(sentence_model) if sentence_model else None
        index = cls.from_chunks(chunk_fixed(docs), chunk_structured(docs), embedder=embedder)
        info = {doc.file_id: dict(doc.info) for doc in docs if doc.info}
        return dataclasses.replace(index, file_info=info)

    def path(self, name: str) -> Retriever:
        """The retriever of path "v1" or "v2"."""
        if name == "v1":
            return self.v1
        if name == "v2":
            return self.v2
        raise KeyError(name)


def text_digest(text: str) -> str:
    """md5 of a chunk's text, as rag_api's ``digest`` metadata."""
    return hashlib.md5(text.encode("utf-8"), usedforsecurity=False).hexdigest()
