"""``ragv2 merge``: one decision from the raw runs of every shard of a run.

Each job of a CI matrix runs one share of the cases (``--ragv2-shard=I/N``) and keeps its
raw runs; the merge job gathers them. The shards are checked before anything is written:
every share 1..N present once, no case in two shards, no run outside its shard's share,
and the same plan, seed, commit and dirty flag, package versions, case, gold and allow-list
hashes, run options and system identity (role, descriptors, capabilities and adapter
configuration; the URLs and inference slots may differ: each job may have its own replica).
Then their raw runs are copied under one manifest into a new run folder, which is decided
as ``ragv2 rescore`` decides a run: against the merge's configuration and gates, with the
expected runs of the whole plan (the sum of every shard's), so a merged run equals an
unsharded run of the same seed, latencies aside.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from pytest_ragv2.run.rawruns import (
    MANIFEST_NAME,
    hash_files,
    raw_run_files,
    read_raw_runs,
    read_stored_chunks,
    write_manifest,
    write_stored_chunks,
)
from pytest_ragv2.run.resume import DEFINING_OPTIONS, changed_files, changed_options
from pytest_ragv2.run.session_end import BudgetSpent, SessionEnd
from pytest_ragv2.run.shards import ShardPlan

# what every shard of one run must share (beside the plan and the systems' identity)
SHARED_FIELDS = ("seed", "git_commit", "git_dirty", "versions")
SHARED_HASHES = ("case_files", "gold_files", "allowlist")
SHARED_OPTIONS = (*DEFINING_OPTIONS, "ragv2_formal")
# a system's configuration that may differ between the jobs: where its replica answers
REPLICA_KEYS = frozenset({"url", "base_url", "slot"})


class MergeRefused(ValueError):
    """Shards that cannot make one run; the message lists every problem."""


@dataclass(frozen=True, slots=True)
class ShardRun:
    run_dir: Path
    manifest: Mapping[str, Any]
    plan: ShardPlan

    @property
    def name(self) -> str:
        return f"{self.run_dir.name} (shard {self.plan.shard.label})"


def read_shards(run_dirs: Sequence[Path]) -> list[ShardRun]:
    """Each folder's manifest and share; refused when one is no shard of a run."""
    problems: list[str] = []
    shards: list[ShardRun] = []
    for run_dir in run_dirs:
        path = run_dir / MANIFEST_NAME
        try:
            manifest = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            problems.append(f"{path}: cannot be read: {exc}")
            continue
        share = manifest.get("shard") if isinstance(manifest, dict) else None
        if not isinstance(share, dict):
            problems.append(
                f"{run_dir}: not a shard of a run (made without --ragv2-shard): "
                "`ragv2 rescore` decides a whole run"
            )
            continue
        shards.append(ShardRun(run_dir, manifest, ShardPlan.from_json(share)))
    if problems:
        raise MergeRefused("\n".join(problems))
    return shards


def shard_problems(shards: Sequence[ShardRun]) -> list[str]:
    """Why these shards do not make one run (nothing when they do)."""
    if not shards:
        return ["no shard given"]
    first = shards[0]
    problems: list[str] = []
    counts = sorted({shard.plan.shard.count for shard in shards})
    if len(counts) > 1:
        problems.append(f"the shards split their runs differently: into {counts} shares")
    count = first.plan.shard.count
    taken: dict[int, ShardRun] = {}
    for shard in shards:
        earlier = taken.setdefault(shard.plan.shard.index, shard)
        if earlier is not shard:
            problems.append(
                f"overlapping shards: {earlier.run_dir} and {shard.run_dir} are both shard "
                f"{shard.plan.shard.label}"
            )
    missing = [index for index in range(1, count + 1) if index not in taken]
    if missing:
        problems.append(
            f"missing shard(s) {', '.join(f'{index}/{count}' for index in missing)}: "
            "a merge takes every shard of the run"
        )
    owner: dict[str, ShardRun] = {}
    for shard in shards:
        for case in sorted(shard.plan.cases):
            other = owner.setdefault(case, shard)
            if other is not shard and other.plan.shard != shard.plan.shard:
                problems.append(f"case {case} is in {other.name} and in {shard.name}")
    for shard in shards[1:]:
        problems.extend(_differences(first, shard))
    return problems


