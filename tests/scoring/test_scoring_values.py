"""Typed values: one canonical key per value, whatever its writing in French, German, English."""

from __future__ import annotations

import itertools
import sys
from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_ragv2.scoring.values import (
    Value,
    ValueKind,
    identifier_key,
    identifier_spans,
    read_value,
    read_values,
)

NBSP, NNBSP, NBHYPHEN = "\u00a0", "\u202f", "\u2011"


def keys(text: str, lang: str | None) -> list[str]:
    return [value.key for value in read_values(text, lang)]


def only(text: str, lang: str | None) -> Value:
    """The one value ``text`` holds, its span checked against the original text."""
    values = read_values(text, lang)
    assert len(values) == 1, values
    value = values[0]
    assert text[value.span[0] : value.span[1]] == value.text
    return value


def spans_hold_their_text(text: str, values: tuple[Value, ...]) -> None:
    for value in values:
        assert text[value.span[0] : value.span[1]] == value.text
    ordered = sorted(value.span for value in values)
    for (_, end), (start, _) in itertools.pairwise(ordered):
        assert end <= start, "values overlap"


# --------------------------------------------------------------------------- quantity


@pytest.mark.parametrize(
    ("lang", "text", "key"),
    [
        ("fr", "480 min", "quantity:s:28800"),
        ("fr", "8 h", "quantity:s:28800"),
        ("fr", "8 heures", "quantity:s:28800"),
        ("de", "8 Stunden", "quantity:s:28800"),
        ("en", "8 hours", "quantity:s:28800"),
        ("de", "4 000 Bh", "quantity:s:14400000"),
        ("de", "4.000 Betriebsstunden", "quantity:s:14400000"),
        ("en", "4,000 operating hours", "quantity:s:14400000"),
        ("fr", "4 000 h", "quantity:s:14400000"),
        ("fr", "1,5 an", "quantity:months:18"),
        ("fr", "18 mois", "quantity:months:18"),
        ("en", "1.5 years", "quantity:months:18"),
        ("de", "1,5 Jahre", "quantity:months:18"),
        ("fr", "90 jours", "quantity:s:7776000"),
        ("de", "90 Tage", "quantity:s:7776000"),
        ("en", "90 days", "quantity:s:7776000"),
        ("fr", "quatre-vingt-dix jours", "quantity:s:7776000"),
        ("de", "neunzig Tage", "quantity:s:7776000"),
        ("en", "ninety days", "quantity:s:7776000"),
        ("de", "16 bar", "quantity:bar:16"),
        ("fr", "12,1 m³/min", "quantity:m³/h:726"),
        ("de", "-5 °C", "quantity:°C:-5"),
        ("de", "5 Werktage", "quantity:workdays:5"),
        ("fr", "5 jours ouvrés", "quantity:workdays:5"),
        ("en", "5 business days", "quantity:workdays:5"),
        ("de", "3 Prozentpunkte", "quantity:pp:3"),
        ("de", "ein Jahr", "quantity:months:12"),
        ("fr", "une semaine", "quantity:s:604800"),
        ("en", "one hour", "quantity:s:3600"),
    ],
)
def test_quantity_in_the_base_unit(lang: str, text: str, key: str) -> None:
    value = only(text, lang)
    assert (value.kind, value.key, value.text) == ("quantity", key, text)


def test_quantity_amount_dimension_precision() -> None:
    value = only("1,5 an", "fr")
    assert (value.amount, value.dimension, value.precision) == (
        Decimal(18),
        "months",
        Decimal("1.2"),
    )


def test_german_compound_units() -> None:
    text = "ein 24-Stunden-Service und ein 5-Jahres-Vertrag mit 90-Tage-Frist"
    assert keys(text, "de") == ["quantity:s:86400", "quantity:months:60", "quantity:s:7776000"]
    assert [v.text for v in read_values(text, "de")] == ["24-Stunden", "5-Jahres", "90-Tage"]


@pytest.mark.parametrize(
    ("lang", "text", "expected"),
    [
        ("de", "10-16 bar", ["quantity:bar:10", "quantity:bar:16"]),
        ("fr", "8 à 10 heures", ["quantity:s:28800", "quantity:s:36000"]),
        ("en", "8 to 10 hours", ["quantity:s:28800", "quantity:s:36000"]),
        ("de", "8, 10 und 13 bar", ["quantity:bar:8", "quantity:bar:10", "quantity:bar:13"]),
        ("fr", "95 à 99 %", ["percent:95", "percent:99"]),
        ("fr", "5 à 6 M€", ["money:EUR:5000000", "money:EUR:6000000"]),
    ],
)
def test_a_range_shares_the_last_unit(lang: str, text: str, expected: list[str]) -> None:
    assert keys(text, lang) == expected


