"""A full disk in a real session: the file-size limit (RLIMIT_FSIZE) makes every write past
it fail with EFBIG, as a full disk fails with ENOSPC — the raw runs, then the reports."""

from __future__ import annotations

import json
import subprocess
import sys

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
    from pytest_ragv2.rawruns import read_raw_runs

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

    from pytest_ragv2.rawruns import RawRunWriteError, RawRunWriter, read_raw_runs

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
