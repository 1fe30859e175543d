"""An OpenAI-compatible chat endpoint: ``POST {url}/chat/completions``, streamed or not.

One ``converse`` call is one fresh conversation: the prompts are sent in order, each
request carrying the whole history of the conversation so far. A turn that fails is
recorded with its error (and, when streaming, the partial answer that had arrived); the
conversation stops there and the later turns are recorded as not run. Nothing raises out
of ``converse``.

Knowledge-base search run by the harness. A local model has no knowledge base of its own:
when the adapter is given the system's retrieval adapter (and ``knowledge_base`` is
``"tool"``), the model is offered ``kb_tool.SEARCH_TOOL`` and the adapter runs its calls:

- A model answer with tool calls, all of them ``search_knowledge_base``, is one tool round:
  the assistant message (with its ``tool_calls``) is appended, each call is run with the
  retriever (``search_k`` items, or the retrieval adapter's own ``k``) and answered by a
  ``{"role": "tool", "tool_call_id", "content"}`` message holding the numbered sources as
  JSON (``kb_tool.render_sources``), and the model is asked again. After
  ``max_tool_rounds`` rounds, an answer that still calls tools ends the turn with a
  ``limit`` error (what had arrived is kept). So does an answer with more than
  ``max_tool_calls_per_round`` calls: none of its calls is run (they are recorded without
  result), since a model asking for hundreds of searches at once is broken, not thorough,
  and answering the first ones only would score a turn the model did not finish.
- Sources are numbered across the whole conversation, not per turn: the later turns resend
  the earlier assistant tool calls and tool messages (as a real chat application keeps
  them), so the model still sees turn 1's ``[3]`` in turn 4 and ``[n]`` must stay
  unambiguous. A turn's ``evidence`` holds the sources its own searches returned (rank =
  their number); its citations are resolved against every source of the conversation.
- A search that fails does not fail the turn: a real RAG application tells the model the
  search failed and lets it answer. The model gets ``{"error": "<kind>: <message>"}``, the
  ``ToolCall.result`` is that text, and the search's exchange records the ``RunError``.
  A call whose arguments hold no ``query`` string is answered the same way (no search).
- Each search is recorded among the turn's exchanges, in call order, as an ``Exchange``
  whose request is ``{"tool": "search_knowledge_base", "tool_call_id", "query", "k",
  "retriever"}`` and whose response body is ``{"items", "error", "exchanges"}`` (the
  retriever's own wire exchanges, nested).
- A call to any other tool (the ``tools`` of the configuration, or any name at all when no
  retriever is given) cannot be run by the harness: the answer's calls are all recorded as
  ``ToolCall`` without ``result`` (none of them is run, as the model never sees their
  results) and the turn ends there, normally ``finish_reason == "tool_calls"``.

Citations are read (``kb_tool.cite_markers``) only when the tool was offered: the tool
description is what asks for ``[n]`` markers. A marker naming no source is kept as a
dangling ``Citation`` with None fields.

A turn's ``answer`` is the text of all its model answers (those before tool calls too),
the non-empty ones joined by a blank line; its ``usage`` sums the counts of those answers.
The retriever is borrowed: ``close`` does not close it.

``conversation_timeout_s`` bounds the whole conversation: each model request is given at
most the time left, and the deadline is checked before each search (a search already under
way is bounded by the retrieval adapter's own ``timeout_s``).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal, Self

from pydantic import Field

from pytest_ragv2.systems.base import HttpAdapter, Retriever, env_secret, headers_from_env
from pytest_ragv2.systems.chat_limits import ChatAdapterConfig, Deadline
from pytest_ragv2.systems.config import (
    CALL_TIMEOUT_MAX_S,
    K_MAX,
    RetryPolicy,
    ServiceUrl,
    seconds_field,
)
from pytest_ragv2.systems.failure import AdapterFailure
from pytest_ragv2.systems.kb_tool import (
    SEARCH_TOOL,
    SEARCH_TOOL_NAME,
    numbered,
    render_error,
    render_sources,
    resolve_citations,
)
from pytest_ragv2.systems.openai_wire import AnswerDraft, request_answer
from pytest_ragv2.systems.outputs import Exchange, RetrievalResult, RetrievedItem, RunError
from pytest_ragv2.systems.query_env import query_env_field, query_from_env
from pytest_ragv2.systems.secret_policy import redact_url, scrub, secret_values, url_secrets
from pytest_ragv2.systems.transcripts import ChatTurn, ToolCall, Transcript, run_conversation

DEFAULT_SEARCH_K = 10  # when neither search_k nor the retrieval adapter says how many


class OpenAIChatConfig(ChatAdapterConfig):
    """Any OpenAI-compatible ``POST {url}/chat/completions`` (llama.cpp, vLLM, Ollama, ...)."""

    adapter: Literal["openai-chat"]
    url: ServiceUrl = Field(description='base URL, e.g. "http://host:8080/v1"')
    model: str
    temperature: float = Field(default=0.0, ge=0.0, le=2.0, allow_inf_nan=False)
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
        default=4,
        ge=1,
        le=64,
        description="model answers with tool calls the harness runs, per turn",
    )
    max_tool_calls_per_round: int = Field(
        default=16,
        ge=1,
        le=256,
        description="search calls one model answer may ask for; an answer with more is the "
        "turn's limit error, none of its calls run",
    )
    search_k: int | None = Field(
        default=None,
        ge=1,
        le=K_MAX,
        description="sources per search; None: the retrieval adapter's k",
    )
    system_prompt: str | None = None
    max_tokens: int | None = Field(default=None, ge=1)
    api_key_env: str | None = Field(
        default=None, description="environment variable holding the key sent as Bearer token"
    )
    query_env: dict[str, str] = query_env_field()
    headers_env: dict[str, str] = Field(
        default_factory=dict, description="header name -> environment variable name"
    )
    timeout_s: float = seconds_field(
        120.0, CALL_TIMEOUT_MAX_S, "per try; bounds a whole streamed answer too"
    )
    retry: RetryPolicy = Field(default_factory=RetryPolicy)

    @property
    def completions_url(self) -> str:
        return self.url.rstrip("/") + "/chat/completions"

    @property
    def models_url(self) -> str:
        return self.url.rstrip("/") + "/models"

    def searches_with_retrieval(self) -> bool:
        return self.knowledge_base == "tool"

    def answering_from_prompt(self, system_prompt: str) -> Self:
        return self.model_copy(update={"knowledge_base": "none", "system_prompt": system_prompt})


@dataclass(slots=True)
class _Conversation:
    """What one ``converse`` carries from turn to turn."""

    messages: list[dict[str, Any]]
    sources: list[RetrievedItem] = field(default_factory=list)  # rank = source number
    deadline: Deadline | None = None


@dataclass(slots=True)
class _TurnState:
    """What one turn has gathered so far (kept when it fails half way)."""

    drafts: list[_Draft] = field(default_factory=list)  # one per model answer
    tool_calls: list[ToolCall] = field(default_factory=list)  # of the finished rounds
    evidence: list[RetrievedItem] = field(default_factory=list)
    exchanges: list[Exchange] = field(default_factory=list)

    def answer(self) -> str:
        return "\n\n".join(text for draft in self.drafts if (text := draft.answer()))

    def usage(self) -> dict[str, int]:
        total: dict[str, int] = {}
        for draft in self.drafts:
            for name, count in draft.usage.items():
                total[name] = total.get(name, 0) + count
        return total


class OpenAIChat(HttpAdapter):
    def __init__(
        self, name: str, config: OpenAIChatConfig, retriever: Retriever | None = None
    ) -> None:
        super().__init__(config.timeout_s, config.url)
        self.name = name
        self.config = config
        self.retriever = retriever if config.knowledge_base == "tool" else None
        self.search_k = config.search_k or _retriever_k(retriever)

    def converse(self, prompts: Sequence[str]) -> Transcript:
        conversation = _Conversation(messages=[], deadline=self.config.conversation_deadline())
        if self.config.system_prompt is not None:
            conversation.messages.append({"role": "system", "content": self.config.system_prompt})

        def send(number: int, prompt: str) -> ChatTurn:
            conversation.messages.append({"role": "user", "content": prompt})
            return self._turn(prompt, conversation)

        return run_conversation(prompts, send)

    def _turn(self, prompt: str, conversation: _Conversation) -> ChatTurn:
        state = _TurnState()
        error: RunError | None = None
        secrets: list[str] = []
        started = time.perf_counter()
        try:
            headers = self._headers()
            query = query_from_env(self.config.query_env)
            secrets = secret_values(
                [*headers.values(), *query.values(), *url_secrets(self.config.url)]
            )
            error = self._rounds(conversation, state, headers, secrets)
        except AdapterFailure as failure:
            error = failure.error
        except Exception as exc:  # an adapter bug must cost one run, not the session
            message = scrub(f"{type(exc).__name__}: {exc}", secrets)
            error = RunError(kind="internal", message=message)
        latency_s = time.perf_counter() - started
        answer = scrub(state.answer(), secrets)
        tool_calls = list(state.tool_calls)
        if state.drafts and not state.drafts[-1].tools_run:
            tool_calls += state.drafts[-1].tool_calls()  # the last answer's calls, not run
        return ChatTurn(
            prompt=prompt,
            answer=answer,
            tool_calls=tool_calls,
            citations=(resolve_citations(answer, conversation.sources) if self.retriever else []),
            latency_s=latency_s,
            usage=state.usage(),
            error=error,
            exchanges=state.exchanges,
            finish_reason=state.drafts[-1].finish_reason if state.drafts else None,
            evidence=state.evidence,
        )

    def _rounds(
        self,
        conversation: _Conversation,
        state: _TurnState,
        headers: dict[str, str],
        secrets: list[str],
    ) -> RunError | None:
        """Ask the model, run its searches, ask again... until it answers; the turn's error."""
        messages = conversation.messages
        rounds = 0
        while True:
            draft = _Draft()
            state.drafts.append(draft)
            request_answer(
                self.client,
                draft,
                url=self.config.completions_url,
                secret_query=query_from_env(self.config.query_env),
                body=self._request_body(list(messages)),  # a copy: the exchange keeps it as sent
                stream=self.config.stream,
                headers=headers,
                secrets=secrets,
                exchanges=state.exchanges,
                retry=self.config.retry,
                max_bytes=self.config.max_response_bytes,
                timeout_s=self.config.timeout_s,
                deadline=conversation.deadline,
            )
            calls = draft.tool_calls()
            if not calls and not draft.has_content:
                # content null (or never streamed) and nothing to call: no answer was given,
                # which is the service's failure, not an empty answer to score
                raise AdapterFailure(
                    "malformed",
                    f"POST {redact_url(self.config.completions_url)}: the answer has no "
                    "content and no tool call",
                )
            if not calls or self.retriever is None:
                break
            if any(call.name != SEARCH_TOOL_NAME for call in calls):
                break  # the harness cannot run them: recorded without result
            if rounds == self.config.max_tool_rounds:
                return RunError(
                    kind="limit",
                    message=f"the model still called tools after max_tool_rounds = "
                    f"{self.config.max_tool_rounds} rounds of knowledge-base searches",
                )
            if len(calls) > self.config.max_tool_calls_per_round:
                return RunError(
                    kind="limit",
                    message=f"one answer asked for {len(calls)} searches, over "
                    f"max_tool_calls_per_round = {self.config.max_tool_calls_per_round}; "
                    "none was run",
                )
            rounds += 1
            draft.tools_run = True
            messages.append(_assistant_tool_message(draft))
            for position, call in enumerate(calls):
                deadline = conversation.deadline
                if deadline is not None and deadline.passed():
                    state.tool_calls.extend(calls[position:])  # not run: without result
                    raise AdapterFailure("timeout", deadline.message(f"before search {call.id}"))
                result = self._search(call, conversation, state, secrets)
                state.tool_calls.append(replace(call, result=result))
                messages.append({"role": "tool", "tool_call_id": call.id, "content": result})
        messages.append({"role": "assistant", "content": scrub(draft.answer(), secrets)})
        return None

    def _search(
        self,
        call: ToolCall,
        conversation: _Conversation,
        state: _TurnState,
        secrets: list[str],
    ) -> str:
        """Run one ``search_knowledge_base`` call; the tool message content (JSON text)."""
        assert self.retriever is not None
        query = call.arguments.get("query")
        if not isinstance(query, str) or not query.strip():
            return render_error('the arguments must be an object with a non-empty "query" string')
        request = {
            "tool": SEARCH_TOOL_NAME,
            "tool_call_id": call.id,
            "query": query,
            "k": self.search_k,
            "retriever": self.retriever.name,
        }
        started = time.perf_counter()
        try:
            result = self.retriever.retrieve(query, self.search_k)
        except Exception as exc:  # the Retriever contract says never; a bug costs one search
            error = RunError(kind="internal", message=f"{type(exc).__name__}: {exc}")
            result = RetrievalResult([], time.perf_counter() - started, error)
        sources = numbered(result.items, start=len(conversation.sources) + 1)
        response = {
            "items": [item.to_json() for item in sources],
            "error": None if result.error is None else result.error.to_json(),
            "exchanges": [exchange.to_json() for exchange in result.exchanges],
        }
        state.exchanges.append(
            Exchange(
                request=scrub(request, secrets),
                status_code=None,
                response_body=scrub(response, secrets),
                latency_s=result.latency_s,
            )
        )
        if result.error is not None:
            return render_error(f"{result.error.kind}: {result.error.message}")
        conversation.sources.extend(sources)
        state.evidence.extend(sources)
        return render_sources(result.items, start=sources[0].rank if sources else 1)

    def _headers(self) -> dict[str, str]:
        headers = headers_from_env(self.config.headers_env)
        if self.config.api_key_env is not None:
            key = env_secret(self.config.api_key_env, "API key")
            headers["Authorization"] = f"Bearer {key}"
        return headers

    def _request_body(self, messages: list[dict[str, Any]]) -> dict[str, Any]:
        config = self.config
        body: dict[str, Any] = {
            "model": config.model,
            "messages": messages,
            "temperature": config.temperature,
            "stream": config.stream,
        }
        tools = list(config.tools)
        if self.retriever is not None:
            others = [tool for tool in tools if _tool_name(tool) != SEARCH_TOOL_NAME]
            tools = [SEARCH_TOOL, *others]
        if tools:
            body["tools"] = tools
        if config.max_tokens is not None:
            body["max_tokens"] = config.max_tokens
        if config.stream and config.stream_include_usage:
            body["stream_options"] = {"include_usage": True}
        return body


@dataclass(slots=True)
class _Draft(AnswerDraft):
    """One model answer; read as OpenAI documents the wire (``openai_wire.AnswerDraft``)."""

    tools_run: bool = False  # its tool calls were run by the harness (and recorded so)


def _retriever_k(retriever: Retriever | None) -> int:
    """The retrieval adapter's configured ``k`` (every built-in adapter's config has one)."""
    k = getattr(getattr(retriever, "config", None), "k", None)
    return k if isinstance(k, int) and k >= 1 else DEFAULT_SEARCH_K


def _tool_name(tool: dict[str, Any]) -> Any:
    function = tool.get("function")
    return function.get("name") if isinstance(function, dict) else None


def _assistant_tool_message(draft: _Draft) -> dict[str, Any]:
    """The model's answer with tool calls, as the history must carry it."""
    calls = [
        {
            "id": call.id,
            "type": "function",
            "function": {"name": call.name, "arguments": tool.raw_arguments()},
        }
        for (_, tool), call in zip(draft.indexed_tools(), draft.tool_calls(), strict=True)
    ]
    return {"role": "assistant", "content": draft.answer() or None, "tool_calls": calls}
