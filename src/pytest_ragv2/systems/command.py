"""A chat system run as a command that prints JSON lines (``codex exec --json`` and alike).

One ``converse`` call is one fresh conversation. Every turn starts a fresh process with the
turn's prompt substituted into ``argv``. With ``resume_argv`` the turns after the first run
that command instead, with the thread id the first turn's ``thread.started`` event announced
(Codex: ``codex exec resume --json -c ... -- <thread_id> "<prompt>"``; ``resume`` keeps none
of the first turn's ``-c`` options and rejects ``-s``, so they are repeated, the sandbox as
``-c sandbox_mode=...``, and ``--`` keeps a prompt starting with ``-`` a prompt), so a
multi-turn case stays one conversation; without it each turn is a process that does not see
the earlier turns. As for the other chat adapters, a failed turn stops the conversation and
the later turns are recorded as not run. Nothing raises out of ``converse``.

The process gets a closed standard input, a stripped environment (``PATH``, ``HOME``,
``LANG`` and the variables named in ``env_pass``) and a session of its own. Codex starts its
MCP servers in process groups of their own, so killing the command's process group is not
enough: every process of the turn (``process_tree``: the session's processes and every
descendant, whatever its group or session, looked up in ``/proc`` while the turn runs) is
signalled, on timeout (SIGTERM, then SIGKILL after ``KILL_GRACE_S``), on an interrupt and
when the turn ends normally: nothing started by a turn outlives it.

Standard output and standard error are read in chunks, never a whole line at once, and each
is bounded by ``max_output_mb``: past it the turn's processes are killed at once and the
turn is a ``too_large`` error keeping the complete lines printed before (a line that never
ends is bounded too). Only the end of standard error is kept. ``conversation_timeout_s``
bounds a conversation's turns together: a turn under way when it passes is killed as on
its own ``timeout_s``.

Codex mapping (``events: codex``), over ``item.completed`` events only:
- ``agent_message`` -> the answer. Codex may send several in one turn (progress notes, then
  the answer); the last one wins, as with ``codex exec --output-last-message``.
- ``command_execution`` -> ``ToolCall("shell", {"command": ...}, aggregated_output)`` with
  its ``status`` and ``exit_code``.
- ``mcp_tool_call`` -> ``ToolCall("<server>.<tool>", arguments, result)`` with its ``status``;
  the result's text content is joined, and a failed call's result is ``"error: <message>"``.
- ``web_search`` -> ``ToolCall("web_search", {"query": ...})``. Its object repeats the ``id``
  key (the item's, then the search call's): the first wins, the others are kept in the raw
  event under ``_duplicate_keys``.
- ``error`` -> a non-fatal warning on ``ChatTurn.warnings`` ("Model metadata ... not found").
- ``reasoning`` and unknown item types are ignored.
``turn.completed.usage`` gives the usage, integer counts under Codex's own names. On a
resumed turn Codex reports the thread's running total: the turn's ``usage`` is the
difference from the previous turn's total, which is kept as ``usage_running_total``
(``resume_usage = "per_turn"`` for a command that reports each turn alone). A tool result in
the knowledge-base tool's numbered-source JSON (``systems/kb_tool.py``) becomes the turn's
evidence, and the answer's ``[n]`` markers are resolved to those sources. The thread id and
the end of standard error are kept on the turn as well.

``turn.failed`` makes the turn an error. A top-level ``error`` event does only when no
``turn.completed`` follows: Codex also prints its transient stream errors ("Reconnecting...
1/5", retried by Codex itself) as ``error`` events, and such a turn may still complete (the
events are then the turn's warnings). The error events stay in the exchange either way. A
message printed by a turn that then failed (``turn.failed``, a timeout, a bad exit) is not
its answer: it is kept as ``partial_answer``, shown but never scored.

The turn's single ``Exchange`` holds the request (``argv`` with the prompt, ``cwd``), the
exit status as ``status_code`` (negative: killed by that signal) and, as ``response_body``,
every stdout line in order: the parsed event, or ``{"non_json_line": <text>}``.
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import IO, Any, Literal

from pydantic import Field

from pytest_ragv2.systems.chat_limits import ChatAdapterConfig, Deadline
from pytest_ragv2.systems.codex_events import (
    CodexOutcome,
    _excerpt,
    _parse_line,
    attach_numbered_sources,
    read_codex_events,
)
from pytest_ragv2.systems.config import CALL_TIMEOUT_MAX_S, RESPONSE_MB_MAX, seconds_field
from pytest_ragv2.systems.outputs import ErrorKind, Exchange, RunError
from pytest_ragv2.systems.process_tree import MARK_VARIABLE, ProcessTree
from pytest_ragv2.systems.secret_policy import (
    ALWAYS_PASSED_ENV,
    env_pass_values,
    scrub,
    secret_values,
)
from pytest_ragv2.systems.transcripts import ChatTurn, Transcript, run_conversation

PROMPT_PLACEHOLDER = "{prompt}"
THREAD_PLACEHOLDER = "{thread_id}"

KILL_GRACE_S = 0.5  # between SIGTERM and SIGKILL of the turn's processes
_STDERR_TAIL_CHARS = 2000
_POLL_S = 0.01
_FIRST_SCAN_S = 0.02  # the turn's processes are looked up this soon, then less and less often
_MAX_SCAN_S = 0.25
_READ_CHUNK = 64 * 1024
CUT_KEY = "_cut"  # the note ending an exchange whose output was cut at max_output_mb


class CommandConfig(ChatAdapterConfig):
    """A command printing JSON lines on stdout, one process per turn."""

    adapter: Literal["command"]
    argv: list[str] = Field(
        min_length=1, description='the command; "{prompt}" in an argument is replaced by the prompt'
    )
    cwd: str | None = Field(default=None, description="working directory (default: inherited)")
    env_pass: list[str] = Field(
        default_factory=list,
        description="environment variables passed through besides PATH, HOME and LANG; "
        "their values (but a switch or a small number) are secrets, replaced wherever the "
        "command prints them",
    )
    timeout_s: float = seconds_field(300.0, CALL_TIMEOUT_MAX_S, "per turn, whole process group")
    max_output_mb: float = Field(
        default=32.0,
        gt=0,
        le=RESPONSE_MB_MAX,
        allow_inf_nan=False,
        description="the most a turn's process may print on stdout, and on stderr; more is "
        "the turn's error (too_large), its processes killed",
    )
    events: Literal["codex"] = "codex"
    resume_argv: list[str] | None = Field(
        default=None,
        description='the command for the turns after the first of a conversation: "{thread_id}" '
        'is the id the first turn\'s thread.started event gave, "{prompt}" the prompt (Codex: '
        '["codex", "exec", "resume", "{thread_id}", "--json", "{prompt}"]); without it every '
        "turn is a fresh process that does not see the earlier turns",
    )
    resume_usage: Literal["running_total", "per_turn"] = Field(
        default="running_total",
        description="what turn.completed.usage counts on a resumed turn: the thread's running "
        "total (Codex; the turn's usage is the difference from the previous turn's) or the "
        "turn alone",
    )

    @property
    def max_output_bytes(self) -> int:
        return int(self.max_output_mb * 1024 * 1024)

    @property
    def program(self) -> str:
        return self.argv[0]


@dataclass(slots=True)
class _Sink:
    """What a reader thread collected of one stream, within ``limit`` bytes: its complete
    lines (stdout), or only its last ``tail_bytes`` (stderr)."""

    name: str
    limit: int
    breach: threading.Event
    tail_bytes: int | None = None
    lines: list[str] = field(default_factory=list)
    tail: bytes = b""
    size: int = 0
    over: bool = False

    def read(self, stream: IO[bytes]) -> None:
        """Read ``stream`` to its end or past ``limit`` (then stop reading and say so)."""
        pending: list[bytes] = []  # the start of a line whose end has not arrived
        read1 = getattr(stream, "read1", stream.read)
        with stream:
            while chunk := read1(_READ_CHUNK):
                self.size += len(chunk)
                if self.size > self.limit:
                    self.over = True
                    self.breach.set()
                    return
                if self.tail_bytes is not None:
                    self.tail = (self.tail + chunk)[-self.tail_bytes :]
                    continue
                start = 0
                while (end := chunk.find(b"\n", start)) >= 0:
                    pending.append(chunk[start:end])
                    self.lines.append(b"".join(pending).decode("utf-8", errors="replace"))
                    pending = []
                    start = end + 1
                if start < len(chunk):
                    pending.append(chunk[start:])
        if pending:
            self.lines.append(b"".join(pending).decode("utf-8", errors="replace"))


class CommandRunner:
    def __init__(self, name: str, config: CommandConfig) -> None:
        self.name = name
        self.config = config

    def close(self) -> None:
        """Nothing to release: every process ends with its turn."""

    def converse(self, prompts: Sequence[str]) -> Transcript:
        thread_id: str | None = None
        running_total: dict[str, int] = {}
        deadline = self.config.conversation_deadline()

        def send(number: int, prompt: str) -> ChatTurn:
            nonlocal thread_id, running_total
            resuming = self.config.resume_argv is not None
            if number and resuming and thread_id is None:
                error = RunError("adapter", "no thread id from the first turn to resume")
                return ChatTurn(prompt=prompt, error=error)
            turn, announced = self._turn(prompt, self.argv_for(prompt, thread_id), deadline)
            thread_id = thread_id or announced
            if resuming and self.config.resume_usage == "running_total" and turn.usage:
                running_total = turn_share(turn, running_total)
            return turn

        return run_conversation(prompts, send)

    def argv_for(self, prompt: str, thread_id: str | None = None) -> list[str]:
        """The command of one turn: ``resume_argv`` for a later turn of a conversation."""
        template = self.config.argv
        if thread_id is not None and self.config.resume_argv is not None:
            template = self.config.resume_argv
        return [
            part.replace(THREAD_PLACEHOLDER, thread_id or "").replace(PROMPT_PLACEHOLDER, prompt)
            for part in template
        ]

    def environment(self) -> dict[str, str]:
        names = [*ALWAYS_PASSED_ENV, *self.config.env_pass]
        return {name: os.environ[name] for name in names if name in os.environ}

    def secrets(self) -> list[str]:
        """The forms of every secret ``env_pass`` hands the command (``PATH``, ``HOME``,
        ``LANG`` and plain settings are none): whatever the command prints of them is
        replaced."""
        return secret_values(env_pass_values(self.config.env_pass, os.environ))

    def _turn(
        self, prompt: str, argv: list[str], deadline: Deadline | None = None
    ) -> tuple[ChatTurn, str | None]:
        """One turn's process and what it printed; and the thread id it announced."""
        request: dict[str, Any] = {"argv": argv, "cwd": self.config.cwd}
        if deadline is not None and deadline.passed():
            error = RunError(kind="timeout", message=deadline.message("the turn was not started"))
            return ChatTurn(prompt=prompt, error=error), None
        started = time.perf_counter()
        bounds = _Bounds(self.config.timeout_s, deadline, self.config.max_output_bytes)
        secrets = self.secrets()
        request = scrub(request, secrets)
        try:
            run = _run(argv, self.config.cwd, self.environment(), bounds)
        except OSError as exc:  # the command could not be started
            latency_s = time.perf_counter() - started
            message = scrub(f"cannot start {argv[0]!r}: {exc}", secrets)
            error = RunError(kind="adapter", message=message)
            exchange = Exchange(request=request, status_code=None, response_body=[], latency_s=0)
            failed = ChatTurn(prompt=prompt, latency_s=latency_s, error=error, exchanges=[exchange])
            return failed, None
        latency_s = time.perf_counter() - started
        # what the command printed of its env_pass values is replaced before anything reads
        # it: the events (parsed first, so a JSON-escaped value is seen as the value), the
        # standard error kept, and so every answer, tool call and error made of them
        events = scrub([_parse_line(line) for line in run.lines], secrets)
        run.stderr_tail = scrub(run.stderr_tail, secrets)
        if run.too_large is not None:
            events.append({CUT_KEY: f"{run.too_large}: the rest was not kept"})
        turn = ChatTurn(
            prompt=prompt,
            latency_s=latency_s,
            exchanges=[
                Exchange(
                    request=request,
                    status_code=run.exit_code,
                    response_body=events,
                    latency_s=latency_s,
                )
            ],
        )
        turn.stderr_tail = run.stderr_tail
        try:
            outcome = read_codex_events(events, turn)
            attach_numbered_sources(turn)
        except Exception as exc:  # an adapter bug must cost one run, not the session
            turn.error = RunError(kind="internal", message=f"{type(exc).__name__}: {exc}")
            return turn, None
        turn.error = _turn_error(run, outcome, bounds)
        if turn.error is not None and turn.answer:
            # a message printed before the turn failed is not the turn's answer: shown, unscored
            turn.partial_answer, turn.answer, turn.citations = turn.answer, "", []
        return turn, outcome.thread_id


