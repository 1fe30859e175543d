"""Values swapped between rows that differ only by the model, part or project they are
about (issue 24, from a kind of flaw met in validation8 to validation10, written here in
three languages apart from it): a claim's subject includes the identifiers its text names
("TVK 110-08: Liefermenge 1,45 m³/min"), so a value given in the row or clause of another
identifier is given for that identifier's claim — wrong for both, and the high-severity
veto — while the same values in their own rows pass."""

from __future__ import annotations

import pytest

from pytest_ragv2.gold.schema import Case
from tests.scoring.test_answer_scoring import item, kinds
from tests.scoring.test_answer_verdicts import gold, scored

SHEET = item(
    "datasheet-tvk-110",
    "pdf",
    "Table 1. TVK 110-08: 8 bar, 1.45 m³/min, 71 dB(A). TVK 110-10: 10 bar, 1.32 m³/min, 72 dB(A).",
)

PROMPTS = {
    "en": "What is the free air delivery of the TVK 110-08 and of the TVK 110-10?",
    "de": "Welche Liefermenge haben die TVK 110-08 und die TVK 110-10?",
    "fr": "Quel est le débit de la TVK 110-08 et de la TVK 110-10 ?",
}
WORDS = {"en": "free air delivery", "de": "Liefermenge", "fr": "débit"}


def _case(lang: str) -> Case:
    return gold(
        f"SWAP-{lang}",
        PROMPTS[lang],
        lang,
        required=[
            {
                "text": f"TVK 110-08: {WORDS[lang]} 1.45 m³/min",
                "kind": "quantity",
                "value": "1.45 m³/min",
                "severity": "high",
            },
            {
                "text": f"TVK 110-10: {WORDS[lang]} 1.32 m³/min",
                "kind": "quantity",
                "value": "1.32 m³/min",
                "severity": "high",
            },
        ],
    )


def _table(lang: str, first: str, second: str) -> str:
    header = {"en": "Variant", "de": "Variante", "fr": "Variante"}[lang]
    return (
        f"| {header} | {WORDS[lang]} |\n|---|---|\n"
        f"| TVK 110-08 | {first} m³/min |\n| TVK 110-10 | {second} m³/min |\n\n[1]"
    )


@pytest.mark.parametrize("lang", ["en", "de", "fr"])
def test_values_swapped_between_two_rows_are_wrong_for_both(lang: str) -> None:
    first, second = ("1.32", "1.45") if lang == "en" else ("1,32", "1,45")
    score = scored(_case(lang), lang, _table(lang, first, second), SHEET)
    assert kinds(score).count("unsupported_high_severity_number") == 2
    assert score.rubric["Accuracy"].verdict == "FAIL"


@pytest.mark.parametrize("lang", ["en", "de", "fr"])
def test_the_same_values_in_their_own_rows_pass(lang: str) -> None:
    first, second = ("1.45", "1.32") if lang == "en" else ("1,45", "1,32")
    score = scored(_case(lang), lang, _table(lang, first, second), SHEET)
    assert kinds(score) == []
    assert score.rubric["Accuracy"].verdict == "PASS", score.rubric


RUNTIME = item(
    "nimbus-x2-product-specification",
    "pdf",
    "Runtime per charge: 11.5 hours (measured with 60 % of the time under full load).",
)
FENCED = {
    "en": (
        "6.9 hours under full load and 4.6 hours below it (60 % of an 11.5-hour charge) [1].",
        ("6.9 hours of one charge under full load", "6.9 hours"),
        ("rated runtime per charge of 11.5 hours", "11.5 hours"),
    ),
    "de": (
        "6,9 Stunden unter Volllast und 4,6 darunter (60 % einer Ladung von 11,5 Stunden) [1].",
        ("6,9 Stunden einer Ladung unter Volllast", "6,9 Stunden"),
        ("Nennlaufzeit pro Ladung 11,5 Stunden", "11,5 Stunden"),
    ),
    "fr": (
        "6,9 heures à pleine charge et 4,6 en dessous (60 % d'une charge de 11,5 heures) [1].",
        ("6,9 heures d'une charge à pleine puissance", "6,9 heures"),
        ("autonomie nominale par charge de 11,5 heures", "11,5 heures"),
    ),
}


