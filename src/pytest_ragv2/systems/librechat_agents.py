"""LibreChat's Agents API (OpenAI-compatible, beta): ``POST {url}/api/agents/v1/chat/completions``.

The request is ``{"model": <agent_id>, "messages": [...], "stream": ...}``. No
``conversation_id`` is sent, so LibreChat starts a fresh conversation every time; a
multi-turn case is carried, as with ``openai_chat``, by sending the growing user/assistant
history. A failed turn stops the conversation, later turns are recorded ``ran=False``, and
nothing raises out of ``converse``.

Wire shapes, as read from LibreChat's own sources (danny-avila/LibreChat, 2025-2026):
- ``api/server/controllers/agents/openai.js`` and ``packages/api/src/agents/openai/handlers.ts``:
  a stream opens with a ``{"delta": {"role": "assistant"}}`` chunk, sends text as
  ``{"delta": {"content": ...}}`` chunks and tool calls as OpenAI ``delta.tool_calls``
  fragments (id and name first, then argument slices); it ends with a chunk whose delta is
  empty, ``finish_reason`` ``"stop"`` (``"tool_calls"`` if no text came) and ``usage``
  (``prompt_tokens``, ``completion_tokens``, ``total_tokens``), then ``data: [DONE]``. An
  error after the stream started arrives as a content chunk ``"\\n\\nError: <message>"``
  *with* ``finish_reason`` ``"stop"`` (ordinary content chunks never carry one), then
  ``[DONE]``: this adapter records it as the turn's error, not as answer text.
  Tool results are not streamed.
- ``api/server/controllers/agents/callbacks.js`` (``writeAttachment``): when a
  ``file_search`` call ends, ``event: attachment`` / ``data: {"type": "file_search",
  "file_search": {"sources": [...]}, "toolCallId", "messageId", "conversationId", "name"}``
  is written between the chunks.
- ``api/server/services/Files/Citations/index.js`` (``processFileCitations``): the
  attachment's sources are the tool's results filtered (``relevance >= minRelevanceScore``,
  default 0.45), capped per file and re-sorted by relevance.
- ``api/app/clients/tools/util/fileSearch.js``: the tool shows the model its top 10
  results, each with the anchor ``\\ue202turn0file<i>`` where ``i`` is the position in
  *that* list; each source is ``{"type": "file", "fileId", "fileName", "content",
  "relevance": 1 - distance, "pages": [page] or [], "pageRelevance": {page: relevance}}``
  with ``page = metadata.page || null`` taken straight from rag_api, whose PDF pages are
  **0-based**. So ``pages`` is 0-based here (``pages_base: 0``), and the first page of a
  PDF (page 0, falsy) arrives as ``pages: []``, i.e. page unknown. LibreChat's own client
  shows these numbers unconverted.
- ``client/src/utils/citations.ts``: markers are ``\\ue202turn{T}{type}{i}`` (single),
  ``\\ue200 ... \\ue201`` (a composite group of singles), ``\\ue203 text \\ue204`` (a
  highlighted span, the anchor follows it); every marker character also occurs in its
  escaped text form, a literal backslash followed by ``ue202`` etc.
- ``client/src/hooks/Messages/useSearchResultsByTurn.ts``: the client maps ``turn{T}`` to
  the T-th ``file_search`` attachment of the message.

- ``fileName``: the tool takes the last part of rag_api's ``source``
  (``docInfo.metadata.source.split('/').pop()``), i.e. rag_api's stored copy,
  ``<stem>_<32 hex><suffix>`` since 2026-03; ``enhanceSourcesWithMetadata`` then replaces it
  with the upload's name from LibreChat's database (and adds ``metadata``: ``storageType``,
  ``fileType``, ``fileBytes``), keeping the stored-copy name when that lookup fails.
- ``fileId`` is LibreChat's own id of the upload (a UUID it draws), never the name.

What LibreChat v0.8.7 really sent (tests/fixtures/librechat, recorded against rag_api
4985b37 with an OpenAI-compatible custom endpoint as the agent's model):
- the opening fragment of the k-th tool call carries the run step's index (k + 1) and its
  argument slices index k, so a second call's slices come at the first call's opening
  index: ``_Draft.tool_slot`` gives each slice to the right call;
- a streamed answer ends without awaiting the citation processing (``openai.js`` calls
  ``res.end()`` and only then waits for ``artifactPromises``), so the ``attachment`` frame
  can be lost; none is made either when no source reaches ``minRelevanceScore``. The turn
  then has no evidence, its citations dangle, and a warning says which ``file_search``
  call went without one;
- ``usage`` is all zeros when the agent's model reported no usage (a custom endpoint is
  called without ``stream_options``): recorded as no usage, with a warning, not as zero
  tokens;
- a non-streamed answer's ``tool_calls`` carry empty ``arguments`` (the argument slices went
  to the other index), read as ``{}``.

Mapping onto a ``ChatTurn`` (streaming):
- ``evidence``: every source of every ``file_search`` attachment, in the order delivered,
  ranked 1..n; ``text`` = ``content``, ``file_id`` = ``fileId`` mapped back through
  ``file_id_map``, ``filename`` = the original name read from ``fileName`` as from a
  rag_api ``source`` (``upload_names.filename_from_source``), ``page`` = first of ``pages``
  made 1-based, ``score`` = ``relevance``; the other source keys (``fileName`` and
  ``fileId`` as sent) and the ``toolCallId`` go to ``metadata``.
- ``tool_calls``: the streamed calls; a call's ``result`` is the JSON text
  ``{"sources": [...]}`` of the attachment(s) carrying its id (what LibreChat reported of
  the result, after its citation filter), else ``None``.
- ``citations``: one per ``file`` anchor in the answer (other anchor types, e.g. web
  ``search``, cite no knowledge-base file and are ignored). ``answer`` keeps the markers;
  ``strip_citation_markers`` gives the clean text. See ``resolve_citations`` for how an
  anchor is matched to a source (its index can disagree with the attachment order).
Non-streaming: a plain ``chat.completion``; its ``tool_calls`` were executed server side
(results unknown) and it carries no attachments, so no evidence and no citations.
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal
from urllib.parse import quote

from pydantic import Field

from pytest_ragv2.systems.base import HttpAdapter, env_secret, excerpt, headers_from_env
from pytest_ragv2.systems.chat_limits import ChatAdapterConfig, Deadline
from pytest_ragv2.systems.config import CALL_TIMEOUT_MAX_S, RetryPolicy, ServiceUrl, seconds_field
from pytest_ragv2.systems.failure import AdapterFailure
from pytest_ragv2.systems.field_values import as_int
from pytest_ragv2.systems.librechat_citations import resolve_citations, strip_citation_markers
from pytest_ragv2.systems.openai_wire import AnswerDraft, request_answer
from pytest_ragv2.systems.outputs import Exchange, RetrievedItem, RunError
from pytest_ragv2.systems.query_env import query_env_field, query_from_env
from pytest_ragv2.systems.secret_policy import scrub, secret_values, url_secrets
from pytest_ragv2.systems.transcripts import (
    ChatTurn,
    ToolCall,
    Transcript,
    run_conversation,
)
from pytest_ragv2.systems.upload_names import filename_from_source

__all__ = [
    "LibreChatAgents",
    "LibreChatAgentsConfig",
    "resolve_citations",
    "source_item",
    "strip_citation_markers",
]

COMPLETIONS_PATH = "/api/agents/v1/chat/completions"
FILE_SEARCH = "file_search"
ATTACHMENT_EVENT = "attachment"
# How LibreChat reports an error after the stream has started (openai.js, catch block).
STREAM_ERROR_PREFIX = "\n\nError: "


class LibreChatAgentsConfig(ChatAdapterConfig):
    """LibreChat's OpenAI-compatible Agents API; the agent id is sent as ``model``."""

    adapter: Literal["librechat-agents"]
    url: ServiceUrl = Field(description='base URL of LibreChat, e.g. "http://host:3080"')
    agent_id: str = Field(description='the agent\'s id ("agent_..."), sent as "model"')
    stream: bool = Field(
        default=True, description="only a streamed answer carries file-search sources"
    )
    api_key_env: str | None = Field(
        default=None, description="environment variable holding the API key (Bearer token)"
    )
    query_env: dict[str, str] = query_env_field()
    headers_env: dict[str, str] = Field(
        default_factory=dict, description="header name -> environment variable name"
    )
    pages_base: Literal[0, 1] = Field(
        default=0, description="numbering of the sources' pages (LibreChat passes rag_api's 0)"
    )
    file_id_map: dict[str, str] = Field(
        default_factory=dict,
        description="the gold's file id -> LibreChat's file id of that upload (a UUID per "
        "upload); the sources' file ids are mapped back to the gold's",
    )
    timeout_s: float = seconds_field(
        120.0, CALL_TIMEOUT_MAX_S, "per try; bounds a whole streamed answer too"
    )
    retry: RetryPolicy = Field(default_factory=RetryPolicy)

    @property
    def completions_url(self) -> str:
        return self.url.rstrip("/") + COMPLETIONS_PATH

    @property
    def models_url(self) -> str:
        return self.completions_url.rsplit("/chat/completions", 1)[0] + "/models"

    @property
    def model_url(self) -> str:
        """``GET`` answers the agent as a model: 404 for an unknown id, 403 without access."""
        return f"{self.models_url}/{quote(self.agent_id, safe='')}"


