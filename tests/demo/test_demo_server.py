"""The demo rag_api server: real HTTP on 127.0.0.1, rag_api's wire shapes, auth, keep-alive."""

from __future__ import annotations

import hashlib
import re
import time
from collections.abc import Iterator

import httpx
import jwt
import pytest

from ragv2_demo.chunks import Chunk
from ragv2_demo.engine import DemoIndex
from ragv2_demo.server import DemoServer, main
from ragv2_demo.server_rag import NO_DOCUMENTS

V1_CHUNKS = [
    Chunk(
        "securite#0", "securite", "securite.pdf", "Le RPO est de 15 minutes, le RTO de 4 h.", page=2
    ),
    Chunk(
        "securite#1", "securite", "securite.pdf", "Certification ISO 27001 obtenue en 2023.", page=3
    ),
    Chunk("guide#0", "guide", "guide.md", "Le plan Starter coûte 89 € HT par mois."),
]
V2_CHUNKS = [
    *V1_CHUNKS[:2],
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
SECRET = "test-secret-for-the-demo-server-only-0123456789"
OTHER_SECRET = "another-secret-for-the-demo-server-0123456789"


@pytest.fixture(scope="module")
def index() -> DemoIndex:
    return DemoIndex.from_chunks(V1_CHUNKS, V2_CHUNKS)


@pytest.fixture(scope="module")
def server(index: DemoIndex) -> Iterator[DemoServer]:
    with DemoServer(index) as running:
        yield running


@pytest.fixture
def client(server: DemoServer) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server.url, timeout=5.0) as http:
        yield http


def test_health(client: httpx.Client) -> None:
    response = client.get("/health")
    assert response.status_code == 200
    assert response.json() == {"status": "UP"}


def test_query_multiple_answers_pairs_with_rag_api_metadata(client: httpx.Client) -> None:
    response = client.post(
        "/v2/query_multiple", json={"query": "RPO RTO", "file_ids": ["securite"], "k": 1}
    )
    assert response.status_code == 200
    body = response.json()
    assert isinstance(body, list)
    assert len(body) == 1
    document, score = body[0]
    assert isinstance(score, float)
    assert document["type"] == "Document"
    assert document["page_content"] == "Le RPO est de 15 minutes, le RTO de 4 h."
    assert document["id"] is None  # rag_api sends null
    metadata = document["metadata"]
    assert metadata["file_id"] == "securite"
    assert metadata["page"] == 1  # 0-based, as rag_api: the chunk is on page 2
    assert metadata["page_label"] == "2"
    assert metadata["total_pages"] == 3
    assert metadata["user_id"] == "public"
    assert re.fullmatch(r"/app/uploads/public/securite_[0-9a-f]{32}\.pdf", metadata["source"])
    assert "filename" not in metadata  # rag_api sends none: the name is in the source
    assert metadata["_rag_chunk_index"] >= 0
    assert metadata["digest"] == hashlib.md5(document["page_content"].encode()).hexdigest()


def test_rag_api_routes_carry_no_structure_the_v2_search_route_does(
    client: httpx.Client,
) -> None:
    body = {"query": "1 689 k€", "file_ids": ["finances"], "k": 4}
    metadata = client.post("/v2/query_multiple", json=body).json()[0][0]["metadata"]
    assert not {"row", "table", "row_key", "section", "filename", "page"} & set(metadata)
    found = client.post("/v2/search", json=body).json()["results"][0]
    assert found["doc"]["row"] == 4  # 1-based: the 4th data row
    assert found["doc"]["table"] == "CA 2025"
    assert found["doc"]["row_key"] == "T4"
    assert found["doc"]["filename"] == "finances.xlsx"
    assert found["doc"]["page"] is None


