"""The demo retrieval service on loopback, speaking LibreChat rag_api's wire format.

Routes (``<path>`` is ``v1`` or ``v2``)::

    GET  /health                → {"status": "UP"}                           (never needs auth)
    POST /<path>/query_multiple {"query", "file_ids": [...], "k"}        → [[document, distance]]
    POST /<path>/query          {"query", "file_id", "k", "entity_id"?} → [[document, distance]]

as rag_api answers them: documents are ``{"id", "type": "Document", "page_content",
"metadata"}``, pages and table rows are 0-based, ``source`` is a server temp path, the score
is a cosine-like distance (lower is better). ``/query_multiple`` answers 404 ``{"detail": "No
documents found for the given query"}`` when nothing matches, ``/query`` answers ``[]``. A
malformed body gets 422 with a FastAPI-like ``{"detail": [...]}``. With a JWT secret every
route but /health needs ``Authorization: Bearer <HS256 JWT>`` (the payload's ``id`` is the
user), else 401.

Chat routes (``<v>`` is ``v1`` or ``v2``; the answer model is ``demo/answer.py``)::

    GET  /chat/<v>/models            → {"object": "list", "data": [{"id": "demo-<v>", ...}]}
    POST /chat/<v>/chat/completions  OpenAI chat completions, ``stream`` true or false

A streamed answer is ``text/event-stream`` (chunked): ``chat.completion.chunk`` frames — the
role, the content in word-sized deltas or the tool calls (id and name, then the arguments in
two pieces), the finish reason — then, when ``stream_options.include_usage`` is true, a
usage chunk with empty ``choices``, then ``data: [DONE]``. Usage counts whitespace-separated
tokens: the prompt is every message's text plus the tool-call arguments, the completion is
the answer's text plus its tool-call arguments. Chat routes need no JWT. A body that is not
JSON or has no ``messages`` list gets 400 ``{"error": {...}}``.

Fault modes for tests, per system through a path segment:
``/chat/<v>/fault/<spec>/chat/completions`` (also ``.../fault/<spec>/models``) and
``/fault/<spec>/<v>/query`` / ``/fault/<spec>/<v>/query_multiple`` for the rag_api routes.
``<spec>`` is a comma list of

- ``latency-<ms>``: wait that long before answering;
- ``hang-<s>``: wait that many seconds before answering (cut short when the server stops);
- ``5xx``: every request answers 503 ``{"error": ...}``;
- ``5xx-once``: every other request answers 503 — the 1st, 3rd, 5th... request on that exact
  fault path (counted per path, so a client retrying once always gets through);
- ``malformed``: a non-streamed body that is not JSON; a stream whose second frame is not
  JSON (then ``[DONE]``);
- ``truncate``: a stream closed after half of its content deltas, without ``[DONE]`` nor the
  chunked terminator; a non-streamed body cut in half (its Content-Length promises more).

``DemoServer.request_log`` lists ``(path, t_start, t_end)`` for every request to a chat path
(fault paths included), ``time.monotonic()`` seconds from the moment its body was read to
the moment its last byte was written (or the connection dropped), in completion order.

The stdlib server needs ``disable_nagle_algorithm``: without it every keep-alive response
waits ~40 ms for a delayed ACK on loopback, which would poison every latency figure.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import threading
import time
import urllib.parse
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

import jwt
from pydantic import BaseModel, ConfigDict, ValidationError

from ragv2_demo.answer import answer as demo_answer
from ragv2_demo.engine import DemoIndex, Retriever, text_digest

if TYPE_CHECKING:
    from ragv2_demo.answer import Variant
    from ragv2_demo.chunks import Chunk

NO_DOCUMENTS = "No documents found for the given query"
_ROUTE = re.compile(r"^/(v1|v2)/(query|query_multiple|search)$")
_LISTING_ROUTE = re.compile(r"^/(v1|v2)/(ids|documents)$")
_FAULT_PREFIX = re.compile(r"^/fault/([^/]+)(/.*)$")
_CHAT_ROUTE = re.compile(r"^/chat/(v1|v2)(?:/fault/([^/]+))?/(chat/completions|models)$")
_FAULT = re.compile(
    r"^(?:latency-(\d+(?:\.\d+)?)|hang-(\d+(?:\.\d+)?)|(5xx)|(5xx-once)"
    r"|(malformed)|(truncate))$"
)
_CHUNK_ID_NAMESPACE = uuid.UUID("6f1c2a52-3f0e-4d55-9d7e-2a1d3c5b7e90")
_MAX_BODY = 1 << 20


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


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(
        self,
        address: tuple[str, int],
        index: DemoIndex,
        jwt_secret: str | None,
        latency_ms: dict[str, float],
        owner: str | None = None,
    ) -> None:
        super().__init__(address, _Handler)
        self.index = index
        self.jwt_secret = jwt_secret
        self.owner = owner
        self.latency_ms = latency_ms
        self.total_pages = {name: _total_pages(index.path(name)) for name in ("v1", "v2")}
        self.chunk_indexes = {name: _chunk_indexes(index.path(name)) for name in ("v1", "v2")}
        self.lock = threading.Lock()
        self.stopping = threading.Event()
        self.request_log: list[tuple[str, float, float]] = []
        self.fault_counts: dict[str, int] = {}

    def handle_error(self, request: Any, client_address: Any) -> None:
        # a client that hangs up (a timeout, a cancelled stream) is normal traffic for a
        # service under test: only unexpected failures are printed
        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        super().handle_error(request, client_address)

    def count_request(self, path: str) -> int:
        """The 1-based number of this request on ``path``."""
        with self.lock:
            self.fault_counts[path] = self.fault_counts.get(path, 0) + 1
            return self.fault_counts[path]


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        return

    def _send_json(self, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
        payload = json.dumps(body, ensure_ascii=False, default=str).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(payload)

    def _inject_latency(self, path: str) -> None:
        matching = [p for p in self.server.latency_ms if path.startswith(p)]
        if matching:
            time.sleep(self.server.latency_ms[max(matching, key=len)] / 1000.0)

    def _read_body(self) -> bytes | None:
        length_header = self.headers.get("Content-Length")
        try:
            length = int(length_header) if length_header is not None else 0
        except ValueError:
            length = -1
        if length < 0 or length > _MAX_BODY:
            self.close_connection = True
            self._send_json(413 if length > _MAX_BODY else 400, {"detail": "Bad Content-Length"})
            return None
        return self.rfile.read(length) if length else b""

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

    def do_GET(self) -> None:
        path = self.path.split("?", 1)[0]
        self._inject_latency(path)
        chat = _CHAT_ROUTE.match(path)
        if chat is not None:
            self._chat(path, chat, b"")
        elif path == "/health":
            self._send_json(200, {"status": "UP"})
        elif (listing := _LISTING_ROUTE.match(path)) is not None:
            self._listing(listing.group(1), listing.group(2))
        else:
            self._send_json(404, {"detail": "Not Found"})

    def do_POST(self) -> None:
        path = self.path.split("?", 1)[0]
        raw = self._read_body()
        if raw is None:
            return
        self._inject_latency(path)
        chat = _CHAT_ROUTE.match(path)
        if chat is not None:
            self._chat(path, chat, raw)
            return
        faulted = _FAULT_PREFIX.match(path)
        if faulted is not None:
            faults = _parse_faults(faulted.group(1))
            if faults is None:
                self._send_json(404, {"detail": "Not Found"})
                return
            self._rag_with_faults(path, faults, faulted.group(2), raw)
            return
        self._rag(path, raw)

    # ---------------------------------------------------------------- faults and chat routes

    def _send_raw(self, status: int, payload: bytes, length: int) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(length))
        self.end_headers()
        self.wfile.write(payload)

    def _before_answer(self, path: str, faults: _Faults) -> bool:
        """Apply the waiting and 5xx faults; True when the request has been answered."""
        number = self.server.count_request(path)
        delay = faults.latency_s + faults.hang_s
        if delay > 0:
            self.server.stopping.wait(delay)
        if faults.always_5xx or (faults.every_other_5xx and number % 2 == 1):
            self._send_json(
                503,
                {"error": {"message": "injected fault: service unavailable", "type": "server"}},
            )
            return True
        return False

    def _chat(self, path: str, route: re.Match[str], raw: bytes) -> None:
        started = time.monotonic()
        try:
            self._chat_answer(path, route, raw)
        except OSError:
            self.close_connection = True  # the client went away
        finally:
            with self.server.lock:
                self.server.request_log.append((path, started, time.monotonic()))

    def _chat_answer(self, path: str, route: re.Match[str], raw: bytes) -> None:
        variant: Variant = "v1" if route.group(1) == "v1" else "v2"
        faults = _Faults()
        if route.group(2) is not None:
            parsed = _parse_faults(route.group(2))
            if parsed is None:
                self._send_json(404, _openai_error(f"unknown fault spec {route.group(2)!r}"))
                return
            faults = parsed
        if self._before_answer(path, faults):
            return
        model = f"demo-{variant}"
        if route.group(3) == "models":
            if self.command != "GET":
                self._send_json(405, _openai_error("use GET"))
                return
            self._send_json(200, {"object": "list", "data": [_model_card(model)]})
            return
        if self.command != "POST":
            self._send_json(405, _openai_error("use POST"))
            return
        try:
            request = json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            self._send_json(400, _openai_error(f"the body is not JSON: {exc}"))
            return
        messages = request.get("messages") if isinstance(request, dict) else None
        if not isinstance(messages, list) or not all(isinstance(m, dict) for m in messages):
            self._send_json(400, _openai_error("'messages' must be a list of objects"))
            return
        tools = request.get("tools") or []
        if not isinstance(tools, list):
            self._send_json(400, _openai_error("'tools' must be a list"))
            return
        message = demo_answer(messages, [t for t in tools if isinstance(t, dict)], variant)
        usage = _usage(messages, message)
        model = str(request.get("model") or model)
        completion_id = "chatcmpl-" + uuid.uuid4().hex[:24]
        if request.get("stream"):
            options = request.get("stream_options")
            include_usage = isinstance(options, dict) and bool(options.get("include_usage"))
            self._stream(completion_id, model, message, usage if include_usage else None, faults)
            return
        finish = "tool_calls" if message.get("tool_calls") else "stop"
        body = {
            "id": completion_id,
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model,
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": usage,
        }
        payload = json.dumps(body, ensure_ascii=False).encode("utf-8")
        if faults.malformed:
            payload = payload[: len(payload) // 2]
            self._send_raw(200, payload, len(payload))
        elif faults.truncate:
            self._send_raw(200, payload[: len(payload) // 2], len(payload))
            self.close_connection = True
        else:
            self._send_raw(200, payload, len(payload))

    def _stream(
        self,
        completion_id: str,
        model: str,
        message: dict[str, Any],
        usage: dict[str, int] | None,
        faults: _Faults,
    ) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        created = int(time.time())

        def frame(delta: dict[str, Any], finish: str | None = None) -> bytes:
            chunk = {
                "id": completion_id,
                "object": "chat.completion.chunk",
                "created": created,
                "model": model,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
            }
            return _sse(chunk)

        frames = [frame({"role": "assistant", "content": ""})]
        content = message.get("content") or ""
        frames += [frame({"content": piece}) for piece in _content_pieces(content)]
        for index, call in enumerate(message.get("tool_calls") or []):
            function = call["function"]
            head = {"index": index, "id": call["id"], "type": "function"}
            head["function"] = {"name": function["name"], "arguments": ""}
            frames.append(frame({"tool_calls": [head]}))
            arguments = function["arguments"]
            half = len(arguments) // 2
            for piece in (arguments[:half], arguments[half:]):
                frames.append(
                    frame({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
                )
        body_frames = len(frames)
        frames.append(frame({}, "tool_calls" if message.get("tool_calls") else "stop"))
        if usage is not None:
            frames.append(
                _sse(
                    {
                        "id": completion_id,
                        "object": "chat.completion.chunk",
                        "created": created,
                        "model": model,
                        "choices": [],
                        "usage": usage,
                    }
                )
            )
        if faults.malformed:
            frames.insert(1, b"data: {this is not json\n\n")
        if faults.truncate:
            for payload in frames[: max(1, body_frames // 2)]:
                self._write_chunk(payload)
            self.wfile.flush()
            self.close_connection = True
            return
        frames.append(b"data: [DONE]\n\n")
        for payload in frames:
            self._write_chunk(payload)
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def _write_chunk(self, payload: bytes) -> None:
        self.wfile.write(f"{len(payload):x}\r\n".encode("ascii") + payload + b"\r\n")

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


@dataclass(frozen=True, slots=True)
class _Faults:
    latency_s: float = 0.0
    hang_s: float = 0.0
    always_5xx: bool = False
    every_other_5xx: bool = False
    malformed: bool = False
    truncate: bool = False


def _parse_faults(spec: str) -> _Faults | None:
    """The faults of a comma list such as "latency-200,5xx-once"; None when unknown."""
    latency = hang = 0.0
    flags = {"5xx": False, "5xx-once": False, "malformed": False, "truncate": False}
    for item in spec.split(","):
        match = _FAULT.match(item.strip())
        if match is None:
            return None
        if match.group(1):
            latency += float(match.group(1)) / 1000.0
        elif match.group(2):
            hang += float(match.group(2))
        else:
            flags[item.strip()] = True
    return _Faults(
        latency_s=latency,
        hang_s=hang,
        always_5xx=flags["5xx"],
        every_other_5xx=flags["5xx-once"],
        malformed=flags["malformed"],
        truncate=flags["truncate"],
    )


class _Capture:
    """Collects what a rag_api route would send, so a fault can mangle it."""

    def __init__(self) -> None:
        self.status = 0
        self.payload = b""

    def send_json(self, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
        self.status = status
        self.payload = json.dumps(body, ensure_ascii=False, default=str).encode("utf-8")


def _openai_error(message: str) -> dict[str, Any]:
    return {"error": {"message": message, "type": "invalid_request_error"}}


def _model_card(model: str) -> dict[str, Any]:
    return {"id": model, "object": "model", "created": 0, "owned_by": "pytest-ragv2"}


def _sse(chunk: dict[str, Any]) -> bytes:
    return b"data: " + json.dumps(chunk, ensure_ascii=False).encode("utf-8") + b"\n\n"


_PIECE = re.compile(r"\S+\s*|\s+")


def _content_pieces(content: str) -> list[str]:
    """The answer as streamed deltas: one word (with its trailing space) per delta."""
    return _PIECE.findall(content)


def _token_count(text: str) -> int:
    return len(text.split())


def _message_text(message: dict[str, Any]) -> str:
    content = message.get("content")
    parts: list[str] = []
    if isinstance(content, str):
        parts.append(content)
    elif isinstance(content, list):
        parts += [str(p.get("text", "")) for p in content if isinstance(p, dict)]
    for call in message.get("tool_calls") or []:
        function = call.get("function") if isinstance(call, dict) else None
        if isinstance(function, dict):
            parts.append(str(function.get("arguments", "")))
    return " ".join(parts)


def _usage(messages: list[dict[str, Any]], message: dict[str, Any]) -> dict[str, int]:
    """Whitespace tokens: deterministic stand-ins for a tokenizer's counts."""
    prompt = sum(_token_count(_message_text(m)) for m in messages)
    completion = _token_count(_message_text(message))
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }


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