# --------------------------------------------------------------------------- money

MONEY_5763K = [
    ("fr", "5 763 k€"),
    ("fr", "5 763 000 €"),
    ("fr", "5,763 M€"),
    ("fr", "5 763 000 euros"),
    ("fr", f"5{NNBSP}763{NBSP}k€"),
    ("de", "5.763 Mio. €"),
    ("de", "5,763 Mio. Euro"),
    ("de", "5.763.000 €"),
    ("de", "5.763 T€"),
    ("de", "5.763 TEUR"),
    ("en", "€5.763M"),
    ("en", "€5.763m"),
    ("en", "€5.763 million"),
    ("en", "EUR 5,763k"),
    ("en", "€5,763,000"),
    ("en", "5.763 million euros"),
    (None, "5,763 M€"),
    (None, "5.763 Mio. €"),
]


@pytest.mark.parametrize(("lang", "text"), MONEY_5763K)
def test_money_every_writing_one_key(lang: str | None, text: str) -> None:
    value = only(text, lang)
    assert (value.kind, value.key, value.text) == ("money", "money:EUR:5763000", text)
    assert value.amount == Decimal(5763000)
    assert value.dimension == "EUR"


@pytest.mark.parametrize(
    ("lang", "text", "key", "precision"),
    [
        ("fr", "5,76 millions d'euros", "money:EUR:5760000", 10000),
        ("fr", "5,76 M€", "money:EUR:5760000", 10000),
        ("fr", "5 763 k€", "money:EUR:5763000", 1000),
        ("fr", "5 763 000 €", "money:EUR:5763000", 1),
        ("en", "€3.145M", "money:EUR:3145000", 1000),
        ("en", "€3.145 million", "money:EUR:3145000", 1000),
        ("en", "€3.154M", "money:EUR:3154000", 1000),
        ("fr", "1 100 €", "money:EUR:1100", 1),
        ("en", "$1,200", "money:USD:1200", 1),
        ("en", "£2.5bn", "money:GBP:2500000000", 100000000),
        ("de", "CHF 1'200", "money:CHF:1200", 1),
        ("de", "1,2 Mrd. €", "money:EUR:1200000000", 100000000),
        ("fr", "1,2 milliard d'euros", "money:EUR:1200000000", 100000000),
        ("fr", "cinq millions d'euros", "money:EUR:5000000", 1000000),
    ],
)
def test_money_keys_are_exact_with_the_precision_written(
    lang: str, text: str, key: str, precision: int
) -> None:
    value = only(text, lang)
    assert (value.kind, value.key) == ("money", key)
    assert value.precision == Decimal(precision)


def test_german_price_dash() -> None:
    assert keys("290,- € bzw. 1.290,-- EUR", "de") == ["money:EUR:290", "money:EUR:1290"]


def test_money_is_not_metres() -> None:
    value = only("€3.145M", "en")
    assert value.kind == "money"
    assert only("3.145 m", "en").key == "quantity:m:3.145"


def test_scale_word_without_currency_is_a_count() -> None:
    assert keys("2,5 millions de clients", "fr") == ["count:2500000"]
    assert keys("3 Mio. Nutzer", "de") == ["count:3000000"]


# --------------------------------------------------------------------------- percent


@pytest.mark.parametrize(
    ("lang", "text"),
    [
        ("fr", "38 %"),
        ("fr", "38\u00a0%"),
        ("en", "38%"),
        ("fr", "38 pour cent"),
        ("de", "38 Prozent"),
        ("en", "38 percent"),
        ("en", "38 per cent"),
        ("fr", "trente-huit pour cent"),
        ("de", "achtunddreißig Prozent"),
        ("en", "thirty-eight percent"),
    ],
)
def test_percent(lang: str, text: str) -> None:
    value = only(text, lang)
    assert (value.kind, value.key, value.text, value.dimension) == (
        "percent",
        "percent:38",
        text,
        "%",
    )


def test_percent_near_miss() -> None:
    assert only("99,7 %", "fr").key == "percent:99.7"
    assert only("99,5 %", "fr").key == "percent:99.5"
    assert only("99.7%", "en").key == only("99,7 %", "de").key


def test_pour_cent_does_not_merge_with_the_following_number() -> None:
    text = "quatre-vingt-dix-neuf pour cent et quatre-vingt-dix jours"
    assert keys(text, "fr") == ["percent:99", "quantity:s:7776000"]
    assert keys("pour cent et quatre-vingt-dix jours", "fr") == ["quantity:s:7776000"]


# --------------------------------------------------------------------------- dates


