"""The demo server's LibreChat-shaped Agents API, for the ``librechat-agents`` adapter offline::

    GET  /librechat/<v>/api/agents/v1/models            → the one agent, "agent_demo_<v>"
    GET  /librechat/<v>/api/agents/v1/models/<agent id> → that agent, or 404 as LibreChat
    POST /librechat/<v>/api/agents/v1/chat/completions  {"model", "messages", "stream"}

An agent with ``file_search`` over the demo corpus: the demo answer model is offered
LibreChat's ``file_search`` tool; each call searches path ``<v>`` (top 10 over every
indexed file), the model reads the results in the text form LibreChat's tool gives it (``File:``
/ ``Anchor: \\ue202turn0file<i>`` / ``Relevance:`` / ``Content:`` blocks) and cites with those
anchors. The answer is written the way LibreChat v0.8.7 writes it (recorded in
``tests/fixtures/librechat``): a role chunk; the k-th call opened at ``index`` k + 1 with its
argument slices at ``index`` k; per call one ``event: attachment`` frame ``{"type":
"file_search", "file_search": {"sources": [...]}, "toolCallId", "messageId",
"conversationId", "name"}`` whose sources (``type``, ``fileId``, ``content``, ``fileName``,
``relevance`` = 1 − distance, ``pages`` 0-based with page 0 sent as ``[]``,
``pageRelevance``, ``metadata``) are the results capped at 5 per file and sorted by
relevance; the content in word-sized chunks; a final chunk with an empty delta,
``finish_reason`` "stop" and ``usage``; ``data: [DONE]``. Not streamed: a
``chat.completion`` whose executed ``tool_calls`` have empty ``arguments``, as v0.8.7's.
Errors as v0.8.7 answers them: 401 without a Bearer key (any key is accepted), 404 for
another agent id, 400 for no messages.

What it does not copy: LibreChat's relevance threshold (0.45 of rag_api's cosine; the demo's
scores are not on that scale), the attachment LibreChat can lose at the end of a stream,
and its all-zero usage (the demo counts whitespace tokens over both model calls).
"""

from __future__ import annotations

import json
import re
import time
import uuid
import zlib
from typing import TYPE_CHECKING, Any

from ragv2_demo.answer import answer as demo_answer
from ragv2_demo.server_base import HandlerBase
from ragv2_demo.server_chat import _content_pieces, _sse, _usage

if TYPE_CHECKING:
    from ragv2_demo.answer_language import Variant
    from ragv2_demo.chunks import Chunk

_LIBRECHAT_ROUTE = re.compile(
    r"^/librechat/(v1|v2)/api/agents/v1/(chat/completions|models)(?:/([^/]+))?$"
)
FILE_SEARCH_TOOL: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "file_search",
        "description": "Performs semantic search across attached file_search documents.",
        "parameters": {
            "type": "object",
            "properties": {"query": {"type": "string"}},
            "required": ["query"],
        },
    },
}
TOP_K = 10  # the tool's list, as LibreChat's
PER_FILE = 5  # the attachment's cap per file (maxCitationsPerFile)
_FILE_TYPES = {
    ".pdf": "application/pdf",
    ".docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    ".json": "application/json",
    ".md": "text/markdown",
    ".xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
}


def agent_id(variant: str) -> str:
    return f"agent_demo_{variant}"


