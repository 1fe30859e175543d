"""The LibreChat Agents API adapter against a real HTTP server on 127.0.0.1.

The server (standard library, HTTP/1.1, Nagle's algorithm disabled) answers the way
LibreChat's OpenAI-compatible controller does: ``chat.completion.chunk`` frames with
``event: attachment`` frames among them, a final chunk with ``usage`` and ``data: [DONE]``
(or a plain ``chat.completion`` when not streaming). It records every request it receives.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

import pytest_ragv2.systems.librechat_agents as librechat
from pytest_ragv2.systems.config import RetryPolicy
from pytest_ragv2.systems.librechat_agents import (
    LibreChatAgents,
    LibreChatAgentsConfig,
    resolve_citations,
    strip_citation_markers,
)
from pytest_ragv2.systems.outputs import RetrievedItem
from pytest_ragv2.systems.transcripts import Citation, ToolCall, Transcript
from tests.scripted_server import Reply, Seen, Server, serve

API_KEY = "lc-key-0123456789abcdef-do-not-leak"
KEY_ENV = "RAGV2_TEST_LIBRECHAT_KEY"
AGENT = "agent_nimbus_support"

PUMP: dict[str, Any] = {
    "type": "file",
    "fileId": "file-pump",
    "fileName": "pump-datasheet.pdf",
    "content": "The NX-450 pump is rated for a maximum pressure of 16 bar.",
    "relevance": 0.83,
    "pages": [2],
    "pageRelevance": {"2": 0.83},
}
WARRANTY: dict[str, Any] = {
    "type": "file",
    "fileId": "file-terms",
    "fileName": "terms.pdf",
    "content": "La garantie couvre deux ans à compter de la livraison.",
    "relevance": 0.71,
    "pages": [],  # page 0 of the PDF: LibreChat drops it (``page || null``)
    "pageRelevance": {},
}
SERVICE: dict[str, Any] = {
    "type": "file",
    "fileId": "file-manual",
    "fileName": "manual.pdf",
    "content": "Wartungsintervall: alle 500 Betriebsstunden Dichtungen prüfen.",
    "relevance": 0.64,
    "pages": [6],
    "pageRelevance": {"6": 0.64},
}


# ---------------------------------------------------------------------------------------
# The server


@pytest.fixture
def server() -> Iterator[Server]:
    with serve() as running:
        yield running


@pytest.fixture
def api_key(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv(KEY_ENV, API_KEY)
    return API_KEY


def _adapter(server: Server, **overrides: Any) -> LibreChatAgents:
    settings: dict[str, Any] = {
        "adapter": "librechat-agents",
        "url": server.url + "/",
        "agent_id": AGENT,
        "api_key_env": KEY_ENV,
        "timeout_s": 5.0,
        "retry": RetryPolicy(attempts=2, backoff_s=0.0),
    }
    settings.update(overrides)
    return LibreChatAgents("librechat", LibreChatAgentsConfig(**settings))


def _converse(adapter: LibreChatAgents, *prompts: str) -> Transcript:
    try:
        return adapter.converse(list(prompts))
    finally:
        adapter.close()


# ---------------------------------------------------------------------------------------
# Frames as LibreChat writes them


def chunk(
    delta: dict[str, Any], finish: str | None = None, usage: dict[str, Any] | None = None
) -> bytes:
    frame: dict[str, Any] = {
        "id": "chatcmpl-test",
        "object": "chat.completion.chunk",
        "created": 1770000000,
        "model": AGENT,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }
    if usage is not None:
        frame["usage"] = usage
    return b"data: " + json.dumps(frame).encode("utf-8") + b"\n\n"


def text(content: str) -> bytes:
    return chunk({"content": content})


def attachment(tool_call_id: str, *sources: dict[str, Any]) -> bytes:
    data = {
        "type": "file_search",
        "file_search": {"sources": list(sources)},
        "toolCallId": tool_call_id,
        "messageId": "chatcmpl-test",
        "conversationId": "conv-1",
        "name": "file_search_file_search_results_abc",
    }
    return b"event: attachment\ndata: " + json.dumps(data).encode("utf-8") + b"\n\n"


def tool_call(index: int, call_id: str, query: str) -> list[bytes]:
    """A file_search call as LibreChat streams it: declared, then argument slices."""
    arguments = json.dumps({"query": query})
    middle = len(arguments) // 2
    return [
        chunk(
            {
                "tool_calls": [
                    {
                        "index": index,
                        "id": call_id,
                        "type": "function",
                        "function": {"name": "file_search", "arguments": ""},
                    }
                ]
            }
        ),
        chunk({"tool_calls": [{"index": index, "function": {"arguments": arguments[:middle]}}]}),
        chunk({"tool_calls": [{"index": index, "function": {"arguments": arguments[middle:]}}]}),
    ]


USAGE = {"prompt_tokens": 812, "completion_tokens": 64, "total_tokens": 876}
ROLE = chunk({"role": "assistant"})
FINAL = chunk({}, finish="stop", usage=USAGE)
DONE = b"data: [DONE]\n\n"


# ---------------------------------------------------------------------------------------
# Streaming


def test_stream_maps_sources_tool_calls_citations_and_usage(server: Server, api_key: str) -> None:
    answer_parts = [
        "The pump-datasheet.pdf states the NX-450 pump is rated for 16 bar. ",
        "\ue202turn0file0 terms.pdf: la garantie couvre deux ans",
        "\ue200\ue202turn0file1\\ue202turn0file2\ue201. ",  # composite, one anchor escaped
        "\ue203Dichtungen alle 500 Betriebsstunden prüfen\ue204\\ue202turn0file2",  # span
    ]
    server.answer(
        Reply(
            frames=[
                ROLE,
                *tool_call(0, "call_fs1", "maximum pressure NX-450"),
                attachment("call_fs1", PUMP, WARRANTY, SERVICE),
                *(text(part) for part in answer_parts[:2]),
                *(text(part) for part in answer_parts[2:]),
                FINAL,
                DONE,
            ]
        )
    )
    transcript = _converse(_adapter(server), "Quelle pression maximale ?")

    assert transcript.ok, transcript.error
    (turn,) = transcript.turns
    answer = "".join(answer_parts)
    assert turn.answer == answer  # the markers stay in the recorded answer
    assert turn.finish_reason == "stop"
    assert turn.usage == USAGE
    assert [(item.rank, item.file_id, item.filename, item.page) for item in turn.evidence] == [
        (1, "file-pump", "pump-datasheet.pdf", 3),  # pages [2] is 0-based
        (2, "file-terms", "terms.pdf", None),
        (3, "file-manual", "manual.pdf", 7),
    ]
    assert turn.evidence[0].text == PUMP["content"]
    assert turn.evidence[0].score == pytest.approx(0.83)
    assert turn.evidence[0].metadata["toolCallId"] == "call_fs1"
    assert turn.evidence[0].metadata["pages"] == [2]
    assert turn.tool_calls == [
        ToolCall(
            id="call_fs1",
            name="file_search",
            arguments={"query": "maximum pressure NX-450"},
            result=json.dumps({"sources": [PUMP, WARRANTY, SERVICE]}, ensure_ascii=False),
        )
    ]
    assert turn.citations == [
        Citation("\ue202turn0file0", "file-pump", "pump-datasheet.pdf", 3, PUMP["content"]),
        Citation("\ue202turn0file1", "file-terms", "terms.pdf", None, WARRANTY["content"]),
        Citation("\\ue202turn0file2", "file-manual", "manual.pdf", 7, SERVICE["content"]),
        Citation("\\ue202turn0file2", "file-manual", "manual.pdf", 7, SERVICE["content"]),
    ]
    assert strip_citation_markers(turn.answer) == (
        "The pump-datasheet.pdf states the NX-450 pump is rated for 16 bar. terms.pdf: "
        "la garantie couvre deux ans. Dichtungen alle 500 Betriebsstunden prüfen"
    )

    (seen,) = server.seen
    assert seen.path == "/api/agents/v1/chat/completions"
    assert seen.headers["authorization"] == f"Bearer {API_KEY}"
    assert seen.json == {
        "model": AGENT,
        "messages": [{"role": "user", "content": "Quelle pression maximale ?"}],
        "stream": True,
    }
    (exchange,) = turn.exchanges
    assert exchange.request["headers"] == {"Authorization": "<redacted>"}
    assert exchange.status_code == 200
    frames = exchange.response_body
    assert frames[0]["choices"][0]["delta"] == {"role": "assistant"}
    (recorded,) = [frame for frame in frames if isinstance(frame, dict) and "event" in frame]
    assert recorded["event"] == "attachment"
    assert recorded["data"]["toolCallId"] == "call_fs1"
    assert recorded["data"]["file_search"]["sources"] == [PUMP, WARRANTY, SERVICE]
    assert frames[-1] == "[DONE]"
    assert turn.latency_s > 0
    assert transcript.latency_s >= turn.latency_s


def test_attachments_of_two_calls_are_ranked_in_delivery_order(
    server: Server, api_key: str
) -> None:
    server.answer(
        Reply(
            frames=[
                ROLE,
                *tool_call(0, "call_a", "pressure"),
                *tool_call(1, "call_b", "warranty"),
                attachment("call_b", WARRANTY),
                text("Rated for 16 bar: the NX-450 pump"),
                attachment("call_a", PUMP, SERVICE),
                text(" \ue202turn1file1."),  # the second attachment's second source
                chunk({}, finish="stop"),
                DONE,
            ]
        )
    )
    (turn,) = _converse(_adapter(server), "q").turns

    assert [item.file_id for item in turn.evidence] == ["file-terms", "file-pump", "file-manual"]
    assert [item.rank for item in turn.evidence] == [1, 2, 3]
    assert [call.name for call in turn.tool_calls] == ["file_search", "file_search"]
    assert [call.arguments for call in turn.tool_calls] == [
        {"query": "pressure"},
        {"query": "warranty"},
    ]
    assert json.loads(turn.tool_calls[0].result or "") == {"sources": [PUMP, SERVICE]}
    assert json.loads(turn.tool_calls[1].result or "") == {"sources": [WARRANTY]}
    # turn1file1 names SERVICE, but the sentence is PUMP's content: the content wins.
    assert [citation.file_id for citation in turn.citations] == ["file-pump"]


def test_marker_index_that_disagrees_with_the_source_order(server: Server, api_key: str) -> None:
    # LibreChat re-sorts and filters the tool's list before the attachment: here the model's
    # file0 (the pump, first in the tool's list) arrives second.
    server.answer(
        Reply(
            frames=[
                ROLE,
                attachment("call_1", WARRANTY, PUMP, SERVICE),
                text("Le NX-450 pump is rated for a maximum pressure of 16 bar \ue202turn0file0. "),
                text("Something nobody wrote \ue202turn0file2. "),  # no match: index kept
                text("Unrelated words only \ue202turn0file7."),  # no source 7, no match
                FINAL,
                DONE,
            ]
        )
    )
    (turn,) = _converse(_adapter(server), "q").turns

    assert turn.error is None
    assert [(citation.marker, citation.file_id) for citation in turn.citations] == [
        ("\ue202turn0file0", "file-pump"),
        ("\ue202turn0file2", "file-manual"),
        ("\ue202turn0file7", None),
    ]
    assert turn.citations[2] == Citation("\ue202turn0file7")


def test_stream_without_event_names_still_finds_attachments(server: Server, api_key: str) -> None:
    bare = attachment("call_1", PUMP).replace(b"event: attachment\n", b"")
    server.answer(Reply(frames=[ROLE, bare, text("16 bar \ue202turn0file0"), FINAL, DONE]))
    (turn,) = _converse(_adapter(server), "q").turns
    assert [item.file_id for item in turn.evidence] == ["file-pump"]
    assert turn.citations[0].file_id == "file-pump"


@pytest.mark.parametrize("chunked", [True, False], ids=["chunked", "close-delimited"])
def test_truncated_stream_is_an_error_that_keeps_the_partial_answer(
    server: Server, api_key: str, chunked: bool
) -> None:
    server.answer(
        Reply(
            frames=[ROLE, attachment("call_1", PUMP), text("Rated for 16 bar"), text(" \ue202tu")],
            chunked=chunked,
            complete=False,
        )
    )
    transcript = _converse(_adapter(server), "first", "second")

    first, second = transcript.turns
    assert first.error is not None
    assert first.error.kind == "transport"
    assert first.answer == "Rated for 16 bar \ue202tu"
    assert [item.file_id for item in first.evidence] == ["file-pump"]
    assert first.citations == []  # the anchor was cut off
    assert len(first.exchanges) == 1  # a stream that started is not tried again
    assert first.exchanges[0].response_body[-1]["choices"][0]["delta"] == {"content": " \ue202tu"}
    assert second.ran is False
    assert len(server.seen) == 1
    assert transcript.error == first.error


def test_error_reported_mid_stream_is_the_turns_error(server: Server, api_key: str) -> None:
    server.answer(
        Reply(
            frames=[
                ROLE,
                text("Partial"),
                chunk({"content": "\n\nError: Provider returned 529 overloaded"}, finish="stop"),
                DONE,
            ]
        )
    )
    (turn,) = _converse(_adapter(server), "q").turns
    assert turn.error is not None
    assert turn.error.kind == "http_status"
    assert "Provider returned 529 overloaded" in turn.error.message
    assert turn.answer == "Partial"


def test_401_is_an_http_status_error_and_the_key_is_recorded_nowhere(
    server: Server, api_key: str
) -> None:
    def reject(seen: Seen) -> Reply:
        # echoes the credential, as a careless proxy might
        return Reply(
            status=401,
            body={"error": {"message": f"invalid key {seen.headers['authorization']}"}},
        )

    server.responder = reject
    transcript = _converse(_adapter(server), "q", "next")

    first, second = transcript.turns
    assert first.error is not None
    assert first.error.kind == "http_status"
    assert first.error.status_code == 401
    assert len(server.seen) == 1  # 401 is not retried
    assert second.ran is False
    recorded = json.dumps(transcript.to_json(), ensure_ascii=False)
    assert API_KEY not in recorded
    assert "<redacted>" in recorded


def test_5xx_before_the_stream_starts_is_retried(server: Server, api_key: str) -> None:
    server.answer(
        Reply(status=503, body={"error": "busy"}),
        Reply(frames=[ROLE, text("ok"), FINAL, DONE]),
    )
    (turn,) = _converse(_adapter(server), "q").turns
    assert turn.error is None
    assert turn.answer == "ok"
    assert [(exchange.attempt, exchange.status_code) for exchange in turn.exchanges] == [
        (1, 503),
        (2, 200),
    ]


def test_multi_turn_sends_the_history_without_a_conversation_id(
    server: Server, api_key: str
) -> None:
    def respond(seen: Seen) -> Reply:
        number = len(seen.json["messages"]) // 2 + 1
        return Reply(
            frames=[
                ROLE,
                attachment(f"call_{number}", PUMP),
                text(f"Answer {number}: 16 bar \ue202turn0file0"),
                FINAL,
                DONE,
            ]
        )

    server.responder = respond
    transcript = _converse(_adapter(server), "Pression ?", "Und in psi?")

    assert transcript.ok
    assert [turn.answer for turn in transcript.turns] == [
        "Answer 1: 16 bar \ue202turn0file0",
        "Answer 2: 16 bar \ue202turn0file0",
    ]
    first, second = (seen.json for seen in server.seen)
    assert "conversation_id" not in first
    assert "conversation_id" not in second
    assert second["messages"] == [
        {"role": "user", "content": "Pression ?"},
        {"role": "assistant", "content": "Answer 1: 16 bar \ue202turn0file0"},
        {"role": "user", "content": "Und in psi?"},
    ]
    # each turn's exchange keeps the messages as they were sent
    assert len(transcript.turns[0].exchanges[0].request["json"]["messages"]) == 1
    assert transcript.latency_s >= sum(turn.latency_s for turn in transcript.turns)


# ---------------------------------------------------------------------------------------
# Non-streaming


def test_non_streaming_records_executed_tool_calls_and_no_citations(
    server: Server, api_key: str
) -> None:
    server.answer(
        Reply(
            body={
                "id": "chatcmpl-x",
                "object": "chat.completion",
                "created": 1770000000,
                "model": AGENT,
                "choices": [
                    {
                        "index": 0,
                        "message": {
                            "role": "assistant",
                            "content": "16 bar \ue202turn0file0",
                            "tool_calls": [
                                {
                                    "id": "call_fs1",
                                    "type": "function",
                                    "function": {
                                        "name": "file_search",
                                        "arguments": '{"query": "pressure"}',
                                    },
                                }
                            ],
                        },
                        "finish_reason": "stop",
                    }
                ],
                "usage": {
                    "prompt_tokens": 10,
                    "completion_tokens": 5,
                    "total_tokens": 15,
                    "completion_tokens_details": {"reasoning_tokens": 2},
                },
            }
        )
    )
    transcript = _converse(_adapter(server, stream=False), "q")

    (turn,) = transcript.turns
    assert turn.error is None
    assert server.seen[0].json["stream"] is False
    assert turn.answer == "16 bar \ue202turn0file0"
    assert turn.tool_calls == [ToolCall("call_fs1", "file_search", {"query": "pressure"}, None)]
    assert turn.citations == []
    assert turn.evidence == []
    assert turn.usage == {
        "prompt_tokens": 10,
        "completion_tokens": 5,
        "total_tokens": 15,
        "completion_tokens_details.reasoning_tokens": 2,
    }
    assert turn.finish_reason == "stop"


# ---------------------------------------------------------------------------------------
# Failures that never reach the server, and adapter bugs


def test_missing_api_key_variable_is_an_adapter_error(
    server: Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(KEY_ENV, raising=False)
    (turn,) = _converse(_adapter(server), "q").turns
    assert turn.error is not None
    assert turn.error.kind == "adapter"
    assert KEY_ENV in turn.error.message
    assert server.seen == []


def test_an_adapter_bug_is_an_internal_error_not_an_exception(
    server: Server, api_key: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(answer: str, groups: Any) -> list[Citation]:
        raise KeyError("bug")

    monkeypatch.setattr(librechat, "resolve_citations", broken)
    server.answer(Reply(frames=[ROLE, text("ok"), FINAL, DONE]))
    transcript = _converse(_adapter(server), "q", "never sent")
    assert transcript.turns[0].error is not None
    assert transcript.turns[0].error.kind == "internal"
    assert "KeyError" in transcript.turns[0].error.message
    assert transcript.turns[0].answer == "ok"
    assert len(transcript.turns[0].exchanges) == 1  # the wire record survives the bug
    assert transcript.turns[1].ran is False


# ---------------------------------------------------------------------------------------
# Markers, without a server


def _item(rank: int, text: str, file_id: str, page: int | None = None) -> RetrievedItem:
    return RetrievedItem(
        rank=rank, text=text, file_id=file_id, filename=f"{file_id}.pdf", page=page
    )


def test_strip_citation_markers_removes_every_form() -> None:
    assert strip_citation_markers(
        "A. \ue202turn0file0 B\ue200\ue202turn0file1\\ue202turn0search2\ue201. "
        "\\ue203C\\ue204\\ue202turn1file0 \ue206D"
    ) == ("A. B. C D")
    assert strip_citation_markers("no markers, turn0file1 stays") == (
        "no markers, turn0file1 stays"
    )


def test_composite_anchors_are_not_collapsed_onto_one_source() -> None:
    sources = [
        _item(1, "two years of warranty from delivery", "terms"),
        _item(2, "warranty claims need the invoice", "claims"),
    ]
    citations = resolve_citations(
        "The warranty lasts two years from delivery \ue200\ue202turn0file0\ue202turn0file1\ue201",
        [sources],
    )
    assert [citation.file_id for citation in citations] == ["terms", "claims"]


def test_a_named_page_breaks_a_tie_between_equal_contents() -> None:
    sources = [
        _item(1, "max pressure 16 bar", "sheet", page=2),
        _item(2, "max pressure 16 bar", "sheet", page=9),
    ]
    (citation,) = resolve_citations("Max pressure 16 bar (page 9) \ue202turn0file5", [sources])
    assert citation.page == 9
    (citation,) = resolve_citations("Max pressure 16 bar \ue202turn0file5", [sources])
    assert citation.page == 2  # no page named: the earlier source


def test_each_anchor_reads_only_its_own_claim() -> None:
    sources = [
        _item(1, "the pump is rated for 16 bar", "pump"),
        _item(2, "warranty of two years", "terms"),
    ]
    citations = resolve_citations(
        "The pump is rated for 16 bar \ue202turn0file1, and the warranty is two years "
        "\ue202turn0file0.",
        [sources],
    )
    assert [citation.file_id for citation in citations] == ["pump", "terms"]


def test_anchors_without_any_source_are_dangling() -> None:
    assert resolve_citations("16 bar \ue202turn0file0 \ue202turn0search1", []) == [
        Citation("\ue202turn0file0")
    ]
