"""The OpenAI-compatible chat adapter against a real HTTP server on 127.0.0.1.

The server is the standard library's (HTTP/1.1, Nagle's algorithm disabled). It records
every request it receives and answers from a script: a JSON body, or server-sent events
written frame by frame, chunked or close-delimited, complete or cut off.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import pytest

from pytest_ragv2.systems.openai_chat import OpenAIChat, OpenAIChatConfig
from pytest_ragv2.systems.openai_wire import UNPARSED_ARGUMENTS
from pytest_ragv2.systems.outputs import RunError
from pytest_ragv2.systems.transcripts import ToolCall, Transcript
from tests.scripted_server import Reply, Seen, Server, serve

API_KEY = "sk-test-0123456789abcdef-do-not-leak"
FRENCH = "Le délai de réponse garanti est de 4 h ; coût : 1 689 k€ (99,7 % de disponibilité)."
GERMAN = "Die Größe der Übergabe beträgt 1.689 Stück – Maßnahme „Prüfung“ erfüllt."


ChatServer = Server


@pytest.fixture
def server() -> Iterator[ChatServer]:
    with serve("/v1") as running:
        yield running


def completion(
    content: str | None,
    *,
    tool_calls: list[dict[str, Any]] | None = None,
    usage: dict[str, Any] | None = None,
    finish_reason: str = "stop",
) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_calls is not None:
        message["tool_calls"] = tool_calls
    answer: dict[str, Any] = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1700000000,
        "model": "local-model",
        "choices": [{"index": 0, "message": message, "finish_reason": finish_reason}],
    }
    if usage is not None:
        answer["usage"] = usage
    return answer


def chunk(delta: dict[str, Any], finish_reason: str | None = None) -> dict[str, Any]:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 1700000000,
        "model": "local-model",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
    }


def event(data: Any) -> bytes:
    text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
    return b"data: " + text.encode("utf-8") + b"\n\n"


def content_events(text: str, pieces: int) -> list[bytes]:
    size = max(1, len(text) // pieces)
    parts = [text[start : start + size] for start in range(0, len(text), size)]
    return [event(chunk({"content": part})) for part in parts]


DONE_EVENT = b"data: [DONE]\n\n"


def chat(server: ChatServer, **overrides: Any) -> OpenAIChat:
    settings: dict[str, Any] = {
        "adapter": "openai-chat",
        "url": server.url,
        "model": "local-model",
        "retry": {"attempts": 2, "backoff_s": 0.0},
    }
    settings.update(overrides)
    return OpenAIChat("local", OpenAIChatConfig.model_validate(settings))


def converse(server: ChatServer, prompts: list[str], **overrides: Any) -> Transcript:
    adapter = chat(server, **overrides)
    try:
        return adapter.converse(prompts)
    finally:
        adapter.close()


def test_non_streaming_answer_usage_and_request(server: ChatServer) -> None:
    usage = {
        "prompt_tokens": 12,
        "completion_tokens": 5,
        "total_tokens": 17,
        "prompt_tokens_details": {"cached_tokens": 3},
    }
    server.answer(Reply(body=completion("Le plan Pro coûte 49 €.", usage=usage)))

    transcript = converse(
        server,
        ["Quel est le prix du plan Pro ?"],
        system_prompt="Réponds en français.",
        temperature=0.2,
        max_tokens=256,
    )

    assert transcript.error is None
    (turn,) = transcript.turns
    assert turn.answer == transcript.final_answer == "Le plan Pro coûte 49 €."
    assert turn.usage == {
        "prompt_tokens": 12,
        "completion_tokens": 5,
        "total_tokens": 17,
        "prompt_tokens_details.cached_tokens": 3,
    }
    assert turn.finish_reason == "stop"
    assert turn.tool_calls == []
    assert 0 < turn.latency_s <= transcript.latency_s
    (seen,) = server.seen
    assert seen.path == "/v1/chat/completions"
    assert seen.json == {
        "model": "local-model",
        "messages": [
            {"role": "system", "content": "Réponds en français."},
            {"role": "user", "content": "Quel est le prix du plan Pro ?"},
        ],
        "temperature": 0.2,
        "stream": False,
        "max_tokens": 256,
    }
    (exchange,) = turn.exchanges
    assert exchange.status_code == 200
    assert exchange.request["json"] == seen.json
    assert exchange.response_body["usage"] == usage
    # the transcript survives JSON and comes back equal (rescoring from raw runs)
    again = Transcript.from_json(json.loads(json.dumps(transcript.to_json())))
    assert again == transcript


SEARCH_TOOL = {
    "type": "function",
    "function": {
        "name": "search",
        "description": "Search the knowledge base",
        "parameters": {"type": "object", "properties": {"query": {"type": "string"}}},
    },
}


def test_non_streaming_tool_call_with_json_arguments(server: ChatServer) -> None:
    calls = [
        {
            "id": "call_abc",
            "type": "function",
            "function": {"name": "search", "arguments": '{"query": "SLA Nimbus", "k": 3}'},
        },
        {"id": "call_def", "type": "function", "function": {"name": "search", "arguments": "{"}},
    ]
    server.answer(Reply(body=completion(None, tool_calls=calls, finish_reason="tool_calls")))

    transcript = converse(server, ["Quel est le SLA ?"], tools=[SEARCH_TOOL])

    assert transcript.error is None
    assert transcript.final_answer == ""
    assert transcript.tool_calls == [
        ToolCall(id="call_abc", name="search", arguments={"query": "SLA Nimbus", "k": 3}),
        ToolCall(id="call_def", name="search", arguments={UNPARSED_ARGUMENTS: "{"}),
    ]
    assert transcript.turns[0].finish_reason == "tool_calls"
    assert server.seen[0].json["tools"] == [SEARCH_TOOL]


def test_streaming_joins_content_and_assembles_tool_calls(server: ChatServer) -> None:
    answer = "Le délai de réponse garanti est de 4 h pour le plan Entreprise."
    frames = [
        event(chunk({"role": "assistant", "content": ""})),
        *content_events(answer, pieces=12),
        event(
            chunk(
                {
                    "tool_calls": [
                        {
                            "index": 0,
                            "id": "call_1",
                            "type": "function",
                            "function": {"name": "search", "arguments": ""},
                        }
                    ]
                }
            )
        ),
        *[
            event(chunk({"tool_calls": [{"index": 0, "function": {"arguments": part}}]}))
            for part in ['{"que', 'ry": "dé', 'lai SLA"', ', "k": 5}']
        ],
        event(
            chunk(
                {
                    "tool_calls": [
                        {"index": 1, "id": "call_2", "function": {"name": "sea", "arguments": "{}"}}
                    ]
                }
            )
        ),
        event(chunk({"tool_calls": [{"index": 1, "function": {"name": "rch"}}]})),
        event(chunk({}, finish_reason="tool_calls")),
        event(
            {
                "id": "chatcmpl-1",
                "object": "chat.completion.chunk",
                "choices": [],
                "usage": {"prompt_tokens": 40, "completion_tokens": 25, "total_tokens": 65},
            }
        ),
        b": keep-alive comment\n\n",
        DONE_EVENT,
    ]
    server.answer(Reply(frames=frames))

    transcript = converse(server, ["Quel est le délai ?"], stream=True, tools=[SEARCH_TOOL])

    assert transcript.error is None
    (turn,) = transcript.turns
    assert turn.answer == answer
    assert turn.tool_calls == [
        ToolCall(id="call_1", name="search", arguments={"query": "délai SLA", "k": 5}),
        ToolCall(id="call_2", name="search", arguments={}),
    ]
    assert turn.usage == {"prompt_tokens": 40, "completion_tokens": 25, "total_tokens": 65}
    assert turn.finish_reason == "tool_calls"
    body = server.seen[0].json
    assert body["stream"] is True
    assert body["stream_options"] == {"include_usage": True}
    (exchange,) = turn.exchanges
    assert exchange.response_body[-1] == "[DONE]"
    assert len(exchange.response_body) == len(frames) - 1  # the comment carries no data


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
def test_three_turns_share_one_conversation(server: ChatServer, stream: bool) -> None:
    prompts = ["Qui est le client ?", "Et son plan ?", "Résume en une phrase."]
    answers = ["Nimbus Analytics.", "Le plan Pro.", "Nimbus Analytics a le plan Pro."]

    def responder(seen: Seen) -> Reply:
        turn = sum(1 for message in seen.json["messages"] if message["role"] == "user")
        expected = [{"role": "system", "content": "Sois bref."}]
        for number in range(turn):
            expected.append({"role": "user", "content": prompts[number]})
            if number < turn - 1:
                expected.append({"role": "assistant", "content": answers[number]})
        if seen.json["messages"] != expected:
            return Reply(status=400, body={"error": {"message": "history not as expected"}})
        text = answers[turn - 1]
        if stream:
            return Reply(frames=[*content_events(text, pieces=3), DONE_EVENT])
        return Reply(body=completion(text))

    server.responder = responder
    transcript = converse(server, prompts, stream=stream, system_prompt="Sois bref.")

    assert transcript.error is None
    assert [turn.answer for turn in transcript.turns] == answers
    assert transcript.final_answer == answers[-1]
    assert len(server.seen) == 3
    assert [len(seen.json["messages"]) for seen in server.seen] == [2, 4, 6]
    assert transcript.latency_s >= sum(turn.latency_s for turn in transcript.turns)


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
def test_server_error_then_success_is_retried(server: ChatServer, stream: bool) -> None:
    success = (
        Reply(frames=[*content_events("Oui.", pieces=1), DONE_EVENT])
        if stream
        else Reply(body=completion("Oui."))
    )
    server.answer(Reply(status=500, body={"error": {"message": "slot busy"}}), success)

    transcript = converse(server, ["Disponible ?"], stream=stream)

    assert transcript.error is None
    assert transcript.final_answer == "Oui."
    assert len(server.seen) == 2
    exchanges = transcript.turns[0].exchanges
    assert [(e.status_code, e.attempt) for e in exchanges] == [(500, 1), (200, 2)]
    assert exchanges[0].response_body == {"error": {"message": "slot busy"}}


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
def test_retries_follow_the_policy_reasons_and_backoff(server: ChatServer, stream: bool) -> None:
    success = (
        Reply(frames=[*content_events("Oui.", pieces=1), DONE_EVENT])
        if stream
        else Reply(body=completion("Oui."))
    )
    busy = Reply(status=503, body={"error": "busy"})
    slow_down = Reply(status=429, body={"error": "slow down"})
    policy = {"attempts": 3, "backoff_s": 0.1, "retry_on": ["429", "5xx"]}
    server.answer(slow_down, busy, success)

    started = time.perf_counter()
    transcript = converse(server, ["Disponible ?"], stream=stream, retry=policy)
    elapsed = time.perf_counter() - started

    assert transcript.final_answer == "Oui."
    exchanges = transcript.turns[0].exchanges
    assert [(e.status_code, e.attempt) for e in exchanges] == [(429, 1), (503, 2), (200, 3)]
    assert elapsed >= 0.1 + 0.2  # backoff_s * 2**(n-1) after try n

    server.seen.clear()
    server.answer(slow_down, success)
    transcript = converse(
        server, ["Disponible ?"], stream=stream, retry={**policy, "retry_on": ["5xx"]}
    )

    assert transcript.error is not None
    assert (transcript.error.kind, transcript.error.status_code) == ("http_status", 429)
    assert len(server.seen) == 1


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
def test_client_error_is_not_retried_and_stops_the_conversation(
    server: ChatServer, stream: bool
) -> None:
    server.answer(Reply(status=400, body={"error": {"message": "bad model"}}))

    transcript = converse(server, ["Un", "Deux"], stream=stream)

    error = transcript.error
    assert error is not None
    assert (error.kind, error.status_code) == ("http_status", 400)
    assert "bad model" in error.message
    assert len(server.seen) == 1
    assert [turn.ran for turn in transcript.turns] == [True, False]


@pytest.mark.parametrize("chunked", [True, False], ids=["chunked", "close-delimited"])
def test_truncated_stream_keeps_partial_answer_and_stops(server: ChatServer, chunked: bool) -> None:
    frames = content_events("Le plan Pro coûte", pieces=4)
    server.answer(Reply(frames=frames, chunked=chunked, complete=False))

    transcript = converse(server, ["Prix ?", "Et le plan Team ?", "Merci"], stream=True)

    first, second, third = transcript.turns
    assert first.error is not None
    assert first.error.kind == "transport"
    assert first.answer == "Le plan Pro coûte"
    assert transcript.final_answer == ""
    assert transcript.error == first.error
    assert [turn.ran for turn in transcript.turns] == [True, False, False]
    assert second.error is None
    assert second.answer == ""
    assert second.exchanges == []
    assert third.prompt == "Merci"
    assert len(server.seen) == 1  # a truncated answer is not retried, later turns not sent
    (exchange,) = first.exchanges
    assert len(exchange.response_body) == len(frames)
    assert "[DONE]" not in exchange.response_body


def test_malformed_json_answer(server: ChatServer) -> None:
    server.answer(Reply(raw=b'{"choices": [{"message": '))

    transcript = converse(server, ["Prix ?"])

    error = transcript.error
    assert error is not None
    assert error.kind == "malformed"
    assert len(server.seen) == 1
    assert transcript.turns[0].exchanges[0].response_body == '{"choices": [{"message": '


def test_answer_without_choices_is_malformed(server: ChatServer) -> None:
    server.answer(Reply(body={"object": "error", "message": "model not loaded"}))

    error = converse(server, ["Prix ?"]).error

    assert error is not None
    assert error.kind == "malformed"
    assert "model not loaded" in error.message


@pytest.mark.parametrize(
    ("content", "expected"),
    [(None, "no content and no tool call"), ({"text": "16 bar"}, "message.content is an object")],
    ids=["null", "object"],
)
def test_an_answer_without_text_content_is_malformed_not_empty(
    server: ChatServer, content: Any, expected: str
) -> None:
    """content null with no tool call, or an object, is the service failing to answer: a
    recorded error, never an empty answer scored as the model's."""
    server.answer(Reply(body=completion(content)))

    transcript = converse(server, ["Pression ?"])

    error = transcript.error
    assert error is not None
    assert error.kind == "malformed"
    assert expected in error.message
    assert len(server.seen) == 1  # not retried: the same request would get the same answer


