"""The adapter table: adapter name -> configuration model -> factory.

Each adapter is one module holding its configuration model (discriminated on
``adapter``) and its class; adding one is that module and one row below. The
configuration unions that ``settings`` validates against are built from these rows, and
``build_retriever`` / ``build_chat`` look the row up by the configuration's ``adapter``.

A conftest or an installed plugin adds rows of its own through the
``pytest_ragv2_adapters`` hook (docs/extending.md): :func:`register_adapters` puts them
beside the built-in rows for the session, and a system's ``adapter`` naming one is
validated against that row's model.
"""

from __future__ import annotations

import functools
import operator
import typing
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any, Generic, Protocol, TypeVar

from pydantic import (
    Field,
    SerializationInfo,
    SerializerFunctionWrapHandler,
    TypeAdapter,
    ValidatorFunctionWrapHandler,
    WrapSerializer,
    WrapValidator,
)

from pytest_ragv2.systems.base import Retriever
from pytest_ragv2.systems.command import CommandConfig, CommandRunner
from pytest_ragv2.systems.config import AdapterConfig, RetrievalAdapterConfig
from pytest_ragv2.systems.http_json import HttpJsonRetrieval, HttpJsonRetriever
from pytest_ragv2.systems.http_json_chat import HttpJsonChat, HttpJsonChatConfig
from pytest_ragv2.systems.librechat_agents import LibreChatAgents, LibreChatAgentsConfig
from pytest_ragv2.systems.openai_chat import OpenAIChat, OpenAIChatConfig
from pytest_ragv2.systems.python_callable import (
    PythonRetrieval,
    PythonRetriever,
    callable_problem,
)
from pytest_ragv2.systems.rag_api import RagApiRetrieval, RagApiRetriever
from pytest_ragv2.systems.transcripts import Transcript

R = TypeVar("R", bound=RetrievalAdapterConfig)
C = TypeVar("C", bound=AdapterConfig)

# the system's retrieval adapter, asked for only by a chat path that searches with it
RetrieverSource = Callable[[], Retriever | None]


class ChatSystem(Protocol):
    """A chat path: one ``converse`` is one fresh conversation; it never raises."""

    name: str

    def converse(self, prompts: Sequence[str]) -> Transcript: ...

    def close(self) -> None: ...


@dataclass(frozen=True, slots=True)
class RetrievalAdapter(Generic[R]):
    """One retrieval adapter: ``build(system name, config, the run's file ids)``."""

    name: str
    config: type[R]
    build: Callable[[str, R, Sequence[str]], Retriever]
    # why this configuration cannot make a single call, found at start without calling
    # (None: it can); what only a call can tell is the preflight's and the runs' to find
    unusable: Callable[[R], str | None] = lambda config: None


@dataclass(frozen=True, slots=True)
class ChatAdapter(Generic[C]):
    """One chat adapter: ``build(system name, config, the system's retrieval adapter)``."""

    name: str
    config: type[C]
    build: Callable[[str, C, RetrieverSource], ChatSystem]


def _table(*rows: Any) -> dict[str, Any]:
    """The rows by name; a row not named as its configuration's ``adapter`` is refused."""
    table = {}
    for row in rows:
        declared = typing.get_args(row.config.model_fields["adapter"].annotation)
        if declared != (row.name,):
            raise TypeError(f"{row.config.__name__}.adapter must be Literal[{row.name!r}]")
        table[row.name] = row
    return table


RETRIEVAL_ADAPTERS: Mapping[str, RetrievalAdapter[Any]] = _table(
    RetrievalAdapter(
        "rag-api",
        RagApiRetrieval,
        lambda name, config, file_ids: RagApiRetriever(name, config, file_ids=file_ids),
    ),
    RetrievalAdapter(
        "http-json",
        HttpJsonRetrieval,
        lambda name, config, file_ids: HttpJsonRetriever(name, config, file_ids=file_ids),
    ),
    RetrievalAdapter(
        "python",
        PythonRetrieval,
        lambda name, config, file_ids: PythonRetriever(name, config),
        unusable=lambda config: callable_problem(config.callable),
    ),
)

CHAT_ADAPTERS: Mapping[str, ChatAdapter[Any]] = _table(
    ChatAdapter(
        "openai-chat",
        OpenAIChatConfig,
        lambda name, config, retriever: OpenAIChat(name, config, retriever()),
    ),
    ChatAdapter(
        "librechat-agents",
        LibreChatAgentsConfig,
        lambda name, config, retriever: LibreChatAgents(name, config),
    ),
    ChatAdapter(
        "command", CommandConfig, lambda name, config, retriever: CommandRunner(name, config)
    ),
    ChatAdapter(
        "http-json-chat",
        HttpJsonChatConfig,
        lambda name, config, retriever: HttpJsonChat(name, config),
    ),
)


# the rows a ``pytest_ragv2_adapters`` hook added for this session (register_adapters)
_ADDED_RETRIEVAL: dict[str, RetrievalAdapter[Any]] = {}
_ADDED_CHAT: dict[str, ChatAdapter[Any]] = {}


class AdapterRegistrationError(ValueError):
    """A row a ``pytest_ragv2_adapters`` hook returned that cannot be added."""


