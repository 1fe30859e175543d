"""The demo chat path: answer model, OpenAI-compatible routes, faults, reference command."""

from __future__ import annotations

import json
import re
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from pytest_ragv2.systems.command import CommandConfig, CommandRunner
from pytest_ragv2.systems.kb_tool import SEARCH_TOOL, parse_sources, render_sources
from pytest_ragv2.systems.outputs import RetrievedItem
from ragv2_demo import answer as model
from ragv2_demo.engine import DemoIndex
from ragv2_demo.server import DemoServer

CORPUS = Path(__file__).resolve().parents[2] / "corpus"
ROBOTICS = CORPUS / "nimbus-robotics"
ANALYTICS = CORPUS / "nimbus-analytics"


@pytest.fixture(scope="module")
def index() -> DemoIndex:
    return DemoIndex.from_corpus(CORPUS)


@pytest.fixture(scope="module")
def server(index: DemoIndex) -> Iterator[DemoServer]:
    with DemoServer(index) as running:
        yield running


@pytest.fixture(scope="module")
def client() -> Iterator[httpx.Client]:
    with httpx.Client(timeout=10.0) as http:
        yield http


def _search(index: DemoIndex, variant: str, query: str, start: int) -> str:
    hits = index.path(variant).search(query, 5, None)
    items = [
        RetrievedItem(
            rank=n,
            text=c.text,
            file_id=c.file_id,
            filename=c.filename,
            page=c.page,
            section=c.section,
            table=c.table,
            row=c.row,
        )
        for n, (c, _) in enumerate(hits, start=start)
    ]
    return render_sources(items, start)


def _converse(index: DemoIndex, variant: model.Variant, prompts: list[str]) -> list[dict[str, Any]]:
    """Run prompts through the answer model, executing its searches on the index."""
    messages: list[dict[str, Any]] = []
    for prompt in prompts:
        messages.append({"role": "user", "content": prompt})
        reply = model.answer(messages, [SEARCH_TOOL], variant)
        if reply.get("tool_calls"):
            messages.append(reply)
            start = 1
            for call in reply["tool_calls"]:
                query = json.loads(call["function"]["arguments"])["query"]
                content = _search(index, variant, query, start)
                start += len(parse_sources(content))
                messages.append({"role": "tool", "tool_call_id": call["id"], "content": content})
            reply = model.answer(messages, [SEARCH_TOOL], variant)
        messages.append({"role": "assistant", "content": reply["content"]})
    return messages


# --------------------------------------------------------------------------- answer model


def test_chit_chat_is_answered_without_tools_in_the_users_language() -> None:
    replies = model._SMALL_TALK_REPLY
    for prompt, expected in [
        ("Hi! Thanks for your help earlier. How are you doing today?", replies["en"]),
        ("Bonjour ! Comment ça va ?", replies["fr"]),
        ("Hallo, wie geht es Ihnen?", replies["de"]),
    ]:
        reply = model.answer([{"role": "user", "content": prompt}], [SEARCH_TOOL], "v2")
        assert "tool_calls" not in reply
        assert reply["content"] == expected


def test_a_question_gets_one_search_with_the_raw_prompt() -> None:
    prompt = "What is the runtime of the Nimbus X2 on a single battery charge?"
    for variant in ("v1", "v2"):
        reply = model.answer([{"role": "user", "content": prompt}], [SEARCH_TOOL], variant)
        assert reply["content"] is None
        [call] = reply["tool_calls"]
        assert call["function"]["name"] == "search_knowledge_base"
        assert json.loads(call["function"]["arguments"]) == {"query": prompt}


def test_v2_splits_a_two_subject_question_and_v1_does_not() -> None:
    prompt = "What is the X2's payload capacity, and how many remote days are allowed?"
    messages = [{"role": "user", "content": prompt}]
    v2 = [json.loads(c["function"]["arguments"])["query"] for c in
          model.answer(messages, [SEARCH_TOOL], "v2")["tool_calls"]]  # fmt: skip
    assert v2 == ["What is the X2's payload capacity", "how many remote days are allowed?"]
    assert len(model.answer(messages, [SEARCH_TOOL], "v1")["tool_calls"]) == 1


