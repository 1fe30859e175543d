"""Every fault a system can commit, against every HTTP adapter, in real pytest sessions.

One loopback server (``tests/fault_server.py``) answers each request by the fault its
query or prompt names (``FAULT:<name>``): one case per fault, so one session per layer runs
every fault on every adapter of that layer — layer A (http-json, rag-api) serially and
under ``-n 2``, layer B (openai-chat streamed and not, librechat-agents, http-json-chat)
under ``-n 2`` (one inference slot per system, so they run in parallel). Each session is a
real subprocess whose peak memory (the whole process tree's maximum resident set) is read
from ``wait4``.

Asserted per (adapter, fault): the run's error kind; its latency within its deadline plus a
second; for the echo and hostile faults, that what the server sent back reached no file
and no printed line as it was sent. Asserted per session: it ends with a verdict and no
traceback, every run is recorded, peak memory stays within a few hundred MB, and no secret,
control character or live HTML is in any file written or any line printed.

Sessions are cached across the xdist workers of the outer run (a lock file in the shared
base temp folder): each runs once, whichever worker needs it first.
"""

from __future__ import annotations

import base64
import functools
import html
import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.parse
import zlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from filelock import FileLock, Timeout

from pytest_ragv2.run.rawruns import read_raw_runs
from tests.artifacts import artifact_text
from tests.fault_server import Reply, Request, gzip_bomb, serve

TIMEOUT_S = 1.0
ATTEMPTS = 2
MAX_RESPONSE_MB = 1
DEADLINE_S = TIMEOUT_S * ATTEMPTS  # no backoff between the tries
PEAK_RSS_BOUND_MB = 450
SESSION_WALL_BOUND_S = 240  # a hung session fails the suite instead of stalling it

LAYER_A = {"http-json": "hj", "rag-api": "ra"}
LAYER_B = {
    "openai-chat": "oc",
    "openai-chat-stream": "ocs",
    "librechat-agents": "lc",
    "http-json-chat": "hjc",
}
STREAMED = {"ocs", "lc"}
TAGS = {**LAYER_A, **LAYER_B}

# fault -> the run's error kind (None: the run succeeds)
EXPECTED: dict[str, str | None] = {
    "ok": None,
    "status_5xx": "http_status",
    "status_429": "http_status",
    "hang": "timeout",
    "reset": "transport",
    "cut": "transport",  # a body shorter than announced; a stream without its end
    "invalid_json": "malformed",
    "non_utf8": "malformed",
    "wrong_shape": "malformed",
    "too_large": "too_large",
    "gzip_bomb": "too_large",
    "trickle": "timeout",
    "slow_headers": "timeout",  # the status line and headers a byte every 0.2 s
    "stacked_bomb": "too_large",  # Content-Encoding: gzip, deflate
    "unknown_encoding": "malformed",  # Content-Encoding: br (not asked for)
    "retry_after_long": "http_status",  # 429 with Retry-After: 30, over the 10 s cap
    "sse_endless": "timeout",
    "sse_endless_line": "too_large",
    "tool_calls_1000": "limit",
    "secret_echo": None,
    "hostile": None,
}
STREAM_ONLY = {"sse_endless", "sse_endless_line"}
OPENAI_ONLY = {"tool_calls_1000"}


def applies(tag: str, fault: str) -> bool:
    if fault in STREAM_ONLY:
        return tag in STREAMED
    if fault in OPENAI_ONLY:
        return tag in {"oc", "ocs"}
    return True


# --- secrets and hostile text ------------------------------------------------------------

LONG_SECRETS = {tag: f"sk-{tag}-fault-0123456789abcdef" for tag in TAGS.values()}
SHORT_SECRETS = {tag: f"Q{tag[:2]}9z"[:6].ljust(5, "7") for tag in TAGS.values()}  # 5 chars
URL_SECRETS = {tag: f"u{tag}Secret77" for tag in ("hj", "hjc")}  # ?api_key= / ?token=
URL_MORE_SECRETS = {"hj": {"jwt": "eyJhj.fault.9c1d7e", "pass": "p%22hj/fault+5b"}}
URL_USERS = {"hj": ("uhjUserTok3n42", ""), "hjc": ("svcHjcUser42", "pw/hjc:fault7")}
JWT_SECRET = "jwt-fault-suite-secret-0123456789"
TOOL_CALLS = 1000


