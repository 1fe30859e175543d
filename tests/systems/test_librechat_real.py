"""The librechat-agents adapter and the demo against what a REAL LibreChat v0.8.7 sent.

tests/fixtures/librechat/ holds answers of LibreChat's Agents API recorded on a running
LibreChat (README.md there says how it ran): streamed bodies byte for byte (``.sse``) with a
JSON sidecar, plain bodies inside their JSON file. Each test serves a recording from a
loopback server exactly as it arrived and reads it through the adapter as a live answer, so
a gap between the real service and the adapter's reading cannot hide behind a scripted
server.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from pytest_ragv2.systems.config import RetryPolicy
from pytest_ragv2.systems.librechat_agents import LibreChatAgents, LibreChatAgentsConfig
from pytest_ragv2.systems.transcripts import ChatTurn, ToolCall
from ragv2_demo import answer as demo_model
from tests.scripted_server import Reply, Server, serve

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "librechat"
KEY_ENV = "RAGV2_TEST_LIBRECHAT_REAL_KEY"
QUESTION = "What is the maximum operating pressure of the TVK 110?"


def recording(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((FIXTURES / f"{name}.json").read_text(encoding="utf-8"))
    return data


def sse_text(name: str) -> str:
    return (FIXTURES / recording(name)["body_file"]).read_text(encoding="utf-8")


def sse_frames(name: str) -> list[bytes]:
    """The recorded stream cut at its blank lines, each frame keeping its ``\\n\\n``."""
    text = sse_text(name)
    frames = [frame + "\n\n" for frame in text.split("\n\n")]
    frames[-1] = frames[-1][:-2]  # what followed the last blank line (nothing, or a cut frame)
    return [frame.encode("utf-8") for frame in frames if frame]


def replay(name: str) -> Reply:
    recorded = recording(name)
    if "body_file" not in recorded:
        return Reply(recorded["status_code"], body=recorded["body"])
    cut = "client_closed_after_events" in recorded
    return Reply(recorded["status_code"], frames=sse_frames(name), complete=not cut)


@cache
def manifest() -> dict[str, Any]:
    return recording("manifest")


@cache
def gold_ids() -> dict[str, str]:
    """The gold's file id -> LibreChat's id of that upload (the uploads that were stored)."""
    return {
        entry["gold_file_id"]: entry["librechat_file_id"]
        for entry in manifest()["files"]
        if entry["librechat_file_id"] is not None
    }


@pytest.fixture
def server() -> Iterator[Server]:
    with serve() as running:
        yield running


@pytest.fixture(autouse=True)
def api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, "sk-recorded-key-redacted")


def converse(server: Server, name: str, **overrides: Any) -> ChatTurn:
    """The recording's own request sent through the adapter, its answer served as recorded."""
    request = recording(name)["request"]["body"]
    settings: dict[str, Any] = {
        "adapter": "librechat-agents",
        "url": server.url,
        "agent_id": request["model"],
        "stream": request["stream"],
        "api_key_env": KEY_ENV,
        "timeout_s": 5.0,
        "retry": RetryPolicy(attempts=1, backoff_s=0.0),
    }
    settings.update(overrides)
    server.answer(replay(name))
    adapter = LibreChatAgents("librechat", LibreChatAgentsConfig(**settings))
    try:
        transcript = adapter.converse([request["messages"][-1]["content"]])
    finally:
        adapter.close()
    (seen,) = server.seen
    assert seen.path == "/api/agents/v1/chat/completions"
    assert seen.json == request  # the adapter asks what was asked of the real service
    if settings["api_key_env"] is not None:
        assert seen.headers["authorization"] == "Bearer sk-recorded-key-redacted"
    else:
        assert "authorization" not in seen.headers
    (turn,) = transcript.turns
    return turn


