"""One deadline for a whole HTTP call, kept at the socket.

httpx's timeouts are per operation: a read timeout of 2 s is 2 s for each read, so a
server sending a header byte every second never times out, and a body is bounded only
by whoever reads it. Every client the harness makes (``base.bounded_client``) has its
network backend wrapped here: each connect, read, write and TLS handshake made while a
deadline is set (``CALL.at``, by ``send_with_retry`` for each try) is given at most the
time left until it, and one started after it fails at once. The operating system wakes a
blocked read when its timeout passes, so a header read, a body read and a stalled stream
all end at the deadline: no thread per request, no check between reads, a few hundred
nanoseconds per socket operation.

The deadline belongs to the calling thread (httpx's synchronous client does its I/O in
the thread that sends), in ``time.perf_counter()`` time. Installing it reaches into
httpcore's connection pool (``_pool._network_backend``, stable since httpcore 0.16); a
test holds it against a server trickling its headers, so a change there fails loudly.
"""

from __future__ import annotations

import threading
import time
from typing import Any


class _CallDeadline(threading.local):
    """The deadline of the call the thread is making (None: only httpx's own timeouts)."""

    at: float | None = None


CALL = _CallDeadline()
DEADLINE_PASSED = "the call's deadline passed"


def _left(timeout: float | None, error: str) -> float | None:
    """``timeout`` shortened to the time left until the thread's deadline."""
    at = CALL.at
    if at is None:
        return timeout
    left = at - time.perf_counter()
    if left <= 0:
        import httpcore  # loaded: a transport exists

        raise getattr(httpcore, error)(DEADLINE_PASSED)
    return left if timeout is None or left < timeout else timeout


class _Stream:
    """An httpcore network stream whose every operation keeps the thread's deadline."""

    __slots__ = ("_inner",)

    def __init__(self, inner: Any) -> None:
        self._inner = inner

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        data: bytes = self._inner.read(max_bytes, _left(timeout, "ReadTimeout"))
        return data

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._inner.write(buffer, _left(timeout, "WriteTimeout"))

    def close(self) -> None:
        self._inner.close()

    def start_tls(
        self, ssl_context: Any, server_hostname: str | None = None, timeout: float | None = None
    ) -> _Stream:
        upgraded = self._inner.start_tls(
            ssl_context, server_hostname, _left(timeout, "ConnectTimeout")
        )
        return _Stream(upgraded)

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)

    def __getattr__(self, name: str) -> Any:  # anything a later httpcore asks of a stream
        return getattr(self._inner, name)


class _Backend:
    """httpcore's network backend, making streams that keep the thread's deadline."""

    __slots__ = ("_inner",)

    def __init__(self, inner: Any) -> None:
        self._inner = inner

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Any = None,
    ) -> _Stream:
        connected = self._inner.connect_tcp(
            host, port, _left(timeout, "ConnectTimeout"), local_address, socket_options
        )
        return _Stream(connected)

    def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Any = None
    ) -> _Stream:
        connected = self._inner.connect_unix_socket(
            path, _left(timeout, "ConnectTimeout"), socket_options
        )
        return _Stream(connected)

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


def keep_call_deadlines(client: Any) -> int:
    """Wrap the network backend of every connection pool of ``client`` (its transport and
    any proxy mounts); returns how many pools now keep the deadline."""
    transports = [client._transport, *client._mounts.values()]
    kept = 0
    for transport in transports:
        pool = getattr(transport, "_pool", None)
        backend = getattr(pool, "_network_backend", None)
        if pool is None or backend is None:
            continue
        if not isinstance(backend, _Backend):
            pool._network_backend = _Backend(backend)
        kept += 1
    return kept
