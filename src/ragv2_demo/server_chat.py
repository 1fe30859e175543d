"""The demo server's OpenAI-compatible chat routes: ``/chat/<v>/models`` and
``/chat/<v>/chat/completions``, streamed or not, answered by the demo answer model."""

from __future__ import annotations

import json
import re
import time
import uuid
from typing import TYPE_CHECKING, Any

from ragv2_demo.answer import answer as demo_answer
from ragv2_demo.server_base import HandlerBase
from ragv2_demo.server_faults import _Faults, _parse_faults

if TYPE_CHECKING:
    from ragv2_demo.answer_language import Variant

_CHAT_ROUTE = re.compile(r"^/chat/(v1|v2)(?:/fault/([^/]+))?/(chat/completions|models)$")


class ChatRoutes(HandlerBase):
    def _chat(self, path: str, route: re.Match[str], raw: bytes) -> None:
        started = time.monotonic()
        try:
            self._chat_answer(path, route, raw)
        except OSError:
            self.close_connection = True  # the client went away
        finally:
            with self.server.lock:
                self.server.request_log.append((path, started, time.monotonic()))

    def _chat_answer(self, path: str, route: re.Match[str], raw: bytes) -> None:
        variant: Variant = "v1" if route.group(1) == "v1" else "v2"
        faults = _Faults()
        if route.group(2) is not None:
            parsed = _parse_faults(route.group(2))
            if parsed is None:
                self._send_json(404, _openai_error(f"unknown fault spec {route.group(2)!r}"))
                return
            faults = parsed
        if self._before_answer(path, faults):
            return
        model = f"demo-{variant}"
        if route.group(3) == "models":
            if self.command != "GET":
                self._send_json(405, _openai_error("use GET"))
                return
            self._send_json(200, {"object": "list", "data": [_model_card(model)]})
            return
        if self.command != "POST":
            self._send_json(405, _openai_error("use POST"))
            return
        try:
            request = json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            self._send_json(400, _openai_error(f"the body is not JSON: {exc}"))
            return
        messages = request.get("messages") if isinstance(request, dict) else None
        if not isinstance(messages, list) or not all(isinstance(m, dict) for m in messages):
            self._send_json(400, _openai_error("'messages' must be a list of objects"))
            return
        tools = request.get("tools") or []
        if not isinstance(tools, list):
            self._send_json(400, _openai_error("'tools' must be a list"))
            return
        message = demo_answer(messages, [t for t in tools if isinstance(t, dict)], variant)
        usage = _usage(messages, message)
        model = str(request.get("model") or model)
        completion_id = "chatcmpl-" + uuid.uuid4().hex[:24]
        if request.get("stream"):
            options = request.get("stream_options")
            include_usage = isinstance(options, dict) and bool(options.get("include_usage"))
            self._stream(completion_id, model, message, usage if include_usage else None, faults)
            return
        finish = "tool_calls" if message.get("tool_calls") else "stop"
        body = {
            "id": completion_id,
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model,
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": usage,
        }
        payload = json.dumps(body, ensure_ascii=False).encode("utf-8")
        if faults.malformed:
            payload = payload[: len(payload) // 2]
            self._send_raw(200, payload, len(payload))
        elif faults.truncate:
            self._send_raw(200, payload[: len(payload) // 2], len(payload))
            self.close_connection = True
        else:
            self._send_raw(200, payload, len(payload))

    def _stream(
        self,
        completion_id: str,
        model: str,
        message: dict[str, Any],
        usage: dict[str, int] | None,
        faults: _Faults,
    ) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        created = int(time.time())

        def frame(delta: dict[str, Any], finish: str | None = None) -> bytes:
            chunk = {
                "id": completion_id,
                "object": "chat.completion.chunk",
                "created": created,
                "model": model,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
            }
            return _sse(chunk)

        frames = [frame({"role": "assistant", "content": ""})]
        content = message.get("content") or ""
        frames += [frame({"content": piece}) for piece in _content_pieces(content)]
        for index, call in enumerate(message.get("tool_calls") or []):
            function = call["function"]
            head = {"index": index, "id": call["id"], "type": "function"}
            head["function"] = {"name": function["name"], "arguments": ""}
            frames.append(frame({"tool_calls": [head]}))
            arguments = function["arguments"]
            half = len(arguments) // 2
            for piece in (arguments[:half], arguments[half:]):
                frames.append(
                    frame({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
                )
        body_frames = len(frames)
        frames.append(frame({}, "tool_calls" if message.get("tool_calls") else "stop"))
        if usage is not None:
            frames.append(
                _sse(
                    {
                        "id": completion_id,
                        "object": "chat.completion.chunk",
                        "created": created,
                        "model": model,
                        "choices": [],
                        "usage": usage,
                    }
                )
            )
        if faults.malformed:
            frames.insert(1, b"data: {this is not json\n\n")
        if faults.truncate:
            for payload in frames[: max(1, body_frames // 2)]:
                self._write_chunk(payload)
            self.wfile.flush()
            self.close_connection = True
            return
        frames.append(b"data: [DONE]\n\n")
        for payload in frames:
            self._write_chunk(payload)
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def _write_chunk(self, payload: bytes) -> None:
        self.wfile.write(f"{len(payload):x}\r\n".encode("ascii") + payload + b"\r\n")


def _openai_error(message: str) -> dict[str, Any]:
    return {"error": {"message": message, "type": "invalid_request_error"}}


def _model_card(model: str) -> dict[str, Any]:
    return {"id": model, "object": "model", "created": 0, "owned_by": "pytest-ragv2"}


def _sse(chunk: dict[str, Any]) -> bytes:
    return b"data: " + json.dumps(chunk, ensure_ascii=False).encode("utf-8") + b"\n\n"


_PIECE = re.compile(r"\S+\s*|\s+")


def _content_pieces(content: str) -> list[str]:
    """The answer as streamed deltas: one word (with its trailing space) per delta."""
    return _PIECE.findall(content)


def _token_count(text: str) -> int:
    return len(text.split())


def _message_text(message: dict[str, Any]) -> str:
    content = message.get("content")
    parts: list[str] = []
    if isinstance(content, str):
        parts.append(content)
    elif isinstance(content, list):
        parts += [str(p.get("text", "")) for p in content if isinstance(p, dict)]
    for call in message.get("tool_calls") or []:
        function = call.get("function") if isinstance(call, dict) else None
        if isinstance(function, dict):
            parts.append(str(function.get("arguments", "")))
    return " ".join(parts)


def _usage(messages: list[dict[str, Any]], message: dict[str, Any]) -> dict[str, int]:
    """Whitespace tokens: deterministic stand-ins for a tokenizer's counts."""
    prompt = sum(_token_count(_message_text(m)) for m in messages)
    completion = _token_count(_message_text(message))
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }
