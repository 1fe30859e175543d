"""Values an answer derives or shortens, and values it says it cannot give (issue 24, from
kinds of wording met in validation11, written here in three languages apart from it):

- a power from an energy and a time of the paragraph, or an energy from a power and a
  time, is derived ("2,6 kWh ... 11,5 Stunden ... ≈ 0,23 kW");
- whole days said without their kind are backed by as many working days ("vos huit jours"
  for "huit jours ouvrés");
- a number or date inside a refusing clause of an answer that refuses is not asserted
  ("impossible d'en tirer une année"); an identifier there is.
"""

from __future__ import annotations

import pytest

from pytest_ragv2.scoring.grounding import answer_facts, text_support
from tests.scoring.test_answer_scoring import item, kinds
from tests.scoring.test_answer_verdicts import gold, scored


def _unsupported(answer: str, lang: str, source: str) -> list[str]:
    return [f.text for f in answer_facts(answer, lang, text_support(source)) if not f.supported]


@pytest.mark.parametrize(
    ("lang", "answer"),
    [
        (
            "de",
            "Der Akku hat 2,6 kWh, die Laufzeit beträgt 11,5 Stunden. Geteilt ergibt das "
            "ungefähr 0,23 kW.",
        ),
        ("en", "The pack holds 2.6 kWh and runs 11.5 hours, so it draws about 226 W on average."),
        ("fr", "La batterie de 2,6 kWh tient 11,5 heures. En moyenne : environ 0,226 kW."),
    ],
)
def test_a_power_from_an_energy_and_a_time(lang: str, answer: str) -> None:
    source = "Batterie 2,6 kWh. Autonomie 11,5 h par charge."
    assert _unsupported(answer, lang, source) == []


def test_an_energy_from_a_power_and_a_time() -> None:
    assert _unsupported("1,5 kW for 2 hours: that is 3 kWh.", "en", "Charger 1.5 kW, 2 h.") == []


def test_a_wrong_power_stays_unsupported() -> None:
    answer = "The pack holds 2.6 kWh and runs 11.5 hours, so it draws about 400 W."
    assert _unsupported(answer, "en", "Battery 2.6 kWh. Runtime 11.5 h.") == ["400 W"]


@pytest.mark.parametrize(
    ("lang", "answer", "source"),
    [
        ("fr", "Vos huit jours en Espagne comptent.", "J'ai travaillé huit jours ouvrés."),
        ("de", "Ihre 8 Tage in Spanien zählen.", "Ich habe 8 Arbeitstage gearbeitet."),
        ("en", "Your 8 days in Spain count.", "I have worked 8 working days."),
    ],
)
def test_days_said_without_their_kind(lang: str, answer: str, source: str) -> None:
    assert _unsupported(answer, lang, source) == []


SPEC = item(
    "nimbus-x2-product-specification",
    "pdf",
    "Spare parts remain available for at least eight years after the end of production.",
)


@pytest.mark.parametrize(
    ("lang", "answer"),
    [
        (
            "fr",
            "Aucun calendrier d'arrêt du X2 dans ce qu'on m'a transmis ; comme le point de "
            "départ manque, impossible d'en tirer une année.",
        ),
        (
            "en",
            "The documents give no end-of-production date for the X2, so I can't work out a "
            "year from the eight-year rule.",
        ),
    ],
)
def test_what_a_refusal_says_it_cannot_give_is_not_asserted(lang: str, answer: str) -> None:
    case = gold("CANNOT", "Until when will X2 spare parts be available?", lang)
    score = scored(case, lang, answer, SPEC)
    assert kinds(score) == []
    assert score.verdict == "PASS", score.rubric


def test_an_identifier_in_a_refusal_is_asserted() -> None:
    case = gold("NAMED", "Wie lange gilt die ATEX-Bescheinigung?", "de")
    sheet = item("zertifikat-atex-tvk-350", "docx", "EPZ 24 ATEX 3108 X, ausgestellt 18.09.2024")
    score = scored(
        case,
        "de",
        "Eine Gültigkeit wird in der Bescheinigung EPZ 24 ATEX 3018 X nicht genannt.",
        sheet,
    )
    assert "fabricated_identifier" in kinds(score)


