"""A number in no source, in a turn whose every required claim is high severity, that no
claim binds and whose unit no high-severity claim has: the scorer cannot tell what it is
given for, so a correct answer is not vetoed on that guess — the run waits for a ruling —
while a run that fails anyway keeps the veto."""

from __future__ import annotations

from pytest_ragv2.scoring.answer_records import AnswerScore
from pytest_ragv2.scoring.answers import score_transcript
from tests.scoring.test_answer_scoring import NO_LANGID, item, kinds, one_turn
from tests.scoring.test_answer_verdicts import gold

POLICY = item(
    "politique-teletravail",
    "md",
    "Le télétravail depuis l'étranger est possible jusqu'à 20 jours ouvrés par année civile. "
    "Chaque séjour doit être approuvé par People & Culture au moins 15 jours ouvrés avant.",
)
CASE = gold(
    "UNBOUND",
    "Combien de jours peut-on travailler depuis l'étranger, et avec quel préavis ?",
    "fr",
    required=[
        {
            "text": "20 jours ouvrés par an",
            "kind": "quantity",
            "value": "20 jours ouvrés",
            "severity": "high",
        },
        {
            "text": "approbation 15 jours ouvrés avant",
            "kind": "quantity",
            "value": "15 jours ouvrés",
            "severity": "high",
        },
    ],
)


def _score(answer: str) -> AnswerScore:
    prompt = CASE.all_prompts()["fr"]
    return score_transcript(
        CASE, "fr", one_turn(prompt, answer, evidence=[POLICY]), options=NO_LANGID
    )


def test_an_unbound_number_in_a_correct_answer_waits_for_a_ruling() -> None:
    score = _score(
        "Jusqu'à 20 jours ouvrés par année civile [1]. Chaque séjour doit être approuvé au "
        "moins 15 jours ouvrés avant [1]. Pensez à un adaptateur pour le 230 V."
    )
    assert "unsupported_high_severity_number" not in kinds(score)
    assert any("a number in no source" in reason for reason in score.review)


def test_a_failing_run_keeps_the_veto_of_an_unbound_number() -> None:
    # failed by a fabricated identifier: the number's veto changes no verdict, and stands
    score = _score(
        "Jusqu'à 20 jours ouvrés par an, et une approbation au moins 15 jours ouvrés avant, "
        "par le formulaire RH-EXT-99 [1]. Pensez à un adaptateur pour le 230 V."
    )
    assert {"fabricated_identifier", "unsupported_high_severity_number"} <= set(kinds(score))
    assert not score.review