def hostile(tag: str) -> str:
    # with invisible text: zero-width characters and tag characters spelling "hidden"
    invisible = "\u200b\u200d\ufeff" + "".join(chr(0xE0000 + ord(c)) for c in "hidden")
    return (
        f"\x1b[2J\u202e{tag}-hostile <img src=x onerror=alert('{tag}')> **{tag}** \x07{invisible}"
    )


HOSTILE_CATEGORY = "\x1b[31m<img src=x onerror=alert('cat')>\u202e"
HOSTILE_CASE_FILE = "\x1b[2J\u202e<img src=x onerror=alert('file')>.yaml"
REFUSED = "refused_file"  # the case of HOSTILE_CASE_FILE
CONTROL = re.compile(
    r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2060-\u206f\ufeff"
    r"\U000e0000-\U000e007f]"
)


def environment() -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("PYTEST_")}
    for tag in TAGS.values():
        env[f"FI_{tag.upper()}_KEY"] = LONG_SECRETS[tag]
        env[f"FI_{tag.upper()}_SHORT"] = SHORT_SECRETS[tag]
    env["FI_RA_JWT"] = JWT_SECRET
    env["COLUMNS"] = "160"
    return env


# --- what the server answers -------------------------------------------------------------

FAULT_TOKEN = re.compile(rb"FAULT:([a-z0-9_]+)")
ITEM = {"text": "max 16 bar", "file_id": "datasheet", "filename": "datasheet.pdf", "page": 2}
ANSWER = "The maximum pressure is 16 bar."


def sse(data: Any) -> bytes:
    text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
    return b"data: " + text.encode("utf-8") + b"\n\n"


def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {
        "object": "chat.completion.chunk",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


def completion(message: dict[str, Any]) -> dict[str, Any]:
    return {
        "object": "chat.completion",
        "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
    }


def good(tag: str, text: str = ANSWER, filename: str = "datasheet.pdf") -> Any:
    """A well-formed answer of ``tag``'s wire carrying ``text``: a JSON body, or SSE frames."""
    if tag == "hj":
        return {"results": [{**ITEM, "text": text, "filename": filename}]}
    if tag == "ra":
        document = {
            "page_content": text,
            "metadata": {"file_id": "datasheet", "source": filename, "page": 1},
        }
        return [[document, 0.1]]
    if tag == "oc":
        return completion({"role": "assistant", "content": text})
    if tag == "hjc":
        return {"answer": text}
    return [sse(chunk({"role": "assistant"})), sse(chunk({"content": text})), sse("[DONE]")]


def body_of(answer: Any) -> bytes:
    if isinstance(answer, list) and answer and isinstance(answer[0], bytes):
        return b"".join(answer)
    return json.dumps(answer, ensure_ascii=False).encode("utf-8")


def whole(tag: str, answer: Any, **changes: Any) -> Reply:
    if tag in STREAMED:
        return Reply(mode="events", frames=answer, content_type="text/event-stream", **changes)
    return Reply(body=body_of(answer), **changes)


@functools.cache
def bomb(streamed: bool) -> bytes:
    if streamed:
        return gzip_bomb(200 * 1024 * 1024, fill=sse(chunk({"content": "x" * 200})))
    return gzip_bomb(200 * 1024 * 1024, prefix=b'{"pad": "', fill=b"x")


@functools.cache
def stacked_bomb(streamed: bool) -> bytes:
    """``Content-Encoding: gzip, deflate``: a gzip bomb inflating to 512 MB, deflated again
    (about 1 KB on the wire; httpx would inflate both layers of a read whole)."""
    if streamed:
        inner = gzip_bomb(512 * 1024 * 1024, fill=sse(chunk({"content": "x" * 200})))
    else:
        inner = gzip_bomb(512 * 1024 * 1024, prefix=b'{"pad": "', fill=b"x")
    return zlib.compress(inner, 9)


def tool_calls(tag: str) -> Any:
    calls = [
        {
            "index": number,
            "id": f"call_{number}",
            "type": "function",
            "function": {"name": "search_knowledge_base", "arguments": '{"query": "pressure"}'},
        }
        for number in range(TOOL_CALLS)
    ]
    if tag == "oc":
        return {
            "object": "chat.completion",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": None, "tool_calls": calls},
                    "finish_reason": "tool_calls",
                }
            ],
        }
    return [sse(chunk({"tool_calls": calls}, "tool_calls")), sse("[DONE]")]


