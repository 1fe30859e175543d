"""The JSON lines a Codex-style runner prints (``codex exec --json``), read into the turn: the
agent's messages, its knowledge-base searches and their sources, usage, and how the turn
ended. A line that is not JSON, or repeats a key, is kept and said, never dropped.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from pytest_ragv2.systems.kb_tool import item_from_source, parse_sources, resolve_citations
from pytest_ragv2.systems.transcripts import ChatTurn, ToolCall

NON_JSON_KEY = "non_json_line"
DUPLICATE_KEYS = "_duplicate_keys"
_EXCERPT_CHARS = 300


def _parse_line(line: str) -> Any:
    text = line.rstrip("\r\n")
    try:
        return json.loads(text, object_pairs_hook=_first_key_wins)
    except json.JSONDecodeError:
        return {NON_JSON_KEY: text}


def _first_key_wins(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object whose keys repeat (Codex's ``web_search`` item has two ``id``s: the item's,
    then the search call's) keeps the first value; the later ones go under ``_duplicate_keys``."""
    data: dict[str, Any] = {}
    duplicates: dict[str, list[Any]] = {}
    for key, value in pairs:
        if key in data:
            duplicates.setdefault(key, []).append(value)
        else:
            data[key] = value
    if duplicates:
        data[DUPLICATE_KEYS] = duplicates
    return data


@dataclass(slots=True)
class CodexOutcome:
    """What the events said about how the turn ended."""

    completed: bool = False
    thread_id: str | None = None  # from thread.started
    failure: str | None = None  # from turn.failed
    errors: list[str] = field(default_factory=list)  # from error events
    non_json_lines: int = 0


def read_codex_events(events: Sequence[Any], turn: ChatTurn) -> CodexOutcome:
    """Fill ``turn`` (answer, tool calls, usage) from Codex events, in order."""
    outcome = CodexOutcome()
    for event in events:
        if not isinstance(event, dict):
            outcome.non_json_lines += 1
            continue
        if NON_JSON_KEY in event and len(event) == 1:
            if event[NON_JSON_KEY].strip():
                outcome.non_json_lines += 1
            continue
        kind = event.get("type")
        if kind == "thread.started" and isinstance(event.get("thread_id"), str):
            outcome.thread_id = event["thread_id"]
            turn.thread_id = outcome.thread_id
        elif kind == "item.completed":
            _read_item(event.get("item"), turn)
        elif kind == "turn.completed":
            outcome.completed = True
            turn.usage = _integer_counts(event.get("usage"))
        elif kind == "turn.failed":
            outcome.failure = "turn.failed: " + _error_message(event.get("error"))
        elif kind == "error":
            outcome.errors.append(_error_message(event.get("message", event)))
    if outcome.completed:  # the turn went on: its error events were retried stream errors
        turn.warnings.extend(f"error event: {message}" for message in outcome.errors)
    return outcome


def attach_numbered_sources(turn: ChatTurn) -> None:
    """Tool results in the knowledge-base tool's numbered-source JSON (``kb_tool``: what the
    harness itself gives a model, and what an MCP search server built on it returns) become
    the turn's evidence, and the answer's ``[n]`` markers are resolved against them."""
    for call in turn.tool_calls:
        if call.result:
            turn.evidence.extend(item_from_source(source) for source in parse_sources(call.result))
    if turn.evidence:
        turn.citations = resolve_citations(turn.answer, turn.evidence)


def _read_item(item: Any, turn: ChatTurn) -> None:
    if not isinstance(item, dict):
        return
    kind = item.get("type", item.get("item_type"))
    item_id = str(item.get("id", f"item_{len(turn.tool_calls)}"))
    status = item.get("status") if isinstance(item.get("status"), str) else None
    if kind == "agent_message":
        turn.answer = str(item.get("text", ""))
    elif kind == "error":  # a non-fatal warning ("Model metadata ... not found")
        turn.warnings.append(_error_message(item))
    elif kind == "command_execution":
        output = item.get("aggregated_output")
        exit_code = item.get("exit_code")
        turn.tool_calls.append(
            ToolCall(
                id=item_id,
                name="shell",
                arguments={"command": item.get("command")},
                result=None if output is None else str(output),
                status=status,
                exit_code=exit_code if type(exit_code) is int else None,
            )
        )
    elif kind == "mcp_tool_call":
        arguments = item.get("arguments")
        turn.tool_calls.append(
            ToolCall(
                id=item_id,
                name=f"{item.get('server')}.{item.get('tool')}",
                arguments=arguments if isinstance(arguments, dict) else {"_raw": arguments},
                result=_mcp_result(item),
                status=status,
            )
        )
    elif kind == "web_search":
        turn.tool_calls.append(
            ToolCall(
                id=item_id,
                name="web_search",
                arguments={"query": item.get("query")},
                status=status,
            )
        )


def _mcp_result(item: dict[str, Any]) -> str | None:
    error = item.get("error")
    if error:
        return "error: " + _error_message(error)
    result = item.get("result")
    if result is None or isinstance(result, str):
        return result
    if isinstance(result, dict) and isinstance(result.get("content"), list):
        texts = [
            block["text"]
            for block in result["content"]
            if isinstance(block, dict) and isinstance(block.get("text"), str)
        ]
        if texts:
            return "\n".join(texts)
    return json.dumps(result, ensure_ascii=False)


def _error_message(error: Any) -> str:
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        return str(error["message"])
    if isinstance(error, str):
        return error
    return _excerpt(json.dumps(error, ensure_ascii=False))


def _integer_counts(usage: Any) -> dict[str, int]:
    if not isinstance(usage, dict):
        return {}
    return {
        str(key): value
        for key, value in usage.items()
        if isinstance(value, int) and not isinstance(value, bool)
    }


def _excerpt(text: str) -> str:
    text = text.strip()
    return text if len(text) <= _EXCERPT_CHARS else "…" + text[-_EXCERPT_CHARS:]