class LibreChatRoutes(HandlerBase):
    def _librechat(self, path: str, route: re.Match[str], raw: bytes) -> None:
        started = time.monotonic()
        try:
            self._librechat_answer(route, raw)
        except OSError:
            self.close_connection = True  # the client went away
        finally:
            with self.server.lock:
                self.server.request_log.append((path, started, time.monotonic()))

    def _librechat_answer(self, route: re.Match[str], raw: bytes) -> None:
        variant: Variant = "v1" if route.group(1) == "v1" else "v2"
        agent = agent_id(variant)
        if not (self.headers.get("Authorization") or "").startswith("Bearer "):
            message = "Missing or invalid Authorization header. Expected: Bearer <api_key>"
            self._send_json(401, _error(message, "missing_api_key"))
            return
        if route.group(2) == "models":
            asked = route.group(3)
            if asked is None:
                self._send_json(200, {"object": "list", "data": [_agent_card(agent, variant)]})
            elif asked == agent:  # the preflight's question: is the configured agent there
                self._send_json(200, _agent_card(agent, variant))
            else:
                message = f"Model not found: {asked}"
                self._send_json(404, _error(message, "model_not_found", param=True))
            return
        if route.group(3) is not None:
            self._send_json(404, _error("not found", None))
            return
        if self.command != "POST":
            self._send_json(405, _error("use POST", None))
            return
        try:
            request = json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            self._send_json(400, _error(f"the body is not JSON: {exc}", None))
            return
        model = request.get("model") if isinstance(request, dict) else None
        if model != agent:
            self._send_json(404, _error(f"Agent not found: {model}", "model_not_found"))
            return
        messages = request.get("messages")
        if not isinstance(messages, list) or not messages:
            self._send_json(400, _error("messages array cannot be empty", None))
            return
        messages = [m for m in messages if isinstance(m, dict)]
        turn = _run_agent(self, variant, messages)
        if request.get("stream") is True:
            self._librechat_stream(agent, turn)
        else:
            self._send_json(200, _completion(agent, turn))

    def _librechat_stream(self, agent: str, turn: _Turn) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        frames = [_chunk(agent, turn, {"role": "assistant"})]
        calls = zip(turn.calls, turn.attachments, strict=True)
        for position, (call, attachment) in enumerate(calls):
            opening = {
                "index": position + 1,  # LibreChat's run-step index
                "id": call["id"],
                "type": "function",
                "function": {"name": "file_search", "arguments": ""},
            }
            frames.append(_chunk(agent, turn, {"tool_calls": [opening]}))
            arguments = call["function"]["arguments"]
            half = len(arguments) // 2
            for piece in (arguments[:half], arguments[half:]):
                slice_ = {"index": position, "function": {"arguments": piece}}
                frames.append(_chunk(agent, turn, {"tool_calls": [slice_]}))
            if attachment is not None:
                data = json.dumps(attachment, ensure_ascii=False).encode("utf-8")
                frames.append(b"event: attachment\ndata: " + data + b"\n\n")
        for piece in _content_pieces(turn.content):
            frames.append(_chunk(agent, turn, {"content": piece}))
        frames.append(_chunk(agent, turn, {}, "stop", turn.usage))
        frames.append(b"data: [DONE]\n\n")
        for payload in frames:
            self.wfile.write(f"{len(payload):x}\r\n".encode("ascii") + payload + b"\r\n")
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()


class _Turn:
    """One answer of the demo agent: its calls, their attachments, the text, the usage."""

    def __init__(self, conversation_id: str, message_id: str) -> None:
        self.conversation_id = conversation_id
        self.message_id = message_id
        self.calls: list[dict[str, Any]] = []
        self.attachments: list[dict[str, Any] | None] = []
        self.content = ""
        self.usage: dict[str, int] = {}


def _run_agent(handler: HandlerBase, variant: Variant, messages: list[dict[str, Any]]) -> _Turn:
    digest = zlib.crc32(json.dumps(messages, sort_keys=True, ensure_ascii=False).encode())
    turn = _Turn(f"conv-{digest:08x}", "chatcmpl-" + uuid.uuid4().hex[:21])
    tools = [FILE_SEARCH_TOOL]
    first = demo_answer(messages, tools, variant)
    usage = _usage(messages, first)
    turn.calls = [call for call in first.get("tool_calls") or [] if isinstance(call, dict)]
    if not turn.calls:
        turn.content = str(first.get("content") or "")
        turn.usage = usage
        return turn
    results = []
    retriever = handler.server.index.path(variant)
    for call in turn.calls:
        query = json.loads(call["function"]["arguments"]).get("query", "")
        hits = retriever.search(str(query), TOP_K, None)
        results.append({"role": "tool", "tool_call_id": call["id"], "content": _tool_text(hits)})
        turn.attachments.append(_attachment(turn, call["id"], hits) if hits else None)
    followed = [*messages, first, *results]
    second = demo_answer(followed, tools, variant)
    turn.content = str(second.get("content") or "")
    more = _usage(followed, second)
    turn.usage = {key: usage[key] + more[key] for key in usage}
    return turn


