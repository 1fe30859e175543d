"""What every route of the demo server shares: JSON answers, body reading, added latency and
the waiting and 5xx faults applied before an answer."""

from __future__ import annotations

import json
import time
from http.server import BaseHTTPRequestHandler
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ragv2_demo.server import _Server
    from ragv2_demo.server_faults import _Faults

_MAX_BODY = 1 << 20


class HandlerBase(BaseHTTPRequestHandler):
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
