"""Gold case files become pytest items: case × system × repetition × prompt language."""

from __future__ import annotations

import functools
import random
import warnings
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pytest_ragv2.config.located_yaml import CaseError
from pytest_ragv2.deciding.adjudicate import ruled
from pytest_ragv2.deciding.records import RunRecord
from pytest_ragv2.gold.cases import LoadedCase
from pytest_ragv2.layers.protocol import load_layer
from pytest_ragv2.layers.registry import layer_info
from pytest_ragv2.plugin.signals import run_section
from pytest_ragv2.plugin.stash import CONTEXT_KEY
from pytest_ragv2.report.safe_text import has_unsafe
from pytest_ragv2.run.context import RunContext
from pytest_ragv2.run.keys import RunKey
from pytest_ragv2.run.rawruns import RawRunWriteError

if TYPE_CHECKING:
    from pytest_ragv2.run.raw_models import ScoredRawRun

INVALID_ITEM_NAME = "invalid-cases"


class CaseFileWarning(UserWarning):
    """A case file problem that fails nothing (a file that defines no case), shown in
    pytest's warnings summary at the file and line it names."""


def warn_located(warning: CaseError) -> None:
    """Issue ``warning`` as a :class:`CaseFileWarning` located at its case file's line."""
    text = str(CaseError(warning.path, None, warning.case_id, warning.field, warning.message))
    message = text.split(": ", 1)[1] if ": " in text else text  # without the bare path
    warnings.warn_explicit(
        CaseFileWarning(message), CaseFileWarning, str(warning.path), warning.line or 1
    )


def context_of(config: pytest.Config) -> RunContext:
    return config.stash[CONTEXT_KEY]


def collect_cases_dir(ctx: RunContext, path: Path, parent: pytest.Collector) -> CasesDir | None:
    """The collector of the configured cases directory (None for any other directory)."""
    if path.resolve() != ctx.settings.cases:
        return None
    return CasesDir.from_parent(parent, path=path)


class CasesDir(pytest.Directory):
    """The cases directory: one CaseFile per file the case catalog loaded.

    Collection follows the catalog, not pytest's directory walk, so every file that was
    validated is also run: a ``.YAML`` suffix or a subdirectory that pytest's
    ``norecursedirs`` would skip (``build/``) cannot silently drop cases.
    """

    def collect(self) -> Iterator[pytest.Collector]:
        ctx = context_of(self.config)
        for loaded in ctx.catalog.files:
            yield CaseFile.from_parent(self, path=loaded.path)


def slot_group(slot: str) -> str:
    """The xdist group of one inference slot: its chat-layer runs never overlap."""
    return f"ragv2-slot-{slot}"


def mark_names(layer: str, category: str, system: str, lang: str) -> list[str]:
    """Bare marker names for ``-m`` selection: ``-m "demo-v2 and lang_de and exact_lookup"``.
    A name holding a control or bidirectional character (a hostile category) gets no mark:
    pytest would print it raw (its unknown-mark warning, ``--markers``)."""
    names = [f"layer_{layer.lower()}", category, system, f"lang_{lang}"]
    return [name for name in names if not has_unsafe(name)]


@functools.lru_cache(maxsize=1024)
def item_marks(layer: str, category: str, system: str, lang: str, slot: str) -> tuple[Any, ...]:
    """Every mark of one item. Chat layers carry their inference slot's xdist_group from
    creation on: marks added later come too late for xdist's loadgroup scheduling."""
    marks: list[Any] = [
        pytest.mark.gold_case(layer=layer, category=category, system=system, lang=lang),
        *(getattr(pytest.mark, name) for name in mark_names(layer, category, system, lang)),
    ]
    if layer_info(layer).chat:
        marks.append(pytest.mark.xdist_group(name=slot_group(slot)))
    return tuple(marks)


def register_markers(config: pytest.Config, names: Sequence[str], registered: set[str]) -> None:
    """Declare the data-derived marker names, so ``--strict-markers`` accepts them."""
    for name in names:
        if name not in registered:
            registered.add(name)
            config.addinivalue_line("markers", f"{name}: pytest-ragv2 selection mark")


