"""Knowledge-base search run by the harness for the openai-chat adapter, end to end.

The "model" is a real OpenAI-compatible HTTP server on 127.0.0.1 (stdlib, Nagle's
algorithm disabled) whose scripted replies issue tool calls, read the tool messages they
get back and answer with citations. The retrievers are real: the demo rag_api server
(through the rag-api adapter) and an in-process function (through the python adapter).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

from pytest_ragv2.run.demo import v2_search_retrieval
from pytest_ragv2.systems.base import Retriever
from pytest_ragv2.systems.config import RetryPolicy
from pytest_ragv2.systems.http_json import HttpJsonRetriever
from pytest_ragv2.systems.kb_tool import (
    SEARCH_TOOL,
    cite_markers,
    item_from_source,
    parse_error,
    parse_sources,
    render_error,
    render_sources,
    resolve_citations,
)
from pytest_ragv2.systems.openai_chat import OpenAIChat, OpenAIChatConfig
from pytest_ragv2.systems.outputs import RetrievedItem
from pytest_ragv2.systems.python_callable import PythonRetrieval, PythonRetriever
from pytest_ragv2.systems.rag_api import RagApiRetrieval, RagApiRetriever
from pytest_ragv2.systems.transcripts import Citation, ToolCall, Transcript
from ragv2_demo.chunks import Chunk
from ragv2_demo.engine import DemoIndex
from ragv2_demo.server import DemoServer
from tests.scripted_server import Reply, Seen, Server, serve

# --------------------------------------------------------------------------------------------
# The pure parts (kb_tool)
# --------------------------------------------------------------------------------------------


def test_search_tool_definition_is_the_contract() -> None:
    assert SEARCH_TOOL == {
        "type": "function",
        "function": {
            "name": "search_knowledge_base",
            "description": "Search the knowledge base. Returns numbered sources; cite them as [n].",
            "parameters": {
                "type": "object",
                "properties": {"query": {"type": "string"}},
                "required": ["query"],
            },
        },
    }


def test_render_sources_numbers_from_start_and_omits_none() -> None:
    items = [
        RetrievedItem(
            rank=1, text="Le RPO est de 15 min.", file_id="sec", filename="s.pdf", page=2
        ),
        RetrievedItem(
            rank=2, text="T4 | 1 689", file_id="fin", table="CA 2025", row=4, row_key="T4"
        ),
    ]
    text = render_sources(items, start=3)
    assert json.loads(text) == {
        "sources": [
            {
                "n": 3,
                "file_id": "sec",
                "filename": "s.pdf",
                "page": 2,
                "text": "Le RPO est de 15 min.",
            },
            {"n": 4, "file_id": "fin", "table": "CA 2025", "row": 4, "text": "T4 | 1 689"},
        ]
    }
    assert "1 689" in text
    assert "\\u" not in text
    assert parse_sources(text) == json.loads(text)["sources"]
    assert item_from_source(parse_sources(text)[1]) == RetrievedItem(
        rank=4, text="T4 | 1 689", file_id="fin", table="CA 2025", row=4
    )
    assert json.loads(render_sources([], start=1)) == {"sources": []}


def test_parse_sources_and_errors_of_other_texts() -> None:
    assert parse_sources(render_error("timeout: slow")) == []
    assert parse_error(render_error("timeout: slow")) == "timeout: slow"
    assert parse_error(render_sources([])) is None
    assert parse_sources("not json") == []
    assert parse_sources('{"sources": [{"n": "1", "text": "x"}, {"n": 2, "text": "y"}, 3]}') == [
        {"n": 2, "text": "y"}
    ]


def test_cite_markers_forms() -> None:
    answer = (
        "Le RPO est de 15 min [1][3]. Le RTO [1, 3] et [2,4] ; plage [2-4], [5–6], [9-7].\n"
        "Lien [8](http://x) et note [^2] ne comptent pas ; [1;2] oui.\n[7]: une définition"
    )
    assert cite_markers(answer) == [
        ("[1]", [1]),
        ("[3]", [3]),
        ("[1, 3]", [1, 3]),
        ("[2,4]", [2, 4]),
        ("[2-4]", [2, 3, 4]),
        ("[5–6]", [5, 6]),
        ("[9-7]", [9, 7]),
        ("[1;2]", [1, 2]),
    ]
    assert cite_markers("Ratio [1-1000000] ?") == [("[1-1000000]", [1, 1000000])]
    assert cite_markers("Rien à citer.") == []


def test_resolve_citations_keeps_marker_as_written_and_dangling_ones() -> None:
    sources = [
        RetrievedItem(rank=1, text="a", file_id="f1", filename="f1.pdf", page=3),
        RetrievedItem(rank=2, text="b", file_id="f2", filename="f2.md"),
    ]
    citations = resolve_citations("X [1]. Y [1, 2]. Z [1]. W [9].", sources)
    assert citations == [
        Citation("[1]", "f1", "f1.pdf", 3, "a"),
        Citation("[1, 2]", "f1", "f1.pdf", 3, "a"),
        Citation("[1, 2]", "f2", "f2.md", None, "b"),
        Citation("[9]"),
    ]


# --------------------------------------------------------------------------------------------
# The scripted model server
# --------------------------------------------------------------------------------------------

USAGE = {"prompt_tokens": 10, "completion_tokens": 4, "total_tokens": 14}


@dataclass
class Answer:
    """One model answer: text and/or tool calls (id, name, arguments as JSON text)."""

    content: str | None = None
    calls: list[tuple[str, str, str]] = field(default_factory=list)


Script = Callable[[list[dict[str, Any]]], Answer]


@dataclass
class ModelServer:
    """The shared scripted server answering as a model: ``script`` reads the messages."""

    scripted: Server
    script: Script | None = None

    @property
    def url(self) -> str:
        return self.scripted.url

    @property
    def seen(self) -> list[dict[str, Any]]:  # request bodies
        return [seen.json for seen in self.scripted.seen]

    def reply_to(self, seen: Seen) -> Reply:
        body = seen.json
        assert self.script is not None
        try:
            answer = self.script(body["messages"])
        except AssertionError as exc:  # the model saw something it should not have
            return Reply(400, {"error": {"message": f"script: {exc}"}})
        if not body.get("stream"):
            return Reply(body=_completion(answer))
        events = [
            b"data: " + json.dumps(frame, ensure_ascii=False).encode() + b"\n\n"
            for frame in _frames(answer)
        ]
        return Reply(frames=[*events, b"data: [DONE]\n\n"])


def _completion(answer: Answer) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": answer.content}
    if answer.calls:
        message["tool_calls"] = [
            {"id": id_, "type": "function", "function": {"name": name, "arguments": arguments}}
            for id_, name, arguments in answer.calls
        ]
    return {
        "id": "chatcmpl-kb",
        "object": "chat.completion",
        "model": "local-model",
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": "tool_calls" if answer.calls else "stop",
            }
        ],
        "usage": USAGE,
    }


def _chunk(delta: dict[str, Any], finish_reason: str | None = None) -> dict[str, Any]:
    return {
        "id": "chatcmpl-kb",
        "object": "chat.completion.chunk",
        "model": "local-model",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
    }


def _frames(answer: Answer) -> list[dict[str, Any]]:
    """The answer as stream chunks: content in pieces, each call's arguments in three
    fragments, the fragments of parallel calls interleaved (as vLLM may send them)."""
    frames = [_chunk({"role": "assistant", "content": ""})]
    text = answer.content or ""
    frames += [_chunk({"content": text[i : i + 7]}) for i in range(0, len(text), 7)]
    for index, (id_, name, _) in enumerate(answer.calls):
        frames.append(
            _chunk(
                {
                    "tool_calls": [
                        {
                            "index": index,
                            "id": id_,
                            "type": "function",
                            "function": {"name": name, "arguments": ""},
                        }
                    ]
                }
            )
        )
    thirds = [
        [
            arguments[: len(arguments) // 3],
            arguments[len(arguments) // 3 : 2 * len(arguments) // 3],
            arguments[2 * len(arguments) // 3 :],
        ]
        for _, _, arguments in answer.calls
    ]
    for part in range(3):
        for index, pieces in enumerate(thirds):
            fragment = {"index": index, "function": {"arguments": pieces[part]}}
            frames.append(_chunk({"tool_calls": [fragment]}))
    frames.append(_chunk({}, "tool_calls" if answer.calls else "stop"))
    frames.append(
        {"id": "chatcmpl-kb", "object": "chat.completion.chunk", "choices": [], "usage": USAGE}
    )
    return frames


@pytest.fixture
def model() -> Iterator[ModelServer]:
    with serve("/v1") as running:
        state = ModelServer(running)
        running.responder = state.reply_to
        yield state


def _search_call(id_: str, query: str) -> tuple[str, str, str]:
    return (id_, "search_knowledge_base", json.dumps({"query": query}, ensure_ascii=False))


def _since_user(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The messages after the last user message (this turn's tool round trips)."""
    last = max(i for i, message in enumerate(messages) if message["role"] == "user")
    return messages[last + 1 :]