def _differences(first: ShardRun, other: ShardRun) -> list[str]:
    """What ``other`` does not share with ``first``."""
    found: list[str] = []
    mine, theirs = first.manifest, other.manifest
    if (first.plan.digest, first.plan.plan_cases) != (other.plan.digest, other.plan.plan_cases):
        found.append(
            f"{other.name}: another plan of cases ({other.plan.plan_cases} cases) than "
            f"{first.name}'s ({first.plan.plan_cases}): the case files or the selection differ"
        )
    for name in SHARED_FIELDS:
        if mine.get(name) != theirs.get(name):
            found.append(
                f"{other.name}: {name} {_shown(theirs.get(name))}, "
                f"{first.name}: {_shown(mine.get(name))}"
            )
    found.extend(
        f"{other.name}: {file} differs from {first.name}'s"
        for file, _, _ in changed_files(mine, theirs, SHARED_HASHES)
    )
    found.extend(
        f"{other.name}: option {option} {_shown(now)}, {first.name}: {_shown(was)}"
        for option, was, now in changed_options(mine, theirs, SHARED_OPTIONS)
    )
    was_systems = system_identity(mine.get("systems") or {})
    now_systems = system_identity(theirs.get("systems") or {})
    for system in sorted(set(was_systems) | set(now_systems)):
        if system not in now_systems or system not in was_systems:
            holder = first.name if system in was_systems else other.name
            found.append(f"system {system} is in {holder} only")
        elif was_systems[system] != now_systems[system]:
            found.append(
                f"{other.name}: system {system} is configured otherwise than in {first.name}"
            )
    return found


def _shown(value: Any) -> str:
    return json.dumps(value, sort_keys=True)[:120]


def system_identity(systems: Mapping[str, Any]) -> dict[str, Any]:
    """Each system as the shards must share it: its configuration without where its
    replica answers (URLs, the inference slot)."""
    return {name: _without_replica(config) for name, config in systems.items()}


def _without_replica(value: Any) -> Any:
    if isinstance(value, dict):
        return {
            key: _without_replica(item)
            for key, item in value.items()
            if key not in REPLICA_KEYS and not str(key).endswith("_url")
        }
    if isinstance(value, list):
        return [_without_replica(item) for item in value]
    return value


def runs_outside_their_share(shards: Iterable[ShardRun]) -> list[str]:
    """Raw runs of a case not in their shard's share (a folder filled by hand)."""
    found: list[str] = []
    for shard in shards:
        strays = sorted(
            {
                str(raw["key"]["case"])
                for raw in read_raw_runs(shard.run_dir)
                if isinstance(raw.get("key"), dict)
                and str(raw["key"].get("case")) not in shard.plan.cases
            }
        )
        if strays:
            shown = ", ".join(strays[:5]) + (" …" if len(strays) > 5 else "")
            found.append(f"{shard.name} holds runs of case(s) outside its share: {shown}")
    return found


def merged_manifest(
    shards: Sequence[ShardRun], run_id: str, rootdir: Path, config_path: Path | None
) -> dict[str, Any]:
    """The manifest of the merged run: the first shard's, with the configuration the merge
    decided with, the whole plan's expected runs, and where each share came from."""
    ordered = sorted(shards, key=lambda shard: shard.plan.shard.index)
    manifest = dict(ordered[0].manifest)
    manifest.pop("shard", None)
    expected: dict[str, int] = {}
    for shard in ordered:
        for layer, runs in (shard.manifest.get("expected_by_layer") or {}).items():
            expected[layer] = expected.get(layer, 0) + int(runs or 0)
    manifest.update(
        run_id=run_id,
        rootdir=str(rootdir),
        config_path=str(config_path) if config_path else None,
        config=hash_files([config_path], rootdir) if config_path else {},
        expected_by_layer=expected,
        expected_runs=sum(expected.values()),
        options={**(manifest.get("options") or {}), "ragv2_shard": None, "ragv2_run_id": run_id},
        merged_from=[
            {
                "run_id": shard.manifest.get("run_id"),
                "shard": shard.plan.shard.label,
                "cases": len(shard.plan.cases),
                "started_at": shard.manifest.get("started_at"),
                "platform": shard.manifest.get("platform"),
                "expected_by_layer": shard.manifest.get("expected_by_layer"),
            }
            for shard in ordered
        ],
    )
    return manifest