@pytest.mark.parametrize(
    ("lang", "text"),
    [
        ("fr", "6 octobre 2025"),
        ("fr", "06 octobre 2025"),
        ("de", "6. Oktober 2025"),
        ("en", "October 6, 2025"),
        ("en", "October 6th, 2025"),
        ("en", "6 Oct 2025"),
        ("en", "6th of October 2025"),
        ("fr", "6 oct. 2025"),
        ("de", "6. Okt. 2025"),
        ("fr", "2025-10-06"),
        ("fr", "06/10/2025"),
        ("de", "6.10.2025"),
        ("de", "06.10.25"),
        ("en-GB", "06/10/2025"),
        ("en-US", "10/06/2025"),
    ],
)
def test_day(lang: str, text: str) -> None:
    value = only(text, lang)
    assert (value.kind, value.key, value.dimension, value.text) == (
        "date",
        "date:day:2025-10-06",
        "day",
        text,
    )
    assert not value.ambiguous


def test_first_of_the_month_and_year_less_day() -> None:
    assert keys("le 1er octobre 2025", "fr") == ["date:day:2025-10-01"]
    assert keys("le 6 octobre", "fr") == ["date:day:--10-06"]
    assert keys("am 6. Oktober", "de") == ["date:day:--10-06"]


@pytest.mark.parametrize(
    ("lang", "text", "key", "alternative"),
    [
        ("en", "10/06/2025", "date:day:2025-06-10", "date:day:2025-10-06"),
        (None, "10/06/2025", "date:day:2025-06-10", "date:day:2025-10-06"),
    ],
)
def test_numeric_day_without_a_deciding_language_is_marked_ambiguous(
    lang: str | None, text: str, key: str, alternative: str
) -> None:
    value = only(text, lang)
    assert (value.key, value.ambiguous, value.alternative) == (key, True, alternative)


@pytest.mark.parametrize(
    ("lang", "text", "key"),
    [
        ("en", "25/10/2025", "date:day:2025-10-25"),  # only one reading is a date
        ("en", "10/25/2025", "date:day:2025-10-25"),
        ("en", "06/06/2025", "date:day:2025-06-06"),
        ("fr", "10/06/2025", "date:day:2025-06-10"),
        ("de", "10.06.2025", "date:day:2025-06-10"),
    ],
)
def test_numeric_day_with_one_reading_is_not_ambiguous(lang: str, text: str, key: str) -> None:
    value = only(text, lang)
    assert (value.key, value.ambiguous) == (key, False)


@pytest.mark.parametrize(
    ("lang", "text"),
    [
        ("fr", "octobre 2025"),
        ("de", "Oktober 2025"),
        ("en", "October 2025"),
        ("en", "Oct. 2025"),
        ("fr", "10/2025"),
        ("de", "10.2025"),
    ],
)
def test_month(lang: str, text: str) -> None:
    value = only(text, lang)
    assert (value.key, value.dimension, value.text) == ("date:month:2025-10", "month", text)


QUARTER = [
    ("fr", "T1 2026"),
    ("en", "Q1 2026"),
    ("de", "1. Quartal 2026"),
    ("de", "ersten Quartal 2026"),
    ("fr", "1er trimestre 2026"),
    ("fr", "premier trimestre 2026"),
    ("en", "first quarter of 2026"),
    ("en", "1st quarter 2026"),
    ("en", "Q1/2026"),
    ("en", "Q1-2026"),
    ("en", "1Q 2026"),
    ("en", "1Q26"),
    ("en", "Q1'26"),
    ("en", "2026-Q1"),
]


@pytest.mark.parametrize(("lang", "text"), QUARTER)
def test_quarter(lang: str, text: str) -> None:
    value = only(text, lang)
    assert (value.key, value.dimension, value.text) == ("date:quarter:2026-Q1", "quarter", text)


@pytest.mark.parametrize(
    ("lang", "text"),
    [
        ("fr", "S2 2026"),
        ("en", "H2 2026"),
        ("de", "2. Halbjahr 2026"),
        ("de", "zweites Halbjahr 2026"),
        ("de", "zweite Jahreshälfte 2026"),
        ("fr", "second semestre 2026"),
        ("fr", "2e semestre 2026"),
        ("en", "second half of 2026"),
        ("en", "2H 2026"),
    ],
)
def test_half_year(lang: str, text: str) -> None:
    value = only(text, lang)
    assert (value.key, value.dimension, value.text) == ("date:half:2026-H2", "half", text)


