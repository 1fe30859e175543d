"""Failure diagnosis: per case and system, the layer most likely at fault."""

from __future__ import annotations

import dataclasses
import json
import shutil
from typing import Any, ClassVar

import pytest

from pytest_ragv2.deciding.diagnosis import (
    ANSWER_LOST,
    ANSWER_WRONG,
    ANSWERED_WITHOUT_EVIDENCE,
    DIAGNOSES,
    GOLD_SUSPECT,
    OK,
    REFUSED,
    REFUSED_DESPITE_EVIDENCE,
    RETRIEVAL_MISSED,
    RUNS_FAILED,
    UNSTABLE,
    Diagnosis,
    diagnose,
)
from pytest_ragv2.deciding.records import ChatRecord, RetrievalRecord, RunRecord
from pytest_ragv2.report.tables import diagnosis_sections
from pytest_ragv2.run.keys import RunKey
from pytest_ragv2.scoring.veto_record import Veto
from pytest_ragv2.systems.outputs import RunError
from tests.conftest import REPO_ROOT

ROLES = {"v1": "baseline", "v2": "candidate", "ref": "reference"}


def hits(
    recall: float | None,
    *,
    case: str = "K01",
    system: str = "v2",
    lang: str = "en",
    rep: int = 1,
    missed: str = "datenblatt.pdf p.2",
    ok: bool = True,
) -> RetrievalRecord:
    """A layer-A run whose required evidence was found to ``recall``."""
    reasons = () if recall == 1.0 or recall is None else (
        f"gold evidence not in top 5: {missed} (not retrieved)",
    )  # fmt: skip
    return RetrievalRecord(
        key=RunKey(case, system, rep, lang, "A"),
        category="exact",
        split="development",
        role=ROLES[system],
        ok=ok,
        met=ok and not reasons,
        latency_s=0.01,
        reasons=reasons if ok else ("timeout error: read timed out",),
        error=None if ok else RunError("timeout", "read timed out"),
        metrics={"recall@5": recall if ok else 0.0},
    )


def answer(
    right: bool,
    *,
    case: str = "K01",
    system: str = "v2",
    lang: str = "en",
    rep: int = 1,
    layer: str = "B",
    refused: bool = False,
    missing: str = "14 bar",
    evidence_recall: float | None = None,
    grounded: float | None = 1.0,
    vetoed: bool = False,
    ok: bool = True,
    skipped: str | None = None,
) -> ChatRecord:
    """A layer-B (or C) run whose answer was right, or wrong (missing a claim), or a
    refusal where an answer was due."""
    reasons: tuple[str, ...] = ()
    if not right:
        reasons = (f"required claim(s) missing: {missing}",)
        if refused:
            reasons += ("refused where an answer was due",)
    metrics: dict[str, Any] = {
        "exact_answer": 1.0 if right or vetoed else 0.0,
        "over_refusal": 1.0 if refused else 0.0,
        "safe_refusal": None,
        "grounded_rate": grounded,
    }
    if layer == "C":
        metrics["evidence_recall"] = evidence_recall
    return ChatRecord(
        key=RunKey(case, system, rep, lang, layer),
        category="exact",
        split="development",
        role=ROLES[system],
        ok=ok,
        met=ok and right and not vetoed,
        latency_s=1.0,
        reasons=reasons if ok else ("timeout error: read timed out",),
        error=None if ok else RunError("timeout", "read timed out"),
        skipped=skipped,
        metrics=metrics,
        vetoes=(Veto("fabricated_identifier", 1, "TW-P-99", ""),) if vetoed else (),
    )


def of(found: Diagnosis, case: str = "K01") -> dict[str, str]:
    """Subject → diagnosis of one case."""
    return {entry.subject: entry.diagnosis for entry in found.entries if entry.case == case}


def reason(found: Diagnosis, subject: str, case: str = "K01") -> str:
    (entry,) = [e for e in found.entries if e.case == case and e.subject == subject]
    return entry.reason


# -- layer A alone ----------------------------------------------------------------------------


def test_layer_a_alone_says_ok_or_retrieval_missed() -> None:
    found = diagnose(
        {"A": [hits(1.0, system="v1"), hits(0.5, system="v2", missed="other.pdf p.1")]}
    )
    assert of(found) == {"v1": OK, "v2": RETRIEVAL_MISSED}
    assert "recall@5 0.50" in reason(found, "v2")
    assert found.counts()["v2"][RETRIEVAL_MISSED] == 1
    assert set(found.counts()["v1"]) == set(DIAGNOSES)  # every diagnosis named, zeros kept


