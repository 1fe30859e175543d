"""Re-record ``tests/fixtures/codex/`` with the real Codex CLI against ``tests/codex_peer.py``.

    python -m tests.codex_record            # needs `codex` on PATH; writes the fixtures

Each scenario runs ``codex exec --json`` (and ``codex exec resume`` for later turns) with a
throw-away ``CODEX_HOME`` whose ``config.toml`` points Codex at the local Responses server and
attaches the peer's MCP server. Stdout is saved verbatim (``<scenario>.jsonl``: the turns'
streams one after the other); the server's per-request token counts, grouped by turn, go
to ``server-usage.json``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
FIXTURES = HERE / "fixtures" / "codex"
PEER = HERE / "codex_peer.py"

SCENARIOS: dict[str, list[str]] = {
    "first-turn": ["What is the maximum pressure of the Nimbus?"],
    "resumed-ten-turns": [
        "Question 1: the maximum pressure of the Nimbus?",
        "Question 2: and its operating temperature?",
        "KB:Nimbus operating temperature",
        "Question 4: and the weight?",
        "RUN:echo 12 kg",
        "Question 6: which support hours?",
        "Question 7: in French please.",
        "KB:support hours",
        "Question 9: summarise the answers so far.",
        "Question 10: thanks, that is all.",
    ],
    "command-execution": ["RUN:echo nimbus-16-bar; exit 3"],
    "mcp-tool-call": ["KB:Nimbus maximum pressure"],
    "web-search": ["WEB:Nimbus datasheet"],
    "turn-failed": ["FAIL mid-stream"],
    "resumed-turn-failed": ["Question 1: the pressure?", "FAIL on the second turn"],
    "http-500": ["HTTP500 please"],
    "dash-prompt": ["-v is this taken as an option?", "--help and this one?"],
}

OPTIONS = ["--json", "--skip-git-repo-check", "-c", 'web_search="disabled"']


def config_toml(port: int) -> str:
    return f"""\
model = "local-model"
model_provider = "local"

[model_providers.local]
name = "local"
base_url = "http://127.0.0.1:{port}/v1"
env_key = "LOCAL_KEY"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0

[mcp_servers.kb]
command = {json.dumps(sys.executable)}
args = [{json.dumps(str(PEER))}, "mcp"]
required = true

[mcp_servers.kb.tools.search]
approval_mode = "approve"
"""


def record(name: str, prompts: list[str]) -> list[list[dict[str, Any]]]:
    with tempfile.TemporaryDirectory() as tmp:
        home, work, log = Path(tmp, "home"), Path(tmp, "work"), Path(tmp, "requests.jsonl")
        home.mkdir()
        work.mkdir()
        log.touch()
        server = subprocess.Popen(
            [sys.executable, str(PEER), "serve", "--port", "0", "--log", str(log)],
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            assert server.stdout is not None
            port = int(server.stdout.readline())
            (home / "config.toml").write_text(config_toml(port), encoding="utf-8")
            env = {**os.environ, "CODEX_HOME": str(home), "HOME": str(home), "LOCAL_KEY": "local"}
            streams: list[str] = []
            per_turn: list[list[dict[str, Any]]] = []
            thread_id = ""
            for number, prompt in enumerate(prompts):
                if number == 0:
                    argv = ["codex", "exec", *OPTIONS, "-C", str(work), "-s", "read-only"]
                    argv += ["--", prompt]
                else:
                    argv = ["codex", "exec", "resume", *OPTIONS]
                    argv += ["-c", 'sandbox_mode="read-only"', "--", thread_id, prompt]
                seen = len(log.read_text(encoding="utf-8").splitlines())
                run = subprocess.run(
                    argv,
                    cwd=work,
                    env=env,
                    stdin=subprocess.DEVNULL,
                    capture_output=True,
                    text=True,
                    timeout=120,
                )
                streams.append(run.stdout)
                events = [json.loads(line) for line in run.stdout.splitlines() if line.strip()]
                for event in events:
                    if event.get("type") == "thread.started":
                        thread_id = thread_id or event["thread_id"]
                requests = [
                    json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()
                ][seen:]
                per_turn.append([r["usage"] for r in requests if "usage" in r])
                print(name, number, "exit", run.returncode, run.stderr.strip()[-300:])
        finally:
            server.terminate()
            server.wait()
    (FIXTURES / f"{name}.jsonl").write_text("".join(streams), encoding="utf-8")
    return per_turn


def main() -> None:
    FIXTURES.mkdir(parents=True, exist_ok=True)
    chosen = sys.argv[1:] or list(SCENARIOS)
    usage_path = FIXTURES / "server-usage.json"
    usage = json.loads(usage_path.read_text(encoding="utf-8")) if usage_path.exists() else {}
    version = subprocess.run(["codex", "--version"], capture_output=True, text=True).stdout
    for name in chosen:
        usage[name] = {
            "prompts": SCENARIOS[name],
            "per_turn_requests": record(name, SCENARIOS[name]),
        }
    usage["codex_version"] = version.strip()
    usage_path.write_text(json.dumps(usage, indent=1, sort_keys=True) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
