"""What every retrieval adapter is, and the wire plumbing the adapters share.

An adapter never raises out of ``retrieve`` or ``converse``: every failure becomes a
``RunError`` on the result. Inside an adapter, a failure is raised as ``AdapterFailure``
and recorded by the adapter (``timed_retrieval`` for retrieval, which also measures the
latency around the whole call, retries included). ``send_with_retry`` is the one retry
loop of every HTTP call, plain or streamed.
"""

from __future__ import annotations

import math
import os
import ssl
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any, Protocol

import httpx

from pytest_ragv2.systems.bounded_body import (
    ACCEPTED_CODINGS,
    DEFAULT_MAX_RESPONSE_BYTES,
    _Bounded,
    _charset_of,
    _read_bounded,
    decode_content,
)
from pytest_ragv2.systems.call_deadline import CALL, keep_call_deadlines
from pytest_ragv2.systems.chat_limits import Deadline
from pytest_ragv2.systems.config import RetryPolicy, RetryReason
from pytest_ragv2.systems.failure import AdapterFailure
from pytest_ragv2.systems.outputs import (
    ErrorKind,
    Exchange,
    RetrievalResult,
    RetrievedItem,
    RunError,
)
from pytest_ragv2.systems.secret_policy import (
    REDACTED,
    redact_url,
    scrub,
    secret_values,
    url_secrets,
)

_BODY_EXCERPT_CHARS = 300


class Retriever(Protocol):
    """A retrieval path: one ``retrieve`` is one query; it never raises."""

    name: str

    def retrieve(self, query: str, k: int) -> RetrievalResult: ...

    def close(self) -> None: ...


def timed_retrieval(
    call: Callable[[list[Exchange]], list[RetrievedItem]],
) -> RetrievalResult:
    """Run ``call`` (which appends its exchanges to the list it is given), never raising."""
    exchanges: list[Exchange] = []
    error: RunError | None = None
    items: list[RetrievedItem] = []
    started = time.perf_counter()
    try:
        items = call(exchanges)
    except AdapterFailure as failure:
        error = failure.error
    except Exception as exc:  # an adapter bug must cost one run, not the session
        error = RunError(kind="internal", message=f"{type(exc).__name__}: {exc}")
    latency_s = time.perf_counter() - started
    return RetrievalResult(
        items=items if error is None else [],
        latency_s=latency_s,
        error=error,
        exchanges=exchanges,
    )


def env_secret(variable: str, purpose: str) -> str:
    """The value of an environment variable holding a secret; its absence is an adapter error."""
    value = os.environ.get(variable)
    if not value:
        raise AdapterFailure(
            "adapter", f"environment variable {variable} ({purpose}) is not set or is empty"
        )
    return value


def headers_from_env(headers_env: Mapping[str, str]) -> dict[str, str]:
    """Header name -> value, each value read from the environment variable the config names."""
    return {
        header: env_secret(variable, f"header {header}") for header, variable in headers_env.items()
    }


@dataclass(frozen=True, slots=True)
class HttpReply:
    """The final answer of a (possibly retried) HTTP call."""

    method: str
    url: str
    status_code: int
    body: Any  # the decoded JSON, or the raw text when the body is not JSON
    is_json: bool
    note: str = ""  # why a retryable answer was not tried again (its Retry-After)

    @property
    def ok(self) -> bool:
        return 200 <= self.status_code < 300

    def failure(self) -> AdapterFailure:
        why = f" ({self.note})" if self.note else ""
        return AdapterFailure(
            "http_status",
            f"HTTP {self.status_code} from {self.method} {self.url}{why}: {excerpt(self.body)}",
            status_code=self.status_code,
        )

    def json_or_fail(self) -> Any:
        """The decoded body of a 2xx answer; anything else is a recorded failure."""
        if not self.ok:
            raise self.failure()
        if not self.is_json:
            raise AdapterFailure(
                "malformed",
                f"response of {self.method} {self.url} is not JSON: {excerpt(self.body)}",
                status_code=self.status_code,
            )
        return self.body


def excerpt(body: Any) -> str:
    text = body if isinstance(body, str) else repr(body)
    if len(text) > _BODY_EXCERPT_CHARS:
        return text[:_BODY_EXCERPT_CHARS] + "…"
    return text


def retry_reason(status_code: int) -> RetryReason | None:
    if status_code == 429:
        return "429"
    if status_code >= 500:
        return "5xx"
    return None


