"""Recompute a run's records, tables, gates and verdict from its raw runs alone.

No pytest and no live system: the raw runs hold every retrieved item as the adapter parsed
it, so a fixed scorer or an adjudicated gold answer can be applied to a finished run.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from pytest_ragv2.config.inputs import present
from pytest_ragv2.config.located_yaml import CaseLoadError
from pytest_ragv2.config.settings import Settings
from pytest_ragv2.deciding.pipeline import RunFacts, decide_run
from pytest_ragv2.deciding.records import JudgeGrade, RunRecord
from pytest_ragv2.deciding.verdict import GateResult
from pytest_ragv2.gold.allowlist import Allowlist, load_allowlist
from pytest_ragv2.gold.cases import Catalog, load_catalog
from pytest_ragv2.layers.protocol import load_layer
from pytest_ragv2.report.model import Summary
from pytest_ragv2.report.page import page_pieces
from pytest_ragv2.report.summary import render_summary_markdown, write_summary
from pytest_ragv2.run.raw_models import JudgeRawRun, read_raw_run
from pytest_ragv2.run.rawruns import MANIFEST_NAME, read_raw_runs, read_stored_chunks
from pytest_ragv2.run.session_end import SessionEnd

if TYPE_CHECKING:
    from pytest_ragv2.deciding.formal import RunKind


@dataclass(slots=True)
class Rescored:
    summaries: dict[str, Summary]  # per layer, in the order the run ran them
    gates_by_layer: dict[str, list[GateResult]]
    passed: bool
    unknown_cases: list[str] = field(default_factory=list)
    # what report.html's case panels read: the records, the cases, the raw runs
    records: list[RunRecord] = field(default_factory=list)
    catalog: Catalog | None = None
    run_dir: Path | None = None

    @property
    def summary(self) -> Summary:
        """The first layer's summary (the only one, for a one-layer run)."""
        return next(iter(self.summaries.values()))

    @property
    def gates(self) -> list[GateResult]:
        return [gate for gates in self.gates_by_layer.values() for gate in gates]


def _allowlist(settings: Settings) -> tuple[Allowlist | None, list[str]]:
    """The allow-list, or None and its errors (which fail gold_valid, as in a live run)."""
    if not settings.allowlist or not present(settings.allowlist):
        return None, []
    try:
        return load_allowlist(settings.allowlist), []
    except CaseLoadError as exc:
        return None, [str(error) for error in exc.errors] or [str(exc)]


def _unreadable(raw: Mapping[str, Any], exc: ValidationError) -> str:
    """A raw-run line that is not a run of any kind: its key (when it has one) and the first
    field that does not read, as the session's errors name a broken case."""
    first = exc.errors()[0]
    where = ".".join(str(part) for part in first["loc"])
    return (
        f"raw run {json.dumps(raw.get('key'), sort_keys=True)} does not read "
        f"(schemas/raw-run.schema.json): {where}: {first['msg']}"
    )


