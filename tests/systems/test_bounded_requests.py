"""One bounded reader for every request, against real loopback servers.

- the whole-call deadline covers connecting, the response headers and the body: headers
  trickled a byte at a time end as ``timeout`` at ``timeout_s`` per try;
- the side routes (``/ids`` and ``/documents`` of the preflight, ``/models``, the
  ``/documents`` listing read for the ceiling at the session's end) are bounded as the
  system's own calls: a gzip bomb there keeps the session's process tree small, and a
  SIGTERM while the ceiling is read ends the session with exit status 2 and its reports;
- a stacked ``Content-Encoding: gzip, deflate`` is inflated layer by layer under the
  bound; a coding the harness did not ask for (br, zstd) is refused, never inflated;
- ``Retry-After`` is waited for up to ``retry.retry_after_max_s``, and a longer one is
  named in the run's error.
"""

from __future__ import annotations

import functools
import gzip
import json
import os
import signal
import subprocess
import sys
import time
import tracemalloc
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from pathlib import Path
from typing import Any

import pytest

from pytest_ragv2.systems.base import bounded_client
from pytest_ragv2.systems.call_deadline import keep_call_deadlines
from pytest_ragv2.systems.http_json import HttpJsonRetriever
from pytest_ragv2.systems.librechat_agents import LibreChatAgents, LibreChatAgentsConfig
from pytest_ragv2.systems.openai_chat import OpenAIChat, OpenAIChatConfig
from pytest_ragv2.systems.outputs import RunError
from pytest_ragv2.systems.rag_api import RagApiRetriever
from pytest_ragv2.systems.registry import parse_retrieval_config
from tests.fault_server import FaultServer, Reply, Request, gzip_bomb, serve
from tests.run.test_fault_injection import (
    ALLOWLIST,
    ANSWER,
    MEASURED,
    body_of,
    case,
    completion,
    environment,
    good,
    stacked_bomb,
)

MB = 1024 * 1024
TIMEOUT_S = 2.0
ATTEMPTS = 2
HEADER_GAP_S = 0.25  # a byte of the status line and headers every 0.25 s: ~40 s of them
PEAK_RSS_BOUND_MB = 300
SIDE_BOMB_BYTES = 512 * MB  # inflated; about 0.5 MB on the wire


# --------------------------------------------------------------------------------------------
# The adapters, each against the fault server
# --------------------------------------------------------------------------------------------

ADAPTERS = ["http-json", "rag-api", "openai-chat", "openai-chat-stream", "librechat-agents"]
STREAMED = {"openai-chat-stream", "librechat-agents"}


def _run(
    adapter: str, url: str, *, timeout_s: float = TIMEOUT_S, **bounds: Any
) -> tuple[RunError | None, Any]:
    """One call of ``adapter`` at ``url``: its error and what it returned."""
    common: dict[str, Any] = {
        "timeout_s": timeout_s,
        "retry": {"attempts": ATTEMPTS, "backoff_s": 0, **bounds.pop("retry", {})},
        **bounds,
    }
    if adapter == "http-json":
        config = parse_retrieval_config(
            {
                "adapter": "http-json",
                "url": f"{url}/hj/search",
                "items_path": "results",
                "fields": {"text": "text", "file_id": "file_id"},
                **common,
            }
        )
        retriever: Any = HttpJsonRetriever("hj", config, file_ids=["datasheet"])  # type: ignore[arg-type]
    elif adapter == "rag-api":
        config = parse_retrieval_config({"adapter": "rag-api", "url": f"{url}/ra", **common})
        retriever = RagApiRetriever("ra", config, file_ids=["datasheet"])  # type: ignore[arg-type]
    else:
        if adapter == "librechat-agents":
            chat: Any = LibreChatAgents(
                "lc",
                LibreChatAgentsConfig.model_validate(
                    {"adapter": adapter, "url": f"{url}/lc", "agent_id": "a", **common}
                ),
            )
        else:
            settings = {
                "adapter": "openai-chat",
                "url": f"{url}/{'ocs' if adapter in STREAMED else 'oc'}/v1",
                "model": "m",
                "stream": adapter in STREAMED,
                **common,
            }
            chat = OpenAIChat("oc", OpenAIChatConfig.model_validate(settings))
        try:
            transcript = chat.converse(["What is the maximum pressure?"])
        finally:
            chat.close()
        (turn,) = transcript.turns
        return turn.error, turn.answer
    try:
        result = retriever.retrieve("pressure", 3)
    finally:
        retriever.close()
    return result.error, result.items