def turn_share(turn: ChatTurn, previous_total: dict[str, int]) -> dict[str, int]:
    """Make ``turn.usage`` (the thread's running total, as Codex reports it) the turn's own
    share: the difference from ``previous_total``; the total is kept as
    ``usage_running_total`` and returned. A count below the previous total means the figures
    were not a running total: they are kept as reported, with a warning."""
    total = dict(turn.usage)
    turn.usage_running_total = total
    share = {key: value - previous_total.get(key, 0) for key, value in total.items()}
    if any(value < 0 for value in share.values()):
        turn.warnings.append(
            "usage below the previous turn's running total: kept as reported for this turn"
        )
        return total
    turn.usage = share
    return total


@dataclass(frozen=True, slots=True)
class _Bounds:
    """What bounds one turn's process: its own time, the conversation's, its output."""

    timeout_s: float
    conversation: Deadline | None
    max_output_bytes: int

    def deadline(self) -> tuple[float, bool]:
        """When the turn must end (``time.monotonic``), and whether the conversation's
        deadline is the sooner."""
        own = time.monotonic() + self.timeout_s
        if self.conversation is not None and self.conversation.at < own:
            return self.conversation.at, True
        return own, False


@dataclass(slots=True)
class _Run:
    lines: list[str]
    stderr_tail: str
    exit_code: int | None
    timed_out: bool
    by_conversation: bool = False  # timed out at the conversation's deadline
    too_large: str | None = None  # which stream went over max_output_mb, and by how much


