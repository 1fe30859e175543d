"""Scoring layer-B conversations whose evidence is new: the bundled benchmark's own runs.

The layer-B target (``bench_targets.py``) asks five questions over and over, so after the
first five conversations every evidence text it scores has been read before: the parse of a
text's numbers, identifiers and filenames (its *support*) is cached by text and costs
nothing. A real benchmark asks distinct questions and each conversation brings chunks never
read in that process, and a tool result (the rendered search results) that is new every
time. This measures that cost on the bundled benchmark's layer-B raw runs (every case, both
systems, five repetitions), scoring each conversation as a session scores it
(``layers.chat.score_raw_chat_run``, the rescoring path, which builds the same record):

- **first pass**, in a fresh interpreter: every text is parsed the first time it is met, as
  in a live session (a chunk retrieved again for another case or repetition is cached);
- **second pass**, same process: every text cached, as in the layer-B target;
- **support per KB**: parsing every distinct support text of the run once, uncached.

    python benchmarks/bench_evidence.py              # a bundled layer-B run first (~1 min)
    python benchmarks/bench_evidence.py --run DIR    # an existing layer-B run's raw runs
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import REPO, bundled_config

PYTEST = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
SESSION = ["--ragv2-seed=20261130", "--ragv2-run-id=bench"]


def bundled_run(folder: Path) -> Path:
    """A layer-B session on the bundled benchmark (``-n 2``), its raw runs under ``folder``."""
    path = bundled_config(folder)
    subprocess.run(
        [*PYTEST, "--ragv2-layer=B", "-n", "2", f"--ragv2-config={path}", *SESSION],
        cwd=REPO,
        capture_output=True,
        check=False,
    )
    return folder / "raw-runs" / "bench"


def _support_texts(raw: dict[str, Any]) -> list[str]:
    from pytest_ragv2.systems.transcripts import Transcript

    texts = []
    for turn in Transcript.from_json(raw["transcript"]).turns:
        texts += [item.text for item in turn.evidence]
        texts += [call.result for call in turn.tool_calls if call.result]
        texts += [citation.content for citation in turn.citations if citation.content]
    return texts


def measure(run_dir: Path) -> dict[str, float]:
    """Both passes and the uncached support parse over ``run_dir`` (in this process)."""
    from pytest_ragv2.gold.allowlist import load_allowlist
    from pytest_ragv2.gold.cases import load_catalog
    from pytest_ragv2.layers.chat.run import score_raw_chat_run, scoring_options
    from pytest_ragv2.run.raw_models import ChatRawRun, read_raw_run
    from pytest_ragv2.run.rawruns import read_raw_runs
    from pytest_ragv2.scoring.grounding import text_support
    from pytest_ragv2.scoring.language import rank_languages
    from pytest_ragv2.scoring.normalisation import normalise
    from pytest_ragv2.scoring.values import read_values

    allowlist = load_allowlist(REPO / "gold" / "allowlist.yaml")
    catalog = load_catalog(REPO / "cases", REPO / "gold", allowlist=allowlist)
    allowed = allowlist.file_ids | allowlist.filenames
    options = scoring_options({})
    raws = [raw for raw in read_raw_runs(run_dir) if "transcript" in raw]
    work = []
    for raw in raws:
        loaded = catalog.find(raw["key"]["case"])
        line = read_raw_run(raw)
        if loaded is not None and isinstance(line, ChatRawRun):
            work.append((raw, line, loaded.case, loaded.split))
    rank_languages("a warm-up sentence so the language model is loaded")

    def one_pass() -> list[float]:
        times = []
        for _, line, case, split in work:
            started = time.perf_counter()
            key = line.key.run_key("B")
            score_raw_chat_run(
                key, line, case=case, split=split, allowed_files=allowed, options=options
            )
            times.append(time.perf_counter() - started)
        return times

    first = one_pass()
    second = one_pass()
    distinct = sorted({text for raw, _, _, _ in work for text in _support_texts(raw)})
    text_support.cache_clear()
    normalise.cache_clear()
    read_values.cache_clear()
    started = time.perf_counter()
    for text in distinct:
        text_support(text)
    parse_s = time.perf_counter() - started
    kilobytes = sum(len(text) for text in distinct) / 1000
    per_conversation = [sum(len(t) for t in _support_texts(raw)) / 1000 for raw, _, _ in work]
    return {
        "conversations": len(work),
        "first_ms": statistics.mean(first) * 1e3,
        "first_median_ms": statistics.median(first) * 1e3,
        "second_ms": statistics.mean(second) * 1e3,
        "second_median_ms": statistics.median(second) * 1e3,
        "support_kb_per_conversation": statistics.mean(per_conversation),
        "distinct_support_kb": kilobytes,
        "support_ms_per_kb": parse_s * 1e3 / kilobytes if kilobytes else float("nan"),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run", type=Path, help="a layer-B run's raw-runs folder")
    parser.add_argument("--one", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--repeat", type=int, default=3, help="fresh interpreters (3)")
    args = parser.parse_args(argv)
    if args.one:
        print(json.dumps(measure(args.one)))
        return 0
    with tempfile.TemporaryDirectory(prefix="ragv2-evidence-") as tmp:
        run_dir = args.run or bundled_run(Path(tmp))
        results = []
        for _ in range(args.repeat):
            done = subprocess.run(
                [sys.executable, __file__, "--one", str(run_dir)],
                capture_output=True,
                text=True,
                check=True,
            )
            results.append(json.loads(done.stdout.strip().splitlines()[-1]))

    def spread(name: str, digits: int = 2) -> str:
        values = sorted(result[name] for result in results)
        low, middle, high = values[0], statistics.median(values), values[-1]
        return f"{middle:.{digits}f} ({low:.{digits}f}–{high:.{digits}f})"

    first = results[0]
    print(
        f"{first['conversations']:,} layer-B conversations,"
        f" {first['support_kb_per_conversation']:.1f} KB of support texts each,"
        f" {first['distinct_support_kb']:,.0f} KB distinct;"
        f" {len(results)} fresh interpreter{'s' if len(results) > 1 else ''}, median (min–max)"
    )
    print(f"scoring, first pass (texts new)   : {spread('first_ms')} ms a conversation")
    print(f"scoring, second pass (all cached) : {spread('second_ms')} ms a conversation")
    print(f"support parse, uncached           : {spread('support_ms_per_kb', 3)} ms per KB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
