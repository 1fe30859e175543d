"""What every retrieval adapter is, and the wire plumbing the HTTP adapters share.

An adapter never raises out of ``retrieve``: every failure becomes a ``RunError`` on the
result. Inside an adapter, a failure is raised as ``RetrievalFailure`` and turned into the
result by ``timed_retrieval``, which also measures the latency around the whole call
(retries included).
"""

from __future__ import annotations

import os
import ssl
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import httpx

from pytest_ragv2.records import ErrorKind, Exchange, RetrievalResult, RetrievedItem, RunError
from pytest_ragv2.systems.config import RetryPolicy, RetryReason

REDACTED = "<redacted>"
MIN_SCRUBBED_CHARS = 8
_BODY_EXCERPT_CHARS = 300


class Retriever(Protocol):
    """A retrieval path: one ``retrieve`` is one query; it never raises."""

    name: str

    def retrieve(self, query: str, k: int) -> RetrievalResult: ...

    def close(self) -> None: ...


class RetrievalFailure(Exception):
    """Raised inside an adapter; ``timed_retrieval`` records it as the run's error."""

    def __init__(self, kind: ErrorKind, message: str, status_code: int | None = None) -> None:
        super().__init__(message)
        self.error = RunError(kind=kind, message=message, status_code=status_code)


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
    except RetrievalFailure as failure:
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
        raise RetrievalFailure(
            "adapter", f"environment variable {variable} ({purpose}) is not set or is empty"
        )
    return value


def headers_from_env(headers_env: Mapping[str, str]) -> dict[str, str]:
    """Header name -> value, each value read from the environment variable the config names."""
    return {
        header: env_secret(variable, f"header {header}") for header, variable in headers_env.items()
    }


