"""A comparison needs both sides: no broken baseline lets a candidate be promoted.

The same candidate over the same cases must never pass because its baseline is down, answers
an error to every call, or is configured so that it cannot make a single call. Each variant
is a real session; a baseline that cannot run by configuration is a usage error at start
(exit 4), one that runs and fails fails the comparison gates (exit 1).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler

import pytest

from tests.conftest import pyproject, serving
from tests.layers.test_layer_b import chat_pyproject
from tests.plugin.test_plugin import gate, summary_of

RUN_ID = "--ragv2-run-id=testrun"
GOOD_BASELINE = 'retrieval = {adapter = "python", callable = "ragsystems:weak"}'


def with_baseline(retrieval: str) -> str:
    """The project's configuration with the baseline's retrieval replaced."""
    text = pyproject(baseline="weak", candidate="good")
    assert GOOD_BASELINE in text
    return text.replace(GOOD_BASELINE, retrieval, 1)


class _Unavailable(BaseHTTPRequestHandler):
    """Every request answered 503, as a service whose backend is down does."""

    def _answer(self) -> None:
        body = json.dumps({"detail": "Service Unavailable"}).encode()
        self.send_response(503)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = _answer

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def unavailable_url() -> Iterator[str]:
    with serving(_Unavailable) as url:
        yield url


def test_the_control_a_working_baseline_as_good_as_the_candidate_fails_the_session(
    project: pytest.Pytester,
) -> None:
    """What the broken variants are measured against: a baseline that answers like the
    candidate leaves no improvement, so the session fails on recall_improvement."""
    (project.path / "pyproject.toml").write_text(pyproject(baseline="good", candidate="good"))
    result = project.runpytest("--ragv2-layer=A", RUN_ID)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert gate(summary_of(project), "recall_improvement")["decision"] == "fail"


@pytest.mark.parametrize(
    "where",
    ["http://127.0.0.1:9", "unavailable"],
    ids=["refuses-connections", "answers-503"],
)
def test_a_baseline_that_fails_every_call_fails_every_comparison(
    project: pytest.Pytester, unavailable_url: str, where: str
) -> None:
    url = unavailable_url if where == "unavailable" else where
    retrieval = (
        f'retrieval = {{adapter = "rag-api", url = "{url}", timeout_s = 2, '
        "retry = {attempts = 2, backoff_s = 0}}"
    )
    (project.path / "pyproject.toml").write_text(with_baseline(retrieval))
    result = project.runpytest("--ragv2-layer=A", RUN_ID, "--ragv2-no-preflight")
    assert result.ret == pytest.ExitCode.TESTS_FAILED, result.stdout.str()
    assert "verdict: FAIL" in result.stdout.str()
    assert "Traceback" not in result.stdout.str()
    summary = summary_of(project)
    for name in ("recall_improvement", "category_regression"):
        found = gate(summary, name)
        assert found["decision"] == "fail"
        assert found["reason"].startswith("the baseline v1 has no successful run: all 5 runs")
    errors = gate(summary, "error_rate")
    assert errors["decision"] == "fail"
    assert "v1: 5 of 5 runs failed" in errors["reason"]
    assert "v2: 0 of 5 runs failed" in errors["reason"]
    returned = gate(summary, "results_returned")
    assert returned["decision"] == "fail"
    assert "v1: all 5 runs failed" in returned["reason"]


@pytest.mark.parametrize(
    ("retrieval", "message"),
    [
        (
            'retrieval = {adapter = "python", callable = "no_such_module:good"}',
            "systems.v1.retrieval.callable: no_such_module:good cannot be imported",
        ),
        (
            'retrieval = {adapter = "python", callable = "ragsystems:no_such_function"}',
            "ragsystems has no attribute no_such_function",
        ),
        (
            'retrieval = {adapter = "rag-api", url = "not a url"}',
            "systems.v1.retrieval.url",
        ),
        ('retrieval = {adapter = "rag-api", url = "file:///etc/passwd"}', "http or https"),
        ('retrieval = {adapter = "rag-api", url = "http://[::1"}', "systems.v1.retrieval.url"),
        (
            'retrieval = {adapter = "rag-api", url = "http://[zz::1]:8000"}',
            "systems.v1.retrieval.url",
        ),
        (
            'retrieval = {adapter = "rag-api", url = "http://127.0.0.1:9", timeout_s = inf}',
            "systems.v1.retrieval.timeout_s",
        ),
        (
            'retrieval = {adapter = "rag-api", url = "http://127.0.0.1:9", timeout_s = nan}',
            "systems.v1.retrieval.timeout_s",
        ),
        (
            'retrieval = {adapter = "rag-api", url = "http://127.0.0.1:9", '
            "retry = {attempts = 1e9}}",
            "systems.v1.retrieval.retry.attempts",
        ),
        (
            'retrieval = {adapter = "http-json", url = "http://127.0.0.1:9", '
            "retry = {backoff_s = inf}}",
            "systems.v1.retrieval.retry.backoff_s",
        ),
        (
            'retrieval = {adapter = "http-json", url = "http://127.0.0.1:9", '
            "max_response_mb = inf}",
            "systems.v1.retrieval.max_response_mb",
        ),
    ],
    ids=[
        "missing-module",
        "missing-function",
        "not-a-url",
        "file-url",
        "unclosed-ipv6",
        "bad-ipv6",
        "infinite-timeout",
        "nan-timeout",
        "a-billion-attempts",
        "infinite-backoff",
        "infinite-response-size",
    ],
)
def test_a_baseline_that_cannot_make_a_call_is_a_usage_error_at_start(
    project: pytest.Pytester, retrieval: str, message: str
) -> None:
    (project.path / "pyproject.toml").write_text(with_baseline(retrieval))
    result = project.runpytest("--ragv2-layer=A", RUN_ID)
    assert result.ret == pytest.ExitCode.USAGE_ERROR, result.stdout.str()
    err = result.stderr.str()
    assert message in err, err
    assert "Traceback" not in err + result.stdout.str()
    assert not (project.path / "raw-runs" / "testrun").exists()


def test_a_deselected_broken_system_does_not_stop_the_session(project: pytest.Pytester) -> None:
    """Only the systems a session runs are checked at start: one left out with
    --ragv2-systems is not called, so its configuration cannot fail this session's calls."""
    broken = 'retrieval = {adapter = "python", callable = "no_such_module:good"}'
    (project.path / "pyproject.toml").write_text(with_baseline(broken))
    result = project.runpytest("--ragv2-layer=A", RUN_ID, "--ragv2-systems=v2")
    assert result.ret == pytest.ExitCode.TESTS_FAILED  # the baseline was not run
    assert "not run" in gate(summary_of(project), "recall_improvement")["reason"]


