"""A generic HTTP JSON retrieval service, mapped to ``RetrievedItem`` by configured paths.

The request is a template (``body`` for POST, ``params`` for GET) filled with the query,
k and the run's file ids; the answer's list sits at ``items_path`` and each field of an
item at a dotted path. Ranks are the list order, whatever the scores say.
"""

from __future__ import annotations

import difflib
import re
import threading
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, Literal

from pydantic import Field, model_validator

from pytest_ragv2.systems.abilities import DocumentListing
from pytest_ragv2.systems.base import (
    HttpAdapter,
    headers_from_env,
    send_with_retry,
    timed_retrieval,
)
from pytest_ragv2.systems.config import (
    CALL_TIMEOUT_MAX_S,
    RetrievalAdapterConfig,
    RetryPolicy,
    ServiceUrl,
    StrictConfig,
    seconds_field,
)
from pytest_ragv2.systems.failure import AdapterFailure
from pytest_ragv2.systems.field_values import MISSING, as_int, describe, resolve, text_at
from pytest_ragv2.systems.outputs import Exchange, RetrievalResult, RetrievedItem
from pytest_ragv2.systems.query_env import query_env_field, query_from_env

DEFAULT_TEMPLATE: dict[str, str] = {"query": "{query}", "k": "{k}"}


class HttpJsonFields(StrictConfig):
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


class HttpJsonRetrieval(RetrievalAdapterConfig):
    """Any HTTP service that answers a JSON list of items (or has one at ``items_path``).

    ``body`` and ``params`` are templates: a string value exactly ``"{query}"``, ``"{k}"``
    or ``"{file_ids}"`` becomes that value with its JSON type; other strings have those
    placeholders replaced by text (file ids joined with commas). With no template the
    adapter sends ``{"query": ..., "k": ...}`` as the JSON body (POST) or query string (GET).
    """

    adapter: Literal["http-json"]
    url: ServiceUrl
    method: Literal["POST", "GET"] = "POST"
    body: dict[str, Any] | None = None
    params: dict[str, str] = Field(default_factory=dict)
    items_path: str = Field(default="", description='dotted path to the list; "" = the body')
    fields: HttpJsonFields = Field(default_factory=HttpJsonFields)
    higher_score_is_better: bool = Field(
        default=True, description="kept as metadata; ranks are the list order"
    )
    documents_url: ServiceUrl | None = Field(
        default=None,
        description='a rag_api-shaped "GET …/documents?ids=" listing every stored chunk of '
        "the queried files; with it the report shows the system's attainable ceiling",
    )
    query_env: dict[str, str] = query_env_field()
    headers_env: dict[str, str] = Field(
        default_factory=dict, description="header name -> environment variable name"
    )
    timeout_s: float = seconds_field(30.0, CALL_TIMEOUT_MAX_S)
    retry: RetryPolicy = Field(default_factory=RetryPolicy)

    @model_validator(mode="after")
    def _known_placeholders(self) -> HttpJsonRetrieval:
        check_placeholders({"body": self.body, "params": self.params}, RETRIEVAL_PLACEHOLDERS)
        return self

    def document_listing(self, name: str, file_ids: Sequence[str]) -> DocumentListing | None:
        if not self.documents_url:
            return None
        return DocumentListing(
            url=self.documents_url,
            headers=headers_from_env(self.headers_env),
            queried=list(file_ids),
            to_gold=None,
        )


RETRIEVAL_PLACEHOLDERS = ("query", "k", "file_ids")
_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")


def check_placeholders(templates: Mapping[str, Any], known: Sequence[str]) -> None:
    """Every ``{name}`` in the templates is one the adapter fills: a misspelt one would be
    sent to the service literally, run after run. Raises ValueError naming the field."""

    def walk(value: Any, where: str) -> Iterator[tuple[str, str]]:
        if isinstance(value, str):
            for name in _PLACEHOLDER.findall(value):
                if name not in known:
                    yield where, name
        elif isinstance(value, Mapping):
            for key, item in value.items():
                yield from walk(item, f"{where}.{key}")
        elif isinstance(value, list):
            for index, item in enumerate(value):
                yield from walk(item, f"{where}[{index}]")

    for field, template in templates.items():
        for where, name in walk(template, field):
            close = difflib.get_close_matches(name, known, n=1)
            hint = f" (did you mean {{{close[0]}}}?)" if close else ""
            filled = ", ".join(f"{{{known_name}}}" for known_name in known)
            raise ValueError(
                f"{where}: unknown placeholder {{{name}}}{hint}; the adapter fills {filled}"
            )


