"""The project's own types for a conversation with a chat system (layers B and C).

A chat adapter returns a ``Transcript``: one ``ChatTurn`` per prompt sent in one fresh
conversation, with the answer, the tool calls, the citations resolved to sources, token
usage, latency and the raw exchanges. Like ``records``, these are slotted dataclasses with
hand-written ``to_json`` (``dataclasses.asdict`` deep-copies and is too slow per item) and
a ``from_json`` so a raw run can be rescored without any live system.

A turn that failed keeps what arrived before the failure (a partial streamed answer) and
carries the ``RunError``; the turns after it are not sent and are recorded with
``ran=False`` and an empty answer.

A long answer is stored once in a raw run: in a turn's JSON, a string of its exchanges
that is a piece of the turn's answer (the whole ``content`` of a completion, the
``delta.content`` of a large stream frame, a command's ``agent_message``) is written as a
reference to that slice of the answer and restored on reading (``answer_refs``).
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pytest_ragv2.systems.outputs import Exchange, RetrievedItem, RunError


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One tool call the model made; ``result`` is known only when the system executed it.

    ``status`` and ``exit_code`` are what the system said of the execution when it says it
    (Codex: a ``command_execution``'s ``status`` and ``exit_code``, an MCP call's ``status``);
    they are written to JSON only when known.
    """

    id: str
    name: str
    arguments: dict[str, Any]
    result: str | None = None
    status: str | None = None
    exit_code: int | None = None

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "id": self.id,
            "name": self.name,
            "arguments": self.arguments,
            "result": self.result,
        }
        if self.status is not None:
            data["status"] = self.status
        if self.exit_code is not None:
            data["exit_code"] = self.exit_code
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ToolCall:
        return cls(
            id=data["id"],
            name=data["name"],
            arguments=data["arguments"],
            result=data["result"],
            status=data.get("status"),
            exit_code=data.get("exit_code"),
        )


@dataclass(frozen=True, slots=True)
class Citation:
    """A citation marker in the answer text, resolved to the source it points at.

    ``page`` is 1-based. ``marker`` is the marker as it appeared in the answer (e.g.
    ``"\\ue202turn0file3"``), so a scorer can find the claim next to it.
    """

    marker: str
    file_id: str | None = None
    filename: str | None = None
    page: int | None = None
    content: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "marker": self.marker,
            "file_id": self.file_id,
            "filename": self.filename,
            "page": self.page,
            "content": self.content,
        }

    @classmethod
    def of_item(cls, marker: str, item: RetrievedItem | None) -> Citation:
        """The marker resolved to ``item``; dangling (every field None) without one."""
        if item is None:
            return cls(marker=marker)
        return cls(marker, item.file_id, item.filename, item.page, item.text)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Citation:
        return cls(
            marker=data["marker"],
            file_id=data["file_id"],
            filename=data["filename"],
            page=data["page"],
            content=data["content"],
        )


@dataclass(slots=True)
class ChatTurn:
    """One prompt and what the system answered to it.

    ``usage`` holds the integer token counts the system reported, under its own names
    (OpenAI-compatible: ``prompt_tokens``, ``completion_tokens``, ``total_tokens``; nested
    details flattened as ``"prompt_tokens_details.cached_tokens"``), for this turn alone.
    A system that reports the conversation's running total instead (Codex on a resumed
    thread) has that figure kept as ``usage_running_total``, and ``usage`` is the difference
    from the previous turn's total.

    A turn that failed after part of an answer arrived keeps it either in ``answer`` (a
    partial streamed answer, the adapters' default) or, where the system's own answer
    message arrived before its failure report (Codex's ``turn.failed``), in
    ``partial_answer``, which is shown but never scored. ``warnings`` are the system's
    non-fatal warnings, ``thread_id`` its conversation id, ``stderr_tail`` the end of a
    command's standard error. The fields added after the first format are written to JSON
    only when set, so older transcripts read back unchanged.
    """

    prompt: str
    answer: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    citations: list[Citation] = field(default_factory=list)
    latency_s: float = 0.0
    usage: dict[str, int] = field(default_factory=dict)
    error: RunError | None = None
    exchanges: list[Exchange] = field(default_factory=list)
    finish_reason: str | None = None
    ran: bool = True  # False: not sent, because an earlier turn of the conversation failed
    # The evidence the system put in front of the model for this turn (tool results parsed
    # into items, LibreChat attachment sources, injected excerpts), in the order it came.
    evidence: list[RetrievedItem] = field(default_factory=list)
    partial_answer: str = ""
    warnings: list[str] = field(default_factory=list)
    thread_id: str | None = None
    usage_running_total: dict[str, int] = field(default_factory=dict)
    stderr_tail: str = ""

    def to_json(self) -> dict[str, Any]:
        exchanges = [exchange.to_json() for exchange in self.exchanges]
        field_name = "answer" if self.answer else "partial_answer"
        text = self.answer or self.partial_answer
        referred = len(text) >= ANSWER_REF_MIN_TEXT
        if referred:
            refer = _AnswerRefs(field_name, text)
            exchanges = [
                {**exchange, "response_body": refer.body(exchange["response_body"])}
                for exchange in exchanges
            ]
            referred = refer.count > 0
        data: dict[str, Any] = {
            "prompt": self.prompt,
            "answer": self.answer,
            "tool_calls": [call.to_json() for call in self.tool_calls],
            "citations": [citation.to_json() for citation in self.citations],
            "latency_s": self.latency_s,
            "usage": self.usage,
            "error": None if self.error is None else self.error.to_json(),
            "exchanges": exchanges,
            "finish_reason": self.finish_reason,
            "ran": self.ran,
            "evidence": [item.to_json() for item in self.evidence],
        }
        optional: dict[str, Any] = {
            "partial_answer": self.partial_answer,
            "warnings": self.warnings,
            "thread_id": self.thread_id,
            "usage_running_total": self.usage_running_total,
            "stderr_tail": self.stderr_tail,
            "answer_refs": referred,
        }
        data.update((key, value) for key, value in optional.items() if value)
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ChatTurn:
        error = data["error"]
        exchanges = data["exchanges"]
        if data.get("answer_refs"):
            texts = {"answer": data["answer"], "partial_answer": data.get("partial_answer", "")}
            exchanges = [
                {**exchange, "response_body": _resolve_refs(exchange["response_body"], texts)}
                for exchange in exchanges
            ]
        return cls(
            prompt=data["prompt"],
            answer=data["answer"],
            tool_calls=[ToolCall.from_json(call) for call in data["tool_calls"]],
            citations=[Citation.from_json(citation) for citation in data["citations"]],
            latency_s=data["latency_s"],
            usage=dict(data["usage"]),
            error=None if error is None else RunError(**error),
            exchanges=[Exchange(**exchange) for exchange in exchanges],
            finish_reason=data.get("finish_reason"),
            ran=data.get("ran", True),
            evidence=[RetrievedItem(**item) for item in data.get("evidence", [])],
            partial_answer=data.get("partial_answer", ""),
            warnings=list(data.get("warnings", [])),
            thread_id=data.get("thread_id"),
            usage_running_total=dict(data.get("usage_running_total", {})),
            stderr_tail=data.get("stderr_tail", ""),
        )


