"""The modules that moved when the package was laid out in rooms (plugin, config, gold, run,
systems, layers, scoring, deciding, report, tools; docs/design.md has the map). Their old
import paths keep working for one release: importing one gives the module at its new path,
with a ``DeprecationWarning`` naming it. Three old paths are packages now and cannot be
kept: ``pytest_ragv2.plugin`` (the hooks are ``pytest_ragv2.plugin.hooks``, the entry
point's module), ``pytest_ragv2.gold`` (gold answers: ``pytest_ragv2.gold.answers``) and
``pytest_ragv2.layers.retrieval`` / ``.chat`` (their runs: ``….run``).
"""

from __future__ import annotations

import importlib
import importlib.machinery
import sys
import warnings
from collections.abc import Mapping, Sequence
from types import ModuleType
from typing import TYPE_CHECKING, cast

if TYPE_CHECKING:
    from importlib.abc import Loader

MOVED: Mapping[str, str] = {
    "pytest_ragv2.options": "pytest_ragv2.plugin.options",
    "pytest_ragv2.stash": "pytest_ragv2.plugin.stash",
    "pytest_ragv2.activate": "pytest_ragv2.plugin.activate",
    "pytest_ragv2.collect": "pytest_ragv2.plugin.collect",
    "pytest_ragv2.controller": "pytest_ragv2.plugin.controller",
    "pytest_ragv2.xdist": "pytest_ragv2.plugin.xdist",
    "pytest_ragv2.gateways": "pytest_ragv2.plugin.gateways",
    "pytest_ragv2.budget": "pytest_ragv2.plugin.budget",
    "pytest_ragv2.progress": "pytest_ragv2.plugin.progress",
    "pytest_ragv2.plan": "pytest_ragv2.plugin.plan",
    "pytest_ragv2.signals": "pytest_ragv2.plugin.signals",
    "pytest_ragv2.trace_secrets": "pytest_ragv2.plugin.trace_secrets",
    "pytest_ragv2.log_secrets": "pytest_ragv2.plugin.log_secrets",
    "pytest_ragv2.report.html": "pytest_ragv2.plugin.html",
    "pytest_ragv2.configfile": "pytest_ragv2.config.file",
    "pytest_ragv2.settings": "pytest_ragv2.config.settings",
    "pytest_ragv2.config_errors": "pytest_ragv2.config.errors",
    "pytest_ragv2.config_docs": "pytest_ragv2.config.docs",
    "pytest_ragv2.located_yaml": "pytest_ragv2.config.located_yaml",
    "pytest_ragv2.inputs": "pytest_ragv2.config.inputs",
    "pytest_ragv2.schema": "pytest_ragv2.gold.schema",
    "pytest_ragv2.cases": "pytest_ragv2.gold.cases",
    "pytest_ragv2.allowlist": "pytest_ragv2.gold.allowlist",
    "pytest_ragv2.adjudication": "pytest_ragv2.gold.adjudication",
    "pytest_ragv2.corpus_names": "pytest_ragv2.gold.corpus_names",
    "pytest_ragv2.keys": "pytest_ragv2.run.keys",
    "pytest_ragv2.context": "pytest_ragv2.run.context",
    "pytest_ragv2.rawruns": "pytest_ragv2.run.rawruns",
    "pytest_ragv2.fingerprint": "pytest_ragv2.run.fingerprint",
    "pytest_ragv2.resume": "pytest_ragv2.run.resume",
    "pytest_ragv2.preflight": "pytest_ragv2.run.preflight",
    "pytest_ragv2.demo_systems": "pytest_ragv2.run.demo",
    "pytest_ragv2.session_end": "pytest_ragv2.run.session_end",
    "pytest_ragv2.attainable": "pytest_ragv2.run.attainable",
    "pytest_ragv2.transcripts": "pytest_ragv2.systems.transcripts",
    "pytest_ragv2.secret_registry": "pytest_ragv2.systems.secrets",
    "pytest_ragv2.secret_policy": "pytest_ragv2.systems.secret_policy",
    "pytest_ragv2.layer_registry": "pytest_ragv2.layers.registry",
    "pytest_ragv2.layers.retrieval_layer": "pytest_ragv2.layers.retrieval.layer",
    "pytest_ragv2.layers.chat_layer": "pytest_ragv2.layers.chat.layer",
    "pytest_ragv2.gates_chat": "pytest_ragv2.layers.chat.gates",
    "pytest_ragv2.judge": "pytest_ragv2.layers.chat.judge",
    "pytest_ragv2.layers.frozen_layer": "pytest_ragv2.layers.frozen.layer",
    "pytest_ragv2.frozen": "pytest_ragv2.layers.frozen.package",
    "pytest_ragv2.frozen_prompt": "pytest_ragv2.layers.frozen.prompt",
    "pytest_ragv2.metrics": "pytest_ragv2.scoring.metrics",
    "pytest_ragv2.run_record": "pytest_ragv2.deciding.records",
    "pytest_ragv2.session": "pytest_ragv2.deciding.aggregate",
    "pytest_ragv2.stats": "pytest_ragv2.deciding.stats",
    "pytest_ragv2.gates": "pytest_ragv2.deciding.gates",
    "pytest_ragv2.comparisons": "pytest_ragv2.deciding.comparisons",
    "pytest_ragv2.diagnosis": "pytest_ragv2.deciding.diagnosis",
    "pytest_ragv2.quality_score": "pytest_ragv2.deciding.quality_score",
    "pytest_ragv2.protocol": "pytest_ragv2.deciding.formal",
    "pytest_ragv2.decision": "pytest_ragv2.deciding.decision",
    "pytest_ragv2.pipeline": "pytest_ragv2.deciding.pipeline",
    "pytest_ragv2.safe_text": "pytest_ragv2.report.safe_text",
    "pytest_ragv2.cli": "pytest_ragv2.tools.cli",
    "pytest_ragv2.rescore": "pytest_ragv2.tools.rescore",
    "pytest_ragv2.export_trec": "pytest_ragv2.tools.export_trec",
}


class MovedModules:
    """Finds an old module path (after every real finder) and loads the module that moved: a
    meta path finder and its loader (duck-typed: ``importlib.abc`` costs every start-up the
    import of ``importlib.resources``)."""

    def find_spec(
        self,
        fullname: str,
        path: Sequence[str] | None,
        target: ModuleType | None = None,
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname not in MOVED:
            return None
        return importlib.machinery.ModuleSpec(fullname, cast("Loader", self))

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        moved_to = MOVED[spec.name]
        warnings.warn(
            f"{spec.name} moved to {moved_to}; the old path goes in the next release",
            DeprecationWarning,
            stacklevel=2,
        )
        return importlib.import_module(moved_to)

    def exec_module(self, module: ModuleType) -> None:
        """The module was executed at its new path already."""


def install() -> None:
    if not any(isinstance(finder, MovedModules) for finder in sys.meta_path):
        sys.meta_path.append(MovedModules())