def fault_reply(tag: str, fault: str, request: Request) -> Reply:
    streamed = tag in STREAMED
    event_stream = "text/event-stream"
    if fault == "status_5xx":
        return Reply(status=503, body=b'{"error": "unavailable"}')
    if fault == "status_429":
        return Reply(status=429, body=b'{"error": "slow down"}', headers={"Retry-After": "0"})
    if fault == "hang":
        return Reply(mode="hang")
    if fault == "reset":
        return Reply(mode="reset")
    if fault == "cut":
        if streamed:
            return whole(tag, good(tag)[:-1], complete=False)
        return Reply(mode="cut", body=body_of(good(tag)))
    if fault == "invalid_json":
        if streamed:
            return whole(tag, [sse(chunk({"content": "The"})), b'data: {"choices": [\n\n'])
        return Reply(body=body_of(good(tag))[:-3])
    if fault == "non_utf8":
        if streamed:
            return whole(tag, [b'data: {"choices": "\xff\xfe"}\n\n', sse("[DONE]")])
        return Reply(body=b'{"answer": "\xff\xfe\xfd"}')
    if fault == "wrong_shape":
        if streamed:
            return whole(tag, [sse([1, 2]), sse("[DONE]")])
        shapes: dict[str, Any] = {
            "hj": {"results": {"not": "a list"}},
            "ra": {"unexpected": True},
            "oc": {"choices": "none"},
            "hjc": {"reply": "no answer field"},
        }
        return Reply(body=body_of(shapes[tag]))
    if fault == "too_large":
        if streamed:
            piece = sse(chunk({"content": "y" * 64 * 1024}))
            return whole(tag, [piece] * (2 * 16 + 1) + [sse("[DONE]")])
        return Reply(body=b'{"pad": "' + b"y" * (2 * 1024 * 1024) + b'"}')
    if fault == "gzip_bomb":
        return Reply(
            body=bomb(streamed),
            gzip=True,
            content_type=event_stream if streamed else "application/json",
        )
    if fault == "slow_headers":
        return Reply(
            mode="slow_headers",
            body=body_of(good(tag)),
            gap_s=0.2,
            content_type=event_stream if streamed else "application/json",
        )
    if fault == "stacked_bomb":
        return Reply(
            body=stacked_bomb(streamed),
            encoding="gzip, deflate",
            content_type=event_stream if streamed else "application/json",
        )
    if fault == "unknown_encoding":
        return Reply(
            body=b"\x1b\x00\x00" * 64,
            encoding="br",
            content_type=event_stream if streamed else "application/json",
        )
    if fault == "retry_after_long":
        return Reply(status=429, body=b'{"error": "slow down"}', headers={"Retry-After": "30"})
    if fault == "trickle":
        return Reply(
            mode="trickle",
            body=body_of(good(tag)),
            gap_s=0.2,
            content_type=event_stream if streamed else "application/json",
        )
    if fault == "sse_endless":
        return Reply(
            mode="endless_events",
            frames=[sse(chunk({"content": "tick "}))],
            gap_s=0.05,
            content_type=event_stream,
        )
    if fault == "sse_endless_line":
        return Reply(mode="endless_line", content_type=event_stream)
    if fault == "tool_calls_1000":
        return whole(tag, tool_calls(tag))
    if fault == "secret_echo":
        echoed = " ".join(
            f"{name}={request.headers.get(name, '')}"
            for name in ("authorization", "x-api-key", "x-short")
        )
        echo = f"echo {echoed} query={request.query} ; {ANSWER}"
        headers = {"X-Echo": echoed, "X-Echo-Query": request.query}
        return whole(tag, good(tag, echo, filename=f"{echoed}.pdf"), headers=headers)
    if fault == "hostile":
        text = f"{hostile(tag)} {ANSWER}"
        return whole(tag, good(tag, text, filename=f"{hostile(tag)}.pdf"))
    return whole(tag, good(tag))


