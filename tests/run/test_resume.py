"""--ragv2-resume: a run killed at any point and resumed ends as an uninterrupted run of the
same seed (0 runs lost, 0 made twice); --ragv2-retry-errors makes the failed runs again;
a changed run is refused; one session at a time holds a run folder."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from pytest_ragv2.run.rawruns import read_raw_runs
from pytest_ragv2.run.resume import ResumeError, SessionLock
from tests.conftest import SYSTEMS_MODULE, pyproject

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")

PACED_SYSTEMS = """

import time
from pathlib import Path


def paced_good(query, k, **options):
    time.sleep(0.12)
    return good(query, k)


def paced_weak(query, k, **options):
    time.sleep(0.12)
    return weak(query, k)


def flaky(query, k, **options):
    # fails while a FAIL file lies in the project, as a system that was down for a while
    if Path("FAIL").exists() and "druck" in query.lower():
        raise RuntimeError("index offline")
    return good(query, k)
"""

ARGS = ("--ragv2-layer=A", "--ragv2-seed=11", "--ragv2-reps=2", "-p", "no:cacheprovider")


def _paced(
    project: pytest.Pytester, baseline: str = "paced_weak", candidate: str = "paced_good"
) -> None:
    project.makepyfile(ragsystems=SYSTEMS_MODULE + PACED_SYSTEMS)
    (project.path / "pyproject.toml").write_text(pyproject(baseline, candidate))


def _pytest(project: pytest.Pytester, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest", *ARGS, *args],
        cwd=project.path,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )


def _lines_written(run_dir: Path) -> int:
    return sum(
        path.read_bytes().count(b"\n") for path in run_dir.glob("runs-*.jsonl") if path.is_file()
    )


def _kill_after(project: pytest.Pytester, run_id: str, lines: int, *args: str) -> None:
    """Start a session and SIGKILL it, workers and all, once ``lines`` runs are on disk."""
    session = subprocess.Popen(
        [sys.executable, "-m", "pytest", *ARGS, f"--ragv2-run-id={run_id}", *args],
        cwd=project.path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    run_dir = project.path / "raw-runs" / run_id
    deadline = time.monotonic() + 60
    while _lines_written(run_dir) < lines and session.poll() is None:
        assert time.monotonic() < deadline, "the session wrote too few runs"
        time.sleep(0.01)
    os.killpg(session.pid, signal.SIGKILL)
    session.wait(timeout=30)


def _summary(project: pytest.Pytester, run_id: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(
        (project.path / "reports" / run_id / "summary.json").read_text(encoding="utf-8")
    )
    return data


def _comparable(value: Any) -> Any:
    """A summary without what differs between any two sessions: latencies and the run's name."""
    if isinstance(value, dict):
        if "latency" in str(value.get("description", "")):  # a latency gate: its decision
            return {"name": value["name"], "decision": value["decision"]}
        return {
            key: _comparable(item)
            for key, item in value.items()
            if "latency" not in key and key not in {"run_id", "raw_runs"}
        }
    if isinstance(value, list):
        return [_comparable(item) for item in value]
    return value


def _differences(left: Any, right: Any, path: str = "") -> list[str]:
    if isinstance(left, dict) and isinstance(right, dict):
        return [
            found
            for key in sorted(set(left) | set(right))
            for found in _differences(left.get(key), right.get(key), f"{path}.{key}")
        ]
    if isinstance(left, list) and isinstance(right, list) and len(left) == len(right):
        return [
            found
            for index, (one, other) in enumerate(zip(left, right, strict=True))
            for found in _differences(one, other, f"{path}[{index}]")
        ]
    return [] if left == right else [f"{path}: {left!r:.120} != {right!r:.120}"]


@pytest.mark.parametrize(
    ("workers", "kill_at"),
    [([], 3), ([], 14), (["-n", "2"], 9)],
    ids=["serial-early", "serial-late", "xdist"],
)
def test_a_killed_run_resumed_ends_as_an_uninterrupted_one(
    project: pytest.Pytester, workers: list[str], kill_at: int
) -> None:
    _paced(project)
    uninterrupted = _pytest(project, "--ragv2-run-id=whole", *workers)
    assert uninterrupted.returncode in (0, 1), uninterrupted.stdout + uninterrupted.stderr
    _kill_after(project, "cut", kill_at, *workers)
    run_dir = project.path / "raw-runs" / "cut"
    made_before = len(list(read_raw_runs(run_dir)))
    assert 0 < made_before < 20  # killed part way

    resumed = _pytest(project, "--ragv2-resume=last", *workers)

    assert resumed.returncode == uninterrupted.returncode, resumed.stdout + resumed.stderr
    expected = _summary(project, "whole")
    summary = _summary(project, "cut")
    assert summary["runs"]["recorded"] == summary["runs"]["expected"] == 20
    assert _differences(_comparable(summary), _comparable(expected)) == []
    keys = [json.dumps(raw["key"], sort_keys=True) for raw in read_raw_runs(run_dir)]
    assert len(keys) == len(set(keys)) == 20  # 0 lost, 0 made twice
    made_now = sum(path.read_bytes().count(b"\n") for path in run_dir.glob("runs-*.r1.jsonl"))
    assert made_now == 20 - made_before  # only what was missing ran
    screen = " ".join(resumed.stdout.split())
    assert (
        f"resumed run cut (session 2): {made_before} run(s) taken from its earlier sessions' "
        f"raw runs, {20 - made_before} made now"
    ) in screen
    manifest = json.loads((run_dir / "manifest.json").read_text(encoding="utf-8"))
    assert [entry["generation"] for entry in manifest["resumed"]] == [1]
    assert not (run_dir / "session.lock").exists()


