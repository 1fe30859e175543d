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


def _start_server(home: Path, log: Path, **extra_env: str) -> Host:
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "PYTHONDONTWRITEBYTECODE": "1", **extra_env}
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


# -- hardened gateways: hosts that cannot take a worker, lost hosts, other code -----------


def test_an_unreachable_or_busy_host_is_named_before_any_run(project: pytest.Pytester) -> None:
    """A port nobody listens on, and a server that accepts and never answers (a socket
    server busy with another session's worker looks so): both named, exit 4, nothing run."""
    import socket

    with socket.socket() as closed, socket.socket() as busy:
        closed.bind(("127.0.0.1", 0))  # bound, not listening: connection refused
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)  # accepts into its backlog, answers nothing
        tx = [
            "--dist=load",
            "--tx",
            f"socket=127.0.0.1:{closed.getsockname()[1]}//id=gone//chdir=project",
            "--tx",
            f"socket=127.0.0.1:{busy.getsockname()[1]}//id=busy//chdir=project",
        ]
        result = _remote_session(project, "--ragv2-layer=A", "--ragv2-run-id=remote", *tx)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    err = result.stderr.str()
    assert "2 worker host(s) cannot take a worker" in err
    assert "worker gone" in err
    assert "Connection refused" in err
    assert "worker busy" in err
    assert "no answer" in err
    assert "within 10 s" in err
    assert "Traceback" not in err + result.stdout.str()
    assert not (project.path / "raw-runs").exists()


def test_two_workers_on_one_socket_server_are_refused(project: pytest.Pytester) -> None:
    tx = ["socket=127.0.0.1:8888//id=a//chdir=project", "socket=127.0.0.1:8888//id=b//chdir=p"]
    result = project.runpytest("--ragv2-layer=A", "--dist=load", "--tx", tx[0], "--tx", tx[1])
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "127.0.0.1:8888: 2 --tx lines" in result.stderr.str()