def route(request: Request) -> Reply:
    tag = request.path.split("/")[1]
    if tag == "kb":  # the openai-chat systems' knowledge base, searched by the harness
        return Reply(body=body_of(good("hj")))
    if tag == "ra" and request.path.endswith("/ids"):
        return Reply(body=b'["datasheet", "manual", "parts", "noise"]')
    if request.path.endswith("/models") or request.path.endswith("/health"):
        return Reply(body=b'{"data": [], "status": "UP"}')
    found = FAULT_TOKEN.search(request.body + request.query.encode())
    fault = found.group(1).decode() if found else "ok"
    return fault_reply(tag, fault if applies(tag, fault) else "ok", request)


# --- the evaluation project ----------------------------------------------------------------

ALLOWLIST = """\
files:
  - {file_id: datasheet, filename: datasheet.pdf}
  - {file_id: manual, filename: manual.docx}
  - {file_id: parts, filename: parts.xlsx}
  - {file_id: noise, filename: noise.md}
"""


def case(fault: str, category: str = "technical_table") -> dict[str, Any]:
    return {
        "id": f"F_{fault}",
        "category": category,
        "prompt_en": f"What is the maximum pressure? FAULT:{fault}",
        "expected_answer": {"required_claims": [{"text": "16 bar", "number": 16, "unit": "bar"}]},
        "required_evidence": [{"file_id": "datasheet", "filename": "datasheet.pdf", "page": 2}],
    }


def bounds() -> str:
    return (
        f"timeout_s = {TIMEOUT_S:g}, max_response_mb = {MAX_RESPONSE_MB}, "
        f"retry = {{attempts = {ATTEMPTS}, backoff_s = 0}}"
    )


def headers(tag: str) -> str:
    return (
        f'headers_env = {{"X-Api-Key" = "FI_{tag.upper()}_KEY", '
        f'"X-Short" = "FI_{tag.upper()}_SHORT"}}'
    )


def with_user(tag: str, base: str) -> str:
    """``base`` with ``tag``'s URL user info: a token as the user name, or a user name and
    a password (percent-encoded)."""
    user, password = URL_USERS[tag]
    userinfo = user + (f":{urllib.parse.quote(password, safe='')}" if password else "")
    return base.replace("://", f"://{userinfo}@", 1)


def basic(tag: str) -> str:
    """The ``Authorization: Basic`` token httpx makes of ``tag``'s URL user info."""
    user, password = URL_USERS[tag]
    return base64.b64encode(f"{user}:{password}".encode()).decode()


def config(layer: str, base: str) -> str:
    fields = (
        'items_path = "results", '
        'fields = {text = "text", file_id = "file_id", filename = "filename", page = "page"}'
    )
    kb = f'retrieval = {{adapter = "http-json", url = "{base}/kb/search", {fields}}}'
    if layer == "A":
        systems = {
            "hj": (
                "baseline",
                f'retrieval = {{adapter = "http-json", '
                f'url = "{with_user("hj", base)}/hj/search?api_key={URL_SECRETS["hj"]}'
                f'&jwt={URL_MORE_SECRETS["hj"]["jwt"]}&pass={URL_MORE_SECRETS["hj"]["pass"]}", '
                f"{fields}, {headers('hj')}, {bounds()}}}",
            ),
            "ra": (
                "candidate",
                f'retrieval = {{adapter = "rag-api", url = "{base}/ra", '
                f'jwt_secret_env = "FI_RA_JWT", {headers("ra")}, {bounds()}}}',
            ),
        }
    else:
        chat = (
            'adapter = "openai-chat", model = "m", api_key_env = "FI_{T}_KEY", '
            'headers_env = {{"X-Short" = "FI_{T}_SHORT"}}'
        )
        systems = {
            "oc": (
                "baseline",
                f'chat = {{{chat.format(T="OC")}, url = "{base}/oc/v1", stream = false, '
                f"{bounds()}}}\n{kb}",
            ),
            "ocs": (
                "candidate",
                f'chat = {{{chat.format(T="OCS")}, url = "{base}/ocs/v1", stream = true, '
                f"{bounds()}}}\n{kb}",
            ),
            "lc": (
                "reference",
                f'chat = {{adapter = "librechat-agents", url = "{base}/lc", agent_id = "a", '
                f'api_key_env = "FI_LC_KEY", headers_env = {{"X-Short" = "FI_LC_SHORT"}}, '
                f"{bounds()}}}",
            ),
            "hjc": (
                "reference",
                f'chat = {{adapter = "http-json-chat", '
                f'url = "{with_user("hjc", base)}/hjc/chat?token={URL_SECRETS["hjc"]}", '
                'answer_path = "answer", '
                f'body = {{messages = "{{messages}}"}}, {headers("hjc")}, {bounds()}}}',
            ),
        }
    blocks = "\n".join(
        f'[tool.ragv2.systems.{tag}]\nrole = "{role}"\nslot = "{tag}"\n{paths}\n'
        for tag, (role, paths) in systems.items()
    )
    return f"[tool.ragv2]\nrepetitions = 1\n\n{blocks}"


