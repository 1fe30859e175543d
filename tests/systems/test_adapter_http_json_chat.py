"""The generic HTTP JSON chat adapter against a real HTTP server on 127.0.0.1.

The server (standard library, HTTP/1.1, Nagle's algorithm disabled) plays a chat service
that issues its own conversation id, nests the answer, its citations, evidence and tool
calls in an envelope, and records every request it receives.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

import pytest_ragv2.systems.http_json_chat as http_json_chat
from pytest_ragv2.systems.config import RetryPolicy
from pytest_ragv2.systems.http_json_chat import HttpJsonChat, HttpJsonChatConfig
from pytest_ragv2.systems.outputs import RetrievedItem
from pytest_ragv2.systems.transcripts import Citation, ToolCall, Transcript
from tests.scripted_server import Reply, Seen, Server, serve

TOKEN = "svc-token-0123456789abcdef"
TOKEN_ENV = "RAGV2_TEST_CHAT_TOKEN"


@pytest.fixture
def server() -> Iterator[Server]:
    with serve("/chat") as running:
        yield running


def _adapter(server: Server, **overrides: Any) -> HttpJsonChat:
    settings: dict[str, Any] = {
        "adapter": "http-json-chat",
        "url": server.url,
        "body": {
            "input": "{prompt}",
            "history": "{messages}",
            "session": {"id": "{conversation_id}", "label": "eval {conversation_id}"},
        },
        "answer_path": "data.reply.text",
        "conversation_id_path": "data.session",
        "citations_path": "data.reply.citations",
        "citation_fields": {
            "marker": "ref",
            "file_id": "doc.id",
            "filename": "doc.name",
            "page": "doc.page",
            "page_base": 0,
            "content": "quote",
        },
        "evidence_path": "data.context",
        "evidence_fields": {
            "text": "snippet",
            "file_id": "doc.id",
            "filename": "doc.name",
            "page": "doc.page",
            "page_base": 0,
            "score": "score",
        },
        "tool_calls_path": "data.steps",
        "tool_call_fields": {
            "id": "call",
            "name": "tool",
            "arguments": "input",
            "result": "output",
        },
        "usage_path": "meta.tokens",
        "headers_env": {"X-Api-Token": TOKEN_ENV},
        "timeout_s": 5.0,
        "retry": RetryPolicy(attempts=3, backoff_s=0.0),
    }
    settings.update(overrides)
    return HttpJsonChat("svc", HttpJsonChatConfig(**settings))


def _converse(adapter: HttpJsonChat, *prompts: str) -> Transcript:
    try:
        return adapter.converse(list(prompts))
    finally:
        adapter.close()


@pytest.fixture
def token(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv(TOKEN_ENV, TOKEN)
    return TOKEN


def _service_answer(number: int, session: str) -> dict[str, Any]:
    return {
        "data": {
            "session": session,
            "reply": {
                "text": f"Réponse {number} : 16 bar [1].",
                "citations": [
                    {
                        "ref": "[1]",
                        "doc": {"id": "file-pump", "name": "pump.pdf", "page": 1},
                        "quote": "maximum pressure of 16 bar",
                    }
                ],
            },
            "context": [
                {
                    "snippet": "The NX-450 pump is rated for a maximum pressure of 16 bar.",
                    "doc": {"id": "file-pump", "name": "pump.pdf", "page": 1},
                    "score": 0.91,
                },
                {
                    "snippet": "Garantie : deux ans.",
                    "doc": {"id": "file-terms", "name": "terms.pdf", "page": 0},
                    "score": 0.42,
                },
            ],
            "steps": [
                {
                    "call": f"step-{number}",
                    "tool": "kb_search",
                    "input": '{"q": "pression maximale"}',
                    "output": {"hits": 2},
                }
            ],
        },
        "meta": {"tokens": {"in": 120, "out": 14, "detail": {"cached": 100}}},
    }


def test_multi_turn_conversation_with_a_server_issued_id(server: Server, token: str) -> None:
    def respond(seen: Seen) -> Reply:
        number = len(server.seen)
        session = seen.json["session"]["id"] or "conv-42"
        return Reply(body=_service_answer(number, session))

    server.responder = respond
    transcript = _converse(_adapter(server), "Pression maximale ?", "Et en psi ?")

    assert transcript.ok, transcript.error
    first, second = transcript.turns
    assert first.answer == "Réponse 1 : 16 bar [1]."
    assert second.answer == "Réponse 2 : 16 bar [1]."

    sent_first, sent_second = (seen.json for seen in server.seen)
    assert sent_first == {
        "input": "Pression maximale ?",
        "history": [{"role": "user", "content": "Pression maximale ?"}],
        "session": {"id": None, "label": "eval None"},
    }
    assert sent_second == {
        "input": "Et en psi ?",
        "history": [
            {"role": "user", "content": "Pression maximale ?"},
            {"role": "assistant", "content": "Réponse 1 : 16 bar [1]."},
            {"role": "user", "content": "Et en psi ?"},
        ],
        "session": {"id": "conv-42", "label": "eval conv-42"},
    }
    assert server.seen[0].headers["x-api-token"] == TOKEN

    assert first.citations == [
        Citation("[1]", "file-pump", "pump.pdf", 2, "maximum pressure of 16 bar")
    ]
    assert [(item.rank, item.file_id, item.page, item.score) for item in first.evidence] == [
        (1, "file-pump", 2, 0.91),
        (2, "file-terms", 1, 0.42),
    ]
    assert isinstance(first.evidence[0], RetrievedItem)
    assert first.evidence[0].text == "The NX-450 pump is rated for a maximum pressure of 16 bar."
    assert second.tool_calls == [
        ToolCall("step-2", "kb_search", {"q": "pression maximale"}, '{"hits": 2}')
    ]
    assert first.usage == {"in": 120, "out": 14, "detail.cached": 100}
    (exchange,) = first.exchanges
    assert exchange.request["headers"] == {"X-Api-Token": "<redacted>"}
    assert exchange.status_code == 200
    assert first.latency_s > 0
    assert transcript.latency_s >= first.latency_s + second.latency_s
    assert TOKEN not in json.dumps(transcript.to_json())


def test_defaults_send_messages_and_read_only_the_answer(server: Server) -> None:
    server.answer(Reply(body={"answer": "ok", "citations": "ignored: no citations_path"}))
    adapter = HttpJsonChat(
        "svc",
        HttpJsonChatConfig(adapter="http-json-chat", url=server.url, answer_path="answer"),
    )
    transcript = _converse(adapter, "q")
    assert transcript.ok
    assert transcript.final_answer == "ok"
    assert transcript.turns[0].citations == []
    assert server.seen[0].json == {
        "messages": [{"role": "user", "content": "q"}],
        "conversation_id": None,
    }


def test_citations_without_a_marker_field_are_numbered(server: Server, token: str) -> None:
    answer = _service_answer(1, "conv-1")
    answer["data"]["reply"]["citations"].append({"doc": {"id": "file-terms"}})
    server.answer(Reply(body=answer))
    citation_fields = {"file_id": "doc.id"}
    (turn,) = _converse(_adapter(server, citation_fields=citation_fields), "q").turns
    assert turn.citations == [Citation("[1]", "file-pump"), Citation("[2]", "file-terms")]


def test_malformed_json_is_a_malformed_error(server: Server, token: str) -> None:
    server.answer(Reply(raw=b'{"data": {"reply": '))
    transcript = _converse(_adapter(server), "q", "never sent")
    first, second = transcript.turns
    assert first.error is not None
    assert first.error.kind == "malformed"
    assert "not JSON" in first.error.message
    assert second.ran is False
    assert len(server.seen) == 1


@pytest.mark.parametrize(
    ("content_type", "raw", "kept"),
    [
        ("text/plain; charset=iso-8859-1", "Dépassement: réessayez".encode("latin-1"), None),
        ("text/plain; charset=utf-8", "Dépassement: réessayez".encode(), None),
        ("text/plain", "Dépassement: réessayez".encode(), None),
        ("text/plain; charset=no-such-codec", "Dépassement".encode(), "Dépassement"),
    ],
)
def test_a_body_that_is_not_json_is_kept_as_text_in_its_charset(
    server: Server, token: str, content_type: str, raw: bytes, kept: str | None
) -> None:
    server.answer(Reply(status=400, raw=raw, headers={"Content-Type": content_type}))
    (turn,) = _converse(_adapter(server), "q").turns
    assert turn.error is not None
    assert turn.exchanges[-1].response_body == (kept or "Dépassement: réessayez")
    assert (kept or "Dépassement: réessayez") in turn.error.message


def test_missing_answer_path_is_a_malformed_error_naming_the_path(
    server: Server, token: str
) -> None:
    server.answer(Reply(body={"data": {"session": "conv-1", "reply": {"txt": "typo"}}}))
    (turn,) = _converse(_adapter(server), "q").turns
    assert turn.error is not None
    assert turn.error.kind == "malformed"
    assert "'data.reply.text'" in turn.error.message
    assert turn.answer == ""


def test_missing_conversation_id_in_the_first_answer_is_malformed(
    server: Server, token: str
) -> None:
    answer = _service_answer(1, "conv-1")
    del answer["data"]["session"]
    server.answer(Reply(body=answer))
    (turn,) = _converse(_adapter(server), "q").turns
    assert turn.error is not None
    assert turn.error.kind == "malformed"
    assert "'data.session'" in turn.error.message


def test_a_citations_value_that_is_not_a_list_is_malformed(server: Server, token: str) -> None:
    answer = _service_answer(1, "conv-1")
    answer["data"]["reply"]["citations"] = {"ref": "[1]"}
    server.answer(Reply(body=answer))
    (turn,) = _converse(_adapter(server), "q").turns
    assert turn.error is not None
    assert turn.error.kind == "malformed"
    assert "'data.reply.citations'" in turn.error.message


def test_5xx_is_retried(server: Server, token: str) -> None:
    server.answer(
        Reply(status=502, body={"error": "bad gateway"}),
        Reply(status=503, raw=b"busy"),
        Reply(body=_service_answer(1, "conv-1")),
    )
    (turn,) = _converse(_adapter(server), "q").turns
    assert turn.error is None
    assert turn.answer == "Réponse 1 : 16 bar [1]."
    assert [(exchange.attempt, exchange.status_code) for exchange in turn.exchanges] == [
        (1, 502),
        (2, 503),
        (3, 200),
    ]
    assert turn.exchanges[1].response_body == "busy"


def test_5xx_on_every_try_is_an_http_status_error(server: Server, token: str) -> None:
    server.answer(Reply(status=500, body={"error": "boom"}))
    (turn,) = _converse(_adapter(server), "q").turns
    assert turn.error is not None
    assert turn.error.kind == "http_status"
    assert turn.error.status_code == 500
    assert len(server.seen) == 3


def test_an_adapter_bug_is_an_internal_error_not_an_exception(
    server: Server, token: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(position: int, raw: Any, fields: Any) -> Citation:
        raise ZeroDivisionError("bug")

    monkeypatch.setattr(http_json_chat, "map_citation", broken)
    server.answer(Reply(body=_service_answer(1, "conv-1")))
    transcript = _converse(_adapter(server), "q", "never sent")
    assert transcript.turns[0].error is not None
    assert transcript.turns[0].error.kind == "internal"
    assert "ZeroDivisionError" in transcript.turns[0].error.message
    assert transcript.turns[1].ran is False