def register_adapters(rows: Sequence[object]) -> None:
    """Add the rows of the ``pytest_ragv2_adapters`` hooks for this session, replacing
    those an earlier session added. A row that is neither a :class:`RetrievalAdapter` nor a
    :class:`ChatAdapter`, whose model does not narrow ``adapter`` to its name, or whose name
    a built-in or another row holds, is refused with the reason."""
    retrieval: dict[str, RetrievalAdapter[Any]] = {}
    chat: dict[str, ChatAdapter[Any]] = {}
    for row in rows:
        if isinstance(row, RetrievalAdapter):
            table: dict[str, Any] = retrieval
            builtin: Mapping[str, Any] = RETRIEVAL_ADAPTERS
        elif isinstance(row, ChatAdapter):
            table, builtin = chat, CHAT_ADAPTERS
        else:
            raise AdapterRegistrationError(
                f"pytest_ragv2_adapters returned {row!r}: each row is a RetrievalAdapter or a "
                "ChatAdapter (pytest_ragv2.systems.registry)"
            )
        if row.name in builtin or row.name in table:
            raise AdapterRegistrationError(
                f"pytest_ragv2_adapters: the adapter name {row.name!r} is taken; choose another"
            )
        try:
            _table(row)
        except (TypeError, KeyError, AttributeError) as exc:
            raise AdapterRegistrationError(f"pytest_ragv2_adapters: {exc}") from None
        table[row.name] = row
    _ADDED_RETRIEVAL.clear()
    _ADDED_RETRIEVAL.update(retrieval)
    _ADDED_CHAT.clear()
    _ADDED_CHAT.update(chat)


def _retrieval_row(name: str) -> RetrievalAdapter[Any] | None:
    return RETRIEVAL_ADAPTERS.get(name) or _ADDED_RETRIEVAL.get(name)


def _chat_row(name: str) -> ChatAdapter[Any] | None:
    return CHAT_ADAPTERS.get(name) or _ADDED_CHAT.get(name)


def _added(
    table: Mapping[str, RetrievalAdapter[Any] | ChatAdapter[Any]],
) -> tuple[WrapValidator, WrapSerializer]:
    """A configuration naming an added adapter is validated against (and serialized by)
    that row's model; any other goes to the built-in union (its errors, and the schema, stay
    the built-ins')."""

    def validate(value: Any, handler: ValidatorFunctionWrapHandler) -> Any:
        if isinstance(value, Mapping):
            row = table.get(str(value.get("adapter")))
            if row is not None:
                return row.config.model_validate(dict(value))
        return handler(value)

    def serialize(
        value: Any, handler: SerializerFunctionWrapHandler, info: SerializationInfo
    ) -> Any:
        row = table.get(str(getattr(value, "adapter", "")))
        if row is not None and isinstance(value, row.config):
            return value.model_dump(
                mode=info.mode, by_alias=bool(info.by_alias), exclude_none=info.exclude_none
            )
        return handler(value)

    return WrapValidator(validate), WrapSerializer(serialize)


def _union(
    configs: Sequence[type[AdapterConfig]],
    added: Mapping[str, RetrievalAdapter[Any] | ChatAdapter[Any]],
) -> Any:
    """The configuration models as one union pydantic tells apart by ``adapter``, beside
    those a hook added."""
    union: Any = functools.reduce(operator.or_, configs)
    validator, serializer = _added(added)
    return Annotated[Annotated[union, Field(discriminator="adapter")], validator, serializer]


if TYPE_CHECKING:  # code outside an adapter sees what every configuration has
    RetrievalConfig = RetrievalAdapterConfig
    ChatConfig = AdapterConfig
else:
    RetrievalConfig = _union([row.config for row in RETRIEVAL_ADAPTERS.values()], _ADDED_RETRIEVAL)
    ChatConfig = _union([row.config for row in CHAT_ADAPTERS.values()], _ADDED_CHAT)

_RETRIEVAL_CONFIG: TypeAdapter[RetrievalConfig] = TypeAdapter(RetrievalConfig)


def parse_retrieval_config(data: Mapping[str, Any]) -> RetrievalConfig:
    """Validate one system's ``retrieval`` mapping (raises pydantic.ValidationError)."""
    return _RETRIEVAL_CONFIG.validate_python(dict(data))


def build_retriever(name: str, config: RetrievalConfig, *, file_ids: Sequence[str]) -> Retriever:
    """The adapter for ``config``; ``file_ids`` is the run's allow-list (used when the
    configuration does not name its own). Nothing connects until the first ``retrieve``."""
    row = _retrieval_row(config.adapter)
    if row is None or not isinstance(config, row.config):
        raise _no_adapter(config)
    return row.build(name, config, file_ids)


def unusable_retrieval(config: RetrievalConfig) -> str | None:
    """Why ``config`` cannot make a single call (a function that cannot be imported), or
    None; checked at the start of a session, before any item runs."""
    row = _retrieval_row(config.adapter)
    if row is None or not isinstance(config, row.config):
        raise _no_adapter(config)
    return row.unusable(config)


def build_chat(name: str, config: ChatConfig, *, retriever: RetrieverSource) -> ChatSystem:
    """The chat adapter for ``config``. ``retriever`` gives the system's retrieval adapter
    (None when it has none), for a chat path whose knowledge-base searches the harness
    executes (openai-chat)."""
    row = _chat_row(config.adapter)
    if row is None or not isinstance(config, row.config):
        raise _no_adapter(config)
    return row.build(name, config, retriever)


def _no_adapter(config: AdapterConfig) -> TypeError:
    return TypeError(f"no adapter {config.adapter!r} for {type(config).__name__}")