def content_of(name: str) -> str:
    """The answer text as the stream's content deltas carry it."""
    pieces = []
    for frame in sse_text(name).split("\n\n"):
        if frame.startswith("data: {"):
            chunk = json.loads(frame[len("data: ") :])
            for choice in chunk["choices"]:
                pieces.append(choice["delta"].get("content") or "")
    return "".join(pieces)


def attachments(name: str) -> list[dict[str, Any]]:
    found = []
    for frame in sse_text(name).split("\n\n"):
        if frame.startswith("event: attachment\n"):
            found.append(json.loads(frame.split("\n", 1)[1][len("data: ") :]))
    return found


# ---------------------------------------------------------------------------------------
# The recordings themselves


SECRET_SHAPES = re.compile(r"sk-[0-9a-f]{20,}|eyJ[A-Za-z0-9_-]{10,}\.")
# a path of the recording host (LibreChat's own "/uploads/<user>/..." is not one)
HOST_PATH = re.compile(r"(?<![\w.])/(?:tmp|work|root|home|opt|srv|var|usr)/")


def test_the_recordings_hold_no_secret_and_no_host_path() -> None:
    for path in sorted(FIXTURES.rglob("*")):
        if path.is_file():
            text = path.read_text(encoding="utf-8")
            assert not SECRET_SHAPES.search(text), path.name
            assert not HOST_PATH.search(text), path.name


def test_every_stream_is_kept_byte_exact_and_ends_as_librechat_ends_it() -> None:
    streams = sorted(path.stem for path in FIXTURES.glob("*.sse"))
    assert streams == [
        "error_file_gone_stream",
        "error_model_500_stream",
        "error_model_cut_stream",
        "error_no_files_stream",
        "stream_attachment_lost",
        "stream_client_cut",
        "stream_file_search",
        "stream_file_search_de",
        "stream_file_search_fr",
        "stream_identity",
        "stream_two_searches",
    ]
    for name in streams:
        recorded = recording(name)
        assert recorded["body_file"] == f"{name}.sse"
        assert recorded["status_code"] == 200
        assert recorded["headers"]["content-type"] == "text/event-stream"
        text = sse_text(name)
        if name == "stream_client_cut":
            assert text.count("\n\n") == 3
            assert "[DONE]" not in text
        else:
            assert text.endswith("data: [DONE]\n\n")
            assert "\r" not in text


def test_the_event_kinds_of_a_real_streamed_file_search_answer() -> None:
    """Every kind of frame v0.8.7 sent, in order: role, tool call opening and argument
    slices, one attachment, content slices, a final chunk with usage, [DONE]."""
    kinds = []
    for frame in sse_text("stream_file_search").split("\n\n"):
        if not frame:
            continue
        if frame.startswith("event: "):
            kinds.append(frame.split("\n", 1)[0][len("event: ") :])
            continue
        assert frame.startswith("data: ")
        if frame == "data: [DONE]":
            kinds.append("[DONE]")
            continue
        chunk = json.loads(frame[len("data: ") :])
        assert set(chunk) <= {"id", "object", "created", "model", "choices", "usage"}
        assert chunk["object"] == "chat.completion.chunk"
        (choice,) = chunk["choices"]
        assert set(choice) == {"index", "delta", "finish_reason"}
        delta = choice["delta"]
        kind = "/".join(sorted(delta)) or "empty"
        if choice["finish_reason"] is not None:
            kind += f"+finish:{choice['finish_reason']}"
        if "usage" in chunk:
            kind += "+usage"
        kinds.append(kind)
    collapsed = [kind for n, kind in enumerate(kinds) if n == 0 or kinds[n - 1] != kind]
    assert collapsed == [
        "role",
        "tool_calls",
        "attachment",
        "content",
        "empty+finish:stop+usage",
        "[DONE]",
    ]
    (attachment,) = attachments("stream_file_search")
    assert set(attachment) == {
        "type",
        "file_search",
        "toolCallId",
        "messageId",
        "conversationId",
        "name",
    }
    for source in attachment["file_search"]["sources"]:
        assert set(source) == {
            "type",
            "fileId",
            "content",
            "fileName",
            "relevance",
            "pages",
            "pageRelevance",
            "metadata",
        }
        assert set(source["metadata"]) == {"storageType", "fileType", "fileBytes"}


