"""Per-item harness overhead of layer A against a bare parametrized pytest + httpx test.

Both sessions make the same POST to the same instant rag_api-shaped loopback endpoint,
serially, in fresh interpreters, with byte code cached as on an installed package. Each
kind of session is timed at two sizes; the slope between them is the per-item cost and the
intercept the fixed start-up and tear-down cost, so machine noise in one does not hide in
the other. Targets: at most 1.3x the bare session's wall time at 1,000 items; at most
0.3 ms added per item; at most 0.3 s added fixed cost (start-up); at most 100 MB peak memory
at 500 items. ``bench_targets.py`` measures every target of the issue with repeats.

    python benchmarks/bench_overhead.py [--items 1000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from _common import serve, timed_pytest, write_project


def best_time(root: Path, repeat: int, *args: str) -> tuple[float, float]:
    """Best wall time of ``repeat`` sessions and the largest peak RSS (MB) among them."""
    times, peaks = [], []
    for _ in range(repeat):
        seconds, status, out, peak_mb = timed_pytest(root, *args)
        assert status == 0, out[-3000:]
        times.append(seconds)
        peaks.append(peak_mb)
    return min(times), max(peaks)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--items", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    small = max(args.items // 5, 1)
    server, url = serve()
    results: dict[tuple[str, int], tuple[float, float]] = {}
    with tempfile.TemporaryDirectory() as directory:
        for size in (small, args.items):
            root = Path(directory) / str(size)
            write_project(root, url, size)
            timed_pytest(root, "--ragv2-layer=A")  # warm-up: byte code, caches
            timed_pytest(root, "test_bare.py")
            results["bare", size] = best_time(root, args.repeat, "test_bare.py")
            results["ragv2", size] = best_time(root, args.repeat, "--ragv2-layer=A")
        peak_500 = None
        if args.items != 500:
            root = Path(directory) / "500"
            write_project(root, url, 500)
            peak_500 = best_time(root, 1, "--ragv2-layer=A")[1]
    server.shutdown()
    span = args.items - small

    def slope(kind: str) -> float:
        return (results[kind, args.items][0] - results[kind, small][0]) / span

    def intercept(kind: str) -> float:
        return results[kind, small][0] - slope(kind) * small

    print(f"best of {args.repeat}, sessions of {small} and {args.items} items")
    for kind in ("bare", "ragv2"):
        print(
            f"{kind:6}: {results[kind, small][0]:.3f} s / {results[kind, args.items][0]:.3f} s; "
            f"{slope(kind) * 1000:.3f} ms per item, fixed {intercept(kind):.3f} s, "
            f"peak RSS {results[kind, args.items][1]:.0f} MB"
        )
    ratio = results["ragv2", args.items][0] / results["bare", args.items][0]
    print(f"ratio at {args.items} items: {ratio:.2f}x (target <= 1.3x)")
    print(f"added per item: {(slope('ragv2') - slope('bare')) * 1000:.3f} ms (target <= 0.3 ms)")
    print(f"added fixed cost: {intercept('ragv2') - intercept('bare'):.3f} s (target <= 0.3 s)")
    if peak_500 is not None:
        print(f"peak RSS at 500 items: {peak_500:.0f} MB (target <= 100 MB)")


if __name__ == "__main__":
    main()
