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
  model's own latencies".

    python benchmarks/bench_layer_b.py --items 100 300 --latency-ms 20

Two sizes separate the per-conversation cost (the slope) from the in-session fixed cost
(loading the scorers and the language model, the statistics at the end).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import textwrap
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import timed_pytest

from pytest_ragv2.rawruns import read_raw_runs
from ragv2_demo.engine import DemoIndex
from ragv2_demo.server import DemoServer

ROBOTICS = Path(__file__).resolve().parent.parent / "corpus" / "nimbus-robotics"
QUESTIONS = [
    "What is the maximum speed of the Nimbus X2?",
    "What is the runtime of the Nimbus X2 on a single battery charge?",
    "How long is the standard warranty on the Nimbus X2?",
    "What is the payload capacity of the Nimbus X2?",
    "How many remote days are allowed per week?",
]


def write_project(root: Path, url: str, items: int, latency_ms: int) -> None:
    (root / "cases").mkdir()
    (root / "gold").mkdir()
    cases = "".join(
        f"- id: L{n:04d}\n  category: bench\n  layers: [B]\n"
        f"  prompt_en: {json.dumps(QUESTIONS[n % len(QUESTIONS)])}\n"
        "  expected_answer: {required_claims: ['Nimbus X2']}\n  required_evidence: []\n"
        for n in range(items)
    )
    (root / "cases" / "development.yaml").write_text(cases)
    files = sorted(path for path in ROBOTICS.iterdir() if path.suffix != ".yaml")
    (root / "gold" / "allowlist.yaml").write_text(
        "files:\n"
        + "".join(f"  - {{file_id: {path.stem}, filename: {path.name}}}\n" for path in files)
    )
    chat_url = f"{url}/chat/v2/fault/latency-{latency_ms}"
    (root / "pyproject.toml").write_text(
        textwrap.dedent(
            f"""\
            [tool.ragv2]
            repetitions = 1
            [tool.ragv2.systems.v2]
            role = "candidate"
            retrieval = {{adapter = "rag-api", url = "{url}/v2"}}
            chat = {{adapter = "openai-chat", url = "{chat_url}", model = "demo-v2"}}
            """
        )
    )


def search_seconds(root: Path) -> tuple[float, float, int]:
    """(search time, conversation time, conversations) from the raw runs."""
    search = conversations = 0.0
    count = 0
    for run_dir in (root / "raw-runs").iterdir():
        for raw in read_raw_runs(run_dir):
            count += 1
            conversations += raw["latency_s"]
            for turn in raw["transcript"]["turns"]:
                for exchange in turn["exchanges"]:
                    if "tool" in exchange["request"]:
                        search += exchange["latency_s"]
    return search, conversations, count


def measure(server: DemoServer, items: int, latency_ms: int) -> dict[str, float]:
    """One serial session of ``items`` conversations and its breakdown."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        write_project(root, server.url, items, latency_ms)
        timed_pytest(root, "--ragv2-layer=B", "-k", "no_such_case")  # byte code cached
        startup_s, _, _, _ = timed_pytest(root, "--ragv2-layer=B", "-k", "no_such_case")
        before = len(server.request_log)
        session_s, status, out, peak_mb = timed_pytest(root, "--ragv2-layer=B")
        log = server.request_log[before:]
        model_s = sum(end - start for path, start, end in log if path.startswith("/chat/"))
        search_s, conversations_s, count = search_seconds(root)
    if count != items:
        print(out[-3000:])
        raise SystemExit(f"expected {items} conversations, found {count} (status {status})")
    return {
        "items": items,
        "model_s": model_s,
        "search_s": search_s,
        "conversations_s": conversations_s,
        "session_s": session_s,
        "startup_s": startup_s,
        "peak_mb": peak_mb,
        "overhead_s": session_s - startup_s - model_s - search_s,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=int, nargs=2, default=[100, 300])
    parser.add_argument("--latency-ms", type=int, default=20)
    args = parser.parse_args()
    index = DemoIndex.from_corpus(ROBOTICS)
    with DemoServer(index) as server:
        runs = [measure(server, items, args.latency_ms) for items in args.items]
    print(f"model latency {args.latency_ms} ms per chat request (two per conversation)")
    for run in runs:
        system_s = run["model_s"] + run["search_s"]
        print(
            f"items {run['items']:4d}: model_s {run['model_s']:.3f} search_s {run['search_s']:.3f}"
            f" conversations_s {run['conversations_s']:.3f} session_s {run['session_s']:.3f}"
            f" startup_s {run['startup_s']:.3f} peak RSS {run['peak_mb']:.0f} MB;"
            f" end to end {100 * run['overhead_s'] / system_s:+.1f} % over the system's time"
        )
    first, second = runs
    per_item = (second["overhead_s"] - first["overhead_s"]) / (second["items"] - first["items"])
    fixed = first["overhead_s"] - per_item * first["items"]
    inside = [
        (run["conversations_s"] - run["model_s"] - run["search_s"]) / run["items"] for run in runs
    ]
    print(
        f"harness per conversation {per_item * 1000:.2f} ms (slope between the two sizes), "
        f"of which inside the conversation (client side of the calls) "
        f"{sum(inside) / len(inside) * 1000:.2f} ms; fixed in-session cost {fixed:.2f} s"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
