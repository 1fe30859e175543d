"""Claim-bound grounding: a value given for a missed claim must be its gold value."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from pytest_ragv2.gold.schema import Claim, ExpectedAnswer
from pytest_ragv2.scoring.claim_values import content_words, contradicted_values
from pytest_ragv2.scoring.claims import score_claims
from pytest_ragv2.scoring.grounding import answer_facts, text_support

AVAILABILITY = Claim(text="99,7 %", number=99.7, unit="%", severity="high")
PRESSURE = Claim(text="max. Betriebsdruck 16 bar", number=16, unit="bar", severity="high")
RUNTIME = Claim(text="runtime 11.5 hours", number=11.5, unit="hours", severity="high")


def contradicted(answer: str, lang: str, claim: Claim, evidence: str) -> list[str]:
    expected = ExpectedAnswer(required_claims=[claim])
    claims = score_claims(expected, answer, lang)
    spans = [m.span for m in claims.required_matched if m.span is not None]
    facts = answer_facts(answer, lang, text_support(evidence), gold_spans=spans)
    found = contradicted_values(answer, facts, expected, claims.required_missed, spans)
    return [fact.text for fact, _ in found]


def test_content_words_ignore_units_stop_words_and_accents() -> None:
    assert content_words("réclamé sous 30 jours") == frozenset({"recla"})
    assert content_words("99,7 %") == frozenset()
    assert content_words("max. Betriebsdruck 16 bar") == frozenset({"betri"})


def test_a_value_held_in_another_role_is_bound_in_three_languages() -> None:
    assert contradicted(
        "La disponibilité garantie est de 99,5 %.", "fr", AVAILABILITY, "Starter : 99,5 %"
    ) == ["99,5 %"]
    assert contradicted(
        "Der maximale Betriebsdruck beträgt 10 bar.", "de", PRESSURE, "TVK 110-10: 10 bar"
    ) == ["10 bar"]
    assert contradicted(
        "The X2's runtime is 9.5 hours.", "en", RUNTIME, "X3 runtime: 9.5 hours"
    ) == ["9.5 hours"]


def test_context_numbers_are_not_bound() -> None:
    # another sentence without the claim's words
    assert (
        contradicted(
            "Le TVK 110 pèse 10 kg. Le nombre d'étages est 2 ; pression 10 bar de service.",
            "fr",
            PRESSURE,
            "10 bar",
        )
        == []
    )
    # more values of the kind than claims missed: a quoted table
    assert (
        contradicted(
            "Betriebsdruck: 8 bar, 10 bar und 13 bar je nach Variante.",
            "de",
            PRESSURE,
            "8 10 13 bar",
        )
        == []
    )
    # the gold value itself, in another unit
    assert contradicted("The runtime is 690 minutes.", "en", RUNTIME, "") == []


@given(st.integers(min_value=1, max_value=400).filter(lambda value: value != 16))
def test_any_other_pressure_for_the_claim_is_contradicted(value: int) -> None:
    answer = f"Der maximale Betriebsdruck beträgt {value} bar."
    assert contradicted(answer, "de", PRESSURE, f"{value} bar") == [f"{value} bar"]
