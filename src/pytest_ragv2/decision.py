"""One pure decision: records in, tables, gates and the verdict out.

The live session (:mod:`pytest_ragv2.controller`) and ``ragv2 rescore``
(:mod:`pytest_ragv2.rescore`) both call :func:`decide`, so a rescored run is decided by
exactly the code that decided it live; the controller only gathers records and prints.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pytest_ragv2.layer_registry import load_layer
from pytest_ragv2.session import SessionResults, aggregate

if TYPE_CHECKING:
    from pytest_ragv2.gates import GateResult
    from pytest_ragv2.run_record import RunRecord
    from pytest_ragv2.settings import Settings


@dataclass(frozen=True, slots=True)
class Decision:
    layer: str
    results: SessionResults
    gates: list[GateResult]

    @property
    def passed(self) -> bool:
        """Every gate holds (a skipped gate does not fail the verdict)."""
        from pytest_ragv2.gates import verdict

        return verdict(self.gates)


def decide(
    records: Iterable[RunRecord | Mapping[str, Any]],
    *,
    layer: str,
    settings: Settings,
    roles: Mapping[str, str],
    configured_roles: Mapping[str, str] | None = None,
    expected_runs: int | None = None,
    case_errors: Sequence[str] = (),
    allowlist_present: bool = True,
) -> Decision:
    """Aggregate the records (case-clustered tables) and evaluate the layer's gates.

    ``roles`` are the roles of the systems that ran; ``configured_roles`` every configured
    system's, run or not (a configured baseline that was not run fails the comparisons
    instead of letting them pass unexamined)."""
    results = aggregate(records, roles=roles, expected_runs=expected_runs, layer=layer)
    gates = load_layer(layer).gates(
        results,
        settings,
        case_errors,
        configured_roles=dict(configured_roles) if configured_roles else dict(roles),
        allowlist_present=allowlist_present,
    )
    return Decision(layer, results, gates)