def rescore_run(run_dir: Path, settings: Settings) -> Rescored:
    """Score every raw run of ``run_dir`` against the current gold and gates."""
    manifest = json.loads((run_dir / MANIFEST_NAME).read_text(encoding="utf-8"))
    allow, allowlist_errors = _allowlist(settings)
    gold = settings.gold if settings.gold.is_dir() else None
    catalog = load_catalog(settings.cases, gold, allowlist=allow, categories=settings.categories)
    manifest_systems: dict[str, Any] = manifest.get("systems", {})
    kb_paths = {
        name: system.get("capabilities", {}).get("kb_path", "any")
        for name, system in manifest_systems.items()
    }
    layers = str(manifest.get("options", {}).get("layer") or "A").split(",")
    records: list[RunRecord] = []
    unknown: list[str] = []
    judged: dict[str, JudgeGrade] = {}
    unreadable: list[str] = []
    for raw in read_raw_runs(run_dir):
        try:
            line = read_raw_run(raw)  # each line read once, as its kind
        except ValidationError as exc:
            unreadable.append(_unreadable(raw, exc))
            continue
        if isinstance(line, JudgeRawRun):  # the advisory judge's grade of a run
            judged[json.dumps(raw["key"], sort_keys=True)] = JudgeGrade.from_json(line.judge or {})
            continue
        loaded = catalog.find(line.key.case)
        if loaded is None:
            unknown.append(line.key.case)
            continue
        kb_path = kb_paths.get(line.key.system, "any")
        key = line.key.run_key(layers[0])
        try:
            record = load_layer(key.layer).rescore(
                key, line, loaded.case, loaded.split, settings, allow, kb_path
            )
        except ValueError as exc:  # a line of another layer's kind
            unreadable.append(f"raw run {key.case} {key.system} rep {key.rep}: {exc}")
            continue
        records.append(record)
    records = [
        dataclasses.replace(record, judge=judged[name])
        if (name := json.dumps(record.key.to_json(), sort_keys=True)) in judged
        else record
        for record in records
    ]
    roles = {name: system["role"] for name, system in manifest_systems.items()}
    # every configured system's role, run or not: a deselected baseline fails as it did live
    configured = manifest.get("options", {}).get("configured_roles") or roles
    expected_by_layer = manifest.get("expected_by_layer") or {
        layers[0]: manifest.get("expected_runs")
    }
    case_errors = [str(error) for error in catalog.errors] + allowlist_errors
    case_errors += [f"raw run of unknown case {case}" for case in sorted(set(unknown))]
    case_errors += unreadable
    root = Path(str(manifest.get("rootdir") or "."))
    facts = RunFacts(
        run_id=str(manifest["run_id"]),
        seed=int(manifest["seed"]),
        layers=tuple(layers),
        settings=settings,
        roles=roles,
        configured_roles=configured,
        expected_by_layer=expected_by_layer,
        case_errors=case_errors,
        allowlist_present=allow is not None,
        adjudications=catalog.adjudications,
        descriptors={
            name: system.get("descriptors", {}) for name, system in manifest_systems.items()
        },
        raw_runs=_relative(run_dir, root),
        protocol=_run_kind(manifest, records, settings, root),
        catalog=catalog,
        stored_chunks=read_stored_chunks(run_dir),
        end=SessionEnd.read(run_dir),
    )
    decided = decide_run(records, facts)
    return Rescored(
        decided.summaries,
        decided.gates_by_layer,
        decided.passed and not decided.incomplete,
        unknown,
        decided.records,
        catalog,
        run_dir,
    )


def _relative(path: Path, root: Path) -> Path:
    """The raw runs as the live summary names them: relative to the run's rootdir."""
    try:
        return path.resolve().relative_to(root.resolve())
    except ValueError:
        return path


def _run_kind(
    manifest: dict[str, Any], records: list[RunRecord], settings: Settings, root: Path
) -> RunKind:
    """The run's kind as the live session labelled it: development, holdout or formal, with
    the flag of gates changed after the holdout was seen (read from today's lock)."""
    from pytest_ragv2.deciding.formal import gates_changed_after_holdout, lock_path, run_kind

    options = manifest.get("options") or {}
    flag = gates_changed_after_holdout(settings, root, lock_path(settings, root))
    return run_kind(
        {record.key.case: record.gold_status for record in records},
        holdout="holdout" in (options.get("splits") or []),
        formal=bool(options.get("ragv2_formal")),
        flags=[flag] if flag else [],
    )


def write_rescored(rescored: Rescored, output: Path) -> Path:
    """The rescored summaries: in ``output`` for a one-layer run, else one folder per layer
    under it; the path of the first."""
    several = len(rescored.summaries) > 1
    paths = [
        write_summary(
            output / layer if several else output,
            summary,
            render_summary_markdown(summary, rescored.gates_by_layer[layer]),
            page_pieces(
                summary,
                rescored.gates_by_layer[layer],
                rescored.records,
                rescored.catalog,
                rescored.run_dir,
            ),
        )
        for layer, summary in rescored.summaries.items()
    ]
    return paths[0]
