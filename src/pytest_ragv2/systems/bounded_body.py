"""A response body read within its bounds: decoded layer by layer (gzip, deflate), each step
of decompression bounded, the whole bounded in bytes (``max_response_mb``) and in time (the
call's deadline), so a compression bomb or a trickling server costs a bounded read.
"""

from __future__ import annotations

import json
import time
import zlib
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import httpx

from pytest_ragv2.systems.failure import AdapterFailure
from pytest_ragv2.systems.secret_policy import scrub


def _charset_of(response: httpx.Response) -> Callable[[], str | None]:
    return lambda: response.charset_encoding


def decode_content(
    content: bytes, charset: str | Callable[[], str | None] | None
) -> tuple[Any, bool]:
    """A body as JSON when it is JSON, else as text (undecodable bytes replaced) in
    ``charset`` (or what it returns: a response's is parsed from its header only here)."""
    if not content:
        return "", False
    try:
        return json.loads(content), True
    except ValueError:  # json.JSONDecodeError and UnicodeDecodeError are both ValueErrors
        if callable(charset):
            charset = charset()
        try:
            return content.decode(charset or "utf-8", errors="replace"), False
        except LookupError:  # a charset Python does not know
            return content.decode("utf-8", errors="replace"), False


DEFAULT_MAX_RESPONSE_BYTES = 32 * 1024 * 1024


class _Bounded(Exception):
    """A body over its size or time bound: the run's error, and what the exchange keeps."""

    def __init__(self, failure: AdapterFailure, note: str) -> None:
        super().__init__(note)
        self.failure = failure
        self.note = note


DECODED_CHUNK = 1024 * 1024  # the most one step of decompression may produce
ACCEPTED_CODINGS = "gzip, deflate"  # what the harness asks for: inflated here, bounded
_ZLIB_CODINGS = frozenset({"gzip", "x-gzip", "deflate"})


def content_codings(response: httpx.Response) -> list[str]:
    """The content codings of ``response`` in the order they were applied (``identity``
    left out); the last one is undone first."""
    return [
        coding
        for value in response.headers.get_list("content-encoding", split_commas=True)
        if (coding := value.strip().lower()) and coding != "identity"
    ]


def decoded_chunks(response: httpx.Response) -> Iterator[bytes]:
    """The body decompressed a bounded step at a time: httpx inflates each network read
    whole (64 KB of a gzip bomb is 64 MB; of a stacked ``gzip, deflate`` one, gigabytes),
    so gzip and deflate are inflated here, each layer of a stacked encoding in turn, with
    a cap on each step's output. Any other coding (br, zstd, compress) was not asked for
    (``Accept-Encoding: gzip, deflate``) and is refused (``httpx.DecodingError``), never
    inflated."""
    codings = content_codings(response)
    if not codings:
        yield from response.iter_raw()
        return
    refused = [coding for coding in codings if coding not in _ZLIB_CODINGS]
    if refused:
        raise httpx.DecodingError(
            f"Content-Encoding {', '.join(codings)}: {', '.join(refused)} was not asked for "
            f"(Accept-Encoding: {ACCEPTED_CODINGS}) and is not decoded: it could not be "
            "inflated within max_response_mb"
        )
    chunks: Iterator[bytes] = response.iter_raw(chunk_size=64 * 1024)
    for coding in reversed(codings):
        chunks = _inflated(chunks, coding)
    yield from chunks


def _inflated(chunks: Iterator[bytes], coding: str) -> Iterator[bytes]:
    """One zlib layer undone, at most ``DECODED_CHUNK`` bytes a step (a "deflate" body
    without its zlib header is read as raw deflate, as httpx does)."""
    inflater = zlib.decompressobj(zlib.MAX_WBITS | 32)  # a gzip or a zlib header
    started = False
    try:
        for raw in chunks:
            data = raw
            while data:
                try:
                    piece = inflater.decompress(data, DECODED_CHUNK)
                except zlib.error:
                    if started or coding != "deflate":
                        raise
                    inflater = zlib.decompressobj(-zlib.MAX_WBITS)
                    piece = inflater.decompress(data, DECODED_CHUNK)
                started = True
                data = inflater.unconsumed_tail
                if piece:
                    yield piece
        rest = inflater.flush()
        if rest:
            yield rest
    except zlib.error as exc:
        raise httpx.DecodingError(f"{coding} body could not be decoded: {exc}") from None


def _read_bounded(
    response: httpx.Response,
    call: str,
    started: float,
    max_bytes: int,
    timeout_s: float | None,
    secrets: Sequence[str],
) -> bytes:
    """The whole body, read chunk by chunk (decompressed) within the bounds; the response
    is closed whatever happens. The try's deadline is kept at the socket too
    (``call_deadline``): a read it cuts is the same ``timeout``."""
    chunks: list[bytes] = []
    size = 0
    deadline = None if timeout_s is None else started + timeout_s
    try:
        for chunk in decoded_chunks(response):
            size += len(chunk)
            if size > max_bytes:
                message = (
                    f"{call}: the response exceeded {max_bytes:,} bytes (after decompression); "
                    "max_response_mb bounds it"
                )
                raise _Bounded(
                    AdapterFailure("too_large", scrub(message, secrets)),
                    f"<body over {max_bytes:,} bytes: not kept>",
                )
            if deadline is not None and time.perf_counter() > deadline:
                raise _late(call, size, timeout_s, secrets)
            chunks.append(chunk)
    except httpx.TimeoutException:
        if timeout_s is None:
            raise
        raise _late(call, size, timeout_s, secrets) from None
    except httpx.DecodingError as exc:
        message = f"{call}: the body could not be decoded: {exc}"
        raise _Bounded(
            AdapterFailure("malformed", scrub(message, secrets)),
            f"<body not decoded after {size:,} bytes: {exc}>",
        ) from None
    finally:
        response.close()
    return b"".join(chunks)


def _late(call: str, size: int, timeout_s: float | None, secrets: Sequence[str]) -> _Bounded:
    message = f"{call}: no complete answer within {timeout_s:g} s ({size:,} bytes read)"
    return _Bounded(
        AdapterFailure("timeout", scrub(message, secrets)),
        f"<body cut at {size:,} bytes: the {timeout_s:g} s deadline passed>",
    )
