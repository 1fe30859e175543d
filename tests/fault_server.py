"""A loopback HTTP server that misbehaves on request, for the fault-injection suite.

Standard library, HTTP/1.1, Nagle's algorithm disabled. Every request is recorded and
handed to a router, which answers with a ``Reply``: a whole body (any status, any bytes,
gzip-encoded or not), a body trickled a byte at a time, a body cut short, no reply at all
(``hang``), a connection reset, or server-sent events — a complete stream, one cut off
before its end, one that never ends, or one ``data:`` line that never ends. Endless
answers stop when the client goes away, when the server stops, or at a cap (so a client
that does not bound them fails its test instead of exhausting the machine).
"""

from __future__ import annotations

import gzip
import socket
import struct
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any, Literal

from tests.conftest import QuietHTTPServer

Mode = Literal[
    "body",  # the whole body at once
    "trickle",  # the body a byte every ``gap_s``
    "slow_headers",  # the status line and headers a byte every ``gap_s``, then the body
    "cut",  # half the announced body, then the connection closes
    "hang",  # no reply until the client gives up (or the server stops)
    "reset",  # the connection is reset (TCP RST) without a reply
    "events",  # ``frames`` as server-sent events, chunked; ``complete=False`` cuts the stream
    "endless_events",  # ``frames[0]`` again and again, ``gap_s`` apart
    "endless_line",  # one ``data:`` line that never ends, as fast as the client reads
]
ENDLESS_CAP_BYTES = 512 * 1024 * 1024  # where an endless answer gives up on its own
ENDLESS_CAP_S = 30.0


@dataclass(frozen=True, slots=True)
class Request:
    method: str
    path: str  # without the query string
    query: str  # the raw query string
    headers: Mapping[str, str]  # names lower-cased
    body: bytes

    def carries(self, text: str) -> bool:
        """``text`` is somewhere in the request's body or query string."""
        return text.encode() in self.body or text in self.query


@dataclass(frozen=True, slots=True)
class Reply:
    mode: Mode = "body"
    status: int = 200
    body: bytes = b""
    content_type: str = "application/json"
    headers: Mapping[str, str] = field(default_factory=dict)
    frames: Sequence[bytes] = ()
    complete: bool = True  # events: False drops the connection before the last chunk
    gap_s: float = 0.0  # trickle and endless_events: the pause between writes
    gzip: bool = False  # the body is sent gzip-encoded (Content-Encoding: gzip)
    # the body is sent as it is with this Content-Encoding (a stacked "gzip, deflate", "br")
    encoding: str | None = None


