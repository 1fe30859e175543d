"""What every adapter's configuration shares: strict models and the retry policy.

Each adapter's own model sits in the adapter's module, discriminated on ``adapter``; the
unions of them are built from the adapter table (``registry``). Secrets never live in a
configuration: it names the environment variables that hold them (``jwt_secret_env``,
``api_key_env``, ``headers_env``, ``query_env``), so a config file can be committed and
printed in a report.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

RetryReason = Literal["timeout", "transport", "5xx", "429"]

# Bounds that make every configured system able to make a call and finish it: a value past
# one is a configuration error at start (exit 4), never a session that waits forever.
CALL_TIMEOUT_MAX_S = 3600.0  # one call or one command turn
CONVERSATION_TIMEOUT_MAX_S = 86_400.0
ATTEMPTS_MAX = 10
BACKOFF_MAX_S = 60.0  # the longest sleep between two tries, however many came before
RESPONSE_MB_MAX = 1024.0
K_MAX = 1000


def seconds_field(default: float | None, maximum: float, description: str = "") -> Any:
    """A positive, finite number of seconds no larger than ``maximum``."""
    return Field(default=default, gt=0.0, le=maximum, allow_inf_nan=False, description=description)


def _service_url(url: str) -> str:
    """An http(s) URL that names a host, as httpx will send to it; else why not."""
    import httpx  # the adapters' client: what it refuses, no call could be made to

    try:
        parsed = httpx.URL(url)
    except httpx.InvalidURL as exc:
        raise ValueError(f"{url!r} is not a valid URL: {exc}") from None
    if parsed.scheme not in ("http", "https"):
        raise ValueError(
            f'{url!r} is not an http or https URL (e.g. "http://host:8000"): no request '
            "could be sent to it"
        )
    if not parsed.host or any(char in parsed.host for char in " %"):
        raise ValueError(f'{url!r} names no valid host (e.g. "http://host:8000")')
    if parsed.port is not None and not 0 < parsed.port < 65536:
        raise ValueError(f"{url!r}: port {parsed.port} is outside 1-65535")
    return url


# a configured service URL: checked when the configuration is read
ServiceUrl = Annotated[str, AfterValidator(_service_url)]


def is_service_url(metadata: object) -> bool:
    """Whether a field's metadata item is :data:`ServiceUrl`'s check (for the docs)."""
    return isinstance(metadata, AfterValidator) and metadata.func is _service_url


def _every_retry_reason() -> list[RetryReason]:
    return ["timeout", "transport", "5xx", "429"]


class StrictConfig(BaseModel):
    """Unknown keys are errors; a configuration never changes once read."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class AdapterConfig(StrictConfig):
    """One system's adapter configuration; each adapter narrows ``adapter`` to its name."""

    adapter: str
    max_response_mb: float = Field(
        default=32.0,
        gt=0,
        le=RESPONSE_MB_MAX,
        allow_inf_nan=False,
        description="HTTP adapters: the largest response body taken, counted after "
        "decompression; a larger one is the run's error (too_large), never read whole",
    )

    @property
    def max_response_bytes(self) -> int:
        return int(self.max_response_mb * 1024 * 1024)


class RetrievalAdapterConfig(AdapterConfig):
    """A retrieval adapter's configuration: how many items one call asks for."""

    k: int = Field(default=10, ge=1, le=K_MAX)


class RetryPolicy(StrictConfig):
    """How often one HTTP call is tried, and after which failures it is tried again."""

    attempts: int = Field(
        default=2, ge=1, le=ATTEMPTS_MAX, description="total tries, including the first"
    )
    backoff_s: float = Field(
        default=0.25,
        ge=0.0,
        le=BACKOFF_MAX_S,
        allow_inf_nan=False,
        description=f"sleep before try n+1 is backoff_s * 2**(n-1), at most {BACKOFF_MAX_S:g} s",
    )
    retry_on: list[RetryReason] = Field(default_factory=_every_retry_reason)
    retry_after_max_s: float = Field(
        default=10.0,
        ge=0.0,
        description="a 429 or 5xx answer's Retry-After (seconds or an HTTP date) is waited "
        "for up to this long before the next try; a longer one (or one past the "
        "conversation's deadline) ends the call with that answer, named in its error",
    )

    def delay_after(self, attempt: int) -> float:
        """Seconds to wait after the failed try number ``attempt`` (1-based)."""
        return float(min(self.backoff_s * 2 ** (attempt - 1), BACKOFF_MAX_S))
