"""Values written in words the way dates and ranges write them: a day of the month as an
ordinal (English, German) or a cardinal (French) before the month, and a range of numbers in
words sharing the unit written after its last one, with signs in words."""

from __future__ import annotations

import pytest

from pytest_ragv2.scoring.values import read_values


@pytest.mark.parametrize(
    ("lang", "text", "keys"),
    [
        ("de", "Freigegeben am sechsten Oktober 2025.", ["date:day:2025-10-06"]),
        ("de", "Gültig bis zum einunddreißigsten Dezember 2025.", ["date:day:2025-12-31"]),
        ("en", "Signed on the twenty-first of March 2026.", ["date:day:2026-03-21"]),
        ("en", "Signed on the second of May 2026.", ["date:day:2026-05-02"]),
        ("fr", "Validée le six octobre 2025.", ["date:day:2025-10-06"]),
        ("fr", "En vigueur depuis le premier janvier 2026.", ["date:day:2026-01-01"]),
        # a number of days before a month is no day of it
        ("fr", "Trois mois, octobre 2025 compris.", ["quantity:months:3", "date:month:2025-10"]),
        ("en", "In October 2025.", ["date:month:2025-10"]),
    ],
)
def test_a_day_in_words_before_a_month_and_year_is_that_day(
    lang: str, text: str, keys: list[str]
) -> None:
    assert [value.key for value in read_values(text, lang)] == keys


def test_a_day_that_the_month_has_not_leaves_the_month() -> None:
    dates = [
        v.key for v in read_values("On the thirty-first of April 2026.", "en") if v.kind == "date"
    ]
    assert dates == ["date:month:2026-04"]


@pytest.mark.parametrize(
    ("lang", "text", "keys"),
    [
        (
            "de",
            "Ausgelegt für minus zwanzig bis plus vierzig Grad Celsius.",
            ["quantity:°C:-20", "quantity:°C:40"],
        ),
        (
            "fr",
            "Entre plus cinq et plus quarante-cinq degrés Celsius.",
            ["quantity:°C:5", "quantity:°C:45"],
        ),
        ("en", "It takes twenty to thirty minutes.", ["quantity:s:1200", "quantity:s:1800"]),
        ("en", "From -20 to +40 °C.", ["quantity:°C:-20", "quantity:°C:40"]),
        # a count before another count's unit is no range: "two robots, three hours"
        ("en", "Two robots took three hours.", ["count:2", "quantity:s:10800"]),
    ],
)
def test_a_range_in_words_shares_its_unit(lang: str, text: str, keys: list[str]) -> None:
    assert [value.key for value in read_values(text, lang)] == keys


@pytest.mark.parametrize(
    ("text", "dates"),
    [
        ("Revision 1 of April 2024 was the first issue.", ["date:month:2024-04"]),
        ("It was issued on the 1st of April 2024.", ["date:day:2024-04-01"]),
        ("It was issued on 1 April 2024.", ["date:day:2024-04-01"]),
    ],
)
def test_of_makes_a_day_only_after_an_ordinal(text: str, dates: list[str]) -> None:
    assert [v.key for v in read_values(text, "en") if v.kind == "date"] == dates


@pytest.mark.parametrize(
    ("lang", "text", "key"),
    [
        ("de", "Geplant für den März des Jahres 2026.", "date:month:2026-03"),
        ("fr", "Prévu en mars de l'année 2026.", "date:month:2026-03"),
        ("en", "Planned for September of the year 2026.", "date:month:2026-09"),
    ],
)
def test_a_month_of_the_year_spelled_out_is_that_month(lang: str, text: str, key: str) -> None:
    assert [v.key for v in read_values(text, lang) if v.kind == "date"] == [key]


@pytest.mark.parametrize(
    ("lang", "text", "key"),
    [
        ("de", "Geplant für das letzte Quartal 2026.", "date:quarter:2026-Q4"),
        ("en", "Planned for the last quarter of 2026.", "date:quarter:2026-Q4"),
        ("fr", "Prévu pour le dernier trimestre 2026.", "date:quarter:2026-Q4"),
        ("en", "Planned for the last half of 2026.", "date:half:2026-H2"),
        ("de", "Ausgelegt bis minus 28 Grad.", "quantity:°C:-28"),
        ("fr", "Jusqu'à 35 degrés.", "quantity:°C:35"),
    ],
)
def test_the_last_period_of_a_year_and_degrees_alone(lang: str, text: str, key: str) -> None:
    assert [v.key for v in read_values(text, lang)] == [key]


def test_a_percentage_relates_numbers_of_its_table() -> None:
    from pytest_ragv2.scoring.grounding import answer_facts, text_support

    answer = (
        "| Kennzahl | Wert |\n|---|---|\n| ARR Ende 2025 | 6,2 Mio. € |\n"
        "| ARR-Ziel Ende 2026 | 8,5 Mio. € |\n| Nötiger Zuwachs | + 2,3 Mio. € (≈ + 37 %) |"
    )
    support = text_support("ARR Ende 2025: 6,2 M€. Ziel Ende 2026: 8,5 M€.")
    facts = {f.text: f.supported for f in answer_facts(answer, "de", support)}
    assert facts["37 %"]


def test_a_month_a_duration_after_a_day_is_supported() -> None:
    from pytest_ragv2.scoring.grounding import answer_facts, text_support

    answer = "Dreißig Monate ab dem 15. März 2026 ergeben Mitte September 2028."
    support = text_support("Garantie: 30 Monate. Lieferung am 15. März 2026.")
    facts = {f.text: f.supported for f in answer_facts(answer, "de", support)}
    assert facts["September 2028"]
    wrong = "Dreißig Monate ab dem 15. März 2026 ergeben Mitte Oktober 2028."
    assert not {f.text: f.supported for f in answer_facts(wrong, "de", support)}["Oktober 2028"]


def test_a_bold_table_cell_takes_its_columns_unit() -> None:
    table = "| Line | Q1 2025 (k€) |\n|---|---|\n| Hosting | 96 |\n| **Total** | **1,101** |"
    keys = [v.key for v in read_values(table, "en")]
    assert "money:EUR:1101000" in keys
    assert "money:EUR:96000" in keys


@pytest.mark.parametrize(
    ("lang", "text"),
    [
        ("en", "Within 8 working hours."),
        ("de", "Binnen 8 Arbeitsstunden."),
        ("fr", "Sous 8 h ouvrées."),
    ],
)
def test_working_hours_are_hours(lang: str, text: str) -> None:
    assert [v.key for v in read_values(text, lang)] == ["quantity:s:28800"]


def test_a_relative_change_without_its_sign_and_a_figure_said_again_as_a_term() -> None:
    from pytest_ragv2.scoring.grounding import answer_facts, text_support

    table = (
        "| | MAPE |\n|---|---|\n| Bêta | 14,2 % |\n| Actuel | 11,4 % |\n"
        "| Gain | ≈ 20 % d'erreur en moins |"
    )
    facts = {
        f.text: f.supported for f in answer_facts(table, "fr", text_support("14,2 % ; 11,4 %"))
    }
    assert facts["20 %"]
    loops = "Runtime: 11.5 hours = 690 minutes → 690 ÷ 5 = 138 loops."
    read = answer_facts(loops, "en", text_support("Runtime 11.5 hours per charge."))
    assert [f.supported for f in read if f.text == "690"] == [True]
    # a bare figure that is no term of a computation stays unsupported
    alone = answer_facts(
        "It runs 11.5 hours, i.e. 690 minutes; 690 robots.", "en", text_support("")
    )
    assert [f.supported for f in alone if f.text == "690"] == [False]