def _run(argv: list[str], cwd: str | None, env: dict[str, str], bounds: _Bounds) -> _Run:
    """Run one process to its end, its deadline or its output bound, collecting stdout
    lines as they arrive; then kill whatever it started and left behind, in whatever
    process group or session."""
    deadline, by_conversation = bounds.deadline()
    mark = uuid.uuid4().hex  # finds the turn's processes that left its session
    process = subprocess.Popen(
        argv,
        cwd=cwd,
        env={**env, MARK_VARIABLE: mark},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    assert process.stdout is not None
    assert process.stderr is not None
    tree = ProcessTree(process.pid, mark)
    breach = threading.Event()
    stdout = _Sink("stdout", bounds.max_output_bytes, breach)
    stderr = _Sink("stderr", bounds.max_output_bytes, breach, tail_bytes=_STDERR_TAIL_CHARS * 4)
    readers = [
        threading.Thread(target=stdout.read, args=(process.stdout,), daemon=True),
        threading.Thread(target=stderr.read, args=(process.stderr,), daemon=True),
    ]
    for reader in readers:
        reader.start()
    try:
        # stdout reaches EOF when every process holding it is gone or has closed it; the
        # turn's processes are looked up meanwhile, so that one whose parent exits is known
        interval = _FIRST_SCAN_S
        while readers[0].is_alive() and not breach.is_set() and time.monotonic() < deadline:
            readers[0].join(timeout=max(0.0, min(interval, deadline - time.monotonic())))
            tree.scan()
            interval = min(interval * 1.5, _MAX_SCAN_S)
        exited = (
            not readers[0].is_alive()
            and not breach.is_set()
            and _wait_exited(process.pid, deadline)
        )
    except BaseException:
        # Ctrl-C (or anything else) while waiting: the command lives in a session of its own,
        # so the terminal's SIGINT never reached it; nothing it started may outlive the session
        tree.signal(signal.SIGKILL)
        process.wait()
        raise
    over = breach.is_set()
    timed_out = not exited and not over
    if timed_out:
        tree.signal(signal.SIGTERM)
        _wait_gone(process.pid, tree, time.monotonic() + KILL_GRACE_S)
    # the unreaped leader keeps its pid (the session and group id) reserved meanwhile
    tree.signal(signal.SIGKILL)
    exit_code = process.wait()
    for reader in readers:
        reader.join(timeout=KILL_GRACE_S)
    too_large = next(
        (
            f"{sink.name} exceeded {sink.limit:,} bytes (max_output_mb)"
            for sink in (stdout, stderr)
            if sink.over
        ),
        None,
    )
    return _Run(
        lines=list(stdout.lines),
        stderr_tail=stderr.tail.decode("utf-8", errors="replace")[-_STDERR_TAIL_CHARS:],
        exit_code=exit_code,
        timed_out=timed_out,
        by_conversation=timed_out and by_conversation,
        too_large=too_large,
    )


def _wait_gone(pid: int, tree: ProcessTree, deadline: float) -> None:
    """Wait until ``pid`` and every process of ``tree`` ended, or ``deadline``."""
    while _wait_exited(pid, deadline) and tree.alive():
        if time.monotonic() >= deadline:
            return
        time.sleep(_POLL_S)


def _wait_exited(pid: int, deadline: float) -> bool:
    """Whether ``pid`` exited before ``deadline``, without reaping it."""
    while True:
        try:
            status = os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
        except ChildProcessError:
            return True
        if status is not None:
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(_POLL_S)


def _turn_error(run: _Run, outcome: CodexOutcome, bounds: _Bounds) -> RunError | None:
    """The turn's error, the most telling first: a bound, reported failure, exit, format."""
    kind: ErrorKind
    if run.too_large is not None:
        kind, message = "too_large", f"{run.too_large}; its processes killed"
    elif run.timed_out and run.by_conversation and bounds.conversation is not None:
        kind, message = (
            "timeout",
            bounds.conversation.message("the turn") + "; its processes killed",
        )
    elif run.timed_out:
        kind, message = "timeout", f"no end within {bounds.timeout_s:g} s; its processes killed"
    elif outcome.failure is not None:
        kind, message = "adapter", outcome.failure
    elif outcome.errors and not outcome.completed:
        kind, message = "adapter", "error: " + "; ".join(outcome.errors)
    elif run.exit_code != 0:
        kind, message = "adapter", f"exit status {run.exit_code}: {_stderr_reason(run.stderr_tail)}"
    elif not outcome.completed and outcome.non_json_lines:
        kind = "malformed"
        message = f"{outcome.non_json_lines} non-JSON stdout line(s) and no turn.completed"
    elif not outcome.completed:
        kind, message = "malformed", "the command ended without a turn.completed event"
    else:
        return None
    return RunError(kind=kind, message=message, status_code=None)


def _stderr_reason(stderr: str) -> str:
    """The line of ``stderr`` that says why (Codex: ``Error: ...``, before a backtrace), or
    its end."""
    for line in stderr.splitlines():
        if line.startswith("Error: "):
            return _excerpt(line[len("Error: ") :])
    return _excerpt(stderr)
