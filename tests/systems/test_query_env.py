"""query_env: secret query parameters from the environment, sent and never recorded."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from dataclasses import asdict
from typing import Any

import pytest

from pytest_ragv2.config.settings import SystemSettings
from pytest_ragv2.systems.query_env import redact_query
from pytest_ragv2.systems.registry import build_chat, build_retriever
from tests.artifacts import artifact_text
from tests.conftest import pyproject
from tests.scripted_server import Reply, Seen, Server, serve

VARIABLE = "RAGV2_TEST_QUERY_SECRET"
# a parameter name no credential pattern knows: only query_env makes it a secret
PARAMETER = "tenant"
SECRET = "q7-Zt9kPw2"
ITEM = {"text": f"max 16 bar (asked with {SECRET})", "file_id": "datasheet", "page": 2}
COMPLETION = {
    "choices": [{"message": {"role": "assistant", "content": "16 bar"}, "finish_reason": "stop"}],
}


def _answer(seen: Seen) -> Reply:
    if seen.path.endswith("/query_multiple"):
        document = {"page_content": f"echo {SECRET}", "metadata": {"file_id": "datasheet"}}
        return Reply(body=[[document, 0.1]])
    if seen.path.endswith("/chat/completions"):
        return Reply(body=COMPLETION)
    if seen.path.endswith("/chat"):
        return Reply(body={"answer": f"16 bar, {SECRET}"})
    return Reply(body=[ITEM])


@pytest.fixture
def server() -> Iterator[Server]:
    with serve() as running:
        running.responder = _answer
        yield running


@pytest.fixture
def secret(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv(VARIABLE, SECRET)
    return SECRET


RETRIEVAL = {
    "http-json": {"adapter": "http-json", "url": "{url}/search"},
    "http-json GET": {"adapter": "http-json", "url": "{url}/search?fixed=1", "method": "GET"},
    "rag-api": {"adapter": "rag-api", "url": "{url}", "file_ids": ["datasheet"]},
}
CHAT = {
    "openai-chat": {"adapter": "openai-chat", "url": "{url}/v1", "model": "m"},
    "librechat-agents": {
        "adapter": "librechat-agents",
        "url": "{url}",
        "agent_id": "agent_1",
        "stream": False,
    },
    "http-json-chat": {"adapter": "http-json-chat", "url": "{url}/chat", "answer_path": "answer"},
}


def _config(template: dict[str, Any], url: str) -> dict[str, Any]:
    config = {
        key: value.format(url=url) if key == "url" else value for key, value in template.items()
    }
    return {**config, "query_env": {PARAMETER: VARIABLE}, "retry": {"attempts": 1}}


def _recorded(value: Any) -> str:
    return json.dumps(asdict(value), default=str)


@pytest.mark.parametrize("adapter", RETRIEVAL)
def test_retrieval_adapters_send_the_parameter_and_record_no_value(
    server: Server, secret: str, adapter: str
) -> None:
    system = SystemSettings.model_validate(
        {"role": "candidate", "retrieval": _config(RETRIEVAL[adapter], server.url)}
    )
    assert system.retrieval is not None
    retriever = build_retriever("s", system.retrieval, file_ids=["datasheet"])
    try:
        result = retriever.retrieve("pressure", 5)
    finally:
        retriever.close()
    assert result.error is None, result.error
    (seen,) = server.seen
    assert seen.query[PARAMETER] == [secret]
    if adapter == "http-json GET":
        assert seen.query["fixed"] == ["1"]
        assert seen.query["query"] == ["pressure"]
    recorded = _recorded(result)
    assert secret not in recorded
    assert result.exchanges[0].request["query"] == {PARAMETER: "<redacted>"}
    assert "<redacted>" in result.items[0].text  # the echo is scrubbed too


@pytest.mark.parametrize("adapter", CHAT)
def test_chat_adapters_send_the_parameter_and_record_no_value(
    server: Server, secret: str, adapter: str
) -> None:
    system = SystemSettings.model_validate(
        {"role": "candidate", "chat": _config(CHAT[adapter], server.url)}
    )
    assert system.chat is not None
    chat = build_chat("s", system.chat, retriever=lambda: None)
    try:
        transcript = chat.converse(["How much pressure?"])
    finally:
        chat.close()
    (turn,) = transcript.turns
    assert turn.error is None, turn.error
    (seen,) = server.seen
    assert seen.query[PARAMETER] == [secret]
    assert secret not in _recorded(transcript)
    assert turn.exchanges[0].request["query"] == {PARAMETER: "<redacted>"}


def test_a_missing_variable_is_the_runs_error_naming_it(
    server: Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(VARIABLE, raising=False)
    system = SystemSettings.model_validate(
        {"role": "candidate", "retrieval": _config(RETRIEVAL["http-json"], server.url)}
    )
    assert system.retrieval is not None
    retriever = build_retriever("s", system.retrieval, file_ids=[])
    result = retriever.retrieve("pressure", 5)
    assert result.error is not None
    assert result.error.kind == "adapter"
    assert f"{VARIABLE} (query parameter {PARAMETER})" in result.error.message
    assert server.seen == []


def test_the_httpx_log_line_shows_no_value(
    server: Server, secret: str, caplog: pytest.LogCaptureFixture
) -> None:
    system = SystemSettings.model_validate(
        {"role": "candidate", "retrieval": _config(RETRIEVAL["http-json"], server.url)}
    )
    assert system.retrieval is not None
    retriever = build_retriever("s", system.retrieval, file_ids=[])
    with caplog.at_level(logging.INFO, logger="httpx"):
        assert retriever.retrieve("pressure", 5).error is None
    retriever.close()
    logged = [record.getMessage() for record in caplog.records if record.name == "httpx"]
    assert any(f"{PARAMETER}=<redacted>" in line for line in logged), logged
    assert not any(secret in line for line in logged)


def test_redact_query_keeps_other_parameters() -> None:
    url = "http://h/p?a=1&tenant=x%2By&b=&tenant"
    assert redact_query(url, {"tenant"}) == "http://h/p?a=1&tenant=<redacted>&b=&tenant"


def test_a_session_leaves_no_trace_of_the_value(
    project: pytest.Pytester, server: Server, secret: str
) -> None:
    text = pyproject().replace(
        'retrieval = {adapter = "python", callable = "ragsystems:good"}',
        f'retrieval = {{adapter = "http-json", url = "{server.url}/search", '
        f'query_env = {{{PARAMETER} = "{VARIABLE}"}}}}',
    )
    (project.path / "pyproject.toml").write_text(text)
    result = project.runpytest(
        "--ragv2-layer=A",
        "--ragv2-run-id=q",
        "--junitxml=junit.xml",
        "-o",
        "log_cli=true",
        "--log-cli-level=INFO",
        "-rA",
    )
    assert result.ret in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED)
    assert server.seen
    assert all(seen.query[PARAMETER] == [secret] for seen in server.seen)
    written = [
        path
        for folder in ("raw-runs", "reports")
        for path in (project.path / folder).rglob("*")
        if path.is_file()
    ] + [project.path / "junit.xml"]
    assert any(path.name == "summary.json" for path in written)
    raw = (project.path / "raw-runs" / "q").glob("runs-*")
    assert "<redacted>" in "".join(artifact_text(path) for path in raw)
    output = result.stdout.str() + result.stderr.str()
    assert f"{PARAMETER}=<redacted>" in output  # httpx's log lines were printed, redacted
    for text_of in [
        output,
        *(artifact_text(path) for path in written),
    ]:
        assert secret not in text_of


def test_preflight_stops_on_a_missing_variable(
    project: pytest.Pytester, server: Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(VARIABLE, raising=False)
    text = pyproject().replace(
        'retrieval = {adapter = "python", callable = "ragsystems:good"}',
        f'retrieval = {{adapter = "http-json", url = "{server.url}/search", '
        f'query_env = {{{PARAMETER} = "{VARIABLE}"}}}}',
    )
    (project.path / "pyproject.toml").write_text(text)
    result = project.runpytest("--ragv2-layer=A")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    expected = f"environment variable {VARIABLE} (retrieval.query_env['{PARAMETER}']) is not set"
    assert expected in result.stderr.str()
    assert server.seen == []
