"""From one system's retrieval configuration to a ready ``Retriever``."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

from pytest_ragv2.systems.base import Retriever
from pytest_ragv2.systems.chat_config import ChatConfig, OpenAIChatConfig
from pytest_ragv2.systems.command import CommandConfig
from pytest_ragv2.systems.config import (
    HttpJsonRetrieval,
    PythonRetrieval,
    RagApiRetrieval,
    RetrievalConfig,
)
from pytest_ragv2.systems.http_json import HttpJsonRetriever
from pytest_ragv2.systems.http_json_chat import HttpJsonChatConfig
from pytest_ragv2.systems.librechat_agents import LibreChatAgentsConfig
from pytest_ragv2.systems.python_callable import PythonRetriever
from pytest_ragv2.systems.rag_api import RagApiRetriever
from pytest_ragv2.transcripts import Transcript


def build_retriever(name: str, config: RetrievalConfig, *, file_ids: Sequence[str]) -> Retriever:
    """The adapter for ``config``; ``file_ids`` is the run's allow-list (used when the
    configuration does not name its own). Nothing connects until the first ``retrieve``."""
    if isinstance(config, RagApiRetrieval):
        return RagApiRetriever(name, config, file_ids=file_ids)
    if isinstance(config, HttpJsonRetrieval):
        return HttpJsonRetriever(name, config, file_ids=file_ids)
    if isinstance(config, PythonRetrieval):
        return PythonRetriever(name, config)
    raise TypeError(f"no retrieval adapter for {type(config).__name__}")


class ChatSystem(Protocol):
    """A chat path: one ``converse`` is one fresh conversation; it never raises."""

    name: str

    def converse(self, prompts: Sequence[str]) -> Transcript: ...

    def close(self) -> None: ...


def build_chat(
    name: str, config: ChatConfig, *, retriever: Callable[[], Retriever | None]
) -> ChatSystem:
    """The chat adapter for ``config``. ``retriever`` gives the system's retrieval adapter
    (None when it has none), for a chat path whose knowledge-base searches the harness
    executes (openai-chat)."""
    if isinstance(config, OpenAIChatConfig):
        from pytest_ragv2.systems.openai_chat import OpenAIChat

        return OpenAIChat(name, config, retriever())
    if isinstance(config, CommandConfig):
        from pytest_ragv2.systems.command import CommandRunner

        return CommandRunner(name, config)
    if isinstance(config, LibreChatAgentsConfig):
        from pytest_ragv2.systems.librechat_agents import LibreChatAgents

        return LibreChatAgents(name, config)
    if isinstance(config, HttpJsonChatConfig):
        from pytest_ragv2.systems.http_json_chat import HttpJsonChat

        return HttpJsonChat(name, config)
    raise TypeError(f"no chat adapter for {type(config).__name__}")
