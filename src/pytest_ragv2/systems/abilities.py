"""What an adapter's configuration can do besides its calls, each a small Protocol.

The preflight, the start-up checks and the attainable ceiling ask a system's configuration
what it can do — is there a program to find, a model list to probe, a listing of the
chunks its service stores — by these Protocols, never by its class: an adapter added
through ``pytest_ragv2_adapters`` gains a check by implementing the method, and no module
outside ``systems/`` names a built-in adapter's configuration.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol, Self, runtime_checkable

from pytest_ragv2.systems.outputs import RetrievedItem


@dataclass(frozen=True, slots=True)
class DocumentListing:
    """How to list what a retrieval service stores for the queried files."""

    url: str  # a rag_api-shaped ``GET …/documents?ids=``
    headers: Mapping[str, str]  # the credentials the system's own calls send
    queried: Sequence[str]  # the file ids as the service names them
    to_gold: Callable[[RetrievedItem], RetrievedItem] | None  # service id -> the gold's
    # the one user whose files the service answers (rag_api's /query), None: anyone's
    owner: str | None = None


@runtime_checkable
class ListsStoredDocuments(Protocol):
    """A retrieval service that lists every chunk it stores for given files: from the
    listing the preflight sees the queried files are there and whose they are, and the
    report computes the attainable ceiling of the gold."""

    def document_listing(self, name: str, file_ids: Sequence[str]) -> DocumentListing | None:
        """None: this configuration names no listing. May raise AdapterFailure (an unset
        secret) or ValueError."""
        ...


@runtime_checkable
class ListsIndexedFiles(Protocol):
    """A retrieval service with a route listing every indexed file id (rag_api's
    ``GET /ids``): the preflight stops a session querying a file it does not hold."""

    @property
    def indexed_ids_url(self) -> str: ...


@runtime_checkable
class StartsProgram(Protocol):
    """A chat path that starts a program on this machine: the preflight checks it exists."""

    @property
    def program(self) -> str: ...


@runtime_checkable
class ListsModels(Protocol):
    """A chat service on OpenAI's wire: an authenticated ``GET …/models`` shows, before the
    first run, that it answers and takes the credentials."""

    @property
    def models_url(self) -> str: ...


@runtime_checkable
class ProbesItsModel(Protocol):
    """A chat service that answers ``GET …/models/<id>`` for the model it is configured
    with (a LibreChat agent): 404 there means every run would answer 404."""

    @property
    def model_url(self) -> str: ...


@runtime_checkable
class SearchesWithRetrieval(Protocol):
    """A chat path whose knowledge-base searches the harness runs with the system's own
    retrieval adapter: a chat session calls that adapter too, so it is checked too."""

    def searches_with_retrieval(self) -> bool: ...


@runtime_checkable
class AnswersFromPrompt(Protocol):
    """An answer model that can be given evidence in its prompt and nothing else (layer C:
    the same frozen evidence for every model): no search of its own, the harness's
    system prompt."""

    def answering_from_prompt(self, system_prompt: str) -> Self:
        """This configuration without knowledge-base searches, with ``system_prompt``."""
        ...