ANSWER_REF_MIN_TEXT = 64 * 1024  # a shorter answer is stored twice: a few KB at most
ANSWER_REF_MIN_PIECE = 1024  # a shorter string of an exchange is kept as it came
_REF = re.compile(r"<ragv2:(answer|partial_answer)\[(\d+):(\d+)\]>")


class _AnswerRefs:
    """Replaces the strings of exchange bodies that are, in order, pieces of ``text``."""

    def __init__(self, field_name: str, text: str) -> None:
        self.field_name = field_name
        self.text = text
        self.cursor = 0  # the pieces of a stream follow each other in the answer
        self.count = 0

    def body(self, value: Any) -> Any:
        if isinstance(value, str):
            return self._piece(value)
        if isinstance(value, dict):
            return {key: self.body(item) for key, item in value.items()}
        if isinstance(value, list):
            return [self.body(item) for item in value]
        return value

    def _piece(self, value: str) -> str:
        if len(value) < ANSWER_REF_MIN_PIECE or _REF.fullmatch(value):
            return value
        start = self.text.find(value, self.cursor)
        if start < 0:
            return value
        end = start + len(value)
        self.cursor = end
        self.count += 1
        return f"<ragv2:{self.field_name}[{start}:{end}]>"


def _resolve_refs(value: Any, texts: Mapping[str, str]) -> Any:
    if isinstance(value, str):
        found = _REF.fullmatch(value)
        if found is None:
            return value
        return texts[found.group(1)][int(found.group(2)) : int(found.group(3))]
    if isinstance(value, dict):
        return {key: _resolve_refs(item, texts) for key, item in value.items()}
    if isinstance(value, list):
        return [_resolve_refs(item, texts) for item in value]
    return value


@dataclass(slots=True)
class Transcript:
    """One conversation: its turns in order and the wall time of the whole of it."""

    turns: list[ChatTurn]
    latency_s: float

    @property
    def final_answer(self) -> str:
        """The last turn's answer ("" when the conversation stopped before it)."""
        return self.turns[-1].answer if self.turns else ""

    @property
    def error(self) -> RunError | None:
        """The error that ended the conversation, if one did."""
        for turn in self.turns:
            if turn.error is not None:
                return turn.error
        return None

    @property
    def ok(self) -> bool:
        return self.error is None

    @property
    def tool_calls(self) -> list[ToolCall]:
        """Every tool call of every turn, in order."""
        return [call for turn in self.turns for call in turn.tool_calls]

    def to_json(self) -> dict[str, Any]:
        return {"turns": [turn.to_json() for turn in self.turns], "latency_s": self.latency_s}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Transcript:
        return cls(
            turns=[ChatTurn.from_json(turn) for turn in data["turns"]],
            latency_s=data["latency_s"],
        )


def run_conversation(prompts: Sequence[str], send: Callable[[int, str], ChatTurn]) -> Transcript:
    """One conversation as every chat adapter holds it: ``send(number, prompt)`` (number
    counted from 0) for each prompt in order; after a turn that failed, the later turns are
    recorded as not sent; an exception out of ``send`` (an adapter bug) becomes that turn's
    internal error instead of leaving the session."""
    started = time.perf_counter()
    turns: list[ChatTurn] = []
    stopped = False
    for number, prompt in enumerate(prompts):
        if stopped:
            turns.append(ChatTurn(prompt=prompt, ran=False))
            continue
        turn_started = time.perf_counter()
        try:
            turn = send(number, prompt)
        except Exception as exc:
            error = RunError(kind="internal", message=f"{type(exc).__name__}: {exc}")
            turn = ChatTurn(
                prompt=prompt, latency_s=time.perf_counter() - turn_started, error=error
            )
        turns.append(turn)
        stopped = turn.error is not None
    return Transcript(turns=turns, latency_s=time.perf_counter() - started)
