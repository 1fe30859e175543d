"""Configuration of the retrieval adapters (pydantic, unknown keys are errors).

One model per real interface, discriminated on ``adapter``. Secrets never live here: the
configuration names the environment variables that hold them (``jwt_secret_env``,
``headers_env``), so a config file can be committed and printed in a report.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

RetryReason = Literal["timeout", "transport", "5xx", "429"]


def _every_retry_reason() -> list[RetryReason]:
    return ["timeout", "transport", "5xx", "429"]


class _Config(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class RetryPolicy(_Config):
    """How often one HTTP call is tried, and after which failures it is tried again."""

    attempts: int = Field(default=2, ge=1, description="total tries, including the first")
    backoff_s: float = Field(
        default=0.25, ge=0.0, description="sleep before try n+1 is backoff_s * 2**(n-1)"
    )
    retry_on: list[RetryReason] = Field(default_factory=_every_retry_reason)

    def delay_after(self, attempt: int) -> float:
        """Seconds to wait after the failed try number ``attempt`` (1-based)."""
        return float(self.backoff_s * 2 ** (attempt - 1))


class RagApiRetrieval(_Config):
    """LibreChat rag_api: ``POST /query_multiple`` (one call) or ``POST /query`` per file."""

    adapter: Literal["rag-api"]
    url: str = Field(description='base URL, e.g. "http://host:8000"')
    endpoint: Literal["query_multiple", "query"] = "query_multiple"
    file_ids: list[str] | None = Field(
        default=None, description="None: the run's allow-list file ids are queried"
    )
    file_id_map: dict[str, str] = Field(
        default_factory=dict,
        description="the gold's file id -> the id the service stores it under (LibreChat "
        "gives every upload its own id); queried ids are mapped, returned ids mapped back",
    )
    k: int = Field(default=10, ge=1)
    entity_id: str | None = Field(default=None, description="sent on /query only")
    jwt_secret_env: str | None = Field(
        default=None, description="name of the environment variable holding the HS256 secret"
    )
    jwt_user_id: str = "ragv2-eval"
    jwt_ttl_s: int = Field(default=3600, ge=1)
    headers_env: dict[str, str] = Field(
        default_factory=dict, description="header name -> environment variable name"
    )
    timeout_s: float = Field(default=30.0, gt=0.0)
    retry: RetryPolicy = Field(default_factory=RetryPolicy)


class HttpJsonFields(_Config):
    """Dotted paths inside one returned item (integer segments index lists)."""

    text: str = "text"
    file_id: str | None = "file_id"
    filename: str | None = None
    page: str | None = None
    page_base: Literal[0, 1] = 1
    section: str | None = None
    table: str | None = None
    row: str | None = None
    row_base: Literal[0, 1] = 1
    row_key: str | None = None
    score: str | None = "score"


class HttpJsonRetrieval(_Config):
    """Any HTTP service that answers a JSON list of items (or has one at ``items_path``).

    ``body`` and ``params`` are templates: a string value exactly ``"{query}"``, ``"{k}"``
    or ``"{file_ids}"`` becomes that value with its JSON type; other strings have those
    placeholders replaced by text (file ids joined with commas). With no template the
    adapter sends ``{"query": ..., "k": ...}`` as the JSON body (POST) or query string (GET).
    """

    adapter: Literal["http-json"]
    url: str
    method: Literal["POST", "GET"] = "POST"
    body: dict[str, Any] | None = None
    params: dict[str, str] = Field(default_factory=dict)
    items_path: str = Field(default="", description='dotted path to the list; "" = the body')
    fields: HttpJsonFields = Field(default_factory=HttpJsonFields)
    higher_score_is_better: bool = Field(
        default=True, description="kept as metadata; ranks are the list order"
    )
    documents_url: str | None = Field(
        default=None,
        description='a rag_api-shaped "GET …/documents?ids=" listing every stored chunk of '
        "the queried files; with it the report shows the system's attainable ceiling",
    )
    headers_env: dict[str, str] = Field(default_factory=dict)
    timeout_s: float = Field(default=30.0, gt=0.0)
    retry: RetryPolicy = Field(default_factory=RetryPolicy)
    k: int = Field(default=10, ge=1)


class PythonRetrieval(_Config):
    """An in-process function ``func(query, k, **options)``, named ``"pkg.mod:func"``."""

    adapter: Literal["python"]
    callable: str = Field(pattern=r"^[\w.]+:[\w.]+$", description='"pkg.mod:func"')
    options: dict[str, Any] = Field(default_factory=dict)
    k: int = Field(default=10, ge=1)


RetrievalConfig = Annotated[
    RagApiRetrieval | HttpJsonRetrieval | PythonRetrieval, Field(discriminator="adapter")
]

_RETRIEVAL_CONFIG: TypeAdapter[RetrievalConfig] = TypeAdapter(RetrievalConfig)


def parse_retrieval_config(data: Mapping[str, Any]) -> RetrievalConfig:
    """Validate one system's ``retrieval`` mapping (raises pydantic.ValidationError)."""
    return _RETRIEVAL_CONFIG.validate_python(dict(data))