# ---------------------------------------------------------------------------------------
# Streamed answers with file_search


TVK110_EN = "8cf3a474-a8ce-4bf5-a633-e333d7efda28"
TVK220_EN = "3f019bbb-1cb9-4136-b82b-8e38ec1cb9f8"
PED_CERT = "3f0389a7-b256-439b-82b5-ff3ff098f853"


def test_streamed_file_search_answer_key_for_key(server: Server) -> None:
    turn = converse(server, "stream_file_search")

    assert turn.error is None
    assert turn.answer == content_of("stream_file_search")
    assert turn.answer == (
        "According to the documents:\n"
        "- Table 1 – Operating pressure and free air delivery TVK 110 \\ue202turn0file0\n"
        "- Pressure vessels and pressure-bearing parts of the TVK piston compressor series "
        "(TVK 110, TVK \\ue202turn0file3"
    )
    assert turn.finish_reason == "stop"
    # v0.8.7 reports zeros when its model reported no usage: no figure, a warning
    assert turn.usage == {}
    assert turn.warnings == ["LibreChat reported 0 tokens everywhere (its model reported no usage)"]
    assert [
        (item.rank, item.file_id, item.filename, item.page, round(item.score or 0, 4))
        for item in turn.evidence
    ] == [
        (1, TVK110_EN, "datasheet-tvk-110-en.pdf", None, 0.6666),  # pages [] = page 0 or none
        (2, TVK110_EN, "datasheet-tvk-110-en.pdf", 2, 0.6656),  # pages [1], 0-based
        (3, TVK220_EN, "datasheet-tvk-220-en.pdf", None, 0.6308),
        (4, PED_CERT, "certificate-ped-tvk-series-en.pdf", None, 0.6226),
        (5, TVK220_EN, "datasheet-tvk-220-en.pdf", 2, 0.6174),
        (6, "6efc20c4-6832-44cf-b95e-6399570390a0", "datasheet-tvs-75-en.pdf", None, 0.6024),
        (
            7,
            "22ee10cf-987a-4dd0-ae78-4759ec1ae20b",
            "operating-manual-tvs-75-en.docx",
            None,
            0.5287,
        ),
        (8, "a8931f33-377c-4e2f-9802-1545b5547f0f", "datasheet-tvm-30-h2-en.pdf", 2, 0.5067),
        (9, "a8931f33-377c-4e2f-9802-1545b5547f0f", "datasheet-tvm-30-h2-en.pdf", None, 0.4828),
    ]
    (attachment,) = attachments("stream_file_search")
    sources = attachment["file_search"]["sources"]
    for item, source in zip(turn.evidence, sources, strict=True):
        assert item.text == source["content"]
        assert item.metadata == {
            **{key: value for key, value in source.items() if key != "content"},
            "toolCallId": "call_1_0_ed747d71",
        }
    # the call opens at index 1 and its argument slices come at index 0: still one call
    assert turn.tool_calls == [
        ToolCall(
            id="call_1_0_ed747d71",
            name="file_search",
            arguments={"query": QUESTION},
            result=json.dumps({"sources": sources}, ensure_ascii=False),
        )
    ]
    # turn0file0 names the first of the tool's own top-10 list; turn0file3 its fourth, the
    # PED certificate, which the attachment also has fourth
    assert [(c.marker, c.file_id, c.filename, c.page) for c in turn.citations] == [
        ("\\ue202turn0file0", TVK110_EN, "datasheet-tvk-110-en.pdf", None),
        ("\\ue202turn0file3", PED_CERT, "certificate-ped-tvk-series-en.pdf", None),
    ]
    assert "Table 1 – Operating pressure and free air delivery TVK 110" in (
        turn.citations[0].content or ""
    )
    assert "Pressure vessels and pressure-bearing parts of the TVK piston compressor" in (
        turn.citations[1].content or ""
    )


