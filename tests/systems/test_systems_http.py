"""The HTTP retrieval adapters against real HTTP servers on 127.0.0.1.

The server is the standard library's, with HTTP/1.1 keep-alive and Nagle's algorithm
disabled (otherwise every keep-alive request stalls ~44 ms on delayed ACK). Each test
scripts the answers per path and reads back what the server received.
"""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator
from typing import Any

import jwt
import pytest

from pytest_ragv2.systems.http_json import HttpJsonRetrieval
from pytest_ragv2.systems.outputs import RetrievalResult, RetrievedItem
from pytest_ragv2.systems.rag_api import RagApiRetrieval, RagApiRetriever
from pytest_ragv2.systems.registry import build_retriever, parse_retrieval_config
from tests.conftest import pyproject
from tests.scripted_server import Reply, Responder, Seen, Server, serve

SECRET = "s3cret-for-tests-only-0123456789abcdef"
API_KEY = "key-from-env-9f8e7d6c5b4a"
NO_DOCS = {"detail": "No documents found for the given query"}


Canned = Reply


class LoopbackServer:
    """The shared scripted server, scripted per path as these tests do."""

    def __init__(self, scripted: Server) -> None:
        self.scripted = scripted

    @property
    def url(self) -> str:
        return self.scripted.url

    @property
    def seen(self) -> list[Seen]:
        return self.scripted.seen

    def answer(self, path: str, *responses: Canned) -> None:
        """Answer ``path`` with these, in order; the last one repeats."""
        self.scripted.answer_path(path, *responses)

    def respond(self, path: str, responder: Responder) -> None:
        self.scripted.respond_path(path, responder)


@pytest.fixture
def server() -> Iterator[LoopbackServer]:
    with serve() as running:
        yield LoopbackServer(running)


def rag_api(server: LoopbackServer, **overrides: Any) -> RagApiRetrieval:
    settings: dict[str, Any] = {
        "adapter": "rag-api",
        "url": server.url,
        "retry": {"attempts": 2, "backoff_s": 0.0},
    }
    settings.update(overrides)
    config = parse_retrieval_config(settings)
    assert isinstance(config, RagApiRetrieval)
    return config


def run_rag_api(
    config: RagApiRetrieval, query: str = "prix plan Pro", k: int = 10, **kwargs: Any
) -> RetrievalResult:
    retriever = RagApiRetriever("v1", config, file_ids=kwargs.get("file_ids", ["f-pdf", "f-csv"]))
    try:
        return retriever.retrieve(query, k)
    finally:
        retriever.close()


def document(file_id: str, text: str, **metadata: Any) -> dict[str, Any]:
    return {
        "id": f"{file_id}-{abs(hash(text)) % 1000}",
        "type": "Document",
        "page_content": text,
        "metadata": {"file_id": file_id, "user_id": "u1", "digest": "d41d8c", **metadata},
    }


# --- rag_api: mapping -------------------------------------------------------------------


