"""The demo's LibreChat-shaped Agents API against what a real LibreChat v0.8.7 sent.

The same request goes to the demo route and is compared with the recording in
tests/fixtures/librechat: the kinds of frames, in order, and the keys of every frame,
attachment and source are the same; the librechat-agents adapter reads both alike.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from pytest_ragv2.systems.config import RetryPolicy
from pytest_ragv2.systems.librechat_agents import LibreChatAgents, LibreChatAgentsConfig
from ragv2_demo.engine import DemoIndex
from ragv2_demo.server import DemoServer
from tests.systems.test_librechat_real import attachments, recording, sse_text

CORPUS = Path(__file__).resolve().parents[2] / "corpus"
ROUTE = "/librechat/v2/api/agents/v1"
AGENT = "agent_demo_v2"
KEY_ENV = "RAGV2_TEST_DEMO_LIBRECHAT_KEY"


@pytest.fixture(scope="module")
def server() -> Iterator[DemoServer]:
    with DemoServer(DemoIndex.from_corpus(CORPUS)) as running:
        yield running


def _ask(server: DemoServer, name: str, **changes: Any) -> httpx.Response:
    """The recording's request, sent to the demo's agent."""
    body = {**recording(name)["request"]["body"], "model": AGENT, **changes}
    return httpx.post(
        server.url + ROUTE + "/chat/completions",
        json=body,
        headers={"Authorization": "Bearer demo-key"},
        timeout=30.0,
    )


def _frames(text: str) -> list[tuple[str, Any]]:
    """(kind, decoded data) per frame: kind is the event name, "chunk" or "[DONE]"."""
    found: list[tuple[str, Any]] = []
    for frame in text.split("\n\n"):
        if not frame:
            continue
        event = "chunk"
        if frame.startswith("event: "):
            event, frame = frame.split("\n", 1)
            event = event[len("event: ") :]
        data = frame[len("data: ") :]
        found.append(("[DONE]", None) if data == "[DONE]" else (event, json.loads(data)))
    return found


def _shape(text: str) -> list[str]:
    """Each frame's kind and keys (a chunk: its delta's keys, finish, usage), repeats
    collapsed."""
    shapes = []
    for event, data in _frames(text):
        if event == "chunk":
            (choice,) = data["choices"]
            tool_calls = choice["delta"].get("tool_calls") or [{}]
            kind = "chunk " + ",".join(sorted(data)) + " delta:" + ",".join(sorted(choice["delta"]))
            kind += " call:" + ",".join(sorted(tool_calls[0]))
            kind += f" finish:{choice['finish_reason']}"
        elif event == "attachment":
            kind = "attachment " + ",".join(sorted(data))
        else:
            kind = event
        if not shapes or shapes[-1] != kind:
            shapes.append(kind)
    return shapes


def _source_keys(found: list[dict[str, Any]]) -> set[tuple[str, ...]]:
    keys = set()
    for attachment in found:
        for source in attachment["file_search"]["sources"]:
            keys.add(tuple(sorted(source)))
            keys.add(("metadata", *sorted(source["metadata"])))
    return keys


def test_a_streamed_answer_has_the_real_event_kinds_and_keys(server: DemoServer) -> None:
    reply = _ask(server, "stream_file_search")
    assert reply.status_code == 200
    assert reply.headers["content-type"] == "text/event-stream"
    real = sse_text("stream_file_search")

    assert _shape(reply.text) == _shape(real)
    demo_attachments = [data for event, data in _frames(reply.text) if event == "attachment"]
    assert _source_keys(demo_attachments) == _source_keys(attachments("stream_file_search"))
    chunk_keys = {tuple(sorted(data)) for event, data in _frames(reply.text) if event == "chunk"}
    real_keys = {tuple(sorted(data)) for event, data in _frames(real) if event == "chunk"}
    assert chunk_keys == real_keys


def test_two_calls_are_indexed_as_v0_8_7_indexes_them(server: DemoServer) -> None:
    def indexes(text: str) -> list[tuple[int, bool]]:
        found = []
        for event, data in _frames(text):
            if event == "chunk":
                for call in data["choices"][0]["delta"].get("tool_calls") or []:
                    found.append((call["index"], "id" in call))
        return found

    reply = _ask(server, "stream_two_searches")
    assert indexes(reply.text) == indexes(sse_text("stream_two_searches"))


def test_a_plain_answer_and_the_errors_have_the_real_keys(server: DemoServer) -> None:
    def keys(body: Any) -> Any:
        if isinstance(body, dict):
            return {key: keys(value) for key, value in body.items()}
        if isinstance(body, list):
            return [keys(item) for item in body[:1]]
        return None

    plain = _ask(server, "nonstream_file_search")
    assert keys(plain.json()) == keys(recording("nonstream_file_search")["body"])
    unknown = _ask(server, "error_unknown_agent", model="agent_doesnotexist000000")
    assert unknown.status_code == 404
    assert unknown.json() == recording("error_unknown_agent")["body"]
    empty = _ask(server, "error_empty_messages")
    assert empty.status_code == 400
    assert keys(empty.json())["error"].keys() >= {"message", "type", "code"}
    assert empty.json()["error"]["message"] == "messages array cannot be empty"
    no_key = httpx.post(server.url + ROUTE + "/chat/completions", json={}, timeout=10.0)
    assert no_key.status_code == 401
    assert no_key.json() == recording("error_no_key")["body"]
    models = httpx.get(
        server.url + ROUTE + "/models", headers={"Authorization": "Bearer k"}, timeout=10.0
    )
    assert keys(models.json()) == keys(recording("models")["body"])
    one = httpx.get(
        server.url + ROUTE + "/models/" + AGENT, headers={"Authorization": "Bearer k"}, timeout=10.0
    )
    assert keys(one.json()) == keys(recording("model_agent")["body"])
    missing = httpx.get(
        server.url + ROUTE + "/models/agent_doesnotexist000000",
        headers={"Authorization": "Bearer k"},
        timeout=10.0,
    )
    assert missing.status_code == 404
    assert missing.json() == recording("model_unknown_agent")["body"]


def test_the_adapter_reads_the_demo_agent_as_it_reads_librechat(
    server: DemoServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(KEY_ENV, "demo-key")
    config = LibreChatAgentsConfig(
        adapter="librechat-agents",
        url=server.url + "/librechat/v2",
        agent_id=AGENT,
        api_key_env=KEY_ENV,
        timeout_s=30.0,
        retry=RetryPolicy(attempts=1, backoff_s=0.0),
    )
    adapter = LibreChatAgents("demo-librechat", config)
    try:
        transcript = adapter.converse(
            [
                "Welche synthetischen Projektdatensätze verwenden den TVM 30-H2, und mit welchen "
                "Enddrücken laufen sie?"
            ]
        )
    finally:
        adapter.close()
    (turn,) = transcript.turns
    assert turn.error is None
    assert [call.arguments for call in turn.tool_calls] == [
        {"query": "Welche synthetischen Projektdatensätze verwenden den TVM 30-H2"},
        {"query": "mit welchen Enddrücken laufen sie?"},
    ]
    assert all(call.result is not None for call in turn.tool_calls)
    assert turn.evidence
    assert {item.metadata["toolCallId"] for item in turn.evidence} == {
        call.id for call in turn.tool_calls
    }
    assert turn.citations
    assert all(citation.file_id is not None for citation in turn.citations)
    assert turn.usage["total_tokens"] > 0
    assert turn.warnings == []
