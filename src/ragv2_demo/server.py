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

Chat routes (``<v>`` is ``v1`` or ``v2``; the answer model is ``answer.py``)::

    GET  /chat/<v>/models            → {"object": "list", "data": [{"id": "demo-<v>", ...}]}
    POST /chat/<v>/chat/completions  OpenAI chat completions, ``stream`` true or false

A streamed answer is ``text/event-stream`` (chunked): ``chat.completion.chunk`` frames — the
role, the content in word-sized deltas or the tool calls (id and name, then the arguments in
two pieces), the finish reason — then, when ``stream_options.include_usage`` is true, a
usage chunk with empty ``choices``, then ``data: [DONE]``. Usage counts whitespace-separated
tokens: the prompt is every message's text plus the tool-call arguments, the completion is
the answer's text plus its tool-call arguments. Chat routes need no JWT. A body that is not
JSON or has no ``messages`` list gets 400 ``{"error": {...}}``.

LibreChat's Agents API, shaped as LibreChat v0.8.7 answers it (``server_librechat.py``)::

    GET  /librechat/<v>/api/agents/v1/models
    POST /librechat/<v>/api/agents/v1/chat/completions  {"model": "agent_demo_<v>", ...}

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

The rag_api routes are ``server_rag.py``, the chat routes ``server_chat.py``, the LibreChat
routes ``server_librechat.py``, the fault modes
``server_faults.py``, what every route shares ``server_base.py``; this module holds the
server, its request handler's dispatch, ``DemoServer`` and ``ragv2 demo serve``.

The stdlib server needs ``disable_nagle_algorithm``: without it every keep-alive response
waits ~40 ms for a delayed ACK on loopback, which would poison every latency figure.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import threading
from collections.abc import Sequence
from http.server import ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from typing import Any

from ragv2_demo.engine import DemoIndex
from ragv2_demo.server_chat import _CHAT_ROUTE, ChatRoutes
from ragv2_demo.server_faults import _parse_faults
from ragv2_demo.server_librechat import _LIBRECHAT_ROUTE, LibreChatRoutes
from ragv2_demo.server_rag import _LISTING_ROUTE, RagRoutes, _chunk_indexes, _total_pages

_FAULT_PREFIX = re.compile(r"^/fault/([^/]+)(/.*)$")


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


class _Handler(RagRoutes, ChatRoutes, LibreChatRoutes):
    def do_GET(self) -> None:
        path = self.path.split("?", 1)[0]
        self._inject_latency(path)
        chat = _CHAT_ROUTE.match(path)
        librechat = _LIBRECHAT_ROUTE.match(path)
        if chat is not None:
            self._chat(path, chat, b"")
        elif librechat is not None:
            self._librechat(path, librechat, b"")
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
        librechat = _LIBRECHAT_ROUTE.match(path)
        if librechat is not None:
            self._librechat(path, librechat, raw)
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
