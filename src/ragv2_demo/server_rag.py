"""The demo server's rag_api routes, answered as LibreChat's rag_api answers them
(``/<v>/query_multiple``, ``/<v>/query``, ``/<v>/ids``, ``/<v>/documents``), and the V2
service's own ``/v2/search``."""

from __future__ import annotations

import json
import re
import urllib.parse
import uuid
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import jwt
from pydantic import BaseModel, ConfigDict, ValidationError

from ragv2_demo.engine import text_digest
from ragv2_demo.server_base import HandlerBase
from ragv2_demo.server_faults import _Capture

if TYPE_CHECKING:
    from ragv2_demo.chunks import Chunk
    from ragv2_demo.retrieval_v1 import Retriever
    from ragv2_demo.server_faults import _Faults

NO_DOCUMENTS = "No documents found for the given query"
_ROUTE = re.compile(r"^/(v1|v2)/(query|query_multiple|search)$")
_LISTING_ROUTE = re.compile(r"^/(v1|v2)/(ids|documents)$")
_CHUNK_ID_NAMESPACE = uuid.UUID("6f1c2a52-3f0e-4d55-9d7e-2a1d3c5b7e90")


class QueryMultipleBody(BaseModel):
    """rag_api's ``QueryMultipleBody``."""

    model_config = ConfigDict(extra="ignore")
    query: str
    file_ids: list[str]
    k: int = 4


class SearchBody(BaseModel):
    """The V2 service's ``POST /v2/search`` body."""

    model_config = ConfigDict(extra="ignore")
    query: str
    k: int = 10
    file_ids: list[str] | None = None


class QueryRequestBody(BaseModel):
    """rag_api's ``QueryRequestBody``."""

    model_config = ConfigDict(extra="ignore")
    query: str
    file_id: str
    k: int = 4
    entity_id: str | None = None


# A fixed "ingestion time" keeps the demo's answers byte-identical across runs.
_INGESTED_AT_NS = 1_767_225_600_000_000_000  # 2026-01-01T00:00:00Z


def upload_source(user_id: str, filename: str) -> str:
    """Where rag_api (since 2026-03) says an upload lives: a unique name per upload under the
    user's folder, ``<stem>_<32 hex digits><suffix>`` (stable here: derived from the name)."""
    stem, dot, suffix = filename.rpartition(".")
    if not dot:
        stem, suffix = filename, ""
    unique = uuid.uuid5(_CHUNK_ID_NAMESPACE, f"{user_id}/{filename}").hex
    return f"/app/uploads/{user_id}/{stem}_{unique}{dot}{suffix}"