def retry_after_s(value: str | None) -> float | None:
    """The wait a ``Retry-After`` header asks for, in seconds (delta-seconds or an HTTP
    date, a past date being 0); None when absent or unreadable."""
    if not value:
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError):
            return None
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        return max(0.0, (when - datetime.now(UTC)).total_seconds())
    return seconds if math.isfinite(seconds) and seconds >= 0 else None


def _retry_after_refusal(
    asked_s: float, header: str, retry: RetryPolicy, deadline: Deadline | None
) -> str:
    """Why the wait a ``Retry-After`` asks for is not honoured ("" when it is)."""
    asked = f"the server asked to wait {asked_s:g} s before trying again (Retry-After: {header})"
    cap = retry.retry_after_max_s
    if asked_s > cap:
        return f"{asked}, longer than retry.retry_after_max_s = {cap:g}: not tried again"
    if deadline is not None and asked_s >= deadline.remaining():
        return (
            f"{asked}, past the conversation's deadline "
            f"(conversation_timeout_s = {deadline.seconds:g}): not tried again"
        )
    return ""


# read_frames(response, frames, deadline, call): reads a 2xx streamed body, appending every
# frame it parsed to ``frames`` (kept on the exchange), raising AdapterFailure on a broken
# or malformed stream
FrameReader = Callable[[httpx.Response, list[Any], float, str], None]


@dataclass(frozen=True, slots=True)
class Streamed:
    """How to read a 2xx answer frame by frame as it arrives (SSE chat), within ``timeout_s``
    of the try's start (or less, when a conversation's deadline is sooner)."""

    read_frames: FrameReader
    timeout_s: float


