"""LibreChat rag_api: ``POST /query_multiple`` or ``POST /query`` per file, read as ranked items.

rag_api answers a JSON list of ``[document, score]`` pairs where ``score`` is a cosine
DISTANCE (lower is better), ``metadata.page`` is 0-based (PDF) and ``metadata.row`` is
0-based (CSV). This module converts them to the project's 1-based ``RetrievedItem``.
"""

from __future__ import annotations

import dataclasses
import hashlib
import time
import warnings
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import Field

from pytest_ragv2.systems.abilities import DocumentListing
from pytest_ragv2.systems.base import (
    HttpAdapter,
    HttpReply,
    env_secret,
    headers_from_env,
    send_with_retry,
    timed_retrieval,
)
from pytest_ragv2.systems.config import (
    CALL_TIMEOUT_MAX_S,
    RetrievalAdapterConfig,
    RetryPolicy,
    ServiceUrl,
    seconds_field,
)
from pytest_ragv2.systems.failure import AdapterFailure
from pytest_ragv2.systems.outputs import Exchange, RetrievalResult, RetrievedItem
from pytest_ragv2.systems.query_env import query_env_field, query_from_env
from pytest_ragv2.systems.upload_names import filename_from_source

NO_DOCUMENTS_DETAIL = "No documents found for the given query"

Pair = tuple[dict[str, Any], float]


class RagApiRetrieval(RetrievalAdapterConfig):
    """LibreChat rag_api: ``POST /query_multiple`` (one call) or ``POST /query`` per file."""

    adapter: Literal["rag-api"]
    url: ServiceUrl = Field(description='base URL, e.g. "http://host:8000"')
    endpoint: Literal["query_multiple", "query"] = "query_multiple"
    file_ids: list[str] | None = Field(
        default=None, description="None: the run's allow-list file ids are queried"
    )
    file_id_map: dict[str, str] = Field(
        default_factory=dict,
        description="the gold's file id -> the id the service stores it under (LibreChat "
        "gives every upload its own id); queried ids are mapped, returned ids mapped back",
    )
    entity_id: str | None = Field(default=None, description="sent on /query only")
    jwt_secret_env: str | None = Field(
        default=None, description="name of the environment variable holding the HS256 secret"
    )
    jwt_user_id: str = "ragv2-eval"
    jwt_ttl_s: int = Field(default=3600, ge=1)
    query_env: dict[str, str] = query_env_field()
    headers_env: dict[str, str] = Field(
        default_factory=dict, description="header name -> environment variable name"
    )
    timeout_s: float = seconds_field(30.0, CALL_TIMEOUT_MAX_S)
    retry: RetryPolicy = Field(default_factory=RetryPolicy)

    @property
    def indexed_ids_url(self) -> str:
        return self.url.rstrip("/") + "/ids"

    def document_listing(self, name: str, file_ids: Sequence[str]) -> DocumentListing:
        retriever = RagApiRetriever(name, self, file_ids=file_ids)
        retriever.close()  # only its token, id mapping and file ids are needed
        return DocumentListing(
            url=self.url.rstrip("/") + "/documents",
            headers=retriever.auth_headers(),
            queried=retriever.file_ids,
            to_gold=retriever.to_gold_ids if self.file_id_map else None,
            owner=(self.entity_id or self.jwt_user_id) if self.endpoint == "query" else None,
        )