def test_the_embedded_demo_with_workers_on_other_hosts_is_refused(
    bundled: pytest.Pytester,
) -> None:
    result = bundled.runpytest(
        "--ragv2-layer=A", "--dist=load", "--tx", "socket=127.0.0.1:8888//id=far//chdir=x"
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "with the embedded demo" in result.stderr.str()
    assert not (bundled.path / "raw-runs").exists()


def _alternative_plugin(home: Path) -> Path:
    """A copy of the plugin's sources with one scorer changed, for a host's interpreter to
    find before the installed one (PYTHONPATH)."""
    import pytest_ragv2

    target = home / "other-plugin"
    shutil.copytree(Path(pytest_ragv2.__file__).parent, target / "pytest_ragv2", ignore=NOT_COPIED)
    scorer = target / "pytest_ragv2" / "scoring" / "retrieval.py"
    scorer.write_text(scorer.read_text(encoding="utf-8") + "\n# changed on this host\n")
    return target


def test_a_host_with_another_scorer_or_system_module_is_refused(
    project: pytest.Pytester,
    hosts: Callable[[Path], tuple[Host, Host]],
    tmp_path: Path,
) -> None:
    one, two = hosts(project.path)
    module = two.home / "project" / "ragsystems.py"
    module.write_text(module.read_text() + "\n# edited on host2 only\n")
    result = _remote_session(project, "--ragv2-layer=A", "--ragv2-run-id=remote", *_tx(one, two))
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    err = result.stderr.str()
    assert "worker host2" in err
    assert "python system module ragsystems: differs" in err
    assert "worker host1" not in err
    # a host whose installed plugin has another scorer: its server started with that copy
    other = _alternative_plugin(tmp_path)
    three_home = tmp_path / "host3"
    shutil.copytree(project.path, three_home / "project", ignore=NOT_COPIED)
    three = _start_server(three_home, tmp_path / "host3.log", PYTHONPATH=str(other))
    try:
        result = _remote_session(
            project, "--ragv2-layer=A", "--ragv2-run-id=other", "--dist=load",
            "--tx", one.tx("host1"), "--tx", three.tx("host3"),
        )  # fmt: skip
    finally:
        three.process.kill()
        three.process.wait()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    err = result.stderr.str()
    assert "worker host3" in err
    assert "installed plugin source pytest_ragv2/scoring/retrieval.py: differs" in err


def test_a_host_whose_checkout_cannot_import_is_named_before_any_run(
    project: pytest.Pytester, hosts: Callable[[Path], tuple[Host, Host]]
) -> None:
    one, two = hosts(project.path)
    # the same module on both sides, importable only on the controller's
    (project.path / "helper_here.py").write_text("VALUE = 1\n")
    for path in (project.path, one.home / "project", two.home / "project"):
        module = path / "ragsystems.py"
        module.write_text("import helper_here  # noqa\n" + module.read_text())
    (one.home / "project" / "helper_here.py").write_text("VALUE = 1\n")
    result = _remote_session(project, "--ragv2-layer=A", "--ragv2-run-id=remote", *_tx(one, two))
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    err = result.stderr.str()
    assert "worker host2" in err
    assert "does not import: ModuleNotFoundError: No module named 'helper_here'" in err
    assert not (project.path / "raw-runs" / "remote" / "runs-host1.jsonl").exists()


def test_a_host_lost_mid_run_stops_cleanly_with_every_finished_run_kept_and_the_rest_named(
    project: pytest.Pytester, hosts: Callable[[Path], tuple[Host, Host]]
) -> None:
    from tests.conftest import SYSTEMS_MODULE, pyproject
    from tests.run.test_plan_budget import SLOW_SYSTEMS

    project.makepyfile(ragsystems=SYSTEMS_MODULE + SLOW_SYSTEMS)  # each run takes 1 s
    (project.path / "pyproject.toml").write_text(pyproject("slow_weak", "slow_good"))
    one, two = hosts(project.path)
    session = subprocess.Popen(
        [sys.executable, "-m", "pytest", "--ragv2-layer=A", "--ragv2-run-id=lost",
         "--ragv2-reps=2", SEED, *_tx(one, two)],
        cwd=project.path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    run_dir = project.path / "raw-runs" / "lost"
    deadline = time.monotonic() + SESSION_TIMEOUT_S
    while (
        not (run_dir / "runs-host2.jsonl").is_file()
        or not (run_dir / "runs-host2.jsonl").read_text()
    ):
        assert time.monotonic() < deadline, "host2 made no run"
        assert session.poll() is None, session.communicate()
        time.sleep(0.05)
    two.process.kill()  # the host is lost: its server, and the worker inside it, die
    out, err = session.communicate(timeout=SESSION_TIMEOUT_S)
    assert session.returncode == pytest.ExitCode.TESTS_FAILED, out + err
    assert "INTERNALERROR" not in out + err
    assert "host(s) lost: host2" in out
    summary = summary_of(project, "lost")
    recorded = summary["runs"]["recorded"]
    assert 0 < recorded < 20
    made = _keys([line for lines in _raw_runs(run_dir).values() for line in lines])
    assert len(made) == len(set(made)) == recorded  # every finished run kept, whole
    named = re.search(r"(\d+) run\(s\) not made: ([^;]+);", out)
    assert named is not None, out
    assert int(named.group(1)) >= 20 - recorded - 1  # the run in flight counts as lost
    assert "--ragv2-resume=lost" in out
    # resumable on this machine: the missing runs are made, the run is whole
    resumed = project.runpytest_subprocess(
        "--ragv2-layer=A",
        "--ragv2-reps=2",
        "--ragv2-resume=lost",
        "-n",
        "2",
        timeout=SESSION_TIMEOUT_S,
    )
    assert summary_of(project, "lost")["runs"] == {"expected": 20, "recorded": 20}, (
        resumed.stdout.str()
    )