@pytest.mark.parametrize("lang", ["en", "de", "fr"])
def test_a_value_is_about_the_words_between_its_neighbours_of_its_kind(lang: str) -> None:
    # one sentence holds three durations: each is about the words up to the next one, so
    # the rated runtime is not given for the full-load share the sentence opens with
    answer, (first, first_value), (rated, rated_value) = FENCED[lang]
    case = gold(
        f"FENCE-{lang}",
        "?",
        lang,
        required=[
            {"text": first, "kind": "quantity", "value": first_value, "severity": "high"},
            {"text": rated, "kind": "quantity", "value": rated_value, "severity": "medium"},
        ],
    )
    score = scored(case, lang, answer, RUNTIME)
    assert kinds(score) == []
    assert score.turns[0].contradicted == []


SHEETS = item(
    "datasheet-tvs",
    "pdf",
    "TVS 45-13: 13 bar, 5.4 m³/min, 45 kW. TVS 75-14: 14 bar, 9.8 m³/min, 75 kW.",
)
DIFFERENCE = {
    "fr": (
        ("TVS 45-13 : débit de 5,4 m³/min", "5,4 m³/min"),
        ("TVS 75-14 : débit de 9,8 m³/min", "9,8 m³/min"),
        ("le TVS 75-14 livre 4,4 m³/min de plus que le TVS 45-13", "4,4 m³/min"),
        "| Modèle | Débit |\n|---|---|\n| TVS 45-13 | 5,4 m³/min |\n| TVS 75-14 | 9,8 m³/min |"
        "\n\nÉcart de débit : 4,4 m³/min en faveur du TVS 75 [1].",
    ),
    "en": (
        ("TVS 45-13: free air delivery 5.4 m³/min", "5.4 m³/min"),
        ("TVS 75-14: free air delivery 9.8 m³/min", "9.8 m³/min"),
        ("the TVS 75-14 delivers 4.4 m³/min more than the TVS 45-13", "4.4 m³/min"),
        "| Model | Free air delivery |\n|---|---|\n| TVS 45-13 | 5.4 m³/min |\n| TVS 75-14 | "
        "9.8 m³/min |\n\nDifference in free air delivery: 4.4 m³/min in favour of the TVS 75 [1].",
    ),
    "de": (
        ("TVS 45-13: Liefermenge 5,4 m³/min", "5,4 m³/min"),
        ("TVS 75-14: Liefermenge 9,8 m³/min", "9,8 m³/min"),
        ("der TVS 75-14 liefert 4,4 m³/min mehr als der TVS 45-13", "4,4 m³/min"),
        "| Modell | Liefermenge |\n|---|---|\n| TVS 45-13 | 5,4 m³/min |\n| TVS 75-14 | "
        "9,8 m³/min |\n\nUnterschied in der Liefermenge: 4,4 m³/min zugunsten des TVS 75 [1].",
    ),
}


@pytest.mark.parametrize("lang", ["fr", "en", "de"])
def test_a_difference_of_two_stated_values_is_a_result_not_a_swap(lang: str) -> None:
    first, second, difference, answer = DIFFERENCE[lang]
    case = gold(
        f"DIFF-{lang}",
        "?",
        lang,
        required=[
            {"text": text, "kind": "quantity", "value": value, "severity": "high"}
            for text, value in (first, second, difference)
        ],
    )
    score = scored(case, lang, answer, SHEETS)
    assert kinds(score) == []
    assert score.turns[0].contradicted == []


TERMS = {
    "fr": "Le TVS 45-13 livre 5,4 m³/min ; le TVS 75-14 livre 9,8 m³/min. Le TVS 75 fournit "
    "donc 4,4 m³/min de plus [1].",
    "en": "The TVS 45-13 delivers 5.4 m³/min; the TVS 75-14 delivers 9.8 m³/min. So the TVS 75 "
    "delivers 4.4 m³/min more [1].",
    "de": "Der TVS 45-13 liefert 5,4 m³/min; der TVS 75-14 liefert 9,8 m³/min. Der TVS 75 "
    "liefert also 4,4 m³/min mehr [1].",
}


@pytest.mark.parametrize("lang", ["fr", "en", "de"])
def test_a_term_is_not_given_for_the_difference_it_makes(lang: str) -> None:
    # "livre" / "delivers" is a word of the difference claim too: the terms stay their own
    first, second, difference, _ = DIFFERENCE[lang]
    case = gold(
        f"TERMS-{lang}",
        "?",
        lang,
        required=[
            {"text": text, "kind": "quantity", "value": value, "severity": "high"}
            for text, value in (first, second, difference)
        ],
    )
    score = scored(case, lang, TERMS[lang], SHEETS)
    assert kinds(score) == []
    assert score.turns[0].contradicted == []
