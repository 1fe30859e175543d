"""Language identification of short answers, format checks, refusal and label phrases."""

from __future__ import annotations

import pytest

from pytest_ragv2.scoring.answer_format import format_ok
from pytest_ragv2.scoring.answer_text import find_phrase, sentence_spans
from pytest_ragv2.scoring.language import identify_language, language_text
from pytest_ragv2.scoring.phrases import DEFAULT_REFUSAL_PHRASES, DEFAULT_SYNTHETIC_LABELS

LANGS = ("fr", "de", "en")


@pytest.mark.parametrize(
    ("text", "lang"),
    [
        ("Le préavis est de 90 jours avant l'échéance.", "fr"),
        ("Cette information ne figure pas dans les documents.", "fr"),
        ("RPO de 15 minutes, RTO de 4 heures, tests en mars et octobre.", "fr"),
        ("Der TVS 75 ist nicht für Wasserstoff zugelassen.", "de"),
        ("Ölwechsel alle 4 000 Betriebsstunden, Füllmenge 38 l.", "de"),
        ("Ich habe diese Information in den Unterlagen nicht gefunden.", "de"),
        ("The notice period is 90 days.", "en"),
        ("Part KV-4501-8 is the discharge-side valve plate of the TVK 110.", "en"),
        ("I could not find this information in the provided documents.", "en"),
        # quoted source text in another language does not decide
        (
            "Laut Spezifikation („Runtime per charge | 11.5 hours“) beträgt die Laufzeit"
            " 11,5 Stunden [1].",
            "de",
        ),
        ("Per betriebsanleitung-tvs-75.docx the oil change is every 4,000 h.", "en"),
    ],
)
def test_short_answers_are_identified(text: str, lang: str) -> None:
    guess = identify_language(text, LANGS, expected=lang)
    assert guess.language == lang, guess.reason


def test_too_little_text_is_undetermined() -> None:
    for text in ("Ja.", "90 Tage.", "Le TVM 30-H2.", "| 48 h | 8 h |"):
        guess = identify_language(text, LANGS, expected="fr")
        assert guess.language is None
        assert guess.reason.startswith("too short")


def test_an_answer_in_the_wrong_language_is_identified_as_such() -> None:
    guess = identify_language(
        "The availability is guaranteed at 99.7 percent.", LANGS, expected="fr"
    )
    assert guess.language == "en"


def test_language_text_drops_numbers_identifiers_quotes_and_markers() -> None:
    assert (
        language_text("Die SK-22OA „high pressure“ passt [1] (datenblatt.pdf).") == "Die passt ( )."
    )


@pytest.mark.parametrize(
    ("answer", "wanted", "ok"),
    [
        ("| Plan | Délai |\n|---|---|\n| Starter | 48 h |", "table", True),
        ("Starter | 48 h ouvrées\nBusiness | 8 h ouvrées", "table", True),
        ("Starter : 48 h, Business : 8 h.", "table", False),
        ("Au T4, 1 689 k€ et 33 nouveaux clients [1].", "one_sentence", True),
        ("Le CA max. 1 689 k€ est atteint au T4.", "one_sentence", True),
        ("Le CA est de 1 689 k€. Nous avons 33 clients.", "one_sentence", False),
        ("- Starter\n- Business", "list", True),
        ("1. Starter\n2) Business", "list", True),
        ("Starter and Business.", "list", False),
        ("anything", "haiku", None),
    ],
)
def test_requested_formats(answer: str, wanted: str, ok: bool | None) -> None:
    assert format_ok(answer, wanted) is ok


def test_sentences_split_at_ends_and_lines_not_at_abbreviations_or_decimals() -> None:
    text = "Max. 16 bar gilt ab Revision D. Die Liefermenge ist 0.92 m³/min.\nZweite Zeile"
    spans = [text[s:e] for s, e in sentence_spans(text)]
    assert spans == [
        "Max. 16 bar gilt ab Revision D.",
        "Die Liefermenge ist 0.92 m³/min.",
        "Zweite Zeile",
    ]


def test_refusal_phrases_are_accent_insensitive_and_whole_words() -> None:
    fr = DEFAULT_REFUSAL_PHRASES["fr"]
    assert find_phrase("Cette donnée N’EST PAS MENTIONNÉE.", fr) == "n'est pas mentionnee"
    assert find_phrase("Je ne sais pas.", fr) == "je ne sais pas"
    de = DEFAULT_REFUSAL_PHRASES["de"]
    assert find_phrase("Das weiß ich nicht.", de) == "weiss ich nicht"
    assert find_phrase("Keine Angabe im Datenblatt.", de) == "keine angabe"
    en = DEFAULT_REFUSAL_PHRASES["en"]
    assert find_phrase("There is no informational value.", en) is None  # not a whole word
    labels = [p for ps in DEFAULT_SYNTHETIC_LABELS.values() for p in ps]
    assert find_phrase("Synthetischer Datensatz", labels, whole_words=False) == "synthetisch"


@pytest.mark.parametrize(
    ("text", "lang"),
    [
        ("La disponibilità garantita del piano Business è del 99,7 %.", "it"),
        ("Il preavviso per la disdetta del contratto è di 90 giorni prima della scadenza.", "it"),
        ("El plazo de preaviso es de 90 días antes del vencimiento del contrato.", "es"),
        ("De opzegtermijn is 90 dagen voor de vervaldatum van het contract.", "nl"),
    ],
)
def test_a_language_outside_the_configured_set_is_named_as_itself(text: str, lang: str) -> None:
    for expected in LANGS:
        guess = identify_language(text, LANGS, expected=expected)
        assert guess.language == lang, guess.reason
        assert "not a configured language" in guess.reason


@pytest.mark.parametrize(
    ("text", "lang"),
    [
        # close neighbours of a configured language (Occitan, Luxembourgish, Pidgin) and
        # answers made mostly of numbers, part numbers and code keep the candidate reading
        ("Starter 89 € HT par mois, Business 290 € HT, Enterprise sur devis.", "fr"),
        ("Nimbus Analytics propose trois plans.", "fr"),
        ("Ölwechsel alle 4 000 Betriebsstunden, Füllmenge 38 l.", "de"),
        ("Ja, im Business-Plan enthalten.", "de"),
        ("Yes, the Business plan includes it.", "en"),
        ("Run `pytest --ragv2-layer=B` and read reports/summary.md for the table.", "en"),
        ("Le kit SK-22OA [1] remplace le KV-4501-8 du TVK 110 (fiche-tvk-110.pdf).", "fr"),
    ],
)
def test_short_technical_answers_keep_their_configured_language(text: str, lang: str) -> None:
    assert identify_language(text, LANGS, expected=lang).language == lang
