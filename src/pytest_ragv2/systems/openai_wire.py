"""The OpenAI chat-completion wire: chunks, tool-call fragments, usage.

Shared by the openai-chat and librechat-agents adapters. ``AnswerDraft`` gathers what has
arrived of one model answer, from a non-streamed ``chat.completion``
(``read_completion``) or from the server-sent ``chat.completion.chunk`` frames of a
streamed one (``read_stream``). It reads the wire as OpenAI documents it; an adapter whose
server departs from that subclasses it and overrides the hook concerned
(``tool_slot``, ``add_message_tool_calls``, ``fold_choice``, ``take_frame``,
``at_done``, ``tool_calls``).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import httpx

from pytest_ragv2.systems.base import Streamed, excerpt, send_with_retry
from pytest_ragv2.systems.bounded_body import decoded_chunks
from pytest_ragv2.systems.chat_limits import Deadline
from pytest_ragv2.systems.config import RetryPolicy
from pytest_ragv2.systems.failure import AdapterFailure
from pytest_ragv2.systems.outputs import Exchange
from pytest_ragv2.systems.secret_policy import scrub
from pytest_ragv2.systems.transcripts import ToolCall

DONE = "[DONE]"
UNPARSED_ARGUMENTS = "_unparsed"  # key holding tool-call arguments that are not a JSON object


@dataclass(slots=True)
class ToolCallDraft:
    """What has arrived of one tool call."""

    id: str = ""
    name: str = ""
    argument_parts: list[str] = field(default_factory=list)
    arguments: dict[str, Any] | None = None  # already an object (some servers send one)

    def raw_arguments(self) -> str:
        """The arguments as the model wrote them, to send them back in the history."""
        if self.arguments is not None:
            return json.dumps(self.arguments, ensure_ascii=False)
        return "".join(self.argument_parts)

    def parsed_arguments(self) -> dict[str, Any]:
        if self.arguments is not None:
            return self.arguments
        return parse_arguments("".join(self.argument_parts))

    def to_call(self, default_id: str, result: str | None = None) -> ToolCall:
        return ToolCall(
            id=self.id or default_id,
            name=self.name,
            arguments=self.parsed_arguments(),
            result=result,
        )

    def absorb(self, fragment: dict[str, Any]) -> None:
        """Add one ``delta.tool_calls`` fragment of this call (its id, name, argument slice)."""
        fragment_id = fragment.get("id")
        if isinstance(fragment_id, str) and not self.id:
            self.id = fragment_id
        function = fragment.get("function")
        if not isinstance(function, dict):
            return
        name = function.get("name")
        # Most servers send the name once; some repeat it whole in every fragment.
        if isinstance(name, str) and name != self.name:
            self.name += name
        arguments = function.get("arguments")
        if isinstance(arguments, str):
            self.argument_parts.append(arguments)
        elif isinstance(arguments, dict):
            self.arguments = arguments


@dataclass(slots=True)
class AnswerDraft:
    """What has arrived of one answer so far (kept when the turn fails half way)."""

    content_parts: list[str] = field(default_factory=list)
    tools: list[ToolCallDraft] = field(default_factory=list)  # in the order first seen
    tool_slots: dict[int, int] = field(default_factory=dict)  # stream index -> tools position
    usage: dict[str, int] = field(default_factory=dict)
    finish_reason: str | None = None
    has_content: bool = False  # a content string (even "") arrived, or a refusal text

    def answer(self) -> str:
        return "".join(self.content_parts)

    def indexed_tools(self) -> list[tuple[int, ToolCallDraft]]:
        """The tool calls in the order of their stream index, with that index."""
        return [(index, self.tools[slot]) for index, slot in sorted(self.tool_slots.items())]

    def tool_calls(self) -> list[ToolCall]:
        return [tool.to_call(f"call_{index}") for index, tool in self.indexed_tools()]

    def open_tool(self, index: int) -> int:
        """A new tool call for stream index ``index``; its position in ``tools``."""
        self.tools.append(ToolCallDraft())
        self.tool_slots[index] = len(self.tools) - 1
        return self.tool_slots[index]

    def tool_slot(self, index: int, fragment: dict[str, Any]) -> int:
        """The position in ``tools`` of the call a fragment at stream ``index`` belongs to:
        one call per index, opened when the index is first seen."""
        slot = self.tool_slots.get(index)
        return self.open_tool(index) if slot is None else slot

    def fold_tool_fragment(self, fragment: Any, position: int) -> None:
        """One ``delta.tool_calls`` fragment, ``position`` its place in that list."""
        if not isinstance(fragment, dict):
            return
        raw_index = fragment.get("index", position)
        index = raw_index if isinstance(raw_index, int) else position
        self.tools[self.tool_slot(index, fragment)].absorb(fragment)

    def add_message_tool_calls(self, raw_calls: list[Any]) -> None:
        """The ``tool_calls`` of a non-streamed answer's message; each must have a function."""
        for index, raw in enumerate(raw_calls):
            function = raw.get("function") if isinstance(raw, dict) else None
            if not isinstance(function, dict):
                raise AdapterFailure(
                    "malformed", f"tool call {index} has no function: {excerpt(raw)}"
                )
            arguments = function.get("arguments")
            self.tools.append(
                ToolCallDraft(
                    id=str(raw.get("id") or ""),
                    name=str(function.get("name") or ""),
                    # a string is kept as written (sent back so in the history), parsed when read
                    argument_parts=[arguments] if isinstance(arguments, str) else [],
                    arguments=None if isinstance(arguments, str) else parse_arguments(arguments),
                )
            )
            self.tool_slots[index] = len(self.tools) - 1

    def fold_choice(self, reason: Any, delta: dict[str, Any]) -> None:
        """Choice 0 of one chunk: its ``finish_reason`` and its ``delta`` ({} when none)."""
        if isinstance(reason, str):
            self.finish_reason = reason
        content = delta.get("content")
        if isinstance(content, str):
            self.content_parts.append(content)
            self.has_content = True
        for position, fragment in enumerate(delta.get("tool_calls") or []):
            self.fold_tool_fragment(fragment, position)

    def take_frame(self, event: str, frame: Any, frames: list[Any], call: str) -> None:
        """One decoded (and scrubbed) stream frame: recorded in ``frames``, then read."""
        frames.append(frame)
        read_chunk(frame, self, call, len(frames))

    def at_done(self, call: str) -> None:
        """``data: [DONE]`` arrived: the answer is complete."""


