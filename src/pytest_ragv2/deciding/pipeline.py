"""One pipeline from a run's records to its decision, for the live session and the rescore.

:func:`decide_run` takes the records and the facts the run rests on besides them
(:class:`RunFacts`) and returns every layer's summary with its gates, the failure diagnosis
that reads the layers together, each system's attainable ceiling and the session's own
verdict. The controller calls it at the session's end and ``ragv2 rescore`` calls it on the
raw runs, so a rescore of an unchanged run reproduces the live summary.json. It is pure:
it writes nothing and calls no system (the chunks the systems store are listed before it).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from pytest_ragv2.deciding.decision import decide
from pytest_ragv2.deciding.extensions import Extensions
from pytest_ragv2.layers.registry import layer_info
from pytest_ragv2.report.model import SessionFigures, Summary
from pytest_ragv2.report.summary import build_summary, session_verdict
from pytest_ragv2.run.session_end import SessionEnd

if TYPE_CHECKING:
    from pytest_ragv2.config.settings import Settings
    from pytest_ragv2.deciding.formal import RunKind
    from pytest_ragv2.deciding.records import RunRecord
    from pytest_ragv2.deciding.results import SessionResults
    from pytest_ragv2.deciding.verdict import GateResult
    from pytest_ragv2.gold.adjudication import Adjudications
    from pytest_ragv2.gold.cases import Catalog
    from pytest_ragv2.run.attainable import Ceiling
    from pytest_ragv2.run.session_end import BudgetSpent
    from pytest_ragv2.run.shards import ShardPlan
    from pytest_ragv2.systems.outputs import RetrievedItem


@dataclass(frozen=True, slots=True)
class RunFacts:
    """What a run's decision rests on besides its records."""

    run_id: str
    seed: int
    layers: tuple[str, ...]
    settings: Settings
    roles: Mapping[str, str]  # the systems that ran
    configured_roles: Mapping[str, str]  # every configured system, run or not
    expected_by_layer: Mapping[str, int | None]
    case_errors: Sequence[str]
    allowlist_present: bool
    adjudications: Adjudications | None
    descriptors: Mapping[str, Mapping[str, str]]
    raw_runs: Path  # as the summaries name it: relative to the rootdir when inside it
    protocol: RunKind
    catalog: Catalog
    # system -> every chunk its service stores for the gold files (None: it could not list)
    stored_chunks: Mapping[str, Sequence[RetrievedItem] | None] = field(default_factory=dict)
    end: SessionEnd = field(default_factory=SessionEnd)
    # what a conftest or a plugin adds: gates and report sections (the hooks)
    extensions: Extensions = field(default_factory=Extensions)
    shard: ShardPlan | None = None  # one shard of a run (--ragv2-shard): not a decision


@dataclass(slots=True)
class RunDecision:
    summaries: dict[str, Summary]  # per layer, in the order the run ran them
    gates_by_layer: dict[str, list[GateResult]]
    results_by_layer: dict[str, SessionResults]
    passed: bool
    incomplete: bool  # the budget was spent before every run started

    @property
    def records(self) -> list[RunRecord]:
        """The records as decided: with the reviewers' rulings."""
        return [record for results in self.results_by_layer.values() for record in results.records]

    @property
    def exit_status(self) -> int:
        """2 when interrupted, 3 when the raw runs could not be written, else 0 or 1; the
        live session may end otherwise still (an ordinary test failed, a report was not
        written) and says so on the summaries."""
        summary = next(iter(self.summaries.values()), None)
        return summary.exit_status if summary is not None else 0

    def set_exit_status(self, status: int) -> None:
        for summary in self.summaries.values():
            summary.exit_status = status


