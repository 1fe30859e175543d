"""Layer A with -n 4 against an endpoint that takes 20 ms per request, against serial.

Target: a speed-up with -n 4 at least the bare pytest + httpx test's on the same machine
(``bench_targets.py --only xdist`` measures it with repeats).

    python benchmarks/bench_xdist.py [--items 200] [--workers 4]
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from _common import serve, timed_pytest, write_project


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--items", type=int, default=200)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--latency-ms", type=float, default=20.0)
    args = parser.parse_args()
    server, url = serve(delay_s=args.latency_ms / 1000)
    with tempfile.TemporaryDirectory() as directory:
        root = Path(directory)
        write_project(root, url, args.items)
        serial, status, out, _ = timed_pytest(root, "--ragv2-layer=A", "--ragv2-run-id=serial")
        assert status in (0, 1), out[-2000:]
        parallel, status, out, _ = timed_pytest(
            root, "--ragv2-layer=A", "--ragv2-run-id=parallel", "-n", str(args.workers)
        )
        assert status in (0, 1), out[-2000:]
        # the same machine's ceiling: a bare pytest + httpx test, serial and under xdist
        bare_serial, _, _, _ = timed_pytest(root, "test_bare.py")
        bare_parallel, _, _, _ = timed_pytest(root, "test_bare.py", "-n", str(args.workers))
    server.shutdown()
    floor = args.items * args.latency_ms / 1000
    print(
        f"items: {args.items}, endpoint latency {args.latency_ms:.0f} ms "
        f"(serial floor {floor:.2f} s)"
    )
    print(
        f"serial : {serial:.3f} s "
        f"({(serial - floor) / args.items * 1000:.2f} ms/item over the floor)"
    )
    print(f"-n {args.workers}   : {parallel:.3f} s")
    print(f"speed-up: {serial / parallel:.2f}x")
    print(
        f"bare pytest + httpx on this machine: serial {bare_serial:.3f} s, "
        f"-n {args.workers} {bare_parallel:.3f} s, speed-up {bare_serial / bare_parallel:.2f}x"
        " (target: ragv2's speed-up at least this)"
    )


if __name__ == "__main__":
    main()
