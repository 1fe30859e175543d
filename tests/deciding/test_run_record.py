"""The typed run record: made by its layer, JSON on the report, read back by attribute."""

from __future__ import annotations

import json
from typing import Any

import pytest

from pytest_ragv2.deciding.records import ChatRecord, RetrievalRecord, RunRecord, TopItem, as_record
from pytest_ragv2.run.keys import RunKey
from pytest_ragv2.scoring.veto_record import Veto
from pytest_ragv2.systems.outputs import RunError

KEY_A = RunKey("K03", "v2", 2, "de", "A")
KEY_B = RunKey("B07", "v1", 1, "fr", "B")


def test_a_retrieval_record_survives_the_report_round_trip() -> None:
    record = RetrievalRecord(
        key=KEY_A,
        category="technical_table",
        split="development",
        role="candidate",
        ok=True,
        met=False,
        latency_s=0.012,
        reasons=("missed datenblatt-tvk-220.pdf p.2",),
        metrics={"recall@5": 0.5, "mrr": None, "leaked": ["secret.pdf"]},
        returned=7,
        top=(
            TopItem.of(1, "datenblatt-tvk-220.pdf", 1, None, None),
            TopItem.of(2, "preisliste.xlsx", None, "Preise", "TVK 220"),
        ),
    )
    wire = json.loads(json.dumps(record.to_json()))  # what an xdist worker sends
    assert wire["top"][1] == {
        "rank": 2,
        "file": "preisliste.xlsx",
        "page": None,
        "section": "Preise",
        "row": "TVK 220",
    }
    back = as_record(wire)
    assert back == record
    assert back.top[1].section == "Preise"  # type: ignore[attr-defined]
    assert isinstance(back, RetrievalRecord)
    assert back.leaked == ("secret.pdf",)
    assert back.metric("recall@5") == 0.5
    assert back.metric("mrr") is None
    assert back.metric("leaked") is None  # not a number


def test_a_record_without_its_listed_items_is_the_record_with_none() -> None:
    import dataclasses

    record = RetrievalRecord(
        key=KEY_A,
        category="technical_table",
        split="development",
        role="candidate",
        ok=True,
        met=True,
        latency_s=0.01,
        error=RunError("timeout", "slow"),
        metrics={"recall@5": 1.0},
        adjudication={"by": "reviewer"},
        returned=3,
        top=(TopItem.of(1, "a.pdf", 1, None, None),),
    )
    bare = record.without_top()
    assert bare == dataclasses.replace(record, top=())
    assert type(bare) is RetrievalRecord
    assert bare.top == ()
    assert record.top  # the record itself is unchanged
    assert bare.metrics is record.metrics


def test_a_chat_record_keeps_its_error_vetoes_and_rubric() -> None:
    record = ChatRecord(
        key=KEY_B,
        category="semantic",
        split="development",
        role="baseline",
        ok=False,
        met=False,
        latency_s=1.5,
        error=RunError("timeout", "read timed out"),
        vetoes=(Veto("fabricated_identifier", 1, "TW-P-99", ""),),
        rubric={"overall": "FAIL"},
        usage={"output_tokens": 12},
        evidence_files=("contrat-cadre-meridia.docx",),
        answer="…",
    )
    back = as_record(json.loads(json.dumps(record.to_json())))
    assert back == record
    assert isinstance(back, ChatRecord)
    assert back.error == RunError("timeout", "read timed out")


def test_a_record_is_returned_as_it_is_and_a_minimal_dict_reads() -> None:
    record = as_record(
        {"key": KEY_B.to_json(), "category": "c", "ok": True, "met": True, "latency_s": 0.1}
    )
    assert isinstance(record, RunRecord)
    assert as_record(record) is record
    assert (record.skipped, record.reasons, record.metrics) == (None, (), {})


def test_a_record_holds_its_metrics_as_given() -> None:
    metrics = {"recall@5": 1.0, "mrr": 0.5, "leaked": []}
    record = as_record({"key": KEY_A.to_json(), "category": "c", "metrics": metrics})
    assert type(record.metrics) is dict
    assert record.metrics == metrics
    assert as_record(json.loads(json.dumps(record.to_json()))) == record


