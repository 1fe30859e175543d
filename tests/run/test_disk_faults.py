"""A full disk in a real session: the file-size limit (RLIMIT_FSIZE) makes every write past
it fail with EFBIG, as a full disk fails with ENOSPC — the raw runs, then the reports."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import pyproject

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="RLIMIT_FSIZE is POSIX")

LIMITED = """
import resource
import signal


def pytest_configure(config):
    # past the limit a write fails with EFBIG (the signal would kill the process instead)
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, ({limit}, {limit}))
"""


ARGS = ("--ragv2-reps=3", "-rs")


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_raw_runs_that_cannot_be_written_stop_the_session_with_exit_3(
    project: pytest.Pytester, workers: list[str]
) -> None:
    from pytest_ragv2.run.rawruns import read_raw_runs

    (project.path / "pyproject.toml").write_text(pyproject())
    project.makeconftest(LIMITED.format(limit=4_000))  # the manifest fits, a few runs do
    # the output goes through pipes: the file-size limit applies to files only
    done = subprocess.run(
        # three repetitions: every worker still has runs to start after its file is full
        [sys.executable, "-m", "pytest", "--ragv2-layer=A", "--ragv2-run-id=t", *ARGS, *workers],
        cwd=project.path,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    out, outlines = done.stdout, done.stdout.splitlines()
    assert done.returncode == pytest.ExitCode.INTERNAL_ERROR, out + done.stderr
    assert "Traceback" not in out + done.stderr
    screen = " ".join(out.split())
    assert "raw runs could not be written: " in screen
    assert "File too large" in screen
    assert "the session stopped (exit status 3)" in screen
    assert "verdict: STOPPED" in screen
    assert "(exit status 3)" in outlines[-2]
    # the runs after the failure were never started, each skipped with the reason
    assert "not started: raw runs could not be written" in screen
    # what was written is whole: every line parses, and rescoring reads it
    run_dir = project.path / "raw-runs" / "t"
    written = list(read_raw_runs(run_dir))
    assert 0 < len(written) < 30
    for path in run_dir.glob("runs-*.jsonl"):
        text = path.read_text(encoding="utf-8")
        assert text.endswith("\n")
        assert all(json.loads(line) for line in text.splitlines())
    # the reports past the limit were not written, and no torn temporary is left
    assert "reports could not be written: " in screen
    reports = project.path / "reports" / "t"
    assert not list(reports.glob(".*.tmp"))


def test_a_manifest_that_cannot_be_written_stops_the_session_before_any_run(
    project: pytest.Pytester,
) -> None:
    (project.path / "pyproject.toml").write_text(pyproject())
    project.makeconftest(LIMITED.format(limit=1_000))  # smaller than any manifest
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--ragv2-layer=A", "--ragv2-run-id=m", "-rs"],
        cwd=project.path,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    screen = " ".join(done.stdout.split())
    assert done.returncode == pytest.ExitCode.INTERNAL_ERROR, done.stdout + done.stderr
    assert "Traceback" not in done.stdout + done.stderr
    assert "raw runs could not be written: " in screen
    assert "File too large" in screen
    assert "not started: raw runs could not be written" in screen
    assert "verdict: STOPPED" in screen
    assert not list((project.path / "raw-runs" / "m").glob("runs-*"))  # no run was made


def test_a_torn_line_is_cut_back_and_the_writer_refuses_later_lines(
    tmp_path: pytest.TempPathFactory,
) -> None:
    import resource
    import signal
    from pathlib import Path

    from pytest_ragv2.run.rawruns import RawRunWriteError, RawRunWriter, read_raw_runs

    folder = Path(str(tmp_path))
    writer = RawRunWriter(folder, "main")
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    previous = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    try:
        writer.append({"key": {"case": "C01"}, "text": "x" * 100})
        resource.setrlimit(resource.RLIMIT_FSIZE, (500, hard))
        with pytest.raises(RawRunWriteError, match="raw runs could not be written"):
            writer.append({"key": {"case": "C02"}, "text": "y" * 2_000})
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
        with pytest.raises(RawRunWriteError):  # refused: no line after a lost one
            writer.append({"key": {"case": "C03"}})
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
        signal.signal(signal.SIGXFSZ, previous)
        writer.close()
    assert writer.failure is not None
    assert [run["key"]["case"] for run in read_raw_runs(folder)] == ["C01"]


def _session(project: pytest.Pytester, *args: str, prefix: tuple[str, ...] = ()) -> Any:
    # the output goes through pipes: the file-size limit applies to files only
    return subprocess.run(
        [*prefix, sys.executable, "-m", "pytest", "--ragv2-layer=A", *args],
        cwd=project.path,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def _one_line(done: Any) -> str:
    """The session's only output line: a stop at start is one line, never a traceback."""
    assert "Traceback" not in done.stdout + done.stderr
    assert "INTERNALERROR" not in done.stdout + done.stderr
    lines = [line for line in (done.stdout + done.stderr).splitlines() if line.strip()]
    assert len(lines) == 1, done.stdout + done.stderr
    return str(lines[0])