def test_a_structured_refusal_is_the_answer(server: ChatServer) -> None:
    answer = completion(None)
    answer["choices"][0]["message"]["refusal"] = "I can't help with that."
    server.answer(Reply(body=answer))

    transcript = converse(server, ["Pression ?"])

    assert transcript.error is None
    assert transcript.turns[0].answer == "I can't help with that."


def test_an_empty_string_is_an_empty_answer_not_an_error(server: ChatServer) -> None:
    server.answer(Reply(body=completion("")))

    transcript = converse(server, ["Pression ?"])

    assert transcript.error is None
    assert transcript.turns[0].answer == ""


@pytest.mark.parametrize(
    ("frames", "expected"),
    [
        ([event(chunk({"role": "assistant", "content": None}))], "no content and no tool call"),
        ([event(chunk({"content": {"text": "16 bar"}}))], "delta.content is an object"),
        ([event(chunk({"content": ["16 bar"]}))], "delta.content is a list"),
    ],
    ids=["never-content", "object", "list"],
)
def test_a_stream_without_text_content_is_malformed(
    server: ChatServer, frames: list[bytes], expected: str
) -> None:
    server.answer(Reply(frames=[*frames, DONE_EVENT]))

    error = converse(server, ["Pression ?"], stream=True).error

    assert error is not None
    assert error.kind == "malformed"
    assert expected in error.message