@pytest.mark.parametrize(
    ("lang", "text", "year"),
    [
        ("fr", "en 2026", "2026"),
        ("de", "im Jahr 2026", "2026"),
        ("en", "in 2026", "2026"),
        ("fr", "depuis 2019", "2019"),
        ("de", "seit 2019", "2019"),
        ("en", "since 2019", "2019"),
        ("fr", "fin 2026", "2026"),
        ("de", "Ende 2026", "2026"),
        ("en", "by the end of 2026", "2026"),
        ("fr", "mi-2026", "2026"),
        ("de", "die Baureihe wurde 2019 eingeführt", "2019"),
        ("en", "Firmenchronik (2018)", "2018"),
    ],
)
def test_year_in_a_date_context(lang: str, text: str, year: str) -> None:
    value = only(text, lang)
    assert (value.kind, value.key, value.text, value.dimension) == (
        "date",
        f"date:year:{year}",
        year,
        "year",
    )


def test_fiscal_years() -> None:
    assert keys("in FY2026 and FY 2025", "en") == ["date:year:2026", "date:year:2025"]
    assert keys("im GJ 2024", "de") == ["date:year:2024"]


def test_month_names_start_with_the_letters_the_day_pattern_expects() -> None:
    from pytest_ragv2.scoring.values import month_names

    assert {name[0] for name in month_names()} <= set("adfjmnos")
    assert month_names()["févr"] == month_names()["fevrier"] == month_names()["feb"] == 2


def test_years_of_a_range_or_list() -> None:
    assert keys("de 2019 à 2021", "fr") == ["date:year:2019", "date:year:2021"]
    assert keys("von 2019 bis 2021", "de") == ["date:year:2019", "date:year:2021"]
    assert keys("2019-2021", "en") == ["date:year:2019", "date:year:2021"]
    assert keys("since 2019 and 2020", "en") == ["date:year:2019", "date:year:2020"]


def test_a_year_outside_a_date_context_is_a_count() -> None:
    assert keys("Le modèle 2026 et 2026 clients", "fr") == ["count:2026", "count:2026"]


def test_a_number_with_a_unit_after_a_context_word_is_no_year() -> None:
    assert keys("bis 2000 bar", "de") == ["quantity:bar:2000"]
    assert keys("en 2000 heures", "fr") == ["quantity:s:7200000"]
    assert keys("ab 2000 €", "de") == ["money:EUR:2000"]


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("6 octobre 2025", "6 novembre 2025"),
        ("Q1 2026", "Q2 2026"),
        ("T1 2026", "T1 2027"),
        ("S1 2026", "S2 2026"),
        ("octobre 2025", "6 octobre 2025"),
        ("2026", "Q1 2026"),
    ],
)
def test_date_near_misses_differ(first: str, second: str) -> None:
    first_value = read_value(first, "date", "fr")
    second_value = read_value(second, "date", "fr")
    assert first_value is not None
    assert second_value is not None
    assert first_value.key != second_value.key


def test_a_date_is_never_counts() -> None:
    text = "Le 06/10/2025, le 6.10.2025 et le 2025-10-06 : 3 rendez-vous."
    assert keys(text, "fr") == ["date:day:2025-10-06"] * 3 + ["count:3"]


def test_an_invalid_day_is_no_date() -> None:
    assert all(value.kind != "date" for value in read_values("31.02.2025", "de"))


# --------------------------------------------------------------------------- phone


PHONE_FR = [
    ("fr", "0033 2 85 52 41 90"),
    ("fr", "+33 (0)2 85 52 41 90"),
    ("fr", "02 85 52 41 90"),
    ("fr", "+33285524190"),
    ("fr", "+33 2 85 52 41 90"),
    ("fr", "+33.2.85.52.41.90"),
    ("fr", f"+33{NBSP}2{NBSP}85{NBSP}52{NBSP}41{NBSP}90"),
    ("en", "+33 2 85 52 41 90"),
    ("de", "+33 2 85 52 41 90"),
    (None, "02 85 52 41 90"),
    (None, "+33 (0)2 85 52 41 90"),
]


@pytest.mark.parametrize(("lang", "text"), PHONE_FR)
def test_phone_e164(lang: str | None, text: str) -> None:
    value = only(f"Appelez le {text}.", lang)
    assert (value.kind, value.key, value.text) == ("phone", "phone:+33285524190", text)


@pytest.mark.parametrize(
    ("lang", "text", "key"),
    [
        ("de", "+49 711 12345-0", "phone:+49711123450"),
        ("de", "0711 123450", "phone:+49711123450"),
        ("de", "(0711) 12345-0", "phone:+49711123450"),
        ("en", "020 7946 0958", "phone:+442079460958"),
        ("en-US", "(202) 555-0143", "phone:+12025550143"),
    ],
)
def test_phone_by_region(lang: str, text: str, key: str) -> None:
    value = only(text, lang)
    assert (value.kind, value.key, value.text) == ("phone", key, text)


def test_a_phone_is_one_phone_not_numbers() -> None:
    assert keys("Tel. +33285524000", "fr") == ["phone:+33285524000"]
    assert keys("Tél. : +33 (0)2 85 52 41 90, 24 h/24", "fr") == [
        "phone:+33285524190",
        "quantity:s:86400",
    ]