def test_a_full_disk_at_start_stops_in_one_line_and_leaves_nothing(
    project: pytest.Pytester,
) -> None:
    """Nothing can be written (a completely full disk): exit status 3 in one line (it was a
    25-line INTERNALERROR traceback), and no empty session.lock left behind (which refused
    every later --ragv2-resume), no empty folder."""
    (project.path / "pyproject.toml").write_text(pyproject())
    project.makeconftest(LIMITED.format(limit=0))
    done = _session(project, "--ragv2-run-id=f")
    assert done.returncode == pytest.ExitCode.INTERNAL_ERROR
    lock = project.path / "raw-runs" / "f" / "session.lock"
    assert _one_line(done) == (
        f"Exit: pytest-ragv2: raw runs could not be written: {lock}: File too large; the "
        "session stopped before its first run (exit status 3)"
    )
    assert not (project.path / "raw-runs").exists()


def test_a_resumption_on_a_full_disk_leaves_the_run_resumable(project: pytest.Pytester) -> None:
    (project.path / "pyproject.toml").write_text(pyproject())
    assert _session(project, "--ragv2-run-id=r").returncode == pytest.ExitCode.OK
    project.makeconftest(LIMITED.format(limit=0))
    done = _session(project, "--ragv2-resume=r")
    assert done.returncode == pytest.ExitCode.INTERNAL_ERROR
    assert "raw runs could not be written: " in _one_line(done)
    run_dir = project.path / "raw-runs" / "r"
    # the first session's raw runs and its end, untouched by the resumption that failed
    assert sorted(path.name for path in run_dir.iterdir()) == [
        "manifest.json",
        "runs-main.jsonl",
        "session-end.json",
    ]
    (project.path / "conftest.py").unlink()
    again = _session(project, "--ragv2-resume=r")
    assert again.returncode == pytest.ExitCode.OK, again.stdout + again.stderr


def _read_only_mount(folder: Path) -> tuple[str, ...] | None:
    """A command prefix that runs its command with ``folder`` mounted read-only (a mount
    namespace of an unprivileged user namespace), or None where that is not available."""
    if shutil.which("unshare") is None:
        return None
    script = 'mount --bind "$0" "$0" && mount -o remount,bind,ro "$0" && exec "$@"'
    prefix = ("unshare", "-rm", "sh", "-c", script, str(folder))
    probe = subprocess.run([*prefix, "true"], capture_output=True, check=False, timeout=30)
    return prefix if probe.returncode == 0 else None


def _without_write_permission(folder: Path) -> tuple[str, ...] | None:
    """``folder`` made read-only (mode 0555) and a prefix that runs a command as a user the
    mode binds (root is not bound by it: as root, a user namespace maps root to an
    ordinary user), or None where that is not available."""
    folder.chmod(0o555)
    if os.geteuid() != 0:
        return ()
    if shutil.which("unshare") is None:
        return None
    prefix = ("unshare", "--user", "--map-user=1000", "--map-group=1000")
    probe = subprocess.run(
        [*prefix, "sh", "-c", f'! touch "{folder}/probe" 2>/dev/null'],
        capture_output=True,
        check=False,
        timeout=30,
    )
    return prefix if probe.returncode == 0 else None


@pytest.mark.parametrize(
    "make_read_only",
    [_read_only_mount, _without_write_permission],
    ids=["read-only-mount", "no-write-permission"],
)
def test_a_read_only_raw_runs_folder_stops_the_session_in_one_line(
    project: pytest.Pytester, make_read_only: Callable[[Path], tuple[str, ...] | None]
) -> None:
    raw_runs = project.path / "raw-runs"
    raw_runs.mkdir()
    prefix = make_read_only(raw_runs)
    if prefix is None:
        raw_runs.chmod(0o755)
        pytest.skip("no way to make a folder read-only here (no unprivileged namespaces)")
    try:
        done = _session(project, "--ragv2-run-id=ro", "-p", "no:cacheprovider", prefix=prefix)
    finally:
        raw_runs.chmod(0o755)
    assert done.returncode == pytest.ExitCode.INTERNAL_ERROR
    line = _one_line(done)
    assert line.startswith(f"Exit: pytest-ragv2: raw runs could not be written: {raw_runs}/ro: ")
    assert line.split(": ")[-1].startswith(("Read-only file system;", "Permission denied;"))
    assert line.endswith("the session stopped before its first run (exit status 3)")
    assert list(raw_runs.iterdir()) == []


def test_a_holdout_look_that_cannot_be_recorded_stops_the_session_in_one_line(
    project: pytest.Pytester,
) -> None:
    """A holdout run records its look in the gate lock before its first run; a disk that
    cannot take it stops the session (exit status 3) in one line, the lock unchanged."""
    from pytest_ragv2.tools.cli import main

    (project.path / "pyproject.toml").write_text(pyproject())
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(project.path)
        assert main(["freeze-gates"]) == 0
    gate_lock = project.path / "ragv2-gates.lock.json"
    frozen = gate_lock.read_text(encoding="utf-8")
    project.makeconftest(LIMITED.format(limit=200))  # a session lock fits, a gate lock not
    done = _session(project, "--ragv2-split=holdout", "--ragv2-run-id=h")
    assert done.returncode == pytest.ExitCode.INTERNAL_ERROR
    assert _one_line(done) == (
        f"Exit: pytest-ragv2: the gate lock could not be written: {gate_lock}: File too large; "
        "the session stopped before its first run (exit status 3)"
    )
    assert gate_lock.read_text(encoding="utf-8") == frozen
    assert not (project.path / "ragv2-gates.lock.tmp").exists()
    assert not (project.path / "raw-runs").exists()
