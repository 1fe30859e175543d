"""The report's plots: the time :func:`pytest_ragv2.report.plots.figures` takes on N records.

Synthetic sessions (three systems: baseline, candidate, reference) are aggregated and
decided as a live session would (not timed), then every figure is drawn: the first call
in the process (which imports matplotlib) and the best of ``--repeat`` further calls.
Layer A has one run per case and system (so N/3 cases: the per-case plot at its widest),
layer B five repetitions per case, with rubric grades and vetoes. The target is well
under 2 s for all the figures of 5,000 records, and under 200 KB per figure.

    python benchmarks/bench_report_plots.py --records 5000 --repeat 3
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path
from typing import Any

from pytest_ragv2.config.settings import Settings
from pytest_ragv2.deciding.decision import decide
from pytest_ragv2.deciding.records import ChatRecord, RetrievalRecord, RunRecord
from pytest_ragv2.report.model import Summary
from pytest_ragv2.report.summary import build_summary
from pytest_ragv2.run.keys import RunKey

ROLES = {"demo-v1": "baseline", "demo-v2": "candidate", "demo-ref": "reference"}
CATEGORIES = [f"category_{n}" for n in range(12)]
RUBRIC = ("accuracy", "grounding", "completeness", "language", "format", "overall")
GRADES = ("PASS", "PARTIAL", "FAIL")
VETOES = ("failed_safe_refusal", "synthetic_as_confirmed", "fabricated_identifier")


def records_for(layer: str, total: int, seed: int = 1) -> list[RunRecord]:
    rng = random.Random(seed)
    reps = 1 if layer == "A" else 5
    cases = max(1, total // (len(ROLES) * reps))
    records: list[RunRecord] = []
    for offset, (system, role) in enumerate(ROLES.items()):
        for case in range(cases):
            category = CATEGORIES[case % len(CATEGORIES)]
            for rep in range(1, reps + 1):
                key = RunKey(f"C{case:05d}", system, rep, "en", layer)
                latency = rng.lognormvariate(-3 + offset, 0.5)
                if layer == "A":
                    skill = min(1.0, max(0.0, 0.4 + 0.15 * offset + rng.gauss(0, 0.2)))
                    recall = {k: min(1.0, skill * (1 + k / 8)) for k in (1, 3, 5, 10)}
                    records.append(
                        RetrievalRecord(
                            key=key,
                            category=category,
                            split="development",
                            role=role,
                            ok=rng.random() > 0.01,
                            met=recall[5] > 0.5,
                            latency_s=latency,
                            metrics={f"recall@{k}": v for k, v in recall.items()},
                            returned=10,
                        )
                    )
                else:
                    exact = 1.0 if rng.random() < 0.3 + 0.2 * offset else 0.0
                    vetoes: tuple[dict[str, Any], ...] = ()
                    if offset == 0 and rng.random() < 0.05:
                        vetoes = ({"kind": rng.choice(VETOES), "detail": "synthetic"},)
                    records.append(
                        ChatRecord(
                            key=key,
                            category=category,
                            split="development",
                            role=role,
                            ok=True,
                            met=exact == 1.0,
                            latency_s=latency,
                            metrics={"exact_answer": exact},
                            vetoes=vetoes,
                            rubric={d: "PASS" if exact else rng.choice(GRADES) for d in RUBRIC},
                        )
                    )
    return records


def summary_for(layer: str, records: list[RunRecord]) -> Summary:
    settings = Settings()
    decision = decide(records, layer=layer, settings=settings, roles=ROLES)
    return build_summary(
        run_id="bench",
        seed=1,
        layer=layer,
        results=decision.results,
        gates=decision.gates,
        passed=decision.passed,
        exit_status=0,
        interrupted=False,
        descriptors={},
        raw_runs_dir=Path("raw-runs") / "bench",
        settings=settings,
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=5000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--layers", nargs="+", default=["A", "B"], choices=["A", "B"])
    args = parser.parse_args(argv)
    from pytest_ragv2.report.plots import figures

    print(f"figures() on {args.records} synthetic records, three systems")
    print(
        f"{'layer':<6}{'records':>8}{'figures':>8}{'first call':>12}{'best warm':>11}"
        f"{'largest svg':>13}{'all svg':>10}"
    )
    worst = 0.0
    for layer in args.layers:
        records = records_for(layer, args.records)
        summary = summary_for(layer, records)
        started = time.perf_counter()
        made = figures(summary, records)
        first = time.perf_counter() - started
        warm = []
        for _ in range(args.repeat):
            started = time.perf_counter()
            figures(summary, records)
            warm.append(time.perf_counter() - started)
        sizes = [len(figure.svg.encode()) for figure in made]
        worst = max(worst, first)
        print(
            f"{layer:<6}{len(records):>8}{len(made):>8}{first:>11.3f}s{min(warm):>10.3f}s"
            f"{max(sizes) / 1024:>10.1f} KB{sum(sizes) / 1024:>7.0f} KB"
        )
        for figure, size in zip(made, sizes, strict=True):
            print(f"      {figure.title}: {size / 1024:.1f} KB")
    print(f"matplotlib imported by the first call: {'matplotlib' in sys.modules}")
    return 0 if worst < 2.0 else 1


if __name__ == "__main__":
    sys.exit(main())