def test_two_searches_each_get_their_own_arguments(server: Server) -> None:
    """v0.8.7 opens the k-th call at index k + 1 and streams its arguments at index k: the
    second call's slices come at the index the first call was opened at. (Read by index
    alone, both queries ended up glued in the first call and the second had none.)"""
    openings, slices = [], []
    for frame in sse_text("stream_two_searches").split("\n\n"):
        if frame.startswith("data: {"):
            for call in json.loads(frame[6:])["choices"][0]["delta"].get("tool_calls", []):
                (openings if "id" in call else slices).append((call["index"], call.get("id")))
    assert openings == [(1, "call_1_0_1feed58c"), (2, "call_1_1_2d928441")]
    assert [index for index, _ in slices] == [0, 0, 1, 1]

    turn = converse(server, "stream_two_searches", file_id_map=gold_ids())

    assert turn.error is None
    (attachment,) = attachments("stream_two_searches")  # the second call's never came
    assert attachment["toolCallId"] == "call_1_0_1feed58c"
    assert turn.tool_calls == [
        ToolCall(
            id="call_1_0_1feed58c",
            name="file_search",
            arguments={"query": "Welche synthetischen Projektdatensätze verwenden den TVM 30-H2"},
            result=json.dumps(
                {"sources": attachment["file_search"]["sources"]}, ensure_ascii=False
            ),
        ),
        ToolCall(
            id="call_1_1_2d928441",
            name="file_search",
            arguments={"query": "mit welchen Enddrücken laufen sie?"},
        ),
    ]
    assert [(item.file_id, item.filename) for item in turn.evidence] == [
        ("datenblatt-tvm-30-h2", "datenblatt-tvm-30-h2.pdf"),
        ("datasheet-tvm-30-h2-en", "datasheet-tvm-30-h2-en.pdf"),
        ("datenblatt-tvs-45", "datenblatt-tvs-45.pdf"),
    ]
    assert turn.warnings[-1] == (
        "file_search call call_1_1_2d928441 got no attachment: its sources are unknown"
    )


def test_file_id_map_gives_the_gold_ids_back(server: Server) -> None:
    turn = converse(server, "stream_file_search", file_id_map=gold_ids())

    assert [item.file_id for item in turn.evidence] == [
        "datasheet-tvk-110-en",
        "datasheet-tvk-110-en",
        "datasheet-tvk-220-en",
        "certificate-ped-tvk-series-en",
        "datasheet-tvk-220-en",
        "datasheet-tvs-75-en",
        "operating-manual-tvs-75-en",
        "datasheet-tvm-30-h2-en",
        "datasheet-tvm-30-h2-en",
    ]
    assert [c.file_id for c in turn.citations] == [
        "datasheet-tvk-110-en",
        "certificate-ped-tvk-series-en",
    ]
    assert turn.evidence[0].metadata["fileId"] == TVK110_EN  # LibreChat's id kept as sent