def test_a_kept_records_metrics_read_as_a_mapping_with_names_shared_between_records() -> None:
    import dataclasses
    import pickle

    from pytest_ragv2.deciding.kept_records import CompactMetrics, RecordKeeper

    keeper = RecordKeeper()

    def made(recall: float, mrr: float | None) -> RunRecord:
        metrics = {"recall@5": recall, "mrr": mrr, "leaked": []}
        return keeper.keep({"key": KEY_A.to_json(), "category": "c", "metrics": metrics})

    first, second = made(1.0, 0.5), made(0.0, None)
    assert isinstance(first.metrics, CompactMetrics)
    assert first.metrics._index is second.metrics._index  # type: ignore[attr-defined]
    recall = keeper.metrics({"recall@5": 2 / 2, "hit@5": 3 / 3, "dup": 1 - 1.0, "neg": -0.0})
    assert recall["recall@5"] is recall["hit@5"]  # 1.0 and 0.0: one float object each
    assert recall["dup"] is keeper.metrics({"irrelevant_rate": 0.5 - 0.5})["irrelevant_rate"]
    assert str(recall["neg"]) == "-0.0"  # a value is never changed, not even its sign
    assert first.metrics == {"recall@5": 1.0, "mrr": 0.5, "leaked": []}
    assert list(second.metrics.items()) == [("recall@5", 0.0), ("mrr", None), ("leaked", [])]
    assert "mrr" in second.metrics
    assert "ndcg" not in second.metrics
    assert second.metrics.get("ndcg", "absent") == "absent"
    assert second.metric("mrr") is None
    with pytest.raises(KeyError, match="ndcg"):
        second.metrics["ndcg"]
    assert pickle.loads(pickle.dumps(first)) == first
    assert as_record(json.loads(json.dumps(first.to_json()))) == first
    assert first.to_json()["metrics"] == {"recall@5": 1.0, "mrr": 0.5, "leaked": []}
    changed = dataclasses.replace(first, metrics={**first.metrics, "mrr": 1.0})
    assert changed.metric("mrr") == 1.0
    assert first.metric("mrr") == 0.5
    # a record made in this process (serial) is kept compact too; a kept one as it is
    plain = as_record({"key": KEY_B.to_json(), "category": "c", "metrics": {"mrr": 1.0}})
    kept = keeper.keep(plain)
    assert isinstance(kept.metrics, CompactMetrics)
    assert kept == plain
    assert keeper.keep(kept) is kept
    # two sessions share nothing
    assert RecordKeeper().keep(plain).metrics._index is not kept.metrics._index  # type: ignore[attr-defined]


def test_equal_list_metrics_are_one_list_kept_by_every_record_with_them() -> None:
    from pytest_ragv2.deciding.kept_records import RecordKeeper

    keep = RecordKeeper().metrics

    def hits(full: int | None) -> list[dict[str, Any]]:
        ranks = {"document": 1, "page": 1, "section": None, "full": full}
        return [{"index": 0, "first_rank": ranks}]

    first = keep({"evidence_hits": hits(1), "leaked": []})
    second = keep({"evidence_hits": hits(1), "leaked": []})
    other = keep({"evidence_hits": hits(2), "leaked": ["x.pdf"]})
    assert first["evidence_hits"] is second["evidence_hits"]
    assert first["leaked"] is second["leaked"]
    assert other["evidence_hits"] is not first["evidence_hits"]
    assert other["evidence_hits"] == hits(2)
    assert other["leaked"] == ["x.pdf"]
    # equal as JSON only: True is not 1, 1.0 is not 1, and the order of the keys is kept
    typed = keep({"a": [True], "b": [1], "c": [1.0], "d": [{"y": 1, "x": 2}]})
    assert [type(typed[name][0]) for name in "abc"] == [bool, int, float]
    assert list(keep({"d": [{"x": 2, "y": 1}]})["d"][0]) == ["x", "y"]
    assert list(typed["d"][0]) == ["y", "x"]
    nan = float("nan")
    assert keep({"n": [nan]})["n"] is not keep({"n": [nan]})["n"]
    unhashable = keep({"s": [{1, 2}]})
    assert unhashable["s"] == [{1, 2}]


def test_run_keys_sort_by_their_sort_key_as_by_themselves() -> None:
    from hypothesis import given
    from hypothesis import strategies as st

    keys = st.builds(
        RunKey,
        st.sampled_from(["A1", "A10", "B2", "a1"]),
        st.sampled_from(["v1", "v2"]),
        st.integers(1, 12),
        st.sampled_from(["de", "en", "fr"]),
        st.sampled_from(["A", "B", "C"]),
    )

    @given(st.lists(keys, max_size=30))
    def check(given_keys: list[RunKey]) -> None:
        assert sorted(given_keys, key=RunKey.sort_key) == sorted(given_keys)

    check()