def _tag(request: Request) -> str:
    return request.path.split("/")[1]


def _good_reply(request: Request, **changes: Any) -> Reply:
    """A well-formed answer of the adapter the path names, sent as ``changes`` say."""
    tag = _tag(request)
    if tag in ("ocs", "lc"):
        changes.setdefault("content_type", "text/event-stream")
    changes.setdefault("body", body_of(good(tag)))
    return Reply(**changes)


def test_every_client_keeps_the_call_deadline_at_the_socket() -> None:
    """The hook into httpcore's pool is in place (a later httpx that moved it fails here,
    not silently in a run)."""
    with bounded_client(1.0, "http://127.0.0.1:9") as client:
        assert keep_call_deadlines(client) >= 1
        assert client.headers["accept-encoding"] == "gzip, deflate"


@pytest.mark.parametrize("adapter", ADAPTERS)
def test_slow_headers_end_as_a_timeout_within_timeout_s_per_try(adapter: str) -> None:
    def route(request: Request) -> Reply:
        return _good_reply(request, mode="slow_headers", gap_s=HEADER_GAP_S)

    with serve(route) as server:
        error, _ = _run(adapter, server.url)
        tries = len(server.seen(lambda request: True))
    # the headers would take ~40 s: a timeout on each of the tries is each try's deadline
    assert error is not None
    assert error.kind == "timeout", error
    assert "the headers" in error.message  # the try's whole deadline, named
    assert tries == ATTEMPTS  # a timeout is retried


def test_a_body_trickled_after_quick_headers_ends_at_the_same_deadline() -> None:
    def route(request: Request) -> Reply:
        return _good_reply(request, mode="trickle", gap_s=0.5)  # fewer bytes than reads

    with serve(route) as server:
        error, _ = _run("http-json", server.url)
        tries = len(server.seen(lambda request: True))
    assert error is not None
    assert error.kind == "timeout"
    assert tries == 1  # a body cut at the deadline is not tried again


# --------------------------------------------------------------------------------------------
# Content encodings
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("adapter", ADAPTERS)
def test_a_stacked_gzip_deflate_bomb_stops_at_max_response_mb(adapter: str) -> None:
    streamed = adapter in STREAMED

    def route(request: Request) -> Reply:
        return _good_reply(request, body=stacked_bomb(streamed), encoding="gzip, deflate")

    stacked_bomb(streamed)  # built before the memory is traced
    with serve(route) as server:
        tracemalloc.start()
        try:
            error, _ = _run(adapter, server.url, max_response_mb=1)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    assert error is not None
    assert error.kind == "too_large", error  # not a timeout: stopped at the bound
    assert "after decompression" in error.message
    assert peak < 24 * MB  # a few 1 MB steps of each layer, never the 512 MB


@pytest.mark.parametrize("adapter", ["http-json", "openai-chat-stream"])
def test_a_stacked_encoding_within_the_bound_is_decoded_layer_by_layer(adapter: str) -> None:
    def route(request: Request) -> Reply:
        answer = body_of(good(_tag(request)))
        stacked = zlib.compress(gzip.compress(answer))  # gzip first, then deflate
        return _good_reply(request, body=stacked, encoding="gzip, deflate")

    with serve(route) as server:
        error, answer = _run(adapter, server.url)
        (sent,) = server.seen(lambda request: True)
    assert error is None
    if adapter in STREAMED:
        assert answer == ANSWER
    else:
        assert answer[0].text == ANSWER
    assert sent.headers["accept-encoding"] == "gzip, deflate"  # never br or zstd


def test_raw_deflate_without_its_zlib_header_is_read_as_httpx_reads_it() -> None:
    def route(request: Request) -> Reply:
        packer = zlib.compressobj(wbits=-zlib.MAX_WBITS)
        raw = packer.compress(body_of(good("hj"))) + packer.flush()
        return Reply(body=raw, encoding="deflate")

    with serve(route) as server:
        error, items = _run("http-json", server.url)
    assert error is None
    assert items[0].text == ANSWER