class LibreChatAgents(HttpAdapter):
    def __init__(self, name: str, config: LibreChatAgentsConfig) -> None:
        super().__init__(config.timeout_s, config.url)
        self.name = name
        self.config = config

    def converse(self, prompts: Sequence[str]) -> Transcript:
        messages: list[dict[str, Any]] = []
        deadline = self.config.conversation_deadline()

        def send(number: int, prompt: str) -> ChatTurn:
            messages.append({"role": "user", "content": prompt})
            turn = self._turn(prompt, list(messages), deadline)  # a copy: the exchange keeps it
            if turn.error is None:
                messages.append({"role": "assistant", "content": turn.answer})
            return turn

        return run_conversation(prompts, send)

    def _turn(
        self, prompt: str, messages: list[dict[str, Any]], deadline: Deadline | None
    ) -> ChatTurn:
        draft = _Draft()
        exchanges: list[Exchange] = []
        error: RunError | None = None
        secrets: list[str] = []
        started = time.perf_counter()
        try:
            headers = self._headers()
            query = query_from_env(self.config.query_env)
            secrets = secret_values(
                [*headers.values(), *query.values(), *url_secrets(self.config.url)]
            )
            request_answer(
                self.client,
                draft,
                url=self.config.completions_url,
                secret_query=query,
                body={
                    "model": self.config.agent_id,
                    "messages": messages,
                    "stream": self.config.stream,
                },
                stream=self.config.stream,
                headers=headers,
                secrets=secrets,
                exchanges=exchanges,
                retry=self.config.retry,
                max_bytes=self.config.max_response_bytes,
                timeout_s=self.config.timeout_s,
                deadline=deadline,
            )
        except AdapterFailure as failure:
            error = failure.error
        except Exception as exc:  # an adapter bug must cost one run, not the session
            error = RunError(
                kind="internal", message=scrub(f"{type(exc).__name__}: {exc}", secrets)
            )
        latency_s = time.perf_counter() - started
        answer = scrub(draft.answer(), secrets)
        try:
            evidence, groups = self._evidence(draft)
            tool_calls = draft.tool_calls()
            usage, warnings = _reported_usage(draft.usage)
            if self.config.stream and error is None:
                warnings.extend(_unreported_searches(tool_calls))
            return ChatTurn(
                prompt=prompt,
                answer=answer,
                tool_calls=tool_calls,
                citations=resolve_citations(answer, groups) if self.config.stream else [],
                latency_s=latency_s,
                usage=usage,
                error=error,
                exchanges=exchanges,
                finish_reason=draft.finish_reason,
                evidence=evidence,
                warnings=warnings,
            )
        except Exception as exc:  # a mapping bug: keep the answer and the wire record
            if error is None:
                message = scrub(f"{type(exc).__name__}: {exc}", secrets)
                error = RunError(kind="internal", message=message)
            return ChatTurn(
                prompt=prompt,
                answer=answer,
                latency_s=latency_s,
                error=error,
                exchanges=exchanges,
                finish_reason=draft.finish_reason,
            )

    def _evidence(self, draft: _Draft) -> tuple[list[RetrievedItem], list[list[RetrievedItem]]]:
        """Every attachment source ranked in delivery order, and the same items per attachment."""
        groups: list[list[RetrievedItem]] = []
        gold_ids = {service: gold for gold, service in self.config.file_id_map.items()}
        rank = 0
        for attachment in draft.attachments:
            group = []
            for source in attachment.sources:
                rank += 1
                item = source_item(rank, source, self.config.pages_base, attachment.tool_call_id)
                gold = gold_ids.get(item.file_id or "")
                group.append(item if gold is None else dataclasses.replace(item, file_id=gold))
            groups.append(group)
        return [item for group in groups for item in group], groups

    def _headers(self) -> dict[str, str]:
        headers = headers_from_env(self.config.headers_env)
        if self.config.api_key_env is not None:
            key = env_secret(self.config.api_key_env, "LibreChat API key")
            headers["Authorization"] = f"Bearer {key}"
        return headers


