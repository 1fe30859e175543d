"""Claim matching: normalisation, numbers in French/German/English writing, claims, scores."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from pytest_ragv2.gold.schema import Claim, ExpectedAnswer
from pytest_ragv2.scoring.claims import claim_found, score_claims
from pytest_ragv2.scoring.normalisation import normalise_answer_text
from pytest_ragv2.scoring.numbers import normalise_unit, parse_numbers

GOLD_ANSWERS = Path(__file__).resolve().parents[2] / "gold" / "answers.yaml"

NBSP, NNBSP, THIN = "\u00a0", "\u202f", "\u2009"


def values(text: str, lang: str | None) -> list[tuple[float, str | None]]:
    return [(found.value, found.unit) for found in parse_numbers(text, lang)]


def claim(**fields: Any) -> Claim:
    return Claim.model_validate(fields)


def gold(case_id: str) -> ExpectedAnswer:
    answers = yaml.safe_load(GOLD_ANSWERS.read_text(encoding="utf-8"))
    return ExpectedAnswer.model_validate(answers[case_id])


# --------------------------------------------------------------------------- normalisation


def test_normalise_folds_case_spaces_and_typography() -> None:
    text = f"  L’offre{NNBSP}«{NBSP}Business{NBSP}» – 290{THIN}€\n\tHT  "
    assert normalise_answer_text(text) == 'l\'offre " business " - 290 € ht'


def test_normalise_nfkc_and_invisible_characters() -> None:
    assert normalise_answer_text("0,92\u00a0m³/min bei 20\u2103") == "0,92 m3/min bei 20°c"
    assert normalise_answer_text("Stra\u00dfe Fe\u0301vrier") == "strasse février"
    assert normalise_answer_text("Be\u00adtriebs\u200bstunden") == "betriebsstunden"


# --------------------------------------------------------------------------- numbers


@pytest.mark.parametrize(
    ("text", "lang"),
    [
        ("1 689 k€", "fr"),
        (f"1{NBSP}689{NBSP}k€", "fr"),
        (f"1{NNBSP}689{NNBSP}k€", "fr"),
        (f"1{THIN}689 k€", None),
        ("1689 k€", "fr"),
        ("1689k€", None),
        ("1.689 k€", "de"),
        ("1.689 TEUR", "de"),
        ("1,689 k€", "en"),
        ("1,689 kEUR", "en"),
    ],
)
def test_1689_keuro_in_every_writing(text: str, lang: str | None) -> None:
    assert values(text, lang) == [(1689.0, "k€")]


@pytest.mark.parametrize(
    ("text", "lang"),
    [
        ("99,7 %", "fr"),
        (f"99,7{NNBSP}%", "fr"),
        ("99.7%", "en"),
        ("99.7 percent", "en"),
        ("99,7 Prozent", "de"),
        ("99,7 pour cent", "fr"),
        ("99,7 %", None),
        ("99,7 %", "en"),
    ],
)
def test_percent_in_every_writing(text: str, lang: str | None) -> None:
    assert values(text, lang) == [(99.7, "%")]


def test_german_dot_is_thousands_unless_one_or_two_digits_follow() -> None:
    assert values("1.689", "de") == [(1689.0, None)]
    assert values("1.5 bar", "de") == [(1.5, "bar")]
    assert values("12.1 m³/min", "de") == [(12.1, "m³/min")]
    assert values("1.234.567,89 €", "de") == [(1234567.89, "€")]
    assert values("0.689", "de") == [(0.689, None)]


def test_english_comma_is_thousands_unless_it_cannot_be() -> None:
    assert values("1,689", "en") == [(1689.0, None)]
    assert values("1,689.5 hours", "en") == [(1689.5, "h")]
    assert values("1,5 bar", "en") == [(1.5, "bar")]
    assert values("1.689", "en") == [(1.689, None)]


def test_french_reads_single_separator_as_decimal() -> None:
    assert values("1,689 M€", "fr") == [(1.689, "M€")]
    assert values("1 689,5 heures", "fr") == [(1689.5, "h")]
    assert values("5 763 k€", "fr") == [(5763.0, "k€")]
    assert values("1 689 000 €", "fr") == [(1689000.0, "€")]


def test_unknown_language_follows_the_text_convention_then_thousands() -> None:
    assert values("1,689 M€ et 99,7 %", None) == [(1.689, "M€"), (99.7, "%")]
    assert values("1,689 and 99.7", None) == [(1689.0, None), (99.7, None)]
    assert values("1.689 und 1.234.567", None) == [(1689.0, None), (1234567.0, None)]
    assert values("1.689", None) == [(1689.0, None)]
    assert values("1,689", "es") == [(1689.0, None)]
    assert parse_numbers("1,689", None)[0].ambiguous
    assert not parse_numbers("1,68", None)[0].ambiguous


def test_identifiers_dates_and_phone_numbers() -> None:
    assert values("TW-P-24-003 und SK-22OA, KV-4501-8 im T4", "de") == []
    assert values("Stand 12.03.2025", "de") == [(12.0, None), (3.0, None), (2025.0, None)]
    assert values("En 2025 100 clients", "fr") == [(2025.0, None), (100.0, None)]
    # a phone number, an e-mail address or a URL is one identifier, never numbers
    assert values("+33 2 85 52 41 90", "fr") == []
    assert values("Tel. 0711 12345-0, 48 h", "de") == [(48.0, "h")]
    assert values("Mail an support24@nimbus.fr oder https://nimbus.fr/v2/faq", "de") == []
    assert values("3x33 %", "fr") == [(3.0, None)]


def test_signs_ranges_and_currency_before() -> None:
    assert values("−5 °C", "de") == [(-5.0, "°C")]
    assert values("10–16 bar", "de") == [(10.0, None), (16.0, "bar")]
    assert values("€1,689.50 or EUR 20", "en") == [(1689.5, "€"), (20.0, "€")]


def test_units_are_normalised() -> None:
    text = "3 mois, 4 Stunden, 15 min, 0,92 m³/min, 4 000 Betriebsstunden, 20 bar(g), 74 dB(A)"
    assert [unit for _, unit in values(text, None)] == [
        "months",
        "h",
        "min",
        "m³/min",
        "Bh",
        "bar(g)",
        "dB(A)",
    ]
    assert normalise_unit("EUR") == "€"
    assert normalise_unit("heures") == normalise_unit("hours") == "h"
    assert normalise_unit("jours") == "days"
    assert normalise_unit("Nm³/h") == "Nm³/h"
    assert normalise_unit("clients") == "clients"
    # a unit spelling must not run on into the next word
    assert values("16 bar garantiert", "de") == [(16.0, "bar")]
    assert values("3 sur 4", "fr") == [(3.0, None), (4.0, None)]


def test_spans_point_into_the_original_text() -> None:
    text = f"Le CA du T4 est de 1{NNBSP}689{NBSP}k€ (soit 1,689{NBSP}M€)."
    found = parse_numbers(text, "fr")
    assert [text[start:end] for start, end in (f.span for f in found)] == [
        f"1{NNBSP}689{NBSP}k€",
        f"1,689{NBSP}M€",
    ]
    assert found[0].text == f"1{NNBSP}689{NBSP}k€"


# --------------------------------------------------------------------------- claims


def test_number_claim_needs_the_same_number_and_unit() -> None:
    sixteen = claim(text="max. Betriebsdruck 16 bar", number=16, unit="bar")
    assert claim_found(sixteen, "Der Betriebsdruck beträgt maximal 16 bar.", "de").how == "number"
    assert claim_found(sixteen, "max. 16bar", "de").matched
    assert not claim_found(sixteen, "Der Druck beträgt 160 bar.", "de").matched
    assert not claim_found(sixteen, "Der Druck beträgt 1,6 bar.", "de").matched
    assert not claim_found(sixteen, "The pressure is 1.6 bar.", "en").matched
    assert not claim_found(sixteen, "Die Temperatur beträgt 16 °C.", "de").matched


def test_text_claim_that_is_a_number_matches_every_writing() -> None:
    sixteen = claim(text="16 bar")
    assert not claim_found(sixteen, "Der Druck beträgt 160 bar.", "de").matched
    assert not claim_found(sixteen, "Der Druck beträgt 1,6 bar.", "de").matched
    uptime = claim(text="99,7 %")
    for answer, lang in [
        ("La disponibilité est de 99,7 %.", "fr"),
        ("Availability is 99.7%.", "en"),
        ("Die Verfügbarkeit beträgt 99,7 Prozent.", "de"),
    ]:
        match = claim_found(uptime, answer, lang)
        assert match.matched, answer
        assert match.span is not None
        assert answer[match.span[0] : match.span[1]] == match.found
    assert not claim_found(uptime, "La disponibilité est de 99,5 %.", "fr").matched


def test_money_scales_between_euro_units() -> None:
    revenue = claim(text="1 689 k€", number=1689, unit="k€")
    assert claim_found(revenue, "CA : 1 689 000 €", "fr").matched
    assert claim_found(revenue, "CA : 1,689 M€", "fr").matched
    assert claim_found(revenue, "Revenue: €1,689,000", "en").matched
    assert not claim_found(revenue, "CA : 1 689 €", "fr").matched
    assert not claim_found(revenue, "CA : 1 689 %", "fr").matched


def test_default_rounding_and_explicit_tolerance() -> None:
    uptime = claim(text="99,7 %", number=99.7, unit="%")
    assert claim_found(uptime, "99,72 %", "fr").matched
    assert not claim_found(uptime, "99,76 %", "fr").matched
    assert not claim_found(uptime, "99,6 %", "fr").matched
    flow = claim(text="0,92 m³/min", number=0.92, unit="m³/min", tolerance=0.05)
    assert claim_found(flow, "Liefermenge 0,95 m³/min", "de").matched
    assert claim_found(flow, "delivers 0.88 m3/min", "en").matched
    assert not claim_found(flow, "Liefermenge 1,1 m³/min", "de").matched
    hours = claim(text="RTO de 4 heures", number=4, unit="heures")
    assert claim_found(hours, "un RTO de 240 minutes", "fr").matched


def test_claim_without_unit_takes_any_unit() -> None:
    clients = claim(text="33 nouveaux clients", any_of=["33"], number=33)
    assert claim_found(clients, "Au T4 33 clients ont signé.", "fr").matched
    assert not claim_found(clients, "Au T4, 1 336 clients.", "fr").matched
    assert not claim_found(clients, "Au T4, 133 clients.", "fr").matched


def test_forbidden_number_found_in_text() -> None:
    expected = ExpectedAnswer(
        forbidden_claims=[claim(text="25 bar", number=25, unit="bar", severity="high")]
    )
    answer = "Der Verdichter ist für max. 25 bar ausgelegt."
    score = score_claims(expected, answer, "de")
    assert len(score.forbidden_found) == 1
    found = score.forbidden_found[0]
    assert found.span == (answer.index("25 bar"), answer.index("25 bar") + len("25 bar"))
    assert found.claim.severity == "high"
    assert score.high_severity_forbidden == score.forbidden_found
    assert not score.exact_answer
    assert score.claim_correctness == 0.0
    assert not score_claims(expected, "max. 250 bar oder 2,5 bar", "de").forbidden_found


def test_pattern_is_case_insensitive_on_normalised_text() -> None:
    japan = claim(text="un nombre de clients au Japon", pattern=r"\d+\s*clients?\b.*\bJapon")
    match = claim_found(japan, f"Nous avons 12{NBSP}Clients au JAPON.", "fr")
    assert (match.matched, match.how, match.found) == (True, "pattern", f"12{NBSP}Clients au JAPON")
    assert not claim_found(japan, "Je ne dispose pas de chiffre pour le Japon.", "fr").matched
    flow = claim(text="1,1 m³/min bei 16 bar", pattern=r"1[,.]1\s*m³/min")
    assert claim_found(flow, "Er liefert 1,1 m³/min.", "de").matched
    quote = claim(text="l’échéance", pattern="avant l’échéance")
    assert claim_found(quote, "90 jours avant l'échéance", "fr").matched


def test_any_of_and_text_are_normalised_substrings_that_respect_numbers() -> None:
    enterprise = claim(text="Enterprise à partir de 1 100 €", any_of=["100 €"])
    assert not claim_found(enterprise, "Enterprise : 1 100 €", "fr").matched
    starter = claim(text="Starter 89 €", any_of=["89 euros"])
    match = claim_found(starter, "Le plan Starter : 89 Euros HT", "fr")
    assert (match.matched, match.how, match.found) == (True, "any_of", "89 Euros")
    assert not claim_found(starter, "Starter : 189 euros", "fr").matched
    synthetic = claim(text="synthetische Demodaten", any_of=["synthetic", "synthetisch"])
    assert claim_found(synthetic, "Das sind SYNTHETISCHE Datensätze.", "de").how == "any_of"
    notice = claim(text="avant l'échéance")
    assert claim_found(notice, f"préavis de 90{NNBSP}jours avant l’échéance", "fr").how == "text"


# --------------------------------------------------------------------------- gold cases


B01_RIGHT = (
    "Voici les tarifs de Nimbus Analytics : le plan Starter est à 89 € HT par mois, le plan "
    f"Business à 290{NNBSP}€ HT par mois, et le plan Enterprise est sur devis, à partir de "
    f"1{NNBSP}100{NBSP}€ HT par mois."
)
B01_WRONG = (
    "Les tarifs sont : Starter 189 € par mois, Business 290 € par mois et Enterprise à partir "
    "de 100 € par mois."
)
B04_RIGHT = (
    f"Au T4 2025, le chiffre d'affaires total s'élève à 1{NBSP}689{NBSP}k€ (soit "
    "1,689 M€), avec 33 nouveaux clients signés sur le trimestre."
)
B04_WRONG = "Au T4 2025, le chiffre d'affaires est de 1 312 k€, avec 21 nouveaux clients."


def test_gold_b01_right_and_wrong_answers() -> None:
    expected = gold("B01")
    right = score_claims(expected, B01_RIGHT, "fr")
    assert right.exact_answer
    assert len(right.required_matched) == 3
    assert [m.claim.text for m in right.optional_matched] == ["sur devis"]
    assert right.claim_correctness == 1.0
    wrong = score_claims(expected, B01_WRONG, "fr")
    assert not wrong.exact_answer
    assert [c.text for c in wrong.required_missed] == [
        "Starter 89 €",
        "Enterprise à partir de 1 100 €",
    ]
    assert wrong.claim_correctness == pytest.approx(1 / 3)
    assert wrong.completeness == pytest.approx(1 / 3)


def test_gold_b04_right_and_wrong_answers() -> None:
    expected = gold("B04")
    right = score_claims(expected, B04_RIGHT, "fr")
    assert right.exact_answer
    assert [m.found for m in right.required_matched] == [f"1{NBSP}689{NBSP}k€", "33"]
    wrong = score_claims(expected, B04_WRONG, "fr")
    assert not wrong.exact_answer
    assert len(wrong.required_missed) == 2
    assert [m.found for m in wrong.forbidden_found] == ["1 312 k€"]
    assert wrong.claim_correctness == 0.0
    # the same wrong figure written the German or English way is still the forbidden one
    assert score_claims(expected, "Umsatz Q4: 1.312 T€", "de").forbidden_found
    assert score_claims(expected, "Q4 revenue: 1,312 k€", "en").forbidden_found


def test_scores_without_claims_are_not_applicable() -> None:
    score = score_claims(ExpectedAnswer(), "Bonjour !", "fr")
    assert score.exact_answer
    assert score.claim_correctness is None
    assert score.completeness is None
