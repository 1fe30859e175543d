"""Configuration of the chat adapters (pydantic, unknown keys are errors).

As for retrieval, secrets never live here: the configuration names the environment
variables that hold them (``api_key_env``, ``headers_env``).
"""

from __future__ import annotations

from typing import Any, Literal

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
        default_factory=list, description="OpenAI tool definitions, sent as given"
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
