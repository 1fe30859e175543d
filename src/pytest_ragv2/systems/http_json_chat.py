"""A generic HTTP JSON chat service, mapped onto a ``Transcript`` by configured paths.

Each turn is one request whose body is a template: a string value exactly ``"{prompt}"``,
``"{messages}"`` or ``"{conversation_id}"`` becomes that value with its JSON type (other
strings get the placeholders replaced by text, as in ``http_json``). ``messages`` is the
OpenAI-style list so far (earlier user/assistant turns, then this prompt);
``conversation_id`` is ``null`` on the first turn and, when ``conversation_id_path`` is
set, the id the service returned on the turns after (read from every answer, required in
the first). The answer text sits at ``answer_path``; citations, evidence, tool calls and
usage at their own optional paths (dotted, integer segments index lists, as in
``http_json``). A list path that is absent or null means none; anything else there that is
not a list is a malformed answer.

As for every chat adapter: one ``converse`` is one fresh conversation, a failed turn stops
it (later turns ``ran=False``), and nothing raises out of ``converse``.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import Field, model_validator

from pytest_ragv2.systems.base import HttpAdapter, excerpt, headers_from_env, send_with_retry
from pytest_ragv2.systems.chat_limits import ChatAdapterConfig, Deadline
from pytest_ragv2.systems.config import (
    CALL_TIMEOUT_MAX_S,
    RetryPolicy,
    ServiceUrl,
    StrictConfig,
    seconds_field,
)
from pytest_ragv2.systems.failure import AdapterFailure
from pytest_ragv2.systems.field_values import MISSING, describe, int_at, resolve, text_at
from pytest_ragv2.systems.http_json import (
    HttpJsonFields,
    check_placeholders,
    fill_template,
    map_item,
)
from pytest_ragv2.systems.openai_wire import flatten_usage, parse_arguments
from pytest_ragv2.systems.outputs import RunError
from pytest_ragv2.systems.query_env import query_env_field, query_from_env
from pytest_ragv2.systems.secret_policy import scrub, secret_values, url_secrets
from pytest_ragv2.systems.transcripts import (
    ChatTurn,
    Citation,
    ToolCall,
    Transcript,
    run_conversation,
)

DEFAULT_BODY: dict[str, str] = {"messages": "{messages}", "conversation_id": "{conversation_id}"}


class HttpJsonCitationFields(StrictConfig):
    """Dotted paths inside one citation object (``None``: not provided)."""

    marker: str | None = Field(
        default=None, description='the marker as in the answer; None: "[n]" by position'
    )
    file_id: str | None = "file_id"
    filename: str | None = None
    page: str | None = None
    page_base: Literal[0, 1] = 1
    content: str | None = None


class HttpJsonToolCallFields(StrictConfig):
    """Dotted paths inside one tool-call object."""

    id: str | None = "id"
    name: str = "name"
    arguments: str = Field(default="arguments", description="an object, or JSON text of one")
    result: str | None = Field(default=None, description="text, or any JSON (kept as JSON text)")


class HttpJsonChatConfig(ChatAdapterConfig):
    adapter: Literal["http-json-chat"]
    url: ServiceUrl
    method: Literal["POST", "PUT"] = "POST"
    body: dict[str, Any] = Field(default_factory=lambda: dict(DEFAULT_BODY))
    answer_path: str = Field(description="dotted path to the answer text")
    conversation_id_path: str | None = Field(
        default=None, description="dotted path to the service's conversation id"
    )
    citations_path: str | None = None
    citation_fields: HttpJsonCitationFields = Field(default_factory=HttpJsonCitationFields)
    evidence_path: str | None = None
    evidence_fields: HttpJsonFields = Field(default_factory=HttpJsonFields)
    tool_calls_path: str | None = None
    tool_call_fields: HttpJsonToolCallFields = Field(default_factory=HttpJsonToolCallFields)
    usage_path: str | None = Field(default=None, description="object of integer token counts")
    query_env: dict[str, str] = query_env_field()
    headers_env: dict[str, str] = Field(
        default_factory=dict, description="header name -> environment variable name"
    )
    timeout_s: float = seconds_field(120.0, CALL_TIMEOUT_MAX_S)
    retry: RetryPolicy = Field(default_factory=RetryPolicy)

    @model_validator(mode="after")
    def _known_placeholders(self) -> HttpJsonChatConfig:
        check_placeholders({"body": self.body}, CHAT_PLACEHOLDERS)
        return self


CHAT_PLACEHOLDERS = ("prompt", "messages", "conversation_id")


class HttpJsonChat(HttpAdapter):
    def __init__(self, name: str, config: HttpJsonChatConfig) -> None:
        super().__init__(config.timeout_s, config.url)
        self.name = name
        self.config = config

    def converse(self, prompts: Sequence[str]) -> Transcript:
        messages: list[dict[str, Any]] = []
        conversation_id: Any = None
        deadline = self.config.conversation_deadline()

        def send(number: int, prompt: str) -> ChatTurn:
            nonlocal conversation_id
            messages.append({"role": "user", "content": prompt})
            turn, conversation_id = self._turn(
                prompt, list(messages), conversation_id, first=number == 0, deadline=deadline
            )
            if turn.error is None:
                messages.append({"role": "assistant", "content": turn.answer})
            return turn

        return run_conversation(prompts, send)

    def _turn(
        self,
        prompt: str,
        messages: list[dict[str, Any]],
        conversation_id: Any,
        *,
        first: bool,
        deadline: Deadline | None,
    ) -> tuple[ChatTurn, Any]:
        turn = ChatTurn(prompt=prompt)
        secrets: list[str] = []
        started = time.perf_counter()
        try:
            headers = headers_from_env(self.config.headers_env)
            query = query_from_env(self.config.query_env)
            secrets = secret_values(
                [*headers.values(), *query.values(), *url_secrets(self.config.url)]
            )
            values = {"prompt": prompt, "messages": messages, "conversation_id": conversation_id}
            reply = send_with_retry(
                self.client,
                method=self.config.method,
                url=self.config.url,
                json_body=fill_template(self.config.body, values),
                headers=headers,
                secret_query=query,
                exchanges=turn.exchanges,
                retry=self.config.retry,
                max_bytes=self.config.max_response_bytes,
                deadline=deadline,
            )
            answer = reply.json_or_fail()
            conversation_id = self._read_answer(answer, turn, conversation_id, first=first)
        except AdapterFailure as failure:
            turn.error = failure.error
        except Exception as exc:  # an adapter bug must cost one run, not the session
            message = scrub(f"{type(exc).__name__}: {exc}", secrets)
            turn.error = RunError(kind="internal", message=message)
        turn.latency_s = time.perf_counter() - started
        return turn, conversation_id

    def _read_answer(
        self, answer: Any, turn: ChatTurn, conversation_id: Any, *, first: bool
    ) -> Any:
        """Fill ``turn`` from one decoded answer; returns the conversation id to send next."""
        config = self.config
        text = resolve(answer, config.answer_path)
        if not isinstance(text, str):
            raise AdapterFailure(
                "malformed",
                f"no answer text at answer_path {config.answer_path!r} "
                f"(found {describe(text)}): {excerpt(answer)}",
            )
        turn.answer = text
        if config.conversation_id_path is not None:
            found = resolve(answer, config.conversation_id_path)
            if found is not MISSING and found is not None and found != "":
                conversation_id = found
            elif first:
                raise AdapterFailure(
                    "malformed",
                    f"no conversation id at conversation_id_path "
                    f"{config.conversation_id_path!r} in the first answer: {excerpt(answer)}",
                )
        turn.citations = [
            map_citation(position, raw, config.citation_fields)
            for position, raw in enumerate(_list_at(answer, config.citations_path), start=1)
        ]
        turn.evidence = [
            map_item(rank, raw, config.evidence_fields)
            for rank, raw in enumerate(_list_at(answer, config.evidence_path), start=1)
        ]
        turn.tool_calls = [
            map_tool_call(position, raw, config.tool_call_fields)
            for position, raw in enumerate(_list_at(answer, config.tool_calls_path), start=1)
        ]
        if config.usage_path is not None:
            turn.usage = flatten_usage(resolve(answer, config.usage_path))
        return conversation_id


def _list_at(answer: Any, path: str | None) -> list[Any]:
    if path is None:
        return []
    found = resolve(answer, path)
    if found is MISSING or found is None:
        return []
    if not isinstance(found, list):
        raise AdapterFailure(
            "malformed", f"no list at {path!r} (found {describe(found)}): {excerpt(answer)}"
        )
    return found


def map_citation(position: int, raw: Any, fields: HttpJsonCitationFields) -> Citation:
    """One citation object; ``position`` (1-based) makes the marker when none is mapped."""
    marker = text_at(raw, fields.marker)
    page = int_at(raw, fields.page)
    return Citation(
        marker=marker if marker is not None else f"[{position}]",
        file_id=text_at(raw, fields.file_id),
        filename=text_at(raw, fields.filename),
        page=None if page is None else page + 1 - fields.page_base,
        content=text_at(raw, fields.content),
    )


def map_tool_call(position: int, raw: Any, fields: HttpJsonToolCallFields) -> ToolCall:
    name = resolve(raw, fields.name)
    if not isinstance(name, str) or not name:
        raise AdapterFailure(
            "malformed", f"tool call {position}: no name at {fields.name!r}: {excerpt(raw)}"
        )
    arguments = resolve(raw, fields.arguments)
    result: str | None = None
    if fields.result is not None:
        found = resolve(raw, fields.result)
        if isinstance(found, str):
            result = found
        elif found is not MISSING and found is not None:
            result = json.dumps(found, ensure_ascii=False)
    return ToolCall(
        id=text_at(raw, fields.id) or f"call_{position}",
        name=name,
        arguments={} if arguments is MISSING or arguments is None else parse_arguments(arguments),
        result=result,
    )