def write_project(folder: Path, layer: str, base: str) -> list[str]:
    """The project; the faults its cases inject."""
    tags = LAYER_A.values() if layer == "A" else LAYER_B.values()
    faults = [fault for fault in EXPECTED if any(applies(tag, fault) for tag in tags)]
    (folder / "cases").mkdir(parents=True)
    (folder / "gold").mkdir()
    (folder / "gold" / "allowlist.yaml").write_text(ALLOWLIST)
    (folder / "pyproject.toml").write_text(config(layer, base))
    plain = [case(fault) for fault in faults if fault != "hostile"]
    (folder / "cases" / "faults.yaml").write_text(json.dumps(plain, indent=1))
    (folder / "cases" / "hostile.yaml").write_text(
        json.dumps([case("hostile", HOSTILE_CATEGORY)], indent=1)
    )
    # refused for its name: none of its cases runs (no run of REFUSED is recorded)
    (folder / "cases" / HOSTILE_CASE_FILE).write_text(
        json.dumps([{**case("ok"), "id": f"F_{REFUSED}"}], indent=1)
    )
    return faults


# --- one session, run once -------------------------------------------------------------------


@dataclass
class Session:
    folder: Path
    layer: str
    workers: int
    exit_status: int
    stdout: str
    stderr: str
    peak_rss_mb: float
    wall_s: float
    faults: list[str]
    searches: int  # knowledge-base searches the harness ran (only tool_calls_1000 asks)
    sent_secrets: dict[str, list[str]]  # tag -> the header values it received

    def runs(self) -> dict[tuple[str, str], dict[str, Any]]:
        """(system, fault) -> its raw run line."""
        found: dict[tuple[str, str], dict[str, Any]] = {}
        for run_dir in (self.folder / "raw-runs").iterdir():
            for record in read_raw_runs(run_dir):
                key = record["key"]
                found[(key["system"], key["case"].removeprefix("F_"))] = record
        return found

    def written(self) -> dict[str, str]:
        """Every file the session wrote (name -> text), and what it printed."""
        texts = {"<stdout>": self.stdout, "<stderr>": self.stderr}
        for path in sorted(self.folder.rglob("*")):
            relative = path.relative_to(self.folder).as_posix()
            if path.is_file() and relative.split("/")[0] in ("raw-runs", "reports", "out"):
                texts[relative] = artifact_text(path)  # raw runs of layer B: decompressed
        return texts