def test_v2_resolves_an_implicit_follow_up_v1_sends_the_raw_question() -> None:
    first = (
        "Quel est le niveau de disponibilité garanti dans le contrat avec Meridia Distribution ?"
    )
    follow_up = "Et quel est le préavis à respecter pour résilier ce contrat ?"
    messages = [
        {"role": "user", "content": first},
        {"role": "assistant", "content": "99,7 %"},
        {"role": "user", "content": follow_up},
    ]
    [v2] = model.answer(messages, [SEARCH_TOOL], "v2")["tool_calls"]
    assert json.loads(v2["function"]["arguments"])["query"] == f"{follow_up} Meridia Distribution"
    [v1] = model.answer(messages, [SEARCH_TOOL], "v1")["tool_calls"]
    assert json.loads(v1["function"]["arguments"])["query"] == follow_up


def test_answer_after_search_quotes_sources_with_citations(index: DemoIndex) -> None:
    messages = _converse(index, "v2", ["What is the maximum speed of the Nimbus X2?"])
    answer = messages[-1]["content"]
    assert answer.startswith("According to the documents:")
    assert "1.8 m/s [1]" in answer


@pytest.mark.parametrize(
    ("prompt", "refusal"),
    [
        ("Combien de clients avons-nous au Japon ?", model.REFUSAL["fr"]),
        ("Wie viele Kunden haben wir in Japan?", model.REFUSAL["de"]),
        ("How many customers do we have in Japan?", model.REFUSAL["en"]),
        ("What is the list price of the Nimbus X2?", model.REFUSAL["en"]),
    ],
)
def test_v2_refuses_out_of_corpus_questions_v1_does_not(
    index: DemoIndex, prompt: str, refusal: str
) -> None:
    assert _converse(index, "v2", [prompt])[-1]["content"] == refusal
    v1 = _converse(index, "v1", [prompt])[-1]["content"]
    assert v1 != refusal
    assert "[1]" in v1


def test_v2_table_and_memory_in_one_sentence(index: DemoIndex) -> None:
    messages = _converse(
        index,
        "v2",
        [
            "Quel chiffre d'affaires total avons-nous réalisé au quatrième trimestre 2025, et "
            "combien de nouveaux clients avons-nous signés sur ce trimestre ?",
            "Fais-moi un tableau récapitulatif en français des délais de réponse du support "
            "selon les plans.",
            "Pour finir, rappelle-moi en une phrase les deux chiffres du quatrième trimestre "
            "dont nous avons parlé tout à l'heure.",
        ],
    )
    answers = [m["content"] for m in messages if m["role"] == "assistant" and m.get("content")]
    assert "CA: 1 689 k€" in answers[0]
    assert "Nouveaux clients: 33" in answers[0]
    table = answers[1].splitlines()
    assert table[2] == "| Plan | Délai de première réponse | Disponibilité du support | Source |"
    assert table[3] == "| --- | --- | --- | --- |"
    assert any(line.startswith("| Starter | 48 h ouvrées |") for line in table)
    memory = answers[2]
    assert memory.startswith("Pour rappel :")
    assert "1 689 k€" in memory
    assert "33" in memory
    assert "\n" not in memory
    assert memory.count(". ") == 0
    assert "[" not in memory
    assert sum(1 for m in messages if m.get("tool_calls")) == 2  # no search for the memory turn


def test_v2_labels_synthetic_records(index: DemoIndex) -> None:
    prompt = "Welche synthetischen Projektdatensätze verwenden den TVM 30-H2?"
    answer = _converse(index, "v2", [prompt])[-1]["content"]
    assert "TW-P-24-003" in answer
    assert "(synthetischer Datensatz)" in answer
    assert "synthetischer Datensatz" not in _converse(index, "v1", [prompt])[-1]["content"]


_ID_OR_NUMBER = re.compile(r"[\w./+-]*\d[\w./+-]*")