def test_malformed_stream_frame_keeps_partial_answer(server: ChatServer) -> None:
    frames = [*content_events("Réponse partielle", pieces=2), b'data: {"choices": [\n\n']
    server.answer(Reply(frames=[*frames, DONE_EVENT]))

    transcript = converse(server, ["Question ?", "Suite ?"], stream=True)

    first = transcript.turns[0]
    assert first.error is not None
    assert first.error.kind == "malformed"
    assert first.answer == "Réponse partielle"
    assert transcript.turns[1].ran is False
    assert first.exchanges[0].response_body[-1] == '{"choices": ['


def test_timeout_non_streaming(server: ChatServer) -> None:
    server.answer(Reply(body=completion("trop tard"), delay_s=1.0))

    transcript = converse(server, ["Vite ?"], timeout_s=0.2, retry={"attempts": 1})

    error = transcript.error
    assert error is not None
    assert error.kind == "timeout"  # the answer was due 1 s after the question: cut at 0.2 s
    assert transcript.turns[0].answer == ""


def test_timeout_mid_stream_keeps_partial_answer(server: ChatServer) -> None:
    frames = [*content_events("Début", pieces=1), DONE_EVENT]
    server.answer(Reply(frames=frames, delay_s=1.0))  # stalls before [DONE]

    transcript = converse(server, ["Vite ?"], stream=True, timeout_s=0.2)

    error = transcript.error
    assert error is not None
    assert error.kind == "timeout"
    assert transcript.turns[0].answer == "Début"
    assert len(server.seen) == 1
    assert transcript.turns[0].latency_s < 0.8


