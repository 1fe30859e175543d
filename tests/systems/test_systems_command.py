"""The command adapter against real subprocesses printing Codex-shaped JSON lines."""

from __future__ import annotations

import base64
import json
import os
import sys
import textwrap
import time
import urllib.parse
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from pytest_ragv2.systems.codex_events import NON_JSON_KEY
from pytest_ragv2.systems.command import CommandConfig, CommandRunner
from pytest_ragv2.systems.secret_policy import REDACTED

USAGE = {
    "input_tokens": 1200,
    "cached_input_tokens": 800,
    "output_tokens": 95,
    "reasoning_output_tokens": 40,
}


def _script(tmp_path: Path, body: str, name: str = "system.py") -> Path:
    """A Python script with an ``emit(event)`` helper writing one UTF-8 JSON line."""
    prelude = textwrap.dedent(
        """\
        import json, os, subprocess, sys, time

        def emit(event):
            line = json.dumps(event, ensure_ascii=False) + "\\n"
            sys.stdout.buffer.write(line.encode("utf-8"))
            sys.stdout.buffer.flush()

        """
    )
    path = tmp_path / name
    path.write_text(prelude + textwrap.dedent(body), encoding="utf-8")
    return path


def _runner(script: Path, timeout_s: float = 10.0, env_pass: list[str] | None = None) -> Any:
    config = CommandConfig(
        adapter="command",
        argv=[sys.executable, str(script), "{prompt}"],
        cwd=str(script.parent),
        env_pass=env_pass or [],
        timeout_s=timeout_s,
    )
    return CommandRunner("codex-like", config)


def _answer_script(tmp_path: Path, answer_expr: str) -> Path:
    return _script(
        tmp_path,
        f"""\
        emit({{"type": "thread.started", "thread_id": "t-1"}})
        emit({{"type": "turn.started"}})
        emit({{"type": "item.completed",
              "item": {{"id": "item_0", "type": "agent_message", "text": {answer_expr}}}}})
        emit({{"type": "turn.completed", "usage": {{"input_tokens": 1, "output_tokens": 2}}}})
        """,
    )


def test_answer_with_command_execution_mcp_call_and_usage(tmp_path: Path) -> None:
    script = _script(
        tmp_path,
        f"""\
        prompt = sys.argv[1]
        emit({{"type": "thread.started", "thread_id": "0199-thread"}})
        emit({{"type": "turn.started"}})
        emit({{"type": "item.completed",
              "item": {{"id": "item_0", "type": "reasoning", "text": "**Looking up**"}}}})
        emit({{"type": "item.started", "item": {{"id": "item_1", "type": "command_execution",
              "command": "bash -lc 'rg -n PN-4471 docs'", "aggregated_output": "",
              "exit_code": None, "status": "in_progress"}}}})
        emit({{"type": "item.completed", "item": {{"id": "item_1", "type": "command_execution",
              "command": "bash -lc 'rg -n PN-4471 docs'",
              "aggregated_output": "docs/spec.md:12:PN-4471 max 16 bar\\n",
              "exit_code": 0, "status": "completed"}}}})
        emit({{"type": "item.completed", "item": {{"id": "item_2", "type": "agent_message",
              "text": "Searching the catalogue."}}}})
        emit({{"type": "item.completed", "item": {{"id": "item_3", "type": "mcp_tool_call",
              "server": "ragv2", "tool": "search", "arguments": {{"query": prompt, "k": 5}},
              "result": {{"content": [{{"type": "text", "text": "spec.md p.3"}},
                                      {{"type": "text", "text": "datasheet.pdf p.1"}}]}},
              "error": None, "status": "completed"}}}})
        emit({{"type": "item.completed", "item": {{"id": "item_4", "type": "agent_message",
              "text": "PN-4471 is rated 16 bar [spec.md p.3]."}}}})
        emit({{"type": "turn.completed", "usage": {json.dumps(USAGE)}}})
        """,
    )
    transcript = _runner(script).converse(["max pressure of PN-4471?"])

    assert transcript.ok
    (turn,) = transcript.turns
    assert turn.answer == "PN-4471 is rated 16 bar [spec.md p.3]."  # the last message wins
    assert [call.to_json() for call in turn.tool_calls] == [
        {
            "id": "item_1",
            "name": "shell",
            "arguments": {"command": "bash -lc 'rg -n PN-4471 docs'"},
            "result": "docs/spec.md:12:PN-4471 max 16 bar\n",
            "status": "completed",
            "exit_code": 0,
        },
        {
            "id": "item_3",
            "name": "ragv2.search",
            "arguments": {"query": "max pressure of PN-4471?", "k": 5},
            "result": "spec.md p.3\ndatasheet.pdf p.1",
            "status": "completed",
        },
    ]
    assert turn.usage == USAGE
    (exchange,) = turn.exchanges
    assert exchange.request == {
        "argv": [sys.executable, str(script), "max pressure of PN-4471?"],
        "cwd": str(tmp_path),
    }
    assert exchange.status_code == 0
    assert [event["type"] for event in exchange.response_body] == [
        "thread.started",
        "turn.started",
        "item.completed",
        "item.started",
        "item.completed",
        "item.completed",
        "item.completed",
        "item.completed",
        "turn.completed",
    ]
    assert 0 < turn.latency_s <= transcript.latency_s
    assert transcript.final_answer == turn.answer