class DemoServer:
    """The demo rag_api on loopback, serving V1 under /v1 and V2 under /v2."""

    def __init__(
        self,
        index: DemoIndex,
        host: str = "127.0.0.1",
        port: int = 0,
        jwt_secret: str | None = None,
        latency_ms: dict[str, float] | None = None,
        owner: str | None = None,
    ) -> None:
        """``latency_ms`` maps a path prefix ("/v2", "/v1/query") to added latency in ms;
        the longest matching prefix applies. ``owner``: the user every file belongs to, as
        on a real rag_api, whose ``/query`` answers ``[]`` to anyone else (default: whoever
        asks owns every file)."""
        self._server = _Server((host, port), index, jwt_secret, dict(latency_ms or {}), owner=owner)
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def start(self) -> DemoServer:
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._server.serve_forever,
                kwargs={"poll_interval": 0.05},
                name="ragv2-demo-server",
                daemon=True,
            )
            self._thread.start()
        return self

    def serve_forever(self) -> None:
        """Serve in the calling thread until interrupted or stopped."""
        self._server.serve_forever(poll_interval=0.2)

    @property
    def request_log(self) -> list[tuple[str, float, float]]:
        """``(path, t_start, t_end)`` of every chat request so far (``time.monotonic``)."""
        with self._server.lock:
            return list(self._server.request_log)

    def stop(self) -> None:
        self._server.stopping.set()  # releases hanging requests
        if self._thread is not None:
            self._server.shutdown()
            self._thread.join(timeout=5)
            self._thread = None
        self._server.server_close()

    def __enter__(self) -> DemoServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


