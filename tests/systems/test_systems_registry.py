"""The adapter table: every row validates its configuration and builds its adapter, the
settings' unions come from the table, and the package imports nothing it does not need."""

from __future__ import annotations

import subprocess
import sys
from typing import Any, Literal

import pydantic
import pytest

from pytest_ragv2.config.settings import SystemSettings
from pytest_ragv2.systems.base import Retriever
from pytest_ragv2.systems.command import CommandRunner
from pytest_ragv2.systems.config import AdapterConfig
from pytest_ragv2.systems.http_json_chat import HttpJsonChat
from pytest_ragv2.systems.librechat_agents import LibreChatAgents
from pytest_ragv2.systems.openai_chat import OpenAIChat
from pytest_ragv2.systems.registry import (
    CHAT_ADAPTERS,
    RETRIEVAL_ADAPTERS,
    ChatAdapter,
    _table,
    build_chat,
)

CHAT_SETTINGS: dict[str, dict[str, Any]] = {
    "openai-chat": {"adapter": "openai-chat", "url": "http://x/v1", "model": "m"},
    "librechat-agents": {"adapter": "librechat-agents", "url": "http://x", "agent_id": "a"},
    "command": {"adapter": "command", "argv": ["codex", "exec", "{prompt}"]},
    "http-json-chat": {"adapter": "http-json-chat", "url": "http://x", "answer_path": "a"},
}


def test_the_table_names_every_adapter_once() -> None:
    assert list(RETRIEVAL_ADAPTERS) == ["rag-api", "http-json", "python"]
    assert list(CHAT_ADAPTERS) == list(CHAT_SETTINGS)


@pytest.mark.parametrize("adapter", list(CHAT_SETTINGS))
def test_settings_read_each_chat_adapter_and_the_table_builds_it(adapter: str) -> None:
    system = SystemSettings.model_validate({"role": "candidate", "chat": CHAT_SETTINGS[adapter]})
    asked: list[bool] = []

    def no_retriever() -> Retriever | None:
        asked.append(True)
        return None

    assert system.chat is not None
    assert type(system.chat) is CHAT_ADAPTERS[adapter].config
    chat = build_chat("sys", system.chat, retriever=no_retriever)

    expected = {
        "openai-chat": OpenAIChat,
        "librechat-agents": LibreChatAgents,
        "command": CommandRunner,
        "http-json-chat": HttpJsonChat,
    }[adapter]
    assert type(chat) is expected
    assert chat.name == "sys"
    assert asked == ([True] if adapter == "openai-chat" else [])  # only it searches
    chat.close()


def test_an_unknown_adapter_is_a_settings_error_naming_the_known_ones() -> None:
    with pytest.raises(pydantic.ValidationError) as raised:
        SystemSettings.model_validate({"role": "candidate", "chat": {"adapter": "telnet"}})

    message = str(raised.value)
    for name in CHAT_SETTINGS:
        assert f"'{name}'" in message


def test_a_row_whose_name_is_not_its_configuration_discriminator_is_refused() -> None:
    class Mismatched(AdapterConfig):
        adapter: Literal["one-name"]

    with pytest.raises(TypeError, match="Literal\\['other-name'\\]"):
        _table(ChatAdapter("other-name", Mismatched, lambda name, config, retriever: None))


def test_importing_the_knowledge_base_tool_loads_no_http_client_or_pydantic() -> None:
    code = (
        "import sys, pytest_ragv2.systems.kb_tool\n"
        "print(sorted(m for m in ('httpx', 'pydantic', 'jwt') if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout

    assert out.strip() == "[]"