def _metadata(
    chunk: Chunk,
    user_id: str,
    total_pages: int | None,
    chunk_index: int,
    info: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """Exactly the metadata keys rag_api stores for the chunk's file type (recorded from a
    real instance, tests/fixtures/rag_api): a PDF page (0-based) with its label and the page
    count; for every other type nothing but the source, the ids and the digest — no file
    name, section, table or row, which rag_api's loaders do not keep."""
    metadata: dict[str, Any] = {}
    if chunk.page is not None:
        metadata["page"] = chunk.page - 1
    metadata["digest"] = text_digest(chunk.text)
    metadata["source"] = upload_source(user_id, chunk.filename)
    metadata["file_id"] = chunk.file_id
    metadata["user_id"] = user_id
    if chunk.page is not None:
        metadata["page_label"] = str(chunk.page)
        if total_pages is not None:
            metadata["total_pages"] = total_pages
    if chunk.page is not None and info:
        metadata.update(info)
    metadata["_rag_chunk_index"] = chunk_index
    metadata["_rag_ingestion_attempt_id"] = uuid.uuid5(_CHUNK_ID_NAMESPACE, chunk.file_id).hex
    metadata["_rag_ingestion_attempt_started_at_ns"] = _INGESTED_AT_NS
    # in the order Postgres' jsonb gives them back: shorter keys first, then bytewise
    return dict(sorted(metadata.items(), key=lambda pair: (len(pair[0]), pair[0])))


def _document(
    chunk: Chunk,
    user_id: str,
    total_pages: int | None,
    chunk_index: int,
    info: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """A ``/query`` or ``/query_multiple`` document, as rag_api sends it (``id`` is null)."""
    return {
        "id": None,
        "metadata": _metadata(chunk, user_id, total_pages, chunk_index, info),
        "page_content": chunk.text,
        "type": "Document",
    }


def _search_item(chunk: Chunk, score: float) -> dict[str, Any]:
    """One item of the V2 service's own ``/search`` answer: its structure-aware chunks carry
    the section, table and row rag_api's wire has no room for (1-based pages and rows)."""
    return {
        "content": chunk.text,
        "score": score,
        "doc": {
            "id": chunk.file_id,
            "filename": chunk.filename,
            "page": chunk.page,
            "heading": chunk.section,
            "table": chunk.table,
            "row": chunk.row,
            "row_key": chunk.row_key,
        },
    }


def _chunk_indexes(retriever: Retriever) -> dict[str, int]:
    """chunk_id -> its position among its file's chunks (rag_api's ``_rag_chunk_index``)."""
    counts: dict[str, int] = {}
    indexes: dict[str, int] = {}
    for chunk in retriever.chunks:
        indexes[chunk.chunk_id] = counts.get(chunk.file_id, 0)
        counts[chunk.file_id] = indexes[chunk.chunk_id] + 1
    return indexes


def _total_pages(retriever: Retriever) -> dict[str, int]:
    pages: dict[str, int] = {}
    for chunk in retriever.chunks:
        if chunk.page is not None:
            pages[chunk.file_id] = max(pages.get(chunk.file_id, 0), chunk.page)
    return pages


class RagRoutes(HandlerBase):
    def _user_id(self) -> str | None:
        """The authenticated user, "public" without auth; None after sending a 401."""
        secret = self.server.jwt_secret
        if secret is None:
            return "public"
        header = self.headers.get("Authorization", "")
        if not header.startswith("Bearer "):
            self._send_json(401, {"detail": "Missing or invalid Authorization header"})
            return None
        try:
            payload = jwt.decode(header[len("Bearer ") :], secret, algorithms=["HS256"])
        except jwt.InvalidTokenError as exc:  # rag_api's middleware words it so
            self._send_json(401, {"detail": f"Invalid token: {exc}"})
            return None
        return str(payload.get("id", "public"))

    def _rag_with_faults(self, path: str, faults: _Faults, inner: str, raw: bytes) -> None:
        if self._before_answer(path, faults):
            return
        if faults.malformed or faults.truncate:
            capture = _Capture()
            self._rag(inner, raw, capture)
            if not capture.status:
                return  # answered already (401)
            payload = capture.payload
            if faults.malformed:
                payload = payload[: max(1, len(payload) // 2)] + b"}{"
                self._send_raw(capture.status, payload, len(payload))
            else:
                self._send_raw(capture.status, payload[: len(payload) // 2], len(payload))
                self.close_connection = True
            return
        self._rag(inner, raw)

    def _rag(self, path: str, raw: bytes, capture: _Capture | None = None) -> None:
        send = self._send_json if capture is None else capture.send_json
        route = _ROUTE.match(path)
        if route is None:
            send(404, {"detail": "Not Found"})
            return
        user_id = self._user_id()
        if user_id is None:
            return
        path_name, endpoint = route.group(1), route.group(2)
        try:
            data = json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            send(422, _json_error(exc))
            return
        retriever = self.server.index.path(path_name)
        if endpoint == "search":
            self._search(retriever, data, send)
            return
        model = QueryMultipleBody if endpoint == "query_multiple" else QueryRequestBody
        try:
            request = model.model_validate(data)
        except ValidationError as exc:
            send(422, _validation_error(exc))
            return
        if isinstance(request, QueryMultipleBody):
            file_ids: list[str] = request.file_ids
        else:
            assert isinstance(request, QueryRequestBody)
            file_ids = [request.file_id]
            user_id = request.entity_id or user_id
            if self.server.owner is not None and user_id != self.server.owner:
                send(200, [])  # rag_api's /query filters by the token's user
                return
        user_id = self.server.owner or user_id
        hits = retriever.search(request.query, max(0, request.k), file_ids)
        if not hits and endpoint == "query_multiple":
            send(404, {"detail": NO_DOCUMENTS})
            return
        total_pages = self.server.total_pages[path_name]
        indexes = self.server.chunk_indexes[path_name]
        body = [
            [
                _document(
                    chunk,
                    user_id,
                    total_pages.get(chunk.file_id),
                    indexes[chunk.chunk_id],
                    self.server.index.file_info.get(chunk.file_id),
                ),
                score,
            ]
            for chunk, score in hits
        ]
        send(200, body)

    def _search(self, retriever: Retriever, data: Any, send: Callable[..., None]) -> None:
        """The V2 service's own route: ``{"query", "k", "file_ids"?}`` -> ``{"results"}``."""
        try:
            request = SearchBody.model_validate(data)
        except ValidationError as exc:
            send(422, _validation_error(exc))
            return
        hits = retriever.search(request.query, max(0, request.k), request.file_ids)
        send(200, {"results": [_search_item(chunk, score) for chunk, score in hits]})

    def _listing(self, path_name: str, route: str) -> None:
        """rag_api's ``GET /ids`` (every indexed file id) and ``GET /documents?ids=...``
        (every stored chunk of those files, in order; 404 when one id is unknown)."""
        user_id = self._user_id()
        if user_id is None:
            return
        retriever = self.server.index.path(path_name)
        if route == "ids":
            self._send_json(200, list(dict.fromkeys(chunk.file_id for chunk in retriever.chunks)))
            return
        query = urllib.parse.parse_qs(self.path.partition("?")[2])
        wanted = query.get("ids", [])
        known = {chunk.file_id for chunk in retriever.chunks}
        if not wanted or any(file_id not in known for file_id in wanted):
            self._send_json(404, {"detail": "One or more IDs not found"})
            return
        total_pages = self.server.total_pages[path_name]
        indexes = self.server.chunk_indexes[path_name]
        owner = self.server.owner or user_id
        self._send_json(
            200,
            [
                {
                    "page_content": chunk.text,
                    "metadata": _metadata(
                        chunk,
                        owner,
                        total_pages.get(chunk.file_id),
                        indexes[chunk.chunk_id],
                        self.server.index.file_info.get(chunk.file_id),
                    ),
                }
                for file_id in wanted
                for chunk in retriever.chunks
                if chunk.file_id == file_id
            ],
        )


def _validation_error(exc: ValidationError) -> dict[str, Any]:
    detail: list[dict[str, Any]] = []
    for error in exc.errors(include_url=False):
        entry: dict[str, Any] = dict(error)
        entry["loc"] = ["body", *error["loc"]]
        detail.append(entry)
    return {"detail": detail}


def _json_error(exc: ValueError) -> dict[str, Any]:
    position = exc.pos if isinstance(exc, json.JSONDecodeError) else 0
    message = exc.msg if isinstance(exc, json.JSONDecodeError) else str(exc)
    return {
        "detail": [
            {
                "type": "json_invalid",
                "loc": ["body", position],
                "msg": "JSON decode error",
                "input": {},
                "ctx": {"error": message},
            }
        ]
    }
