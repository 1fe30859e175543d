"""Pure scorers: evidence matching and layer-A retrieval metrics (no I/O, no pytest)."""

from __future__ import annotations

from pytest_ragv2.scoring.evidence import (
    Granularity,
    MatchLevel,
    matches,
    same_file,
    section_matches,
    table_integrity,
)
from pytest_ragv2.scoring.retrieval import (
    DEFAULT_KS,
    EvidenceHit,
    RetrievalScore,
    score_retrieval,
)

__all__ = [
    "DEFAULT_KS",
    "EvidenceHit",
    "Granularity",
    "MatchLevel",
    "RetrievalScore",
    "matches",
    "same_file",
    "score_retrieval",
    "section_matches",
    "table_integrity",
]