def test_a_dead_baseline_at_layer_b_fails_the_session(project: pytest.Pytester) -> None:
    from tests.layers.test_layer_b import CHAT_CASES, CHATBOT

    (project.path / "chatbot.py").write_text(CHATBOT)
    (project.path / "cases" / "development.yaml").write_text(CHAT_CASES)
    text = chat_pyproject()
    argv = json.dumps([sys.executable, "chatbot.py", "good", "{prompt}"])
    good = f'chat = {{adapter = "command", argv = {argv}, timeout_s = 30}}'
    assert text.count(good) == 2
    dead = (
        'chat = {adapter = "openai-chat", url = "http://127.0.0.1:9/v1", model = "m", '
        "timeout_s = 2, retry = {attempts = 1}}"
    )
    (project.path / "pyproject.toml").write_text(text.replace(good, dead, 1))
    result = project.runpytest("--ragv2-layer=B", "--ragv2-run-id=chatrun")
    assert result.ret == pytest.ExitCode.TESTS_FAILED, result.stdout.str()
    summary = summary_of(project, "chatrun")
    wins = gate(summary, "case_wins")
    assert wins["decision"] == "fail"
    assert wins["reason"].startswith("the baseline v1 has no successful run")
    errors = gate(summary, "error_rate")
    assert errors["decision"] == "fail"
    assert "v1: 5 of 5 conversations failed" in errors["reason"]