def send_with_retry(
    client: httpx.Client,
    *,
    method: str,
    url: str,
    exchanges: list[Exchange],
    retry: RetryPolicy,
    json_body: Any = None,
    params: Mapping[str, str | Sequence[str]] | None = None,
    headers: Mapping[str, str] | None = None,
    stream: Streamed | None = None,
    max_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
    secret_query: Mapping[str, str] | None = None,
    deadline: Deadline | None = None,
) -> HttpReply:
    """Send one request, retrying as the policy says; every try is appended to ``exchanges``.

    A try is bounded as a whole by the client's timeout counted from its start: connecting,
    sending, the response headers and the body (a server trickling its headers or its body
    a byte a second is a ``timeout`` at that deadline, not a slow success; the deadline is
    kept at the socket, ``call_deadline``). A body is read as it arrives and never past
    ``max_bytes`` (counted after decompression, each layer of a stacked gzip/deflate
    encoding in turn: a gzip bomb stops at the limit; another coding is refused).

    A retried 429 or 5xx answer's ``Retry-After`` (seconds or an HTTP date) is waited for
    (instead of the backoff, when longer) up to ``retry.retry_after_max_s`` and within the
    conversation's ``deadline``; a longer wait is not made: that answer is returned with a
    ``note`` saying so, which its failure's message carries.

    ``secret_query`` parameters (``query_env``) are added to the query string, recorded by
    name with the value ``<redacted>`` and scrubbed as headers are.

    Every header passed here is treated as a credential: the exchange records its name with
    the value ``<redacted>``, and the header values are scrubbed from recorded bodies.
    Returns the last reply whatever its status (the caller decides what a non-2xx means);
    raises ``AdapterFailure`` when the last try ended without a reply.

    With ``stream``, a 2xx answer is read by ``stream.read_frames`` as it arrives and the
    reply's body is the list of frames read. Tries are repeated only until an answer starts
    streaming: once frames have been read, a failure is raised as the turn's error, and
    what arrived is kept by the reader and on the exchange.

    ``deadline`` (a conversation's) bounds every try and the backoff between them: a try is
    given at most the time left, no try starts once it has passed, and a try it cut short
    is a ``timeout`` saying so, never retried.
    """
    headers = dict(headers or {})
    query = dict(secret_query or {})
    secrets = secret_values([*headers.values(), *query.values(), *url_secrets(url)])
    call = f"{method} {scrub(url, secrets)}"
    request_record: dict[str, Any] = {"method": method, "url": url}
    if json_body is not None:
        request_record["json"] = json_body
    if params:
        request_record["params"] = dict(params)
    request_record["headers"] = dict.fromkeys(headers, REDACTED)
    if query:
        request_record["query"] = dict.fromkeys(query, REDACTED)
    request_record = scrub(request_record, secrets)

    for attempt in range(1, retry.attempts + 1):
        last_try = attempt == retry.attempts
        started = time.perf_counter()
        timeout_s = _try_timeout(client.timeout.read, deadline, call, secrets)
        limit_s = timeout_s
        if stream is not None:
            limit_s = stream.timeout_s if timeout_s is None else min(timeout_s, stream.timeout_s)
        response: httpx.Response | None = None
        wait_s = 0.0
        outer = CALL.at  # (a call made inside another keeps the sooner deadline)
        if limit_s is not None:
            CALL.at = started + limit_s if outer is None else min(outer, started + limit_s)
        try:
            try:
                request = client.build_request(
                    method,
                    _sent_url(url, params, query),
                    json=json_body,
                    headers=headers,
                    timeout=httpx.Timeout(timeout_s),
                )
                response = client.send(request, stream=True)
                content = b""
                if stream is None or not response.is_success:
                    content = _read_bounded(response, call, started, max_bytes, timeout_s, secrets)
            except _Bounded as bounded:
                assert response is not None
                exchanges.append(
                    Exchange(
                        request_record,
                        response.status_code,
                        bounded.note,
                        time.perf_counter() - started,
                        attempt,
                    )
                )
                raise _by_deadline(bounded.failure, deadline, call, secrets) from None
            except (httpx.HTTPError, httpx.InvalidURL) as exc:
                if response is not None:
                    response.close()
                exchanges.append(
                    Exchange(request_record, None, None, time.perf_counter() - started, attempt)
                )
                failure = classify_exception(exc, call, attempt, secrets, timeout_s)
                reason = failure.retry_reason
                if reason is None or reason not in retry.retry_on or last_try:
                    raise _by_deadline(failure.as_failure(), deadline, call, secrets) from None
            else:
                if stream is not None and response.is_success:
                    try:
                        frames = _read_frames(
                            response,
                            stream,
                            call,
                            request_record,
                            exchanges,
                            attempt,
                            started,
                            timeout_s,
                        )
                    except AdapterFailure as failure:
                        raise _by_deadline(failure, deadline, call, secrets) from None
                    return HttpReply(
                        method, redact_url(url), response.status_code, frames, is_json=False
                    )
                body, is_json = decode_content(content, _charset_of(response))
                body = scrub(body, secrets)
                latency_s = time.perf_counter() - started
                exchanges.append(
                    Exchange(request_record, response.status_code, body, latency_s, attempt)
                )
                reason = retry_reason(response.status_code)
                if reason is None or reason not in retry.retry_on or last_try:
                    return HttpReply(method, redact_url(url), response.status_code, body, is_json)
                header = response.headers.get("retry-after")
                asked_s = retry_after_s(header)
                if asked_s is not None:
                    refusal = _retry_after_refusal(asked_s, str(header), retry, deadline)
                    if refusal:
                        return HttpReply(
                            method,
                            redact_url(url),
                            response.status_code,
                            body,
                            is_json,
                            note=scrub(refusal, secrets),
                        )
                    wait_s = asked_s
        finally:
            CALL.at = outer
        delay_s = max(retry.delay_after(attempt), wait_s)
        if deadline is not None and deadline.remaining() <= delay_s:
            message = deadline.message(f"{call}: no time left to try again after try {attempt}")
            raise AdapterFailure("timeout", scrub(message, secrets))
        time.sleep(delay_s)
    raise AssertionError("unreachable: the last try returns or raises")


_CLOCK_SLACK_S = 0.05  # a try cut at the deadline may end a hair before the clock says so


def _try_timeout(
    timeout_s: float | None, deadline: Deadline | None, call: str, secrets: Sequence[str]
) -> float | None:
    """The time one try may take: the call's own timeout, or the time the conversation
    has left when that is shorter; none left is the turn's timeout."""
    if deadline is None:
        return timeout_s
    left = deadline.remaining()
    if left <= 0:
        raise AdapterFailure("timeout", scrub(deadline.message(call), secrets))
    return left if timeout_s is None else min(timeout_s, left)


def _by_deadline(
    failure: AdapterFailure, deadline: Deadline | None, call: str, secrets: Sequence[str]
) -> AdapterFailure:
    """A try's timeout that the conversation's deadline caused is reported as such."""
    if (
        failure.error.kind == "timeout"
        and deadline is not None
        and deadline.remaining() <= _CLOCK_SLACK_S
    ):
        return AdapterFailure("timeout", scrub(deadline.message(call), secrets))
    return failure