def test_web_search_item_and_failed_mcp_call(tmp_path: Path) -> None:
    script = _script(
        tmp_path,
        """\
        emit({"type": "item.completed", "item": {"id": "item_0", "type": "web_search",
              "query": "PN-4471 datasheet"}})
        emit({"type": "item.completed", "item": {"id": "item_1", "type": "mcp_tool_call",
              "server": "ragv2", "tool": "fetch", "arguments": {"id": "x"}, "result": None,
              "error": {"message": "unknown document x"}, "status": "failed"}})
        emit({"type": "item.completed", "item": {"id": "item_2", "type": "agent_message",
              "text": "No datasheet found."}})
        emit({"type": "turn.completed", "usage": {"input_tokens": 10, "output_tokens": 3}})
        """,
    )
    transcript = _runner(script).converse(["find it"])

    assert transcript.ok
    assert [call.to_json() for call in transcript.tool_calls] == [
        {
            "id": "item_0",
            "name": "web_search",
            "arguments": {"query": "PN-4471 datasheet"},
            "result": None,
        },
        {
            "id": "item_1",
            "name": "ragv2.fetch",
            "arguments": {"id": "x"},
            "result": "error: unknown document x",
            "status": "failed",
        },
    ]
    assert transcript.turns[0].usage == {"input_tokens": 10, "output_tokens": 3}


def test_turn_failed_is_an_error_and_stops_the_conversation(tmp_path: Path) -> None:
    script = _script(
        tmp_path,
        """\
        emit({"type": "turn.started"})
        emit({"type": "item.completed", "item": {"id": "item_0", "type": "agent_message",
              "text": "Partial"}})
        emit({"type": "error", "message": "stream disconnected"})
        emit({"type": "turn.failed", "error": {"message": "model overloaded"}})
        """,
    )
    transcript = _runner(script).converse(["first", "second"])

    first, second = transcript.turns
    assert first.error is not None
    assert first.error.kind == "adapter"
    assert first.error.message == "turn.failed: model overloaded"
    # what was printed before the failure is kept to be seen, not scored as the answer
    assert first.answer == ""
    assert first.partial_answer == "Partial"
    assert transcript.final_answer == ""
    assert second.ran is False
    assert second.answer == ""
    assert len(first.exchanges) == 1
    assert second.exchanges == []


def test_error_event_followed_by_turn_completed_is_a_retried_stream_error(
    tmp_path: Path,
) -> None:
    script = _script(
        tmp_path,
        """\
        emit({"type": "turn.started"})
        emit({"type": "error", "message": "Reconnecting... 1/5"})
        emit({"type": "item.completed", "item": {"id": "item_0", "type": "agent_message",
              "text": "Done"}})
        emit({"type": "turn.completed", "usage": {"input_tokens": 5, "output_tokens": 1}})
        """,
    )
    without_end = _script(
        tmp_path,
        """\
        emit({"type": "turn.started"})
        emit({"type": "error", "message": "stream disconnected"})
        """,
        name="without_end.py",
    )
    retried = _runner(script).converse(["q"])
    failed = _runner(without_end).converse(["q"]).turns[0].error

    assert retried.ok
    assert retried.final_answer == "Done"
    assert retried.turns[0].warnings == ["error event: Reconnecting... 1/5"]
    assert failed is not None
    assert failed.kind == "adapter"
    assert failed.message == "error: stream disconnected"