def _tool_messages(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [message for message in _since_user(messages) if message["role"] == "tool"]


# --------------------------------------------------------------------------------------------
# Real retrievers
# --------------------------------------------------------------------------------------------

CHUNKS = [
    Chunk(
        "securite#0", "securite", "securite.pdf", "Le RPO est de 15 minutes, le RTO de 4 h.", page=2
    ),
    Chunk(
        "securite#1", "securite", "securite.pdf", "Certification ISO 27001 obtenue en 2023.", page=3
    ),
    Chunk(
        "finances#3",
        "finances",
        "finances.xlsx",
        "Sheet CA 2025 | Trimestre: T4 | CA (k€): 1 689 | Nouveaux clients: 33",
        table="CA 2025",
        row=4,
        row_key="T4",
        kind="table_row",
    ),
    Chunk(
        "guide#0",
        "guide",
        "guide.md",
        "Le plan Starter coûte 89 € HT par mois.",
        section="2. Offres et tarifs > 2.1 Starter",
    ),
]
RPO = {"n": 1, "file_id": "securite", "filename": "securite.pdf", "page": 2, "text": CHUNKS[0].text}
ISO = {"n": 2, "file_id": "securite", "filename": "securite.pdf", "page": 3, "text": CHUNKS[1].text}


@pytest.fixture(scope="module")
def demo() -> Iterator[DemoServer]:
    with DemoServer(DemoIndex.from_chunks(CHUNKS, CHUNKS)) as running:
        yield running


def _rag_api(demo: DemoServer, k: int = 2) -> RagApiRetriever:
    config = RagApiRetrieval(adapter="rag-api", url=f"{demo.url}/v2", k=k)
    return RagApiRetriever("demo-v2", config, file_ids=["securite", "finances", "guide"])


# An in-process knowledge base for the python adapter: each query word picks documents.
LIBRARY = {
    "starter": RetrievedItem(1, "Starter : 89 € HT par mois.", "guide", "guide.md", section="2.1"),
    "business": RetrievedItem(
        1, "Business : 290 € HT par mois.", "guide", "guide.md", section="2.2"
    ),
    "meridia": RetrievedItem(1, "Disponibilité 99,7 %.", "meridia", "meridia.docx", page=4),
    "préavis": RetrievedItem(1, "Préavis de 90 jours.", "meridia", "meridia.docx", page=2),
}


def library_search(query: str, k: int) -> list[RetrievedItem]:
    if "panne" in query:
        raise RuntimeError("index offline")
    words = query.lower().split()
    return [item for word, item in LIBRARY.items() if word in words][:k]


def _python(k: int = 2) -> PythonRetriever:
    config = PythonRetrieval(adapter="python", callable=f"{__name__}:library_search", k=k)
    return PythonRetriever("library", config)


def _converse(
    model: ModelServer,
    retriever: Retriever | None,
    prompts: list[str],
    script: Script,
    **overrides: Any,
) -> Transcript:
    model.script = script
    settings: dict[str, Any] = {
        "adapter": "openai-chat",
        "url": model.url,
        "model": "local-model",
        "retry": {"attempts": 1},
        **overrides,
    }
    adapter = OpenAIChat("local", OpenAIChatConfig.model_validate(settings), retriever)
    try:
        return adapter.converse(prompts)
    finally:
        adapter.close()
        if retriever is not None:
            retriever.close()


def _round_trips(transcript: Transcript) -> Transcript:
    return Transcript.from_json(json.loads(json.dumps(transcript.to_json())))


# --------------------------------------------------------------------------------------------
# The loop
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
def test_one_search_then_a_cited_answer_with_the_demo_rag_api(
    model: ModelServer, demo: DemoServer, stream: bool
) -> None:
    def script(messages: list[dict[str, Any]]) -> Answer:
        tools = _tool_messages(messages)
        if not tools:
            return Answer("Je cherche.", [_search_call("call_rpo", "RPO RTO")])
        (tool,) = tools
        assert tool["tool_call_id"] == "call_rpo"
        sources = parse_sources(tool["content"])
        return Answer(f"Le RPO est de 15 minutes [{sources[0]['n']}].")

    transcript = _converse(model, _rag_api(demo), ["Quel est le RPO ?"], script, stream=stream)

    assert transcript.error is None
    (turn,) = transcript.turns
    assert turn.answer == "Je cherche.\n\nLe RPO est de 15 minutes [1]."
    assert turn.finish_reason == "stop"
    assert turn.usage == {name: 2 * count for name, count in USAGE.items()}
    # what the model server saw
    first, second = model.seen
    assert first["tools"] == second["tools"] == [SEARCH_TOOL]
    assert first["messages"] == [{"role": "user", "content": "Quel est le RPO ?"}]
    assistant, tool = second["messages"][1:]
    assert assistant == {
        "role": "assistant",
        "content": "Je cherche.",
        "tool_calls": [
            {
                "id": "call_rpo",
                "type": "function",
                "function": {"name": "search_knowledge_base", "arguments": '{"query": "RPO RTO"}'},
            }
        ],
    }
    assert tool["role"] == "tool"
    assert tool["tool_call_id"] == "call_rpo"
    assert json.loads(tool["content"]) == {"sources": [RPO, ISO]}  # k = the adapter's k (2)
    # what the transcript holds
    assert turn.tool_calls == [
        ToolCall("call_rpo", "search_knowledge_base", {"query": "RPO RTO"}, tool["content"])
    ]
    assert [(item.rank, item.file_id, item.page) for item in turn.evidence] == [
        (1, "securite", 2),
        (2, "securite", 3),
    ]
    assert turn.citations == [Citation("[1]", "securite", "securite.pdf", 2, CHUNKS[0].text)]
    model_call, search, answer_call = turn.exchanges
    assert model_call.request["json"] == first
    assert answer_call.request["json"] == second
    assert search.request == {
        "tool": "search_knowledge_base",
        "tool_call_id": "call_rpo",
        "query": "RPO RTO",
        "k": 2,
        "retriever": "demo-v2",
    }
    assert search.response_body["error"] is None
    assert [item["rank"] for item in search.response_body["items"]] == [1, 2]
    (wire,) = search.response_body["exchanges"]
    assert wire["request"]["url"] == f"{demo.url}/v2/query_multiple"
    assert wire["request"]["json"]["k"] == 2
    assert _round_trips(transcript) == transcript


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
def test_parallel_calls_then_a_second_round_number_sources_continuously(
    model: ModelServer, stream: bool
) -> None:
    def script(messages: list[dict[str, Any]]) -> Answer:
        tools = _tool_messages(messages)
        if not tools:  # two searches in one message
            return Answer(None, [_search_call("c1", "Starter"), _search_call("c2", "Business")])
        if len(tools) == 2:
            assert [tool["tool_call_id"] for tool in tools] == ["c1", "c2"]
            assert [s["n"] for tool in tools for s in parse_sources(tool["content"])] == [1, 2]
            return Answer(None, [_search_call("c3", "préavis Meridia")])
        numbers = [source["n"] for source in parse_sources(tools[2]["content"])]
        assert numbers == [3, 4]
        return Answer("Starter 89 € [1], Business 290 € [2] ; préavis 90 jours [3][4].")

    transcript = _converse(
        model, _python(), ["Tarifs et préavis ?"], script, stream=stream, search_k=5
    )

    assert transcript.error is None
    (turn,) = transcript.turns
    assert len(model.seen) == 3
    assert [call.id for call in turn.tool_calls] == ["c1", "c2", "c3"]
    assert [call.arguments["query"] for call in turn.tool_calls] == [
        "Starter",
        "Business",
        "préavis Meridia",
    ]
    assert [json.loads(call.result or "") for call in turn.tool_calls] == [
        {
            "sources": [
                {
                    "n": 1,
                    "file_id": "guide",
                    "filename": "guide.md",
                    "section": "2.1",
                    "text": "Starter : 89 € HT par mois.",
                }
            ]
        },
        {
            "sources": [
                {
                    "n": 2,
                    "file_id": "guide",
                    "filename": "guide.md",
                    "section": "2.2",
                    "text": "Business : 290 € HT par mois.",
                }
            ]
        },
        {
            "sources": [
                {
                    "n": 3,
                    "file_id": "meridia",
                    "filename": "meridia.docx",
                    "page": 4,
                    "text": "Disponibilité 99,7 %.",
                },
                {
                    "n": 4,
                    "file_id": "meridia",
                    "filename": "meridia.docx",
                    "page": 2,
                    "text": "Préavis de 90 jours.",
                },
            ]
        },
    ]
    assert [(item.rank, item.text) for item in turn.evidence] == [
        (1, "Starter : 89 € HT par mois."),
        (2, "Business : 290 € HT par mois."),
        (3, "Disponibilité 99,7 %."),
        (4, "Préavis de 90 jours."),
    ]
    assert [(c.marker, c.page, c.content) for c in turn.citations] == [
        ("[1]", None, "Starter : 89 € HT par mois."),
        ("[2]", None, "Business : 290 € HT par mois."),
        ("[3]", 4, "Disponibilité 99,7 %."),
        ("[4]", 2, "Préavis de 90 jours."),
    ]
    kinds = [e.request.get("tool", "model") for e in turn.exchanges]
    assert kinds == [
        "model",
        "search_knowledge_base",
        "search_knowledge_base",
        "model",
        "search_knowledge_base",
        "model",
    ]
    assert [e.request["k"] for e in turn.exchanges if "tool" in e.request] == [5, 5, 5]
    # the second request carries the assistant message with both calls, then both results
    history = model.seen[1]["messages"]
    assert [m["role"] for m in history] == ["user", "assistant", "tool", "tool"]
    assert history[1]["content"] is None
    assert [c["function"]["arguments"] for c in history[1]["tool_calls"]] == [
        '{"query": "Starter"}',
        '{"query": "Business"}',
    ]


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
def test_max_tool_rounds_exceeded_is_a_limit_error_keeping_the_partial_answer(
    model: ModelServer, stream: bool
) -> None:
    def script(messages: list[dict[str, Any]]) -> Answer:
        round_ = len(_tool_messages(messages)) + 1
        return Answer(f"Recherche {round_}.", [_search_call(f"r{round_}", "Starter")])

    transcript = _converse(
        model, _python(), ["Prix ?", "Et ensuite ?"], script, stream=stream, max_tool_rounds=2
    )

    first, second = transcript.turns
    assert first.error is not None
    assert first.error.kind == "limit"
    assert "max_tool_rounds = 2" in first.error.message
    assert first.answer == "Recherche 1.\n\nRecherche 2.\n\nRecherche 3."
    assert len(model.seen) == 3  # two rounds run, the third answer's call is not
    assert [(call.id, call.result is not None) for call in first.tool_calls] == [
        ("r1", True),
        ("r2", True),
        ("r3", False),
    ]
    assert first.finish_reason == "tool_calls"
    assert [item.rank for item in first.evidence] == [1, 2]
    assert second.ran is False


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
def test_failed_search_is_told_to_the_model_and_does_not_fail_the_turn(
    model: ModelServer, stream: bool
) -> None:
    def script(messages: list[dict[str, Any]]) -> Answer:
        tools = _tool_messages(messages)
        if not tools:
            return Answer(None, [_search_call("c1", "panne réseau"), _search_call("c2", "Starter")])
        error = parse_error(tools[0]["content"])
        assert error is not None
        assert "index offline" in error
        assert parse_sources(tools[1]["content"])[0]["n"] == 1
        return Answer("La recherche a échoué pour la panne ; Starter : 89 € [1].")

    transcript = _converse(model, _python(), ["Panne et prix ?"], script, stream=stream)

    assert transcript.error is None
    (turn,) = transcript.turns
    failed, found = turn.tool_calls
    assert json.loads(failed.result or "") == {
        "error": f"adapter: {__name__}:library_search raised RuntimeError: index offline"
    }
    assert parse_sources(found.result or "")[0]["text"] == "Starter : 89 € HT par mois."
    searches = [e for e in turn.exchanges if "tool" in e.request]
    assert searches[0].response_body["error"]["kind"] == "adapter"
    assert searches[0].response_body["items"] == []
    assert searches[1].response_body["error"] is None
    assert [item.rank for item in turn.evidence] == [1]
    assert [c.filename for c in turn.citations] == ["guide.md"]


def test_unreachable_rag_api_is_a_failed_search(model: ModelServer) -> None:
    stopped = DemoServer(DemoIndex.from_chunks(CHUNKS, CHUNKS)).start()
    stopped.stop()
    dead = RagApiRetriever(
        "dead",
        RagApiRetrieval(adapter="rag-api", url=f"{stopped.url}/v2", retry=RetryPolicy(attempts=1)),
        file_ids=["securite"],
    )

    def script(messages: list[dict[str, Any]]) -> Answer:
        tools = _tool_messages(messages)
        if not tools:
            return Answer(None, [_search_call("c1", "RPO")])
        assert (parse_error(tools[0]["content"]) or "").startswith("transport: POST")
        return Answer("Je n'ai pas pu consulter la base documentaire.")

    transcript = _converse(model, dead, ["RPO ?"], script)

    assert transcript.error is None
    assert transcript.final_answer == "Je n'ai pas pu consulter la base documentaire."
    assert transcript.turns[0].evidence == []
    (search,) = [e for e in transcript.turns[0].exchanges if "tool" in e.request]
    assert search.response_body["error"]["kind"] == "transport"
    assert search.response_body["exchanges"][0]["status_code"] is None


def test_dangling_citation_is_kept_without_source(model: ModelServer, demo: DemoServer) -> None:
    def script(messages: list[dict[str, Any]]) -> Answer:
        if not _tool_messages(messages):
            return Answer(None, [_search_call("c1", "RPO RTO")])
        return Answer("RPO 15 min [1] ; certifié [2] ; SLA 99,9 % [7].")

    transcript = _converse(model, _rag_api(demo), ["RPO ?"], script)

    assert transcript.turns[0].citations == [
        Citation("[1]", "securite", "securite.pdf", 2, CHUNKS[0].text),
        Citation("[2]", "securite", "securite.pdf", 3, CHUNKS[1].text),
        Citation("[7]"),
    ]


WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
    },
}


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
def test_a_tool_the_harness_cannot_run_ends_the_turn_unrun(
    model: ModelServer, stream: bool
) -> None:
    def script(messages: list[dict[str, Any]]) -> Answer:
        if len(messages) == 1:
            return Answer(
                None,
                [_search_call("c1", "Starter"), ("c2", "get_weather", '{"city": "Lyon"}')],
            )
        return Answer("Suite.")

    transcript = _converse(
        model, _python(), ["Météo ?", "Suite ?"], script, stream=stream, tools=[WEATHER_TOOL]
    )

    first, second = transcript.turns
    assert first.error is None
    assert first.finish_reason == "tool_calls"
    assert first.tool_calls == [
        ToolCall("c1", "search_knowledge_base", {"query": "Starter"}),
        ToolCall("c2", "get_weather", {"city": "Lyon"}),
    ]
    assert first.evidence == []
    assert first.answer == ""
    assert [e.request.get("tool") for e in first.exchanges] == [None]  # nothing was searched
    assert model.seen[0]["tools"] == [SEARCH_TOOL, WEATHER_TOOL]
    # the conversation goes on with the (empty) answer as the assistant message
    assert second.answer == "Suite."
    assert model.seen[1]["messages"] == [
        {"role": "user", "content": "Météo ?"},
        {"role": "assistant", "content": ""},
        {"role": "user", "content": "Suite ?"},
    ]


