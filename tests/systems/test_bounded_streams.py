"""Bounded I/O of the chat adapters against real loopback servers: a streamed answer is
bounded in bytes (after decompression) like a plain one, a conversation by its total
deadline, and a model answer by the number of searches it may ask for at once."""

from __future__ import annotations

import gzip
import json
import threading
import time
import tracemalloc
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

import pytest

from pytest_ragv2.systems.http_json_chat import HttpJsonChat, HttpJsonChatConfig
from pytest_ragv2.systems.librechat_agents import LibreChatAgents, LibreChatAgentsConfig
from pytest_ragv2.systems.openai_chat import OpenAIChat, OpenAIChatConfig
from pytest_ragv2.systems.outputs import RetrievedItem
from pytest_ragv2.systems.python_callable import PythonRetrieval, PythonRetriever
from pytest_ragv2.systems.transcripts import Transcript
from tests.conftest import QuietHTTPServer
from tests.scripted_server import Reply, Seen, Server, serve

MB = 1024 * 1024


def _chunk(delta: dict[str, Any], finish_reason: str | None = None) -> dict[str, Any]:
    return {
        "object": "chat.completion.chunk",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
    }


def _event(data: Any) -> bytes:
    return b"data: " + json.dumps(data, ensure_ascii=False).encode("utf-8") + b"\n\n"


def _content_event(text: str) -> bytes:
    return _event(_chunk({"content": text}))


DONE = b"data: [DONE]\n\n"


def _openai(url: str, **overrides: Any) -> OpenAIChat:
    settings: dict[str, Any] = {
        "adapter": "openai-chat",
        "url": url,
        "model": "m",
        "stream": True,
        "retry": {"attempts": 1},
        **overrides,
    }
    return OpenAIChat("local", OpenAIChatConfig.model_validate(settings))


def _librechat(url: str, **overrides: Any) -> LibreChatAgents:
    settings: dict[str, Any] = {
        "adapter": "librechat-agents",
        "url": url,
        "agent_id": "agent_1",
        "retry": {"attempts": 1},
        **overrides,
    }
    return LibreChatAgents("librechat", LibreChatAgentsConfig.model_validate(settings))


def _converse(adapter: OpenAIChat | LibreChatAgents | HttpJsonChat, prompts: list[str]) -> Any:
    try:
        return adapter.converse(prompts)
    finally:
        adapter.close()


# --------------------------------------------------------------------------------------------
# An endless streamed answer: the server writes until the client goes away
# --------------------------------------------------------------------------------------------


@dataclass
class Endless:
    """A server streaming ``head`` and then ``piece`` forever (chunked), counting the
    bytes written; ``gone`` is set when the client closed the connection."""

    head: bytes
    piece: bytes
    url: str = ""
    written: int = 0
    gone: threading.Event = field(default_factory=threading.Event)


@pytest.fixture
def endless() -> Iterator[Endless]:
    state = Endless(head=b"", piece=b"")

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            try:
                data = state.head
                while True:
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
                    self.wfile.flush()
                    state.written += len(data)
                    data = state.piece
            except OSError:  # the client closed the stream: what the tests wait for
                state.gone.set()
                self.close_connection = True

        def log_message(self, format: str, *args: Any) -> None:
            pass

    httpd = QuietHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    state.url = f"http://127.0.0.1:{httpd.server_address[1]}"
    try:
        yield state
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join()


def test_an_endless_streamed_answer_stops_at_max_response_mb_keeping_what_arrived(
    endless: Endless,
) -> None:
    endless.head = _event(_chunk({"role": "assistant", "content": ""}))
    endless.piece = _content_event("x" * 1000)
    transcript = _converse(
        _openai(f"{endless.url}/v1", max_response_mb=1), ["question", "never sent"]
    )

    first, second = transcript.turns
    assert first.error is not None
    assert first.error.kind == "too_large"
    assert f"{MB:,} bytes" in first.error.message
    assert "max_response_mb" in first.error.message
    assert 0.5 * MB < len(first.answer) <= MB  # the answer as far as it arrived
    assert set(first.answer) == {"x"}
    frames = first.exchanges[0].response_body
    assert len(frames) > 500
    assert frames[-1]["choices"][0]["delta"]["content"] == "x" * 1000
    assert second.ran is False
    assert endless.gone.wait(10.0)  # the stream was closed, not drained
    assert endless.written < 16 * MB