def test_rag_api_maps_documents_to_one_based_items(server: LoopbackServer) -> None:
    pdf = document(
        "f-pdf",
        "Plan Pro : 49 EUR par mois",
        source="/tmp/uploads/u1-nimbus-tarifs.pdf",
        page=2,
        page_label="3",
        total_pages=5,
    )
    csv = document("f-csv", "client,plan\nAcme,Pro", source="/app/uploads/u1-clients.csv", row=0)
    xlsx = document(
        "f-xlsx",
        "Pro | 49 | EUR",
        filename="Tarifs 2024.xlsx",
        sheet="Tarifs",
        row=3,
        row_key="Pro",
    )
    docx = document("f-docx", "Les limites du plan Pro", source="guide.docx", heading="3.2 Limites")
    spare = document("f-pdf", "Annexe", source="/tmp/uploads/u1-nimbus-tarifs.pdf", page=4)
    server.answer(
        "/query_multiple",
        Canned(body=[[pdf, 0.12], [csv, 0.2], [xlsx, 0.25], [docx, 0.3], [spare, 0.9]]),
    )

    result = run_rag_api(rag_api(server), k=4)

    assert result.ok, result.error
    assert [item.rank for item in result.items] == [1, 2, 3, 4]  # cut to k
    first, second, third, fourth = result.items
    assert first == RetrievedItem(
        rank=1,
        text="Plan Pro : 49 EUR par mois",
        file_id="f-pdf",
        filename="nimbus-tarifs.pdf",
        page=3,
        score=0.12,
        metadata={
            "file_id": "f-pdf",
            "user_id": "u1",
            "digest": "d41d8c",
            "page": 2,
            "page_label": "3",
            "total_pages": 5,
        },
    )
    assert (second.filename, second.row, second.page, second.score) == ("clients.csv", 1, None, 0.2)
    assert (third.filename, third.table, third.row, third.row_key) == (
        "Tarifs 2024.xlsx",
        "Tarifs",
        4,
        "Pro",
    )
    assert (fourth.filename, fourth.section) == ("guide.docx", "3.2 Limites")
    assert all("source" not in item.metadata for item in result.items)

    (request,) = server.seen
    assert (request.method, request.path) == ("POST", "/query_multiple")
    assert request.json == {"query": "prix plan Pro", "file_ids": ["f-pdf", "f-csv"], "k": 4}
    (exchange,) = result.exchanges
    assert (exchange.status_code, exchange.attempt) == (200, 1)
    assert exchange.request["json"] == request.json
    assert result.latency_s >= exchange.latency_s > 0


def test_rag_api_base_url_with_a_path_and_configured_file_ids(server: LoopbackServer) -> None:
    server.answer("/v2/query_multiple", Canned(body=[]))
    config = rag_api(server, url=f"{server.url}/v2/", file_ids=["only-this"])

    result = run_rag_api(config, k=3)

    assert result.ok
    assert result.items == []
    assert [(seen.path, seen.json["file_ids"]) for seen in server.seen] == [
        ("/v2/query_multiple", ["only-this"])
    ]


def test_rag_api_keeps_one_connection_alive_across_calls(server: LoopbackServer) -> None:
    server.answer("/query_multiple", Canned(body=[]))
    retriever = RagApiRetriever("v1", rag_api(server), file_ids=["f"])
    try:
        assert retriever.retrieve("a", 5).ok
        assert retriever.retrieve("b", 5).ok
    finally:
        retriever.close()
    assert len({seen.client_port for seen in server.seen}) == 1


def test_rag_api_no_documents_404_is_an_empty_result(server: LoopbackServer) -> None:
    server.answer("/query_multiple", Canned(404, NO_DOCS))

    result = run_rag_api(rag_api(server))

    assert result.ok
    assert result.items == []
    assert [(ex.status_code, ex.response_body) for ex in result.exchanges] == [(404, NO_DOCS)]


def test_rag_api_other_404_is_an_error(server: LoopbackServer) -> None:
    server.answer("/query_multiple", Canned(404, {"detail": "Not Found"}))

    result = run_rag_api(rag_api(server))

    assert result.error is not None
    assert (result.error.kind, result.error.status_code) == ("http_status", 404)
    assert "Not Found" in result.error.message
    assert len(result.exchanges) == 1  # a 404 is not retried


def test_rag_api_retries_a_500_then_succeeds(server: LoopbackServer) -> None:
    server.answer(
        "/query_multiple",
        Canned(500, {"detail": "boom"}),
        Canned(body=[[document("f-pdf", "ok", page=0), 0.1]]),
    )

    result = run_rag_api(rag_api(server))

    assert result.ok, result.error
    assert [(item.text, item.page) for item in result.items] == [("ok", 1)]
    assert [(ex.attempt, ex.status_code) for ex in result.exchanges] == [(1, 500), (2, 200)]