def test_layer_a_runs_that_all_failed_are_not_a_retrieval_miss() -> None:
    found = diagnose({"A": [hits(None, ok=False), hits(None, ok=False, rep=2)]})
    assert of(found) == {"v2": RUNS_FAILED}


def test_every_system_missing_the_same_evidence_makes_the_gold_suspect() -> None:
    same = diagnose({"A": [hits(0.0, system="v1"), hits(0.0, system="v2")]})
    assert of(same) == {"v1": GOLD_SUSPECT, "v2": GOLD_SUSPECT}
    assert "datenblatt.pdf p.2" in reason(same, "v1")
    assert "on its own: retrieval missed" in reason(same, "v1")
    # missing different entries is two retrieval misses, not a suspect gold
    apart = diagnose(
        {"A": [hits(0.0, system="v1"), hits(0.0, system="v2", missed="other.pdf p.1")]}
    )
    assert of(apart) == {"v1": RETRIEVAL_MISSED, "v2": RETRIEVAL_MISSED}
    # one system alone is never "every system"
    assert of(diagnose({"A": [hits(0.0)]})) == {"v2": RETRIEVAL_MISSED}


# -- layer B alone ----------------------------------------------------------------------------


def test_layer_b_alone_names_the_answer_failure() -> None:
    found = diagnose(
        {
            "B": [
                answer(True, system="v1"),
                answer(False, system="v2"),
                answer(False, system="ref", refused=True),
            ]
        }
    )
    assert of(found) == {"v1": OK, "v2": ANSWER_WRONG, "ref": REFUSED}
    assert "retrieval" not in of(found)["v2"]  # layer B alone does not know the evidence


def test_a_veto_or_a_missed_safe_refusal_is_a_wrong_answer() -> None:
    vetoed = answer(True, vetoed=True)
    assert of(diagnose({"B": [vetoed]})) == {"v2": ANSWER_WRONG}


def test_a_right_answer_none_of_whose_facts_is_in_its_evidence_is_suspicious() -> None:
    found = diagnose({"B": [answer(True, grounded=0.0), answer(True, rep=2, grounded=0.0)]})
    assert of(found) == {"v2": ANSWERED_WITHOUT_EVIDENCE}
    # one grounded fact, or no fact to check, is no suspicion
    assert of(diagnose({"B": [answer(True, grounded=0.5)]})) == {"v2": OK}
    assert of(diagnose({"B": [answer(True, grounded=None)]})) == {"v2": OK}


def test_repetitions_that_disagree_are_unstable() -> None:
    found = diagnose({"B": [answer(True), answer(False, rep=2), answer(True, rep=3)]})
    assert of(found) == {"v2": UNSTABLE}
    assert "2 of 3 answer(s) right" in reason(found, "v2")


def test_failed_and_skipped_runs() -> None:
    found = diagnose({"B": [answer(True, ok=False), answer(True, ok=False, rep=2)]})
    assert of(found) == {"v2": RUNS_FAILED}
    # an errored run does not count against the runs that answered
    assert of(diagnose({"B": [answer(True), answer(False, rep=2, ok=False)]})) == {"v2": OK}
    # a case the system could not serve gets no diagnosis
    skipped = diagnose({"B": [answer(False, skipped="needs web search")]})
    assert skipped.entries == ()


def test_every_system_failing_the_same_claim_makes_the_gold_suspect() -> None:
    same = [answer(False, system=name) for name in ("v1", "v2", "ref")]
    assert set(of(diagnose({"B": same})).values()) == {GOLD_SUSPECT}
    # the same claim missed, but one system also refused: not the same way
    apart = [*same[:2], answer(False, system="ref", refused=True)]
    assert GOLD_SUSPECT not in of(diagnose({"B": apart})).values()
    # one system right: the gold can be met
    right = [*same[:2], answer(True, system="ref")]
    assert GOLD_SUSPECT not in of(diagnose({"B": right})).values()


# -- layer C alone ----------------------------------------------------------------------------


def test_layer_c_reads_the_frozen_evidence_recall() -> None:
    found = diagnose(
        {
            "C": [
                answer(False, system="v1", layer="C", evidence_recall=1.0, missing="a"),
                answer(True, system="v2", layer="C", evidence_recall=1.0),
                answer(False, case="K02", system="v1", layer="C", evidence_recall=0.0),
                answer(True, case="K02", system="v2", layer="C", evidence_recall=0.0),
                answer(
                    False, case="K03", system="v1", layer="C", evidence_recall=1.0, refused=True
                ),
            ]
        }
    )
    assert of(found) == {"v1": ANSWER_LOST, "v2": OK}
    assert "frozen evidence's recall@5 1.00" in reason(found, "v1")
    assert of(found, "K02") == {"v1": RETRIEVAL_MISSED, "v2": ANSWERED_WITHOUT_EVIDENCE}
    assert of(found, "K03") == {"v1": REFUSED_DESPITE_EVIDENCE}


