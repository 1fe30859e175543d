"""What every adapter's configuration shares: strict models and the retry policy.

Each adapter's own model sits in the adapter's module, discriminated on ``adapter``; the
unions of them are built from the adapter table (``registry``). Secrets never live in a
configuration: it names the environment variables that hold them (``jwt_secret_env``,
``api_key_env``, ``headers_env``, ``query_env``), so a config file can be committed and
printed in a report.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

RetryReason = Literal["timeout", "transport", "5xx", "429"]


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
        description="HTTP adapters: the largest response body taken, counted after "
        "decompression; a larger one is the run's error (too_large), never read whole",
    )

    @property
    def max_response_bytes(self) -> int:
        return int(self.max_response_mb * 1024 * 1024)


class RetrievalAdapterConfig(AdapterConfig):
    """A retrieval adapter's configuration: how many items one call asks for."""

    k: int = Field(default=10, ge=1)


class RetryPolicy(StrictConfig):
    """How often one HTTP call is tried, and after which failures it is tried again."""

    attempts: int = Field(default=2, ge=1, description="total tries, including the first")
    backoff_s: float = Field(
        default=0.25, ge=0.0, description="sleep before try n+1 is backoff_s * 2**(n-1)"
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
        return float(self.backoff_s * 2 ** (attempt - 1))