def _sent_url(
    url: str, params: Mapping[str, str | Sequence[str]] | None, query: Mapping[str, str]
) -> httpx.URL | str:
    """The URL a request goes to: its own query string kept (httpx would replace it with
    ``params``), the params and the secret query parameters added."""
    added = {**(params or {}), **query}
    return httpx.URL(url).copy_merge_params(added) if added else url


def _read_frames(
    response: httpx.Response,
    stream: Streamed,
    call: str,
    request_record: dict[str, Any],
    exchanges: list[Exchange],
    attempt: int,
    started: float,
    try_timeout_s: float | None,
) -> list[Any]:
    """The frames of a 2xx streamed answer; what was read is recorded whatever happens."""
    frames: list[Any] = []
    timeout_s = stream.timeout_s
    if try_timeout_s is not None:
        timeout_s = min(stream.timeout_s, try_timeout_s)
    try:
        stream.read_frames(response, frames, started + timeout_s, call)
    finally:
        response.close()
        latency_s = time.perf_counter() - started
        exchanges.append(Exchange(request_record, response.status_code, frames, latency_s, attempt))
    return frames


@dataclass(frozen=True, slots=True)
class _ExceptionClass:
    kind: ErrorKind
    message: str
    retry_reason: RetryReason | None

    def as_failure(self) -> AdapterFailure:
        return AdapterFailure(self.kind, self.message)


def classify_exception(
    exc: httpx.HTTPError | httpx.InvalidURL,
    call: str,
    attempt: int,
    secrets: Sequence[str],
    timeout_s: float | None = None,
) -> _ExceptionClass:
    detail = scrub(f"{call} failed on try {attempt}: {type(exc).__name__}: {exc}", secrets)
    if isinstance(exc, httpx.TimeoutException):
        if timeout_s is not None:  # the try's deadline, kept at the socket (call_deadline)
            detail = scrub(
                f"{call}: no answer within {timeout_s:g} s on try {attempt} (the timeout "
                f"bounds the whole try: connecting, the headers and the body; "
                f"{type(exc).__name__}: {exc})",
                secrets,
            )
        return _ExceptionClass("timeout", detail, "timeout")
    if isinstance(exc, httpx.UnsupportedProtocol | httpx.InvalidURL):  # a configuration error
        return _ExceptionClass("adapter", detail, None)
    if isinstance(exc, httpx.TransportError):
        return _ExceptionClass("transport", detail, "transport")
    if isinstance(exc, httpx.DecodingError):  # e.g. a broken gzip body
        return _ExceptionClass("malformed", detail, None)
    return _ExceptionClass("adapter", detail, None)  # e.g. too many redirects


def tls_verify(url: str) -> ssl.SSLContext | bool:
    """``verify`` for an ``httpx.Client`` talking to ``url``: a plain-http endpoint (a local
    deployment, the demo) never does TLS, and an empty context spares loading the
    certificate bundle (20-50 ms a client); any other URL is verified as httpx does."""
    return ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT) if url.lower().startswith("http://") else True


# a side route (the preflight's probes, the ceiling's listing) is asked once: a run's
# retries are for answers that are scored, and a service that fails a probe is a warning
SIDE_ROUTE_RETRY = RetryPolicy(attempts=1)


def bounded_client(timeout_s: float, url: str) -> httpx.Client:
    """An ``httpx.Client`` for the calls of ``send_with_retry``: each try's deadline kept
    at the socket (``call_deadline``), and only the content codings it inflates a bounded
    step at a time asked for (httpx would also ask for zstd or br when installed)."""
    client = httpx.Client(
        timeout=httpx.Timeout(timeout_s),
        verify=tls_verify(url),
        headers={"Accept-Encoding": ACCEPTED_CODINGS},
    )
    keep_call_deadlines(client)
    return client


class HttpAdapter:
    """An adapter over HTTP: one keep-alive ``httpx.Client`` per adapter, made on first use."""

    def __init__(self, timeout_s: float, url: str = "") -> None:
        self._timeout_s = timeout_s
        self._url = url
        self._client: httpx.Client | None = None

    @property
    def client(self) -> httpx.Client:
        if self._client is None:
            self._client = bounded_client(self._timeout_s, self._url)
        return self._client

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None