def test_endless_stream_is_cut_at_the_timeout(server: ChatServer) -> None:
    # each frame arrives well inside the read timeout; only the whole answer is too slow
    frames = [event(chunk({"content": "bla "})) for _ in range(40)]
    server.answer(Reply(frames=[*frames, DONE_EVENT], frame_gap_s=0.03))

    transcript = converse(server, ["Parle."], stream=True, timeout_s=0.3)

    turn = transcript.turns[0]
    assert turn.error is not None
    assert turn.error.kind == "timeout"
    assert turn.answer.startswith("bla bla ")
    assert turn.answer.count("bla") < 40
    assert turn.latency_s < 0.6


def test_keep_alive_comments_do_not_extend_the_timeout(server: ChatServer) -> None:
    # comments complete no event: the deadline is checked on every byte chunk, not per event
    pings = [b": keep-alive\n\n" for _ in range(40)]
    frames = [*content_events("Début", pieces=1), *pings, DONE_EVENT]
    server.answer(Reply(frames=frames, frame_gap_s=0.03))

    transcript = converse(server, ["Vite ?"], stream=True, timeout_s=0.3)

    turn = transcript.turns[0]
    assert turn.error is not None
    assert turn.error.kind == "timeout"
    assert turn.answer == "Début"
    assert turn.latency_s < 0.6