def test_non_zero_exit_is_an_error_with_stderr(tmp_path: Path) -> None:
    script = _script(
        tmp_path,
        """\
        emit({"type": "turn.started"})
        sys.stderr.write("fatal: not logged in\\n")
        sys.exit(3)
        """,
    )
    transcript = _runner(script).converse(["q"])

    error = transcript.turns[0].error
    assert error is not None
    assert error.kind == "adapter"
    assert error.message == "exit status 3: fatal: not logged in"
    assert transcript.turns[0].stderr_tail == "fatal: not logged in\n"
    assert transcript.turns[0].exchanges[0].status_code == 3


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_timeout_kills_the_whole_process_group(tmp_path: Path) -> None:
    script = _script(
        tmp_path,
        """\
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
        emit({"type": "child", "pid": child.pid})
        emit({"type": "item.completed", "item": {"id": "item_0", "type": "agent_message",
              "text": "Half an answer"}})
        time.sleep(60)
        """,
    )
    transcript = _runner(script, timeout_s=1.0).converse(["q", "never sent"])

    turn = transcript.turns[0]
    assert turn.error is not None
    assert turn.error.kind == "timeout"
    assert turn.answer == ""
    assert turn.partial_answer == "Half an answer"
    assert transcript.turns[1].ran is False
    assert turn.latency_s >= 1.0  # it ran to its deadline; the 60 s sleep was cut
    child_pid = turn.exchanges[0].response_body[0]["pid"]
    gone_by = time.monotonic() + 5.0  # killed at once, but reaped by init (here ~1 s later)
    while _pid_alive(child_pid) and time.monotonic() < gone_by:
        time.sleep(0.02)
    with pytest.raises(ProcessLookupError):
        os.kill(child_pid, 0)
    assert turn.exchanges[0].status_code is not None
    assert turn.exchanges[0].status_code < 0


def test_stdin_is_closed(tmp_path: Path) -> None:
    script = _answer_script(tmp_path, '"stdin=" + repr(sys.stdin.read())')
    transcript = _runner(script, timeout_s=5.0).converse(["q"])

    assert transcript.ok  # an open stdin would block the read until the 5 s timeout
    assert transcript.final_answer == "stdin=''"


def test_environment_is_stripped_except_passed_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RAGV2_TEST_SECRET", "hunter2-secret")
    monkeypatch.setenv("RAGV2_TEST_PASSED", "visible")
    script = _answer_script(
        tmp_path,
        'json.dumps([os.environ.get("RAGV2_TEST_SECRET"), os.environ.get("RAGV2_TEST_PASSED"), '
        'len(os.environ.get("RAGV2_TEST_PASSED", "")), os.environ["PATH"] == "'
        + os.environ["PATH"]
        + '"])',
    )
    transcript = _runner(script, env_pass=["RAGV2_TEST_PASSED"]).converse(["q"])

    assert transcript.ok
    # the command got the passed value; what it printed of it is a secret's
    assert json.loads(transcript.final_answer) == [None, REDACTED, len("visible"), True]


