"""Times of day and units a reader writes out (issue 24, from kinds of wording met in
validation10, each written here in three languages apart from it):

- an hour in words, or in digits, with "Uhr" or "o'clock" is a time of day, and so is the
  start of a range before it ("von neun bis vierzehn Uhr"); with "heures" only after a
  preposition of time ("à neuf heures"), for "pendant neuf heures", "en 2 à 3 heures" and
  "jusqu'à 6 heures par mois" are durations;
- "decibels", "Dezibel", "décibels" are the unit dB;
- a table column's unit may itself hold brackets ("Schalldruck (dB(A))").
"""

from __future__ import annotations

import pytest

from pytest_ragv2.scoring.values import read_values


def _keys(text: str, lang: str) -> list[str]:
    return [value.key for value in read_values(text, lang)]


@pytest.mark.parametrize(
    ("lang", "text"),
    [
        ("de", "Erreichbar von neun bis vierzehn Uhr Ortszeit."),
        ("en", "Reachable from nine to fourteen o'clock local time."),
        ("fr", "Joignable à neuf heures, et jusqu'à quatorze heures."),
    ],
)
def test_hours_in_words_on_the_clock(lang: str, text: str) -> None:
    assert _keys(text, lang) == ["time:09:00", "time:14:00"]


@pytest.mark.parametrize(
    ("lang", "text", "keys"),
    [
        ("en", "The line opens at 9 o\u2019clock.", ["time:09:00"]),
        ("fr", "La hotline ouvre à 9 heures.", ["time:09:00"]),
        ("de", "Ab zweiundzwanzig Uhr ist Ruhe.", ["time:22:00"]),
    ],
)
def test_one_hour_on_the_clock(lang: str, text: str, keys: list[str]) -> None:
    assert _keys(text, lang) == keys


@pytest.mark.parametrize(
    ("lang", "text", "seconds"),
    [
        ("fr", "La charge dure pendant neuf heures.", [32400]),
        ("fr", "Le remplacement se fait en 2 à 3 heures.", [7200, 10800]),
        ("fr", "Un délai de 4 heures ouvrées.", [14400]),
        ("fr", "Le support couvre jusqu'à 6 heures par mois.", [21600]),
    ],
)
def test_hours_of_a_duration_stay_a_duration(lang: str, text: str, seconds: list[int]) -> None:
    assert _keys(text, lang) == [f"quantity:s:{value}" for value in seconds]


@pytest.mark.parametrize(
    ("lang", "text"),
    [
        ("en", "It is three decibels louder."),
        ("de", "Sie ist drei Dezibel lauter."),
        ("fr", "Elle est plus bruyante de trois décibels."),
    ],
)
def test_decibels_in_words(lang: str, text: str) -> None:
    assert _keys(text, lang) == ["quantity:dB:3"]


@pytest.mark.parametrize(
    ("lang", "header"),
    [("de", "Schalldruck (dB(A))"), ("en", "Sound pressure (dB(A))"), ("fr", "Bruit [dB(A)]")],
)
def test_a_column_unit_holding_brackets(lang: str, header: str) -> None:
    table = f"| Variante | {header} |\n|---|---|\n| TVK 110-08 | 71 |\n"
    assert "quantity:dB:71" in _keys(table, lang)
