"""Every figure of the bundled runs, before and after a change, compared key by key.

Runs ``--ragv2-layer=A``, ``B``, ``C`` and ``A,B,C`` on the bundled benchmark at one seed
with the checkout it is run from, rescoring each with ``ragv2 rescore``, and keeps their
summary.json files in ``--out``. Given ``--against`` (the folder an earlier run of this
script wrote, for example at the commit before a refactor), it then lists every key that
differs, latencies aside; with no ``--against``, it compares each live summary with its
rescore. The exit status is 1 when anything differs.

    git worktree add ../before <commit>
    (cd ../before && python benchmarks/compare_runs.py --out /tmp/before)
    python benchmarks/compare_runs.py --out /tmp/after --against /tmp/before

A refactor that moves code keeps every figure; ``ragv2 rescore`` of a finished run
reproduces its live summary.json, the failure diagnosis and the ceilings included.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
LAYERS = ("A", "B", "C", "A,B,C")
SEED = 20261130
# keys whose values are timings: they differ between any two runs
TIMED = ("latency", "seconds", "wall", "duration", "p50", "p95")
TIMED_GATES = ("retrieval_p95", "e2e_p95")


def run_layers(out: Path, seed: int) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for layers in LAYERS:
        run_id = "figures-" + layers.replace(",", "")
        for folder in ("raw-runs", "reports"):
            shutil.rmtree(ROOT / folder / run_id, ignore_errors=True)
        command = [
            sys.executable, "-m", "pytest", "-p", "no:randomly", "-p", "no:cacheprovider", "-q",
            f"--ragv2-layer={layers}", f"--ragv2-seed={seed}", f"--ragv2-run-id={run_id}",
        ]  # fmt: skip
        done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False)
        print(f"layer {layers}: exit status {done.returncode}", file=sys.stderr)
        rescore = [sys.executable, "-m", "pytest_ragv2.tools.cli", "rescore", f"raw-runs/{run_id}"]
        subprocess.run(rescore, cwd=ROOT, capture_output=True, text=True, check=False)
        target = out / run_id
        shutil.rmtree(target, ignore_errors=True)
        shutil.copytree(ROOT / "reports" / run_id, target)


def differences(before: Any, after: Any, path: str = "") -> Iterator[str]:
    if isinstance(before, dict) and isinstance(after, dict):
        if before.get("name") in TIMED_GATES:
            return
        for key in sorted(set(before) | set(after)):
            if any(word in key for word in TIMED):
                continue
            if key not in after:
                yield f"{path}.{key}: only before"
            elif key not in before:
                yield f"{path}.{key}: only after"
            else:
                yield from differences(before[key], after[key], f"{path}.{key}")
    elif isinstance(before, list) and isinstance(after, list):
        if len(before) != len(after):
            yield f"{path}: {len(before)} entries before, {len(after)} after"
        for index, (one, other) in enumerate(zip(before, after, strict=False)):
            yield from differences(one, other, f"{path}[{index}]")
    elif before != after:
        yield f"{path}: {str(before)[:60]} before, {str(after)[:60]} after"


def summaries(folder: Path) -> dict[str, Any]:
    return {
        str(path.relative_to(folder)): json.loads(path.read_text(encoding="utf-8"))
        for path in sorted(folder.rglob("summary.json"))
    }


def compare(pairs: list[tuple[str, Any, Any]]) -> int:
    found = 0
    for name, before, after in pairs:
        listed = list(differences(before, after))
        found += len(listed)
        print(f"{name}: {len(listed)} difference(s)")
        for line in listed[:20]:
            print(f"  {line}")
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True, help="where to keep the summaries")
    parser.add_argument("--against", type=Path, help="an earlier --out to compare with")
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--no-run", action="store_true", help="compare what --out holds")
    args = parser.parse_args(argv)
    if not args.no_run:
        run_layers(args.out, args.seed)
    after = summaries(args.out)
    if args.against is not None:
        before = summaries(args.against)
        pairs = [(name, before[name], after.get(name, {})) for name in before]
    else:  # each live summary beside its rescore
        pairs = []
        for name, data in after.items():
            run_id, _, rest = name.partition("/")
            if not rest.startswith("rescored/"):
                again = after.get(f"{run_id}/rescored/{rest}")
                if again is None:
                    print(f"{name}: no rescore beside it", file=sys.stderr)
                    return 1
                pairs.append((f"{name} and its rescore", data, again))
    return 1 if compare(pairs) else 0


if __name__ == "__main__":
    raise SystemExit(main())