class RagApiRetriever(HttpAdapter):
    """Retrieval through rag_api; one keep-alive client per retriever."""

    higher_score_is_better = False  # rag_api's score is a cosine distance

    def __init__(self, name: str, config: RagApiRetrieval, *, file_ids: Sequence[str]) -> None:
        super().__init__(config.timeout_s, config.url)
        self.name = name
        self.config = config
        gold_ids = config.file_ids if config.file_ids is not None else file_ids
        self.file_ids: list[str] = [config.file_id_map.get(one, one) for one in gold_ids]
        self._gold_id = {service: gold for gold, service in config.file_id_map.items()}
        self._base_url = config.url.rstrip("/")
        # (digest of the secret it was signed with, token, when to sign a new one)
        self._token: tuple[str, str, float] | None = None

    def retrieve(self, query: str, k: int) -> RetrievalResult:
        return timed_retrieval(lambda exchanges: self._retrieve(query, k, exchanges))

    def _retrieve(self, query: str, k: int, exchanges: list[Exchange]) -> list[RetrievedItem]:
        headers = self._headers()
        if not self.file_ids:
            raise AdapterFailure(
                "adapter", f"system {self.name}: no file ids to query (set retrieval.file_ids)"
            )
        if self.config.endpoint == "query_multiple":
            pairs = self._query_multiple(query, k, headers, exchanges)
        else:
            pairs = self._query_per_file(query, k, headers, exchanges)
        items = [
            document_to_item(rank, document, distance)
            for rank, (document, distance) in enumerate(pairs[:k], start=1)
        ]
        return [self.to_gold_ids(item) for item in items] if self._gold_id else items

    def to_gold_ids(self, item: RetrievedItem) -> RetrievedItem:
        """The item with the service's file id mapped back to the gold's (``file_id_map``)."""
        gold = self._gold_id.get(item.file_id or "")
        return item if gold is None else dataclasses.replace(item, file_id=gold)

    def _query_multiple(
        self, query: str, k: int, headers: dict[str, str], exchanges: list[Exchange]
    ) -> list[Pair]:
        reply = self._post(
            "query_multiple",
            {"query": query, "file_ids": self.file_ids, "k": k},
            headers,
            exchanges,
        )
        if reply.status_code == 404 and _is_no_documents(reply.body):
            return []
        return parse_pairs(reply.json_or_fail(), reply.url)

    def _query_per_file(
        self, query: str, k: int, headers: dict[str, str], exchanges: list[Exchange]
    ) -> list[Pair]:
        merged: list[Pair] = []
        for file_id in self.file_ids:
            body: dict[str, Any] = {"query": query, "file_id": file_id, "k": k}
            if self.config.entity_id is not None:
                body["entity_id"] = self.config.entity_id
            reply = self._post("query", body, headers, exchanges)
            merged.extend(parse_pairs(reply.json_or_fail(), reply.url))
        merged.sort(key=lambda pair: pair[1])  # stable: ties keep file order, then server order
        return merged

    def _post(
        self, route: str, body: dict[str, Any], headers: dict[str, str], exchanges: list[Exchange]
    ) -> HttpReply:
        return send_with_retry(
            self.client,
            method="POST",
            url=f"{self._base_url}/{route}",
            json_body=body,
            headers=headers,
            exchanges=exchanges,
            retry=self.config.retry,
            max_bytes=self.config.max_response_bytes,
            secret_query=query_from_env(self.config.query_env),
        )

    def auth_headers(self) -> dict[str, str]:
        """The headers every route but /health needs (a JWT signed from the named secret)."""
        return self._headers()

    def _headers(self) -> dict[str, str]:
        headers = headers_from_env(self.config.headers_env)
        if self.config.jwt_secret_env is not None:
            headers["Authorization"] = f"Bearer {self._jwt(self.config.jwt_secret_env)}"
        return headers

    def _jwt(self, secret_env: str) -> str:
        secret = env_secret(secret_env, "rag_api JWT secret")
        digest = hashlib.sha256(secret.encode()).hexdigest()
        now = time.time()
        if self._token is None or self._token[0] != digest or now >= self._token[2]:
            import jwt  # ~20 ms (cryptography); only a deployment with a secret signs tokens

            ttl = self.config.jwt_ttl_s
            payload = {"id": self.config.jwt_user_id, "exp": int(now) + ttl}
            # The deployment owns its secret's length; a warning here would only add noise
            # (or, under -W error, turn a working setup into failed runs).
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", jwt.InsecureKeyLengthWarning)
                token = jwt.encode(payload, secret, algorithm="HS256")
            self._token = (digest, token, now + ttl / 2)
        return self._token[1]


def _is_no_documents(body: Any) -> bool:
    return isinstance(body, dict) and body.get("detail") == NO_DOCUMENTS_DETAIL


def parse_pairs(body: Any, url: str) -> list[Pair]:
    """rag_api's ``[[document, score], ...]``, checked; any other shape is a malformed answer."""
    if not isinstance(body, list):
        raise _malformed(url, f"expected a JSON list of [document, score], got {_type(body)}")
    pairs: list[Pair] = []
    for position, pair in enumerate(body):
        if not isinstance(pair, list) or len(pair) != 2:
            raise _malformed(url, f"element {position} is not a [document, score] pair")
        document, score = pair
        if not isinstance(document, dict):
            raise _malformed(url, f"element {position}: document is {_type(document)}")
        if not isinstance(document.get("page_content"), str):
            raise _malformed(url, f"element {position}: page_content is not a string")
        if not isinstance(document.get("metadata", {}), dict):
            raise _malformed(url, f"element {position}: metadata is not an object")
        if isinstance(score, bool) or not isinstance(score, int | float):
            raise _malformed(url, f"element {position}: score is {_type(score)}, not a number")
        pairs.append((document, float(score)))
    return pairs


def document_to_item(rank: int, document: dict[str, Any], distance: float) -> RetrievedItem:
    """One rag_api document as a ``RetrievedItem`` (1-based page and row)."""
    metadata: dict[str, Any] = document.get("metadata") or {}
    return RetrievedItem(
        rank=rank,
        text=document["page_content"],
        file_id=_str_or_none(metadata.get("file_id")),
        filename=_filename(metadata),
        page=_one_based(metadata.get("page")),
        section=_str_or_none(metadata.get("section") or metadata.get("heading")),
        table=_str_or_none(metadata.get("table") or metadata.get("sheet")),
        row=_one_based(metadata.get("row")),
        row_key=_str_or_none(metadata.get("row_key")),
        score=distance,
        metadata={key: value for key, value in metadata.items() if key != "source"},
    )


def _filename(metadata: dict[str, Any]) -> str | None:
    """The original file name: ``metadata.filename`` where a service sends one, else read
    from ``source`` in every form rag_api has written it:

    - ``<upload dir>/<user_id>/<stem>_<32 hex digits><suffix>`` (since 2026-03: a unique name
      per upload under the user's folder) -> ``<stem><suffix>``;
    - ``<upload dir>/<user_id>-<original name>`` (older builds) -> ``<original name>``;
    - any other path -> its basename.
    """
    if isinstance(metadata.get("filename"), str) and metadata["filename"]:
        return str(metadata["filename"])
    source = metadata.get("source")
    if not isinstance(source, str) or not source:
        return None
    return filename_from_source(source, metadata.get("user_id"))


def _one_based(value: Any) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool):
        return value + 1
    return None


def _str_or_none(value: Any) -> str | None:
    return None if value is None or value == "" else str(value)


def _type(value: Any) -> str:
    return "null" if value is None else type(value).__name__


def _malformed(url: str, detail: str) -> AdapterFailure:
    return AdapterFailure("malformed", f"unexpected rag_api answer from {url}: {detail}")