def _corpus_questions(index: DemoIndex) -> list[str]:
    """Questions built from corpus text (never from gold): words of every 9th V2 chunk."""
    templates = [
        "What is the {0} {1} of the {2}?",
        "Quel est le {0} {1} pour {2} ?",
        "Welche {0} {1} hat {2}?",
        "Give me a table of the {0} and {1} for {2}.",
        "Réponds en une phrase : {0} {1} {2} ?",
    ]
    questions = []
    chunks = index.v2.chunks
    for number, chunk in enumerate(chunks[::9]):
        words = [w for w in re.findall(r"[^\W\d_]{4,}", chunk.text) if w.lower() != "table"]
        if len(words) >= 8:
            picked = words[3], words[len(words) // 2], words[-2]
            questions.append(templates[number % len(templates)].format(*picked))
    return questions


def test_answers_never_print_a_number_or_identifier_absent_from_sources_and_prompt(
    index: DemoIndex,
) -> None:
    questions = _corpus_questions(index)
    assert len(questions) >= 30
    for question in questions:
        for variant in ("v1", "v2"):
            messages = _converse(index, variant, [question])
            haystack = question + "\n" + "\n".join(
                s["text"] for m in messages if m["role"] == "tool"
                for s in parse_sources(m["content"])
            )  # fmt: skip
            answer = model.answer(messages[:-1], [SEARCH_TOOL], variant)["content"]
            assert answer == messages[-1]["content"]
            for token in _ID_OR_NUMBER.findall(re.sub(r"\[\d+\]", " ", answer)):
                token = token.strip(".,;:)-/+")
                assert token in haystack, (question, variant, token, answer)


# --------------------------------------------------------------------------- OpenAI routes


def _chat(client: httpx.Client, url: str, body: dict[str, Any]) -> httpx.Response:
    return client.post(url, json=body)


def test_models_route(server: DemoServer, client: httpx.Client) -> None:
    reply = client.get(f"{server.url}/chat/v1/models").json()
    assert [m["id"] for m in reply["data"]] == ["demo-v1"]


def test_non_streaming_tool_call_then_answer(server: DemoServer, client: httpx.Client) -> None:
    url = f"{server.url}/chat/v2/chat/completions"
    prompt = "What is the runtime of the Nimbus X2 on a single battery charge?"
    messages: list[dict[str, Any]] = [{"role": "user", "content": prompt}]
    first = _chat(client, url, {"model": "demo-v2", "messages": messages, "tools": [SEARCH_TOOL]})
    body = first.json()
    assert body["object"] == "chat.completion"
    choice = body["choices"][0]
    assert choice["finish_reason"] == "tool_calls"
    [call] = choice["message"]["tool_calls"]
    assert body["usage"] == {
        "prompt_tokens": len(prompt.split()),
        "completion_tokens": len(call["function"]["arguments"].split()),
        "total_tokens": len(prompt.split()) + len(call["function"]["arguments"].split()),
    }
    rag = client.post(
        f"{server.url}/v2/query_multiple",
        json={"query": prompt, "file_ids": ["nimbus-x2-product-specification"], "k": 5},
    ).json()
    items = [
        RetrievedItem(rank=n, text=doc["page_content"], file_id=doc["metadata"]["file_id"])
        for n, (doc, _) in enumerate(rag, start=1)
    ]
    messages += [
        choice["message"],
        {"role": "tool", "tool_call_id": call["id"], "content": render_sources(items)},
    ]
    second = _chat(client, url, {"model": "demo-v2", "messages": messages, "tools": [SEARCH_TOOL]})
    answer = second.json()["choices"][0]
    assert answer["finish_reason"] == "stop"
    assert "11.5 hours [" in answer["message"]["content"]


def _frames(response: httpx.Response) -> list[str]:
    return [
        line[len("data: ") :] for line in response.text.split("\n") if line.startswith("data: ")
    ]


def test_streaming_tool_call_and_content(server: DemoServer, client: httpx.Client) -> None:
    url = f"{server.url}/chat/v2/chat/completions"
    body = {
        "model": "demo-v2",
        "stream": True,
        "stream_options": {"include_usage": True},
        "tools": [SEARCH_TOOL],
        "messages": [{"role": "user", "content": "What is the maximum speed of the Nimbus X2?"}],
    }
    frames = _frames(client.post(url, json=body))
    assert frames[-1] == "[DONE]"
    chunks = [json.loads(f) for f in frames[:-1]]
    assert chunks[0]["choices"][0]["delta"]["role"] == "assistant"
    arguments = "".join(
        c["choices"][0]["delta"]["tool_calls"][0]["function"]["arguments"]
        for c in chunks
        if c["choices"] and "tool_calls" in c["choices"][0]["delta"]
    )
    assert json.loads(arguments) == {"query": "What is the maximum speed of the Nimbus X2?"}
    assert chunks[-2]["choices"][0]["finish_reason"] == "tool_calls"
    assert chunks[-1]["choices"] == []
    assert chunks[-1]["usage"]["prompt_tokens"] == 9

    body["messages"] = [{"role": "user", "content": "Bonjour !"}]
    frames = _frames(client.post(url, json=body))
    text = "".join(
        json.loads(f)["choices"][0]["delta"].get("content", "")
        for f in frames[:-1]
        if json.loads(f)["choices"]
    )
    assert text == model._SMALL_TALK_REPLY["fr"]


def test_bad_request_body(server: DemoServer, client: httpx.Client) -> None:
    url = f"{server.url}/chat/v1/chat/completions"
    assert client.post(url, content=b"{").status_code == 400
    assert client.post(url, json={"messages": "hi"}).status_code == 400


# --------------------------------------------------------------------------- faults


def _simple_body(stream: bool = False) -> dict[str, Any]:
    return {"model": "demo-v1", "stream": stream, "messages": [{"role": "user", "content": "Hi"}]}


def test_fault_latency_and_hang(server: DemoServer) -> None:
    with httpx.Client(timeout=5.0) as http:
        started = time.perf_counter()
        reply = http.post(f"{server.url}/chat/v1/fault/latency-300/chat/completions",
                          json=_simple_body())  # fmt: skip
        assert reply.status_code == 200
        assert time.perf_counter() - started >= 0.3
    with httpx.Client(timeout=0.3) as http, pytest.raises(httpx.ReadTimeout):
        http.post(f"{server.url}/chat/v1/fault/hang-3/chat/completions", json=_simple_body())


def test_fault_5xx_and_5xx_once(server: DemoServer, client: httpx.Client) -> None:
    always = f"{server.url}/chat/v2/fault/5xx/chat/completions"
    assert [client.post(always, json=_simple_body()).status_code for _ in range(2)] == [503, 503]
    once = f"{server.url}/chat/v2/fault/5xx-once/chat/completions"
    codes = [client.post(once, json=_simple_body()).status_code for _ in range(4)]
    assert codes == [503, 200, 503, 200]
    assert client.post(f"{server.url}/chat/v2/fault/nonsense/chat/completions",
                       json=_simple_body()).status_code == 404  # fmt: skip


def test_fault_malformed(server: DemoServer, client: httpx.Client) -> None:
    url = f"{server.url}/chat/v1/fault/malformed/chat/completions"
    reply = client.post(url, json=_simple_body())
    assert reply.status_code == 200
    with pytest.raises(json.JSONDecodeError):
        reply.json()
    frames = _frames(client.post(url, json=_simple_body(stream=True)))
    assert frames[1] == "{this is not json"
    assert frames[-1] == "[DONE]"


def test_fault_truncate(server: DemoServer, client: httpx.Client) -> None:
    url = f"{server.url}/chat/v1/fault/truncate/chat/completions"
    received: list[bytes] = []

    def read_stream() -> None:
        with client.stream("POST", url, json=_simple_body(stream=True)) as response:
            received.extend(response.iter_bytes())

    with pytest.raises(httpx.RemoteProtocolError):
        read_stream()
    assert b"chat.completion.chunk" in b"".join(received)
    assert b"[DONE]" not in b"".join(received)
    with pytest.raises(httpx.RemoteProtocolError):
        client.post(url, json=_simple_body())


def test_fault_path_on_rag_api_routes(server: DemoServer, client: httpx.Client) -> None:
    body = {"query": "maximum speed", "file_ids": ["nimbus-x2-product-specification"], "k": 2}
    assert client.post(f"{server.url}/fault/5xx/v2/query_multiple", json=body).status_code == 503
    reply = client.post(f"{server.url}/fault/malformed/v2/query_multiple", json=body)
    with pytest.raises(json.JSONDecodeError):
        reply.json()
    good = client.post(f"{server.url}/fault/latency-10/v2/query_multiple", json=body).json()
    assert good == client.post(f"{server.url}/v2/query_multiple", json=body).json()


def test_request_log_shows_sequential_and_overlapping_requests(index: DemoIndex) -> None:
    with DemoServer(index) as own, httpx.Client(timeout=5.0) as http:
        url = f"{own.url}/chat/v1/fault/latency-200/chat/completions"
        for _ in range(2):
            http.post(url, json=_simple_body())
        threads = [
            threading.Thread(target=lambda: httpx.post(url, json=_simple_body(), timeout=5.0))
            for _ in range(2)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        http.get(f"{own.url}/health")  # not a chat path: not logged
        # a request is logged once its last byte is written, which the client may see first
        deadline = time.monotonic() + 5.0
        while len(own.request_log) < 4 and time.monotonic() < deadline:
            time.sleep(0.01)
        log = own.request_log
    assert [path for path, _, _ in log] == ["/chat/v1/fault/latency-200/chat/completions"] * 4
    assert all(end - start >= 0.2 for _, start, end in log)
    (_, _s1, e1), (_, s2, _e2) = log[0], log[1]
    assert e1 <= s2  # one after the other
    (_, s3, e3), (_, s4, e4) = log[2], log[3]
    assert s3 < e4
    assert s4 < e3


# --------------------------------------------------------------------------- reference command


def test_reference_command_through_the_command_adapter(server: DemoServer) -> None:
    config = CommandConfig(
        adapter="command",
        argv=[
            sys.executable, "-m", "ragv2_demo.reference", "--url", server.url,
            "--variant", "v2", "--corpus", str(ROBOTICS), "{prompt}",
        ],
        timeout_s=30,
    )  # fmt: skip
    runner = CommandRunner("demo-reference", config)
    transcript = runner.converse(
        ["What is the runtime of the Nimbus X2 on a single battery charge?"]
    )
    [turn] = transcript.turns
    assert turn.error is None, turn.error
    [call] = turn.tool_calls
    assert call.name == "ragv2-demo.search_knowledge_base"
    assert call.arguments == {"query": turn.prompt}
    assert call.result is not None
    sources = parse_sources(call.result)
    assert sources
    assert sources[0]["n"] == 1
    assert all(s["file_id"].startswith("nimbus") for s in sources)
    assert "11.5 hours [" in turn.answer
    # the numbered sources of the MCP result are the turn's evidence; [n] resolves to them
    assert [item.rank for item in turn.evidence] == [s["n"] for s in sources]
    assert turn.citations
    assert all(citation.file_id for citation in turn.citations)
    assert set(turn.usage) == {"input_tokens", "cached_input_tokens", "output_tokens"}


def test_reference_command_reports_a_failed_search(index: DemoIndex) -> None:
    with DemoServer(index) as own:
        url = f"{own.url}/fault/5xx"
        config = CommandConfig(
            adapter="command",
            argv=[sys.executable, "-m", "ragv2_demo.reference", "--url", url,
                  "--file-id", "faq-support", "{prompt}"],
            timeout_s=30,
        )  # fmt: skip
        transcript = CommandRunner("demo-reference", config).converse(
            ["Combien de clients avons-nous au Japon ?"]
        )
    [turn] = transcript.turns
    assert turn.error is None
    assert turn.tool_calls[0].result is not None
    assert turn.tool_calls[0].result.startswith("error: HTTP 503")
    assert turn.answer == model.REFUSAL["fr"]