def _reported_usage(usage: dict[str, int]) -> tuple[dict[str, int], list[str]]:
    """LibreChat sends zeros for every count when its model reported no usage: no figure
    is kept then (a prompt of zero tokens is not a count), and a warning says so."""
    if usage and not any(usage.values()):
        return {}, ["LibreChat reported 0 tokens everywhere (its model reported no usage)"]
    return usage, []


def _unreported_searches(tool_calls: Sequence[ToolCall]) -> list[str]:
    """A streamed ``file_search`` call whose attachment never arrived: LibreChat ends the
    stream without waiting for its citation processing, so the sources can be lost."""
    return [
        f"file_search call {call.id} got no attachment: its sources are unknown"
        for call in tool_calls
        if call.name == FILE_SEARCH and call.result is None
    ]


# ---------------------------------------------------------------------------------------
# What arrived of one answer


@dataclass(frozen=True, slots=True)
class _Attachment:
    tool_call_id: str | None
    sources: list[dict[str, Any]]


@dataclass(slots=True)
class _Draft(AnswerDraft):
    """One answer as LibreChat streams it: the OpenAI wire (``openai_wire.AnswerDraft``) plus
    ``file_search`` attachments, the error chunk and older releases' tool-call numbering."""

    attachments: list[_Attachment] = field(default_factory=list)  # file_search ones only
    server_error: str | None = None
    # stream index of id-less (argument) fragments -> the call they went to
    argument_slots: dict[int, int] = field(default_factory=dict)

    def tool_calls(self) -> list[ToolCall]:
        """In the order opened; a call's result is what its attachments reported."""
        results: dict[str, list[dict[str, Any]]] = {}
        for attachment in self.attachments:
            if attachment.tool_call_id is not None:
                results.setdefault(attachment.tool_call_id, []).extend(attachment.sources)
        calls = []
        for position, tool in enumerate(self.tools):
            sources = results.get(tool.id) if tool.id else None
            result = (
                None if sources is None else json.dumps({"sources": sources}, ensure_ascii=False)
            )
            calls.append(tool.to_call(f"call_{position}", result))
        return calls

    def tool_slot(self, index: int, fragment: dict[str, Any]) -> int:
        """Robust to LibreChat's run-step index and argument-delta index disagreeing.

        v0.8.7 opens the k-th call (0-based) at index k + 1 and sends its argument slices
        at index k, so with two calls the second call's slices arrive at the index the first
        call was opened at (older releases disagreed in other ways). Hence:

        - a fragment declaring a new id opens a new call, even at a used index;
        - an id-less fragment goes to the call earlier id-less fragments at its index went
          to; else to the call opened at its index, unless id-less fragments at another
          index already feed that call; else to the last call opened.
        """
        fragment_id = fragment.get("id") if isinstance(fragment.get("id"), str) else None
        slot = self.tool_slots.get(index)
        if fragment_id:
            if slot is None or self.tools[slot].id not in ("", fragment_id):
                return self.open_tool(index)
            return slot
        fed = self.argument_slots.get(index)
        if fed is not None:
            return fed
        if slot is None or slot in self.argument_slots.values():
            if not self.tools:
                slot = self.open_tool(index)
            else:
                slot = len(self.tools) - 1
                self.tool_slots.setdefault(index, slot)
        self.argument_slots[index] = slot
        return slot

    def add_message_tool_calls(self, raw_calls: list[Any]) -> None:
        """Read like streamed fragments: a call that is not an object is skipped."""
        for position, raw in enumerate(raw_calls):
            if isinstance(raw, dict):
                self.fold_tool_fragment({**raw, "index": position}, position)

    def fold_choice(self, reason: Any, delta: dict[str, Any]) -> None:
        content = delta.get("content")
        if (
            isinstance(content, str)
            and isinstance(reason, str)
            and content.startswith(STREAM_ERROR_PREFIX)
        ):
            self.server_error = content[len(STREAM_ERROR_PREFIX) :]
            return
        AnswerDraft.fold_choice(self, reason, delta)  # super() fails in a slots dataclass

    def take_frame(self, event: str, frame: Any, frames: list[Any], call: str) -> None:
        """An attachment is recorded as ``{"event": "attachment", "data": ...}``."""
        if event == ATTACHMENT_EVENT or _looks_like_attachment(frame):
            frames.append({"event": ATTACHMENT_EVENT, "data": frame})
            self.add_attachment(frame)
        else:
            AnswerDraft.take_frame(self, event, frame, frames, call)

    def at_done(self, call: str) -> None:
        if self.server_error is not None:
            raise AdapterFailure(
                "http_status",
                f"{call}: LibreChat reported an error mid-answer: {excerpt(self.server_error)}",
            )

    def add_attachment(self, attachment: Any) -> None:
        if not isinstance(attachment, dict) or attachment.get("type") != FILE_SEARCH:
            return  # web_search, ui_resources, generated files: no knowledge-base evidence
        payload = attachment.get(FILE_SEARCH)
        sources = payload.get("sources") if isinstance(payload, dict) else None
        if not isinstance(sources, list):
            return
        tool_call_id = attachment.get("toolCallId")
        self.attachments.append(
            _Attachment(
                tool_call_id=tool_call_id if isinstance(tool_call_id, str) else None,
                sources=[source for source in sources if isinstance(source, dict)],
            )
        )