def decide_run(records: Sequence[RunRecord], facts: RunFacts) -> RunDecision:
    """Every layer's decision and summary from the run's records."""
    from pytest_ragv2.deciding.diagnosis import diagnose

    several = len(facts.layers) > 1
    decisions = {
        layer: decide(
            [record for record in records if record.key.layer == layer],
            layer=layer,
            settings=facts.settings,
            roles=facts.roles,
            configured_roles=facts.configured_roles,
            expected_runs=facts.expected_by_layer.get(layer),
            case_errors=facts.case_errors,
            allowlist_present=facts.allowlist_present,
            adjudications=facts.adjudications,
            extra_gates=facts.extensions.gates,
        )
        for layer in facts.layers
    }
    passed = all(decision.passed for decision in decisions.values())
    end = facts.end
    budget = end.budget
    incomplete = bool(budget and budget.runs_not_started) and not end.interrupted
    status = 2 if end.interrupted else 3 if end.stopped else 0 if passed and not incomplete else 1
    # several layers: one failure diagnosis reads them together (A's recall, B's answers)
    diagnosis = None
    session: SessionFigures | None = None
    if several:
        diagnosis = diagnose(
            {layer: d.results.records for layer, d in decisions.items()},
            facts.settings.gates.recall_k,
        )
        every_gate = [gate for d in decisions.values() for gate in d.gates]
        session = SessionFigures(
            tuple(facts.layers),
            "stopped"
            if end.stopped
            else "incomplete"
            if incomplete
            else session_verdict(every_gate, passed=passed, interrupted=end.interrupted),
        )
    summaries: dict[str, Summary] = {}
    gates_by_layer: dict[str, list[GateResult]] = {}
    for layer, decision in decisions.items():
        gates = decision.gates
        if incomplete and budget is not None:
            gates = _name_unstarted(gates, layer, budget, facts.expected_by_layer.get(layer))
        elif end.failed_fast:
            gates = _name_failed_fast(gates, end.failed_fast)
        summary = _layer_summary(layer, decision.results, gates, decision.passed, status, facts)
        if diagnosis is not None:
            summary.diagnosis = diagnosis.only(layer)
        if budget is not None:
            summary.budget = budget
            if incomplete and (not several or budget.not_started_in(layer)):
                summary.verdict = "incomplete"
        summary.session = session
        if end.stopped:
            summary.verdict = "stopped"
        if facts.shard is not None:
            _mark_partial(summary, facts.shard)
        summary.sections = facts.extensions.sections(summary)
        summaries[layer] = summary
        gates_by_layer[layer] = gates
    return RunDecision(
        summaries,
        gates_by_layer,
        {layer: decision.results for layer, decision in decisions.items()},
        passed,
        incomplete,
    )


def _mark_partial(summary: Summary, shard: ShardPlan) -> None:
    """One shard's summary: its figures are its share's, its verdict "partial" (unless
    the shard was interrupted, stopped or left runs unstarted, which it says first)."""
    summary.shard = shard
    if summary.verdict in ("pass", "fail", "review"):
        summary.verdict = "partial"
    if summary.session is not None and summary.session.verdict in ("pass", "fail", "review"):
        summary.session = dataclasses.replace(summary.session, verdict="partial")


def _layer_summary(
    layer: str,
    results: SessionResults,
    gates: list[GateResult],
    passed: bool,
    status: int,
    facts: RunFacts,
) -> Summary:
    """One layer's summary with what the run adds to every layer's: the run's kind and the
    ceilings of a retrieval layer."""
    # a retrieval layer's figures have a ceiling: what the systems store at all
    ceilings = {} if layer_info(layer).chat else _ceilings(results, facts)
    for name, found in ceilings.items():
        results.systems[name].ceiling = found.value
    summary = build_summary(
        run_id=facts.run_id,
        seed=facts.seed,
        layer=layer,
        results=results,
        gates=gates,
        passed=passed,
        exit_status=status,
        interrupted=facts.end.interrupted,
        descriptors=facts.descriptors,
        raw_runs_dir=facts.raw_runs,
        settings=facts.settings,
    )
    summary.protocol = facts.protocol
    summary.attainable = ceilings or None
    return summary


def _name_unstarted(
    gates: list[GateResult], layer: str, budget: BudgetSpent, expected: int | None
) -> list[GateResult]:
    """The runs_complete gate names the runs the budget left out."""
    missing = budget.not_started_in(layer)
    if not missing:
        return gates
    named = list(gates)
    for index, gate in enumerate(named):
        if gate.name == "runs_complete":
            recorded = gate.value if isinstance(gate.value, int) else 0
            lost = (expected or 0) - recorded - missing
            reason = (
                f"{recorded} of {expected or 0} runs recorded; {missing} not started: the "
                f"budget of {budget.minutes:g} min was spent"
                + (f"; {lost} lost" if lost > 0 else "")
            )
            named[index] = dataclasses.replace(gate, decision="fail", reason=reason)
    return named


def _name_failed_fast(gates: list[GateResult], why: str) -> list[GateResult]:
    """The runs_complete gate of a session pytest stopped at a failure (-x, --maxfail):
    the runs after it were not started, not lost."""
    named = list(gates)
    for index, gate in enumerate(named):
        if gate.name == "runs_complete" and gate.decision == "fail":
            reason = gate.reason.replace(" lost", f" not started: pytest {why} (-x, --maxfail)")
            named[index] = dataclasses.replace(gate, reason=reason)
    return named


def _ceilings(results: SessionResults, facts: RunFacts) -> dict[str, Ceiling]:
    """Each system's attainable ceiling (:mod:`pytest_ragv2.run.attainable`), for the systems
    whose service listed what it stores."""
    from pytest_ragv2.run.attainable import CaseGold, ceiling

    found: dict[str, Ceiling] = {}
    for name in results.systems:
        stored = facts.stored_chunks.get(name)
        if stored is None:
            continue
        cases = []
        for case_id, lang in sorted({(r.key.case, r.key.lang) for r in results.records_of(name)}):
            loaded = facts.catalog.find(case_id)
            if loaded is not None:
                case = loaded.case
                cases.append(CaseGold(case_id, case.category, lang, tuple(case.evidence_for(lang))))
        found[name] = ceiling(cases, stored)
    return found
