"""What a user's code adds to a run's decision and reports (pure: no pytest here).

The plugin fills an :class:`Extensions` from the ``pytest_ragv2_gates`` and
``pytest_ragv2_summary`` hooks of a conftest or an installed plugin
(:mod:`pytest_ragv2.plugin.hookspecs`); the pipeline asks it for each layer's own gates
after the layer's, and for report sections once a layer's summary is built. A hook that
raises costs nothing else: its gate fails with the error as its reason, and its section
says what went wrong.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pytest_ragv2.deciding.verdict import GateResult

if TYPE_CHECKING:
    from pytest_ragv2.config.settings import Settings
    from pytest_ragv2.deciding.results import SessionResults
    from pytest_ragv2.report.model import ReportSection, Summary

# (layer, the layer's tables, the settings) -> the gates of every implementation
GatesHook = Callable[[str, "SessionResults", "Settings"], Sequence[Sequence[GateResult] | None]]
# a layer's summary -> the sections of every implementation
SectionsHook = Callable[["Summary"], Sequence[Sequence["ReportSection"] | None]]


@dataclass(frozen=True, slots=True)
class Extensions:
    gates_hook: GatesHook | None = None
    sections_hook: SectionsHook | None = None

    def gates(self, layer: str, results: SessionResults, settings: Settings) -> list[GateResult]:
        """The gates the hooks add to ``layer``; a hook that raises is a failed gate."""
        if self.gates_hook is None:
            return []
        try:
            found = self.gates_hook(layer, results, settings)
        except Exception as exc:
            return [_raised(exc)]
        gates: list[GateResult] = []
        for answer in found:
            for gate in answer or ():
                if isinstance(gate, GateResult):
                    gates.append(gate)
                else:
                    gates.append(_raised(TypeError(f"not a GateResult: {gate!r}")))
        return gates

    def sections(self, summary: Summary) -> list[ReportSection]:
        """The report sections the hooks add to a layer's summary."""
        from pytest_ragv2.report.model import ReportSection

        if self.sections_hook is None:
            return []
        try:
            found = self.sections_hook(summary)
        except Exception as exc:
            message = f"a pytest_ragv2_summary hook raised {type(exc).__name__}: {exc}"
            return [ReportSection("Sections of your own", ["problem"], [[message]])]
        return [section for answer in found for section in answer or ()]


def _raised(exc: BaseException) -> GateResult:
    return GateResult(
        "plugin_gates",
        "the gates of a pytest_ragv2_gates hook",
        None,
        "no error",
        "fail",
        f"a pytest_ragv2_gates hook failed: {type(exc).__name__}: {exc}",
    )
