"""The layers pytest-ragv2 runs, declared once, and the protocol each one implements.

A layer is a plugin of our own, like pytest-xdist's schedulers behind their protocol: how its
items run, how a raw run is scored again, which per-case metrics its tables show, its extra
row figures, its gates, its report sections and its summary extras. Code outside the layer
modules asks the registry, never ``layer == "A"``.

This module is imported on every activated run, so it holds only the light facts
(:class:`LayerInfo`); :func:`load_layer` imports a layer's module when its behaviour is
needed.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from pytest_ragv2.config.settings import Settings, SystemSettings
    from pytest_ragv2.deciding.aggregate import SessionResults
    from pytest_ragv2.deciding.gates import GateResult
    from pytest_ragv2.deciding.records import RunRecord
    from pytest_ragv2.gold.allowlist import Allowlist
    from pytest_ragv2.gold.cases import LoadedCase
    from pytest_ragv2.gold.schema import Case
    from pytest_ragv2.report.summary import Summary
    from pytest_ragv2.run.context import RunContext
    from pytest_ragv2.run.keys import RunKey


@dataclass(frozen=True, slots=True)
class LayerInfo:
    """What every part of a session may know of a layer without importing it."""

    name: str  # "A"
    title: str  # "retrieval only"
    module: str  # the module whose ``LAYER`` implements :class:`Layer`
    chat: bool  # runs systems' chat paths: one inference slot at a time (slot scheduling)
    default_repetitions: int
    # the per-case metric whose interval the system tables show; "{k}": the gates' recall_k
    headline_metric: str
    answer_models_only: bool = False  # its systems are answer models (no search, no runner)

    def headline(self, recall_k: int = 5) -> str:
        """The headline metric's name, ``recall@{recall_k}`` at a retrieval layer."""
        return self.headline_metric.format(k=recall_k)


LAYERS: Mapping[str, LayerInfo] = {
    "A": LayerInfo(
        name="A",
        title="retrieval only",
        module="pytest_ragv2.layers.retrieval.layer",
        chat=False,
        default_repetitions=1,
        headline_metric="recall@{k}",
    ),
    "B": LayerInfo(
        name="B",
        title="end to end",
        module="pytest_ragv2.layers.chat.layer",
        chat=True,
        default_repetitions=5,
        headline_metric="exact_answer",
    ),
    "C": LayerInfo(
        name="C",
        title="frozen evidence",
        module="pytest_ragv2.layers.frozen.layer",
        chat=True,
        default_repetitions=5,
        headline_metric="exact_answer",
        answer_models_only=True,
    ),
}


class UnknownLayer(ValueError):
    pass


def layer_info(name: str) -> LayerInfo:
    try:
        return LAYERS[name]
    except KeyError:
        known = ", ".join(f"{info.name} ({info.title})" for info in LAYERS.values())
        raise UnknownLayer(
            f"layer {name} is not available in this version; the layers are {known}"
        ) from None


def demo_layer(layers: Sequence[str]) -> str:
    """The layer the embedded demo systems are configured for in a session of ``layers``:
    the one that needs most of them — chat paths with the reference runner, else answer
    models, else retrieval paths."""
    infos = [layer_info(layer) for layer in layers]
    with_runner = [info.name for info in infos if info.chat and not info.answer_models_only]
    answer_models = [info.name for info in infos if info.chat]
    for found in (with_runner, answer_models):
        if found:
            return found[0]
    return infos[0].name if infos else "A"


def load_layer(name: str) -> Layer:
    """The layer's implementation (its module is imported on first use)."""
    layer: Layer = importlib.import_module(layer_info(name).module).LAYER
    return layer


Table = tuple[list[str], list[list[str]]]


class Layer(Protocol):
    """What a layer provides to the session, the rescoring and the reports."""

    @property
    def info(self) -> LayerInfo: ...

    @property
    def case_metrics(self) -> tuple[str, ...]:
        """The per-run metrics averaged per case, then over cases, in every table row."""
        ...

    def check_systems(self, systems: Mapping[str, SystemSettings], settings: Settings) -> None:
        """Raise ``ValueError`` (a usage error) when the systems cannot run this layer."""
        ...

    def serves(self, system: SystemSettings) -> bool:
        """Whether the system has what this layer runs (in a session of several layers, a
        system runs the layers it serves)."""
        ...

    def manifest_extras(self, settings: Settings) -> dict[str, Any]:
        """What the run manifest records for this layer beyond the common fields."""
        ...

    def run(self, ctx: RunContext, key: RunKey, loaded: LoadedCase, query: str) -> RunRecord:
        """Run one item (raw run written before it is scored) and return its record."""
        ...

    def rescore(
        self,
        raw: dict[str, Any],
        case: Case,
        split: str,
        settings: Settings,
        allowlist: Allowlist | None,
        kb_path: str,
    ) -> RunRecord:
        """The record of one raw run, scored again against the current gold."""
        ...

    def row_extras(self, records: Sequence[RunRecord]) -> dict[str, Any]:
        """Figures of a table row beyond the case-mean metrics (leaks, vetoes, cost)."""
        ...

    def gates(
        self,
        results: SessionResults,
        settings: Settings,
        case_errors: Sequence[str],
        *,
        configured_roles: Mapping[str, str],
        allowlist_present: bool,
    ) -> list[GateResult]:
        """Every gate of the layer, in the order the reports print them; never raises."""
        ...

    def summary_extras(
        self, results: SessionResults, settings: Settings | None = None
    ) -> dict[str, Any]:
        """What the layer adds to summary.json beyond the common tables (the weighted
        quality score reads the settings' weights)."""
        ...

    def case_table(self, summary: Summary) -> Table:
        """One row per case, every system side by side."""
        ...

    def sections(self, summary: Summary) -> list[tuple[str, Table]]:
        """The metric tables of the reports, titled, in order (gates are shown apart)."""
        ...