# -- several layers ---------------------------------------------------------------------------


def test_layer_a_recall_and_layer_b_answers_combine_per_system() -> None:
    records: dict[str, list[RunRecord]] = {
        "A": [
            hits(1.0, system="v1"),
            hits(0.0, system="v2"),
            hits(1.0, case="K02", system="v2"),
            hits(0.0, case="K03", system="v2"),
            hits(1.0, case="K04", system="v2"),
        ],
        "B": [
            answer(False, system="v1"),
            answer(False, system="v2", missing="other"),
            answer(False, case="K02", system="v2", refused=True),
            answer(True, case="K03", system="v2"),
            answer(True, case="K04", system="v2"),
            answer(False, system="ref", missing="third"),
        ],
    }
    found = diagnose(records)
    assert list(found.subjects) == ["v1 (A+B)", "v2 (A+B)", "ref (B)"]
    assert of(found) == {
        "v1 (A+B)": ANSWER_LOST,
        "v2 (A+B)": RETRIEVAL_MISSED,
        "ref (B)": ANSWER_WRONG,
    }
    assert "layer-A recall@5 1.00" in reason(found, "v1 (A+B)")
    assert of(found, "K02") == {"v2 (A+B)": REFUSED_DESPITE_EVIDENCE}
    assert of(found, "K03") == {"v2 (A+B)": ANSWERED_WITHOUT_EVIDENCE}
    assert of(found, "K04") == {"v2 (A+B)": OK}
    # a layer's own report shows the subjects that read it
    assert list(found.only("A").subjects) == ["v1 (A+B)", "v2 (A+B)"]
    assert list(found.only("B").subjects) == ["v1 (A+B)", "v2 (A+B)", "ref (B)"]


def test_languages_are_diagnosed_apart_and_the_case_names_the_failing_one() -> None:
    records: dict[str, list[RunRecord]] = {
        "A": [hits(1.0, lang="de"), hits(0.0, lang="en")],
        "B": [answer(True, lang="de"), answer(False, lang="en")],
    }
    found = diagnose(records)
    assert of(found) == {"v2 (A+B)": RETRIEVAL_MISSED}  # not "unstable": en failed, de did not
    assert reason(found, "v2 (A+B)").startswith("de: ok (")
    assert "en: retrieval missed (" in reason(found, "v2 (A+B)")


def test_a_case_that_requires_no_evidence_is_judged_on_its_answer() -> None:
    missed_refusal = dataclasses.replace(
        answer(True), met=False, reasons=("a safe refusal was required",)
    )
    missed_refusal = dataclasses.replace(
        missed_refusal, metrics={**missed_refusal.metrics, "safe_refusal": 0.0}
    )
    found = diagnose({"A": [hits(None)], "B": [missed_refusal]})
    assert of(found) == {"v2 (A+B)": ANSWER_WRONG}
    assert reason(found, "v2 (A+B)") == (
        "0 of 1 answer(s) right (a safe refusal was required); no evidence required"
    )
    # a wrong answer's reason names the gold it missed
    wrong = diagnose({"B": [answer(False, missing="14 bar")]})
    assert "required claim(s) missing: 14 bar" in reason(wrong, "v2")


def test_a_system_without_answers_keeps_its_retrieval_diagnosis() -> None:
    found = diagnose({"A": [hits(1.0, system="v1")], "C": [answer(True, layer="C")]})
    assert of(found) == {"v2 (C)": OK, "v1 (A)": OK}


