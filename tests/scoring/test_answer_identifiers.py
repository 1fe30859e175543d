"""Typed identifiers: phone numbers, e-mail addresses, URLs, IBANs and part numbers."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_ragv2.scoring import identifiers
from pytest_ragv2.scoring.grounding import answer_facts, text_support
from pytest_ragv2.scoring.identifiers import phone_keys, typed_identifiers, url_key


def found(text: str) -> list[tuple[str, str]]:
    return [(typed.type, typed.text) for typed in typed_identifiers(text)]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Appelez le +33 2 85 52 41 90.", [("phone", "+33 2 85 52 41 90")]),
        ("Astreinte : 02 85 52 41 90 (24/7).", [("phone", "02 85 52 41 90")]),
        (
            "Hotline (0711) 12345-0, Fax 0711 12345-99",
            [("phone", "(0711) 12345-0"), ("phone", "0711 12345-99")],
        ),
        (
            "Call 0049 711 123450 or +44 20 7946 0958.",
            [("phone", "0049 711 123450"), ("phone", "+44 20 7946 0958")],
        ),
        ("Écrivez à support@nimbus-analytics.fr.", [("email", "support@nimbus-analytics.fr")]),
        (
            "See https://nimbus.example/x2/manual, or www.nimbus.example.",
            [("url", "https://nimbus.example/x2/manual"), ("url", "www.nimbus.example")],
        ),
        ("IBAN DE89 3704 0044 0532 0130 00.", [("iban", "DE89 3704 0044 0532 0130 00")]),
        ("Art.-Nr. 4711-0815 und Teil 301-224-05", [("part", "4711-0815"), ("part", "301-224-05")]),
        # no identifiers: dates, ranges, amounts, decimals, month/year
        ("gültig bis 11.06.2027, Stand 04/2025 12 200 bar", []),
        ("1 689 k€, 0,92 m³/min, 10-16 bar, +5 °C, 2025-03-12", []),
    ],
)
def test_typed_identifiers_in_three_languages(text: str, expected: list[tuple[str, str]]) -> None:
    assert found(text) == expected


def test_national_and_international_forms_of_a_number_share_their_key() -> None:
    same = [
        "+49 711 12345-0",
        "0711 123450",
        "(0711) 12345-0",
        "0049 711 123450",
        "+49 (0)711 123450",
    ]
    assert {frozenset(phone_keys(text)) for text in same} == {frozenset({"tel:711123450"})}
    assert phone_keys("+33 2 85 52 41 90") == phone_keys("02 85 52 41 90")
    assert phone_keys("+33 2 85 52 41 90") != phone_keys("+33 2 85 52 41 91")


def test_urls_compare_without_scheme_www_and_trailing_slash() -> None:
    assert url_key("https://www.Nimbus.example/X2/") == url_key("nimbus.example/x2")


def test_a_phone_number_is_one_fact_and_its_digits_elsewhere_do_not_back_it() -> None:
    support = text_support("Starter 48 h | 85 clients | 52 sites | 41 users | 90 days | 2 plans")
    [fact] = answer_facts("Call +33 2 85 52 41 90.", "en", support)
    assert (fact.kind, fact.type, fact.supported) == ("identifier", "phone", False)
    backed = text_support("Astreinte : 02 85 52 41 90")
    [fact] = answer_facts("Call +33 2 85 52 41 90.", "en", backed)
    assert fact.supported


def test_an_email_or_url_needs_the_whole_identifier_in_the_support() -> None:
    support = text_support("Contact: support@nimbus.example, docs at nimbus.example/x2/manual")
    facts = answer_facts(
        "Mail sales@nimbus.example or support@nimbus.example; https://nimbus.example/x2/manual",
        "en",
        support,
    )
    assert [(f.text, f.supported) for f in facts] == [
        ("sales@nimbus.example", False),
        ("support@nimbus.example", True),
        ("https://nimbus.example/x2/manual", True),
    ]


SEPARATORS = st.sampled_from([" ", "\u00a0", "\u202f", ".", ","])


@given(st.integers(min_value=1000, max_value=10**12), SEPARATORS)
def test_a_thousands_grouped_number_is_never_a_phone_number(value: int, separator: str) -> None:
    digits = str(value)
    head = len(digits) % 3 or 3
    groups = [digits[:head]] + [digits[i : i + 3] for i in range(head, len(digits), 3)]
    text = f"Umsatz {separator.join(groups)} € im Jahr"
    assert found(text) == []


@given(st.lists(st.integers(min_value=10, max_value=99), min_size=4, max_size=4))
def test_a_french_number_reads_the_same_in_both_forms(pairs: list[int]) -> None:
    rest = " ".join(str(pair) for pair in pairs)
    national, international = f"Tél. 03 {rest}.", f"Tél. +33 3 {rest}."
    [one] = typed_identifiers(national)
    [two] = typed_identifiers(international)
    assert one.type == two.type == "phone"
    assert one.keys == two.keys


# every pattern skipped on a text without its literals (identifiers._scan) has no match there
_GUARDED = [
    *identifiers._PHONES,
    (identifiers._EMAIL, identifiers.EMAIL_NEEDS),
    (identifiers._PART_GROUPS, identifiers.PART_GROUPS_NEEDS),
]
_PIECES = st.sampled_from(
    [
        "+",
        "00",
        "0",
        "(0)",
        "(0",
        "@",
        "/",
        "-",
        ".",
        " ",
        "\u00a0",
        "49",
        "711",
        "12345",
        "1",
        "٠١٢٣٤٥",
        "０１２",
        "www",
        "WWW",
        "Www.",
        "http",
        "://",
        "a",
        "Z",
        "x.de",
        "ſ",
        "info",
        "DE89",
        "-0",
        "/2",
        "12-34-56",
        "\u2011",
        "Art.-Nr. ",
        "PART no ",
        "p/N",
        "Réf.",
        "RÉFÉRENCE pièce ",
        "N° de pièce ",
        "numéro de piece ",
        "Model No. ",
        "Teile-Nr",
        "İ",
        "K",
        ".DE/",
        ".de",
        "x.y",
    ]
)


@settings(max_examples=1500, deadline=None)
@given(st.lists(_PIECES, max_size=14).map("".join))
def test_a_pattern_skipped_for_want_of_its_literals_would_match_nothing(text: str) -> None:
    for pattern, needs in _GUARDED:
        if not any(literal in text for literal in needs):
            assert pattern.search(text) is None, (pattern.pattern, text)
    if "://" not in text and "www." not in text.lower():
        assert identifiers.URL.search(text) is None, text
    if not any(literal in text.lower() for literal in identifiers.PART_LABEL_NEEDS):
        assert identifiers._PART_LABEL.search(text) is None, text
    if identifiers.BARE_URL_HINT.search(text) is None:
        assert identifiers._BARE_URL.search(text) is None, text


@pytest.mark.parametrize(
    "text",
    [
        "mail info@example.com",
        "see WWW.Example.com/x",
        "HTTPS://x.org",
        "+49 711 12345-0",
        "0711 123450",
        "part 301-224-05",
        "x.de/path",
        "Art.-Nr. 4711",
        "réf. 12.345",
        "PART NO. 0815",
        "N° de pièce 12",
    ],
)
def test_a_text_with_the_literals_is_still_scanned(text: str) -> None:
    assert typed_identifiers(text, support=True)


def phone_patterns_with_leading_checks() -> list[re.Pattern[str]]:
    """The phone patterns as the module docstring reads them: what may not precede a number
    is checked before its first character."""
    patterns = []
    lead = r"(?<![\w+.,/\-])(?<!\d[ \u00a0\u202f\u2009])"
    for sep in identifiers._STYLES:
        tail = rf"(?:{sep}\d{{2,8}}){{1,6}}(?:-\d{{1,4}})?(?![\w]|[.,]\d)"
        international = rf"(?:\+|00)[1-9]\d{{0,2}}(?:{sep}?\(0\))?{sep}?\(?\d{{1,6}}\)?"
        national = r"(?:\(0[1-9]\d{0,4}\)|0[1-9]\d{0,4})"
        patterns += [re.compile(lead + international + tail), re.compile(lead + national + tail)]
    return patterns


_PHONE_PIECES = st.sampled_from(
    [
        "+",
        "00",
        "0",
        "(0)",
        "(0",
        ")",
        "49",
        "711",
        "12345",
        "7",
        " ",
        "\u00a0",
        ".",
        "-",
        "/",
        ",",
        "a",
        "_",
        "\u2011",
        "1",
        "٣",
        "+33",
        " 2 85 52 41 90",
        "0711",
        "x",
    ]
)


@settings(max_examples=1500, deadline=None)
@given(st.lists(_PHONE_PIECES, max_size=16).map("".join))
def test_phone_patterns_match_as_with_their_checks_in_front(text: str) -> None:
    for (pattern, _), reference in zip(
        identifiers._PHONES, phone_patterns_with_leading_checks(), strict=True
    ):
        assert [m.span() for m in pattern.finditer(text)] == [
            m.span() for m in reference.finditer(text)
        ], (reference.pattern, text)