def test_numbers_and_dates_are_no_phones() -> None:
    assert keys("1 689 000 € am 06.10.2025", "de") == ["money:EUR:1689000", "date:day:2025-10-06"]


# --------------------------------------------------------------------------- email, url


def test_email_casefolded() -> None:
    value = only("Écrivez à Support@Example.COM.", "fr")
    assert (value.kind, value.key, value.text) == (
        "email",
        "email:support@example.com",
        "Support@Example.COM",
    )


@pytest.mark.parametrize(
    "text",
    ["https://www.Example.com/docs/", "http://example.com/docs", "www.example.com/docs."],
)
def test_url(text: str) -> None:
    values = read_values(f"Voir {text}", "fr")
    assert [(value.kind, value.key) for value in values] == [("url", "url:example.com/docs")]


# --------------------------------------------------------------------------- identifiers


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("CC-MER-2024-017", "identifier:CC-MER-2024-017"),
        ("CC/MER/2024/017", "identifier:CC-MER-2024-017"),
        ("CC.MER.2024.017", "identifier:CC-MER-2024-017"),
        (f"CC{NBHYPHEN}MER{NBHYPHEN}2024{NBHYPHEN}017", "identifier:CC-MER-2024-017"),
        ("TW-P-24-003", "identifier:TW-P-24-003"),
        ("KV-4501-8", "identifier:KV-4501-8"),
        ("DB-TVS75-DE-09", "identifier:DB-TVS-75-DE-09"),
        ("SK-22OA", "identifier:SK-22-OA"),
        ("NX-450B", "identifier:NX-450-B"),
        ("TVS75", "identifier:TVS-75"),
        ("ISO 27001", "identifier:ISO-27001"),
        ("ISO/IEC 27001", "identifier:ISO-IEC-27001"),
        ("SOC 2", "identifier:SOC-2"),
        ("TVK 220", "identifier:TVK-220"),
        ("TVS 75-10", "identifier:TVS-75-10"),
        ("A380", "identifier:A-380"),
        ("F12", "identifier:F-12"),
        ("TVK 220-C", "identifier:TVK-220-C"),
        ("TVM 30-H2", "identifier:TVM-30-H-2"),
        ("TVS 75D", "identifier:TVS-75-D"),
        ("EPZ-DGR-B-2024-0417", "identifier:EPZ-DGR-B-2024-0417"),
    ],
)
def test_identifier_in_running_text(text: str, key: str) -> None:
    values = read_values(f"Voir {text} pour le détail.", "fr")
    assert [(value.kind, value.key, value.text) for value in values] == [("identifier", key, text)]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("die ISO-27001-Zertifizierung", [("ISO-27001", "identifier:ISO-27001")]),
        ("der SOC-2-Bericht", [("SOC-2", "identifier:SOC-2")]),
        ("das TVK-220-Datenblatt", [("TVK-220", "identifier:TVK-220")]),
        ("der Dynamics-365-Connector", []),
        ("die TVS-Baureihe", []),
        ("ein 3D-Drucker", []),
    ],
)
def test_german_compounds_yield_the_embedded_identifier(
    text: str, expected: list[tuple[str, str]]
) -> None:
    values = read_values(text, "de")
    assert [(value.text, value.key) for value in values] == expected


@pytest.mark.parametrize(
    "text", ["48h", "€3.145M", "3x", "Q4", "T4", "1er", "4th", "16GB", "m3/min", "12.03"]
)
def test_not_identifiers(text: str) -> None:
    assert all(value.kind != "identifier" for value in read_values(f"Le {text} ici", "fr"))


@pytest.mark.parametrize(
    ("lang", "text", "expected"),
    [
        ("de", "nach EN 1090 und DIN 2353", ["identifier:EN-1090", "identifier:DIN-2353"]),
        ("fr", "un RTO 4 h", ["quantity:s:14400"]),
        ("fr", "un RTO 4h", ["quantity:s:14400"]),
        ("fr", "le SLA 99,7 %", ["percent:99.7"]),
        ("en", "Windows 11", ["count:11"]),
        ("fr", "le CA 2024", ["count:2024"]),
        ("en", "EUR 5 763", ["money:EUR:5763"]),
    ],
)
def test_a_capital_word_and_a_number(lang: str, text: str, expected: list[str]) -> None:
    assert keys(text, lang) == expected


def test_identifier_near_misses_differ() -> None:
    assert identifier_key("SK-22OA") != identifier_key("SK-220A")
    assert identifier_key("KV-4501-8") != identifier_key("KV-450-18")
    assert identifier_key("CC-MER-2024-017") != identifier_key("CC-MER-2024-018")
    assert identifier_key("TVS75") == identifier_key("tvs-75") == identifier_key("TVS 75")


