"""Precision and recall of the refusal detector per language, on a labelled set.

Refusal is the positive class. The set is a YAML file written as
``{fr: {refusals: [...], non_refusals: [...]}, de: ..., en: ...}``; by default the
held-apart set ``tests/data/refusal_heldout.yaml``, which the detector is never tuned on.
The detector is the one layer B uses: the constructions of
``pytest_ragv2.scoring.refusal`` with the default phrase lists as additions.

    python benchmarks/bench_refusal.py [path/to/set.yaml] [--show-misses]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from pytest_ragv2.scoring.phrases import DEFAULT_REFUSAL_PHRASES
from pytest_ragv2.scoring.refusal_eval import precision_recall, read_heldout

ROOT = Path(__file__).resolve().parent.parent
DEFAULT = ROOT / "tests" / "data" / "refusal_heldout.yaml"


def _ratio(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", nargs="?", type=Path, default=DEFAULT)
    parser.add_argument("--show-misses", action="store_true", help="list the texts it got wrong")
    args = parser.parse_args(argv)
    if not args.path.exists():
        print(f"no labelled set at {args.path}", file=sys.stderr)
        return 2
    scores = precision_recall(read_heldout(args.path.read_text("utf-8")), DEFAULT_REFUSAL_PHRASES)
    print(f"refusal detector on {args.path} (refusal = positive class)")
    print(
        f"{'lang':<5} {'refusals':>8} {'others':>6} {'TP':>4} {'FP':>4} {'FN':>4} "
        f"{'precision':>9} {'recall':>7}"
    )
    for lang, score in scores.items():
        positives = score.true_positives + score.false_negatives
        negatives = score.true_negatives + score.false_positives
        print(
            f"{lang:<5} {positives:>8} {negatives:>6} {score.true_positives:>4} "
            f"{score.false_positives:>4} {score.false_negatives:>4} "
            f"{_ratio(score.precision):>9} {_ratio(score.recall):>7}"
        )
        if args.show_misses:
            for text in score.misses:
                print(f"      missed refusal: {text}")
            for text in score.false_alarms:
                print(f"      false alarm:    {text}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
