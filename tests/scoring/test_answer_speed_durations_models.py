"""Readings met in validation12 (issue 24), each written here in three languages apart from
it:

- speed in m/s and km/h, one dimension ("1.8 m/s (≈ 6.5 km/h)" is one speed twice);
- hours and minutes in words are one duration ("onze heures trente" is 11.5 h), or one time
  on the clock ("à onze heures trente");
- two spaced models joined by a slash ("TVS 45/TVS 75") are two identifiers.
"""

from __future__ import annotations

import pytest

from pytest_ragv2.scoring.grounding import answer_facts, text_support
from pytest_ragv2.scoring.values import read_values


def _keys(text: str, lang: str) -> list[str]:
    return [value.key for value in read_values(text, lang)]


@pytest.mark.parametrize(
    ("lang", "text"),
    [
        ("en", "Top speed 1.8 m/s (about 6.48 km/h)."),
        ("fr", "Vitesse de pointe : 1,8 mètre par seconde (soit 6,48 km/h)."),
        ("de", "Höchstgeschwindigkeit 1,8 m/s (also 6,48 km/h)."),
    ],
)
def test_a_speed_in_two_units_is_one_speed(lang: str, text: str) -> None:
    assert _keys(text, lang) == ["quantity:m/s:1.8", "quantity:m/s:1.8"]


@pytest.mark.parametrize(
    ("lang", "answer"),
    [
        ("en", "Top speed ≈ 6.5 km/h."),
        ("fr", "Vitesse : environ 6,5 km/h."),
        ("de", "Rund 6,5 km/h."),
    ],
)
def test_a_rounded_speed_in_another_unit_is_backed(lang: str, answer: str) -> None:
    facts = answer_facts(answer, lang, text_support("Top speed: 1.8 m/s"))
    assert [fact.supported for fact in facts] == [True]


@pytest.mark.parametrize(
    ("lang", "text"),
    [
        ("fr", "Autonomie : onze heures trente par charge."),
        ("de", "Laufzeit: elf Stunden dreißig pro Ladung."),
        ("en", "Runtime: eleven hours thirty per charge."),
    ],
)
def test_hours_and_minutes_in_words_are_one_duration(lang: str, text: str) -> None:
    assert _keys(text, lang) == ["quantity:s:41400"]


@pytest.mark.parametrize(
    ("lang", "text"),
    [("fr", "Rendez-vous à onze heures trente."), ("de", "Treffen um elf Uhr dreißig.")],
)
def test_hours_and_minutes_in_words_on_the_clock(lang: str, text: str) -> None:
    assert _keys(text, lang) == ["time:11:30"]


@pytest.mark.parametrize(
    ("lang", "text"),
    [
        ("de", "Vier mit Schraubenverdichtern (TVS 45/TVS 75)."),
        ("en", "Four with screw compressors (TVS 45 / TVS 75)."),
        ("fr", "Quatre avec des compresseurs à vis (TVS 45/TVS 75)."),
    ],
)
def test_two_models_joined_by_a_slash(lang: str, text: str) -> None:
    assert [key for key in _keys(text, lang) if key.startswith("identifier:")] == [
        "identifier:TVS-45",
        "identifier:TVS-75",
    ]


def test_a_slashed_reference_stays_one() -> None:
    assert _keys("Contrat CC/MER/2024/017, norme ISO/IEC 27001.", "fr") == [
        "identifier:CC-MER-2024-017",
        "identifier:ISO-IEC-27001",
    ]


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("Give 30 days' notice.", "quantity:s:2592000"),
        ("Five working days' notice are required.", "quantity:workdays:5"),
        ("Two weeks' notice.", "quantity:s:1209600"),
    ],
)
def test_a_unit_with_a_possessive(text: str, key: str) -> None:
    assert _keys(text, "en") == [key]


def test_an_elided_word_is_no_unit() -> None:
    assert _keys("Il reste 2 l'unité.", "fr") == ["count:2"]


@pytest.mark.parametrize(
    ("lang", "text", "keys"),
    [
        (
            "fr",
            "| Indicateur | T2 | T3 |\n|---|---|---|\n| Marketing et ventes (k€) | 210 | 195 |",
            ["money:EUR:210000", "money:EUR:195000"],
        ),
        (
            "de",
            "| Kennzahl | Q2 | Q3 |\n|---|---|---|\n| Marketing (Tsd. €) | 210 | 195 |",
            ["money:EUR:210000", "money:EUR:195000"],
        ),
        (
            "en",
            "| Figure | Q2 | Q3 |\n|---|---|---|\n| Marketing (k€) | 210 | 195 |",
            ["money:EUR:210000", "money:EUR:195000"],
        ),
    ],
)
def test_a_row_label_names_its_cells_unit(lang: str, text: str, keys: list[str]) -> None:
    assert [key for key in _keys(text, lang) if key.startswith("money")] == keys


@pytest.mark.parametrize(("lang", "text"), [("de", "4,000 Zyklen"), ("fr", "4,000 cycles")])
def test_three_zeros_after_a_comma_are_thousands(lang: str, text: str) -> None:
    assert _keys(text, lang) == ["count:4000"]


@pytest.mark.parametrize(
    "text", ["Policy v3.1, signed off.", "Politique V3.1 validée.", "Richtlinie Version 3.1."]
)
def test_a_version_with_its_v(text: str) -> None:
    from pytest_ragv2.scoring.values import identifier_spans

    assert identifier_spans(text, "identifier:3-1")


def test_a_longer_word_before_a_version_is_no_v() -> None:
    from pytest_ragv2.scoring.values import identifier_spans

    assert identifier_spans("rev3.1", "identifier:3-1") == []