def test_ids_and_documents_list_what_is_indexed(client: httpx.Client) -> None:
    ids = client.get("/v1/ids").json()
    assert "securite" in ids
    assert len(ids) == len(set(ids))
    stored = client.get("/v1/documents", params={"ids": ["securite"]}).json()
    assert stored
    assert all(set(doc) == {"page_content", "metadata"} for doc in stored)
    assert [doc["metadata"]["_rag_chunk_index"] for doc in stored] == list(range(len(stored)))
    missing = client.get("/v1/documents", params={"ids": ["securite", "nope"]})
    assert missing.status_code == 404
    assert missing.json() == {"detail": "One or more IDs not found"}


def test_v1_and_v2_serve_their_own_chunks(client: httpx.Client) -> None:
    body = {"query": "plan Starter", "file_ids": ["guide"], "k": 4}
    v1 = client.post("/v1/query_multiple", json=body).json()
    v2 = client.post("/v2/query_multiple", json=body).json()
    assert "section" not in v1[0][0]["metadata"]
    assert "section" not in v2[0][0]["metadata"]
    structured = client.post("/v2/search", json=body).json()["results"][0]
    assert structured["doc"]["heading"] == "2. Offres et tarifs > 2.1 Starter"


def test_scores_are_distances_ascending(client: httpx.Client) -> None:
    for path in ("/v1", "/v2"):
        body = client.post(
            f"{path}/query_multiple",
            json={"query": "certification ISO 27001", "file_ids": ["securite", "guide"], "k": 5},
        ).json()
        scores = [score for _, score in body]
        assert scores == sorted(scores)
        assert body[0][0]["metadata"]["page_label"] == "3"


def test_query_multiple_without_match_is_404(client: httpx.Client) -> None:
    response = client.post(
        "/v2/query_multiple", json={"query": "RPO", "file_ids": ["nope"], "k": 4}
    )
    assert response.status_code == 404
    assert response.json() == {"detail": NO_DOCUMENTS}


def test_query_single_file(client: httpx.Client) -> None:
    response = client.post(
        "/v1/query", json={"query": "RPO", "file_id": "securite", "k": 5, "entity_id": "agent-7"}
    )
    assert response.status_code == 200
    body = response.json()
    assert len(body) == 2
    assert {d["metadata"]["file_id"] for d, _ in body} == {"securite"}
    assert body[0][0]["metadata"]["user_id"] == "agent-7"
    empty = client.post("/v1/query", json={"query": "RPO", "file_id": "nope"})
    assert empty.status_code == 200
    assert empty.json() == []


def test_k_defaults_to_four(client: httpx.Client) -> None:
    body = client.post(
        "/v1/query_multiple", json={"query": "plan", "file_ids": ["securite", "guide"]}
    ).json()
    assert len(body) == 3  # only three chunks exist in those files


@pytest.mark.parametrize(
    ("path", "content", "expected_type", "expected_loc"),
    [
        ("/v2/query_multiple", b'{"file_ids": ["a"]}', "missing", ["body", "query"]),
        (
            "/v2/query_multiple",
            b'{"query": "x", "file_ids": "a"}',
            "list_type",
            ["body", "file_ids"],
        ),
        ("/v2/query", b'{"query": "x", "file_id": "a", "k": "many"}', "int_parsing", ["body", "k"]),
        ("/v1/query", b"{not json", "json_invalid", ["body", 1]),
        ("/v1/query_multiple", b"[1, 2]", "model_type", ["body"]),
    ],
)
def test_malformed_body_is_422(
    client: httpx.Client, path: str, content: bytes, expected_type: str, expected_loc: list[object]
) -> None:
    response = client.post(path, content=content, headers={"Content-Type": "application/json"})
    assert response.status_code == 422
    detail = response.json()["detail"]
    assert isinstance(detail, list)
    assert detail[0]["type"] == expected_type
    assert detail[0]["loc"] == expected_loc
    assert "msg" in detail[0]


def test_unknown_route_is_404(client: httpx.Client) -> None:
    assert client.post("/v3/query", json={}).status_code == 404
    assert client.get("/v1/query").status_code == 404