def test_a_stream_that_is_not_utf8_is_malformed(server: ChatServer) -> None:
    latin1 = b'data: {"choices": [{"index": 0, "delta": {"content": "caf\xe9"}}]}\n\n'
    server.answer(Reply(frames=[latin1, DONE_EVENT]))

    error = converse(server, ["Prix ?"], stream=True).error

    assert error is not None
    assert error.kind == "malformed"
    assert "UTF-8" in error.message


def test_the_last_event_is_read_without_its_blank_line(server: ChatServer) -> None:
    server.answer(Reply(frames=[*content_events("Oui.", pieces=1), b"data: [DONE]"]))

    transcript = converse(server, ["Disponible ?"], stream=True)

    assert transcript.error is None
    assert transcript.final_answer == "Oui."
    assert transcript.turns[0].exchanges[0].response_body[-1] == "[DONE]"


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
def test_api_key_is_sent_but_never_recorded(
    server: ChatServer, stream: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RAGV2_TEST_CHAT_KEY", API_KEY)
    monkeypatch.setenv("RAGV2_TEST_ORG", "org-secret-value-42")
    echoed = f"Votre clé est {API_KEY}."  # a model that repeats its key must not leak it
    if stream:
        server.answer(Reply(frames=[*content_events(echoed, pieces=1), DONE_EVENT]))
    else:
        server.answer(
            Reply(status=500, body={"error": f"bad key {API_KEY}"}), Reply(body=completion(echoed))
        )

    transcript = converse(
        server,
        ["Quelle est ma clé ?"],
        stream=stream,
        api_key_env="RAGV2_TEST_CHAT_KEY",
        headers_env={"OpenAI-Organization": "RAGV2_TEST_ORG"},
    )

    assert transcript.error is None
    assert all(seen.headers["authorization"] == f"Bearer {API_KEY}" for seen in server.seen)
    assert server.seen[0].headers["openai-organization"] == "org-secret-value-42"
    exchanges = transcript.turns[0].exchanges
    assert exchanges
    for exchange in exchanges:
        recorded = json.dumps(exchange.to_json(), ensure_ascii=False)
        assert API_KEY not in recorded
        assert "org-secret-value-42" not in recorded
        assert exchange.request["headers"] == {
            "OpenAI-Organization": "<redacted>",
            "Authorization": "<redacted>",
        }
    assert API_KEY not in json.dumps(transcript.to_json(), ensure_ascii=False)
    assert transcript.final_answer == "Votre clé est <redacted>."


def test_missing_key_variable_is_an_adapter_error(
    server: ChatServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("RAGV2_TEST_ABSENT_KEY", raising=False)
    server.answer(Reply(body=completion("jamais")))

    transcript = converse(server, ["Un", "Deux"], api_key_env="RAGV2_TEST_ABSENT_KEY")

    assert transcript.error == RunError(
        kind="adapter",
        message="environment variable RAGV2_TEST_ABSENT_KEY (API key) is not set or is empty",
    )
    assert server.seen == []


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
def test_french_and_german_text_intact(server: ChatServer, stream: bool) -> None:
    text = f"{FRENCH}\n{GERMAN}"
    if stream:
        # every frame split in two writes in the middle of its bytes, so multi-byte
        # characters (é, €, ß, „) arrive cut across network chunks
        frames: list[bytes] = []
        for whole in [*content_events(text, pieces=9), DONE_EVENT]:
            middle = len(whole) // 2
            frames += [whole[:middle], whole[middle:]]
        server.answer(Reply(frames=frames))
    else:
        server.answer(Reply(body=completion(text)))

    transcript = converse(server, [f"Répète : {GERMAN}"], stream=stream)

    assert transcript.error is None
    assert transcript.final_answer == text
    assert server.seen[0].json["messages"][0]["content"] == f"Répète : {GERMAN}"


def test_config_rejects_unknown_keys() -> None:
    with pytest.raises(ValueError, match="temprature"):
        OpenAIChatConfig.model_validate(
            {"adapter": "openai-chat", "url": "http://x/v1", "model": "m", "temprature": 0.1}
        )
