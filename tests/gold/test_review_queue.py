"""Runs the answer scorer could not decide: held out of every figure, the verdict REVIEW
until a reviewer rules on them in gold/adjudications.yaml, then decided as ruled."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import pytest

from pytest_ragv2.config.settings import Settings
from pytest_ragv2.gold.adjudication import load_adjudications
from pytest_ragv2.report.summary import build_summary, render_summary_markdown
from tests.deciding.json_records import decide
from tests.deciding.test_gates_chat import FABRICATED, ROLES, record

UNCLEAR = "neither refuses nor answers: 'Je vous invite à contacter le support.'"


def waiting(case: str, system: str, **kwargs: Any) -> dict[str, Any]:
    """A run the scorer left to a reviewer (it would have vetoed it on a guess)."""
    data = record(case, system, **kwargs)
    data["review"] = [f"turn 1: {UNCLEAR}"]
    data["met"] = False
    return data


def decided(records: list[dict[str, Any]], adjudications: Any = None) -> Any:
    return decide(
        records,
        layer="B",
        settings=Settings(),
        roles=ROLES,
        expected_runs=len(records),
        adjudications=adjudications,
    )


def gate(decision: Any, name: str) -> Any:
    return next(found for found in decision.gates if found.name == name)


def summary_of(decision: Any) -> Any:
    return build_summary(
        run_id="r",
        seed=1,
        layer="B",
        results=decision.results,
        gates=decision.gates,
        passed=decision.passed,
        exit_status=0 if decision.passed else 1,
        interrupted=False,
        descriptors={},
        raw_runs_dir=Path("raw-runs/r"),
    )


RECORDS = [
    *(record(f"C{n}", system) for n in range(1, 5) for system in ("v1", "v2")),
    waiting("C5", "v2", vetoes=[FABRICATED]),
    record("C5", "v1"),
]


def test_a_run_waiting_for_a_ruling_holds_the_verdict_at_review() -> None:
    decision = decided(RECORDS)
    review = gate(decision, "review_settled")
    assert review.decision == "fail"
    assert review.value == 1
    assert review.details == [f"C5[v2-en-r1]: turn 1: {UNCLEAR}"]
    # the veto rested on the reading the scorer doubted: it decides nothing yet
    assert gate(decision, "fabricated_identifier").decision == "pass"
    # and the run is left out of every figure, counted
    assert decision.results.systems["v2"].skipped == 1
    assert decision.results.systems["v2"].runs == 4
    assert not decision.passed
    summary = summary_of(decision)
    assert summary.verdict == "review"
    assert summary.to_json()["review_queue"] == [
        {
            "run": "C5[v2-en-r1]",
            "case": "C5",
            "system": "v2",
            "lang": "en",
            "rep": 1,
            "role": "candidate",
            "reasons": [f"turn 1: {UNCLEAR}"],
        }
    ]
    markdown = render_summary_markdown(summary, decision.gates)
    assert "**Verdict: REVIEW**" in markdown
    assert "## Review queue (1)" in markdown
    assert "C5\\[v2-en-r1\\]" in markdown or "C5[v2-en-r1]" in markdown


def test_a_failing_gate_beside_a_waiting_run_is_a_fail_not_a_review() -> None:
    records = [*RECORDS, record("C6", "v1"), record("C6", "v2", vetoes=[FABRICATED])]
    decision = decided(records)
    assert gate(decision, "fabricated_identifier").decision == "fail"
    assert summary_of(decision).verdict == "fail"


def test_a_waiting_baseline_run_holds_the_promotion_a_reference_run_does_not() -> None:
    settled = [record(f"C{n}", system) for n in range(1, 6) for system in ("v1", "v2")]
    baseline = [*settled[:-2], waiting("C5", "v1"), record("C5", "v2")]
    assert gate(decided(baseline), "review_settled").decision == "fail"
    reference = waiting("C5", "v1")
    reference["key"]["system"] = "ref"
    reference["role"] = "reference"
    decision = decide(
        [*settled, reference],
        layer="B",
        settings=Settings(),
        roles={**ROLES, "ref": "reference"},
        expected_runs=len(settled) + 1,
    )
    assert gate(decision, "review_settled").decision == "pass"


def _rulings(tmp_path: Path, entry: str) -> Any:
    path = tmp_path / "adjudications.yaml"
    path.write_text(textwrap.dedent(entry), encoding="utf-8")
    adjudications, errors = load_adjudications(path)
    assert errors == []
    return adjudications


def test_a_ruling_settles_the_run_and_the_session_is_decided_as_ruled(tmp_path: Path) -> None:
    met = _rulings(
        tmp_path,
        """\
        - reviewer: Dana Reviewer
          date: 2026-12-01
          case: C5
          system: v2
          lang: en
          rep: 1
          met: true
          override: {veto.fabricated_identifier: false}
          note: the answer sends the user to support; no identifier is invented
        """,
    )
    decision = decided(RECORDS, met)
    assert gate(decision, "review_settled").decision == "pass"
    assert gate(decision, "fabricated_identifier").decision == "pass"
    assert decision.results.systems["v2"].skipped == 0
    assert summary_of(decision).verdict == "pass"

    vetoed = _rulings(
        tmp_path,
        """\
        - reviewer: Dana Reviewer
          date: 2026-12-01
          case: C5
          system: v2
          met: false
          note: the identifier is invented
        """,
    )
    decision = decided(RECORDS, vetoed)
    assert gate(decision, "review_settled").decision == "pass"
    assert gate(decision, "fabricated_identifier").decision == "fail"  # the veto now stands
    assert summary_of(decision).verdict == "fail"


# --------------------------------------------------------------------------- a real session

UNSURE = "Hmm, I'm not sure."


def test_a_session_waits_for_a_ruling_and_rescore_decides_as_ruled(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A hedge where a refusal is due ("Hmm, I'm not sure.") is neither a refusal nor an
    answer: the run waits, the verdict is REVIEW (exit 1), the queue lists it; a ruling in
    gold/adjudications.yaml settles it and `ragv2 rescore` decides PASS."""
    from pytest_ragv2.tools.cli import main
    from tests.conftest import ALLOWLIST, SYSTEMS_MODULE
    from tests.layers.test_layer_b import CHAT_CASES, CHATBOT, chat_pyproject

    unsure = CHATBOT.replace(
        "\n\ndef emit",
        f"\nif mode == 'unsure' and 'japan' in low:\n    answer = {UNSURE!r}\n\n\ndef emit",
    )
    assert unsure != CHATBOT
    pytester.makepyfile(ragsystems=SYSTEMS_MODULE)
    pytester.mkdir("cases")
    pytester.mkdir("gold")
    (pytester.path / "chatbot.py").write_text(unsure)
    (pytester.path / "cases" / "development.yaml").write_text(CHAT_CASES)
    (pytester.path / "gold" / "allowlist.yaml").write_text(ALLOWLIST)
    (pytester.path / "pyproject.toml").write_text(
        chat_pyproject(baseline="good", candidate="unsure")
    )
    result = pytester.runpytest("--ragv2-layer=B", "--ragv2-run-id=rev", "-k", "C03 or C01")
    out = result.stdout.str()
    assert result.ret == pytest.ExitCode.TESTS_FAILED, out
    assert "verdict: REVIEW — 1 run(s) need a ruling" in out
    assert "review queue: 1 run(s) the scorer could not decide" in out
    summary = json.loads((pytester.path / "reports" / "rev" / "summary.json").read_text())
    assert summary["verdict"] == "review"
    assert [run["run"] for run in summary["review_queue"]] == ["C03[v2-en-r1]"]
    assert summary["review_queue"][0]["answer"] == UNSURE
    page = (pytester.path / "reports" / "rev" / "report.html").read_text(encoding="utf-8")
    assert "<section id='review'><h2>Review queue (1)</h2>" in page

    (pytester.path / "gold" / "adjudications.yaml").write_text(
        textwrap.dedent(
            """\
            - reviewer: Dana Reviewer
              date: 2026-12-01
              case: C03
              system: v2
              lang: en
              rep: 1
              met: true
              note: the assistant does not claim any number of customers; an honest non-answer
            """
        ),
        encoding="utf-8",
    )
    monkeypatch.chdir(pytester.path)
    assert main(["rescore", "raw-runs/rev", "--output", "reports/rev-ruled"]) == 0
    ruled = json.loads((pytester.path / "reports" / "rev-ruled" / "summary.json").read_text())
    assert ruled["verdict"] == "pass"
    assert ruled["review_queue"] == []
