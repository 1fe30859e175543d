"""Per-item harness overhead of layer A against a bare parametrized pytest + httpx test.

Both sessions make the same POST to the same instant rag_api-shaped loopback endpoint,
serially, in fresh interpreters. Target: the layer-A session at most 1.3x the bare one's
wall time at 1,000 items, and at most 1 ms added per item.

    python benchmarks/bench_overhead.py [--items 1000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import resource
import statistics
import tempfile
from pathlib import Path

from _common import serve, timed_pytest, write_project


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--items", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    server, url = serve()
    with tempfile.TemporaryDirectory() as directory:
        root = Path(directory)
        write_project(root, url, args.items)
        bare_times, ragv2_times = [], []
        for _ in range(args.repeat):
            seconds, status, out = timed_pytest(root, "test_bare.py")
            assert status == 0, out[-2000:]
            bare_times.append(seconds)
            seconds, status, out = timed_pytest(root, "--ragv2-layer=A", "--ragv2-run-id=bench")
            assert status in (0, 1), out[-2000:]
            ragv2_times.append(seconds)
        empty, _, _ = timed_pytest(root, "--ragv2-layer=A", "--collect-only", "-k", "nothing")
    server.shutdown()
    peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    bare, ragv2 = min(bare_times), min(ragv2_times)
    print(f"items: {args.items}, best of {args.repeat}")
    print(
        f"bare pytest + httpx : {bare:.3f} s  (runs: {', '.join(f'{t:.3f}' for t in bare_times)})"
    )
    print(
        f"pytest --ragv2-layer=A: {ragv2:.3f} s  "
        f"(runs: {', '.join(f'{t:.3f}' for t in ragv2_times)})"
    )
    print(f"ratio               : {ragv2 / bare:.2f}x (target <= 1.3x)")
    print(f"added per item      : {(ragv2 - bare) / args.items * 1000:.3f} ms (target <= 1 ms)")
    print(f"layer-A start-up, collect-only of 0 items: {empty:.3f} s")
    print(f"peak RSS of any child session: {peak_mb:.0f} MB (target <= 100 MB at 500 items)")
    print(f"median ragv2: {statistics.median(ragv2_times):.3f} s")


if __name__ == "__main__":
    main()
