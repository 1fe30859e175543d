"""The README's Codex system, run with the real ``codex`` CLI against our local Responses server
(``tests/codex_peer.py``). Skipped when ``codex`` is not on ``PATH`` (CI does not install it)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import time
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from pytest_ragv2.systems.command import CommandConfig, CommandRunner

pytestmark = pytest.mark.skipif(shutil.which("codex") is None, reason="codex is not installed")

HERE = Path(__file__).resolve().parents[1]
PEER = HERE / "codex_peer.py"
README = (HERE.parent / "README.md").read_text(encoding="utf-8")


@dataclass
class Peer:
    home: Path
    work: Path
    log: Path
    mcp_pid_file: Path

    def requests(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.log.read_text("utf-8").splitlines()]


@pytest.fixture
def peer(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Peer]:
    home, work, log = tmp_path / "home", tmp_path / "work", tmp_path / "requests.jsonl"
    home.mkdir()
    work.mkdir()
    log.touch()
    pid_file = tmp_path / "mcp.pid"
    server = subprocess.Popen(
        [sys.executable, str(PEER), "serve", "--port", "0", "--log", str(log)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None
        port = int(server.stdout.readline())
        (home / "config.toml").write_text(
            f"""\
model = "local-model"
model_provider = "local"

[model_providers.local]
name = "local"
base_url = "http://127.0.0.1:{port}/v1"
env_key = "LOCAL_LLM_KEY"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0

[mcp_servers.kb]
command = {json.dumps(sys.executable)}
args = [{json.dumps(str(PEER))}, "mcp", "--pid-file", {json.dumps(str(pid_file))}]
required = true

[mcp_servers.kb.tools.search]
approval_mode = "approve"
""",
            encoding="utf-8",
        )
        monkeypatch.setenv("CODEX_HOME", str(home))
        monkeypatch.setenv("LOCAL_LLM_KEY", "local")
        yield Peer(home=home, work=work, log=log, mcp_pid_file=pid_file)
    finally:
        server.terminate()
        server.wait()


def readme_codex_config(**changes: Any) -> CommandConfig:
    """The README's `codex` system's chat adapter, as written there."""
    blocks = [tomllib.loads(block) for block in re.findall(r"```toml\n(.*?)```", README, re.S)]
    [chat] = [
        block["tool"]["ragv2"]["systems"]["codex"]["chat"]
        for block in blocks
        if "codex" in block.get("tool", {}).get("ragv2", {}).get("systems", {})
    ]
    return CommandConfig.model_validate({**chat, **changes})


def test_the_readme_codex_system_resumes_one_thread_with_per_turn_usage(peer: Peer) -> None:
    config = readme_codex_config(cwd=str(peer.work), timeout_s=120)
    prompts = ["Question 1: the pressure?", "-v is a prompt, not an option", "KB:Nimbus"]
    transcript = CommandRunner("codex", config).converse(prompts)

    assert transcript.ok, (transcript.error, transcript.turns[-1].stderr_tail)
    first, second, third = transcript.turns
    assert first.answer == "Answer: Question 1: the pressure?"
    assert second.answer == "Answer: -v is a prompt, not an option"
    assert third.answer == "From the tool: 16 bar [1]."
    assert [call.name for call in third.tool_calls] == ["kb.search"]
    assert third.evidence
    assert first.thread_id is not None
    assert {turn.thread_id for turn in transcript.turns} == {first.thread_id}
    # the server's own counts, request by request, grouped by the turn that made them
    requests = [r for r in peer.requests() if "usage" in r]
    by_turn = [
        [r["usage"] for r in requests if r["prompt"] == prompt]
        for prompt in ["Question 1: the pressure?", "-v is a prompt, not an option", "KB:Nimbus"]
    ]
    assert [len(turn) for turn in by_turn] == [1, 1, 2]
    for turn, used in zip(transcript.turns, by_turn, strict=True):
        assert turn.usage["input_tokens"] == sum(u["input_tokens"] for u in used)
        assert turn.usage["output_tokens"] == sum(u["output_tokens"] for u in used)
        assert turn.usage["cached_input_tokens"] == sum(
            u["input_tokens_details"]["cached_tokens"] for u in used
        )
    assert third.usage_running_total["input_tokens"] == sum(
        r["usage"]["input_tokens"] for r in requests
    )
    # the resumed turns kept the options of the first: web search stayed off (Codex offers it
    # as a tool without a name)
    tools = [r["tools"] for r in peer.requests() if "tools" in r]
    assert all(None not in names for names in tools), tools


def _running(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return False
    return stat[stat.rindex(b")") + 2 :].split()[0] not in (b"Z", b"X")


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux /proc")
def test_a_timeout_kills_the_mcp_server_codex_started_in_its_own_group(peer: Peer) -> None:
    config = readme_codex_config(cwd=str(peer.work), timeout_s=6)
    transcript = CommandRunner("codex", config).converse(["KB:slow search"])

    error = transcript.turns[0].error
    assert error is not None
    assert error.kind == "timeout"
    pid, group, _session = map(int, peer.mcp_pid_file.read_text().split())
    assert group == pid  # a process group of its own: a killpg of the turn would miss it
    gone_by = time.monotonic() + 5
    while _running(pid) and time.monotonic() < gone_by:
        time.sleep(0.05)
    assert not _running(pid)
