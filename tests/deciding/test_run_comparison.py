"""Two runs compared record by record (deciding/run_comparison.py): cases paired over both
runs, each case's mean over its runs, outcome changes by "every run met", vetoes that
appeared or went, skipped runs left out."""

from __future__ import annotations

import pytest

from pytest_ragv2.deciding.records import ChatRecord, RunRecord
from pytest_ragv2.deciding.run_comparison import (
    RunComparison,
    by_system,
    compare_system,
    veto_counts,
)
from pytest_ragv2.run.keys import RunKey
from pytest_ragv2.scoring.veto_record import Veto


def _record(
    case: str,
    lang: str,
    *,
    met: bool,
    exact: float,
    vetoes: tuple[str, ...] = (),
    skipped: str | None = None,
    system: str = "v2",
) -> RunRecord:
    return ChatRecord(
        key=RunKey(case, system, 1, lang, "B"),
        category="exact_lookup",
        split="development",
        role="candidate",
        ok=True,
        met=met,
        latency_s=0.1,
        skipped=skipped,
        metrics={"exact_answer": exact},
        vetoes=tuple(Veto(kind, 1, "text", "") for kind in vetoes),  # type: ignore[arg-type]
    )


def _comparison() -> RunComparison:
    return RunComparison("a", "b", 1, 2, ("B",), "ragv2.yaml", 0.95)


RUN_A = [
    _record("C1", "en", met=True, exact=1.0, vetoes=("fabricated_identifier",)),
    _record("C1", "de", met=True, exact=1.0),
    _record("C2", "en", met=False, exact=0.0),
    _record("C3", "en", met=True, exact=1.0),  # only in a
    _record("C5", "en", met=False, exact=0.0, skipped="no such tool"),
]
RUN_B = [
    _record("C1", "en", met=False, exact=0.0, vetoes=("outside_allowlist",)),
    _record("C1", "de", met=True, exact=1.0),
    _record("C2", "en", met=True, exact=1.0),
    _record("C4", "en", met=True, exact=1.0),  # only in b
    _record("C5", "en", met=True, exact=1.0, skipped="no such tool"),
]


def test_cases_are_paired_over_both_runs_and_skipped_runs_count_for_nothing() -> None:
    result = _comparison()
    compare_system(result, "B", "v2", RUN_A, RUN_B, ("exact_answer", "met"))

    (cases,) = result.cases
    assert cases.paired == ("C1", "C2")
    assert (cases.only_a, cases.only_b) == (("C3",), ("C4",))
    exact = next(delta for delta in result.deltas if delta.metric == "exact_answer")
    # C1: 1.0 -> 0.5 (the mean of its two runs), C2: 0.0 -> 1.0
    assert exact.paired.n == 2
    assert exact.paired.estimate == pytest.approx(0.25)
    assert (exact.mean_a, exact.mean_b) == (pytest.approx(0.5), pytest.approx(0.75))
    assert exact.paired.low == exact.paired.high == exact.paired.estimate  # two cases
    assert exact.label == "exact"
    assert exact.direction == "higher"


def test_a_case_is_met_when_every_run_met_it() -> None:
    result = _comparison()
    compare_system(result, "B", "v2", RUN_A, RUN_B, ("exact_answer",))

    changes = {change.case: change for change in result.outcomes}
    assert set(changes) == {"C1", "C2"}
    assert changes["C1"].change == "newly missed"
    assert (changes["C1"].met_a, changes["C1"].met_b) == ((2, 2), (1, 2))
    assert changes["C2"].change == "newly met"


def test_vetoes_that_appeared_or_went_are_named_per_case() -> None:
    result = _comparison()
    compare_system(result, "B", "v2", RUN_A, RUN_B, ("exact_answer",))

    assert [(c.case, c.veto, c.change) for c in result.veto_changes] == [
        ("C1", "outside_allowlist", "appeared"),
        ("C1", "fabricated_identifier", "went"),
    ]
    counts = veto_counts(
        {"v2": {"fabricated_identifier": 1, "outside_allowlist": 0}},
        {"v2": {"outside_allowlist": 1}, "v1": {"fabricated_identifier": 3}},
    )
    assert counts == {
        "v2": {"fabricated_identifier": (1, 0), "outside_allowlist": (0, 1)},
        "v1": {"fabricated_identifier": (0, 3)},
    }
    assert veto_counts(None, None) == {}


def test_records_are_grouped_by_system_at_one_layer_without_skipped_runs() -> None:
    records = [*RUN_A, _record("C1", "en", met=True, exact=1.0, system="v1")]
    grouped = by_system(records, "B")
    assert {name: len(runs) for name, runs in grouped.items()} == {"v2": 4, "v1": 1}
    assert by_system(records, "A") == {}
