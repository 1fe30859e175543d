"""Kinds of wording met in validation11 (issue 24), each written here in three languages
apart from it:

- a range of months that is exactly a quarter or a half-year is that period ("April-June
  2027" is Q2 2027), not its last month;
- a single capital letter after a spaced part number is its last group ("TS 7502 L"), not
  litres;
- "gut", "a good", "just over", "un peu plus de" before a number give it as approximate;
- a source that contains "no confirmed figure" refuses (a synthetic label with a source is
  what the sources hold), "nothing is on record", a correlative negation reaches its verb
  from its second member ("weder … noch … finden sich"), "impossible d'en tirer", and a
  document that "ties" one thing to another says what the sources hold;
- interval words ("alle", "every", "tous les") name no subject of a claim.
"""

from __future__ import annotations

import pytest

from pytest_ragv2.scoring.phrases import DEFAULT_REFUSAL_PHRASES
from pytest_ragv2.scoring.refusal import read_refusal
from pytest_ragv2.scoring.values import read_values
from tests.scoring.test_answer_scoring import item, kinds
from tests.scoring.test_answer_verdicts import gold, scored


def _keys(text: str, lang: str) -> list[str]:
    return [value.key for value in read_values(text, lang)]


@pytest.mark.parametrize(
    ("lang", "text", "key"),
    [
        ("en", "Pilot units: April-June 2027.", "date:quarter:2027-Q2"),
        ("fr", "Les unités pilotes arrivent d'avril à juin 2027.", "date:quarter:2027-Q2"),
        ("de", "Pilotgeräte kommen von Januar bis Juni 2026.", "date:half:2026-H1"),
        ("en", "From Jan. to Mar. 2026.", "date:quarter:2026-Q1"),
    ],
)
def test_a_range_of_months_that_is_a_period(lang: str, text: str, key: str) -> None:
    assert _keys(text, lang) == [key]


def test_a_range_of_months_that_is_no_period_keeps_its_month() -> None:
    assert _keys("March–May 2026", "en") == ["date:month:2026-05"]


@pytest.mark.parametrize(
    ("lang", "text"),
    [
        ("de", "Früher fällig ist der Ansaugfilter TS 7502 L."),
        ("fr", "Le filtre d'aspiration TS 7502 L est à changer plus tôt."),
        ("en", "The intake filter TS 7502 L is due earlier."),
    ],
)
def test_a_spaced_part_number_ending_in_a_capital(lang: str, text: str) -> None:
    assert _keys(text, lang) == ["identifier:TS-7502-L"]


def test_litres_stay_litres_without_a_capital_word_before() -> None:
    assert _keys("ein Tank mit 20 L Öl", "de") == ["quantity:l:20"]


COSTS = item(
    "resultats-financiers-2025",
    "xlsx",
    "Marketing et ventes T4 : 240 k€ | Nouveaux clients T4 : 33",
)


@pytest.mark.parametrize(
    ("lang", "answer"),
    [
        ("de", "240 k€ geteilt durch 33 Neukunden ergibt gut 7 270 € pro Neukunde [1]."),
        ("en", "240 k€ over 33 new customers is just over €7,270 per customer [1]."),
        ("fr", "240 k€ pour 33 nouveaux clients : un peu plus de 7 270 € par client [1]."),
    ],
)
def test_a_figure_given_as_approximate_is_no_veto(lang: str, answer: str) -> None:
    case = gold(
        "APPROX",
        "Coût d'acquisition par nouveau client au T4 ?",
        lang,
        required=[
            {"text": "240 k€ de marketing", "kind": "money", "value": "240 k€", "severity": "high"},
            {"text": "33 nouveaux clients", "kind": "count", "value": "33", "severity": "high"},
        ],
    )
    assert "unsupported_high_severity_number" not in kinds(scored(case, lang, answer, COSTS))


@pytest.mark.parametrize(
    ("lang", "answer"),
    [
        ("en", "The documents contain no confirmed figure for that."),
        ("en", "No deadline is on record."),
        (
            "de",
            "Weder der Name der Stelle noch das Datum des Audits finden sich in den Unterlagen.",
        ),
        ("en", "Neither the name of the body nor the audit date is mentioned in the documents."),
        ("fr", "Ni le nom de l'organisme ni la date de l'audit ne figurent dans les documents."),
        ("fr", "Comme le point de départ manque, impossible d'en tirer une année."),
    ],
)
def test_refusals_in_these_words(lang: str, answer: str) -> None:
    assert read_refusal(answer, lang, DEFAULT_REFUSAL_PHRASES).verdict == "refuses"


def test_a_synthetic_label_without_a_source_is_no_refusal() -> None:
    reading = read_refusal(
        "Synthetische Demodaten, keine bestätigten Projektdaten.", "de", DEFAULT_REFUSAL_PHRASES
    )
    assert reading.verdict != "refuses"


@pytest.mark.parametrize(
    ("lang", "answer"),
    [
        ("en", "No deadline is on record; the notes tie the decision to the supplier quotes."),
        ("fr", "Aucune date n'est mentionnée ; les notes lient la décision aux devis."),
        ("de", "Ein Datum wird nicht genannt; die Notizen knüpfen die Entscheidung an Angebote."),
    ],
)
def test_what_a_document_ties_is_what_the_sources_hold(lang: str, answer: str) -> None:
    reading = read_refusal(answer, lang, DEFAULT_REFUSAL_PHRASES)
    assert reading.verdict == "refuses", reading


KIT = item(
    "ersatzteilliste-2025",
    "xlsx",
    "WS-75-4 | Wartungssatz TVS 75 | 4 000 Bh || TS-7502-L | Ansaugfilter | 2 000 Bh",
)


def test_interval_words_name_no_subject() -> None:
    case = gold(
        "EVERY",
        "Wie oft wird der Satz WS-75-4 fällig, und welches Teil früher?",
        "de",
        required=[
            {
                "text": "Wartungsintervall des WS-75-4: 4 000 Bh",
                "kind": "quantity",
                "value": "4 000 Bh",
                "severity": "high",
            },
            {
                "text": "Ansaugfilter TS-7502-L schon alle 2 000 Bh",
                "kind": "quantity",
                "value": "2 000 Bh",
                "severity": "high",
            },
        ],
    )
    answer = (
        "Der Satz WS 75 4 ist für die Wartung alle 4 000 Betriebsstunden gedacht [1]. Früher "
        "fällig ist der Ansaugfilter TS 7502 L: alle 2 000 Betriebsstunden [1]."
    )
    score = scored(case, "de", answer, KIT)
    assert kinds(score) == []
    assert score.verdict == "PASS", score.rubric