def test_streamed_german_answer_citations_resolved_by_content(server: Server) -> None:
    turn = converse(server, "stream_file_search_de")

    assert turn.error is None
    assert turn.answer == content_of("stream_file_search_de")
    tvk110 = "b4731fb3-8968-4cf3-b8e9-30326ddc3a5e"
    bulletin = "0e88a3b1-8042-4257-8b7c-68d81b5fa215"
    assert [(item.rank, item.file_id, item.filename, item.page) for item in turn.evidence] == [
        (1, tvk110, "datenblatt-tvk-110.pdf", 2),
        (2, bulletin, "technisches-bulletin-tb-2025-07.docx", None),
        (3, tvk110, "datenblatt-tvk-110.pdf", None),
        (
            4,
            "a740cfc3-036a-48ba-bbac-cb6009393ffc",
            "broschuere-schraubenverdichter-2023.pdf",
            None,
        ),
        (5, "3e76f0bc-ab1f-425d-8340-9e74876d3677", "datenblatt-tvk-220.pdf", None),
    ]
    # the indexes name the tool's top-10 list, which here has the attachment's order
    assert [(c.marker, c.filename, c.page) for c in turn.citations] == [
        ("\\ue202turn0file1", "technisches-bulletin-tb-2025-07.docx", None),
        ("\\ue202turn0file2", "datenblatt-tvk-110.pdf", None),
        ("\\ue202turn0file0", "datenblatt-tvk-110.pdf", 2),
        ("\\ue202turn0file0", "datenblatt-tvk-110.pdf", 2),
    ]
    for citation in turn.citations:
        assert citation.content in [item.text for item in turn.evidence]
    assert "Tabelle 1 – Betriebsdruck und Liefermenge TVK 110" in (turn.citations[1].content or "")
    assert "Tabelle 2 – Abmessungen TVK 110" in (turn.citations[2].content or "")


def test_streamed_french_answer_over_a_docx(server: Server) -> None:
    turn = converse(server, "stream_file_search_fr", file_id_map=gold_ids())

    assert turn.error is None
    assert turn.answer.endswith(
        "préavis de 90 jours avant l'échéance, notifié par lettre "
        "recommandée avec accusé de réception \\ue202turn0file0."
    )
    assert [(item.file_id, item.filename, item.page) for item in turn.evidence] == [
        ("contrat-cadre-meridia", "contrat-cadre-meridia.docx", None)  # a DOCX has no page
    ]
    (citation,) = turn.citations
    assert (citation.file_id, citation.filename) == (
        "contrat-cadre-meridia",
        "contrat-cadre-meridia.docx",
    )
    assert "préavis de 90 jours" in (citation.content or "")


@pytest.mark.parametrize("name", ["stream_attachment_lost", "stream_identity"])
def test_a_stream_whose_attachment_never_came(server: Server, name: str) -> None:
    """LibreChat ends the stream before its citation processing is done: no attachment
    frame, so no evidence, citations that cannot be resolved, and a warning naming the call."""
    assert attachments(name) == []
    turn = converse(server, name)

    assert turn.error is None
    assert turn.answer == content_of("stream_file_search")  # the same answer as with one
    assert turn.evidence == []
    assert [(c.marker, c.file_id, c.filename, c.content) for c in turn.citations] == [
        ("\\ue202turn0file0", None, None, None),
        ("\\ue202turn0file3", None, None, None),
    ]
    assert turn.tool_calls == [
        ToolCall(id="call_1_0_ed747d71", name="file_search", arguments={"query": QUESTION})
    ]
    assert turn.warnings == [
        "LibreChat reported 0 tokens everywhere (its model reported no usage)",
        "file_search call call_1_0_ed747d71 got no attachment: its sources are unknown",
    ]


@pytest.mark.parametrize("name", ["error_file_gone_stream", "error_no_files_stream"])
def test_an_agent_whose_file_cannot_be_read_answers_without_an_error(
    server: Server, name: str
) -> None:
    """The tool tells the model "No content found in the files" (file deleted from rag_api)
    or "No files to search": the API reports no error, sends no attachment, and the model
    answers as it will (here: the demo's refusal)."""
    turn = converse(server, name)

    assert turn.error is None
    assert turn.answer == "This information is not in the documents."
    assert turn.evidence == []
    assert turn.citations == []
    assert [call.result for call in turn.tool_calls] == [None]
    assert turn.warnings[-1] == (
        "file_search call call_1_0_ed747d71 got no attachment: its sources are unknown"
    )


# ---------------------------------------------------------------------------------------
# Non-streamed


