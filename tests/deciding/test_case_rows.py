"""Per-case rows kept compact: a row read back is the plain row the aggregation made."""

from __future__ import annotations

import json

from pytest_ragv2.deciding.case_rows import CaseRows
from pytest_ragv2.deciding.records import JudgeGrade, Ruling, Rulings
from pytest_ragv2.deciding.results import Latency, SystemRow
from pytest_ragv2.deciding.stats import Estimate
from tests.deciding.json_records import aggregate, read, summarize
from tests.deciding.test_session import record


def _failed(case: str, rep: int) -> dict[str, object]:
    failed = record(case, "v2", rep, 0.0, ok=False, met=False, latency=2.0)
    failed["error"] = {"kind": "timeout", "message": "read timed out", "status_code": None}
    return failed


def test_each_case_row_reads_back_as_the_row_summarize_makes() -> None:
    records = [
        record("A", "v2", 1, 1.0, latency=0.2),
        record("A", "v2", 2, 0.5, latency=0.4),
        _failed("A", 3),
        record("B", "v2", 1, 0.0, lang="de"),
        record("C", "v2", 1, float("nan")),
    ]
    rows = aggregate(records, roles={"v2": "candidate"}).by_case["v2"]
    assert isinstance(rows, CaseRows)
    assert list(rows) == ["A", "B", "C"]
    assert len(rows) == 3
    assert "A" in rows
    assert "Z" not in rows
    for case in rows:
        own = [given for given in records if given["key"]["case"] == case]  # type: ignore[index]
        made = summarize(own)
        assert rows[case] == made
        assert json.dumps(rows[case].to_json()) == json.dumps(made.to_json())
    assert rows["A"].error_kinds == {"timeout": 1}
    assert rows["A"].error_example == "A: read timed out"
    assert rows["B"].error_kinds == {}
    assert rows["A"] is not rows["A"]  # made when read: a reader may keep or change its own


def test_a_row_a_case_table_does_not_have_is_kept_as_it_is() -> None:
    rows = CaseRows()
    plain = summarize(read([record("A", "v2", 1, 1.0)]))
    with_interval = SystemRow(
        runs=1,
        cases=1,
        errors=0,
        error_rate=0.0,
        skipped=0,
        metrics={"recall@5": 1.0},
        latency_p50=Latency(0.1, 0.05, 0.2, 1, "order statistic"),
        latency_p95=Latency(0.1),
        headline_ci=("recall@5", Estimate(1.0, 1.0, 1.0, 1, "bootstrap")),
    )
    other_metrics = SystemRow(1, 1, 0, 0.0, 0, {"mrr": 1.0}, Latency(0.1), Latency(0.1))
    rows.add("A", plain)
    rows.add("B", with_interval)
    rows.add("C", other_metrics)
    assert rows["A"] == plain
    assert rows["B"] is with_interval
    assert rows["C"] is other_metrics


def test_a_records_judge_grade_and_rulings_keep_their_json_shape() -> None:
    graded = JudgeGrade("PASS", "judge-model", "all claims found")
    unreadable = JudgeGrade(None, error="no grade in the judge's reply")
    assert graded.to_json() == {
        "model": "judge-model",
        "grade": "PASS",
        "reason": "all claims found",
    }
    assert unreadable.to_json() == {"grade": None, "error": "no grade in the judge's reply"}
    for grade in (graded, unreadable):
        assert JudgeGrade.from_json(json.loads(json.dumps(grade.to_json()))) == grade
    ruling = Ruling("Kim", "2026-12-01", "gold fixed", "override", 7, {"mrr": (0.0, 1.0)})
    rulings = Rulings(("Kim",), (ruling,), False)
    data = json.loads(json.dumps(rulings.to_json()))
    assert data["rulings"][0]["changes"] == {"mrr": [0.0, 1.0]}
    assert Rulings.from_json(data) == rulings