def layered_item_name(key: RunKey) -> str:
    """The item name in a session of several layers: ``B07[B-v2-de-r3]``."""
    return f"{key.case}[{key.layer}-{key.system}-{key.lang}-r{key.rep}]"


REASONS_SHOWN = 20  # a failure's reasons in pytest's report (JUnit, pytest-html, -rA)
REASON_CHARS = 300


def shown_reasons(reasons: str) -> str:
    """A run's reasons as pytest reports them: the first ones, each cut to a line's worth;
    summary.json and report.html hold them whole."""
    lines = reasons.splitlines()
    shown = [
        line if len(line) <= REASON_CHARS else line[: REASON_CHARS - 1] + "…"
        for line in lines[:REASONS_SHOWN]
    ]
    if len(lines) > REASONS_SHOWN:
        shown.append(f"… {len(lines) - REASONS_SHOWN} more reason(s) in report.html")
    return "\n".join(shown)


class RunNotMet(Exception):
    """The run did not meet its case; the message lists why."""


class RunsNotWritten(Exception):
    """The run's raw record could not be written: the session stops (exit status 3)."""


class CaseErrors(Exception):
    """A case file (or cases in it) could not be loaded."""


class CaseFile(pytest.File):
    def collect(self) -> Iterator[pytest.Item]:
        ctx = context_of(self.config)
        loaded = ctx.case_file(self.path)
        if loaded is None:
            return
        for warning in loaded.warnings:
            warn_located(warning)
        if loaded.split in ctx.settings.splits:
            for layer in ctx.layers:
                for case in loaded.cases:
                    if layer in case.case.layers and ctx.in_shard(case.case_id):
                        yield from self._items(ctx, case, layer)
        if loaded.errors:
            yield CaseErrorItem.from_parent(self, name=INVALID_ITEM_NAME, errors=loaded.errors)

    def _items(self, ctx: RunContext, loaded: LoadedCase, layer: str) -> Iterator[pytest.Item]:
        several = len(ctx.layers) > 1
        for key in case_run_keys(ctx, loaded, layer):
            system_settings = ctx.systems[key.system]
            name = layered_item_name(key) if several else key.item_name
            item = CaseItem.from_parent(
                self,
                name=name,
                # a string id is parsed as case + parameters, as pytest's own
                # parametrized ids are, so --lf/--ff/--sw find these items again
                nodeid=f"{self.nodeid}::{name}",
                key=key,
                loaded=loaded,
                query=loaded.case.prompts_for(key.lang)[0],
            )
            category = loaded.case.category
            register_markers(
                self.config,
                mark_names(layer, category, key.system, key.lang),
                ctx.registered_marks,
            )
            for mark in item_marks(layer, category, key.system, key.lang, system_settings.slot):
                item.add_marker(mark)
            yield item


def case_run_keys(ctx: RunContext, loaded: LoadedCase, layer: str) -> Iterator[RunKey]:
    """Every run of one case at one layer, in the order the items are made: its languages
    (the selected ones it has), the systems (with several layers, those that serve this
    one) and the repetitions."""
    available = loaded.case.languages()
    languages = ctx.settings.languages or available
    implementation = load_layer(layer) if len(ctx.layers) > 1 else None
    for lang in languages:
        if lang not in available:
            continue
        for system, system_settings in ctx.systems.items():
            if implementation is not None and not implementation.serves(system_settings):
                continue  # with several layers, a system runs the layers it serves
            for rep in range(1, ctx.settings.repetitions_for(layer) + 1):
                yield RunKey(loaded.case.id, system, rep, lang, layer)


def planned_run_keys(ctx: RunContext) -> Iterator[RunKey]:
    """Every run the session would collect, read from the catalog without making an item
    (``--ragv2-plan`` with nothing narrowing the selection)."""
    for case_file in ctx.catalog.files:
        if case_file.split not in ctx.settings.splits:
            continue
        for layer in ctx.layers:
            for loaded in case_file.cases:
                if layer in loaded.case.layers and ctx.in_shard(loaded.case_id):
                    yield from case_run_keys(ctx, loaded, layer)


