"""Scale-out at layer A against an endpoint that takes 20 ms per request: serial, -n 2,
three shards merged (``--ragv2-shard=I/3`` + ``ragv2 merge``) and two or three execnet
socket-gateway "hosts" (socket servers on loopback, each serving its own copy of the
project, as a team's machines would).

    python benchmarks/bench_scale.py [--items 300] [--latency-ms 20] [--hosts 2]

The shards run one after the other here; in CI they are jobs on machines of their own, so
the wall time of a sharded run is its slowest shard plus the merge (printed beside the
sum). Every way must record every run: the merged and the remote runs' summaries are
checked against the serial run's.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import serve, timed_pytest, write_project

LISTENING = re.compile(r"Entering Accept loop \('127\.0\.0\.1', (\d+)\)")


def _start_host(home: Path) -> tuple[subprocess.Popen[bytes], int]:
    log = home / "server.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "execnet.script.socketserver", "127.0.0.1:0"],
            cwd=home,
            stdout=out,
            stderr=subprocess.STDOUT,
            env={"PYTHONUNBUFFERED": "1", "PATH": "/usr/bin:/bin"},
        )
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        found = LISTENING.search(log.read_text(errors="replace"))
        if found:
            return process, int(found.group(1))
        time.sleep(0.02)
    process.kill()
    raise SystemExit(f"socket server did not start: {log.read_text(errors='replace')}")


def _runs(root: Path, run_id: str) -> dict[str, int]:
    summary = json.loads((root / "reports" / run_id / "summary.json").read_text())
    runs: dict[str, int] = summary["runs"]
    return runs


def _merge(root: Path, shards: int) -> float:
    started = time.perf_counter()
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest_ragv2.tools.cli",
            "merge",
            *(f"raw-runs/shard-{index}" for index in range(1, shards + 1)),
            "--run-id",
            "merged",
        ],
        cwd=root,
        capture_output=True,
        text=True,
        check=False,
    )
    elapsed = time.perf_counter() - started
    assert done.returncode in (0, 1), done.stdout + done.stderr
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--items", type=int, default=300)
    parser.add_argument("--latency-ms", type=float, default=20.0)
    parser.add_argument("--hosts", type=int, default=2, choices=(2, 3))
    parser.add_argument("--shards", type=int, default=3)
    args = parser.parse_args()
    server, url = serve(delay_s=args.latency_ms / 1000)
    rows: list[tuple[str, float, str]] = []
    with tempfile.TemporaryDirectory() as directory:
        root = Path(directory) / "controller"
        root.mkdir()
        write_project(root, url, args.items)
        base = ("--ragv2-layer=A", "--ragv2-seed=1")
        serial, status, out, _ = timed_pytest(root, *base, "--ragv2-run-id=serial")
        assert status in (0, 1), out[-2000:]
        expected = _runs(root, "serial")
        rows.append(("serial", serial, ""))
        local, status, out, _ = timed_pytest(root, *base, "--ragv2-run-id=local", "-n", "2")
        assert status in (0, 1), out[-2000:]
        assert _runs(root, "local") == expected
        rows.append(("-n 2", local, ""))

        shard_times = []
        for index in range(1, args.shards + 1):
            seconds, status, out, _ = timed_pytest(
                root, *base, f"--ragv2-shard={index}/{args.shards}", f"--ragv2-run-id=shard-{index}"
            )
            assert status == 0, out[-2000:]
            shard_times.append(seconds)
        merge_s = _merge(root, args.shards)
        assert _runs(root, "merged") == expected
        rows.append(
            (
                f"{args.shards} shards merged",
                max(shard_times) + merge_s,
                f"slowest shard {max(shard_times):.2f} s + merge {merge_s:.2f} s "
                f"(shards {', '.join(f'{t:.2f}' for t in shard_times)} s; "
                f"one after another {sum(shard_times) + merge_s:.2f} s)",
            )
        )

        hosts = []
        try:
            for index in range(args.hosts):
                home = Path(directory) / f"host{index + 1}"
                shutil.copytree(
                    root, home / "project", ignore=shutil.ignore_patterns("raw-runs", "reports")
                )
                hosts.append(_start_host(home))
            tx = [
                part
                for index, (_, port) in enumerate(hosts)
                for part in ("--tx", f"socket=127.0.0.1:{port}//id=host{index + 1}//chdir=project")
            ]
            remote, status, out, _ = timed_pytest(
                root, *base, "--ragv2-run-id=remote", "--dist=load", *tx
            )
            assert status in (0, 1), out[-3000:]
            assert _runs(root, "remote") == expected
            rows.append((f"{args.hosts} socket-gateway hosts", remote, ""))
        finally:
            for process, _ in hosts:
                process.kill()
                process.wait()
    server.shutdown()
    floor = args.items * args.latency_ms / 1000
    print(
        f"layer A, {args.items} items, endpoint latency {args.latency_ms:.0f} ms "
        f"(serial floor {floor:.2f} s); every way recorded {expected['recorded']} runs"
    )
    for name, seconds, note in rows:
        print(f"  {name:<26} {seconds:7.2f} s  {serial / seconds:5.2f}x  {note}")


if __name__ == "__main__":
    main()
