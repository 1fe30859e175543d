"""Per-item and fixed cost in instructions (valgrind's callgrind), immune to machine noise.

Counts the instructions of whole sessions at two sizes, for layer A and for the bare
parametrized pytest + httpx test, against the same instant loopback endpoint. Slow (each
session runs under valgrind); the counts repeat exactly for the same code and inputs.

    python benchmarks/bench_instructions.py [--small 20] [--large 120]
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from _common import serve, write_project


def instructions(root: Path, *args: str) -> int:
    env = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args]
    subprocess.run(command, cwd=root, env=env, capture_output=True, check=False)  # byte code
    with tempfile.TemporaryDirectory() as scratch:
        completed = subprocess.run(
            ["valgrind", "--tool=callgrind", f"--callgrind-out-file={scratch}/out", *command],
            cwd=root,
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
    found = re.search(r"Collected : (\d+)", completed.stderr)
    if found is None:
        raise RuntimeError(completed.stderr[-2000:])
    return int(found.group(1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--small", type=int, default=20)
    parser.add_argument("--large", type=int, default=120)
    args = parser.parse_args()
    server, url = serve()
    counts: dict[tuple[str, int], int] = {}
    for size in (args.small, args.large):
        with tempfile.TemporaryDirectory() as directory:
            root = Path(directory)
            write_project(root, url, size)
            counts["bare", size] = instructions(root, "test_bare.py")
            counts["ragv2", size] = instructions(root, "--ragv2-layer=A")
    server.shutdown()
    span = args.large - args.small
    per = {
        kind: (counts[kind, args.large] - counts[kind, args.small]) / span
        for kind in ("bare", "ragv2")
    }
    for kind in ("bare", "ragv2"):
        fixed = counts[kind, args.small] - per[kind] * args.small
        print(f"{kind:6}: {per[kind] / 1e6:.2f} M instructions per item, fixed {fixed / 1e9:.2f} G")
    print(f"per item, layer A / bare: {per['ragv2'] / per['bare']:.2f}x")


if __name__ == "__main__":
    main()
