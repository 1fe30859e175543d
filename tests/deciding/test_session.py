"""Aggregation: case-clustered means, errors kept in denominators, undefined values left out."""

from __future__ import annotations

import math
from typing import Any

import pytest

from tests.deciding.json_records import aggregate


def record(
    case: str,
    system: str,
    rep: int,
    recall5: float,
    *,
    ok: bool = True,
    category: str = "semantic",
    lang: str = "en",
    latency: float = 0.1,
    met: bool = True,
) -> dict[str, Any]:
    return {
        "key": {"case": case, "system": system, "rep": rep, "lang": lang, "layer": "A"},
        "category": category,
        "ok": ok,
        "met": met,
        "latency_s": latency,
        "metrics": {"recall@5": recall5, "mrr": recall5, "leaked": []},
    }


def test_rates_are_means_of_case_means_and_errors_count() -> None:
    records = [
        # case A: three runs (mean 2/3); case B: one run (1.0) -> system mean 5/6, not 3/4
        record("A", "v2", 1, 1.0),
        record("A", "v2", 2, 1.0),
        record("A", "v2", 3, 0.0, ok=False, met=False),
        record("B", "v2", 1, 1.0),
        # a safe no-answer case: recall undefined, left out of the mean, still a run
        record("C", "v2", 1, math.nan),
    ]
    results = aggregate(records, roles={"v2": "candidate"}, expected_runs=5)
    row = results.systems["v2"]
    assert row.value("recall@5") == pytest.approx(5 / 6)
    assert (row.runs, row.cases, row.errors) == (5, 3, 1)
    assert row.error_rate == pytest.approx(0.2)
    assert row.value("met") == pytest.approx((2 / 3 + 1 + 1) / 3)
    assert row.headline_ci is not None
    assert row.headline_ci[0] == "recall@5"
    assert row.headline_ci[1].value == pytest.approx(5 / 6)
    assert row.to_json()["recall@5_ci"]["value"] == pytest.approx(5 / 6)  # summary.json
    assert results.by_case["v2"]["C"].value("recall@5") is None


def test_breakdowns_and_deduplication_by_run_key() -> None:
    records = [
        record("A", "v1", 1, 0.0, category="exact_lookup", lang="de"),
        record("A", "v1", 1, 1.0, category="exact_lookup", lang="de"),  # a rerun: last wins
        record("B", "v1", 1, 0.5, category="technical_table", lang="en", latency=0.3),
    ]
    results = aggregate(records, roles={"v1": "baseline"})
    assert results.recorded_runs == 2
    assert results.by_category["v1"]["exact_lookup"].value("recall@5") == 1.0
    assert results.by_language["v1"]["en"].value("recall@5") == 0.5
    assert results.systems["v1"].p95 == pytest.approx(0.1 + 0.95 * 0.2)
    assert results.role_system("baseline") == "v1"


def _failed(case: str, rep: int, kind: str, message: str, latency: float) -> dict[str, Any]:
    failed = record(case, "v2", rep, 0.0, ok=False, met=False, latency=latency)
    failed["error"] = {"kind": kind, "message": message, "status_code": None}
    return failed


def test_latency_is_over_successful_runs_and_errors_are_named_by_kind() -> None:
    from tests.deciding.json_records import summarize

    records = [
        record("A", "v2", 1, 1.0, latency=0.5),
        record("A", "v2", 2, 1.0, latency=0.5),
        _failed("B", 1, "transport", "connection refused", 0.001),
        _failed("B", 2, "transport", "connection refused", 0.001),
        _failed("C", 1, "timeout", "read timed out", 30.0),
    ]
    row = summarize(records)
    assert row.p95 == pytest.approx(0.5)
    assert row.error_kinds == {"transport": 2, "timeout": 1}
    assert row.error_example == "B: connection refused"


def test_a_system_whose_every_run_failed_cannot_pass_a_latency_gate() -> None:
    from pytest_ragv2.deciding.gates import error_rate_gate, latency_gate
    from tests.deciding.json_records import summarize

    records = [_failed(f"C{n}", 1, "http", "401 Unauthorized", 0.002) for n in range(4)]
    row = summarize(records, with_intervals=True)
    latency = latency_gate(row, 2.0)
    assert latency.decision == "fail"
    assert "no successful run: all 4 failed" in latency.reason
    assert "http: all, e.g. C0: 401 Unauthorized" in latency.reason
    errors = error_rate_gate([("v2", row)], 0.02)
    assert errors.decision == "fail"
    assert errors.reason == "4 of 4 runs failed (http: all, e.g. C0: 401 Unauthorized)"


