"""The checks that turn a session's bad start into a usage error (exit status 4) naming
what is wrong, before anything is written: the inputs, the languages asked for, the layers
every system must serve, and the systems that cannot make a single call.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

import pytest

from pytest_ragv2.config.inputs import kind_of, present
from pytest_ragv2.config.located_yaml import CaseLoadError
from pytest_ragv2.config.settings import Settings, SystemSettings
from pytest_ragv2.gold.allowlist import Allowlist
from pytest_ragv2.gold.cases import Catalog
from pytest_ragv2.layers.protocol import load_layer
from pytest_ragv2.layers.registry import layer_info
from pytest_ragv2.report.safe_text import printable
from pytest_ragv2.run.context import load_run_allowlist, load_run_catalog


def checked_inputs(
    config: pytest.Config, settings: Settings
) -> tuple[Allowlist | None, Catalog | None]:
    """The inputs a session cannot run without, checked before anything is written; each
    problem is a usage error (exit status 4): the output folders that are not folders, a
    cases folder that is not there, an invalid allow-list (no leak could be checked), and
    a language no case has. The allow-list, and the catalog when it had to be loaded, are
    kept for the session."""
    for name in ("raw_runs", "reports", "cases"):
        path: Path = getattr(settings, name)
        if name == "cases" and not present(path):
            raise pytest.UsageError(
                f"{settings.where(name)}: {name}: {path}: no such folder (the folder of "
                "the case files)"
            )
        if present(path) and not path.is_dir():
            try:
                what = kind_of(os.stat(path).st_mode)
            except OSError as exc:
                what = f"unusable ({exc.strerror or exc})"
            raise pytest.UsageError(
                f"{settings.where(name)}: {name}: {path} is {what}, not a folder"
            )
    try:
        allowlist = load_run_allowlist(settings)
    except CaseLoadError as exc:
        errors = [str(error) for error in exc.errors] or [str(exc)]
        reason = "(no leak can be checked without a valid allow-list)"
        if len(errors) == 1:
            raise pytest.UsageError(f"{errors[0]} {reason}") from None
        lines = "\n".join(f"  {error}" for error in errors)
        raise pytest.UsageError(
            f"{settings.allowlist}: {len(errors)} problems {reason}:\n{lines}"
        ) from None
    catalog: Catalog | None = None
    if settings.languages:
        catalog = load_run_catalog(settings, allowlist)
        _check_languages(config, settings, catalog)
    return allowlist, catalog


def _check_languages(config: pytest.Config, settings: Settings, catalog: Catalog) -> None:
    """Every language asked for is one some case has a prompt in: a typo (``zz``, ``EN``)
    would otherwise select no item of that language, silently."""
    known = sorted({lang for loaded in catalog.cases() for lang in loaded.case.languages()})
    if not known:  # no case loaded at all: the case errors say why (gate gold_valid)
        return
    unknown = [lang for lang in settings.languages or () if lang not in known]
    if not unknown:
        return
    option = config.getoption("ragv2_lang")
    where = f"--ragv2-lang={option}" if option else f"{settings.where('languages')}: languages"
    hints = [
        f"{lang!r} (did you mean {close[0]!r}?)" if close else repr(lang)
        for lang in unknown
        for close in [[k for k in known if k.lower() == lang.lower()]]
    ]
    raise pytest.UsageError(
        printable(
            f"{where}: no case has a prompt in {', '.join(hints)} "
            f"(the cases' languages: {', '.join(known)})"
        )
    )


def check_layers(settings: Settings, systems: dict[str, SystemSettings]) -> None:
    """Every layer can run: alone, on every system (a system without the layer's path is a
    usage error, as it always was); with other layers, on the systems that serve it."""
    several = len(settings.layers) > 1
    for layer in settings.layers:
        implementation = load_layer(layer)
        serving = (
            {name: system for name, system in systems.items() if implementation.serves(system)}
            if several
            else systems
        )
        if several and not serving:
            raise ValueError(
                f"--ragv2-layer={settings.layer}: no system serves layer {layer} "
                f"({layer_info(layer).title})"
            )
        implementation.check_systems(serving, settings)


def check_usable(settings: Settings, systems: Mapping[str, SystemSettings]) -> None:
    """Every system the session calls can make a call: one that cannot (its function is
    not importable) would fail every run, and a baseline failing every run compares with
    nothing. A usage error naming each, located in the configuration."""
    from pytest_ragv2.systems.abilities import SearchesWithRetrieval
    from pytest_ragv2.systems.registry import unusable_retrieval

    infos = [layer_info(layer) for layer in settings.layers]
    problems = []
    for name, system in systems.items():
        retrieval = system.retrieval
        chat = system.chat
        searches = isinstance(chat, SearchesWithRetrieval) and chat.searches_with_retrieval()
        searched = any(
            not info.chat or (not info.answer_models_only and searches) for info in infos
        )
        if retrieval is None or not searched:
            continue
        problem = unusable_retrieval(retrieval)
        if problem is not None:
            where = settings.where("systems", name, "retrieval", "callable")
            problems.append(f"{where}: systems.{name}.retrieval.callable: {problem}")
    if problems:
        raise pytest.UsageError("\n".join(problems))
