"""Configuration of the chat adapters (pydantic, unknown keys are errors).

As for retrieval, secrets never live here: the configuration names the environment
variables that hold them (``api_key_env``, ``headers_env``).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from pytest_ragv2.systems.config import RetryPolicy


class OpenAIChatConfig(BaseModel):
    """Any OpenAI-compatible ``POST {url}/chat/completions`` (llama.cpp, vLLM, Ollama, ...)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    adapter: Literal["openai-chat"]
    url: str = Field(description='base URL, e.g. "http://host:8080/v1"')
    model: str
    temperature: float = Field(default=0.0, ge=0.0)
    stream: bool = False
    stream_include_usage: bool = Field(
        default=True,
        description='streaming only: send stream_options {"include_usage": true}',
    )
    tools: list[dict[str, Any]] = Field(
        default_factory=list,
        description="extra OpenAI tool definitions, sent as given; the harness cannot run "
        "them, so a call to one is recorded without result and ends the turn",
    )
    knowledge_base: Literal["tool", "none"] = Field(
        default="tool",
        description='"tool": when the system has a retrieval adapter, offer the model the '
        "search_knowledge_base tool and run its calls with that adapter",
    )
    max_tool_rounds: int = Field(
        default=4, ge=1, description="model answers with tool calls the harness runs, per turn"
    )
    search_k: int | None = Field(
        default=None, ge=1, description="sources per search; None: the retrieval adapter's k"
    )
    system_prompt: str | None = None
    max_tokens: int | None = Field(default=None, ge=1)
    api_key_env: str | None = Field(
        default=None, description="environment variable holding the key sent as Bearer token"
    )
    headers_env: dict[str, str] = Field(
        default_factory=dict, description="header name -> environment variable name"
    )
    timeout_s: float = Field(
        default=120.0, gt=0.0, description="per try; bounds a whole streamed answer too"
    )
    retry: RetryPolicy = Field(default_factory=RetryPolicy)

    @property
    def completions_url(self) -> str:
        return self.url.rstrip("/") + "/chat/completions"


# Defined after the adapters' own models so that each adapter module owns its configuration.
from pytest_ragv2.systems.command import CommandConfig  # noqa: E402
from pytest_ragv2.systems.http_json_chat import HttpJsonChatConfig  # noqa: E402
from pytest_ragv2.systems.librechat_agents import LibreChatAgentsConfig  # noqa: E402

ChatConfig = Annotated[
    OpenAIChatConfig | LibreChatAgentsConfig | CommandConfig | HttpJsonChatConfig,
    Field(discriminator="adapter"),
]
