"""One pure decision: records in, tables, gates and the verdict out.

The live session (:mod:`pytest_ragv2.plugin.controller`) and ``ragv2 rescore``
(:mod:`pytest_ragv2.tools.rescore`) both call :func:`decide`, so a rescored run is decided by
exactly the code that decided it live; the controller only gathers records and prints.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pytest_ragv2.deciding.aggregate import aggregate
from pytest_ragv2.deciding.records import held_for_review
from pytest_ragv2.deciding.results import SessionResults
from pytest_ragv2.layers.protocol import load_layer

if TYPE_CHECKING:
    from pytest_ragv2.config.settings import Settings
    from pytest_ragv2.deciding.records import RunRecord
    from pytest_ragv2.deciding.verdict import GateResult
    from pytest_ragv2.gold.adjudication import Adjudications


@dataclass(frozen=True, slots=True)
class Decision:
    layer: str
    results: SessionResults
    gates: list[GateResult]

    @property
    def passed(self) -> bool:
        """Every gate holds (a skipped gate does not fail the verdict)."""
        from pytest_ragv2.deciding.verdict import verdict

        return verdict(self.gates)


def decide(
    records: Iterable[RunRecord],
    *,
    layer: str,
    settings: Settings,
    roles: Mapping[str, str],
    configured_roles: Mapping[str, str] | None = None,
    expected_runs: int | None = None,
    case_errors: Sequence[str] = (),
    allowlist_present: bool = True,
    adjudications: Adjudications | None = None,
    extra_gates: Callable[[str, SessionResults, Settings], list[GateResult]] | None = None,
) -> Decision:
    """Aggregate the records (case-clustered tables) and evaluate the layer's gates.

    ``roles`` are the roles of the systems that ran; ``configured_roles`` every configured
    system's, run or not (a configured baseline that was not run fails the comparisons
    instead of letting them pass unexamined). ``adjudications`` (the reviewers' rulings)
    are applied to the records first; the layer is then decided once without them too,
    and ``results.adjudication`` holds both verdicts and what the rulings changed.
    ``extra_gates`` (the ``pytest_ragv2_gates`` hooks) adds gates after the layer's."""
    configured = dict(configured_roles) if configured_roles else dict(roles)

    def decided(given: Iterable[RunRecord], errors: Sequence[str]) -> Decision:
        # a run the scorer could not decide, and no reviewer has ruled on, decides nothing
        held = [held_for_review(record) for record in given]
        results = aggregate(
            held,
            roles=roles,
            expected_runs=expected_runs,
            layer=layer,
            recall_k=settings.gates.recall_k,
        )
        gates = load_layer(layer).gates(
            results,
            settings,
            errors,
            configured_roles=configured,
            allowlist_present=allowlist_present,
        )
        if extra_gates is not None:
            gates = [*gates, *extra_gates(layer, results, settings)]
        return Decision(layer, results, gates)

    if not adjudications:
        return decided(records, case_errors)
    from pytest_ragv2.deciding.adjudicate import apply, outcome_json

    machine = list(records)
    checked, unknown = adjudications.check_systems(configured)
    errors = [*case_errors, *(str(error) for error in unknown)]
    adjudicated, applied = apply(machine, checked)
    after = decided(adjudicated, errors)
    before = decided(machine, errors) if checked.entries else after
    cases = {record.key.case for record in machine}
    after.results.adjudication = outcome_json(checked, applied, before.gates, after.gates, cases)
    return after