def run_session(folder: Path, layer: str, workers: int) -> Session:
    bomb(False)  # built before the session: a slow first reply is no bomb
    stacked_bomb(False)
    if layer == "B":
        bomb(True)
        stacked_bomb(True)
    with serve(route) as server:
        faults = write_project(folder, layer, server.url)
        (folder / "out").mkdir()
        argv = [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "no:cacheprovider",
            f"--ragv2-layer={layer}",
            "--ragv2-run-id=faults",
            "--ragv2-seed=1",
            "-rA",
            "--junitxml=out/junit.xml",
            "--html=out/report.html",
            "--self-contained-html",
        ]
        if workers:
            argv += ["-n", str(workers)]
        started = time.monotonic()
        with (
            (folder / "out-stdout.txt").open("wb") as out,
            (folder / "out-stderr.txt").open("wb") as err,
        ):
            process = subprocess.Popen(
                [sys.executable, "-c", MEASURED, str(folder / "peak-rss-kb"), *argv],
                cwd=folder,
                stdout=out,
                stderr=err,
                env=environment(),
                start_new_session=True,
            )
            status, _ = _wait(process)
        wall_s = time.monotonic() - started
        searches = len(server.seen(lambda request: request.path == "/kb/search"))
        sent: dict[str, list[str]] = {}
        for request in server.seen(lambda r: True):
            tag = request.path.split("/")[1]
            sent.setdefault(tag, [])
            for name in ("authorization", "x-api-key", "x-short"):
                if name in request.headers and request.headers[name] not in sent[tag]:
                    sent[tag].append(request.headers[name])
    return Session(
        folder=folder,
        layer=layer,
        workers=workers,
        exit_status=status,
        stdout=(folder / "out-stdout.txt").read_text(encoding="utf-8", errors="replace"),
        stderr=(folder / "out-stderr.txt").read_text(encoding="utf-8", errors="replace"),
        peak_rss_mb=int((folder / "peak-rss-kb").read_text()) / 1024,
        wall_s=wall_s,
        faults=faults,
        searches=searches,
        sent_secrets=sent,
    )


# The session runs under a small launcher that reports its children's peak RSS: a process
# forked from this test's (large) worker would count the worker's pages in its own peak.
MEASURED = """
import resource, subprocess, sys
code = subprocess.call(sys.argv[2:])
with open(sys.argv[1], "w") as out:
    out.write(str(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss))
sys.exit(code if code >= 0 else 128 - code)
"""


def _wait(process: subprocess.Popen[bytes]) -> tuple[int, Any]:
    """The exit status and resource usage of the session (its whole process tree: the
    kernel folds every waited-for descendant into a child's usage)."""
    deadline = time.monotonic() + SESSION_WALL_BOUND_S
    while True:
        pid, status, rusage = os.wait4(process.pid, os.WNOHANG)
        if pid:
            process.returncode = os.waitstatus_to_exitcode(status)
            return process.returncode, rusage
        if time.monotonic() > deadline:
            os.killpg(process.pid, signal.SIGKILL)
        time.sleep(0.05)


SESSIONS = {"A-serial": ("A", 0), "B-n2": ("B", 2)}


@pytest.fixture(scope="session")
def sessions(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], Session]:
    """Each session of ``SESSIONS`` run once for the whole outer run, whichever xdist
    worker asks first; the others read what it recorded. A worker waiting for a session
    another one runs first runs a session nobody has started yet."""
    shared = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):  # each worker has its own folder below
        shared = shared.parent
    memo: dict[str, Session] = {}

    def get(key: str) -> Session:
        if key not in memo:
            found = _shared_session(shared, key, blocking=False)
            if found is None:
                for other in SESSIONS:
                    if other not in memo and other != key:
                        started = _shared_session(shared, other, blocking=False)
                        if started is not None:
                            memo[other] = started
                found = _shared_session(shared, key, blocking=True)
            assert found is not None
            memo[key] = found
        return memo[key]

    return get


def _shared_session(shared: Path, key: str, *, blocking: bool) -> Session | None:
    """The session ``key``: read from its record, or run now and recorded; None when
    another worker holds it and ``blocking`` is False."""
    record = shared / f"fault-session-{key}.json"
    lock = FileLock(str(record) + ".lock")
    try:
        lock.acquire(timeout=-1 if blocking else 0)
    except Timeout:
        return None
    try:
        if record.exists():
            data = json.loads(record.read_text(encoding="utf-8"))
            data["folder"] = Path(data["folder"])
            return Session(**data)
        layer, workers = SESSIONS[key]
        session = run_session(shared / f"fault-session-{key}", layer, workers)
        data = {**session.__dict__, "folder": str(session.folder)}
        record.write_text(json.dumps(data), encoding="utf-8")
        return session
    finally:
        lock.release()


# --- the tests -----------------------------------------------------------------------------


def session_key(adapter: str, workers: str) -> str:
    return f"{'A' if adapter in LAYER_A else 'B'}-{workers}"


