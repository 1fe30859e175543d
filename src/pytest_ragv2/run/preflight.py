"""Before the first item: is each configured system there, does it take our credentials, and
does it hold the files we will ask it about?

A run against a system that cannot answer wastes an hour and says nothing: every run is an
error, or — worse — every run is an empty list and the system scores recall 0 with no error at
all (a ``file_id`` that is not indexed, or rag_api's ``/query`` with a token of a user who does
not own the files). So, per system, before any item runs:

- every environment variable the configuration names for a secret is set
  (``jwt_secret_env``, ``api_key_env``, ``headers_env``) — else **stop**;
- it answers: a transport failure or a timeout is a **warning** (the runs then record their
  errors, as any unreachable system's do);
- it takes the credentials: HTTP 401 or 403 on an authenticated route — **stop**;
- rag_api: ``GET /ids`` lists every file id the runs will query — else **stop**, naming the
  missing ids; with ``endpoint = "query"``, ``GET /documents?ids=`` shows the files belong to
  the token's user (``/query`` answers ``[]`` for anyone else) — else **stop**. The chunks
  ``/documents`` returns are kept: they are what the service stores, from which the
  attainable ceiling of the gold is computed (:mod:`pytest_ragv2.run.attainable`);
- a command-line system: its program is found — else **stop**.

A stop is a usage error at start (exit status 4) naming the system and the variable, route or
file. ``--ragv2-no-preflight`` skips all of it. Nothing here raises: the findings are returned.

Every probe is bounded as the system's own calls are (``send_with_retry`` on a
``bounded_client``): its ``timeout_s`` bounds the request as a whole, its
``max_response_mb`` the body after decompression; it is tried once. A probe that fails so
is a warning naming why.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from pytest_ragv2.config.settings import SystemSettings
from pytest_ragv2.layers.registry import layer_info
from pytest_ragv2.systems import secrets as secret_registry
from pytest_ragv2.systems.abilities import (
    ListsIndexedFiles,
    ListsModels,
    ListsStoredDocuments,
    ProbesItsModel,
    SearchesWithRetrieval,
    StartsProgram,
)
from pytest_ragv2.systems.base import (
    SIDE_ROUTE_RETRY,
    HttpReply,
    bounded_client,
    headers_from_env,
    send_with_retry,
)
from pytest_ragv2.systems.failure import AdapterFailure
from pytest_ragv2.systems.outputs import RetrievedItem
from pytest_ragv2.systems.query_env import query_from_env
from pytest_ragv2.systems.rag_api import document_to_item
from pytest_ragv2.systems.secret_policy import scrub, secret_values

Severity = Literal["stop", "warn"]


@dataclass(frozen=True, slots=True)
class Finding:
    system: str
    severity: Severity
    message: str

    def __str__(self) -> str:
        from pytest_ragv2.systems.secret_policy import redact_urls_in

        return f"system {self.system}: {redact_urls_in(self.message)}"


@dataclass(slots=True)
class PreflightReport:
    findings: list[Finding] = field(default_factory=list)
    # system -> every chunk the service stores for the queried files (rag_api only)
    stored_chunks: dict[str, list[RetrievedItem]] = field(default_factory=dict)

    @property
    def stops(self) -> list[Finding]:
        return [finding for finding in self.findings if finding.severity == "stop"]

    @property
    def warnings(self) -> list[Finding]:
        return [finding for finding in self.findings if finding.severity == "warn"]


def secret_variables(system: SystemSettings) -> list[tuple[str, str]]:
    """(variable, what it is for) for every secret the system's configuration names."""
    named: list[tuple[str, str]] = []
    for part, config in (("retrieval", system.retrieval), ("chat", system.chat)):
        if config is None:
            continue
        for attribute in ("jwt_secret_env", "api_key_env"):
            variable = getattr(config, attribute, None)
            if isinstance(variable, str) and variable:
                named.append((variable, f"{part}.{attribute}"))
        headers: Mapping[str, str] = getattr(config, "headers_env", None) or {}
        for header, variable in headers.items():
            named.append((variable, f"{part}.headers_env[{header!r}]"))
        query: Mapping[str, str] = getattr(config, "query_env", None) or {}
        for parameter, variable in query.items():
            named.append((variable, f"{part}.query_env[{parameter!r}]"))
    return named


