"""The demo reference runner reports usage as Codex does: running totals on resumed turns."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_ragv2.systems.command import CommandConfig, CommandRunner
from ragv2_demo.engine import DemoIndex
from ragv2_demo.server import DemoServer

CORPUS = Path(__file__).resolve().parents[2] / "corpus"


@pytest.fixture(scope="module")
def server() -> Iterator[DemoServer]:
    with DemoServer(DemoIndex.from_corpus(CORPUS)) as running:
        yield running


def test_resumed_reference_turns_report_their_own_usage(server: DemoServer, tmp_path: Path) -> None:
    state = tmp_path / "threads"
    base = [
        sys.executable, "-m", "ragv2_demo.reference", "--url", server.url,
        "--variant", "v2", "--corpus", str(CORPUS / "nimbus-robotics"),
        "--state-dir", str(state),
    ]  # fmt: skip
    config = CommandConfig(
        adapter="command",
        argv=[*base, "{prompt}"],
        resume_argv=[*base, "--resume", "{thread_id}", "{prompt}"],
        timeout_s=30,
    )
    prompts = [
        "What is the runtime of the Nimbus X2 on a single battery charge?",
        "And how long does it take to charge?",
        "What is its maximum payload?",
    ]
    transcript = CommandRunner("demo-reference", config).converse(prompts)

    assert transcript.ok, transcript.error
    [thread_file] = state.iterdir()
    own = json.loads(thread_file.read_text(encoding="utf-8"))["turn_usage"]
    assert len(own) == 3
    assert [turn.usage for turn in transcript.turns] == own
    # what the runner printed: the thread's running total, as Codex does
    printed = [
        next(e for e in turn.exchanges[0].response_body if e.get("type") == "turn.completed")
        for turn in transcript.turns
    ]
    assert printed[2]["usage"]["input_tokens"] == sum(u["input_tokens"] for u in own)
    assert printed[2]["usage"]["input_tokens"] > own[2]["input_tokens"]
    assert transcript.turns[2].usage_running_total == printed[2]["usage"]