# Known gaps, each an xfail(strict=True): when it is fixed the test says so.
KNOWN_FAULT_GAPS: dict[tuple[str, str], str] = {}
KNOWN_SURFACE_GAPS: dict[tuple[str, str, str], str] = {}


def known_gap(reason: str | None) -> list[pytest.MarkDecorator]:
    return [] if reason is None else [pytest.mark.xfail(strict=True, reason=reason)]


CASES = [
    pytest.param(
        adapter,
        fault,
        workers,
        id=f"{adapter}-{fault}-{workers}",
        marks=known_gap(KNOWN_FAULT_GAPS.get((adapter, fault))),
    )
    for workers in ("serial", "n2")
    for adapter, tag in TAGS.items()
    for fault in EXPECTED
    if applies(tag, fault) and session_key(adapter, workers) in SESSIONS
]


def secrets_of(session: Session, tag: str) -> list[str]:
    """Every credential system ``tag`` was configured with or sent (a signed JWT too)."""
    values = [LONG_SECRETS[tag], SHORT_SECRETS[tag]]
    values += [URL_SECRETS[tag]] if tag in URL_SECRETS else []
    for raw in URL_MORE_SECRETS.get(tag, {}).values():  # as written and as decoded
        values += [raw, urllib.parse.unquote(raw)]
    if tag in URL_USERS:  # the user info, and the Basic token made of it
        values += [part for part in URL_USERS[tag] if part] + [basic(tag).rstrip("=")]
    values += [JWT_SECRET] if tag == "ra" else []
    for sent in session.sent_secrets.get(tag, []):
        scheme, _, token = sent.partition(" ")
        values.append(token if scheme == "Bearer" else sent)
    return list(dict.fromkeys(values))


def leaks(text: str, secrets: list[str]) -> list[str]:
    """The secrets found in ``text``: a long one anywhere, a short one as a whole word."""
    found = []
    for secret in secrets:
        if len(secret) >= 8:
            hit = secret in text
        else:
            hit = (
                re.search(rf"(?<![0-9A-Za-z]){re.escape(secret)}(?![0-9A-Za-z])", text) is not None
            )
        if hit:
            found.append(secret)
    return found


@pytest.mark.parametrize(("adapter", "fault", "workers"), CASES)
def test_each_fault_is_the_runs_error_within_its_deadline(
    sessions: Callable[[str], Session], adapter: str, fault: str, workers: str
) -> None:
    session = sessions(session_key(adapter, workers))
    tag = TAGS[adapter]
    run = session.runs()[(tag, fault)]
    error = run.get("error")
    assert (error or {}).get("kind") == EXPECTED[fault], error
    assert float(run["latency_s"]) <= DEADLINE_S + 1.0
    line = json.dumps(run, ensure_ascii=False)
    assert leaks(line, secrets_of(session, tag)) == []
    if fault == "secret_echo":  # the server did echo them: the record shows them replaced
        assert LONG_SECRETS[tag] in " ".join(session.sent_secrets[tag]) or tag == "ra"
        assert "<redacted>" in json.dumps(run.get("items") or run.get("transcript"))
    if fault == "hostile":  # it arrived, and is recorded
        assert f"{tag}-hostile" in line
    if fault == "tool_calls_1000":  # the harness did not run every call
        assert session.searches < TOOL_CALLS
    if fault == "retry_after_long":  # not waited for, and named
        assert "(Retry-After: 30), longer than retry.retry_after_max_s = 10" in error["message"]
    if fault == "unknown_encoding":
        assert "br was not asked for" in error["message"]


SESSION_KEYS = list(SESSIONS)


@pytest.mark.parametrize("key", SESSION_KEYS)
def test_the_session_ends_with_a_verdict_and_records_every_run(
    sessions: Callable[[str], Session], key: str
) -> None:
    session = sessions(key)
    assert session.exit_status == 1, session.stderr[-2000:]  # the error_rate gate fails
    assert "verdict: FAIL" in session.stdout
    assert "Traceback" not in session.stdout + session.stderr
    assert "INTERNALERROR" not in session.stdout + session.stderr
    tags = LAYER_A.values() if session.layer == "A" else LAYER_B.values()
    assert sorted(session.runs()) == sorted(
        (tag, fault) for tag in tags for fault in session.faults
    )
    assert session.peak_rss_mb < PEAK_RSS_BOUND_MB