def test_resume_with_retry_errors_makes_only_the_failed_runs_again(
    project: pytest.Pytester,
) -> None:
    _paced(project, baseline="weak", candidate="flaky")
    (project.path / "FAIL").write_text("down")
    first = _pytest(project, "--ragv2-run-id=r")
    assert first.returncode == 1
    before = _summary(project, "r")
    assert before["systems"]["v2"]["errors"] == 2  # C01 in German, twice

    (project.path / "FAIL").unlink()
    again = _pytest(project, "--ragv2-resume=r")  # errors are kept without the flag
    assert again.returncode == 1
    assert _summary(project, "r")["systems"]["v2"]["errors"] == 2
    assert not list((project.path / "raw-runs" / "r").glob("runs-*.r1.jsonl"))

    retried = _pytest(project, "--ragv2-resume=r", "--ragv2-retry-errors")

    summary = _summary(project, "r")
    assert summary["systems"]["v2"]["errors"] == 0, retried.stdout
    remade = [
        json.loads(line)
        for path in (project.path / "raw-runs" / "r").glob("runs-*.r2.jsonl")
        for line in path.read_text(encoding="utf-8").splitlines()
    ]
    assert sorted((raw["key"]["case"], raw["key"]["lang"]) for raw in remade) == [
        ("C01", "de"),
        ("C01", "de"),
    ]
    # every reader takes the new run in place of the failed one: rescore agrees
    rescored = subprocess.run(
        [sys.executable, "-m", "pytest_ragv2.tools.cli", "rescore", "raw-runs/r"],
        cwd=project.path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert rescored.returncode == retried.returncode, rescored.stdout + rescored.stderr
    assert len(list(read_raw_runs(project.path / "raw-runs" / "r"))) == 20


def test_a_changed_run_is_not_resumed(project: pytest.Pytester) -> None:
    _paced(project, baseline="weak", candidate="good")
    assert _pytest(project, "--ragv2-run-id=c").returncode in (0, 1)
    cases = project.path / "cases" / "development.yaml"
    cases.write_text(cases.read_text(encoding="utf-8").replace("maximum pressure", "max pressure"))
    (project.path / "pyproject.toml").write_text(pyproject("weak", "leaky"))

    refused = _pytest(project, "--ragv2-resume=c")

    assert refused.returncode == pytest.ExitCode.USAGE_ERROR
    assert "cases/development.yaml: changed since the run" in refused.stderr
    assert "pyproject.toml: changed since the run" in refused.stderr
    assert "system v2: retrieval.callable changed" in refused.stderr
    assert not list((project.path / "raw-runs" / "c").glob("runs-*.r1.jsonl"))


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--ragv2-resume=nope"], "raw-runs/nope/manifest.json does not exist"),
        (["--ragv2-resume=../x"], "--ragv2-resume='../x': a run id is"),
        (["--ragv2-retry-errors"], "--ragv2-retry-errors: only with --ragv2-resume"),
    ],
)
def test_resume_usage_errors(project: pytest.Pytester, args: list[str], message: str) -> None:
    refused = _pytest(project, *args)
    assert refused.returncode == pytest.ExitCode.USAGE_ERROR
    assert message in refused.stderr