def test_keep_alive_requests_share_one_connection_with_nagle_off(
    client: httpx.Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every request on one kept-alive connection, and that connection without Nagle's
    algorithm: with it, each response would wait ~44 ms for the client's delayed ACK."""
    import socket

    from ragv2_demo.server_base import HandlerBase

    nodelay: list[int] = []
    original = HandlerBase.setup

    def setup(self: HandlerBase) -> None:
        original(self)
        nodelay.append(self.connection.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))

    monkeypatch.setattr(HandlerBase, "setup", setup)
    body = {"query": "RPO", "file_ids": ["securite", "guide"], "k": 3}
    for _ in range(20):
        assert client.post("/v2/query_multiple", json=body).status_code == 200
    assert len(nodelay) == 1  # one connection served them all
    assert nodelay[0] != 0


def _token(secret: str, **claims: object) -> str:
    return jwt.encode({"id": "user-42", **claims}, secret, algorithm="HS256")


def test_jwt_auth(index: DemoIndex) -> None:
    body = {"query": "RPO", "file_ids": ["securite"], "k": 1}
    with DemoServer(index, jwt_secret=SECRET) as server, httpx.Client(base_url=server.url) as http:
        assert http.get("/health").status_code == 200
        missing = http.post("/v2/query_multiple", json=body)
        assert missing.status_code == 401
        assert isinstance(missing.json()["detail"], str)
        wrong = http.post(
            "/v2/query_multiple",
            json=body,
            headers={"Authorization": f"Bearer {_token(OTHER_SECRET)}"},
        )
        assert wrong.status_code == 401
        expired = http.post(
            "/v2/query_multiple",
            json=body,
            headers={"Authorization": f"Bearer {_token(SECRET, exp=int(time.time()) - 60)}"},
        )
        assert expired.status_code == 401
        ok = http.post(
            "/v2/query_multiple", json=body, headers={"Authorization": f"Bearer {_token(SECRET)}"}
        )
        assert ok.status_code == 200
        metadata = ok.json()[0][0]["metadata"]
        assert metadata["user_id"] == "user-42"
        assert metadata["source"].startswith("/app/uploads/user-42/securite_")


def test_latency_injection_per_path_prefix(index: DemoIndex) -> None:
    body = {"query": "RPO", "file_ids": ["securite"], "k": 1}
    with (
        DemoServer(index, latency_ms={"/v2": 120.0}) as server,
        httpx.Client(base_url=server.url) as http,
    ):
        http.get("/health")
        started = time.perf_counter()
        http.post("/v2/query_multiple", json=body)
        v2_s = time.perf_counter() - started
        delays = _recorded_delays(http, body)
    assert v2_s >= 0.12  # the delay is really waited (a lower bound: no load shortens it)
    assert delays == {"/v1/query_multiple": [], "/v2/query_multiple": [0.12]}


def _recorded_delays(http: httpx.Client, body: dict[str, object]) -> dict[str, list[float]]:
    """The delays the server adds to one request of each version's path (its sleeps)."""
    import ragv2_demo.server_base as server_base

    delays: dict[str, list[float]] = {}
    real = server_base.time

    class Clock:
        def sleep(self, seconds: float) -> None:
            delays[current].append(seconds)

        def __getattr__(self, name: str) -> object:
            return getattr(real, name)

    server_base.time = Clock()  # type: ignore[assignment]
    try:
        for current in ("/v1/query_multiple", "/v2/query_multiple"):
            delays[current] = []
            http.post(current, json=body)
    finally:
        server_base.time = real
    return delays


def test_stop_releases_the_port(index: DemoIndex) -> None:
    server = DemoServer(index).start()
    url = server.url
    assert httpx.get(f"{url}/health").status_code == 200
    server.stop()
    with pytest.raises(httpx.ConnectError):
        httpx.get(f"{url}/health", timeout=1.0)


def test_main_refuses_a_missing_secret_variable(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--jwt-secret-env", "RAGV2_TEST_SECRET_THAT_IS_NOT_SET"]) == 2
    assert "RAGV2_TEST_SECRET_THAT_IS_NOT_SET" in capsys.readouterr().err
