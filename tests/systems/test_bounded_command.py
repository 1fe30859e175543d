"""The command adapter's bounds against real subprocesses: stdout and stderr within
max_output_mb (a line that never ends too), the process killed on a breach, and the
conversation's total deadline."""

from __future__ import annotations

import json
import sys
import textwrap
import time
import tracemalloc
from pathlib import Path
from typing import Any

import pytest

from pytest_ragv2.systems.command import CUT_KEY, CommandConfig, CommandRunner
from pytest_ragv2.systems.transcripts import Transcript

MB = 1024 * 1024

_PRELUDE = """\
import json, os, sys, time

def emit(event):
    sys.stdout.write(json.dumps(event) + "\\n")
    sys.stdout.flush()

open(os.path.join(os.path.dirname(sys.argv[0]), "pid"), "w").write(str(os.getpid()))
emit({"type": "thread.started", "thread_id": "t-1"})
emit({"type": "item.completed",
      "item": {"id": "item_0", "type": "agent_message", "text": "Avant la fin"}})
"""


def _converse(tmp_path: Path, body: str, prompts: list[str], **config: Any) -> Transcript:
    script = tmp_path / "system.py"
    script.write_text(_PRELUDE + textwrap.dedent(body), encoding="utf-8")
    settings: dict[str, Any] = {
        "adapter": "command",
        "argv": [sys.executable, str(script), "{prompt}"],
        "timeout_s": 60.0,
        **config,
    }
    runner = CommandRunner("codex-like", CommandConfig.model_validate(settings))
    return runner.converse(prompts)


def _gone(pid: int, seconds: float = 5.0) -> bool:
    """Whether ``pid`` stopped running (a zombie waiting for its reaper counts as gone)."""
    until = time.monotonic() + seconds
    while time.monotonic() < until:
        try:
            stat = Path(f"/proc/{pid}/stat").read_bytes()
        except OSError:
            return True
        if stat[stat.rindex(b")") + 2 :].split()[0] in (b"Z", b"X"):
            return True
        time.sleep(0.02)
    return False


ENDLESS_LINE = """\
sys.stdout.write('{"type": "item.completed", "item": {"type": "agent_message", "text": "')
while True:
    sys.stdout.write("a" * 65536)
"""
ENDLESS_LINES = """\
while True:
    emit({"type": "item.completed", "item": {"type": "reasoning", "text": "b" * 500}})
"""
ENDLESS_STDERR = """\
while True:
    sys.stderr.write("warning: " + "c" * 1000 + "\\n")
"""


@pytest.mark.parametrize(
    ("body", "stream"),
    [(ENDLESS_LINE, "stdout"), (ENDLESS_LINES, "stdout"), (ENDLESS_STDERR, "stderr")],
    ids=["one-endless-line", "endless-lines", "endless-stderr"],
)
@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux /proc")
def test_output_over_max_output_mb_kills_the_process_and_keeps_what_came_before(
    tmp_path: Path, body: str, stream: str
) -> None:
    transcript = _converse(tmp_path, body, ["Q1", "Q2"], max_output_mb=1)

    first, second = transcript.turns
    assert first.error is not None
    assert first.error.kind == "too_large"
    assert f"{stream} exceeded {MB:,} bytes (max_output_mb)" in first.error.message
    events = first.exchanges[0].response_body
    assert events[0] == {"type": "thread.started", "thread_id": "t-1"}
    assert events[1]["item"]["text"] == "Avant la fin"
    assert CUT_KEY in events[-1]
    assert first.partial_answer == "Avant la fin"  # shown, never scored
    assert first.answer == ""
    assert len(first.stderr_tail) <= 2000
    assert second.ran is False
    assert _gone(int((tmp_path / "pid").read_text()))


def test_an_endless_line_is_read_in_bounded_memory(tmp_path: Path) -> None:
    tracemalloc.start()
    try:
        transcript = _converse(tmp_path, ENDLESS_LINE, ["Q1"], max_output_mb=4)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert transcript.turns[0].error is not None
    assert transcript.turns[0].error.kind == "too_large"
    assert peak < 24 * MB


def test_output_within_the_bound_is_read_whole(tmp_path: Path) -> None:
    body = """\
    for _ in range(2000):
        emit({"type": "item.completed", "item": {"type": "reasoning", "text": "d" * 400}})
    sys.stdout.write(json.dumps({"type": "turn.completed", "usage": {"input_tokens": 3}}))
    """  # ~0.9 MB, and a last line without its newline
    transcript = _converse(tmp_path, body, ["Q1"], max_output_mb=1)
    (turn,) = transcript.turns
    assert turn.error is None
    assert turn.answer == "Avant la fin"
    assert turn.usage == {"input_tokens": 3}
    assert len(turn.exchanges[0].response_body) == 2003


def test_the_conversation_deadline_kills_the_turn_under_way(tmp_path: Path) -> None:
    body = """\
    if sys.argv[1] == "Q1":
        emit({"type": "turn.completed", "usage": {}})
    else:
        time.sleep(60)
    """
    transcript = _converse(
        tmp_path, body, ["Q1", "Q2", "Q3"], timeout_s=60.0, conversation_timeout_s=1.5
    )

    first, second, third = transcript.turns
    assert first.error is None
    assert first.answer == "Avant la fin"
    assert second.error is not None
    assert second.error.kind == "timeout"
    assert "conversation_timeout_s = 1.5" in second.error.message
    assert third.ran is False
    assert _gone(int((tmp_path / "pid").read_text()))


def test_a_long_agent_message_is_stored_once_in_the_raw_run(tmp_path: Path) -> None:
    body = """\
    emit({"type": "item.completed",
          "item": {"id": "item_1", "type": "agent_message", "text": "é" * 300_000}})
    emit({"type": "turn.completed", "usage": {}})
    """
    transcript = _converse(tmp_path, body, ["Q1"])
    (turn,) = transcript.turns
    assert turn.answer == "é" * 300_000
    line = json.dumps(transcript.to_json(), ensure_ascii=False)
    assert len(line) < 1.2 * 300_000
    back = Transcript.from_json(json.loads(line))
    assert back.turns[0].exchanges[0].response_body == turn.exchanges[0].response_body