def gzip_bomb(decoded_bytes: int, prefix: bytes = b"", fill: bytes = b" ") -> bytes:
    """A small gzip member that inflates to ``prefix`` + ``fill`` repeated up to
    ``decoded_bytes``, compressed as it is built (never held whole)."""
    import io

    out = io.BytesIO()
    with gzip.GzipFile(fileobj=out, mode="wb", compresslevel=9) as writer:
        writer.write(prefix)
        block = fill * (1024 * 1024 // len(fill))
        written = len(prefix)
        while written < decoded_bytes:
            writer.write(block)
            written += len(block)
    return out.getvalue()


Router = Callable[[Request], Reply]


@dataclass
class FaultServer:
    url: str = ""
    requests: list[Request] = field(default_factory=list)
    stopping: threading.Event = field(default_factory=threading.Event)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def seen(self, predicate: Callable[[Request], bool]) -> list[Request]:
        with self.lock:
            return [request for request in self.requests if predicate(request)]


def _handler(state: FaultServer, route: Router) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True

        def _serve(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            path, _, query = self.path.partition("?")
            request = Request(
                method=self.command,
                path=path,
                query=query,
                headers={name.lower(): value for name, value in self.headers.items()},
                body=self.rfile.read(length) if length else b"",
            )
            with state.lock:
                state.requests.append(request)
            reply = route(request)
            try:
                getattr(self, f"_{reply.mode}")(reply)
            except OSError:  # the client gave up (a timeout, a size limit): what is tested
                self.close_connection = True

        do_GET = _serve
        do_POST = _serve
        do_PUT = _serve

        def _head(self, reply: Reply, length: int | None, *, send: bool = True) -> None:
            self.send_response(reply.status)
            self.send_header("Content-Type", reply.content_type)
            if length is None:
                self.send_header("Transfer-Encoding", "chunked")
            else:
                self.send_header("Content-Length", str(length))
            if reply.gzip:
                self.send_header("Content-Encoding", "gzip")
            if reply.encoding:
                self.send_header("Content-Encoding", reply.encoding)
            for name, value in reply.headers.items():
                self.send_header(name, value)
            if send:
                self.end_headers()
            else:  # left in the buffer for the caller to send
                self._headers_buffer.append(b"\r\n")

        def _body(self, reply: Reply) -> None:
            self._head(reply, len(reply.body))
            self.wfile.write(reply.body)

        def _trickle(self, reply: Reply) -> None:
            self._head(reply, len(reply.body))
            for byte in reply.body:
                if state.stopping.is_set():
                    break
                self.wfile.write(bytes([byte]))
                self.wfile.flush()
                time.sleep(reply.gap_s)
            self.close_connection = True

        def _slow_headers(self, reply: Reply) -> None:
            self._head(reply, len(reply.body), send=False)
            head = b"".join(self._headers_buffer)
            self._headers_buffer = []
            for byte in head:
                if state.stopping.is_set():
                    break
                self.wfile.write(bytes([byte]))
                self.wfile.flush()
                time.sleep(reply.gap_s)
            self.wfile.write(reply.body)
            self.close_connection = True

        def _cut(self, reply: Reply) -> None:
            self._head(reply, 2 * len(reply.body))
            self.wfile.write(reply.body)
            self.wfile.flush()
            self.close_connection = True

        def _hang(self, reply: Reply) -> None:
            state.stopping.wait(ENDLESS_CAP_S)
            self.close_connection = True

        def _reset(self, reply: Reply) -> None:
            # SO_LINGER with a zero timeout: close() sends RST instead of FIN
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.close_connection = True

        def _chunk(self, data: bytes) -> None:
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
            self.wfile.flush()

        def _events(self, reply: Reply) -> None:
            self._head(reply, None)
            for frame in reply.frames:
                self._chunk(frame)
            if reply.complete:
                self.wfile.write(b"0\r\n\r\n")
            else:
                self.close_connection = True  # cut off: no terminating chunk

        def _endless_events(self, reply: Reply) -> None:
            self._head(reply, None)
            self._endless(lambda: reply.frames[0], reply.gap_s)

        def _endless_line(self, reply: Reply) -> None:
            self._head(reply, None)
            self._chunk(b"data: ")
            block = b"x" * (64 * 1024)
            self._endless(lambda: block, 0.0)

        def _endless(self, data: Callable[[], bytes], gap_s: float) -> None:
            started = time.monotonic()
            sent = 0
            while (
                not state.stopping.is_set()
                and sent < ENDLESS_CAP_BYTES
                and time.monotonic() - started < ENDLESS_CAP_S
            ):
                piece = data()
                self._chunk(piece)
                sent += len(piece)
                if gap_s:
                    time.sleep(gap_s)
            self.close_connection = True

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return Handler


@contextmanager
def serve(route: Router) -> Iterator[FaultServer]:
    """A running fault server answering every request with ``route(request)``."""
    state = FaultServer()
    httpd = QuietHTTPServer(("127.0.0.1", 0), _handler(state, route))
    thread = threading.Thread(target=httpd.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    state.url = f"http://127.0.0.1:{httpd.server_address[1]}"
    try:
        yield state
    finally:
        state.stopping.set()
        httpd.shutdown()
        httpd.server_close()
        thread.join()