def test_rag_api_retry_exhaustion_records_the_last_status(server: LoopbackServer) -> None:
    server.answer("/query_multiple", Canned(503, {"detail": "overloaded"}))
    config = rag_api(server, retry={"attempts": 3, "backoff_s": 0.01})

    started = time.perf_counter()
    result = run_rag_api(config)
    elapsed = time.perf_counter() - started

    assert result.error is not None
    assert (result.error.kind, result.error.status_code) == ("http_status", 503)
    assert [(ex.attempt, ex.status_code) for ex in result.exchanges] == [
        (1, 503),
        (2, 503),
        (3, 503),
    ]
    assert result.items == []
    assert elapsed >= 0.01 + 0.02  # exponential backoff between the tries
    assert result.latency_s >= 0.03


def test_rag_api_429_is_retried_but_not_when_excluded(server: LoopbackServer) -> None:
    server.answer("/query_multiple", Canned(429, {"detail": "slow down"}), Canned(body=[]))
    assert run_rag_api(rag_api(server)).ok

    server.seen.clear()
    server.answer("/query_multiple", Canned(429, {"detail": "slow down"}), Canned(body=[]))
    result = run_rag_api(
        rag_api(server, retry={"attempts": 3, "backoff_s": 0, "retry_on": ["5xx"]})
    )
    assert result.error is not None
    assert (result.error.kind, result.error.status_code) == ("http_status", 429)
    assert len(server.seen) == 1


def test_rag_api_timeout_is_recorded_after_every_try(server: LoopbackServer) -> None:
    server.answer("/query_multiple", Canned(body=[], delay_s=0.6))
    config = rag_api(server, timeout_s=0.15)

    result = run_rag_api(config)

    assert result.error is not None
    assert result.error.kind == "timeout"
    assert "ReadTimeout" in result.error.message
    assert [(ex.attempt, ex.status_code, ex.response_body) for ex in result.exchanges] == [
        (1, None, None),
        (2, None, None),
    ]
    assert result.latency_s >= 0.3


def test_rag_api_connection_refused_is_a_transport_error() -> None:
    # bound but never listening: connections are refused, and no other test can take the port
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
        config = parse_retrieval_config(
            {"adapter": "rag-api", "url": f"http://127.0.0.1:{port}", "retry": {"backoff_s": 0}}
        )
        assert isinstance(config, RagApiRetrieval)

        result = run_rag_api(config)

    assert result.error is not None
    assert result.error.kind == "transport"
    assert "ConnectError" in result.error.message
    assert [ex.attempt for ex in result.exchanges] == [1, 2]


@pytest.mark.parametrize(
    ("canned", "expected"),
    [
        (Canned(raw=b'[[{"page_content": '), "not JSON"),
        (Canned(raw=b""), "not JSON"),
        (Canned(body={"results": []}), "expected a JSON list"),
        (Canned(body=[[{"page_content": "x", "metadata": {}}]]), "not a [document, score] pair"),
        (Canned(body=[[{"page_content": "x"}, "0.1"]]), "score is str"),
        (Canned(body=[[{"metadata": {}}, 0.1]]), "page_content is not a string"),
        (Canned(body=[[{"page_content": "x", "metadata": []}, 0.1]]), "metadata is not an object"),
    ],
)
def test_rag_api_malformed_answers(server: LoopbackServer, canned: Canned, expected: str) -> None:
    server.answer("/query_multiple", canned)

    result = run_rag_api(rag_api(server))

    assert result.error is not None
    assert result.error.kind == "malformed"
    assert expected in result.error.message
    assert len(result.exchanges) == 1  # a malformed answer is not retried


# --- rag_api: credentials -------------------------------------------------------------


