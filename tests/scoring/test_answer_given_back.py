"""The question's own figure given back as the answer, and a tempting value the gold names
in words (issue 24, item 5; from kinds of flaw met in validation10 and validation11, written
here in three languages apart from them): the figure is wrong for the claim whose
computation uses it when the answer states it alone as the result, and a value an untyped
forbidden claim holds is offered in place of the missed claim of its kind."""

from __future__ import annotations

import pytest

from pytest_ragv2.gold.schema import Case
from tests.scoring.test_answer_scoring import item, kinds
from tests.scoring.test_answer_verdicts import gold, scored

POLICY = item(
    "remote-work-policy",
    "docx",
    "Working from abroad is allowed for up to 20 working days per calendar year.",
)
PROMPTS = {
    "en": "I have already worked 8 working days from Spain this year. How many are left?",
    "fr": "J'ai travaillé 8 jours ouvrés depuis l'Espagne cette année. Combien en reste-t-il ?",
    "de": "Ich habe dieses Jahr schon 8 Arbeitstage aus Spanien gearbeitet. Wie viele bleiben?",
}
LEFT = {
    "en": "working days left from abroad (20 − 8)",
    "fr": "jours ouvrés restants depuis l'étranger (20 − 8)",
    "de": "verbleibende Arbeitstage im Ausland (20 − 8)",
}
GIVEN_BACK = {
    "en": "You have 8 working days left from abroad [1].",
    "fr": "Il vous reste 8 jours ouvrés depuis l'étranger [1].",
    "de": "Ihnen bleiben noch 8 Arbeitstage im Ausland [1].",
}
SHOWN = {
    "en": "20 − 8 = 12: you have 12 working days left from abroad [1].",
    "fr": "20 − 8 = 12 : il vous reste 12 jours ouvrés depuis l'étranger [1].",
    "de": "20 − 8 = 12: Ihnen bleiben noch 12 Arbeitstage im Ausland [1].",
}
WORKDAYS = {"en": "12 working days", "fr": "12 jours ouvrés", "de": "12 Arbeitstage"}


def _case(lang: str, forbidden: list[dict[str, str]] | None = None) -> Case:
    return gold(
        f"BACK-{lang}",
        PROMPTS[lang],
        lang,
        required=[
            {"text": LEFT[lang], "kind": "quantity", "value": WORKDAYS[lang], "severity": "high"}
        ],
        forbidden=forbidden,
    )


@pytest.mark.parametrize("lang", ["en", "fr", "de"])
def test_the_questions_figure_given_back_is_wrong_for_the_claim(lang: str) -> None:
    score = scored(_case(lang), lang, GIVEN_BACK[lang], POLICY)
    assert "unsupported_high_severity_number" in kinds(score)


@pytest.mark.parametrize("lang", ["en", "fr", "de"])
def test_the_questions_figure_as_a_term_of_the_computation_shown_is_no_fault(lang: str) -> None:
    score = scored(_case(lang), lang, SHOWN[lang], POLICY)
    assert kinds(score) == []
    assert score.verdict == "PASS", score.rubric


@pytest.mark.parametrize("lang", ["en", "fr", "de"])
def test_a_value_an_untyped_forbidden_claim_holds_is_offered_in_place(lang: str) -> None:
    # the gold lists the question's figure as context too: only the forbidden claim, in
    # words, says it is wrong as the result
    case = gold(
        f"OFFER-{lang}",
        PROMPTS[lang],
        lang,
        required=[
            {"text": LEFT[lang], "kind": "quantity", "value": WORKDAYS[lang], "severity": "high"}
        ],
        forbidden=[{"text": "8 left (the question's figure)", "pattern": r"\b8\b"}],
    )
    case.expected_answer.optional_claims.append(  # type: ignore[union-attr]
        case.expected_answer.required_claims[0].model_copy(  # type: ignore[union-attr]
            update={"text": "already worked", "value": WORKDAYS[lang].replace("12", "8")}
        )
    )
    score = scored(case, lang, GIVEN_BACK[lang], POLICY)
    assert "unsupported_high_severity_number" in kinds(score)
