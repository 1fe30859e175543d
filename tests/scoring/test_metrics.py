"""Every metric is declared once: what tables, layers and records name is declared."""

from __future__ import annotations

import pytest

from pytest_ragv2.layers.protocol import load_layer
from pytest_ragv2.layers.registry import LAYERS
from pytest_ragv2.report.tables import ANSWER_COLUMNS, DISCIPLINE_COLUMNS, SYSTEM_COLUMNS
from pytest_ragv2.scoring.metrics import ANSWER_METRICS, EVIDENCE_RECALL, RETRIEVAL_METRICS, Metric

DECLARED = {metric.name: metric for metric in (*RETRIEVAL_METRICS, *ANSWER_METRICS)}


def test_names_are_unique_within_a_layer() -> None:
    for metrics in (RETRIEVAL_METRICS, ANSWER_METRICS):
        names = [metric.name for metric in metrics]
        assert len(names) == len(set(names))


@pytest.mark.parametrize("name", sorted(LAYERS))
def test_every_case_metric_of_every_layer_is_declared(name: str) -> None:
    known = {*DECLARED, EVIDENCE_RECALL.name}
    assert set(load_layer(name).case_metrics) <= known


def test_every_table_column_is_a_declared_metric_with_its_label() -> None:
    for columns in (SYSTEM_COLUMNS, ANSWER_COLUMNS, DISCIPLINE_COLUMNS):
        for name, label in columns:
            assert DECLARED[name].label == label


def test_every_answer_metric_but_met_is_read_from_the_score() -> None:
    unread = [metric.name for metric in ANSWER_METRICS if metric.read is None]
    assert unread == ["met"]  # met is the record's own verdict, not a score reading


def test_a_declared_metric_reaches_records_rows_and_tables() -> None:
    """Adding a metric is its declaration: the row means and the table read it from there."""
    from pytest_ragv2.report.tables import columns
    from tests.deciding.json_records import summarize

    extra = Metric("answer_chars", "chars", "neither", "answer length", tables=("answers",))
    assert ("answer_chars", "chars") in columns((*ANSWER_METRICS, extra), "answers")
    record = {
        "key": {"case": "C1", "system": "v2", "rep": 1, "lang": "en", "layer": "B"},
        "category": "semantic",
        "ok": True,
        "met": True,
        "latency_s": 0.1,
        "metrics": {"exact_answer": 1.0},
    }
    row = summarize([record], layer="B")
    assert row.value("exact_answer") == 1.0
    assert row.value("claim_correctness") is None  # declared, not measured on this run


def test_a_bad_name_is_refused_at_declaration() -> None:
    with pytest.raises(ValueError, match="metric name"):
        Metric("two words", "x", "higher", "x")