def _tool_text(hits: list[tuple[Chunk, float]]) -> str:
    """The result as LibreChat's ``file_search`` tool shows it to the model."""
    if not hits:
        return "No results found or errors occurred while searching the files."
    return "\n---\n".join(
        f"File: {chunk.filename}\nAnchor: \\ue202turn0file{n} ({chunk.filename})\n"
        f"Relevance: {1.0 - distance:.4f}\nContent: {chunk.text}\n"
        for n, (chunk, distance) in enumerate(hits)
    )


def _attachment(turn: _Turn, call_id: str, hits: list[tuple[Chunk, float]]) -> dict[str, Any]:
    per_file: dict[str, int] = {}
    sources = []
    for chunk, distance in hits:
        per_file[chunk.file_id] = per_file.get(chunk.file_id, 0) + 1
        if per_file[chunk.file_id] <= PER_FILE:
            sources.append(_source(chunk, 1.0 - distance))
    sources.sort(key=lambda source: -float(source["relevance"]))
    return {
        "type": "file_search",
        "file_search": {"sources": sources},
        "toolCallId": call_id,
        "messageId": turn.message_id,
        "conversationId": turn.conversation_id,
        "name": f"file_search_file_search_results_{call_id}",
    }


def _source(chunk: Chunk, relevance: float) -> dict[str, Any]:
    page = chunk.page - 1 if chunk.page is not None else 0  # rag_api's 0-based page
    suffix = chunk.filename[chunk.filename.rfind(".") :].lower()
    return {
        "type": "file",
        "fileId": chunk.file_id,
        "content": chunk.text,
        "fileName": chunk.filename,
        "relevance": relevance,
        "pages": [page] if page else [],  # LibreChat: ``page || null``, so page 0 is lost
        "pageRelevance": {str(page): relevance} if page else {},
        "metadata": {
            "storageType": "local",
            "fileType": _FILE_TYPES.get(suffix, "application/octet-stream"),
            "fileBytes": len(chunk.text.encode("utf-8")),
        },
    }


def _chunk(
    agent: str,
    turn: _Turn,
    delta: dict[str, Any],
    finish: str | None = None,
    usage: dict[str, int] | None = None,
) -> bytes:
    frame: dict[str, Any] = {
        "id": turn.message_id,
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": agent,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }
    if usage is not None:
        frame["usage"] = usage
    return _sse(frame)


def _completion(agent: str, turn: _Turn) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": turn.content}
    if turn.calls:
        message["tool_calls"] = [
            {
                "id": call["id"],
                "type": "function",
                "function": {"name": "file_search", "arguments": ""},  # as v0.8.7 sends them
            }
            for call in turn.calls
        ]
    return {
        "id": turn.message_id,
        "object": "chat.completion",
        "created": int(time.time()),
        "model": agent,
        "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
        "usage": turn.usage,
    }


def _agent_card(agent: str, variant: str) -> dict[str, Any]:
    return {
        "id": agent,
        "object": "model",
        "created": 0,
        "owned_by": "librechat",
        "permission": [],
        "root": agent,
        "parent": None,
        "name": f"demo {variant} agent",
        "description": "the demo answer model with file_search over the demo corpus",
        "provider": "ragv2-demo",
    }


def _error(message: str, code: str | None, *, param: bool = False) -> dict[str, Any]:
    """LibreChat's error body; some of its routes add ``"param": null``, others do not."""
    error: dict[str, Any] = {"message": message, "type": "invalid_request_error"}
    if param:
        error["param"] = None
    error["code"] = code
    return {"error": error}
