"""Shared parts of the benchmarks: a rag_api-shaped loopback endpoint and a generated project."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

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


def timed_pytest(root: Path, *args: str) -> tuple[float, int, str, float]:
    """Wall time, exit status, output and peak RSS (MB) of one pytest session in a fresh
    interpreter (GNU time's maximum resident set size)."""
    # as on an installed package: byte code cached (a PYTHONDONTWRITEBYTECODE environment
    # would make every run recompile every module, pytest's assertion rewriting included)
    env = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
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
    lines = completed.stderr.strip().splitlines()
    peak_kb = float(lines[-1]) if TIME_PREFIX and lines and lines[-1].isdigit() else float("nan")
    return seconds, completed.returncode, completed.stdout, peak_kb / 1024