def test_labelled_part_numbers_and_iban() -> None:
    assert keys("Art.-Nr. 4711-0815", "de") == ["identifier:4711-0815"]
    assert keys("Teile 301-224-05 bestellen", "de") == ["identifier:301-224-05"]
    iban = "IBAN DE89 3704 0044 0532 0130 00"
    assert keys(iban, "de") == ["identifier:DE89370400440532013000"]


@pytest.mark.parametrize(
    ("text", "key", "found"),
    [
        ("Le contrat CC MER 2024 017 est signé.", "CC-MER-2024-017", ["CC MER 2024 017"]),
        ("Le contrat CC/MER/2024/017.", "identifier:CC-MER-2024-017", ["CC/MER/2024/017"]),
        ("contrat cc-mer-2024-017", "CC-MER-2024-017", ["cc-mer-2024-017"]),
        (
            f"contrat CC{NBSP}MER{NBHYPHEN}2024 017",
            "CC-MER-2024-017",
            [f"CC{NBSP}MER{NBHYPHEN}2024 017"],
        ),
        ("contrat CC-MER-2024-0171", "CC-MER-2024-017", []),
        ("contrat CC-MER-2024-018", "CC-MER-2024-017", []),
        ("contrat X-CC-MER-2024-017", "CC-MER-2024-017", []),
        ("der TVS 75 und der TVS75", "TVS-75", ["TVS 75", "TVS75"]),
        ("der TVS 75-10", "TVS-75", []),
        ("die ISO-27001-Zertifizierung", "ISO-27001", ["ISO-27001"]),
        ("Dynamics-365-Connector", "DYNAMICS-365", ["Dynamics-365"]),
        ("IBAN DE89370400440532013000", "DE89370400440532013000", ["DE89370400440532013000"]),
        (
            "IBAN DE89 3704 0044 0532 0130 00",
            "DE89370400440532013000",
            ["DE89 3704 0044 0532 0130 00"],
        ),
    ],
)
def test_identifier_spans_whatever_the_separators(text: str, key: str, found: list[str]) -> None:
    assert [text[start:end] for start, end in identifier_spans(text, key)] == found


# --------------------------------------------------------------------------- counts


@pytest.mark.parametrize(
    ("lang", "text", "key", "written"),
    [
        ("fr", "33 nouveaux clients", "count:33", "33"),
        ("fr", "47 salariés", "count:47", "47"),
        ("fr", "trente-trois nouveaux clients", "count:33", "trente-trois"),
        ("fr", "trente trois nouveaux clients", "count:33", "trente trois"),
        ("de", "dreiunddreißig neue Kunden", "count:33", "dreiunddreißig"),
        ("en", "thirty-three new customers", "count:33", "thirty-three"),
        ("fr", "vingt et un sites", "count:21", "vingt et un"),
        ("en", "a hundred and five sites", "count:105", "hundred and five"),
        ("de", "1.689 Kunden", "count:1689", "1.689"),
        ("en", "1,689 customers", "count:1689", "1,689"),
    ],
)
def test_count(lang: str, text: str, key: str, written: str) -> None:
    value = only(text, lang)
    assert (value.kind, value.key, value.text) == ("count", key, written)


def test_12_months_is_a_quantity_not_a_count() -> None:
    assert only("12 Monate", "de").kind == "quantity"


@pytest.mark.parametrize(
    ("lang", "text"),
    [
        ("fr", "un client et une question"),
        ("de", "ein Kunde und eine Frage"),
        ("en", "one of the plans"),
        ("fr", "un appareil neuf"),
        ("fr", "le 1er site, le 2e site"),
        ("en", "the 3rd and 4th plans"),
        ("fr", "un taux de 0,92"),
        ("fr", "1. Introduction\n2. Détails [1]"),
        (None, "mit Buchstabe O statt Ziffer"),
    ],
)
def test_no_value(lang: str, text: str) -> None:
    assert read_values(text, lang) == ()


def test_hours_and_minutes_are_a_time_on_the_clock_and_a_duration_off_it() -> None:
    assert keys("à 14h30", "fr") == ["time:14:30"]
    assert keys("de 9 h 30 à 18 h", "fr") == ["time:09:30", "time:18:00"]
    assert keys("le X2 tient 11 h 30 par charge", "fr") == ["quantity:s:41400"]


def test_filenames_hold_no_values() -> None:
    assert keys("voir datenblatt-tvs-75.pdf et rapport_2025.docx", "fr") == []


# --------------------------------------------------------------------------- the whole reading