def test_bad_search_arguments_are_told_to_the_model(model: ModelServer) -> None:
    def script(messages: list[dict[str, Any]]) -> Answer:
        tools = _tool_messages(messages)
        if not tools:
            return Answer(None, [("c1", "search_knowledge_base", '{"q": "Starter"')])
        assert "query" in (parse_error(tools[0]["content"]) or "")
        return Answer("Je ne sais pas.")

    transcript = _converse(model, _python(), ["Prix ?"], script)

    assert transcript.error is None
    (call,) = transcript.turns[0].tool_calls
    assert parse_error(call.result or "") is not None
    assert model.seen[1]["messages"][1]["tool_calls"][0]["function"]["arguments"] == (
        '{"q": "Starter"'
    )  # sent back exactly as the model wrote it


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
def test_multi_turn_history_keeps_tool_messages_and_numbering(
    model: ModelServer, demo: DemoServer, stream: bool
) -> None:
    def script(messages: list[dict[str, Any]]) -> Answer:
        turn = sum(1 for message in messages if message["role"] == "user")
        tools = _tool_messages(messages)
        if turn == 1:
            if not tools:
                return Answer(None, [_search_call("t1", "RPO RTO")])
            return Answer("Le RPO est de 15 minutes [1].")
        if turn == 2:
            # turn 1 is in the history: its call, its sources, its final answer
            roles = [m["role"] for m in messages[:4]]
            assert roles == ["user", "assistant", "tool", "assistant"], roles
            assert messages[2]["tool_call_id"] == "t1"
            assert parse_sources(messages[2]["content"])[0]["n"] == 1
            assert messages[3] == {"role": "assistant", "content": "Le RPO est de 15 minutes [1]."}
            if not tools:
                return Answer(None, [_search_call("t2", "chiffre d affaires T4 nouveaux clients")])
            numbers = [source["n"] for source in parse_sources(tools[0]["content"])]
            assert numbers == [3, 4], numbers  # turn 1 had sources 1 and 2
            return Answer("CA T4 : 1 689 k€ [3] ; le RPO reste 15 min [1].")
        assert not tools
        return Answer("Rappel : 1 689 k€ [3].")  # memory turn, no search

    # demo V2's own search route: its rows keep their table and row (rag_api's have none)
    search = HttpJsonRetriever(
        "demo-v2",
        v2_search_retrieval(f"{demo.url}/v2").model_copy(update={"k": 2}),
        file_ids=["securite", "finances", "guide"],
    )
    transcript = _converse(
        model, search, ["RPO ?", "CA T4 ?", "Rappelle le CA."], script, stream=stream
    )

    assert transcript.error is None
    first, second, third = transcript.turns
    assert [item.rank for item in first.evidence] == [1, 2]
    assert [item.rank for item in second.evidence] == [3, 4]
    assert second.evidence[0].table == "CA 2025"
    assert second.evidence[0].row == 4
    assert [(c.marker, c.file_id) for c in second.citations] == [
        ("[3]", "finances"),
        ("[1]", "securite"),
    ]
    assert third.evidence == []
    assert third.tool_calls == []
    assert [(c.marker, c.file_id) for c in third.citations] == [("[3]", "finances")]
    assert len(model.seen) == 5
    assert [m["role"] for m in model.seen[-1]["messages"]] == [
        "user",
        "assistant",
        "tool",
        "assistant",
        "user",
        "assistant",
        "tool",
        "assistant",
        "user",
    ]
    assert _round_trips(transcript) == transcript


def test_knowledge_base_none_offers_no_tool_and_runs_none(model: ModelServer) -> None:
    def script(messages: list[dict[str, Any]]) -> Answer:
        return Answer(None, [_search_call("c1", "Starter")])

    transcript = _converse(model, _python(), ["Prix ?"], script, knowledge_base="none")

    assert "tools" not in model.seen[0]
    assert transcript.turns[0].tool_calls == [
        ToolCall("c1", "search_knowledge_base", {"query": "Starter"})
    ]
    assert len(model.seen) == 1


def test_without_retriever_the_adapter_behaves_as_before(model: ModelServer) -> None:
    def script(messages: list[dict[str, Any]]) -> Answer:
        return Answer("Bonjour [1].")

    transcript = _converse(model, None, ["Salut"], script)

    assert "tools" not in model.seen[0]
    assert transcript.final_answer == "Bonjour [1]."
    assert transcript.turns[0].citations == []  # no [n] convention without the tool
