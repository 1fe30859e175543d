"""SIGTERM (a cancelled CI job) stops a session as Ctrl-C does, with its report; a second
signal while the verdict is written does not cost the reports."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from tests.conftest import SYSTEMS_MODULE, pyproject
from tests.run.test_plan_budget import SLOW_SYSTEMS

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")


def _start(pytester: pytest.Pytester, *args: str) -> subprocess.Popen[str]:
    pytester.makepyfile(ragsystems=SYSTEMS_MODULE + SLOW_SYSTEMS)  # each run takes 1 s
    (pytester.path / "pyproject.toml").write_text(pyproject("slow_weak", "slow_good"))
    return subprocess.Popen(
        [sys.executable, "-m", "pytest", "--ragv2-layer=A", "--ragv2-run-id=t", *args],
        cwd=pytester.path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its own process group, as a terminal's job is
    )


def _wait_for_runs(pytester: pytest.Pytester, runs: int, timeout_s: float = 30) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        written = sum(
            len(path.read_text(encoding="utf-8").splitlines())
            for path in (pytester.path / "raw-runs" / "t").glob("runs-*.jsonl")
        )
        if written >= runs:
            return
        time.sleep(0.05)
    raise AssertionError(f"fewer than {runs} runs written in {timeout_s} s")


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_sigterm_stops_the_session_with_its_report(
    project: pytest.Pytester, workers: list[str]
) -> None:
    session = _start(project, *workers)
    _wait_for_runs(project, 2)
    session.send_signal(signal.SIGTERM)
    out, err = session.communicate(timeout=60)
    assert session.returncode == pytest.ExitCode.INTERRUPTED, out + err
    assert "verdict: INTERRUPTED" in out
    summary = json.loads(
        (project.path / "reports" / "t" / "summary.json").read_text(encoding="utf-8")
    )
    assert summary["verdict"] == "interrupted"
    assert 0 < summary["runs"]["recorded"] < 10
    for path in (project.path / "raw-runs" / "t").glob("runs-*.jsonl"):
        assert all(json.loads(line) for line in path.read_text(encoding="utf-8").splitlines())


def test_a_second_signal_while_the_verdict_is_written_is_held(project: pytest.Pytester) -> None:
    from pytest_ragv2.plugin.signals import shielded

    received: list[int] = []
    previous = signal.signal(signal.SIGTERM, lambda number, frame: received.append(number))
    try:
        with shielded():
            signal.raise_signal(signal.SIGINT)  # would raise KeyboardInterrupt unshielded
            signal.raise_signal(signal.SIGTERM)
        assert received == []  # held, not passed on
        signal.raise_signal(signal.SIGTERM)
        assert received == [signal.SIGTERM]  # the handler before is back
    finally:
        signal.signal(signal.SIGTERM, previous)


# (first signal, second signal, seconds between them, workers): a second Ctrl-C a moment
# after the first, while pytest handles the first, the session stops or the reports are
# written; under -n 2 both reach every process of the session, as a terminal's Ctrl-C does
DOUBLE = [
    (signal.SIGINT, signal.SIGINT, 0.05, 0),
    (signal.SIGINT, signal.SIGINT, 0.3, 0),
    (signal.SIGINT, signal.SIGINT, 1.0, 0),
    (signal.SIGTERM, signal.SIGTERM, 0.05, 0),
    (signal.SIGTERM, signal.SIGINT, 0.3, 0),
    (signal.SIGINT, signal.SIGINT, 0.05, 2),
]


@pytest.mark.parametrize(
    ("first", "second", "after_s", "workers"),
    DOUBLE,
    ids=[
        f"{one.name}-{two.name}-{after:g}s" + ("-n2" if workers else "")
        for one, two, after, workers in DOUBLE
    ],
)
def test_a_second_interrupt_soon_after_the_first_still_ends_in_exit_2_with_the_reports(
    project: pytest.Pytester,
    first: signal.Signals,
    second: signal.Signals,
    after_s: float,
    workers: int,
) -> None:
    session = _start(project, *(["-n", str(workers)] if workers else []))
    _wait_for_runs(project, 2)
    os.killpg(session.pid, first)
    time.sleep(after_s)
    second_sent = session.poll() is None
    if second_sent:
        os.killpg(session.pid, second)
    # a signal sent before the reports exist lands while the session still handles the
    # first; one sent later may land after the process's atexit, where it is ignored unsaid
    before_the_reports = not (project.path / "reports" / "t" / "summary.json").exists()
    out, err = session.communicate(timeout=60)
    assert session.returncode == pytest.ExitCode.INTERRUPTED, out + err
    assert "Traceback" not in out + err
    assert "verdict: INTERRUPTED" in out
    summary = json.loads(
        (project.path / "reports" / "t" / "summary.json").read_text(encoding="utf-8")
    )
    assert summary["verdict"] == "interrupted"
    assert summary["exit_status"] == pytest.ExitCode.INTERRUPTED
    assert (project.path / "reports" / "t" / "report.html").is_file()
    if second_sent and before_the_reports:  # it arrived, and was noted rather than obeyed
        assert f"{second.name} noted" in err


def _interrupt_self() -> None:
    os.kill(os.getpid(), signal.SIGINT)
    time.sleep(1)  # the handler runs at the next bytecode, long before this ends


def test_one_more_interrupt_after_an_interrupted_session_is_noted_the_next_obeyed(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from pytest_ragv2.plugin.signals import interrupt_once

    before = signal.getsignal(signal.SIGINT)
    restore = interrupt_once()
    try:
        with pytest.raises(KeyboardInterrupt):
            _interrupt_self()
        restore()  # the session ends, its reports written
        os.kill(os.getpid(), signal.SIGINT)  # lands before the process exits: noted
        time.sleep(0.05)
        assert "SIGINT noted" in capsys.readouterr().err
        assert signal.getsignal(signal.SIGINT) is before
    finally:
        signal.signal(signal.SIGINT, before)


def test_a_session_that_was_not_interrupted_gives_the_handlers_straight_back() -> None:
    from pytest_ragv2.plugin.signals import hold, interrupt_once

    before = signal.getsignal(signal.SIGINT)
    restore = interrupt_once()
    hold()  # the verdict was written
    restore()
    assert signal.getsignal(signal.SIGINT) is before


EXITING_AFTER_AN_INTERRUPT = """
import atexit, os, signal, sys, time
from pytest_ragv2.plugin.signals import interrupt_once

def at_exit():  # registered first, so it runs last: as late as finalization reaches
    os.kill(os.getpid(), signal.SIGINT)  # a second Ctrl-C, after the one noted below
    time.sleep(0.2)
    print(signal.getsignal(signal.SIGINT) is signal.SIG_IGN, flush=True)

atexit.register(at_exit)
restore = interrupt_once()
try:
    os.kill(os.getpid(), signal.SIGINT)
    time.sleep(1)
except KeyboardInterrupt:
    pass
restore()  # the session ended: its reports are written
os.kill(os.getpid(), signal.SIGINT)  # one more: noted
time.sleep(0.2)
sys.exit(2)
"""


def test_an_interrupted_sessions_process_exits_with_its_status_whatever_signal_comes_last() -> None:
    """The interpreter's finalization gives Python handlers back to the default: a signal
    landing then would kill the process that already wrote exit status 2 (seen as -2)."""
    done = subprocess.run(
        [sys.executable, "-c", EXITING_AFTER_AN_INTERRUPT],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    assert done.stdout.strip() == "True"
    assert done.stderr.count("SIGINT noted") == 1