def test_an_answer_read_whole_in_text_order() -> None:
    answer = (
        "Le contrat CC-MER-2024-017 prévoit un SLA de 99,7 % et un RTO de 4 heures. "
        "Le CA 2024 atteint 5 763 k€ (33 nouveaux clients) ; la migration est prévue au "
        "T1 2026. Contact : +33 (0)2 85 52 41 90 ou support@example.com, certifié ISO 27001 "
        "depuis novembre 2023."
    )
    values = read_values(answer, "fr")
    spans_hold_their_text(answer, values)
    assert [(value.kind, value.key) for value in values] == [
        ("identifier", "identifier:CC-MER-2024-017"),
        ("percent", "percent:99.7"),
        ("quantity", "quantity:s:14400"),
        ("count", "count:2024"),
        ("money", "money:EUR:5763000"),
        ("count", "count:33"),
        ("date", "date:quarter:2026-Q1"),
        ("phone", "phone:+33285524190"),
        ("email", "email:support@example.com"),
        ("identifier", "identifier:ISO-27001"),
        ("date", "date:month:2023-11"),
    ]


def test_spans_index_the_original_through_normalisation() -> None:
    text = (
        "Ce\u00adtte of\ufb01ce coûte 5\u202f763\u00a0k€ depuis le 6\u00a0octobre\u00a02025,"
        " soit ３８ ％."
    )
    values = read_values(text, "fr")
    spans_hold_their_text(text, values)
    assert [value.key for value in values] == [
        "money:EUR:5763000",
        "date:day:2025-10-06",
        "percent:38",
    ]
    assert values[0].text == "5\u202f763\u00a0k€"
    assert values[2].text == "３８ ％"


def test_one_number_is_ambiguous_without_a_language() -> None:
    value = only("1,689 k€", None)
    assert (value.key, value.ambiguous, value.alternative) == (
        "money:EUR:1689000",
        True,
        "money:EUR:1689",
    )
    assert not only("1,689 k€", "fr").ambiguous
    assert only("1,689 k€", "fr").key == "money:EUR:1689"
    assert only("1,689 k€", "en").key == "money:EUR:1689000"


# --------------------------------------------------------------------------- read_value


@pytest.mark.parametrize(
    ("text", "kind", "key"),
    [
        ("90 jours", "quantity", "quantity:s:7776000"),
        ("5 763 k€", "money", "money:EUR:5763000"),
        ("5,763 M€", "money", "money:EUR:5763000"),
        ("99,7 %", "percent", "percent:99.7"),
        ("T1 2026", "date", "date:quarter:2026-Q1"),
        ("1er trimestre 2026", "date", "date:quarter:2026-Q1"),
        ("2019", "date", "date:year:2019"),
        ("2019 (Produktübersicht)", "date", "date:year:2019"),
        ("novembre 2023", "date", "date:month:2023-11"),
        ("ISO 27001 depuis novembre 2023", "date", "date:month:2023-11"),
        ("+33 2 85 52 41 90", "phone", "phone:+33285524190"),
        ("02 85 52 41 90", "phone", "phone:+33285524190"),
        ("support@example.com", "email", "email:support@example.com"),
        ("https://www.example.com/", "url", "url:example.com"),
        ("CC-MER-2024-017", "identifier", "identifier:CC-MER-2024-017"),
        ("CC MER 2024 017", "identifier", "identifier:CC-MER-2024-017"),
        ("Dynamics 365", "identifier", "identifier:DYNAMICS-365"),
        ("ISO 27001", "identifier", "identifier:ISO-27001"),
        ("33 nouveaux clients", "count", "count:33"),
        ("33", "count", "count:33"),
        ("RTO de 4 heures", "quantity", "quantity:s:14400"),
    ],
)
def test_read_value(text: str, kind: ValueKind, key: str) -> None:
    value = read_value(text, kind, None)
    assert value is not None
    assert value.key == key
    assert text[value.span[0] : value.span[1]] == value.text


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("38", "percent"),
        ("90 jours", "count"),
        ("99,7 % et 99,5 %", "percent"),
        ("Q1 2026 ou Q2 2026", "date"),
        ("environ", "count"),
        ("", "money"),
        ("0,92", "count"),
        ("en 2026", "count"),
        ("Revision D", "identifier"),
        ("frostfrei", "quantity"),
        ("12 345", "phone"),
    ],
)
def test_read_value_is_strict(text: str, kind: ValueKind) -> None:
    assert read_value(text, kind, None) is None


# --------------------------------------------------------------------------- properties

SCALES = [
    ("{} €", 1, "fr"),
    ("{} k€", 1000, "fr"),
    ("€{}", 1, "en"),
    ("EUR {}", 1, "en"),
    ("{} euros", 1, "fr"),
    ("{} Euro", 1, "de"),
    ("€{}k", 1000, "en"),
    ("{} TEUR", 1000, "de"),
]