@pytest.mark.parametrize("coding", ["br", "zstd", "gzip, br"])
@pytest.mark.parametrize("adapter", ["http-json", "openai-chat-stream"])
def test_a_coding_not_asked_for_is_refused_not_inflated(adapter: str, coding: str) -> None:
    payload = b"\x00" * 64  # never looked at
    if coding == "zstd":
        zstandard = pytest.importorskip("zstandard")  # httpx would inflate it whole
        payload = zstandard.ZstdCompressor(level=19).compress(b"x" * (256 * MB))

    def route(request: Request) -> Reply:
        return _good_reply(request, body=payload, encoding=coding)

    with serve(route) as server:
        tracemalloc.start()
        try:
            error, _ = _run(adapter, server.url, max_response_mb=1)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    assert error is not None
    assert error.kind == "malformed", error
    assert f"Content-Encoding {coding}" in error.message
    assert "was not asked for (Accept-Encoding: gzip, deflate)" in error.message
    assert peak < 16 * MB


# --------------------------------------------------------------------------------------------
# Retry-After
# --------------------------------------------------------------------------------------------


def _busy_then_good(
    retry_after: str, status: int = 503
) -> tuple[Callable[..., Reply], list[float]]:
    """A router answering ``status`` with ``retry_after`` once, then a good answer; and the
    times the requests arrived."""
    arrived: list[float] = []

    def route(request: Request) -> Reply:
        arrived.append(time.monotonic())
        if len(arrived) == 1:
            return Reply(
                status=status, body=b'{"error": "busy"}', headers={"Retry-After": retry_after}
            )
        return _good_reply(request)

    return route, arrived


@pytest.mark.parametrize("form", ["seconds", "http-date"])
def test_a_retry_after_within_the_cap_is_waited_for(form: str) -> None:
    when = datetime.now(UTC) + timedelta(seconds=2)
    header = "1" if form == "seconds" else format_datetime(when, usegmt=True)
    route, arrived = _busy_then_good(header)
    with serve(route) as server:
        error, items = _run("http-json", server.url)
    assert error is None
    assert items[0].text == ANSWER
    assert len(arrived) == 2
    assert arrived[1] - arrived[0] >= 0.9  # not the backoff's 0 s


