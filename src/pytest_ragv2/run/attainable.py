"""The attainable ceiling: how much of the gold a system could find at all.

A recall of 0.55 means one thing when the gold is in the service's chunks and the ranker
missed it, and another when no chunk the service stores can meet the gold entry (a loader
that drops a table, a page the extractor cannot read). So, for each system whose service can
list what it stores (rag_api's ``GET /documents?ids=``, or ``documents_url`` of an http-json
service answering the same shape), every stored chunk of the queried files is matched
against every gold entry, as a retrieved item would be (:func:`match_step`), and

- an entry is **attainable** at the best granularity any stored chunk meets
  (document, page, section, row);
- a case's **ceiling** is the fraction of its required entries attainable at full
  granularity: the recall@k of a perfect ranker with k at least the number of entries;
- a system's and a category's ceiling is the mean of its cases' ceilings, as recall is.

Pure but for :func:`fetch_stored_chunks`, which asks the service. A system whose service
cannot list its chunks has no ceiling (shown as "—"), never a guessed one.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pytest_ragv2.gold.schema import Evidence
from pytest_ragv2.layers.retrieval.run import describe_evidence
from pytest_ragv2.scoring.evidence import FULL_STEP, GRANULARITIES, match_step
from pytest_ragv2.systems.outputs import RetrievedItem

_DOCUMENT_BATCH = 50


@dataclass(frozen=True, slots=True)
class CaseGold:
    """What the ceiling needs of one case in one prompt language."""

    case: str
    category: str
    lang: str
    required: tuple[Evidence, ...]


@dataclass(slots=True)
class Ceiling:
    """One system's attainable ceiling."""

    chunks: int
    value: float | None
    by_category: dict[str, float] = field(default_factory=dict)
    by_case: dict[str, float] = field(default_factory=dict)
    unattainable: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "stored_chunks": self.chunks,
            "ceiling": self.value,
            "by_category": self.by_category,
            "by_case": self.by_case,
            "unattainable": self.unattainable,
        }


def best_step(entry: Evidence, chunks: Sequence[RetrievedItem]) -> int:
    """The finest step of the granularity ladder any chunk meets (0: not even the file)."""
    best = 0
    for chunk in chunks:
        best = max(best, match_step(chunk, entry))
        if best == FULL_STEP:
            break
    return best


def ceiling(cases: Sequence[CaseGold], chunks: Sequence[RetrievedItem]) -> Ceiling:
    """The system's ceiling over ``cases`` (cases without required evidence have none)."""
    by_file: dict[str, list[RetrievedItem]] = defaultdict(list)
    for chunk in chunks:
        by_file[chunk.file_id or chunk.filename or ""].append(chunk)
        if chunk.file_id and chunk.filename:
            by_file[chunk.filename].append(chunk)
    steps: dict[tuple[Any, ...], int] = {}
    per_case: dict[str, list[float]] = defaultdict(list)
    categories: dict[str, str] = {}
    unattainable: list[str] = []
    for gold in cases:
        if not gold.required:
            continue
        hits = 0
        for entry in gold.required:
            key = (
                entry.file_id,
                entry.filename,
                entry.page,
                entry.section,
                entry.table,
                entry.row,
                entry.anchor,
            )
            if key not in steps:
                candidates = by_file.get(entry.file_id or "", []) or by_file.get(
                    entry.filename or "", []
                )
                steps[key] = best_step(entry, candidates)
                if steps[key] < FULL_STEP:
                    reached = _reached(entry, steps[key])
                    anchor = f" anchor {entry.anchor!r}" if entry.anchor else ""
                    unattainable.append(
                        f"{gold.case}: {describe_evidence(entry)}{anchor} — best: {reached}"
                    )
            hits += steps[key] == FULL_STEP
        per_case[gold.case].append(hits / len(gold.required))
        categories[gold.case] = gold.category
    case_values = {case: sum(values) / len(values) for case, values in per_case.items()}
    grouped: dict[str, list[float]] = defaultdict(list)
    for case, value in case_values.items():
        grouped[categories[case]].append(value)
    return Ceiling(
        chunks=len(chunks),
        value=sum(case_values.values()) / len(case_values) if case_values else None,
        by_category={name: sum(v) / len(v) for name, v in sorted(grouped.items())},
        by_case=dict(sorted(case_values.items())),
        unattainable=unattainable,
    )


