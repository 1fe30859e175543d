"""Preflight: a misconfigured system is stopped at start with a located message, before any run."""

from __future__ import annotations

import json
import textwrap
from collections.abc import Iterator

import pytest

from pytest_ragv2.config.settings import SystemSettings
from pytest_ragv2.run.preflight import run_preflight
from pytest_ragv2.systems.command import CommandConfig
from pytest_ragv2.systems.rag_api import RagApiRetrieval
from ragv2_demo.chunks import Chunk
from ragv2_demo.engine import DemoIndex
from ragv2_demo.server import DemoServer

SECRET = "preflight-test-secret-0123456789abcdef0123456789"
OWNER = "owner-1"
CHUNKS = [
    Chunk("datasheet#0", "datasheet", "datasheet.pdf", "max 16 bar at 20 °C", page=2),
    Chunk("manual#0", "manual", "manual.docx", "3 Safety: wear ear protection"),
    Chunk("parts#0", "parts", "parts.xlsx", "NX-450B seal kit 4"),
    Chunk("noise#0", "noise", "noise.md", "noise"),
]
ALLOWED = ["datasheet", "manual", "parts", "noise"]


@pytest.fixture(autouse=True)
def secret(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PF_SECRET", SECRET)


@pytest.fixture(scope="module")
def rag_api() -> Iterator[DemoServer]:
    index = DemoIndex.from_chunks(CHUNKS, CHUNKS)
    with DemoServer(index, jwt_secret=SECRET, owner=OWNER) as server:
        yield server


def system(url: str, **retrieval: object) -> SystemSettings:
    config = {"adapter": "rag-api", "url": url, "jwt_secret_env": "PF_SECRET", **retrieval}
    return SystemSettings(role="baseline", retrieval=RagApiRetrieval.model_validate(config))


def test_a_healthy_rag_api_passes_and_its_stored_chunks_are_kept(rag_api: DemoServer) -> None:
    report = run_preflight({"v1": system(f"{rag_api.url}/v1", jwt_user_id=OWNER)}, "A", ALLOWED)
    assert report.findings == []
    stored = report.stored_chunks["v1"]
    assert {item.file_id for item in stored} == set(ALLOWED)
    assert {item.filename for item in stored} == {c.filename for c in CHUNKS}
    assert next(item.page for item in stored if item.file_id == "datasheet") == 2


def test_an_unset_secret_variable_stops_the_run_naming_it(
    rag_api: DemoServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("PF_SECRET")
    report = run_preflight({"v1": system(f"{rag_api.url}/v1")}, "A", ALLOWED)
    (stop,) = report.stops
    assert str(stop) == (
        "system v1: environment variable PF_SECRET (retrieval.jwt_secret_env) is not set"
    )


def test_a_wrong_secret_stops_the_run_with_the_services_reason(
    rag_api: DemoServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PF_SECRET", "wrong" * 8)
    report = run_preflight({"v1": system(f"{rag_api.url}/v1")}, "A", ALLOWED)
    (stop,) = report.stops
    assert "GET /ids refused the credentials: HTTP 401" in stop.message
    assert "Signature verification failed" in stop.message


def test_unindexed_file_ids_stop_the_run_and_are_named(rag_api: DemoServer) -> None:
    report = run_preflight(
        {"v1": system(f"{rag_api.url}/v1")}, "A", [*ALLOWED, "datasheet-2027", "price-list"]
    )
    (stop,) = report.stops
    assert stop.message.startswith("2 of 6 queried file ids are not indexed")
    assert stop.message.endswith("datasheet-2027, price-list")


def test_query_with_a_user_who_owns_no_file_is_stopped(rag_api: DemoServer) -> None:
    # rag_api's /query answers [] to anyone but the owner: recall 0 and no error otherwise
    report = run_preflight(
        {"v1": system(f"{rag_api.url}/v1", endpoint="query", jwt_user_id="someone-else")},
        "A",
        ALLOWED,
    )
    (stop,) = report.stops
    assert "the queried files belong to owner-1" in stop.message
    owned = run_preflight(
        {"v1": system(f"{rag_api.url}/v1", endpoint="query", jwt_user_id=OWNER)}, "A", ALLOWED
    )
    assert owned.stops == []


def test_an_unreachable_system_is_a_warning_its_runs_record_the_errors() -> None:
    report = run_preflight({"v1": system("http://127.0.0.1:9")}, "A", ALLOWED)
    assert report.stops == []
    (warning,) = report.warnings
    assert "did not answer (transport)" in warning.message
    assert "ConnectError" in warning.message


def test_a_command_system_whose_program_is_missing_is_stopped() -> None:
    chat = CommandConfig(adapter="command", argv=["no-such-codex-binary", "{prompt}"])
    report = run_preflight({"ref": SystemSettings(role="reference", chat=chat)}, "B", ALLOWED)
    (stop,) = report.stops
    assert stop.message == "chat.argv: program 'no-such-codex-binary' is not found on PATH"


def _configure(project: pytest.Pytester, url: str) -> None:
    project.makefile(
        ".toml",
        pyproject=textwrap.dedent(
            f"""\
            [tool.pytest.ini_options]
            pythonpath = ["."]

            [tool.ragv2.systems.v1]
            role = "baseline"
            retrieval = {{adapter = "rag-api", url = "{url}", jwt_secret_env = "PF_SECRET", \
            jwt_user_id = "{OWNER}"}}

            [tool.ragv2.systems.v2]
            role = "candidate"
            retrieval = {{adapter = "python", callable = "ragsystems:good"}}
            """
        ),
    )


def test_a_session_with_an_unset_secret_exits_4_before_any_run(
    project: pytest.Pytester, rag_api: DemoServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    _configure(project, f"{rag_api.url}/v1")
    monkeypatch.delenv("PF_SECRET", raising=False)
    result = project.runpytest("--ragv2-layer=A", "--ragv2-run-id=pf")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [
            "*preflight: 1 problem(s) stop this run before its first item:*",
            "*system v1: environment variable PF_SECRET (retrieval.jwt_secret_env) is not set*",
        ]
    )
    assert not (project.path / "raw-runs" / "pf").exists()
    skipped = project.runpytest("--ragv2-layer=A", "--ragv2-run-id=np", "--ragv2-no-preflight")
    assert skipped.ret in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED)
    summary = json.loads((project.path / "reports" / "np" / "summary.json").read_text())
    baseline = summary["systems"]["v1"]
    assert baseline["errors"] == baseline["runs"] > 0  # every v1 run records the error
    assert baseline["error_kinds"] == {"adapter": baseline["runs"]}


def test_a_session_against_a_healthy_rag_api_runs(
    project: pytest.Pytester, rag_api: DemoServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    _configure(project, f"{rag_api.url}/v1")
    monkeypatch.setenv("PF_SECRET", SECRET)
    result = project.runpytest("--ragv2-layer=A", "--ragv2-run-id=ok")
    assert result.ret in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED)
    assert (project.path / "reports" / "ok" / "summary.json").is_file()


def test_a_service_up_but_failing_is_a_warning() -> None:
    import http.server
    import threading

    class Failing(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = b'{"detail": "database is down"}'
            self.send_response(500 if self.path.startswith("/ids") else 200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            return

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Failing)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}"
        report = run_preflight({"v1": system(url)}, "A", ALLOWED)
    finally:
        server.shutdown()
    assert report.stops == []
    (warning,) = report.warnings
    assert "GET /ids" in warning.message
    assert "answered HTTP 500" in warning.message


def test_a_chat_service_refusing_the_key_is_stopped_and_the_key_sent_is_the_named_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from pytest_ragv2.systems.openai_chat import OpenAIChatConfig
    from tests.scripted_server import Reply, serve

    monkeypatch.setenv("PF_CHAT_KEY", "sk-test-key")
    with serve("/v1") as server:
        server.answer_path("/v1/models", Reply(401, {"error": {"message": "bad key"}}))
        chat = OpenAIChatConfig(
            adapter="openai-chat", url=server.url, model="m", api_key_env="PF_CHAT_KEY"
        )
        report = run_preflight({"v2": SystemSettings(role="candidate", chat=chat)}, "B", [])
        (seen,) = server.seen
    (stop,) = report.stops
    assert stop.message.startswith(f"GET {server.url}/models refused the credentials: HTTP 401")
    assert seen.headers["authorization"] == "Bearer sk-test-key"
    assert "sk-test-key" not in str(report.findings)