def test_non_streamed_answer_key_for_key(server: Server) -> None:
    turn = converse(server, "nonstream_file_search")

    body = recording("nonstream_file_search")["body"]
    assert body["object"] == "chat.completion"
    assert turn.error is None
    assert turn.answer == body["choices"][0]["message"]["content"]
    assert turn.answer == content_of("stream_file_search")
    assert turn.finish_reason == "stop"
    assert turn.usage == {}
    # the executed call comes back with empty arguments and no result; no sources at all
    assert body["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"] == ""
    assert turn.tool_calls == [ToolCall(id="call_1_0_ed747d71", name="file_search", arguments={})]
    assert turn.evidence == []
    assert turn.citations == []
    assert turn.warnings == ["LibreChat reported 0 tokens everywhere (its model reported no usage)"]


# ---------------------------------------------------------------------------------------
# Errors


@pytest.mark.parametrize(
    ("name", "status", "message"),
    [
        ("error_bad_key", 401, "Invalid API key"),
        ("error_bad_key_stream", 401, "Invalid API key"),
        ("error_unknown_agent", 404, "Agent not found: agent_doesnotexist000000"),
        ("error_unknown_agent_stream", 404, "Agent not found: agent_doesnotexist000000"),
        ("error_model_500", 500, "500 upstream model failed (recording trigger)"),
    ],
)
def test_errors_answered_before_the_stream(
    server: Server, name: str, status: int, message: str
) -> None:
    assert recording(name)["body"]["error"]["message"] == message
    turn = converse(server, name)

    assert turn.error is not None
    assert turn.error.kind == "http_status"
    assert turn.error.status_code == status
    assert message in turn.error.message
    assert turn.answer == ""
    assert turn.tool_calls == []


def test_a_request_without_a_key_is_refused_as_recorded(server: Server) -> None:
    turn = converse(server, "error_no_key", api_key_env=None)

    assert turn.error is not None
    assert (turn.error.kind, turn.error.status_code) == ("http_status", 401)
    assert "Missing or invalid Authorization header" in turn.error.message


def test_an_empty_message_list_is_a_400() -> None:
    recorded = recording("error_empty_messages")
    assert recorded["status_code"] == 400
    assert recorded["body"]["error"]["message"] == "messages array cannot be empty"


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("error_model_cut_stream", "terminated"),
        ("error_model_500_stream", "500 upstream model failed (recording trigger)"),
    ],
)
def test_a_model_failure_after_the_stream_started(server: Server, name: str, message: str) -> None:
    """The error arrives as a content chunk "\\n\\nError: ..." with finish_reason "stop",
    then [DONE]: the turn's error, never answer text."""
    assert content_of(name) == f"\n\nError: {message}"
    turn = converse(server, name)

    assert turn.error is not None
    assert turn.error.kind == "http_status"
    assert turn.error.message.endswith(f"LibreChat reported an error mid-answer: {message}")
    assert turn.answer == ""


def test_a_stream_cut_after_three_events(server: Server) -> None:
    """What had arrived when the connection closed: the role chunk, the call's opening and
    its first argument slice."""
    turn = converse(server, "stream_client_cut")

    assert turn.error is not None
    assert turn.error.kind == "transport"
    assert "stream broken" in turn.error.message
    assert turn.answer == ""
    assert turn.tool_calls == [
        ToolCall(
            id="call_1_0_ed747d71",
            name="file_search",
            arguments={"_unparsed": '{"query": "What is the maximum op'},
        )
    ]


def test_the_models_listing_names_the_agents() -> None:
    recorded = recording("models")
    assert recorded["status_code"] == 200
    listed = [model["id"] for model in recorded["body"]["data"]]
    assert listed == [agent["agent_id"] for agent in manifest()["agents"].values()]
    assert recording("models_bad_key")["status_code"] == 401


def test_markdown_and_xlsx_uploads_failed_as_rag_api_did() -> None:
    failed = sorted(
        Path(entry["corpus_path"]).suffix
        for entry in manifest()["files"]
        if entry["upload_status_code"] != 200
    )
    assert failed == [".md"] * 7 + [".xlsx"] * 3
    assert recording("upload_markdown_error")["body"] == {"message": "Error processing file"}
    assert len(gold_ids()) == 26


