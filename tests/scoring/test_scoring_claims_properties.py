"""Property tests of number reading: a number written the way French, German or English
writes it reads back as that number (needs hypothesis; skipped without it)."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest

pytest.importorskip("hypothesis")

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from pytest_ragv2.gold.schema import Claim
from pytest_ragv2.scoring.claims import claim_found
from pytest_ragv2.scoring.numbers import parse_numbers

NBSP, NNBSP, THIN = "\u00a0", "\u202f", "\u2009"


def claim(**fields: Any) -> Claim:
    return Claim.model_validate(fields)


# --------------------------------------------------------------------------- properties

SPACES = st.sampled_from([" ", NBSP, NNBSP, THIN])
UNITS = st.sampled_from(["", " %", " k€", " bar", " h", "€", " m³/min"])


def group_thousands(integer: int, separator: str) -> str:
    digits = str(integer)
    head = len(digits) % 3 or 3
    parts = [digits[:head]] + [digits[i : i + 3] for i in range(head, len(digits), 3)]
    return separator.join(parts)


def write(integer: int, fraction: str, lang: str, grouped: bool, space: str) -> str:
    thousands, decimal = {"fr": (space, ","), "de": (".", ","), "en": (",", ".")}[lang]
    text = group_thousands(integer, thousands) if grouped else str(integer)
    return f"{text}{decimal}{fraction}" if fraction else text


numbers = st.tuples(
    st.integers(min_value=0, max_value=10**10),
    st.text(alphabet="0123456789", max_size=4),
    st.sampled_from(["fr", "de", "en"]),
    st.booleans(),
    SPACES,
    UNITS,
)


@settings(max_examples=300, deadline=None, database=None)
@given(numbers)
def test_property_written_in_a_language_reads_back(case: tuple[Any, ...]) -> None:
    integer, fraction, lang, grouped, space, unit = case
    written = write(integer, fraction, lang, grouped, space)
    answer = f"Valeur : {written}{unit}, fin."
    found = parse_numbers(answer, lang)
    assert len(found) == 1, (answer, found)
    assert found[0].value == float(Decimal(f"{integer}.{fraction or '0'}"))
    assert found[0].span[0] == answer.index(written[0])


@settings(max_examples=300, deadline=None, database=None)
@given(numbers)
def test_property_unambiguous_writings_read_back_without_language(case: tuple[Any, ...]) -> None:
    integer, fraction, lang, grouped, space, unit = case
    # "1,689" / "1.689" (1-3 digits, one mark, 3 digits) is ambiguous without a language
    assume(not (len(fraction) == 3 and 1 <= integer < 1000))
    written = write(integer, fraction, lang, grouped, space)
    found = parse_numbers(f"{written}{unit}", None)
    assert [f.value for f in found] == [float(Decimal(f"{integer}.{fraction or '0'}"))]


@settings(max_examples=200, deadline=None, database=None)
@given(numbers)
def test_property_number_claim_matches_its_own_writing(case: tuple[Any, ...]) -> None:
    integer, fraction, lang, grouped, space, _ = case
    value = float(Decimal(f"{integer}.{fraction or '0'}"))
    target = claim(text="Betriebsdruck", number=value, unit="bar")
    written = write(integer, fraction, lang, grouped, space)
    assert claim_found(target, f"max. {written} bar", lang).matched
    assert not claim_found(target, f"max. 9{written} bar", lang).matched


@given(st.text(alphabet=st.characters(max_codepoint=127), max_size=40))
def test_the_ascii_fast_path_normalises_exactly_as_the_general_path(text: str) -> None:
    from pytest_ragv2.scoring import normalisation

    fast = normalisation._normalise_ascii(text)
    assert (fast.text, fast.starts, fast.ends) == by_cluster(text)


def by_cluster(text: str) -> tuple[str, tuple[int, ...], tuple[int, ...]]:
    """The normalisation as the module docstring defines it, one cluster at a time."""
    from pytest_ragv2.scoring import normalisation

    out: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    for start, end in normalisation._clusters(text):
        cluster = text[start:end]
        if cluster in normalisation._DROPPED:
            continue
        if cluster in normalisation._SUPERSCRIPT_DIGITS and start and text[start - 1].isdigit():
            continue
        for char in normalisation._fold_cluster(cluster):
            if char.isspace():
                if not out or out[-1] == " ":
                    continue
                char = " "
            out.append(char)
            starts.append(start)
            ends.append(end)
    if out and out[-1] == " ":
        out.pop()
        starts.pop()
        ends.pop()
    return "".join(out), tuple(starts), tuple(ends)


MIXED = st.lists(
    st.one_of(
        st.text(alphabet=st.characters(max_codepoint=127), max_size=20),
        st.sampled_from(
            [
                "é",
                "e\u0301",
                "\u0301",
                "Straße",
                "ÉTÉ",
                "\u00a0",
                "\u202f",
                "²",
                "m³",
                "℃",
                "\u00ad",
                "\u200b",
                "’",
                "«",
                "—",
                "İ",
                "ﬁ",
                "Ⅻ",
                "\u2028",
                "\x85",
                "\x00",
                "  ",
            ]
        ),
    ),
    max_size=12,
).map("".join)


@settings(max_examples=1000, deadline=None)
@given(MIXED)
def test_a_mixed_text_normalises_as_folded_cluster_by_cluster(text: str) -> None:
    from pytest_ragv2.scoring.normalisation import normalise

    found = normalise(text)
    assert (found.text, found.starts, found.ends) == by_cluster(text)


@settings(max_examples=1000, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            [
                "TVS-75",
                "75",
                "x7",
                "7x",
                "a/b1",
                "1.5",
                "ab",
                "-",
                "/",
                ".",
                " ",
                "\u00a0",
                "\n",
                "_",
                "٣",
                "²",
                "é1",
                "DE-2024-117",
                "m3/min",
                "+49",
                "  ",
            ]
        ),
        max_size=12,
    ).map("".join)
)
def test_identifiers_are_masked_as_every_compound_of_the_text_would_be(text: str) -> None:
    from pytest_ragv2.scoring import numbers

    by_compound = numbers._COMPOUND.sub(numbers._mask_compound, text)
    with_spans = numbers._masked_identifiers(text)
    for start, end in numbers.typed_spans(text):
        by_compound = by_compound[:start] + "#" * (end - start) + by_compound[end:]
    assert with_spans == (by_compound if numbers._DIGIT.search(text) else text)