def _written(amount: int, lang: str) -> str:
    grouped = f"{amount:,}"
    if lang == "fr":
        return grouped.replace(",", "\u202f")
    if lang == "de":
        return grouped.replace(",", ".")
    return grouped


@settings(max_examples=200, deadline=None)
@given(
    thousands=st.integers(min_value=1, max_value=999_999),
    form=st.sampled_from(SCALES),
)
def test_property_money_any_writing_reads_to_one_key(
    thousands: int, form: tuple[str, int, str]
) -> None:
    template, scale, lang = form
    amount = thousands * 1000
    text = template.format(_written(amount // scale, lang))
    value = only(f"Le montant : {text}.", lang)
    assert value.key == f"money:EUR:{amount}"
    assert value.text == text


_SPACES = st.sampled_from([" ", NBSP, NNBSP, "\u2009", "  "])
_NOISE = st.sampled_from(["\ufb01", "\u00ad", "\u200b", "é", "e\u0301", "ß", "\u2019", "—", "Ⅻ"])


@settings(max_examples=200, deadline=None)
@given(
    parts=st.lists(
        st.sampled_from(
            [
                "5 763 k€",
                "99,7 %",
                "6 octobre 2025",
                "T1 2026",
                "+33 2 85 52 41 90",
                "CC-MER-2024-017",
                "33 clients",
                "quatre-vingt-dix jours",
                "ISO 27001",
                "support@example.com",
                "en 2026",
            ]
        ),
        min_size=1,
        max_size=6,
    ),
    spaces=st.lists(_SPACES, min_size=7, max_size=7),
    noise=st.lists(_NOISE, min_size=7, max_size=7),
)
def test_property_spans_index_the_original_and_keys_ignore_spacing(
    parts: list[str], spaces: list[str], noise: list[str]
) -> None:
    plain = " ; ".join(parts)
    pieces = []
    for index, part in enumerate(parts):
        pieces.append(f"{noise[index]}{spaces[index]}{part.replace(' ', spaces[index])}")
    text = " ;\n".join(pieces)
    values = read_values(text, "fr")
    spans_hold_their_text(text, values)
    assert [value.key for value in values] == keys(plain, "fr")


@settings(max_examples=150, deadline=None)
@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=120))
def test_property_any_text_reads_without_error_and_spans_hold(text: str) -> None:
    values = read_values(text, None)
    spans_hold_their_text(text, values)


def test_importing_the_module_imports_no_library() -> None:
    import subprocess

    code = (
        "import sys, pytest_ragv2.scoring.values;"
        "print(sorted(m for m in ('phonenumbers', 'babel', 'text_to_num') if m in sys.modules))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "[]"


@settings(max_examples=150, deadline=None)
@given(
    parts=st.lists(
        st.sampled_from(
            [
                "CC-MER-2024-017",
                "CC/MER/2024/017",
                "TW-P-24-003",
                "DB-TVS75-DE-09",
                "ISO 27001",
                "ISO-27001-Zertifizierung",
                "TVK 220-C",
                "TVM 30-H2",
                "SK-22OA",
                "Art.-Nr. 4711-0815",
                "DE89 3704 0044 0532 0130 00",
                "le",
                "und",
                "(",
                ",",
            ]
        ),
        min_size=1,
        max_size=6,
    ),
    lang=st.sampled_from(["fr", "de", "en", None]),
)
def test_property_identifier_spans_find_every_identifier_read(
    parts: list[str], lang: str | None
) -> None:
    text = " ".join(parts)
    for value in read_values(text, lang):
        if value.kind == "identifier":
            assert value.span in identifier_spans(text, value.key)


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("von einem 22-kW-Motor angetrieben", "quantity:W:22000"),
        ("ein 5-bar-Ventil", "quantity:bar:5"),
    ],
)
def test_a_number_joined_to_its_unit_in_a_compound_is_a_quantity(text: str, key: str) -> None:
    assert [value.key for value in read_values(text, "de")] == [key]


@pytest.mark.parametrize(
    ("text", "lang", "key"),
    [
        ("Un an et demi pour les journaux", "fr", "quantity:months:18"),
        ("deux heures et demie", "fr", "quantity:s:9000"),
        ("two and a half years", "en", "quantity:months:30"),
        ("Fifteen and a half bar", "en", "quantity:bar:15.5"),
        ("15 and a half bar", "en", "quantity:bar:15.5"),
        ("zweieinhalb Stunden", "de", "quantity:s:9000"),
        ("anderthalb Jahre", "de", "quantity:months:18"),
    ],
)
def test_a_number_and_a_half_in_words_is_read(text: str, lang: str, key: str) -> None:
    [value] = read_values(text, lang)
    assert value.key == key
    assert text[value.span[0] : value.span[1]] == value.text
