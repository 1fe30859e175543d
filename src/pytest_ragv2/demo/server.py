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
import uuid
from collections.abc import Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

import jwt
from pydantic import BaseModel, ConfigDict, ValidationError

from pytest_ragv2.demo.engine import DemoIndex, Retriever, text_digest

if TYPE_CHECKING:
    from pytest_ragv2.demo.chunks import Chunk

NO_DOCUMENTS = "No documents found for the given query"
_ROUTE = re.compile(r"^/(v1|v2)/(query|query_multiple)$")
_CHUNK_ID_NAMESPACE = uuid.UUID("6f1c2a52-3f0e-4d55-9d7e-2a1d3c5b7e90")
_MAX_BODY = 1 << 20


class QueryMultipleBody(BaseModel):
    """rag_api's ``QueryMultipleBody``."""

    model_config = ConfigDict(extra="ignore")
    query: str
    file_ids: list[str]
    k: int = 4


class QueryRequestBody(BaseModel):
    """rag_api's ``QueryRequestBody``."""

    model_config = ConfigDict(extra="ignore")
    query: str
    file_id: str
    k: int = 4
    entity_id: str | None = None


def _document(chunk: Chunk, user_id: str, total_pages: int | None) -> dict[str, Any]:
    metadata: dict[str, Any] = {
        "file_id": chunk.file_id,
        "user_id": user_id,
        "digest": text_digest(chunk.text),
        "source": f"/app/uploads/temp/{user_id}-{chunk.filename}",
        "filename": chunk.filename,
        "chunk_id": chunk.chunk_id,
    }
    if chunk.page is not None:
        metadata["page"] = chunk.page - 1
        metadata["page_label"] = str(chunk.page)
        if total_pages is not None:
            metadata["total_pages"] = total_pages
    if chunk.section is not None:
        metadata["section"] = chunk.section
    if chunk.table is not None:
        metadata["table"] = chunk.table
    if chunk.row is not None:
        metadata["row"] = chunk.row - 1
    if chunk.row_key is not None:
        metadata["row_key"] = chunk.row_key
    return {
        "id": str(uuid.uuid5(_CHUNK_ID_NAMESPACE, chunk.chunk_id)),
        "type": "Document",
        "page_content": chunk.text,
        "metadata": metadata,
    }


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
    ) -> None:
        super().__init__(address, _Handler)
        self.index = index
        self.jwt_secret = jwt_secret
        self.latency_ms = latency_ms
        self.total_pages = {name: _total_pages(index.path(name)) for name in ("v1", "v2")}


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
        except jwt.ExpiredSignatureError:
            self._send_json(401, {"detail": "Token has expired"})
            return None
        except jwt.InvalidTokenError:
            self._send_json(401, {"detail": "Invalid token"})
            return None
        return str(payload.get("id", "public"))

    def do_GET(self) -> None:
        path = self.path.split("?", 1)[0]
        self._inject_latency(path)
        if path == "/health":
            self._send_json(200, {"status": "UP"})
        else:
            self._send_json(404, {"detail": "Not Found"})

    def do_POST(self) -> None:
        path = self.path.split("?", 1)[0]
        raw = self._read_body()
        if raw is None:
            return
        self._inject_latency(path)
        route = _ROUTE.match(path)
        if route is None:
            self._send_json(404, {"detail": "Not Found"})
            return
        user_id = self._user_id()
        if user_id is None:
            return
        path_name, endpoint = route.group(1), route.group(2)
        try:
            data = json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            self._send_json(422, _json_error(exc))
            return
        model = QueryMultipleBody if endpoint == "query_multiple" else QueryRequestBody
        try:
            request = model.model_validate(data)
        except ValidationError as exc:
            self._send_json(422, _validation_error(exc))
            return
        retriever = self.server.index.path(path_name)
        if isinstance(request, QueryMultipleBody):
            file_ids: list[str] = request.file_ids
        else:
            assert isinstance(request, QueryRequestBody)
            file_ids = [request.file_id]
            user_id = request.entity_id or user_id
        hits = retriever.search(request.query, max(0, request.k), file_ids)
        if not hits and endpoint == "query_multiple":
            self._send_json(404, {"detail": NO_DOCUMENTS})
            return
        total_pages = self.server.total_pages[path_name]
        body = [
            [_document(chunk, user_id, total_pages.get(chunk.file_id)), score]
            for chunk, score in hits
        ]
        self._send_json(200, body)


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
    ) -> None:
        """``latency_ms`` maps a path prefix ("/v2", "/v1/query") to added latency in ms;
        the longest matching prefix applies."""
        self._server = _Server((host, port), index, jwt_secret, dict(latency_ms or {}))
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

    def stop(self) -> None:
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
    print(f"{server.url}  (V1: {server.url}/v1, V2: {server.url}/v2)", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
