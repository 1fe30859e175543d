"""How far a rounded writing may stand from a precise gold value (issue 24, from a kind of
wording met in validation13, written here in three languages apart from it): a share
written to one decimal ("7,7 %", "sieben Komma sieben Prozent") is the gold "7,742 %", a
rounding within 2 % of the value; "6 M€" is still not "5 763 k€"."""

from __future__ import annotations

import pytest

from pytest_ragv2.scoring.claim_bounds import same_value
from pytest_ragv2.scoring.values import read_value, read_values


@pytest.mark.parametrize(
    ("lang", "text"),
    [
        ("de", "ungefähr sieben Komma sieben Prozent"),
        ("fr", "environ 7,7 %"),
        ("en", "about 7.7%"),
    ],
)
def test_a_share_to_one_decimal_is_the_precise_gold(lang: str, text: str) -> None:
    gold = read_value("7,742 %", "percent", "fr")
    assert gold is not None
    (value,) = read_values(text, lang)
    assert same_value(gold, value)


@pytest.mark.parametrize(
    ("gold_text", "kind", "written", "lang"),
    [
        ("5 763 k€", "money", "6 M€", "fr"),
        ("7,742 %", "percent", "8 %", "fr"),
        ("1 689 k€", "money", "2 Mio. €", "de"),
    ],
)
def test_a_coarse_rounding_is_another_value(
    gold_text: str, kind: str, written: str, lang: str
) -> None:
    gold = read_value(gold_text, kind, "fr")  # type: ignore[arg-type]
    assert gold is not None
    (value,) = read_values(written, lang)
    assert not same_value(gold, value)