def _looks_like_attachment(decoded: Any) -> bool:
    """An attachment whose ``event:`` line was lost (e.g. by a proxy): typed, no choices."""
    return (
        isinstance(decoded, dict)
        and "choices" not in decoded
        and isinstance(decoded.get("type"), str)
        and decoded["type"] in decoded
    )


def source_item(
    rank: int, source: dict[str, Any], pages_base: int, tool_call_id: str | None
) -> RetrievedItem:
    """One attachment source as a ``RetrievedItem`` (page made 1-based, the file name read
    from rag_api's stored name)."""
    content = source.get("content")
    pages = source.get("pages")
    first_page = as_int(pages[0]) if isinstance(pages, list) and pages else None
    relevance = source.get("relevance")
    metadata = {key: value for key, value in source.items() if key != "content"}
    if tool_call_id is not None:
        metadata["toolCallId"] = tool_call_id
    return RetrievedItem(
        rank=rank,
        text=content if isinstance(content, str) else "",
        file_id=_text(source.get("fileId")),
        filename=_original_name(source.get("fileName")),
        page=None if first_page is None else first_page + 1 - pages_base,
        score=(
            float(relevance)
            if isinstance(relevance, int | float) and not isinstance(relevance, bool)
            else None
        ),
        metadata=metadata,
    )


def _text(value: Any) -> str | None:
    return None if value is None or value == "" else str(value)


def _original_name(value: Any) -> str | None:
    """The uploaded file's name: LibreChat sends the basename of rag_api's ``source``."""
    name = _text(value)
    return None if name is None else filename_from_source(name)