SURFACES: dict[str, Callable[[str], bool]] = {
    "terminal": lambda name: name in ("<stdout>", "<stderr>"),
    "raw-runs": lambda name: name.startswith("raw-runs/"),
    "summary.json": lambda name: name.endswith("summary.json"),
    "summary.md": lambda name: name.endswith("summary.md"),
    "report.html": lambda name: name.startswith("reports/") and name.endswith("report.html"),
    "junit": lambda name: name == "out/junit.xml",
    "pytest-html": lambda name: name == "out/report.html",
}
HTML_SURFACES = ("summary.md", "report.html", "junit", "pytest-html")
# where each hostile text came from, told by what follows it
SOURCES = {
    **{f"{tag}-hostile": f"{tag} answer/file name" for tag in TAGS.values()},
    "alert('cat')": "category",
    "alert('file')": "case file name",
}


def surface(session: Session, name: str) -> dict[str, str]:
    texts = {path: text for path, text in session.written().items() if SURFACES[name](path)}
    assert texts, f"the session wrote no {name}"
    return texts


def sources_after(text: str, pattern: re.Pattern[str]) -> set[str]:
    """What each match of ``pattern`` in ``text`` belongs to (the hostile texts' sources)."""
    found = set()
    for match in pattern.finditer(text):
        around = html.unescape(text[max(0, match.start() - 60) : match.start() + 60])
        found.add(next((label for key, label in SOURCES.items() if key in around), repr(around)))
    return found


def session_surfaces(check: str, names: Iterable[str]) -> list[Any]:
    return [
        pytest.param(
            key,
            name,
            id=f"{key}-{name}",
            marks=known_gap(KNOWN_SURFACE_GAPS.get((check, key, name))),
        )
        for key in SESSIONS
        for name in names
    ]


@pytest.mark.parametrize(("key", "name"), session_surfaces("secret", SURFACES))
def test_no_secret_reaches_a_file_or_a_printed_line(
    sessions: Callable[[str], Session], key: str, name: str
) -> None:
    session = sessions(key)
    tags = LAYER_A.values() if session.layer == "A" else LAYER_B.values()
    secrets = [secret for tag in tags for secret in secrets_of(session, tag)]
    found = {path: leaks(text, secrets) for path, text in surface(session, name).items()}
    assert {path: hits for path, hits in found.items() if hits} == {}


@pytest.mark.parametrize(("key", "name"), session_surfaces("control", SURFACES))
def test_no_control_character_reaches_a_file_or_a_printed_line(
    sessions: Callable[[str], Session], key: str, name: str
) -> None:
    session = sessions(key)
    found = {path: sources_after(text, CONTROL) for path, text in surface(session, name).items()}
    assert {path: hits for path, hits in found.items() if hits} == {}


LIVE_IMG = re.compile(r"<img src=x onerror=")


@pytest.mark.parametrize(("key", "name"), session_surfaces("html", HTML_SURFACES))
def test_no_live_html_reaches_a_page_markdown_or_junit(
    sessions: Callable[[str], Session], key: str, name: str
) -> None:
    session = sessions(key)
    found = {path: sources_after(text, LIVE_IMG) for path, text in surface(session, name).items()}
    assert {path: hits for path, hits in found.items() if hits} == {}


@pytest.mark.parametrize("key", SESSION_KEYS)
def test_a_case_file_named_with_control_characters_is_refused_and_named_by_its_escapes(
    sessions: Callable[[str], Session], key: str
) -> None:
    session = sessions(key)
    assert not [run for run in session.runs() if run[1] == REFUSED]  # nothing of it ran
    shown = "case file \\x1b[2J\\u202e<img src=x onerror=alert('file')>.yaml not loaded"
    assert shown in session.stdout  # under the failing gold_valid gate
    [summary] = (session.folder / "reports").glob("*/summary.json")
    gates = json.loads(summary.read_text(encoding="utf-8"))["gates"]
    [gold_valid] = [gate for gate in gates if gate["name"] == "gold_valid"]
    assert gold_valid["decision"] == "fail"
    assert any(shown in detail for detail in gold_valid["details"])
