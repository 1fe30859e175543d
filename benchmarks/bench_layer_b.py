"""Layer B's own cost: a serial end-to-end session against a model with a known latency.

The demo server (in this process) answers every chat request after an added delay
(``--latency-ms``, 20 by default) and records the start and end of each one; the system's
searches go to its rag_api route. A generated project runs N single-turn cases, one
system, serially, at layer B. Reported:

- model_s: the server-side time of every chat request (the model's own latency);
- search_s: the client-side time of every harness-executed search (from the raw runs);
- conversations_s: the harness's clock around each whole conversation, summed;
- session_s: the pytest process's wall time, and startup_s the same session with every
  case deselected (interpreter, pytest, plugin, configuration, collection);
- overhead = (session_s - startup_s - model_s - search_s) / (model_s + search_s): the
  protocol's bar is "a serial end-to-end run no more than 2 % slower than the sum of the
  model's own latencies";
- bare_s: a bare parametrized pytest + httpx test making the same calls per conversation
  (chat with the search tool, the search, chat with its result) against the same server;
  the per-conversation target is at most 1.0 ms over it.

    python benchmarks/bench_layer_b.py --items 100 300 --latency-ms 50

Two sizes separate the per-conversation cost (the slope) from the in-session fixed cost
(loading the scorers and the language model, the statistics at the end).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import chat_run_times, demo_server, timed_pytest, write_chat_project

from ragv2_demo.server import DemoServer


def measure(server: DemoServer, items: int, latency_ms: float) -> dict[str, float]:
    """One serial session of ``items`` conversations, its breakdown, and the bare partner's."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        write_chat_project(root, server.url, items, latency_ms)
        timed_pytest(root, "--ragv2-layer=B", "-k", "no_such_case")  # byte code cached
        startup_s, _, _, _ = timed_pytest(root, "--ragv2-layer=B", "-k", "no_such_case")
        before = len(server.request_log)
        session_s, status, out, peak_mb = timed_pytest(
            root, "--ragv2-layer=B", "--ragv2-run-id=bench"
        )
        log = server.request_log[before:]
        model_s = sum(end - start for path, start, end in log if path.startswith("/chat/"))
        search_s, conversations_s, count = chat_run_times(root / "raw-runs" / "bench")
        bare_s, bare_status, bare_out, _ = timed_pytest(root, "test_bare_chat.py")
    if count != items:
        print(out[-3000:])
        raise SystemExit(f"expected {items} conversations, found {count} (status {status})")
    if bare_status != 0:
        raise SystemExit(f"the bare chat test failed (status {bare_status}):\n{bare_out[-3000:]}")
    return {
        "items": items,
        "model_s": model_s,
        "search_s": search_s,
        "conversations_s": conversations_s,
        "session_s": session_s,
        "startup_s": startup_s,
        "peak_mb": peak_mb,
        "overhead_s": session_s - startup_s - model_s - search_s,
        "bare_s": bare_s,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=int, nargs=2, default=[100, 300])
    parser.add_argument("--latency-ms", type=float, default=20.0)
    args = parser.parse_args()
    with demo_server() as server:
        runs = [measure(server, items, args.latency_ms) for items in args.items]
    print(f"model latency {args.latency_ms:g} ms per chat request (two per conversation)")
    for run in runs:
        system_s = run["model_s"] + run["search_s"]
        print(
            f"items {run['items']:4d}: model_s {run['model_s']:.3f} search_s {run['search_s']:.3f}"
            f" conversations_s {run['conversations_s']:.3f} session_s {run['session_s']:.3f}"
            f" startup_s {run['startup_s']:.3f} bare_s {run['bare_s']:.3f}"
            f" peak RSS {run['peak_mb']:.0f} MB;"
            f" end to end {100 * run['overhead_s'] / system_s:+.1f} % over the system's time"
        )
    first, second = runs
    span = second["items"] - first["items"]
    per_item = (second["overhead_s"] - first["overhead_s"]) / span
    fixed = first["overhead_s"] - per_item * first["items"]
    inside = [
        (run["conversations_s"] - run["model_s"] - run["search_s"]) / run["items"] for run in runs
    ]
    print(
        f"harness per conversation {per_item * 1000:.2f} ms (slope between the two sizes), "
        f"of which inside the conversation (client side of the calls) "
        f"{sum(inside) / len(inside) * 1000:.2f} ms; fixed in-session cost {fixed:.2f} s"
    )
    ragv2_slope = (second["session_s"] - first["session_s"]) / span
    bare_slope = (second["bare_s"] - first["bare_s"]) / span
    print(
        f"per conversation: ragv2 {ragv2_slope * 1000:.2f} ms, bare chat test "
        f"{bare_slope * 1000:.2f} ms, added {(ragv2_slope - bare_slope) * 1000:+.2f} ms "
        "(target <= 1.0 ms)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
