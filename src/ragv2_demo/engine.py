"""Deterministic retrieval over the demo corpus: the V1 (vector only) and V2 (hybrid) paths.

Nothing here downloads a model or reads anything but the chunks it is given; every result is
a pure function of (chunks, query, k, file ids), so two runs give identical rankings.
``DemoIndex`` holds both paths over one corpus. The text analysis both paths share is
``analysis.py``, V1 and its vector space ``retrieval_v1.py``, V2 ``retrieval_v2.py``.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ragv2_demo.retrieval_v1 import Embedder, Retriever, V1Retriever, sentence_transformer_embedder
from ragv2_demo.retrieval_v2 import V2Retriever

if TYPE_CHECKING:
    from ragv2_demo.chunks import Chunk


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