@pytest.mark.parametrize("adapter", ["openai-chat", "librechat-agents"])
def test_a_line_that_never_ends_is_bounded_in_memory(endless: Endless, adapter: str) -> None:
    endless.head = b'data: {"choices": [{"index": 0, "delta": {"content": "'
    endless.piece = b"y" * 65536  # no newline, ever
    chat = (
        _openai(f"{endless.url}/v1", max_response_mb=2)
        if adapter == "openai-chat"
        else _librechat(endless.url, max_response_mb=2)
    )
    tracemalloc.start()
    try:
        transcript = _converse(chat, ["question"])
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()

    (turn,) = transcript.turns
    assert turn.error is not None
    assert turn.error.kind == "too_large"
    assert turn.answer == ""  # no frame ever completed
    assert peak < 16 * MB  # a few copies of the 2 MB bound at most, however long the line
    assert endless.gone.wait(10.0)


def _gzip_stream(server: Server, text_pieces: int) -> None:
    events = [_event(_chunk({"role": "assistant", "content": ""}))]
    events += [_content_event("z" * 1000) for _ in range(text_pieces)]
    events.append(DONE)
    body = gzip.compress(b"".join(events))
    server.answer(Reply(raw=body, headers={"Content-Encoding": "gzip"}))


def test_a_compressed_stream_is_bounded_after_decompression() -> None:
    with serve("/v1") as server:
        _gzip_stream(server, text_pieces=5000)  # ~5.4 MB inflated, a few KB on the wire
        transcript: Transcript = _converse(_openai(server.url, max_response_mb=1), ["question"])
    (turn,) = transcript.turns
    assert turn.error is not None
    assert turn.error.kind == "too_large"
    assert "after decompression" in turn.error.message
    assert 0 < len(turn.answer) <= MB


def test_a_compressed_stream_within_the_bound_is_read_whole() -> None:
    with serve("/v1") as server:
        _gzip_stream(server, text_pieces=50)
        transcript: Transcript = _converse(_openai(server.url), ["question"])
    (turn,) = transcript.turns
    assert turn.error is None
    assert turn.answer == "z" * 50_000


def test_a_librechat_stream_over_the_bound_keeps_its_partial_answer() -> None:
    events = [_content_event("Le délai est de 4 h. ")] * 3000  # ~0.2 MB
    with serve() as server:
        server.answer(Reply(frames=[*events, DONE]))
        transcript: Transcript = _converse(
            _librechat(server.url, max_response_mb=0.1), ["Q1", "Q2"]
        )
    first, second = transcript.turns
    assert first.error is not None
    assert first.error.kind == "too_large"
    assert first.answer.startswith("Le délai est de 4 h. Le délai")
    assert len(first.answer) < 0.1 * MB
    assert second.ran is False


# --------------------------------------------------------------------------------------------
# The conversation's total deadline
# --------------------------------------------------------------------------------------------


def _slow_second_turn(stream: bool) -> Reply:
    """What answers the second request: an answer that starts, then stalls for 30 s."""
    if stream:
        frames = [_content_event("Début "), _content_event("jamais fini"), DONE]
        return Reply(frames=frames, frame_gap_s=30.0)
    return Reply(body={"choices": [{"message": {"content": "tard"}}]}, delay_s=30.0)


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
def test_the_conversation_deadline_ends_the_turn_under_way_and_skips_the_rest(
    stream: bool,
) -> None:
    first_answer = (
        Reply(frames=[_content_event("Un."), DONE])
        if stream
        else Reply(body={"choices": [{"message": {"content": "Un."}}]})
    )
    with serve("/v1") as server:
        server.answer(first_answer, _slow_second_turn(stream))
        transcript: Transcript = _converse(
            _openai(server.url, stream=stream, timeout_s=60, conversation_timeout_s=1.0),
            ["Q1", "Q2", "Q3"],
        )

    first, second, third = transcript.turns
    assert first.error is None
    assert first.answer == "Un."
    assert second.error is not None
    assert second.error.kind == "timeout"
    assert "conversation_timeout_s = 1" in second.error.message
    assert second.answer == ("Début " if stream else "")
    assert third.ran is False