def test_what_a_command_prints_of_its_env_pass_values_is_replaced_everywhere(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    key = 'llm-"key"/9f3b+c71'  # its JSON-escaped and percent-encoded forms differ
    monkeypatch.setenv("LOCAL_LLM_KEY", key)
    monkeypatch.setenv("TINY", "Kx4w2")  # 5 characters: replaced as a word
    script = _script(
        tmp_path,
        """\
        import base64, urllib.parse
        key, tiny = os.environ["LOCAL_LLM_KEY"], os.environ["TINY"]
        shown = (f"{key} {tiny} {urllib.parse.quote(key, safe='')} "
                 f"{base64.b64encode(key.encode()).decode()} Kx4w2x")
        print("stderr " + shown, file=sys.stderr, flush=True)
        emit({"type": "thread.started", "thread_id": "t-1"})
        emit({"type": "item.completed", "item": {"id": "c", "type": "command_execution",
              "command": "env", "aggregated_output": shown, "exit_code": 0,
              "status": "completed"}})
        print("plain " + shown, flush=True)
        emit({"type": "item.completed", "item": {"id": "a", "type": "agent_message",
              "text": "answer " + shown}})
        emit({"type": "turn.completed", "usage": {"input_tokens": 1, "output_tokens": 2}})
        sys.exit(3)
        """,
    )
    transcript = _runner(script, env_pass=["LOCAL_LLM_KEY", "TINY", "PATH"]).converse(["q"])

    [turn] = transcript.turns
    recorded = json.dumps(turn.to_json()) + repr(turn)  # every field, the exchange too
    for form in (key, json.dumps(key)[1:-1], urllib.parse.quote(key, safe=""), "Kx4w2 "):
        assert form not in recorded
    assert base64.b64encode(key.encode()).decode().rstrip("=") not in recorded
    assert "Kx4w2x" in recorded  # inside a longer word: not the short secret
    assert turn.error is not None
    assert turn.error.message.startswith("exit status 3")
    assert f"stderr {REDACTED} {REDACTED}" in turn.stderr_tail
    assert turn.partial_answer.startswith(f"answer {REDACTED} {REDACTED} {REDACTED} {REDACTED}")


def test_unicode_answer_and_prompt_are_intact(tmp_path: Path) -> None:
    script = _answer_script(tmp_path, '"Réponse : " + sys.argv[1] + " → 1 689 k€, 99,7 % ✓"')
    transcript = _runner(script).converse(["débit du 日本 modèle ?"])

    assert transcript.ok
    assert transcript.final_answer == "Réponse : débit du 日本 modèle ? → 1 689 k€, 99,7 % ✓"


def test_each_turn_is_a_fresh_process_with_its_prompt(tmp_path: Path) -> None:
    script = _answer_script(tmp_path, '"pid " + str(os.getpid()) + ": " + sys.argv[1]')
    transcript = _runner(script).converse(["one", "two"])

    assert transcript.ok
    answers = [turn.answer for turn in transcript.turns]
    assert [answer.split(": ")[1] for answer in answers] == ["one", "two"]
    assert answers[0].split(":")[0] != answers[1].split(":")[0]


def test_non_json_line_is_recorded_and_only_malformed_without_turn_completed(
    tmp_path: Path,
) -> None:
    tolerated = _script(
        tmp_path,
        """\
        print("Reading prompt from stdin...", flush=True)
        emit({"type": "item.completed", "item": {"id": "i", "type": "agent_message",
              "text": "ok"}})
        emit({"type": "turn.completed", "usage": {}})
        """,
        name="tolerated.py",
    )
    broken = _script(
        tmp_path,
        """\
        print("panic: something broke", flush=True)
        emit({"type": "turn.started"})
        """,
        name="broken.py",
    )
    ok_turn = _runner(tolerated).converse(["q"]).turns[0]
    bad_turn = _runner(broken).converse(["q"]).turns[0]

    assert ok_turn.error is None
    assert ok_turn.answer == "ok"
    assert ok_turn.exchanges[0].response_body[0] == {NON_JSON_KEY: "Reading prompt from stdin..."}
    assert bad_turn.error is not None
    assert bad_turn.error.kind == "malformed"
    assert bad_turn.error.message == "1 non-JSON stdout line(s) and no turn.completed"


def test_missing_command_is_an_adapter_error(tmp_path: Path) -> None:
    config = CommandConfig(adapter="command", argv=[str(tmp_path / "no-such-codex"), "{prompt}"])
    transcript = CommandRunner("missing", config).converse(["q"])

    error = transcript.turns[0].error
    assert error is not None
    assert error.kind == "adapter"
    assert error.message.startswith("cannot start ")


def test_config_rejects_unknown_keys_and_defaults() -> None:
    config = CommandConfig.model_validate({"adapter": "command", "argv": ["codex", "{prompt}"]})
    assert (config.cwd, config.env_pass, config.timeout_s, config.events) == (
        None,
        [],
        300.0,
        "codex",
    )
    with pytest.raises(ValidationError):
        CommandConfig.model_validate({"adapter": "command", "argv": ["x"], "stdin": "pipe"})


def test_an_interrupt_while_waiting_kills_the_process_group_and_propagates(
    tmp_path: Path,
) -> None:
    import signal

    pid_file = tmp_path / "child.pid"
    script = _script(
        tmp_path,
        f"""\
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
        open({str(pid_file)!r}, "w").write(str(child.pid))
        time.sleep(60)
        """,
    )

    def interrupt(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGALRM, interrupt)
    signal.setitimer(signal.ITIMER_REAL, 1.0)
    try:
        with pytest.raises(KeyboardInterrupt):
            _runner(script, timeout_s=30.0).converse(["q"])
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    child_pid = int(pid_file.read_text())
    gone_by = time.monotonic() + 5.0
    while _pid_alive(child_pid) and time.monotonic() < gone_by:
        time.sleep(0.02)
    assert not _pid_alive(child_pid)


def test_later_turns_resume_the_first_turns_thread(tmp_path: Path) -> None:
    script = _script(
        tmp_path,
        """\
        args = sys.argv[1:]
        if args[0] == "--resume":
            thread, prompt = args[1], args[2]
            answer = "resumed " + thread + ": " + prompt
        else:
            thread, prompt = "t-123", args[0]
            answer = "new: " + prompt
        emit({"type": "thread.started", "thread_id": thread})
        emit({"type": "item.completed", "item": {"id": "i", "type": "agent_message",
              "text": answer}})
        emit({"type": "turn.completed", "usage": {}})
        """,
    )
    config = CommandConfig(
        adapter="command",
        argv=[sys.executable, str(script), "{prompt}"],
        resume_argv=[sys.executable, str(script), "--resume", "{thread_id}", "{prompt}"],
        timeout_s=10.0,
    )
    transcript = CommandRunner("codex-like", config).converse(["one", "two", "three"])
    assert [turn.answer for turn in transcript.turns] == [
        "new: one",
        "resumed t-123: two",
        "resumed t-123: three",
    ]
    assert transcript.turns[1].exchanges[0].request["argv"][-3:] == ["--resume", "t-123", "two"]


def test_resume_without_a_thread_id_is_an_error_of_the_second_turn(tmp_path: Path) -> None:
    script = _script(
        tmp_path,
        """\
        emit({"type": "item.completed", "item": {"id": "i", "type": "agent_message",
              "text": "no thread announced"}})
        emit({"type": "turn.completed", "usage": {}})
        """,
    )
    config = CommandConfig(
        adapter="command",
        argv=[sys.executable, str(script), "{prompt}"],
        resume_argv=[sys.executable, str(script), "{thread_id}", "{prompt}"],
        timeout_s=10.0,
    )
    transcript = CommandRunner("codex-like", config).converse(["one", "two", "three"])
    first, second, third = transcript.turns
    assert first.error is None
    assert second.error is not None
    assert second.error.message == "no thread id from the first turn to resume"
    assert third.ran is False


# a turn that ends well, answering "done" (a script's last lines)
_DONE = (
    'emit({"type": "thread.started", "thread_id": "t-1"}); '
    'emit({"type": "item.completed", "item": {"id": "i", "type": "agent_message", '
    '"text": "done"}}); '
    'emit({"type": "turn.completed", "usage": {"input_tokens": 1}})'
)


def _running(pid: int) -> bool:
    """Whether ``pid`` is a live process (a zombie waiting for its reaper is not)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return False
    return stat[stat.rindex(b")") + 2 :].split()[0] not in (b"Z", b"X")


def _wait_gone(pid: int, seconds: float = 5.0) -> bool:
    gone_by = time.monotonic() + seconds
    while _running(pid) and time.monotonic() < gone_by:
        time.sleep(0.02)
    return not _running(pid)


# a grandchild in a session (and process group) of its own that ignores SIGTERM, as an MCP
# server Codex starts lives in a process group of its own; its pid goes to a file
_STUBBORN = """\
import os, signal, subprocess, sys, time
stubborn = (
    "import os, signal, sys, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
    "open(sys.argv[1], 'w').write(f'{os.getpid()} {os.getsid(0)}'); time.sleep(120)"
)
subprocess.Popen([sys.executable, "-c", stubborn, sys.argv[1]], start_new_session=True,
                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
time.sleep(120)
"""


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux /proc")
def test_timeout_kills_a_stubborn_grandchild_in_its_own_session(tmp_path: Path) -> None:
    pid_file = tmp_path / "stubborn.pid"
    script = _script(
        tmp_path,
        f"""\
        middle = subprocess.Popen([sys.executable, "-c", {_STUBBORN!r}, {str(pid_file)!r}])
        emit({{"type": "thread.started", "thread_id": "t-1"}})
        time.sleep(120)
        """,
    )
    transcript = _runner(script, timeout_s=1.5).converse(["q"])

    error = transcript.turns[0].error
    assert error is not None
    assert error.kind == "timeout"
    stubborn, session = map(int, pid_file.read_text().split())
    assert session == stubborn  # a session (and process group) of its own
    assert _wait_gone(stubborn), "the setsid'd grandchild ignoring SIGTERM outlived the turn"


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux /proc")
def test_an_interrupt_kills_a_stubborn_grandchild_in_its_own_session(tmp_path: Path) -> None:
    import signal

    pid_file = tmp_path / "stubborn.pid"
    script = _script(
        tmp_path,
        f"""\
        subprocess.Popen([sys.executable, "-c", {_STUBBORN!r}, {str(pid_file)!r}])
        time.sleep(120)
        """,
    )

    def interrupt(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGALRM, interrupt)
    signal.setitimer(signal.ITIMER_REAL, 1.5)
    try:
        with pytest.raises(KeyboardInterrupt):
            _runner(script, timeout_s=30.0).converse(["q"])
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    assert _wait_gone(int(pid_file.read_text().split()[0]))


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux /proc")
def test_a_process_left_behind_by_a_finished_turn_is_killed(tmp_path: Path) -> None:
    """The command exits normally, its setsid'd helper (orphaned by then) does not."""
    pid_file = tmp_path / "stubborn.pid"
    script = _script(
        tmp_path,
        f"""\
        stubborn = (
            "import os, signal, sys, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
            "open(sys.argv[1], 'w').write(str(os.getpid())); time.sleep(120)"
        )
        subprocess.Popen([sys.executable, "-c", stubborn, {str(pid_file)!r}],
                         start_new_session=True, stdout=subprocess.DEVNULL)
        while not os.path.exists({str(pid_file)!r}):
            time.sleep(0.01)
        time.sleep(0.5)  # long enough to be seen while the command runs
        {_DONE}
        """,
    )
    transcript = _runner(script, timeout_s=10.0).converse(["q"])

    assert transcript.ok
    assert transcript.final_answer == "done"
    assert _wait_gone(int(pid_file.read_text()))


def _usage_script(tmp_path: Path) -> Path:
    """A Codex-like command whose resumed turns report the thread's running total."""
    return _script(
        tmp_path,
        """\
        args = sys.argv[1:]
        state = os.path.join(os.path.dirname(os.path.abspath(__file__)), "total.json")
        own = {"input_tokens": 100 * len(args[-1]), "cached_input_tokens": 10,
               "output_tokens": len(args[-1])}
        total = {}
        if args[0] == "resume":
            total = json.load(open(state))
        total = {k: total.get(k, 0) + v for k, v in own.items()}
        json.dump(total, open(state, "w"))
        emit({"type": "thread.started", "thread_id": "t-9"})
        emit({"type": "item.completed", "item": {"id": "i", "type": "agent_message",
              "text": json.dumps(own)}})
        emit({"type": "turn.completed", "usage": total})
        """,
    )


def test_resumed_turns_report_their_own_usage_and_keep_the_running_total(
    tmp_path: Path,
) -> None:
    script = _usage_script(tmp_path)
    config = CommandConfig(
        adapter="command",
        argv=[sys.executable, str(script), "new", "{prompt}"],
        resume_argv=[sys.executable, str(script), "resume", "{thread_id}", "{prompt}"],
        timeout_s=10.0,
    )
    prompts = ["a", "bbb", "cc", "dddd"]
    transcript = CommandRunner("codex-like", config).converse(prompts)

    assert transcript.ok
    own = [json.loads(turn.answer) for turn in transcript.turns]
    assert [turn.usage for turn in transcript.turns] == own
    assert transcript.turns[-1].usage_running_total == {
        "input_tokens": 1000,
        "cached_input_tokens": 40,
        "output_tokens": 10,
    }
    assert [turn.thread_id for turn in transcript.turns] == ["t-9"] * 4
    assert not any(turn.warnings for turn in transcript.turns)


def test_per_turn_usage_of_resumed_turns_can_be_kept_as_reported(tmp_path: Path) -> None:
    script = _usage_script(tmp_path)
    config = CommandConfig(
        adapter="command",
        argv=[sys.executable, str(script), "new", "{prompt}"],
        resume_argv=[sys.executable, str(script), "resume", "{thread_id}", "{prompt}"],
        resume_usage="per_turn",
        timeout_s=10.0,
    )
    transcript = CommandRunner("codex-like", config).converse(["a", "bb"])

    assert transcript.turns[1].usage == {
        "input_tokens": 300,
        "cached_input_tokens": 20,
        "output_tokens": 3,
    }
    assert transcript.turns[1].usage_running_total == {}


def test_a_usage_below_the_previous_total_is_kept_with_a_warning(tmp_path: Path) -> None:
    script = _script(
        tmp_path,
        """\
        emit({"type": "thread.started", "thread_id": "t-2"})
        emit({"type": "item.completed", "item": {"id": "i", "type": "agent_message",
              "text": "x"}})
        tokens = 50 if sys.argv[1] == "resume" else 80
        emit({"type": "turn.completed", "usage": {"input_tokens": tokens}})
        """,
    )
    config = CommandConfig(
        adapter="command",
        argv=[sys.executable, str(script), "new", "{prompt}"],
        resume_argv=[sys.executable, str(script), "resume", "{thread_id}", "{prompt}"],
        timeout_s=10.0,
    )
    second = CommandRunner("codex-like", config).converse(["a", "b"]).turns[1]

    assert second.usage == {"input_tokens": 50}
    assert second.warnings == [
        "usage below the previous turn's running total: kept as reported for this turn"
    ]


def test_a_failed_start_is_reported_by_its_error_line_not_its_backtrace(tmp_path: Path) -> None:
    script = _script(
        tmp_path,
        """\
        sys.stderr.write("Reading additional input from stdin...\\n")
        sys.stderr.write("Error: thread/start failed: required MCP servers failed to "
                         "initialize: kb\\n\\nStack backtrace:\\n" + "   0: <unknown>\\n" * 40)
        sys.exit(1)
        """,
    )
    turn = _runner(script).converse(["q"]).turns[0]

    assert turn.error is not None
    assert turn.error.message == (
        "exit status 1: thread/start failed: required MCP servers failed to initialize: kb"
    )
    assert turn.stderr_tail.endswith("   0: <unknown>\n")


# a daemon made the classic way, at once: fork, setsid, fork again, the middle process writes
# the daemon's pid and exits at once, so the daemon is an orphan in a session of its own
# before any scan could see it
_DAEMON = """\
import os, signal, sys, time
if os.fork() == 0:
    os.setsid()
    daemon = os.fork()
    if daemon == 0:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        devnull = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(devnull, fd)
        time.sleep(120)
    open(sys.argv[1], "w").write(str(daemon))
    os._exit(0)
os.wait()
"""

_SETSID_CHILD = (
    "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(120)"
)


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux /proc")
@pytest.mark.parametrize("way", ["double-fork", "setsid-child"])
def test_a_daemon_started_and_left_at_once_does_not_outlive_the_turn(
    tmp_path: Path, way: str
) -> None:
    """The command starts a helper that leaves its session at once and exits with no pause:
    no scan of the turn's processes ever saw the helper as the command's descendant."""
    pid_file = tmp_path / "daemon.pid"
    if way == "double-fork":
        start = f"subprocess.run([sys.executable, '-c', {_DAEMON!r}, {str(pid_file)!r}])"
    else:
        start = (
            f"child = subprocess.Popen([sys.executable, '-c', {_SETSID_CHILD!r}], "
            "start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL); "
            f"open({str(pid_file)!r}, 'w').write(str(child.pid))"
        )
    script = _script(
        tmp_path,
        f"""\
        {start}
        {_DONE}
        """,
    )
    transcript = _runner(script, timeout_s=10.0).converse(["q"])

    assert transcript.ok
    daemon = int(pid_file.read_text())
    assert _wait_gone(daemon), "the daemon the turn started outlived it"