def test_rag_api_jwt_is_verifiable_and_never_recorded(
    server: LoopbackServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RAGV2_TEST_JWT_SECRET", SECRET)
    monkeypatch.setenv("RAGV2_TEST_API_KEY", API_KEY)

    def echo_credentials(seen: Seen) -> Canned:
        # A careless server that echoes what it received: the record must still be clean.
        echoed = f"{seen.headers['authorization']} {seen.headers['x-api-key']}"
        return Canned(body=[[document("f-pdf", echoed, page=0), 0.1]])

    server.respond("/query_multiple", echo_credentials)
    config = rag_api(
        server,
        jwt_secret_env="RAGV2_TEST_JWT_SECRET",
        jwt_user_id="eval-bot",
        headers_env={"X-Api-Key": "RAGV2_TEST_API_KEY"},
    )

    before = int(time.time())
    result = run_rag_api(config)

    assert result.ok, result.error
    (seen,) = server.seen
    scheme, token = seen.headers["authorization"].split(" ")
    assert scheme == "Bearer"
    claims = jwt.decode(token, SECRET, algorithms=["HS256"])
    assert claims["id"] == "eval-bot"
    assert before + 3600 <= claims["exp"] <= int(time.time()) + 3600
    assert seen.headers["x-api-key"] == API_KEY

    (exchange,) = result.exchanges
    assert exchange.request["headers"] == {"X-Api-Key": "<redacted>", "Authorization": "<redacted>"}
    recorded = json.dumps([ex.to_json() for ex in result.exchanges])
    for credential in (SECRET, token, API_KEY):
        assert credential not in recorded


def test_rag_api_credentials_are_scrubbed_from_error_messages(
    server: LoopbackServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RAGV2_TEST_JWT_SECRET", SECRET)
    server.respond(
        "/query_multiple",
        lambda seen: Canned(401, {"detail": f"bad token {seen.headers['authorization']}"}),
    )

    result = run_rag_api(rag_api(server, jwt_secret_env="RAGV2_TEST_JWT_SECRET"))

    assert result.error is not None
    assert (result.error.kind, result.error.status_code) == ("http_status", 401)
    token = server.seen[0].headers["authorization"].split(" ")[1]
    assert token not in result.error.message
    assert "<redacted>" in result.error.message
    assert token not in json.dumps([ex.to_json() for ex in result.exchanges])


def test_rag_api_missing_secret_variable_is_an_adapter_error_on_every_run(
    server: LoopbackServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("RAGV2_TEST_ABSENT_SECRET", raising=False)
    server.answer("/query_multiple", Canned(body=[]))
    retriever = RagApiRetriever(
        "v2", rag_api(server, jwt_secret_env="RAGV2_TEST_ABSENT_SECRET"), file_ids=["f"]
    )

    results = [retriever.retrieve("q", 5), retriever.retrieve("q", 5)]
    retriever.close()

    for result in results:
        assert result.error is not None
        assert result.error.kind == "adapter"
        assert "RAGV2_TEST_ABSENT_SECRET" in result.error.message
        assert result.exchanges == []
    assert server.seen == []


# --- rag_api: /query once per file --------------------------------------------------------


def test_rag_api_query_per_file_merges_by_distance(server: LoopbackServer) -> None:
    per_file = {
        "f-a": [[document("f-a", "a1", page=0), 0.30], [document("f-a", "a2", page=1), 0.50]],
        "f-b": [[document("f-b", "b1", page=4), 0.10], [document("f-b", "b2", page=5), 0.40]],
    }
    server.respond("/query", lambda seen: Canned(body=per_file[seen.json["file_id"]]))
    config = rag_api(server, endpoint="query", entity_id="agent-7")

    result = run_rag_api(config, k=3, file_ids=["f-a", "f-b"])

    assert result.ok, result.error
    assert [(item.rank, item.text, item.page, item.score) for item in result.items] == [
        (1, "b1", 5, 0.10),
        (2, "a1", 1, 0.30),
        (3, "b2", 6, 0.40),
    ]
    assert [seen.json for seen in server.seen] == [
        {"query": "prix plan Pro", "file_id": "f-a", "k": 3, "entity_id": "agent-7"},
        {"query": "prix plan Pro", "file_id": "f-b", "k": 3, "entity_id": "agent-7"},
    ]
    assert len(result.exchanges) == 2


def test_rag_api_query_per_file_404_is_an_error(server: LoopbackServer) -> None:
    server.answer("/query", Canned(404, NO_DOCS))

    result = run_rag_api(rag_api(server, endpoint="query"))

    assert result.error is not None
    assert (result.error.kind, result.error.status_code) == ("http_status", 404)


def test_rag_api_without_file_ids_is_an_adapter_error(server: LoopbackServer) -> None:
    result = run_rag_api(rag_api(server), file_ids=[])

    assert result.error is not None
    assert result.error.kind == "adapter"
    assert server.seen == []


# --- generic HTTP JSON ------------------------------------------------------------------


def http_json(server: LoopbackServer, **overrides: Any) -> HttpJsonRetrieval:
    settings: dict[str, Any] = {
        "adapter": "http-json",
        "url": f"{server.url}/search",
        "retry": {"attempts": 2, "backoff_s": 0.0},
    }
    settings.update(overrides)
    config = parse_retrieval_config(settings)
    assert isinstance(config, HttpJsonRetrieval)
    return config


def test_http_json_maps_nested_paths_with_zero_based_pages(server: LoopbackServer) -> None:
    hits: list[dict[str, Any]] = [
        {
            "doc": {
                "content": "Plan Pro 49 EUR",
                "meta": {"fid": "f1", "name": "tarifs.pdf", "p": 0},
            },
            "scores": [0.91],
        },
        {
            "doc": {
                "content": "Pro;49;EUR",
                "meta": {"fid": 7, "name": "t.xlsx", "sheet": "Prix", "r": "2", "key": "Pro"},
            },
            "scores": [0.5],
        },
        {"doc": {"content": "third", "meta": {"name": "only-a-name.md"}}, "scores": []},
    ]
    server.answer("/search", Canned(body={"data": {"hits": hits, "total": 3}}))
    config = http_json(
        server,
        body={
            "q": "{query}",
            "top_k": "{k}",
            "filter": {"files": "{file_ids}"},
            "note": "search {query} top {k} in {file_ids}",
            "fixed": [1, True, None],
        },
        items_path="data.hits",
        fields={
            "text": "doc.content",
            "file_id": "doc.meta.fid",
            "filename": "doc.meta.name",
            "page": "doc.meta.p",
            "page_base": 0,
            "table": "doc.meta.sheet",
            "row": "doc.meta.r",
            "row_base": 0,
            "row_key": "doc.meta.key",
            "score": "scores.0",
        },
    )
    retriever = build_retriever("v2", config, file_ids=["f1", "f2"])
    try:
        result = retriever.retrieve("prix Pro", 5)
    finally:
        retriever.close()

    assert result.ok, result.error
    first, second, third = result.items
    assert (first.rank, first.text, first.file_id, first.filename, first.page, first.score) == (
        1,
        "Plan Pro 49 EUR",
        "f1",
        "tarifs.pdf",
        1,
        0.91,
    )
    assert (second.file_id, second.table, second.row, second.row_key, second.page) == (
        "7",
        "Prix",
        3,
        "Pro",
        None,
    )
    assert (third.rank, third.file_id, third.filename, third.score) == (
        3,
        None,
        "only-a-name.md",
        None,
    )
    assert first.metadata == {"doc": hits[0]["doc"], "scores": [0.91]}
    (seen,) = server.seen
    assert seen.json == {
        "q": "prix Pro",
        "top_k": 5,
        "filter": {"files": ["f1", "f2"]},
        "note": "search prix Pro top 5 in f1,f2",
        "fixed": [1, True, None],
    }


def test_http_json_get_with_params_and_a_top_level_list(server: LoopbackServer) -> None:
    server.answer(
        "/search",
        Canned(body=[{"text": "a", "file_id": "f", "score": 2}, {"text": "b", "file_id": "g"}]),
    )
    config = http_json(server, method="GET", params={"q": "{query}", "n": "{k}"}, k=1)

    retriever = build_retriever("x", config, file_ids=[])
    result = retriever.retrieve("l'été", 1)
    retriever.close()

    assert result.ok, result.error
    assert [(item.text, item.file_id, item.score) for item in result.items] == [("a", "f", 2.0)]
    (seen,) = server.seen
    assert (seen.method, seen.query, seen.json) == ("GET", {"q": ["l'été"], "n": ["1"]}, None)
    assert result.exchanges[0].request["params"] == {"q": "l'été", "n": "1"}


def test_http_json_default_body_and_header_from_env(
    server: LoopbackServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RAGV2_TEST_API_KEY", API_KEY)
    server.answer("/search", Canned(body=[]))
    config = http_json(server, headers_env={"X-Api-Key": "RAGV2_TEST_API_KEY"})

    retriever = build_retriever("x", config, file_ids=["f"])
    result = retriever.retrieve("q", 4)
    retriever.close()

    assert result.ok
    assert server.seen[0].json == {"query": "q", "k": 4}
    assert server.seen[0].headers["x-api-key"] == API_KEY
    assert API_KEY not in json.dumps([ex.to_json() for ex in result.exchanges])


@pytest.mark.parametrize(
    ("body", "items_path", "expected"),
    [
        ({"data": {"hits": {"not": "a list"}}}, "data.hits", "no list at items_path 'data.hits'"),
        ({"data": []}, "data.hits", "found nothing"),
        ({"hits": [{"content": "no text field"}]}, "hits", "item 1: no text at 'text'"),
        ({"hits": [{"text": 42}]}, "hits", "item 1: no text at 'text' (found int)"),
    ],
)
def test_http_json_wrong_shapes_are_malformed(
    server: LoopbackServer, body: Any, items_path: str, expected: str
) -> None:
    server.answer("/search", Canned(body=body))

    retriever = build_retriever("x", http_json(server, items_path=items_path), file_ids=[])
    result = retriever.retrieve("q", 3)
    retriever.close()

    assert result.error is not None
    assert result.error.kind == "malformed"
    assert expected in result.error.message


@pytest.mark.parametrize(
    "url",
    ["127.0.0.1:9/search", "not a url", "file:///etc/passwd", "http://[zz::1]:80", "http://"],
)
def test_a_url_no_call_could_be_made_to_is_refused_when_read(url: str) -> None:
    """Refused with the configuration, not found run after run as adapter errors."""
    from pydantic import ValidationError

    with pytest.raises(ValidationError) as raised:
        parse_retrieval_config({"adapter": "http-json", "url": url})
    assert [error["loc"][-1] for error in raised.value.errors()] == ["url"]
    assert repr(url) in str(raised.value)


# --- bounded responses ------------------------------------------------------------------


def test_a_gzip_bomb_stops_at_the_size_limit_as_a_run_error(server: LoopbackServer) -> None:
    import gzip
    import tracemalloc

    bomb = gzip.compress(b"[" + b" " * (200 * 1024 * 1024) + b"]", compresslevel=9)
    assert len(bomb) < 300 * 1024  # 200 MB once decompressed
    server.answer("/query_multiple", Canned(raw=bomb, headers={"Content-Encoding": "gzip"}))
    tracemalloc.start()
    try:
        result = run_rag_api(rag_api(server, max_response_mb=4))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert result.error is not None
    assert result.error.kind == "too_large"
    assert "exceeded 4,194,304 bytes (after decompression)" in result.error.message
    assert peak < 40 * 1024 * 1024  # read in chunks, never whole
    (exchange,) = result.exchanges  # not retried: it would be as large again
    assert exchange.response_body == "<body over 4,194,304 bytes: not kept>"


def test_a_body_over_the_limit_is_refused_and_one_under_it_is_read(
    server: LoopbackServer,
) -> None:
    big = [[document("f-pdf", "x" * 1000), 0.1] for _ in range(2000)]  # ~2.4 MB
    server.answer("/query_multiple", Canned(body=big))
    assert run_rag_api(rag_api(server, max_response_mb=1)).error.kind == "too_large"  # type: ignore[union-attr]
    server.answer("/query_multiple", Canned(body=big))
    result = run_rag_api(rag_api(server, max_response_mb=4))
    assert result.error is None
    assert len(result.items) == 10


def test_a_trickling_server_is_a_timeout_at_the_calls_deadline(server: LoopbackServer) -> None:
    """A byte every 0.05 s (~8 s in all): every read is quick, so only a deadline per call,
    not per read, ends it — as a timeout that names the call's deadline."""
    body = json.dumps([[document("f-pdf", "slow"), 0.1]]).encode()
    server.answer("/query_multiple", Canned(raw=body, trickle_s=0.05))
    result = run_rag_api(rag_api(server, timeout_s=1, retry={"attempts": 1}))
    assert result.error is not None
    assert result.error.kind == "timeout"
    assert "no complete answer within 1 s" in result.error.message


def test_an_unknown_placeholder_is_a_configuration_error_with_a_suggestion() -> None:
    from pydantic import ValidationError

    from pytest_ragv2.systems.http_json_chat import HttpJsonChatConfig

    with pytest.raises(ValidationError, match=r"body\.q: unknown placeholder \{qeury\} \(did "):
        parse_retrieval_config(
            {"adapter": "http-json", "url": "http://x", "body": {"q": "{qeury}", "k": "{k}"}}
        )
    with pytest.raises(ValidationError, match=r"params\.n: unknown placeholder \{top_k\}"):
        parse_retrieval_config(
            {"adapter": "http-json", "url": "http://x", "method": "GET", "params": {"n": "{top_k}"}}
        )
    with pytest.raises(ValidationError, match=r"body\.input\[1\]: unknown placeholder \{promt\}"):
        HttpJsonChatConfig(
            adapter="http-json-chat",
            url="http://x",
            answer_path="a",
            body={"input": ["{conversation_id}", "{promt}"]},
        )
    # every placeholder the adapter fills is accepted, in a whole value or inside text
    config = parse_retrieval_config(
        {"adapter": "http-json", "url": "http://x", "body": {"q": "q={query}", "ids": "{file_ids}"}}
    )
    assert config.body == {"q": "q={query}", "ids": "{file_ids}"}  # type: ignore[union-attr]


def test_a_session_with_a_misspelt_placeholder_does_not_start(project: pytest.Pytester) -> None:
    text = pyproject().replace(
        'retrieval = {adapter = "python", callable = "ragsystems:good"}',
        'retrieval = {adapter = "http-json", url = "http://127.0.0.1:9/search", '
        'body = {q = "{qeury}"}}',
    )
    (project.path / "pyproject.toml").write_text(text)
    result = project.runpytest("--ragv2-layer=A")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "unknown placeholder {qeury} (did you mean {query}?)" in result.stderr.str()
    assert not (project.path / "raw-runs").exists()


def test_items_without_file_identity_are_an_adapter_error_not_a_leak(
    server: LoopbackServer,
) -> None:
    # both field paths wrong: a configuration mistake, never shown as a safety incident
    server.answer("/search", Canned(body=[{"text": "x", "doc_id": "f1", "source": "a.pdf"}]))
    config = http_json(server, fields={"text": "text", "file_id": "id", "filename": "name"})
    retriever = build_retriever("v2", config, file_ids=["f1"])
    try:
        result = retriever.retrieve("prix Pro", 5)
    finally:
        retriever.close()
    assert result.error is not None
    assert result.error.kind == "adapter"
    assert result.error.message == (
        "item 1: no file identity: fields.file_id 'id' and fields.filename 'name' find "
        "nothing in it (its keys: doc_id, source, text)"
    )
    assert result.items == []


def test_a_plain_http_endpoint_gets_a_client_that_loads_no_certificates() -> None:
    """Loading the certificate bundle costs a client 20-50 ms: an http:// endpoint never
    does TLS, any other is verified as httpx does by default."""
    import ssl

    from pytest_ragv2.systems.base import tls_verify

    plain = tls_verify("HTTP://127.0.0.1:8000/query")
    assert isinstance(plain, ssl.SSLContext)
    assert plain.cert_store_stats()["x509_ca"] == 0
    assert tls_verify("https://rag.example.com") is True
    assert tls_verify("") is True