def test_no_retry_is_attempted_past_the_conversation_deadline() -> None:
    with serve("/v1") as server:
        server.answer(Reply(503, {"error": "busy"}))
        transcript: Transcript = _converse(
            _openai(
                server.url,
                stream=False,
                retry={"attempts": 10, "backoff_s": 0.4},
                conversation_timeout_s=1.0,
            ),
            ["Q1"],
        )
        tries = len(server.seen)

    (turn,) = transcript.turns
    assert turn.error is not None
    assert turn.error.kind == "timeout"
    assert "no time left to try again" in turn.error.message
    assert 1 <= tries < 10
    assert len(turn.exchanges) == tries


def test_librechat_and_http_json_chat_keep_the_conversation_deadline() -> None:
    slow = Reply(body={"answer": "tard"}, delay_s=30.0)
    with serve() as server:
        server.answer_path("/chat", Reply(body={"answer": "Un."}), slow)
        server.answer_path(
            "/api/agents/v1/chat/completions",
            Reply(frames=[_content_event("Un."), DONE]),
            Reply(frames=[_content_event("Deux"), DONE], delay_s=30.0),
        )
        json_chat = HttpJsonChat(
            "svc",
            HttpJsonChatConfig(
                adapter="http-json-chat",
                url=f"{server.url}/chat",
                answer_path="answer",
                retry={"attempts": 1},  # type: ignore[arg-type]
                conversation_timeout_s=1.0,
            ),
        )
        librechat = _librechat(server.url, conversation_timeout_s=1.0)
        for adapter in (json_chat, librechat):
            transcript: Transcript = _converse(adapter, ["Q1", "Q2", "Q3"])
            first, second, third = transcript.turns
            assert first.error is None
            assert first.answer == "Un."
            assert second.error is not None
            assert second.error.kind == "timeout", adapter
            assert "conversation_timeout_s = 1" in second.error.message
            assert third.ran is False


# --------------------------------------------------------------------------------------------
# Searches the harness runs for a model
# --------------------------------------------------------------------------------------------

SEARCHES: list[str] = []


def slow_search(query: str, k: int) -> list[RetrievedItem]:
    SEARCHES.append(query)
    time.sleep(0.6)
    return [RetrievedItem(1, f"Résultat pour {query}.", "doc", "doc.pdf", page=1)]


def _retriever() -> PythonRetriever:
    config = PythonRetrieval(adapter="python", callable=f"{__name__}:slow_search", k=1)
    return PythonRetriever("library", config)


def _tool_answer(count: int, content: str = "Je cherche.") -> dict[str, Any]:
    calls = [
        {
            "id": f"c{number}",
            "type": "function",
            "function": {
                "name": "search_knowledge_base",
                "arguments": json.dumps({"query": f"q{number}"}),
            },
        }
        for number in range(count)
    ]
    message = {"role": "assistant", "content": content, "tool_calls": calls}
    return {"choices": [{"index": 0, "message": message, "finish_reason": "tool_calls"}]}


FINAL = {"choices": [{"index": 0, "message": {"content": "Voilà [1]."}, "finish_reason": "stop"}]}


def _model(count: int) -> Any:
    def reply(seen: Seen) -> Reply:
        ran = [message for message in seen.json["messages"] if message["role"] == "tool"]
        return Reply(body=FINAL if ran else _tool_answer(count))

    return reply