def merged_end(shards: Iterable[ShardRun]) -> SessionEnd:
    """How the merged run ended: interrupted or stopped when a shard was; the runs a
    shard's budget left out added up."""
    ends = [SessionEnd.read(shard.run_dir) for shard in shards]
    budgets = [end.budget for end in ends if end.budget is not None]
    budget = None
    if budgets:
        unstarted: dict[tuple[str, str], int] = {}
        for spent in budgets:
            for pair, runs in spent.unstarted.items():
                unstarted[pair] = unstarted.get(pair, 0) + runs
        budget = BudgetSpent(max(spent.minutes for spent in budgets), unstarted)
    return SessionEnd(
        interrupted=any(end.interrupted for end in ends),
        stopped=any(end.stopped for end in ends),
        budget=budget,
    )


def write_merged_run(
    shards: Sequence[ShardRun], run_dir: Path, rootdir: Path, config_path: Path | None
) -> None:
    """The shards' raw runs copied into ``run_dir`` (an empty folder) under one manifest;
    each file named after its shard (``runs-s2-gw0.jsonl``), its resumption suffix kept."""
    for shard in sorted(shards, key=lambda shard: shard.plan.shard.index):
        for path in raw_run_files(shard.run_dir):
            target = run_dir / f"runs-s{shard.plan.shard.index}-{path.name[len('runs-') :]}"
            shutil.copyfile(path, target)
    stored: dict[str, Any] = {}
    for shard in shards:
        for system, chunks in read_stored_chunks(shard.run_dir).items():
            stored.setdefault(system, chunks)  # every replica stores the same corpus
    write_stored_chunks(run_dir, stored)
    merged_end(shards).write(run_dir)
    write_manifest(run_dir, merged_manifest(shards, run_dir.name, rootdir, config_path))


def merge_command(
    run_dirs: Sequence[Path],
    config: str | None,
    run_id: str | None,
    out: TextIO,
) -> int:
    """Check the shards, write the merged run, decide it; 0 when every gate holds, 1 when
    not, 2 when the shards are refused."""
    from pytest_ragv2.report.tables import gate_table
    from pytest_ragv2.report.text_table import render_text
    from pytest_ragv2.run.rawruns import RunIdError, claim_run_dir
    from pytest_ragv2.tools.rescore import rescore_run, write_rescored
    from pytest_ragv2.tools.settings import rescore_settings

    try:
        shards = read_shards(run_dirs)
        problems = shard_problems(shards) or runs_outside_their_share(shards)
        if problems:
            raise MergeRefused("\n".join(problems))
    except MergeRefused as exc:
        out.write(f"ragv2 merge: refused:\n{exc}\n")
        return 2
    first = min(shards, key=lambda shard: shard.plan.shard.index)
    cwd = Path.cwd().resolve()
    try:
        settings, which = rescore_settings(first.run_dir, dict(first.manifest), config, cwd)
        merged_id = claim_run_dir(settings.raw_runs, run_id, int(first.manifest["seed"]))
    except (OSError, ValueError, RunIdError) as exc:
        out.write(f"ragv2 merge: {exc}\n")
        return 2
    run_dir = settings.raw_runs / merged_id
    source = settings.source.resolve() if settings.source else None
    write_merged_run(shards, run_dir, source.parent if source else cwd, source)
    out.write(f"configuration: {which}\n")
    out.write(
        f"merged {len(shards)} shards into {_relative(run_dir, cwd)}: "
        + ", ".join(f"{shard.plan.shard.label} {shard.run_dir.name}" for shard in shards)
        + "\n"
    )
    rescored = rescore_run(run_dir, settings)
    path = write_rescored(rescored, settings.reports / merged_id)
    for line in render_text(gate_table(rescored.gates)):
        out.write(line + "\n")
    out.write(f"verdict: {'PASS' if rescored.passed else 'FAIL'} (summary: {path})\n")
    return 0 if rescored.passed else 1


def _relative(path: Path, root: Path) -> Path:
    try:
        return path.resolve().relative_to(root)
    except ValueError:
        return path