def scrub(value: Any, secrets: Sequence[str]) -> Any:
    """``value`` with every occurrence of any secret inside its strings replaced."""
    if not secrets:
        return value
    if isinstance(value, str):
        for secret in secrets:
            value = value.replace(secret, REDACTED)
        return value
    if isinstance(value, dict):
        return {scrub(key, secrets): scrub(item, secrets) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [scrub(item, secrets) for item in value]
    return value


def secret_values(values: Iterable[str]) -> list[str]:
    """The strings worth scrubbing: each value and, for "Bearer <token>", the token alone.

    Values shorter than ``MIN_SCRUBBED_CHARS`` are not scrubbed: replacing every "1" or "en"
    in a recorded body would destroy the record and protect nothing.
    """
    found: list[str] = []
    for value in values:
        found.append(value)
        scheme, _, token = value.partition(" ")
        if token and scheme.isalpha():
            found.append(token)
    return [value for value in found if len(value) >= MIN_SCRUBBED_CHARS]


@dataclass(frozen=True, slots=True)
class HttpReply:
    """The final answer of a (possibly retried) HTTP call."""

    method: str
    url: str
    status_code: int
    body: Any  # the decoded JSON, or the raw text when the body is not JSON
    is_json: bool

    @property
    def ok(self) -> bool:
        return 200 <= self.status_code < 300

    def failure(self) -> RetrievalFailure:
        return RetrievalFailure(
            "http_status",
            f"HTTP {self.status_code} from {self.method} {self.url}: {excerpt(self.body)}",
            status_code=self.status_code,
        )

    def json_or_fail(self) -> Any:
        """The decoded body of a 2xx answer; anything else is a recorded failure."""
        if not self.ok:
            raise self.failure()
        if not self.is_json:
            raise RetrievalFailure(
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


def decode_body(response: httpx.Response) -> tuple[Any, bool]:
    if not response.content:
        return "", False
    try:
        return response.json(), True
    except ValueError:  # json.JSONDecodeError and UnicodeDecodeError are both ValueErrors
        return response.text, False


def send_with_retry(
    client: httpx.Client,
    *,
    method: str,
    url: str,
    exchanges: list[Exchange],
    retry: RetryPolicy,
    json_body: Any = None,
    params: Mapping[str, str] | None = None,
    headers: Mapping[str, str] | None = None,
) -> HttpReply:
    """Send one request, retrying as the policy says; every try is appended to ``exchanges``.

    Every header passed here is treated as a credential: the exchange records its name with
    the value ``<redacted>``, and the header values are scrubbed from recorded bodies.
    Returns the last reply whatever its status (the caller decides what a non-2xx means);
    raises ``RetrievalFailure`` when the last try ended without a reply.
    """
    headers = dict(headers or {})
    secrets = secret_values(headers.values())
    request_record: dict[str, Any] = {"method": method, "url": url}
    if json_body is not None:
        request_record["json"] = json_body
    if params:
        request_record["params"] = dict(params)
    request_record["headers"] = dict.fromkeys(headers, REDACTED)
    request_record = scrub(request_record, secrets)

    for attempt in range(1, retry.attempts + 1):
        last_try = attempt == retry.attempts
        started = time.perf_counter()
        try:
            response = client.request(
                method, url, json=json_body, params=params or None, headers=headers
            )
        except (httpx.HTTPError, httpx.InvalidURL) as exc:
            exchanges.append(
                Exchange(request_record, None, None, time.perf_counter() - started, attempt)
            )
            failure = classify_exception(exc, f"{method} {url}", attempt, secrets)
            reason = failure.retry_reason
            if reason is None or reason not in retry.retry_on or last_try:
                raise failure.as_failure() from None
        else:
            body, is_json = decode_body(response)
            latency_s = time.perf_counter() - started
            body = scrub(body, secrets)
            exchanges.append(
                Exchange(request_record, response.status_code, body, latency_s, attempt)
            )
            reason = retry_reason(response.status_code)
            if reason is None or reason not in retry.retry_on or last_try:
                return HttpReply(method, url, response.status_code, body, is_json)
        time.sleep(retry.delay_after(attempt))
    raise AssertionError("unreachable: the last try returns or raises")


# read_frames(response, frames, deadline, call): reads a 2xx streamed body, appending every
# frame it parsed to ``frames`` (kept on the exchange), raising RetrievalFailure on a broken
# or malformed stream
FrameReader = Callable[[httpx.Response, list[Any], float, str], None]


def stream_with_retry(
    client: httpx.Client,
    *,
    url: str,
    body: Any,
    headers: Mapping[str, str],
    secrets: Sequence[str],
    exchanges: list[Exchange],
    retry: RetryPolicy,
    timeout_s: float,
    read_frames: FrameReader,
) -> None:
    """POST ``body`` and read the 2xx answer frame by frame as it arrives (SSE chat).

    Like ``send_with_retry`` (every try recorded, header values redacted and scrubbed), but
    tries are repeated only until an answer starts streaming: once frames have been read, a
    failure is the turn's error, and what arrived is kept by the reader.
    """
    call = f"POST {url}"
    request_record = scrub(
        {"method": "POST", "url": url, "json": body, "headers": dict.fromkeys(headers, REDACTED)},
        secrets,
    )
    for attempt in range(1, retry.attempts + 1):
        last_try = attempt == retry.attempts
        started = time.perf_counter()
        try:
            request = client.build_request("POST", url, json=body, headers=dict(headers))
            response = client.send(request, stream=True)
        except (httpx.HTTPError, httpx.InvalidURL) as exc:
            exchanges.append(
                Exchange(request_record, None, None, time.perf_counter() - started, attempt)
            )
            failure = classify_exception(exc, call, attempt, secrets)
            reason = failure.retry_reason
            if reason is None or reason not in retry.retry_on or last_try:
                raise failure.as_failure() from None
            time.sleep(retry.delay_after(attempt))
            continue
        try:
            if not response.is_success:
                try:
                    response.read()
                except httpx.HTTPError as exc:
                    raise classify_exception(exc, call, attempt, secrets).as_failure() from None
                answer, is_json = decode_body(response)
                answer = scrub(answer, secrets)
                latency_s = time.perf_counter() - started
                exchanges.append(
                    Exchange(request_record, response.status_code, answer, latency_s, attempt)
                )
                reason = retry_reason(response.status_code)
                if reason is None or reason not in retry.retry_on or last_try:
                    raise HttpReply("POST", url, response.status_code, answer, is_json).failure()
                time.sleep(retry.delay_after(attempt))
                continue
            frames: list[Any] = []
            try:
                read_frames(response, frames, started + timeout_s, call)
            finally:
                latency_s = time.perf_counter() - started
                exchanges.append(
                    Exchange(request_record, response.status_code, frames, latency_s, attempt)
                )
            return
        finally:
            response.close()
    raise AssertionError("unreachable: the last try returns or raises")


@dataclass(frozen=True, slots=True)
class _ExceptionClass:
    kind: ErrorKind
    message: str
    retry_reason: RetryReason | None

    def as_failure(self) -> RetrievalFailure:
        return RetrievalFailure(self.kind, self.message)


def classify_exception(
    exc: httpx.HTTPError | httpx.InvalidURL, call: str, attempt: int, secrets: Sequence[str]
) -> _ExceptionClass:
    detail = scrub(f"{call} failed on try {attempt}: {type(exc).__name__}: {exc}", secrets)
    if isinstance(exc, httpx.TimeoutException):
        return _ExceptionClass("timeout", detail, "timeout")
    if isinstance(exc, httpx.UnsupportedProtocol | httpx.InvalidURL):  # a configuration error
        return _ExceptionClass("adapter", detail, None)
    if isinstance(exc, httpx.TransportError):
        return _ExceptionClass("transport", detail, "transport")
    if isinstance(exc, httpx.DecodingError):  # e.g. a broken gzip body
        return _ExceptionClass("malformed", detail, None)
    return _ExceptionClass("adapter", detail, None)  # e.g. too many redirects


class HttpRetrieverBase:
    """One keep-alive ``httpx.Client`` per retriever, created on first use."""

    def __init__(self, timeout_s: float, url: str = "") -> None:
        self._timeout_s = timeout_s
        self._plain_http = url.lower().startswith("http://")
        self._client: httpx.Client | None = None

    @property
    def client(self) -> httpx.Client:
        if self._client is None:
            # A plain-http endpoint (a local deployment, the demo) never does TLS: an empty
            # context spares loading the certificate bundle, ~0.1-0.2 s per client.
            verify: ssl.SSLContext | bool = (
                ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT) if self._plain_http else True
            )
            self._client = httpx.Client(timeout=httpx.Timeout(self._timeout_s), verify=verify)
        return self._client

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None
