"""Layer A: one retrieval call, its raw run, and its scored item record (no scoring inside).

The item record is plain JSON: it travels on the pytest report (also from xdist workers) and
is what the session aggregates. Rescoring from raw runs rebuilds it with ``score_raw_run``.
"""

from __future__ import annotations

from collections.abc import Collection
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from pytest_ragv2.deciding.records import RetrievalRecord, TopItem
from pytest_ragv2.gold.schema import Case, Evidence
from pytest_ragv2.run.keys import RunKey
from pytest_ragv2.scoring.retrieval import DEFAULT_KS, RetrievalScore, score_retrieval
from pytest_ragv2.systems.outputs import RetrievalResult, RetrievedItem, RunError

if TYPE_CHECKING:
    from pytest_ragv2.run.raw_models import RetrievalRawRun

TOP_ITEMS_KEPT = 5


def raw_run(
    key: RunKey, *, query: str, role: str, adapter: str, result: RetrievalResult
) -> dict[str, Any]:
    """The raw run as it is written to disk before any scoring."""
    return {
        "key": key.to_json(),
        "role": role,
        "adapter": adapter,
        "query": query,
        "finished_at": datetime.now(UTC).isoformat(),
        "latency_s": result.latency_s,
        "error": result.error.to_json() if result.error else None,
        "items": [item.to_json() for item in result.items],
        "exchanges": [exchange.to_json() for exchange in result.exchanges],
    }


def describe_evidence(evidence: Evidence) -> str:
    parts = [evidence.filename or evidence.file_id or "?"]
    if evidence.page is not None:
        parts.append(f"p.{evidence.page}")
    if evidence.section:
        parts.append(f"§ {evidence.section}")
    if evidence.table:
        parts.append(f"table {evidence.table}")
    if evidence.row is not None:
        parts.append(f"row {evidence.row}")
    return " ".join(parts)


def _levels_named(evidence: Evidence) -> list[str]:
    """The granularities the gold entry actually specifies, coarsest first."""
    levels = ["document"]
    if evidence.page is not None:
        levels.append("page")
    if evidence.section:
        levels.append("section")
    if evidence.table or evidence.row is not None:
        levels.append("row")
    return levels


def _miss_reason(required: list[Evidence], score: RetrievalScore, k: int) -> list[str]:
    reasons: list[str] = []
    for hit, evidence in zip(score.evidence_hits, required, strict=True):
        full = hit.first_rank.get("full")
        if full is not None and full <= k:
            continue
        found = ", ".join(
            f"{level} at rank {hit.first_rank[level]}"
            for level in _levels_named(evidence)
            if hit.first_rank.get(level) is not None
        )
        where = f"full match at rank {full}" if full is not None else (found or "not retrieved")
        reasons.append(f"gold evidence not in top {k}: {describe_evidence(evidence)} ({where})")
    return reasons


def item_record(
    key: RunKey,
    *,
    case: Case,
    split: str,
    role: str,
    latency_s: float,
    error: RunError | None,
    items: list[RetrievedItem],
    allowed_file_ids: Collection[str] | None,
    allowed_filenames: Collection[str] | None,
    recall_k: int,
) -> RetrievalRecord:
    """Score one run and decide whether it met its case; pure."""
    required = case.evidence_for(key.lang)
    score = score_retrieval(
        case,
        items,
        allowed_file_ids=allowed_file_ids,
        allowed_filenames=allowed_filenames,
        ks=tuple(sorted({*DEFAULT_KS, recall_k})),
        evidence=required,
    )
    reasons: list[str] = []
    if error is not None:
        reasons.append(f"{error.kind} error: {error.message}")
    if score.leaked:
        reasons.append(f"returned files outside the allow-list: {', '.join(score.leaked)}")
    if required and score.recall[recall_k] < 1.0:
        reasons.extend(_miss_reason(required, score, recall_k))
    return RetrievalRecord(
        key=key,
        category=case.category,
        split=split,
        gold_status=case.gold_status,
        role=role,
        ok=error is None,
        error=error,
        latency_s=latency_s,
        metrics=score.to_json(),
        returned=len(items),
        met=not reasons,
        reasons=tuple(reasons),
        top=tuple(
            TopItem.of(
                item.rank,
                item.filename or item.file_id,
                item.page,
                item.section,
                item.row_key or item.row,
            )
            for item in items[:TOP_ITEMS_KEPT]
        ),
    )


def score_raw_run(
    key: RunKey,
    raw: RetrievalRawRun,
    *,
    case: Case,
    split: str,
    allowed_file_ids: Collection[str] | None,
    allowed_filenames: Collection[str] | None,
    recall_k: int,
) -> RetrievalRecord:
    """Rebuild an item record from a raw run alone (rescoring)."""
    return item_record(
        key,
        case=case,
        split=split,
        role=raw.role,
        latency_s=raw.latency_s,
        error=raw.error.run_error() if raw.error is not None else None,
        items=[item.retrieved() for item in raw.items],
        allowed_file_ids=allowed_file_ids,
        allowed_filenames=allowed_filenames,
        recall_k=recall_k,
    )