def _naive_case_means(records: list[dict[str, Any]], metric: str) -> dict[str, float]:
    values: dict[str, list[float]] = {}
    for given in records:
        value = given["metrics"].get(metric)
        if value is not None and not math.isnan(value):
            values.setdefault(given["key"]["case"], []).append(value)
    return {case: sum(found) / len(found) for case, found in values.items()}


@pytest.mark.parametrize("second_language", [False, True])
def test_language_rows_are_their_own_runs_means(second_language: bool) -> None:
    """With every case in one language the language rows reuse the system's per-case means;
    with a case in two languages they cannot: both must equal the means of their own runs."""
    records = [
        record("A", "v2", 1, 1.0, lang="en"),
        record("A", "v2", 2, 0.0, lang="de" if second_language else "en"),
        record("B", "v2", 1, 0.5, lang="de"),
        record("B", "v2", 2, math.nan, lang="de"),
        record("C", "v2", 1, 0.25, lang="en"),
    ]
    results = aggregate(records, roles={"v2": "candidate"})
    for lang, row in results.by_language["v2"].items():
        own = [given for given in records if given["key"]["lang"] == lang]
        means = _naive_case_means(own, "recall@5")
        assert row.value("recall@5") == pytest.approx(sum(means.values()) / len(means))
        assert row.cases == len({given["key"]["case"] for given in own})
    expected_en = (1.0 + 0.25) / 2 if second_language else (0.5 + 0.25) / 2
    assert results.by_language["v2"]["en"].value("recall@5") == pytest.approx(expected_en)


def test_a_case_row_holds_its_runs_mean_and_reads_as_a_mapping() -> None:
    import pickle

    records = [record("A", "v2", rep, value) for rep, value in ((1, 1.0), (2, 0.5))]
    records.append(record("B", "v2", 1, 0.75))
    results = aggregate(records, roles={"v2": "candidate"})
    rows = results.by_case["v2"]
    assert rows["A"].metrics["recall@5"] == pytest.approx(0.75)
    assert rows["B"].metrics["recall@5"] == 0.75
    metrics = rows["A"].metrics
    assert list(metrics) == list(results.systems["v2"].metrics)  # the layer's metric order
    assert dict(metrics) == metrics
    assert metrics == dict(metrics)
    assert metrics.get("no such metric") is None
    with pytest.raises(KeyError):
        metrics["no such metric"]
    assert pickle.loads(pickle.dumps(metrics)) == metrics
    json_row = rows["A"].to_json()
    assert json_row["recall@5"] == pytest.approx(0.75)
    assert list(json_row).index("recall@5") < list(json_row).index("latency_p50")


def test_per_case_rows_hold_their_latency_alone_and_a_systems_row_its_interval() -> None:
    from pytest_ragv2.deciding.results import Latency

    records = [
        record(case, "v2", 1, 1.0, latency=latency) for case, latency in (("A", 0.2), ("B", 0.4))
    ]
    results = aggregate(records, roles={"v2": "candidate"})
    first, second = results.by_case["v2"]["A"], results.by_case["v2"]["B"]
    assert first.latency_p50 == Latency(0.2)
    assert second.p95 == 0.4
    assert first.to_json()["latency_p95"] == {"value": 0.2}
    assert first.extras == {"leaking_runs": 0, "empty_runs": 1}  # no item returned
    system = results.systems["v2"].latency_p50
    assert system.method is not None
    assert system.n == 2
    assert set(results.systems["v2"].to_json()["latency_p50"]) == {
        "value", "low", "high", "n", "method"
    }  # fmt: skip


@pytest.mark.parametrize("latency", [0.25, 0.0, math.inf, -math.inf, math.nan])
def test_a_one_run_row_reads_its_latency_as_the_percentile_would(latency: float) -> None:
    from pytest_ragv2.deciding.aggregate import _percentile
    from pytest_ragv2.deciding.stats import percentile

    expected = percentile([latency], 95)
    found = _percentile([latency], 95)
    assert found == (None if math.isnan(expected) else expected)
    assert _percentile([latency, latency], 50) == found  # the general path agrees