def test_the_json_and_the_tables() -> None:
    found = diagnose({"A": [hits(1.0, system="v1"), hits(0.5, system="v2")]})
    data = json.loads(json.dumps(found.to_json()))
    assert data["cases"]["K01"]["v2"]["diagnosis"] == RETRIEVAL_MISSED
    assert data["counts"]["v1"][OK] == 1
    assert data["subjects"]["v2"] == {"system": "v2", "role": "candidate", "layers": ["A"]}

    class Holder:
        diagnosis: ClassVar[Diagnosis | None] = found

    (counts_title, counts), (cases_title, cases) = diagnosis_sections(Holder())  # type: ignore[arg-type]
    assert counts_title.startswith("Diagnosis")
    assert cases_title.startswith("Diagnosis")
    assert counts == (
        ["diagnosis", "v1", "v2"],
        [[OK, "1", "0"], [RETRIEVAL_MISSED, "0", "1"]],
    )
    assert cases[1] == [
        [
            "K01",
            "v2",
            RETRIEVAL_MISSED,
            "recall@5 0.50 (gold evidence not in top 5: datenblatt.pdf p.2)",
        ]
    ]
    Holder.diagnosis = None
    assert diagnosis_sections(Holder()) == []  # type: ignore[arg-type]


# -- on the bundled benchmark -----------------------------------------------------------------


def test_every_report_of_a_session_shows_the_diagnosis(bundled: pytest.Pytester) -> None:
    (bundled.path / "evidence").mkdir()
    shutil.copy(REPO_ROOT / "evidence" / "demo-v2.json", bundled.path / "evidence")
    (bundled.path / "pyproject.toml").write_text(
        '[tool.ragv2]\ncorpus = "corpus"\nevidence = "evidence/demo-v2.json"\n'
    )
    result = bundled.runpytest(
        "--ragv2-layer=A,B,C", "--ragv2-reps=1", "--ragv2-run-id=diag",
        "-k", "B05 or B06 or K01 or W01", "--ragv2-seed=20261130",
    )  # fmt: skip
    assert result.ret in (0, 1)
    summaries = {
        layer: json.loads((bundled.path / "reports" / "diag" / layer / "summary.json").read_text())[
            "diagnosis"
        ]
        for layer in "ABC"
    }
    assert list(summaries["A"]["subjects"]) == ["demo-v1 (A+B)", "demo-v2 (A+B)"]
    assert list(summaries["B"]["subjects"]) == ["demo-v1 (A+B)", "demo-v2 (A+B)", "demo-ref (B)"]
    assert list(summaries["C"]["subjects"]) == ["demo-v1 (C)", "demo-v2 (C)"]
    b = summaries["B"]
    assert b["layers"] == ["A", "B", "C"]
    # every case each subject ran has one diagnosis with its reason; counts add up to them
    for subject, counts in b["counts"].items():
        diagnosed = [case for case, by in b["cases"].items() if subject in by]
        assert sum(counts.values()) == len(diagnosed) > 0
    assert set(b["cases"]["W01"]) == {"demo-v1 (A+B)", "demo-v2 (A+B)", "demo-ref (B)"}
    for by in b["cases"].values():
        for found in by.values():
            assert found["diagnosis"] in DIAGNOSES
            assert found["reason"]
    # the A+B subjects read layer A's recall: their reasons quote it
    assert "layer-A recall@5" in b["cases"]["K01"]["demo-v2 (A+B)"]["reason"]
    assert "frozen evidence's recall@5" in summaries["C"]["cases"]["K01"]["demo-v2 (C)"]["reason"]
    out = result.stdout.str()
    assert out.count("Diagnosis: cases per diagnosis and system") == 3
    markdown = (bundled.path / "reports" / "diag" / "B" / "summary.md").read_text()
    assert "## Diagnosis: cases per diagnosis and system" in markdown
    assert (
        "Diagnosis per case"
        in (bundled.path / "reports" / "diag" / "C" / "report.html").read_text()
    )


def test_a_one_layer_session_diagnoses_from_that_layer(bundled: pytest.Pytester) -> None:
    result = bundled.runpytest(
        "--ragv2-layer=A", "--ragv2-run-id=a", "-k", "K01 or K11", "--ragv2-seed=20261130"
    )
    assert result.ret in (0, 1)
    summary: dict[str, Any] = json.loads(
        (bundled.path / "reports" / "a" / "summary.json").read_text()
    )
    found = summary["diagnosis"]
    assert list(found["subjects"]) == ["demo-v1", "demo-v2"]
    seen = {entry["diagnosis"] for by in found["cases"].values() for entry in by.values()}
    assert seen <= {OK, RETRIEVAL_MISSED, GOLD_SUSPECT, RUNS_FAILED}
    assert "Diagnosis per case" in result.stdout.str()


def test_a_reason_repeated_over_cases_is_one_string() -> None:
    first = diagnose({"A": [hits(1.0, system="v1")]}).entries[0]
    again = diagnose({"A": [hits(1.0, system="v1")]}).entries[0]
    assert first.reason == again.reason
    assert first.reason is again.reason
