"""The raw run store: append-only lines, torn-line tolerance, the manifest's git commit."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from pytest_ragv2.rawruns import RawRunWriter, git_commit, read_raw_runs


def test_git_commit_read_from_the_repository_matches_git(tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / "f").write_text("x")
    for args in (["add", "f"], ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "m"]):
        subprocess.run(["git", *args], cwd=tmp_path, check=True)
    expected = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=tmp_path, capture_output=True, text=True, check=True
    ).stdout.strip()
    (tmp_path / "sub").mkdir()
    assert git_commit(tmp_path / "sub") == expected
    subprocess.run(["git", "pack-refs", "--all"], cwd=tmp_path, check=True)
    assert git_commit(tmp_path) == expected  # from packed-refs


def test_no_repository_means_no_commit(tmp_path: Path) -> None:
    if any((parent / ".git").exists() for parent in (tmp_path, *tmp_path.parents)):
        pytest.skip("the temporary directory lies inside a git repository")
    assert git_commit(tmp_path) is None


def test_torn_last_line_is_skipped(tmp_path: Path) -> None:
    writer = RawRunWriter(tmp_path, "main")
    writer.append({"n": 1})
    writer.append({"n": 2})
    writer.close()
    with (tmp_path / "runs-main.jsonl").open("a", encoding="utf-8") as stream:
        stream.write('{"n": 3, "tor')  # a process killed mid-write
    assert [run["n"] for run in read_raw_runs(tmp_path)] == [1, 2]