def run_preflight(
    systems: Mapping[str, SystemSettings],
    layers: str | Sequence[str],
    file_ids: Sequence[str],
) -> PreflightReport:
    """Check every system for the session's layers (this module's docstring); never raises."""
    names = (layers,) if isinstance(layers, str) else tuple(layers)
    chat_session = any(layer_info(layer).chat for layer in names)
    retrieval_session = any(not layer_info(layer).chat for layer in names)
    env = os.environ
    report = PreflightReport()
    for name, system in systems.items():
        missing = [(var, use) for var, use in secret_variables(system) if not env.get(var)]
        for variable, use in missing:
            report.findings.append(
                Finding(name, "stop", f"environment variable {variable} ({use}) is not set")
            )
        if missing:
            continue
        try:
            _check_system(name, system, chat_session, retrieval_session, file_ids, report)
        except Exception as exc:  # a preflight bug must not stop a run: it only warns
            report.findings.append(Finding(name, "warn", f"preflight could not check: {exc!r}"))
    return report


def _check_system(
    name: str,
    system: SystemSettings,
    chat_session: bool,
    retrieval_session: bool,
    file_ids: Sequence[str],
    report: PreflightReport,
) -> None:
    retrieval, chat = system.retrieval, system.chat
    uses_retrieval = retrieval_session or (
        chat_session
        and isinstance(chat, SearchesWithRetrieval)
        and chat.searches_with_retrieval()
        and retrieval is not None
    )
    if (
        uses_retrieval
        and isinstance(retrieval, ListsIndexedFiles)
        and isinstance(retrieval, ListsStoredDocuments)
    ):
        _check_stored_files(name, retrieval, file_ids, report)
    if not chat_session or chat is None:
        return
    if isinstance(chat, StartsProgram):
        program = chat.program
        if shutil.which(program) is None and not os.path.isfile(program):
            report.findings.append(
                Finding(name, "stop", f"chat.argv: program {program!r} is not found on PATH")
            )
    if isinstance(chat, ListsModels):
        _check_models_route(name, chat, report)


def _probe(client: Any, url: str, config: Any, headers: Mapping[str, str]) -> HttpReply:
    """One GET of the preflight, bounded as the system's own calls are, tried once."""
    return send_with_retry(
        client,
        method="GET",
        url=url,
        exchanges=[],
        retry=SIDE_ROUTE_RETRY,
        headers=headers,
        max_bytes=config.max_response_bytes,
        secret_query=query_from_env(getattr(config, "query_env", {}) or {}),
    )


def _unanswered(name: str, what: str, failure: AdapterFailure, report: PreflightReport) -> None:
    """A probe's failure: a configuration error (an unset secret, a URL httpx cannot use)
    stops the session; a service that did not answer, or not within its bounds, warns."""
    error = failure.error
    if error.kind == "adapter":
        report.findings.append(Finding(name, "stop", error.message))
        return
    report.findings.append(
        Finding(name, "warn", f"{what} did not answer ({error.kind}): {error.message}")
    )