def main(argv: Sequence[str] | None = None) -> int:
    """``ragv2 demo serve``: index the corpus, print the URL, serve until Ctrl-C."""
    parser = argparse.ArgumentParser(
        prog="ragv2 demo serve", description="Serve the demo V1/V2 retrieval paths."
    )
    parser.add_argument("--corpus", default="corpus", help="corpus directory (default: corpus)")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8411)
    parser.add_argument(
        "--jwt-secret-env",
        metavar="NAME",
        help="name of an environment variable holding the HS256 secret (enables auth)",
    )
    args = parser.parse_args(argv)
    secret: str | None = None
    if args.jwt_secret_env:
        secret = os.environ.get(args.jwt_secret_env)
        if not secret:
            print(f"error: environment variable {args.jwt_secret_env} is not set", file=sys.stderr)
            return 2
    corpus = Path(args.corpus)
    if not corpus.is_dir():
        print(f"error: corpus directory {corpus} does not exist", file=sys.stderr)
        return 2
    server = DemoServer(DemoIndex.from_corpus(corpus), args.host, args.port, secret)
    print(
        f"{server.url}  (V1: {server.url}/v1, V2: {server.url}/v2; "
        f"chat: {server.url}/chat/v1, {server.url}/chat/v2)",
        flush=True,
    )
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
