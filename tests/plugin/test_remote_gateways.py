"""Workers on other hosts: pytest-xdist's execnet socket gateways.

Each "host" is an execnet socket server on a loopback port, started in a folder of its own
that holds a checkout (a copy) of the project, as a team's machine would. The controller
runs the session with ``--tx socket=127.0.0.1:PORT//id=...//chdir=project``; the raw runs
must come back over the gateway onto the controller's disk, and nothing may be written on
the hosts.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.artifacts import artifact_text
from tests.layers.test_layer_b import CHAT_CASES, CHATBOT, chat_pyproject
from tests.plugin.test_plugin import summary_of

SEED = "--ragv2-seed=5"
LISTENING = re.compile(r"Entering Accept loop \('127\.0\.0\.1', (\d+)\)")
NOT_COPIED = shutil.ignore_patterns("raw-runs", "reports", ".pytest_cache", "__pycache__")
TIMING_GATES = {"retrieval_p95", "e2e_p95"}
SESSION_TIMEOUT_S = 120


@dataclass(slots=True)
class Host:
    """One execnet socket server and the folder it serves from (its "home")."""

    home: Path
    port: int
    process: subprocess.Popen[bytes]

    def tx(self, name: str) -> str:
        return f"socket=127.0.0.1:{self.port}//id={name}//chdir=project"

    def files(self) -> dict[str, str]:
        """Every file under the host's folder, with its sha256."""
        return {
            str(path.relative_to(self.home)): hashlib.sha256(path.read_bytes()).hexdigest()
            for path in sorted(self.home.rglob("*"))
            if path.is_file()
        }


def _start_server(home: Path, log: Path) -> Host:
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "PYTHONDONTWRITEBYTECODE": "1"}
    with log.open("wb") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "execnet.script.socketserver", "127.0.0.1:0"],
            cwd=home,
            stdout=out,
            stderr=subprocess.STDOUT,
            env=env,
        )
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        found = LISTENING.search(log.read_text(errors="replace"))
        if found:
            return Host(home, int(found.group(1)), process)
        if process.poll() is not None:
            break
        time.sleep(0.02)
    process.kill()
    process.wait()
    pytest.skip(f"execnet's socket server did not start: {log.read_text(errors='replace')}")


@pytest.fixture
def hosts(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Callable[[Path], tuple[Host, Host]]]:
    """Two socket servers, each serving from a folder holding a copy of the project."""
    started: list[Host] = []

    def start(project: Path) -> tuple[Host, Host]:
        pair = []
        for name in ("host1", "host2"):
            home = tmp_path_factory.mktemp(name)
            shutil.copytree(project, home / "project", ignore=NOT_COPIED)
            logs = tmp_path_factory.mktemp(f"{name}-log")
            host = _start_server(home, logs / "server.log")
            started.append(host)
            pair.append(host)
        return pair[0], pair[1]

    yield start
    for host in started:
        host.process.kill()
        host.process.wait()


def _tx(one: Host, two: Host) -> list[str]:
    return ["--dist=load", "--tx", one.tx("host1"), "--tx", two.tx("host2")]


def _remote_session(project: pytest.Pytester, *args: str) -> pytest.RunResult:
    """In a subprocess with a time limit: a worker that cannot start on its host (a broken
    checkout) leaves xdist's controller waiting for it, which must fail the test, not hang."""
    return project.runpytest_subprocess(*args, timeout=SESSION_TIMEOUT_S)


def _without_timing(value: Any) -> Any:
    """A summary without what differs between two sessions of the same run: latencies,
    the latency gates, the run's own name and folder."""
    if isinstance(value, dict):
        return {
            key: _without_timing(item)
            for key, item in value.items()
            if "latency" not in key and key not in ("run_id", "raw_runs")
        }
    if isinstance(value, list):
        return [
            _without_timing(item)
            for item in value
            if not (isinstance(item, dict) and item.get("name") in TIMING_GATES)
        ]
    return value


