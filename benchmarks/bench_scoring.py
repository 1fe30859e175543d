"""Scoring time and peak memory of one answer, by answer size and shape.

Each answer is scored the way layer B scores a run (``layers.chat.chat_record`` on a
bundled single-turn case, the bundled allow-list, the default scoring options) in a fresh
interpreter per measurement, which is stopped after ``--timeout`` seconds. Shapes: ``plain``
(prose sentences), ``tokens`` (random words, numbers, units, identifiers, filenames,
separators) and ``nospace`` (one token without a space). Time is measured without
tracemalloc, peak memory (Python allocations, tracemalloc) in a second run.

    python benchmarks/bench_scoring.py [--sizes 1000 100000 1000000] [--timeout 120]
"""

from __future__ import annotations

import argparse
import json
import random
import string
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHAPES = ("plain", "tokens", "nospace")
PLAIN = "The maximum operating pressure of the valve is 16 bar at 20 °C, see the datasheet. "


def answer(shape: str, size: int, seed: int = 1) -> str:
    """An answer of ``size`` characters of the given shape (deterministic)."""
    rnd = random.Random(seed)
    if shape == "plain":
        return (PLAIN * (size // len(PLAIN) + 1))[:size]
    if shape == "nospace":
        return "".join(rnd.choices(string.ascii_letters, k=size))
    parts: list[str] = []
    total = 0
    while total < size:
        part = rnd.choice(
            [
                str(rnd.randint(0, 10**6)),
                "".join(rnd.choices(string.ascii_lowercase, k=rnd.randint(1, 10))),
                f"{rnd.randint(1, 999)} bar",
                f"DE-{rnd.randint(1, 9999)}",
                "spec.pdf",
                ".",
                "\n",
            ]
        )
        parts.append(part)
        total += len(part) + 1
    return " ".join(parts)[:size]


def _score(text: str) -> None:
    from pytest_ragv2.gold.allowlist import load_allowlist
    from pytest_ragv2.gold.cases import load_catalog
    from pytest_ragv2.layers.chat.run import chat_record
    from pytest_ragv2.run.keys import RunKey
    from pytest_ragv2.scoring.answers import AnswerScoringOptions, allowed_files
    from pytest_ragv2.systems.transcripts import ChatTurn, Transcript

    allowlist = load_allowlist(ROOT / "gold" / "allowlist.yaml")
    catalog = load_catalog(ROOT / "cases", ROOT / "gold", allowlist=allowlist)
    case = next(
        loaded.case
        for loaded in catalog.cases()
        if not loaded.case.turns
        and loaded.case.expected_answer
        and loaded.case.expected_answer.required_claims
    )
    lang = next(iter(case.all_prompts()))
    options = AnswerScoringOptions()
    files = allowed_files(allowlist)

    def run(answer_text: str) -> None:
        transcript = Transcript([ChatTurn(prompt=case.all_prompts()[lang], answer=answer_text)], 1)
        chat_record(
            RunKey(case.id, "bench", 1, lang, "B"),
            case=case,
            split="development",
            role="candidate",
            transcript=transcript,
            allowed_files=files,
            options=options,
        )

    run("A short warm-up answer in plain English words.")  # loads py3langid, caches
    started = time.perf_counter()
    run(text)
    seconds = time.perf_counter() - started
    tracemalloc.start()
    run(text)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    print(json.dumps({"seconds": seconds, "peak_mb": peak / 1e6}))


def measure(shape: str, size: int, timeout: float) -> dict[str, float] | None:
    """One measurement in a fresh interpreter; None when it outlasted ``timeout``."""
    try:
        done = subprocess.run(
            [sys.executable, __file__, "--one", shape, str(size)],
            capture_output=True,
            text=True,
            check=True,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        return None
    result: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 100_000, 1_000_000])
    parser.add_argument("--shapes", nargs="+", default=list(SHAPES), choices=SHAPES)
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds per measurement")
    parser.add_argument("--one", nargs=2, metavar=("SHAPE", "SIZE"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.one:
        _score(answer(args.one[0], int(args.one[1])))
        return 0
    print(f"{'shape':<8} {'chars':>9} {'time':>9} {'peak':>9}")
    for shape in args.shapes:
        for size in args.sizes:
            found = measure(shape, size, args.timeout)
            if found is None:
                print(f"{shape:<8} {size:>9,} {'>' + format(args.timeout, 'g') + ' s':>9} {'—':>9}")
            else:
                print(
                    f"{shape:<8} {size:>9,} {found['seconds']:>7.2f} s {found['peak_mb']:>6.1f} MB"
                )
            sys.stdout.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
