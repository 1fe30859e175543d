"""A scripted HTTP server on 127.0.0.1 for the adapter tests.

Standard library, HTTP/1.1 keep-alive, Nagle's algorithm disabled (otherwise every keep-alive
request stalls ~44 ms on delayed ACK). It records every request it receives (GET or POST) and
answers from a script: a JSON body, raw bytes, or server-sent events written and flushed frame
by frame, chunked or close-delimited, complete or cut off, optionally after a delay.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qs, urlsplit

from tests.conftest import QuietHTTPServer


@dataclass
class Reply:
    status: int = 200
    body: Any = None  # answered as JSON
    raw: bytes | None = None  # answered verbatim instead of ``body``
    frames: list[bytes] | None = None  # server-sent events, each written and flushed alone
    chunked: bool = True  # frames only; False: close-delimited body
    complete: bool = True  # frames only; False: the connection drops before the body's end
    delay_s: float = 0.0  # before the answer (or, for frames, before the last frame)
    frame_gap_s: float = 0.0  # between frames
    headers: dict[str, str] = field(default_factory=dict)  # more response headers (raw bodies)
    trickle_s: float = 0.0  # raw bodies: one byte at a time, this long apart


@dataclass
class Seen:
    method: str
    path: str  # without the query string
    query: dict[str, list[str]]
    headers: dict[str, str]  # names lower-cased
    json: Any  # the decoded body, None without one
    client_port: int  # one port for many requests: the connection was kept alive


Responder = Callable[[Seen], Reply]
NOT_FOUND = Reply(404, {"detail": "Not Found"})


@dataclass
class Server:
    """What the server answers and what it has seen. A route for the request's path wins,
    then ``responder``, then ``replies``; with none of them the answer is 404."""

    url: str = ""
    seen: list[Seen] = field(default_factory=list)
    replies: list[Reply] = field(default_factory=list)
    responder: Responder | None = None
    routes: dict[str, list[Reply] | Responder] = field(default_factory=dict)

    def answer(self, *replies: Reply) -> None:
        """Answer every path with these, in order; the last one repeats."""
        self.replies = list(replies)

    def answer_path(self, path: str, *replies: Reply) -> None:
        """Answer ``path`` with these, in order; the last one repeats."""
        self.routes[path] = list(replies)

    def respond_path(self, path: str, responder: Responder) -> None:
        self.routes[path] = responder

    def next_for(self, seen: Seen) -> Reply:
        script = self.routes.get(seen.path)
        if script is None:
            script = self.responder if self.responder is not None else self.replies
        if callable(script):
            return script(seen)
        if not script:
            return NOT_FOUND
        return script.pop(0) if len(script) > 1 else script[0]


def _handler(state: Server) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True

        def _serve(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            payload = self.rfile.read(length) if length else b""
            parts = urlsplit(self.path)
            seen = Seen(
                method=self.command,
                path=parts.path,
                query=parse_qs(parts.query),
                headers={name.lower(): value for name, value in self.headers.items()},
                json=json.loads(payload.decode("utf-8")) if payload else None,
                client_port=self.client_address[1],
            )
            state.seen.append(seen)
            reply = state.next_for(seen)
            try:
                if reply.frames is None:
                    self._send_body(reply)
                else:
                    self._send_events(reply, reply.frames)
            except (BrokenPipeError, ConnectionResetError):  # the client timed out and left
                self.close_connection = True

        do_GET = _serve
        do_POST = _serve

        def _send_body(self, reply: Reply) -> None:
            if reply.delay_s:
                time.sleep(reply.delay_s)
            data = (
                reply.raw
                if reply.raw is not None
                else json.dumps(reply.body, ensure_ascii=False).encode("utf-8")
            )
            self.send_response(reply.status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for name, value in reply.headers.items():
                self.send_header(name, value)
            self.end_headers()
            if not reply.trickle_s:
                self.wfile.write(data)
                return
            for byte in data:
                try:
                    self.wfile.write(bytes([byte]))
                    self.wfile.flush()
                except OSError:  # the client gave up: what a trickle is there to test
                    self.close_connection = True
                    return
                time.sleep(reply.trickle_s)

        def _send_events(self, reply: Reply, frames: list[bytes]) -> None:
            self.send_response(reply.status)
            self.send_header("Content-Type", "text/event-stream")
            if reply.chunked:
                self.send_header("Transfer-Encoding", "chunked")
            else:
                self.send_header("Connection", "close")
                self.close_connection = True
            self.end_headers()
            for number, frame in enumerate(frames, start=1):
                if reply.delay_s and number == len(frames):
                    time.sleep(reply.delay_s)
                elif reply.frame_gap_s and number > 1:
                    time.sleep(reply.frame_gap_s)
                if reply.chunked:
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(frame), frame))
                else:
                    self.wfile.write(frame)
                self.wfile.flush()
            if not reply.complete:
                self.close_connection = True  # cut off: no terminating chunk
            elif reply.chunked:
                self.wfile.write(b"0\r\n\r\n")

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return Handler


@contextmanager
def serve(base_path: str = "") -> Iterator[Server]:
    """A running server whose ``url`` is its root followed by ``base_path``."""
    state = Server()
    httpd = QuietHTTPServer(("127.0.0.1", 0), _handler(state))
    thread = threading.Thread(target=httpd.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    state.url = f"http://127.0.0.1:{httpd.server_address[1]}{base_path}"
    try:
        yield state
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join()