@pytest.mark.parametrize(
    ("lang", "answer"),
    [
        ("en", "The list price is €290 a month; without the commitment it is €3,480 per year."),
        ("fr", "Le prix catalogue est de 290 € par mois, soit 3 480 € par an sans engagement."),
        ("de", "Der Listenpreis beträgt 290 € pro Monat, ohne Bindung also 3.480 € im Jahr."),
    ],
)
def test_a_yearly_figure_from_a_monthly_one(lang: str, answer: str) -> None:
    assert _unsupported(answer, lang, "Business : 290 € HT par mois.") == []


def test_a_yearly_figure_that_is_no_twelvefold_stays_unsupported() -> None:
    answer = "The list price is €290 a month, so €3,500 per year."
    assert _unsupported(answer, "en", "Business: €290 per month.") == ["€3,500"]


@pytest.mark.parametrize(
    ("lang", "answer"),
    [
        ("en", "Connectivity: 12 × 35 € = 420 € a year."),
        ("fr", "Connexion : 12 × 35 € = 420 € par an."),
        ("de", "Konnektivität: 12 × 35 € = 420 € pro Jahr."),
    ],
)
def test_a_calendar_factor_needs_no_source(lang: str, answer: str) -> None:
    source = "Connectivity allowance 35 € per month."
    assert _unsupported(answer, lang, source) == []


@pytest.mark.parametrize(
    ("lang", "prompt", "answer"),
    [
        (
            "de",
            "Nimbus kündigt die Wartung 3 Arbeitstage vorher an. Ist das zulässig?",
            "Nein: verlangt sind 5 Arbeitstage Vorlauf, die Ankündigung kommt zwei Arbeitstage "
            "zu spät.",
        ),
        (
            "en",
            "Nimbus announced the maintenance 3 working days ahead. Is that allowed?",
            "No: 5 working days' notice are required, so the notice is two working days short.",
        ),
        (
            "fr",
            "Nimbus annonce la maintenance 3 jours ouvrés avant. Est-ce admis ?",
            "Non : il faut 5 jours ouvrés de préavis, il en manque donc deux jours ouvrés.",
        ),
    ],
)
def test_a_difference_with_the_questions_figure(lang: str, prompt: str, answer: str) -> None:
    support = text_support(prompt + "\n" + "Préavis de 5 jours ouvrés / 5 working days.")
    facts = answer_facts(answer, lang, support, prompt=prompt)
    assert [f.text for f in facts if not f.supported] == []


def test_a_figure_no_difference_makes_stays_unsupported() -> None:
    prompt = "Nimbus announced the maintenance 3 working days ahead. Is that allowed?"
    answer = "No: 5 working days' notice are required, so the notice is four working days short."
    facts = answer_facts(answer, "en", text_support(prompt + " 5 working days."), prompt=prompt)
    assert [f.text for f in facts if not f.supported] == ["four working days"]


@pytest.mark.parametrize(
    ("lang", "answer"),
    [
        ("en", "- Q1: hosting 96 k€\n- Q4: hosting 115 k€\n\nSo hosting rose by 19 k€."),
        ("fr", "- T1 : hébergement 96 k€\n- T4 : hébergement 115 k€\n\nSoit une hausse de 19 k€."),
        ("de", "- Q1: Hosting 96 k€\n- Q4: Hosting 115 k€\n\nDas Hosting stieg also um 19 k€."),
    ],
)
def test_a_difference_of_the_paragraph_before(lang: str, answer: str) -> None:
    assert _unsupported(answer, lang, "Hébergement cloud : T1 96 k€, T4 115 k€.") == []


def test_a_difference_two_paragraphs_away_stays_unsupported() -> None:
    answer = "- Q1: hosting 96 k€\n\n- Q4: revenue 1 689 k€\n\nSo hosting rose by 19 k€."
    assert _unsupported(answer, "en", "Hosting Q1 96 k€. Revenue Q4 1 689 k€.") == ["19 k€"]