def parse_arguments(raw: Any) -> dict[str, Any]:
    """Tool-call arguments as an object; anything else is kept under ``UNPARSED_ARGUMENTS``."""
    if isinstance(raw, dict):
        return raw
    if isinstance(raw, str):
        if not raw.strip():
            return {}
        try:
            parsed = json.loads(raw)
        except ValueError:
            return {UNPARSED_ARGUMENTS: raw}
        if isinstance(parsed, dict):
            return parsed
    return {UNPARSED_ARGUMENTS: raw}


def flatten_usage(usage: Any, prefix: str = "") -> dict[str, int]:
    """The integer counts of a ``usage`` object; nested objects give dotted names."""
    counts: dict[str, int] = {}
    if not isinstance(usage, dict):
        return counts
    for key, value in usage.items():
        name = f"{prefix}{key}"
        if isinstance(value, bool):
            continue
        if isinstance(value, int):
            counts[name] = value
        elif isinstance(value, dict):
            counts.update(flatten_usage(value, f"{name}."))
    return counts


def _json_kind(value: Any) -> str:
    """ "an object", "a number" ...: what a JSON value is, for an error message."""
    kinds = {dict: "an object", list: "a list", bool: "a boolean", int: "a number"}
    return kinds.get(type(value), "a number" if isinstance(value, float) else "not text")


