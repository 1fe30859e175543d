"""The protocol each layer implements, and the one way to load a layer's implementation.

A layer is a plugin of our own, like pytest-xdist's schedulers behind their protocol: how its
items run, how a raw run is scored again, which per-case metrics its tables show, its extra
row figures, its gates, its report sections and its summary extras. :func:`load_layer`
imports a layer's module when its behaviour is needed (the facts are in
:mod:`pytest_ragv2.layers.registry`).
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from pytest_ragv2.layers.registry import LayerInfo, layer_info
from pytest_ragv2.report.text_table import Table

if TYPE_CHECKING:
    from pytest_ragv2.config.settings import Settings, SystemSettings
    from pytest_ragv2.deciding.records import RunRecord
    from pytest_ragv2.deciding.results import RowFigures, SessionResults
    from pytest_ragv2.deciding.verdict import GateResult
    from pytest_ragv2.gold.allowlist import Allowlist
    from pytest_ragv2.gold.cases import LoadedCase
    from pytest_ragv2.gold.schema import Case
    from pytest_ragv2.report.model import LayerFigures, Summary
    from pytest_ragv2.run.context import RunContext
    from pytest_ragv2.run.keys import RunKey
    from pytest_ragv2.run.raw_models import ScoredRawRun


def load_layer(name: str) -> Layer:
    """The layer's implementation (its module is imported on first use)."""
    layer: Layer = importlib.import_module(layer_info(name).module).LAYER
    return layer


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
        key: RunKey,
        raw: ScoredRawRun,
        case: Case,
        split: str,
        settings: Settings,
        allowlist: Allowlist | None,
        kb_path: str,
    ) -> RunRecord:
        """The record of one item's raw run, scored again against the current gold; raises
        ``ValueError`` for a line of another layer's kind."""
        ...

    def row_extras(self, records: Sequence[RunRecord]) -> RowFigures:
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

    def summary_figures(
        self, results: SessionResults, settings: Settings | None = None
    ) -> LayerFigures:
        """What the layer adds to its summary beyond the common tables (the weighted
        quality score reads the settings' weights)."""
        ...

    def case_table(self, summary: Summary) -> Table:
        """One row per case, every system side by side."""
        ...

    def sections(self, summary: Summary) -> list[tuple[str, Table]]:
        """The metric tables of the reports, titled, in order (gates are shown apart)."""
        ...
