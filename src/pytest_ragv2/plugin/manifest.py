"""The run manifest as the session writes it: what the run is — the plugin, Python and
package versions, the commit, the files' hashes, the systems (their URLs without
credentials), the seed and the options — and the expected runs once they are known.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import Any

from pytest_ragv2.layers.protocol import load_layer
from pytest_ragv2.run.context import RunContext
from pytest_ragv2.run.rawruns import build_manifest, write_manifest


def write_run_manifest(
    ctx: RunContext,
    options: Mapping[str, Any],
    *,
    expected_runs: int | None = None,
    expected_by_layer: Mapping[str, int] | None = None,
) -> None:
    """The fair-run record, written before the first run: versions, hashes, descriptors.
    A resuming session keeps the run's manifest and adds itself to its ``resumed`` list."""
    if ctx.resumption is not None:
        from datetime import UTC, datetime

        from pytest_ragv2.run.resume import read_manifest, session_entry

        manifest = read_manifest(ctx.run_dir)
        entry = session_entry(
            ctx.resumption.generation,
            ctx.resumption.retry_errors,
            sys.argv[1:],
            datetime.now(UTC).isoformat(),
        )
        manifest["resumed"] = [*(manifest.get("resumed") or []), entry]
        write_manifest(ctx.run_dir, manifest)
        return
    manifest = run_manifest(ctx, options, expected_runs=expected_runs)
    if expected_by_layer is not None:
        manifest["expected_by_layer"] = dict(expected_by_layer)
    write_manifest(ctx.run_dir, manifest)


def run_manifest(
    ctx: RunContext, options: Mapping[str, Any], *, expected_runs: int | None = None
) -> dict[str, Any]:
    """The manifest of a session's run, as written when its items are known."""
    settings = ctx.settings
    # regular files only: a folder named x.yaml holds case files, it is not one, and a
    # FIFO or a link to a device (a located case error) is never opened
    gold_files = (
        sorted(p for p in settings.gold.glob("*.y*ml") if p.is_file())
        if settings.gold.is_dir()
        else []
    )
    case_files = (
        sorted(p for p in settings.cases.rglob("*.y*ml") if p.is_file())
        if settings.cases.is_dir()
        else []
    )
    systems = {
        name: {
            "role": system.role,
            "slot": system.slot,
            "descriptors": system.descriptors,
            "retrieval": system.retrieval.model_dump(mode="json") if system.retrieval else None,
            "chat": system.chat.model_dump(mode="json") if system.chat else None,
            "capabilities": system.capabilities.model_dump(mode="json"),
        }
        for name, system in ctx.systems.items()
    }
    systems = _without_url_credentials(systems)
    manifest = build_manifest(
        run_id=ctx.run_id,
        seed=ctx.seed,
        rootdir=ctx.rootdir,
        config_path=settings.source,
        case_files=case_files,
        gold_files=gold_files,
        allowlist=settings.allowlist,
        systems=systems,
        expected_runs=expected_runs,
        options={
            **options,
            "configured_roles": ctx.configured_roles,
            "judge": settings.judge.model_dump(mode="json") if settings.judge else None,
            "demo_faults": settings.demo_faults,
            "layer": ctx.layer,
            "repetitions": {layer: settings.repetitions_for(layer) for layer in ctx.layers}
            if len(ctx.layers) > 1
            else settings.repetitions_per_run,
            "splits": settings.splits,
            "languages": settings.languages,
        },
    )
    for layer in ctx.layers:
        manifest.update(load_layer(layer).manifest_extras(settings))
    if ctx.remote_hosts:  # each host's checkout, as `git describe --always --dirty` says
        manifest["hosts"] = dict(ctx.remote_hosts)
    if ctx.shard_plan is not None:  # what `ragv2 merge` checks the shards of a run by
        from pytest_ragv2.run.rawruns import git_dirty

        manifest["shard"] = ctx.shard_plan.to_json()
        manifest["git_dirty"] = git_dirty(ctx.rootdir)
    return manifest


def _without_url_credentials(value: Any) -> Any:
    """The systems' configuration as the manifest records it: every URL in it (``url``,
    ``*_url``, one inside a command's ``argv``) with its user info and credential-named
    query values (``?code=``, ``?sig=``, ``?jwt=``) replaced."""
    from pytest_ragv2.systems.secret_policy import redact_urls_in

    if isinstance(value, dict):
        return {key: _without_url_credentials(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_without_url_credentials(item) for item in value]
    if isinstance(value, str) and "://" in value:
        return redact_urls_in(value)
    return value