def _check_stored_files(
    name: str, config: Any, file_ids: Sequence[str], report: PreflightReport
) -> None:
    """The service holds every queried file (``GET /ids``), and they are the files of the
    user the token names where it answers only those (rag_api's ``/query``)."""
    from pytest_ragv2.run.attainable import stored_documents

    ids_url = config.indexed_ids_url
    base = ids_url.rsplit("/", 1)[0]
    try:
        listing = config.document_listing(name, file_ids)
        if listing is None:
            return
        headers = dict(listing.headers)
        queried = listing.queried
        with bounded_client(config.timeout_s, base) as client:
            ids_reply = _probe(client, ids_url, config, headers)
            if _refused(name, "GET /ids", ids_reply, report):
                return
            if ids_reply.status_code >= 500:  # /health says UP even with the database down
                report.findings.append(
                    Finding(
                        name,
                        "warn",
                        f"GET /ids at {base} answered HTTP {ids_reply.status_code}: the "
                        "service is up but failing (is its database reachable?)",
                    )
                )
                return
            indexed = ids_reply.body if ids_reply.is_json else None
            if ids_reply.status_code == 200 and isinstance(indexed, list):
                known = {str(file_id) for file_id in indexed}
                absent = [file_id for file_id in queried if file_id not in known]
                if absent:
                    shown = ", ".join(absent[:8]) + (" …" if len(absent) > 8 else "")
                    report.findings.append(
                        Finding(
                            name,
                            "stop",
                            f"{len(absent)} of {len(queried)} queried file ids are not indexed "
                            f"at {base} (GET /ids): {shown}",
                        )
                    )
                    return
            documents = stored_documents(client, listing.url, headers, queried, config)
    except AdapterFailure as failure:
        _unanswered(name, f"rag_api at {base}", failure, report)
        return
    if documents is None:
        return
    items = [document_to_item(rank, document, 0.0) for rank, document in enumerate(documents, 1)]
    to_gold = listing.to_gold
    report.stored_chunks[name] = [to_gold(item) for item in items] if to_gold else items
    user = listing.owner
    if user is not None:
        owners = {
            str((document.get("metadata") or {}).get("user_id"))
            for document in documents
            if (document.get("metadata") or {}).get("user_id") is not None
        }
        foreign = sorted(owners - {user})
        if foreign:
            report.findings.append(
                Finding(
                    name,
                    "stop",
                    f"/query answers only the files of the token's user ({user}); the queried "
                    f"files belong to {', '.join(foreign)}: set retrieval.jwt_user_id (or "
                    'entity_id), or use endpoint = "query_multiple"',
                )
            )


def _check_models_route(name: str, chat: Any, report: PreflightReport) -> None:
    """An authenticated GET of the chat service's model list: a 401/403 is a stop."""
    url = chat.models_url
    try:
        headers = headers_from_env(getattr(chat, "headers_env", {}) or {})
        key_env = getattr(chat, "api_key_env", None)
        if key_env:
            headers["Authorization"] = f"Bearer {os.environ[key_env]}"
        with bounded_client(chat.timeout_s, url) as client:
            reply = _probe(client, url, chat, headers)
            if _refused(name, f"GET {url}", reply, report) or not isinstance(chat, ProbesItsModel):
                return
            url = chat.model_url
            reply = _probe(client, url, chat, headers)
    except AdapterFailure as failure:
        _unanswered(name, f"chat service at {url}", failure, report)
        return
    _model_missing(name, url, reply, report)


def _model_missing(name: str, url: str, reply: HttpReply, report: PreflightReport) -> None:
    """``GET …/models/<id>`` of the configured model (a LibreChat agent): 404 stops, since
    every run would answer it; 403 warns (LibreChat checks API access here a little more
    strictly than on its chat route, which also lets the agent's owner in)."""
    if reply.status_code == 404:
        report.findings.append(
            Finding(
                name,
                "stop",
                f"GET {url} answered 404: the service has no such model (agent id); every "
                "run would fail the same way",
            )
        )
    elif reply.status_code == 403:
        report.findings.append(
            Finding(
                name,
                "warn",
                f"GET {url} answered 403: the key's user may have no API access to this "
                "agent (LibreChat's remote-agent permission)",
            )
        )


def _refused(name: str, route: str, reply: HttpReply, report: PreflightReport) -> bool:
    if reply.status_code not in (401, 403):
        return False
    detail = reply.body if reply.is_json else None
    shown = detail.get("detail") if isinstance(detail, dict) else None
    if shown is not None:  # a service may echo what it refused
        shown = scrub(str(shown), secret_values(secret_registry.remembered(), remember=False))
    report.findings.append(
        Finding(
            name,
            "stop",
            f"{route} refused the credentials: HTTP {reply.status_code}"
            + (f" ({shown})" if shown else "")
            + " — check the secret the configuration names",
        )
    )
    return True