@pytest.mark.parametrize("adapter", ["http-json", "openai-chat"])
def test_a_retry_after_over_the_cap_is_named_in_the_error_and_not_waited_for(
    adapter: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    route, arrived = _busy_then_good("30", status=429)
    slept = _record_sleeps(monkeypatch)
    with serve(route) as server:
        error, _ = _run(adapter, server.url)
    assert error is not None
    assert error.kind == "http_status"
    assert error.status_code == 429
    assert "the server asked to wait 30 s before trying again (Retry-After: 30)" in error.message
    assert "longer than retry.retry_after_max_s = 10" in error.message
    assert len(arrived) == 1
    assert slept == []  # not waited for


def test_the_cap_is_the_retry_policys_own() -> None:
    route, arrived = _busy_then_good("2")
    with serve(route) as server:
        error, _ = _run("http-json", server.url, retry={"retry_after_max_s": 1})
    assert error is not None
    assert "longer than retry.retry_after_max_s = 1" in error.message
    assert len(arrived) == 1


def test_a_retry_after_past_the_conversations_deadline_is_named(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    route, arrived = _busy_then_good("5", status=429)
    slept = _record_sleeps(monkeypatch)
    with serve(route) as server:
        error, _ = _run("openai-chat", server.url, conversation_timeout_s=2)
    assert error is not None
    assert "Retry-After: 5" in error.message
    assert "past the conversation's deadline (conversation_timeout_s = 2)" in error.message
    assert len(arrived) == 1
    assert slept == []  # not waited for


def _record_sleeps(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The waits the retry loop asks for between tries (not made: a count, not a clock)."""
    import pytest_ragv2.systems.base as base

    slept: list[float] = []

    class Clock:  # the retry loop's own clock: every other thread still sleeps for real
        def sleep(self, seconds: float) -> None:
            slept.append(seconds)

        def __getattr__(self, name: str) -> Any:
            return getattr(time, name)

    monkeypatch.setattr(base, "time", Clock())
    return slept


# --------------------------------------------------------------------------------------------
# Side routes in real sessions
# --------------------------------------------------------------------------------------------


@functools.cache
def side_bomb() -> bytes:
    return gzip_bomb(SIDE_BOMB_BYTES, prefix=b'["', fill=b"x")


SYSTEMS = """\
[tool.ragv2]
repetitions = 1

[tool.ragv2.systems.ra]
role = "baseline"
retrieval = {{adapter = "rag-api", url = "{base}/ra", {bounds}}}

[tool.ragv2.systems.hj]
role = "candidate"
retrieval = {{adapter = "http-json", url = "{base}/hj/search", items_path = "results", \
fields = {{text = "text", file_id = "file_id", filename = "filename", page = "page"}}, \
documents_url = "{base}/hj/documents", {bounds}}}
"""
CHAT_SYSTEM = """
[tool.ragv2.systems.oc]
role = "reference"
chat = {{adapter = "openai-chat", model = "m", url = "{base}/oc/v1", stream = false, {bounds}}}
retrieval = {{adapter = "http-json", url = "{base}/kb/search", items_path = "results", \
fields = {{text = "text", file_id = "file_id", filename = "filename", page = "page"}}}}
"""


def _project(folder: Path, base: str, *, timeout_s: float = TIMEOUT_S, chat: bool) -> None:
    bounds = (
        f"timeout_s = {timeout_s:g}, max_response_mb = 1, retry = {{attempts = 2, backoff_s = 0}}"
    )
    config = SYSTEMS.format(base=base, bounds=bounds)
    if chat:
        config += CHAT_SYSTEM.format(base=base, bounds=bounds)
    (folder / "cases").mkdir(parents=True)
    (folder / "gold").mkdir()
    (folder / "gold" / "allowlist.yaml").write_text(ALLOWLIST)
    (folder / "pyproject.toml").write_text(config)
    (folder / "cases" / "cases.yaml").write_text(json.dumps([case("ok")], indent=1))


STORED = [{"page_content": "max 16 bar", "metadata": {"file_id": "datasheet", "page": 1}}]


def _side_router(bombed: str) -> Callable[[Request], Reply]:
    """Every route answers well but ``bombed`` (ids, documents or models): a gzip bomb."""

    def route(request: Request) -> Reply:
        path = request.path
        side = path.rsplit("/", 1)[-1]
        if side == bombed:
            return Reply(body=side_bomb(), gzip=True)
        if side == "ids":
            return Reply(body=b'["datasheet", "manual", "parts", "noise"]')
        if side == "documents":
            return Reply(body=json.dumps(STORED).encode())
        if side == "models":
            return Reply(body=b'{"data": []}')
        if path.startswith("/oc/"):
            return Reply(body=body_of(completion({"role": "assistant", "content": ANSWER})))
        tag = "ra" if path.startswith("/ra/") else "hj"
        return Reply(body=body_of(good(tag)))

    return route


def _session(
    folder: Path, layers: str, *extra: str, measured: bool = True
) -> subprocess.Popen[bytes]:
    """The session in its own process group; ``measured``: under the launcher that writes
    the peak RSS of its process tree (which a signal to the group would end too)."""
    argv = [
        sys.executable,
        "-m",
        "pytest",
        "-p",
        "no:cacheprovider",
        f"--ragv2-layer={layers}",
        "--ragv2-run-id=side",
        *extra,
    ]
    if measured:
        argv = [sys.executable, "-c", MEASURED, str(folder / "peak-rss-kb"), *argv]
    return subprocess.Popen(
        argv,
        cwd=folder,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=environment(),
        start_new_session=True,
    )


@dataclass
class Ended:
    """How a session ended: its exit status, what it printed, how long it took (from the
    signal, for an interrupted one) and its process tree's peak RSS (None: not measured)."""

    status: int
    text: str
    seconds: float
    peak_rss_mb: float | None
    requests: list[Request]  # the requests of the route under test


SIDE_ROUTES = {"ids": "A", "documents": "A", "models": "B"}


def bombed_side_route(folder: Path, bombed: str) -> Ended:
    """A session whose ``bombed`` route (ids, documents or models) answers a gzip bomb."""
    side_bomb()
    layers = SIDE_ROUTES[bombed]
    with serve(_side_router(bombed)) as server:
        _project(folder, server.url, chat=layers == "B")
        started = time.monotonic()
        session = _session(folder, layers, *(["--ragv2-systems=oc"] if layers == "B" else []))
        out, err = session.communicate(timeout=240)
        seconds = time.monotonic() - started
        asked = server.seen(lambda request: request.path.endswith(f"/{bombed}"))
    peak_mb = int((folder / "peak-rss-kb").read_text()) / 1024
    return Ended(session.returncode, out.decode() + err.decode(), seconds, peak_mb, asked)


def interrupted_ceiling_read(folder: Path, sent: signal.Signals) -> Ended:
    """A session sent ``sent`` (to its process group) while its ceiling's ``/documents``
    listing hangs (``timeout_s = 30``)."""
    with serve(_hang_documents) as server:
        _project(folder, server.url, timeout_s=30, chat=False)
        session = _session(folder, "A", measured=False)
        _wait_for(server, lambda request: request.path == "/hj/documents", session)
        signalled = time.monotonic()
        os.killpg(session.pid, sent)
        out, err = session.communicate(timeout=60)
        seconds = time.monotonic() - signalled
        asked = server.seen(lambda request: request.path == "/hj/documents")
    return Ended(session.returncode, out.decode() + err.decode(), seconds, None, asked)


@pytest.mark.parametrize("bombed", list(SIDE_ROUTES))
def test_a_gzip_bomb_on_a_side_route_keeps_the_session_small(tmp_path: Path, bombed: str) -> None:
    ended = bombed_side_route(tmp_path, bombed)
    assert ended.requests, ended.text  # the bomb was sent
    assert ended.status in (0, 1), ended.text
    assert "Traceback" not in ended.text
    assert ended.peak_rss_mb is not None
    assert ended.peak_rss_mb < PEAK_RSS_BOUND_MB
    if bombed in ("ids", "models"):
        assert "did not answer (too_large)" in ended.text  # a preflight warning naming why
    summary = json.loads((tmp_path / "reports" / "side" / "summary.json").read_text())
    if bombed == "documents":  # neither listing could be read: no ceiling, no guess
        assert summary.get("attainable", {}) == {}
    elif bombed == "ids":  # read at the session's end instead, within the bounds
        assert summary["attainable"]["ra"]["stored_chunks"] == 1
        assert summary["attainable"]["hj"]["stored_chunks"] == 1


def _hang_documents(request: Request) -> Reply:
    if request.path == "/hj/documents":
        return Reply(mode="hang")
    return _side_router("")(request)


@pytest.mark.parametrize("sent", [signal.SIGTERM, signal.SIGINT], ids=lambda s: s.name)
def test_an_interrupt_while_the_ceiling_is_read_exits_2_with_the_reports(
    tmp_path: Path, sent: signal.Signals
) -> None:
    ended = interrupted_ceiling_read(tmp_path, sent)
    # the listing hangs for its 30 s timeout: an exit 2 with the reports is the interrupt's
    assert ended.status == pytest.ExitCode.INTERRUPTED, ended.text
    assert "Traceback" not in ended.text
    assert "verdict: INTERRUPTED" in ended.text
    summary = json.loads((tmp_path / "reports" / "side" / "summary.json").read_text())
    assert summary["verdict"] == "interrupted"
    assert summary["exit_status"] == pytest.ExitCode.INTERRUPTED
    assert summary["runs"]["recorded"] == summary["runs"]["expected"]  # every run was made
    assert (tmp_path / "reports" / "side" / "report.html").is_file()


def _wait_for(
    server: FaultServer,
    predicate: Callable[[Request], bool],
    session: subprocess.Popen[bytes],
    timeout_s: float = 60.0,
) -> None:
    deadline = time.monotonic() + timeout_s
    while not server.seen(predicate):
        if session.poll() is not None or time.monotonic() > deadline:
            out, err = session.communicate()
            raise AssertionError(f"the request never came:\n{out.decode()}\n{err.decode()}")
        time.sleep(0.02)


def test_a_listing_with_a_malformed_document_keeps_the_others() -> None:
    from pytest_ragv2.run.attainable import fetch_stored_chunks

    listing = [
        {"page_content": "max 16 bar", "metadata": {"file_id": "datasheet", "page": 1}},
        {"page_content": "broken", "metadata": ["not", "an", "object"]},
        {"page_content": 7},
        "not a document",
    ]

    def route(request: Request) -> Reply:
        return Reply(body=json.dumps(listing).encode())

    with serve(route) as server:
        config = parse_retrieval_config(
            {
                "adapter": "http-json",
                "url": f"{server.url}/hj/search",
                "documents_url": f"{server.url}/hj/documents",
            }
        )
        chunks = fetch_stored_chunks("hj", config, ["datasheet"])
    assert chunks is not None
    assert [chunk.text for chunk in chunks] == ["max 16 bar"]
    assert chunks[0].page == 2  # rag_api's 0-based page, as the project counts