def text_of(content: Any) -> str:
    """Message content as text: a string, null, or a list of ``{"type": "text"}`` parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            part["text"]
            for part in content
            if isinstance(part, dict) and isinstance(part.get("text"), str)
        )
    return ""


def request_answer(
    client: httpx.Client,
    draft: AnswerDraft,
    *,
    url: str,
    body: dict[str, Any],
    stream: bool,
    headers: dict[str, str],
    secret_query: Mapping[str, str] | None = None,
    secrets: Sequence[str],
    exchanges: list[Exchange],
    retry: RetryPolicy,
    max_bytes: int,
    timeout_s: float,
    deadline: Deadline | None = None,
) -> None:
    """POST ``body`` to the completions ``url`` and fill ``draft`` from the answer.

    Streamed, tries are repeated only until an answer starts streaming: once frames have
    been read, a failure is the turn's error and the partial answer stays in ``draft``.
    A streamed answer is bounded as a plain one is: ``max_bytes`` read in all (counted
    after decompression), ``timeout_s`` from the try's start, and the conversation's
    ``deadline``; a breach closes the stream at once and keeps what arrived.
    Every try is recorded in ``exchanges`` (``send_with_retry``); ``secrets`` are those of
    ``headers``, scrubbed from the frames too.
    """
    reply = send_with_retry(
        client,
        method="POST",
        url=url,
        json_body=body,
        headers=headers,
        exchanges=exchanges,
        retry=retry,
        max_bytes=max_bytes,
        deadline=deadline,
        secret_query=secret_query,
        stream=Streamed(
            lambda response, frames, until, call: read_stream(
                response, draft, frames, secrets, deadline=until, call=call, max_bytes=max_bytes
            ),
            timeout_s,
        )
        if stream
        else None,
    )
    if stream:
        if not reply.ok:
            raise reply.failure()
        return
    read_completion(reply.json_or_fail(), draft, reply.url)


def read_completion(answer: Any, draft: AnswerDraft, url: str) -> None:
    """Fill ``draft`` from a non-streamed ``chat.completion``."""
    choices = answer.get("choices") if isinstance(answer, dict) else None
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise AdapterFailure("malformed", f"answer of {url} has no choices: {excerpt(answer)}")
    choice: dict[str, Any] = choices[0]
    message = choice.get("message")
    if not isinstance(message, dict):
        raise AdapterFailure("malformed", f"answer of {url} has no message: {excerpt(answer)}")
    content = message.get("content")
    refusal = message.get("refusal")
    if content is None and isinstance(refusal, str):
        content = refusal  # OpenAI's structured refusal: the model's answer is its refusal
    if not (content is None or isinstance(content, str | list)):
        raise AdapterFailure(
            "malformed",
            f"answer of {url}: message.content is {_json_kind(content)}, not text: "
            f"{excerpt(answer)}",
        )
    draft.content_parts.append(text_of(content))
    draft.has_content = content is not None
    raw_calls = message.get("tool_calls") or []
    if not isinstance(raw_calls, list):
        raise AdapterFailure("malformed", f"tool_calls of {url} is not a list: {excerpt(answer)}")
    draft.add_message_tool_calls(raw_calls)
    reason = choice.get("finish_reason")
    draft.finish_reason = reason if isinstance(reason, str) else None
    draft.usage = flatten_usage(answer.get("usage"))


def sse_frames(
    response: httpx.Response, deadline: float, call: str, max_bytes: int
) -> Iterator[tuple[str, str]]:
    """``(event name, data)`` of each server-sent event, as the bytes arrive.

    The name is "message" when the frame has none. Lines are split on bytes (a UTF-8
    multi-byte character never contains a newline byte) and decoded one by one, so a
    character split across network chunks stays intact. Each chunk is searched for line
    ends once, so a line arriving in many chunks costs its length, not its length squared.

    At most ``max_bytes`` are read in all, counted after decompression (gzip and deflate
    inflated a capped step at a time): more is a ``too_large`` failure, which also bounds
    a line or an event that never ends.

    Not httpx-sse's ``EventSource``: it drops an event cut off before its blank line (even
    ``data: [DONE]``), turns bytes that are not UTF-8 into U+FFFD instead of a malformed
    stream, would check the deadline only per event (keep-alive comments complete none),
    and refuses an answer not labelled ``text/event-stream``; the tests pin each of these.
    """
    event = ""
    data: list[str] = []
    pending: list[bytes] = []  # the start of a line whose end has not arrived
    size = 0
    for chunk in decoded_chunks(response):
        if time.perf_counter() > deadline:
            raise AdapterFailure("timeout", f"{call}: the streamed answer outlasted the timeout")
        size += len(chunk)
        if size > max_bytes:
            raise AdapterFailure(
                "too_large",
                f"{call}: the streamed answer exceeded {max_bytes:,} bytes (after "
                "decompression); max_response_mb bounds it",
            )
        start = 0
        while (end := chunk.find(b"\n", start)) >= 0:
            raw_line = chunk[start:end]
            if pending:
                raw_line = b"".join([*pending, raw_line])
                pending = []
            start = end + 1
            line = raw_line.rstrip(b"\r").decode("utf-8")
            if not line:
                if data:
                    yield event or "message", "\n".join(data)
                event, data = "", []
                continue
            name, _, value = line.partition(":")
            value = value[1:] if value.startswith(" ") else value
            if name == "data":
                data.append(value)
            elif name == "event":
                event = value
            # comments (":..."), "id" and "retry" carry nothing a chat answer needs
        if start < len(chunk):
            pending.append(chunk[start:])
    rest = b"".join(pending)
    if rest.strip():
        name, _, value = rest.rstrip(b"\r").decode("utf-8").partition(":")
        if name == "data":
            data.append(value[1:] if value.startswith(" ") else value)
    if data:  # an event cut off before its blank line
        yield event or "message", "\n".join(data)


def read_stream(
    response: httpx.Response,
    draft: AnswerDraft,
    frames: list[Any],
    secrets: Sequence[str],
    *,
    deadline: float,
    call: str,
    max_bytes: int,
) -> None:
    """Fill ``draft`` from the stream's frames until ``data: [DONE]``.

    Every frame read is recorded in ``frames`` for the raw run, decoded and secrets
    scrubbed (``draft.take_frame`` says how; the final ``"[DONE]"`` too).
    """
    try:
        for event, data in sse_frames(response, deadline, call, max_bytes):
            if data.strip() == DONE:
                frames.append(DONE)
                draft.at_done(call)
                return
            try:
                decoded = json.loads(data)
            except ValueError:
                frames.append(scrub(data, secrets))
                raise AdapterFailure(
                    "malformed", f"{call}: frame {len(frames)} is not JSON: {excerpt(data)}"
                ) from None
            draft.take_frame(event, scrub(decoded, secrets), frames, call)
    except httpx.TimeoutException as exc:
        raise AdapterFailure(
            "timeout", scrub(f"{call}: stream stalled: {type(exc).__name__}: {exc}", secrets)
        ) from None
    except httpx.DecodingError as exc:  # a broken or refused content coding
        raise AdapterFailure(
            "malformed", scrub(f"{call}: the stream could not be decoded: {exc}", secrets)
        ) from None
    except httpx.HTTPError as exc:
        raise AdapterFailure(
            "transport", scrub(f"{call}: stream broken: {type(exc).__name__}: {exc}", secrets)
        ) from None
    except UnicodeDecodeError as exc:
        raise AdapterFailure("malformed", f"{call}: stream is not UTF-8: {exc}") from None
    raise AdapterFailure(
        "transport", f"{call}: stream closed before data: {DONE} ({len(frames)} frames read)"
    )


def read_chunk(chunk: Any, draft: AnswerDraft, call: str, number: int) -> None:
    """Fold one ``chat.completion.chunk`` (frame ``number``) into ``draft``."""
    if not isinstance(chunk, dict):
        raise AdapterFailure("malformed", f"{call}: frame {number} is not an object")
    if "error" in chunk:
        raise AdapterFailure(
            "http_status", f"{call}: the server reported an error: {excerpt(chunk['error'])}"
        )
    if isinstance(chunk.get("usage"), dict):
        draft.usage = flatten_usage(chunk["usage"])
    choices = chunk.get("choices") or []
    if not isinstance(choices, list):
        raise AdapterFailure("malformed", f"{call}: frame {number} choices is not a list")
    for choice in choices:
        if not isinstance(choice, dict) or choice.get("index", 0) != 0:
            continue
        delta = choice.get("delta")
        delta = delta if isinstance(delta, dict) else {}
        content = delta.get("content")
        if content is not None and not isinstance(content, str):
            raise AdapterFailure(
                "malformed",
                f"{call}: frame {number}: delta.content is {_json_kind(content)}, not text: "
                f"{excerpt(content)}",
            )
        draft.fold_choice(choice.get("finish_reason"), delta)
