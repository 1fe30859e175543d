"""The demo's V1 retrieval path: a vector space and a top-k by cosine (``V1Retriever``).

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
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Collection, Sequence
from typing import TYPE_CHECKING, Protocol

import numpy as np
import numpy.typing as npt
from scipy import sparse

from ragv2_demo.analysis import Analysis, _family_weight, analyze, vector_features

if TYPE_CHECKING:
    from ragv2_demo.chunks import Chunk

FloatArray = npt.NDArray[np.float64]
Embedder = Callable[[Sequence[str]], npt.NDArray[np.floating]]


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