def test_resume_keeps_the_seed(project: pytest.Pytester) -> None:
    _paced(project, baseline="weak", candidate="good")
    assert _pytest(project, "--ragv2-run-id=s").returncode in (0, 1)
    refused = subprocess.run(
        [sys.executable, "-m", "pytest", "--ragv2-layer=A", "--ragv2-seed=12", "--ragv2-resume=s"],
        cwd=project.path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert refused.returncode == pytest.ExitCode.USAGE_ERROR
    assert "the run's seed is 11, not 12" in refused.stderr


def test_a_run_held_by_a_live_session_is_not_resumed(project: pytest.Pytester) -> None:
    _paced(project, baseline="weak", candidate="good")
    assert _pytest(project, "--ragv2-run-id=h").returncode in (0, 1)
    lock = SessionLock.acquire(project.path / "raw-runs" / "h")  # this process: alive
    try:
        refused = _pytest(project, "--ragv2-resume=h")
    finally:
        lock.release()
    assert refused.returncode == pytest.ExitCode.USAGE_ERROR
    assert f"another session holds this run (pid {os.getpid()}" in refused.stderr


def test_the_lock_of_a_killed_session_is_taken_over(tmp_path: Path) -> None:
    held = SessionLock.acquire(tmp_path)
    with pytest.raises(ResumeError, match="another session holds this run"):
        SessionLock.acquire(tmp_path)
    held.release()
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    (tmp_path / "session.lock").write_text(f"{gone.pid} {os.uname().nodename}\n")
    taken = SessionLock.acquire(tmp_path)
    assert (tmp_path / "session.lock").read_text().split()[0] == str(os.getpid())
    taken.release()
    assert not (tmp_path / "session.lock").exists()


def test_an_empty_lock_is_taken_over_with_a_warning(project: pytest.Pytester) -> None:
    """An empty lock is what a session that died before writing its pid left (a full disk
    did, too): it used to refuse every later resumption ("pid unknown … wait for it to
    end"); it is taken over, and the warnings summary says so."""
    _paced(project, baseline="weak", candidate="good")
    assert _pytest(project, "--ragv2-run-id=e").returncode in (0, 1)
    lock = project.path / "raw-runs" / "e" / "session.lock"
    lock.write_text("")
    resumed = _pytest(project, "--ragv2-resume=e")
    assert resumed.returncode in (0, 1), resumed.stdout + resumed.stderr
    assert (
        f"{lock}:1: SessionLockWarning: taken over: it was empty: its session stopped before "
        "writing its pid"
    ) in resumed.stdout
    assert not lock.exists()


def test_a_stale_lock_is_taken_over_and_a_live_one_refused(tmp_path: Path) -> None:
    held = SessionLock.acquire(tmp_path)
    assert held.taken_over is None
    with pytest.raises(ResumeError, match=f"another session holds this run \\(pid {os.getpid()},"):
        SessionLock.acquire(tmp_path)
    held.release()
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    (tmp_path / "session.lock").write_text(f"{gone.pid} {os.uname().nodename}\n")
    taken = SessionLock.acquire(tmp_path)
    assert taken.taken_over == f"its session (pid {gone.pid}) is no longer running"
    taken.release()
    assert sorted(tmp_path.iterdir()) == []  # no draft or set-aside lock left


def test_a_lock_naming_no_session_is_refused_with_what_to_do(tmp_path: Path) -> None:
    (tmp_path / "session.lock").write_text("not a pid\n")
    with pytest.raises(ResumeError) as refused:
        SessionLock.acquire(tmp_path)
    assert str(refused.value) == (
        f"{tmp_path}: session.lock names no session ('not a pid'); if no session is running "
        "on this run, remove it"
    )
    (tmp_path / "session.lock").unlink()
    os.mkfifo(tmp_path / "session.lock")  # judged without blocking on it
    with pytest.raises(ResumeError, match="not a lock this package wrote \\(a FIFO"):
        SessionLock.acquire(tmp_path)


def test_a_lock_that_cannot_be_written_is_not_left_behind(tmp_path: Path) -> None:
    import resource

    from pytest_ragv2.run.rawruns import RawRunWriteError

    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    previous = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    try:
        resource.setrlimit(resource.RLIMIT_FSIZE, (0, hard))
        with pytest.raises(RawRunWriteError, match=r"raw runs could not be written: .*File too"):
            SessionLock.acquire(tmp_path)
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
        signal.signal(signal.SIGXFSZ, previous)
    assert sorted(tmp_path.iterdir()) == []
    SessionLock.acquire(tmp_path).release()  # nothing stands in the way afterwards


def test_a_stale_lock_is_removed_only_if_it_is_still_the_one_judged(tmp_path: Path) -> None:
    """Two sessions may judge the same stale lock; the one that takes it over second must
    not remove the lock the first one put there meanwhile."""
    from pytest_ragv2.run.resume import _set_aside, _Stale

    lock = tmp_path / "session.lock"
    lock.write_text("")
    info = lock.stat()
    judged = _Stale("it was empty", (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns))
    lock.unlink()  # the first session took it over and holds the run now (same inode, even)
    lock.write_text(f"{os.getpid()} {os.uname().nodename}\n")
    _set_aside(lock, judged)
    assert lock.read_text().split()[0] == str(os.getpid())
    assert sorted(path.name for path in tmp_path.iterdir()) == ["session.lock"]