# ---------------------------------------------------------------------------------------
# The demo as LibreChat's model and as a LibreChat-shaped stream


def model_request(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(
        (FIXTURES / "model_requests" / f"{name}.json").read_text(encoding="utf-8")
    )
    return data["request"]["body"]


def test_the_demo_model_reads_librechats_real_file_search_result() -> None:
    """What LibreChat sent its model after the search (offered tools, the tool message with
    File / Anchor / Relevance / Content blocks): the demo answers from it, citing with the
    anchors the result gave, exactly as the recorded answer did."""
    body = model_request("file_search_results")
    assert [tool["function"]["name"] for tool in body["tools"]] == ["file_search"]
    message = demo_model.answer(body["messages"], body["tools"], "v2")
    assert message == {"role": "assistant", "content": content_of("stream_file_search")}


@pytest.mark.parametrize("name", ["file_gone", "no_files"])
def test_the_demo_model_refuses_on_librechats_empty_results(name: str) -> None:
    body = model_request(name)
    message = demo_model.answer(body["messages"], body["tools"], "v2")
    assert message == {"role": "assistant", "content": "This information is not in the documents."}


def test_the_demo_model_calls_file_search_when_librechat_offers_it() -> None:
    body = model_request("file_search_results")
    first_turn = [m for m in body["messages"] if m["role"] in ("system", "user")]
    message = demo_model.answer(first_turn, body["tools"], "v2")
    recorded_call = body["messages"][2]["tool_calls"][0]
    (call,) = message["tool_calls"]
    assert (call["id"], call["function"]["name"]) == (
        recorded_call["id"],
        recorded_call["function"]["name"],
    )
    assert json.loads(call["function"]["arguments"]) == json.loads(
        recorded_call["function"]["arguments"]
    )


# ---------------------------------------------------------------------------------------
# Preflight against the recorded model routes


@pytest.mark.parametrize(
    ("agent_answer", "stops"),
    [
        ("model_agent", []),
        (
            "model_unknown_agent",
            [
                "answered 404: the service has no such model (agent id); every run would fail "
                "the same way"
            ],
        ),
    ],
)
def test_preflight_asks_librechat_for_the_agent(
    server: Server, agent_answer: str, stops: list[str]
) -> None:
    from pytest_ragv2.config.settings import SystemSettings
    from pytest_ragv2.run.preflight import run_preflight

    agent = "agent_Jr0BY6B_8hHyfelJWCTOS"
    server.answer_path("/api/agents/v1/models", replay("models"))
    server.answer_path(f"/api/agents/v1/models/{agent}", replay(agent_answer))
    chat = LibreChatAgentsConfig(
        adapter="librechat-agents", url=server.url, agent_id=agent, api_key_env=KEY_ENV
    )
    report = run_preflight({"lc": SystemSettings(role="candidate", chat=chat)}, "B", [])

    assert [seen.path for seen in server.seen] == [
        "/api/agents/v1/models",
        f"/api/agents/v1/models/{agent}",
    ]
    route = f"GET {server.url}/api/agents/v1/models/{agent}"
    assert [(f.severity, f.message) for f in report.findings] == [
        ("stop", f"{route} {text}") for text in stops
    ]


def test_preflight_stops_on_a_refused_key_before_asking_for_the_agent(server: Server) -> None:
    from pytest_ragv2.config.settings import SystemSettings
    from pytest_ragv2.run.preflight import run_preflight

    server.answer_path("/api/agents/v1/models", replay("models_bad_key"))
    chat = LibreChatAgentsConfig(
        adapter="librechat-agents", url=server.url, agent_id="agent_x", api_key_env=KEY_ENV
    )
    report = run_preflight({"lc": SystemSettings(role="candidate", chat=chat)}, "B", [])

    assert [seen.path for seen in server.seen] == ["/api/agents/v1/models"]
    (stop,) = report.stops
    assert "refused the credentials: HTTP 401" in stop.message
