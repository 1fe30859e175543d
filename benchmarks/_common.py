"""Shared parts of the benchmarks: a rag_api-shaped loopback endpoint, generated projects
(layer A against that endpoint, layer B against the demo server), each with its bare pytest
partner making the same HTTP calls, and a timed pytest session in a fresh interpreter."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import textwrap
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ragv2_demo.server import DemoServer

TIME = "/usr/bin/time"  # GNU time (Debian package "time") reports a child's peak RSS
TIME_PREFIX = [TIME, "-f", "%M"] if os.path.exists(TIME) else []

BODY = json.dumps(
    [
        [
            {
                "id": f"chunk-{n}",
                "type": "Document",
                "page_content": f"Maximum pressure {n} bar at 20 °C.",
                "metadata": {
                    "file_id": f"doc-{n % 3}",
                    "user_id": "bench",
                    "digest": "0" * 32,
                    "source": f"/app/uploads/temp/bench-doc-{n % 3}.pdf",
                    "page": n % 4,
                    "page_label": str(n % 4 + 1),
                    "total_pages": 4,
                },
            },
            0.1 * n,
        ]
        for n in range(5)
    ]
).encode()


class RagApiHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # without it every keep-alive request stalls ~44 ms
    delay_s = 0.0

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length", "0"))
        self.rfile.read(length)
        if self.delay_s:
            time.sleep(self.delay_s)
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(BODY)))
        self.end_headers()
        self.wfile.write(BODY)

    def log_message(self, format: str, *args: object) -> None:
        pass


def serve(delay_s: float = 0.0) -> tuple[ThreadingHTTPServer, str]:
    handler = type("Handler", (RagApiHandler,), {"delay_s": delay_s})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"


def write_project(root: Path, url: str, n_cases: int) -> None:
    """n_cases single-language cases, one candidate system speaking rag_api on ``url``."""
    (root / "cases").mkdir(parents=True, exist_ok=True)
    (root / "gold").mkdir(exist_ok=True)
    # the endpoint always answers the same five items; each case's gold is one of them, so
    # every run meets its case, as in the bare test (failure reports would cost both sides)
    cases = "".join(
        f"- id: Q{n:04d}\n  category: technical_table\n  prompt_en: 'pressure question {n}'\n"
        f"  required_evidence:\n    - {{file_id: doc-{n % 5 % 3}, page: {n % 5 % 4 + 1}}}\n"
        for n in range(n_cases)
    )
    (root / "cases" / "development.yaml").write_text(cases)
    (root / "gold" / "allowlist.yaml").write_text(
        "files:\n" + "".join(f"  - {{file_id: doc-{n}, filename: doc-{n}.pdf}}\n" for n in range(3))
    )
    (root / "pyproject.toml").write_text(
        textwrap.dedent(
            f"""\
            [tool.ragv2.systems.candidate]
            role = "candidate"
            retrieval = {{adapter = "rag-api", url = "{url}"}}
            """
        )
    )
    (root / "test_bare.py").write_text(
        textwrap.dedent(
            f"""\
            import httpx
            import pytest

            CLIENT = httpx.Client()
            FILE_IDS = ["doc-0", "doc-1", "doc-2"]


            @pytest.mark.parametrize("n", range({n_cases}))
            def test_query(n):
                response = CLIENT.post(
                    "{url}/query_multiple",
                    json={{"query": f"pressure question {{n}}", "file_ids": FILE_IDS, "k": 10}},
                )
                assert response.status_code == 200
                assert response.json()
            """
        )
    )


@dataclass(frozen=True)
class Measured:
    """One pytest session in a fresh interpreter: wall seconds, exit status, output, peak
    RSS (MB, GNU time's maximum resident set size) and the CPU seconds (user and system)
    of the session's processes."""

    seconds: float
    status: int
    out: str
    peak_mb: float
    cpu_s: float


def measured_pytest(root: Path, *args: str) -> Measured:
    """A pytest session in ``root`` (see :class:`Measured`)."""
    # as on an installed package: byte code cached (a PYTHONDONTWRITEBYTECODE environment
    # would make every run recompile every module, pytest's assertion rewriting included)
    env = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    completed = subprocess.run(
        [*TIME_PREFIX, sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args],
        cwd=root,
        capture_output=True,
        text=True,
        check=False,
        env=env,
    )
    seconds = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu_s = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    lines = completed.stderr.strip().splitlines()
    peak_kb = float(lines[-1]) if TIME_PREFIX and lines and lines[-1].isdigit() else float("nan")
    return Measured(seconds, completed.returncode, completed.stdout, peak_kb / 1024, cpu_s)


def timed_pytest(root: Path, *args: str) -> tuple[float, int, str, float]:
    """Wall time, exit status, output and peak RSS (MB) of one pytest session in a fresh
    interpreter (GNU time's maximum resident set size)."""
    measured = measured_pytest(root, *args)
    return measured.seconds, measured.status, measured.out, measured.peak_mb


REPO = Path(__file__).resolve().parent.parent


def bundled_config(folder: Path) -> Path:
    """A copy of the repository's ``[tool.ragv2]`` configuration in ``folder`` whose paths
    are absolute and whose raw runs and reports go to ``folder``: the bundled benchmark run
    from the repository root leaves the repository as it was."""
    from pytest_ragv2.config.file import read_config
    from pytest_ragv2.config.settings import PATH_FIELDS, Settings

    config: dict[str, Any] = read_config(REPO / "pyproject.toml")
    defaults = Settings()
    for name in PATH_FIELDS:
        value = config.get(name, getattr(defaults, name))
        if value is not None:
            config[name] = str(REPO / value)
    config["raw_runs"] = str(folder / "raw-runs")
    config["reports"] = str(folder / "reports")
    path = folder / "ragv2.yaml"
    path.write_text(json.dumps(config))  # JSON is YAML
    return path


ROBOTICS = Path(__file__).resolve().parent.parent / "corpus" / "nimbus-robotics"
# (question, a claim its answer must hold): every conversation meets its case on both sides,
# as in layer A (failure reports would cost both sides and measure pytest's report instead)
QUESTIONS = [
    ("What is the maximum speed of the Nimbus X2?", "1.8 m/s"),
    ("What is the runtime of the Nimbus X2 on a single battery charge?", "11.5 hours"),
    ("How long is the standard warranty on the Nimbus X2?", "30 months"),
    ("What is the payload capacity of the Nimbus X2?", "340 kg"),
    ("How many remote days are allowed per week?", "3 days"),
]


def demo_server() -> DemoServer:
    """The demo server over the robotics corpus (a context manager; chat routes logged in
    ``request_log``)."""
    from ragv2_demo.engine import DemoIndex
    from ragv2_demo.server import DemoServer

    return DemoServer(DemoIndex.from_corpus(ROBOTICS))


def chat_url(url: str, latency_ms: float) -> str:
    """The demo's v2 chat base URL whose every answer waits ``latency_ms`` first."""
    return f"{url}/chat/v2/fault/latency-{latency_ms:g}"


def write_chat_project(root: Path, url: str, items: int, latency_ms: float) -> None:
    """``items`` single-turn layer-B cases, one system (the demo's v2 retrieval as the search
    tool, its v2 answer model behind ``latency_ms``), and ``test_bare_chat.py``: a bare
    parametrized pytest + httpx test making the same calls per conversation (the chat request
    with the search tool, the search on rag_api's route, the chat request with its result)."""
    from pytest_ragv2.systems.kb_tool import SEARCH_TOOL

    (root / "cases").mkdir(parents=True, exist_ok=True)
    (root / "gold").mkdir(exist_ok=True)
    cases = []
    for n in range(items):
        question, claim = QUESTIONS[n % len(QUESTIONS)]
        cases.append(
            f"- id: L{n:04d}\n  category: technical_table\n  layers: [B]\n"
            f"  prompt_en: {json.dumps(question)}\n"
            f"  expected_answer: {{required_claims: [{json.dumps(claim)}]}}\n"
            "  required_evidence: []\n"
        )
    (root / "cases" / "development.yaml").write_text("".join(cases))
    files = sorted(path for path in ROBOTICS.iterdir() if path.suffix != ".yaml")
    (root / "gold" / "allowlist.yaml").write_text(
        "files:\n"
        + "".join(f"  - {{file_id: {path.stem}, filename: {path.name}}}\n" for path in files)
    )
    chat = chat_url(url, latency_ms)
    (root / "pyproject.toml").write_text(
        textwrap.dedent(
            f"""\
            [tool.ragv2]
            repetitions = 1
            [tool.ragv2.systems.v2]
            role = "candidate"
            retrieval = {{adapter = "rag-api", url = "{url}/v2"}}
            chat = {{adapter = "openai-chat", url = "{chat}", model = "demo-v2"}}
            """
        )
    )
    filenames = {path.stem: path.name for path in files}
    (root / "test_bare_chat.py").write_text(
        textwrap.dedent(
            f"""\
            import json

            import httpx
            import pytest

            CLIENT = httpx.Client()
            CHAT = "{chat}/chat/completions"
            SEARCH = "{url}/v2/query_multiple"
            FILENAMES = {filenames!r}
            QUESTIONS = {QUESTIONS!r}
            TOOLS = [json.loads({json.dumps(SEARCH_TOOL)!r})]


            def chat(messages):
                body = {{
                    "model": "demo-v2",
                    "messages": messages,
                    "temperature": 0.0,
                    "stream": False,
                    "tools": TOOLS,
                }}
                response = CLIENT.post(CHAT, json=body)
                assert response.status_code == 200
                return response.json()["choices"][0]["message"]


            def source(n, document):
                metadata = document["metadata"]
                return {{
                    "n": n,
                    "file_id": metadata["file_id"],
                    "filename": FILENAMES.get(metadata["file_id"]),
                    "page": metadata.get("page", 0) + 1,
                    "text": document["page_content"],
                }}


            @pytest.mark.parametrize("n", range({items}))
            def test_chat(n):
                question, claim = QUESTIONS[n % len(QUESTIONS)]
                messages = [{{"role": "user", "content": question}}]
                message = chat(messages)
                messages.append(message)
                for call in message.get("tool_calls") or []:
                    query = json.loads(call["function"]["arguments"])["query"]
                    body = {{"query": query, "file_ids": list(FILENAMES), "k": 10}}
                    response = CLIENT.post(SEARCH, json=body)
                    assert response.status_code == 200
                    sources = [source(n, pair[0]) for n, pair in enumerate(response.json(), 1)]
                    content = json.dumps({{"sources": sources}}, ensure_ascii=False)
                    messages.append(
                        {{"role": "tool", "tool_call_id": call["id"], "content": content}}
                    )
                answer = chat(messages)
                assert claim in answer["content"]
            """
        )
    )


def chat_run_times(run_dir: Path) -> tuple[float, float, int]:
    """(harness-executed search time, conversation time, conversations) of one layer-B run's
    raw runs."""
    from pytest_ragv2.run.rawruns import read_raw_runs

    search = conversations = 0.0
    count = 0
    for raw in read_raw_runs(run_dir):
        count += 1
        conversations += raw["latency_s"]
        for turn in raw["transcript"]["turns"]:
            for exchange in turn["exchanges"]:
                if "tool" in exchange["request"]:
                    search += exchange["latency_s"]
    return search, conversations, count