def _raw_runs(run_dir: Path) -> dict[str, list[dict[str, Any]]]:
    """Each raw-run file's lines, by file name."""
    return {
        path.name: [json.loads(line) for line in artifact_text(path).splitlines()]
        for path in sorted(run_dir.glob("runs-*"))
    }


def _keys(lines: list[dict[str, Any]]) -> list[str]:
    return sorted(json.dumps(line["key"], sort_keys=True) for line in lines)


def _rescored(project: Path, run_id: str, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    from pytest_ragv2.tools.cli import main

    monkeypatch.chdir(project)
    main(["rescore", f"raw-runs/{run_id}", "--output", f"rescored-{run_id}"])
    path = project / f"rescored-{run_id}" / "summary.json"
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def test_layer_a_over_two_socket_gateways_equals_a_serial_run(
    project: pytest.Pytester,
    hosts: Callable[[Path], tuple[Host, Host]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    one, two = hosts(project.path)
    before = (one.files(), two.files())
    args = ["--ragv2-layer=A", SEED, "--ragv2-reps=2"]
    serial = project.runpytest(*args, "--ragv2-run-id=serial")
    remote = _remote_session(project, *args, "--ragv2-run-id=remote", *_tx(one, two))
    assert serial.ret == remote.ret == pytest.ExitCode.OK, remote.stdout.str()
    expected, got = summary_of(project, "serial"), summary_of(project, "remote")
    assert got["runs"] == {"expected": 20, "recorded": 20}
    assert _without_timing(got) == _without_timing(expected)
    # the raw runs came back over the gateways: one file per host, every run once
    files = _raw_runs(project.path / "raw-runs" / "remote")
    assert sorted(files) == ["runs-host1.jsonl", "runs-host2.jsonl"]
    assert all(files.values()), "both hosts ran items"
    shipped = files["runs-host1.jsonl"] + files["runs-host2.jsonl"]
    assert _keys(shipped) == _keys(
        _raw_runs(project.path / "raw-runs" / "serial")["runs-main.jsonl"]
    )
    assert len(set(_keys(shipped))) == 20
    # the controller's own folder is the whole run: a rescore there gives the same figures
    rescored = _rescored(project.path, "remote", monkeypatch)
    assert _without_timing(rescored)["systems"] == _without_timing(got)["systems"]
    assert rescored["verdict"] == got["verdict"] == "pass"
    # nothing on the hosts: no raw runs, no reports, no copy of pytest (xdist's rsync)
    assert (one.files(), two.files()) == before


def _chat_project(project: pytest.Pytester) -> None:
    """Two chat systems (a scripted assistant run per turn) on two inference slots."""
    (project.path / "chatbot.py").write_text(CHATBOT)
    (project.path / "cases" / "development.yaml").write_text(CHAT_CASES)
    text = chat_pyproject()
    for role, slot in (("baseline", "slot-a"), ("candidate", "slot-b")):
        text = text.replace(f'role = "{role}"', f'role = "{role}"\nslot = "{slot}"')
    (project.path / "pyproject.toml").write_text(text)


def test_layer_b_slots_over_two_socket_gateways_equal_a_serial_run(
    project: pytest.Pytester,
    hosts: Callable[[Path], tuple[Host, Host]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _chat_project(project)
    one, two = hosts(project.path)
    before = (one.files(), two.files())
    serial = project.runpytest("--ragv2-layer=B", SEED, "--ragv2-run-id=serial")
    remote = _remote_session(
        project, "--ragv2-layer=B", SEED, "--ragv2-run-id=remote", *_tx(one, two)
    )
    assert serial.ret == remote.ret == pytest.ExitCode.OK, remote.stdout.str()
    expected, got = summary_of(project, "serial"), summary_of(project, "remote")
    assert got["runs"]["recorded"] == got["runs"]["expected"] == expected["runs"]["expected"]
    assert _without_timing(got) == _without_timing(expected)
    files = _raw_runs(project.path / "raw-runs" / "remote")
    assert sorted(files) == ["runs-host1.jsonl.gz", "runs-host2.jsonl.gz"]
    # one slot per gateway: each host ran every conversation of one system, in parallel
    systems = {name: {line["key"]["system"] for line in lines} for name, lines in files.items()}
    assert sorted(map(sorted, systems.values())) == [["v1"], ["v2"]]
    serial_lines = _raw_runs(project.path / "raw-runs" / "serial")["runs-main.jsonl.gz"]
    assert _keys([*files["runs-host1.jsonl.gz"], *files["runs-host2.jsonl.gz"]]) == _keys(
        serial_lines
    )
    rescored = _rescored(project.path, "remote", monkeypatch)
    assert _without_timing(rescored)["systems"] == _without_timing(got)["systems"]
    assert (one.files(), two.files()) == before


def test_a_host_with_other_gold_is_refused_before_any_run(
    project: pytest.Pytester, hosts: Callable[[Path], tuple[Host, Host]]
) -> None:
    one, two = hosts(project.path)
    changed = two.home / "project" / "cases" / "holdout.yaml"
    changed.write_text(changed.read_text().replace("page: 2", "page: 3"))
    before = (one.files(), two.files())
    result = _remote_session(project, "--ragv2-layer=A", "--ragv2-run-id=remote", *_tx(one, two))
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    err = result.stderr.str()
    assert "worker host2" in err
    assert "cases/holdout.yaml: differs" in err
    assert "development.yaml" not in err  # the files that agree are not named
    assert not (project.path / "raw-runs" / "remote").exists()
    assert (one.files(), two.files()) == before


def test_resuming_with_workers_on_other_hosts_is_refused(project: pytest.Pytester) -> None:
    # refused from the command line alone: no gateway is opened
    project.runpytest("--ragv2-layer=A", "--ragv2-run-id=first")
    result = project.runpytest(
        "--ragv2-layer=A",
        "--ragv2-resume=first",
        "--dist=load",
        "--tx",
        "socket=127.0.0.1:9//id=far//chdir=project",
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "workers on other hosts" in result.stderr.str()


@pytest.mark.parametrize("compress", [False, True])
def test_shipped_lines_are_written_byte_for_byte_as_a_local_worker_writes_them(
    tmp_path: Path, compress: bool
) -> None:
    from pytest_ragv2.plugin.gateways import ShippedRawRuns
    from pytest_ragv2.run.rawruns import RawRunWriter, ShippingWriter

    records = [{"key": {"case": "C01", "rep": n}, "answer": "Druck: 16 bar ✓"} for n in (1, 2)]
    local = RawRunWriter(tmp_path / "local", "w", compress=compress)
    remote = ShippingWriter(tmp_path / "remote", "w", compress=compress)
    for record in records:
        local.append(record)
        remote.append(record)
    lines = remote.take()
    assert remote.take() == []  # each line travels once
    shipped = ShippedRawRuns(
        lambda worker: RawRunWriter(tmp_path / "ctl", worker, compress=compress)
    )
    assert shipped.receive("w", lines) is None
    local.close()
    shipped.close()
    assert not (tmp_path / "remote").exists()  # nothing written where the worker runs
    name = local.path.name
    assert (tmp_path / "ctl" / name).read_bytes() == local.path.read_bytes()


def test_differing_files_names_each_difference() -> None:
    from pytest_ragv2.plugin.gateways import differing_files

    here = {"cases/a.yaml": "1" * 64, "cases/b.yaml": "2" * 64, "pyproject.toml": "3" * 64}
    there = {"cases/a.yaml": "1" * 64, "cases/c.yaml": "4" * 64, "pyproject.toml": None}
    assert differing_files(here, there) == [
        "cases/b.yaml: missing on the worker's host",
        "cases/c.yaml: on the worker's host only, not part of this run",
        "pyproject.toml: missing on the worker's host",
    ]
    assert differing_files(here, dict(here)) == []