def _reached(entry: Evidence, step: int) -> str:
    """The step's name; a step past a field the gold does not give is the one before it."""
    if step == 0:
        return "nothing"
    if step == 2 and entry.page is None:
        return "document"
    return GRANULARITIES[step - 1]


def stored_documents(
    client: Any,
    url: str,
    headers: Mapping[str, str],
    file_ids: Sequence[str],
    config: Any,
    *,
    one_by_one: bool = False,
) -> list[dict[str, Any]] | None:
    """Every document a rag_api-shaped ``GET url?ids=…`` lists for ``file_ids``, asked in
    batches; None when the listing fails. rag_api answers 404 for a whole batch when one id
    is unknown: with ``one_by_one`` such a batch is asked again id by id, keeping the rest.

    Each request is bounded as the system's calls are (``send_with_retry`` on a
    ``bounded_client``): ``config``'s ``timeout_s`` bounds it as a whole, its
    ``max_response_mb`` the body after decompression; it is tried once, and ``config``'s
    ``query_env`` is added to the query; a failure raises ``AdapterFailure``."""
    from pytest_ragv2.systems.base import SIDE_ROUTE_RETRY, send_with_retry
    from pytest_ragv2.systems.query_env import query_from_env

    query = query_from_env(getattr(config, "query_env", {}) or {})

    def listed(ids: list[str]) -> tuple[int, list[dict[str, Any]] | None]:
        reply = send_with_retry(
            client,
            method="GET",
            url=url,
            exchanges=[],
            retry=SIDE_ROUTE_RETRY,
            params={"ids": ids},
            headers=headers,
            max_bytes=config.max_response_bytes,
            secret_query=query,
        )
        found = _documents_in(reply.body) if reply.is_json else None
        return reply.status_code, found

    documents: list[dict[str, Any]] = []
    for start in range(0, len(file_ids), _DOCUMENT_BATCH):
        batch = list(file_ids[start : start + _DOCUMENT_BATCH])
        status, found = listed(batch)
        if status == 404 and one_by_one:
            for one in batch:
                single_status, single = listed([one])
                if single_status == 200 and single is not None:
                    documents.extend(single)
            continue
        if status != 200 or found is None:
            return None
        documents.extend(found)
    return documents


def _documents_in(body: Any) -> list[dict[str, Any]]:
    """The well-formed documents of a listing (text, and metadata that is an object)."""
    if not isinstance(body, list):
        return []
    return [
        document
        for document in body
        if isinstance(document, dict)
        and isinstance(document.get("page_content"), str)
        and isinstance(document.get("metadata") or {}, dict)
    ]


def fetch_stored_chunks(
    name: str, retrieval: Any, file_ids: Sequence[str]
) -> list[RetrievedItem] | None:
    """Every chunk the system's service stores for ``file_ids`` (gold file ids), as items;
    None when it cannot list them (``ListsStoredDocuments``) or the listing fails (never
    raises but for an interrupt). Bounded as the system's own calls are
    (``stored_documents``)."""
    from pytest_ragv2.systems.abilities import ListsStoredDocuments
    from pytest_ragv2.systems.base import bounded_client
    from pytest_ragv2.systems.failure import AdapterFailure
    from pytest_ragv2.systems.rag_api import document_to_item

    if not isinstance(retrieval, ListsStoredDocuments) or not file_ids:
        return None
    config: Any = retrieval  # every retrieval configuration has its bounds
    try:
        listing = retrieval.document_listing(name, file_ids)
        if listing is None:
            return None
        with bounded_client(config.timeout_s, listing.url) as client:
            documents = stored_documents(
                client,
                listing.url,
                dict(listing.headers),
                listing.queried,
                config,
                one_by_one=True,
            )
        if documents is None:
            return None
    except (AdapterFailure, ValueError):
        return None
    items = [document_to_item(rank, document, 0.0) for rank, document in enumerate(documents, 1)]
    to_gold = listing.to_gold
    return [to_gold(item) for item in items] if to_gold is not None else items