class FieldPathWarning(UserWarning):
    """A configured field path that finds nothing in any item of a system's first answer."""


# optional paths a service may legitimately leave out of some items, but not of all
CHECKED_PATHS = ("file_id", "filename", "page", "section", "table", "row", "row_key", "score")


def unresolved_paths(items: Sequence[Any], fields: HttpJsonFields) -> list[str]:
    """One line per explicitly configured optional path that resolves in none of ``items``:
    the path, the keys the items do have, and the closest of them."""
    return [line for _, line in unresolved_fields(items, fields)]


def unresolved_fields(items: Sequence[Any], fields: HttpJsonFields) -> list[tuple[str, str]]:
    """:func:`unresolved_paths`, each line with the field it is of."""
    top_keys = sorted({str(key) for raw in items if isinstance(raw, dict) for key in raw})
    lines: list[tuple[str, str]] = []
    for name in CHECKED_PATHS:
        path = getattr(fields, name)
        if path is None or name not in fields.model_fields_set:
            continue
        if any(resolve(raw, path) is not MISSING for raw in items):
            continue  # the path is there (a null or empty value is the item's, not a typo)
        parent, _, leaf = path.rpartition(".")
        keys, where = top_keys, "their keys"
        if parent:
            found = [resolve(raw, parent) for raw in items]
            inner = sorted(
                {str(key) for value in found if isinstance(value, dict) for key in value}
            )
            if inner:
                keys, where = inner, f"keys under {parent!r}"
        named = [key for key in keys if name in key.lower()]  # "page" in "page_number"
        # nested, the parent found: only a near miss says typo ("table" is not "title")
        cutoff = 0.8 if parent and keys is not top_keys else 0.6
        close = named or difflib.get_close_matches(leaf, keys, n=1, cutoff=cutoff)
        if parent and keys is not top_keys and not close:
            continue  # the parent is there and nothing like the field: absent from these items
        full = [f"{parent}.{key}" if keys is not top_keys else key for key in close]
        hint = f"; did you mean {full[0]!r}?" if full else ""
        lines.append(
            (
                name,
                f"fields.{name} {path!r} finds nothing in any item of the first answer "
                f"({where}: {', '.join(keys) or 'none'}){hint}",
            )
        )
    return lines


class FieldPathCheck:
    """Checks the configured paths once, on the first answer with items, and warns (a
    pytest warning: xdist forwards it and the summary shows one message once)."""

    def __init__(self, system: str, fields: HttpJsonFields) -> None:
        self._system = system
        self._fields = fields
        self._done = threading.Event()
        self._lock = threading.Lock()
        # field name -> "file:line" of its path in the configuration (the session sets it):
        # the warning points there, not at this module
        self.where: Callable[[str], str] | None = None

    def check(self, items: Sequence[Any]) -> None:
        if self._done.is_set() or not items:
            return
        with self._lock:
            if self._done.is_set():
                return
            self._done.set()
        for name, line in unresolved_fields(items, self._fields):
            warning = FieldPathWarning(f"system {self._system}: {line}")
            file, _, number = (self.where(name) if self.where else "").rpartition(":")
            if file and number.isdigit():
                warnings.warn_explicit(warning, FieldPathWarning, file, int(number))
            else:
                warnings.warn(warning, stacklevel=2)