def _kb_chat(url: str, **overrides: Any) -> OpenAIChat:
    settings: dict[str, Any] = {
        "adapter": "openai-chat",
        "url": url,
        "model": "m",
        "retry": {"attempts": 1},
        **overrides,
    }
    return OpenAIChat("local", OpenAIChatConfig.model_validate(settings), _retriever())


def test_an_answer_with_a_thousand_searches_runs_none() -> None:
    SEARCHES.clear()
    with serve("/v1") as server:
        server.responder = _model(1000)
        transcript: Transcript = _converse(_kb_chat(server.url), ["Q1", "Q2"])

    first, second = transcript.turns
    assert first.error is not None
    assert first.error.kind == "limit"
    assert "1000 searches" in first.error.message
    assert "max_tool_calls_per_round = 16" in first.error.message
    assert SEARCHES == []
    assert len(first.tool_calls) == 1000
    assert all(call.result is None for call in first.tool_calls)
    assert first.answer == "Je cherche."
    assert second.ran is False


def test_an_answer_at_the_cap_has_all_its_searches_run() -> None:
    SEARCHES.clear()
    with serve("/v1") as server:
        server.responder = _model(2)
        transcript: Transcript = _converse(_kb_chat(server.url, max_tool_calls_per_round=2), ["Q1"])
    (turn,) = transcript.turns
    assert turn.error is None
    assert sorted(SEARCHES) == ["q0", "q1"]
    assert [call.result is not None for call in turn.tool_calls] == [True, True]


def test_the_conversation_deadline_stops_the_searches_not_yet_run() -> None:
    SEARCHES.clear()
    with serve("/v1") as server:
        server.responder = _model(6)  # 6 searches of 0.6 s: 3.6 s, the deadline is 1 s
        transcript: Transcript = _converse(_kb_chat(server.url, conversation_timeout_s=1.0), ["Q1"])

    (turn,) = transcript.turns
    assert turn.error is not None
    assert turn.error.kind == "timeout"
    assert "conversation_timeout_s = 1" in turn.error.message
    assert 1 <= len(SEARCHES) < 6
    assert [call.id for call in turn.tool_calls] == [f"c{number}" for number in range(6)]
    ran = [call.result is not None for call in turn.tool_calls]
    assert ran == [True] * len(SEARCHES) + [False] * (6 - len(SEARCHES))


# --------------------------------------------------------------------------------------------
# A long answer is stored once in a raw run
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
def test_a_long_answer_is_stored_once_and_read_back_whole(stream: bool) -> None:
    text = "".join(f"Phrase {number} de la réponse. " for number in range(20_000))  # ~0.5 MB
    with serve("/v1") as server:
        if stream:
            pieces = [text[start : start + 4096] for start in range(0, len(text), 4096)]
            server.answer(Reply(frames=[*map(_content_event, pieces), DONE]))
        else:
            server.answer(Reply(body={"choices": [{"message": {"content": text}}]}))
        transcript: Transcript = _converse(_openai(server.url, stream=stream), ["Q1"])
    (turn,) = transcript.turns
    assert turn.error is None
    assert turn.answer == text

    line = json.dumps(transcript.to_json(), ensure_ascii=False)
    assert len(line) < 1.2 * len(text)  # not twice: the exchange refers to the answer
    back = Transcript.from_json(json.loads(line))
    assert back.turns[0].answer == text
    assert back.turns[0].exchanges[0].response_body == turn.exchanges[0].response_body


def test_a_short_answer_and_strings_not_in_it_are_kept_as_they_came() -> None:
    unrelated = "n" * 5000
    body = {"choices": [{"message": {"content": "Court."}}], "debug": unrelated}
    with serve("/v1") as server:
        server.answer(Reply(body=body))
        transcript: Transcript = _converse(_openai(server.url, stream=False), ["Q1"])
    data = transcript.to_json()["turns"][0]
    assert data["exchanges"][0]["response_body"] == body
    assert "answer_refs" not in data