class CaseItem(pytest.Item):
    def __init__(self, *, key: RunKey, loaded: LoadedCase, query: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.key = key
        self.loaded = loaded
        self.query = query
        self.ragv2_record: RunRecord | None = None
        self.ragv2_reused = False  # --ragv2-resume: the record is an earlier session's

    def _rescore(self, raw: ScoredRawRun) -> RunRecord:
        """This item's raw run from an earlier session, scored again by its layer."""
        ctx = context_of(self.config)
        kb_path = ctx.systems[self.key.system].capabilities.kb_path
        return load_layer(self.key.layer).rescore(
            self.key, raw, self.loaded.case, self.loaded.split, ctx.settings, ctx.allowlist, kb_path
        )

    def runtest(self) -> None:
        self.ragv2_record = None  # a rerun must never inherit an earlier attempt's record
        self.ragv2_reused = False
        ctx = context_of(self.config)
        failure = ctx.raw_write_failure
        if failure is not None:  # no run starts that could not be kept
            pytest.skip(f"not started: {failure}")
        try:
            record = None
            with run_section():  # where an interrupt may land at once (signals.py)
                if ctx.resumption is not None:  # made by an earlier session: reused
                    record = ctx.resumption.earlier_record(self.key, self._rescore)
                    self.ragv2_reused = record is not None
                if record is None:
                    layer = load_layer(self.key.layer)
                    record = layer.run(ctx, self.key, self.loaded, self.query)
        except RawRunWriteError as exc:
            raise RunsNotWritten(str(exc)) from None
        self.ragv2_record = record  # the machine's: the controller applies the rulings
        record = ruled(record, ctx.catalog.adjudications)  # the outcome: as a reviewer ruled
        if record.skipped:
            pytest.skip(record.skipped)
        if not record.met:
            raise RunNotMet("\n".join(record.reasons))

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        if isinstance(excinfo.value, RunNotMet):
            return f"{self.name} did not meet its case:\n{shown_reasons(str(excinfo.value))}"
        if isinstance(excinfo.value, RunsNotWritten):
            return f"{self.name}: {excinfo.value}"
        return super().repr_failure(excinfo)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        line = self.loaded.location.line
        return self.path, (line - 1 if line else None), self.name


class CaseErrorItem(pytest.Item):
    """Stands for the cases of one file that could not be loaded, so none is lost silently."""

    def __init__(self, *, errors: Sequence[CaseError], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.errors = list(errors)

    def runtest(self) -> None:
        raise CaseErrors("\n".join(str(error) for error in self.errors))

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        if isinstance(excinfo.value, CaseErrors):
            return f"invalid gold cases in {self.path.name}:\n{excinfo.value}"
        return super().repr_failure(excinfo)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, None, INVALID_ITEM_NAME


def order_items(items: list[pytest.Item], seed: int) -> None:
    """Deterministic order from the seed: cases shuffled, repetitions interleaved, and the
    systems' order alternating from one case to the next (so warm-up and load never favour
    one system). Non-case items keep their place after the case items."""
    cases = sorted({item.key.case for item in items if isinstance(item, CaseItem)})
    random.Random(seed).shuffle(cases)
    case_rank = {case: rank for rank, case in enumerate(cases)}
    systems = list(dict.fromkeys(item.key.system for item in items if isinstance(item, CaseItem)))
    # several layers run one after the other, in the order given
    layers = list(dict.fromkeys(item.key.layer for item in items if isinstance(item, CaseItem)))
    flip = seed % 2

    def sort_key(item: pytest.Item) -> tuple[int, int, int, int, str, int]:
        if not isinstance(item, CaseItem):
            return (len(layers), len(cases), 0, 0, "", 0)
        rank = case_rank[item.key.case]
        position = systems.index(item.key.system)
        if (rank + flip) % 2:
            position = len(systems) - 1 - position
        return (layers.index(item.key.layer), rank, item.key.rep, 0, item.key.lang, position)

    items.sort(key=sort_key)