class HttpJsonRetriever(HttpAdapter):
    def __init__(self, name: str, config: HttpJsonRetrieval, *, file_ids: Sequence[str]) -> None:
        super().__init__(config.timeout_s, config.url)
        self.name = name
        self.config = config
        self.file_ids = list(file_ids)
        self.higher_score_is_better = config.higher_score_is_better
        self.paths = FieldPathCheck(name, config.fields)

    def retrieve(self, query: str, k: int) -> RetrievalResult:
        return timed_retrieval(lambda exchanges: self._retrieve(query, k, exchanges))

    def _retrieve(self, query: str, k: int, exchanges: list[Exchange]) -> list[RetrievedItem]:
        headers = headers_from_env(self.config.headers_env)
        secret_query = query_from_env(self.config.query_env)
        values: dict[str, Any] = {"query": query, "k": k, "file_ids": self.file_ids}
        if self.config.method == "POST":
            body = fill_template(self.config.body or DEFAULT_TEMPLATE, values)
            params = None
        else:
            body = None
            template = self.config.params or DEFAULT_TEMPLATE
            params = {
                name: as_text(fill_template(value, values)) for name, value in template.items()
            }
        reply = send_with_retry(
            self.client,
            method=self.config.method,
            url=self.config.url,
            json_body=body,
            params=params,
            headers=headers,
            exchanges=exchanges,
            retry=self.config.retry,
            max_bytes=self.config.max_response_bytes,
            secret_query=secret_query,
        )
        answer = reply.json_or_fail()
        found = resolve(answer, self.config.items_path)
        if not isinstance(found, list):
            path = self.config.items_path
            where = f" at items_path {path!r}" if path else ""
            raise AdapterFailure(
                "malformed", f"answer of {reply.url} has no list{where} (found {describe(found)})"
            )
        items = [
            map_item(rank, raw, self.config.fields) for rank, raw in enumerate(found[:k], start=1)
        ]
        self.paths.check(found[:k])
        return items


def fill_template(template: Any, values: Mapping[str, Any]) -> Any:
    """``template`` with its placeholders filled (see ``HttpJsonRetrieval``)."""
    if isinstance(template, str):
        for name, value in values.items():
            if template == f"{{{name}}}":
                return value
        for name, value in values.items():
            template = template.replace(f"{{{name}}}", as_text(value))
        return template
    if isinstance(template, dict):
        return {key: fill_template(value, values) for key, value in template.items()}
    if isinstance(template, list):
        return [fill_template(value, values) for value in template]
    return template


def as_text(value: Any) -> str:
    if isinstance(value, list | tuple):
        return ",".join(str(part) for part in value)
    return str(value)


def map_item(rank: int, raw: Any, fields: HttpJsonFields) -> RetrievedItem:
    text = resolve(raw, fields.text)
    if not isinstance(text, str):
        raise AdapterFailure(
            "malformed", f"item {rank}: no text at {fields.text!r} (found {describe(text)})"
        )
    metadata: dict[str, Any] = {}
    if isinstance(raw, dict):
        # The text is the item's payload; keeping it twice would double every raw record.
        metadata = {key: value for key, value in raw.items() if key != fields.text}
    file_id, filename = text_at(raw, fields.file_id), text_at(raw, fields.filename)
    if file_id is None and filename is None:
        # a configuration mistake (both paths wrong), not a file outside the allow-list:
        # the run is the adapter's error, never a leak
        keys = ", ".join(sorted(raw)) if isinstance(raw, dict) else describe(raw)
        raise AdapterFailure(
            "adapter",
            f"item {rank}: no file identity: fields.file_id {fields.file_id!r} and "
            f"fields.filename {fields.filename!r} find nothing in it (its keys: {keys})",
        )
    return RetrievedItem(
        rank=rank,
        text=text,
        file_id=file_id,
        filename=filename,
        page=_one_based_at(raw, fields.page, fields.page_base),
        section=text_at(raw, fields.section),
        table=text_at(raw, fields.table),
        row=_one_based_at(raw, fields.row, fields.row_base),
        row_key=text_at(raw, fields.row_key),
        score=_number_at(raw, fields.score),
        metadata=metadata,
    )


def _one_based_at(raw: Any, path: str | None, base: int) -> int | None:
    if path is None:
        return None
    number = as_int(resolve(raw, path))
    return None if number is None else number + 1 - base


def _number_at(raw: Any, path: str | None) -> float | None:
    if path is None:
        return None
    value = resolve(raw, path)
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)
