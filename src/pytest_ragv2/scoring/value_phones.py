"""Phone numbers in every national and international writing (phonenumbers), read as values.
(:mod:`pytest_ragv2.scoring.values` reads an answer with them.)
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    pass

from pytest_ragv2.scoring.value_base import _Collector, _primary, _region

_PHONE_SPACE = "\u0020\u00a0\u202f\u2009"
# a candidate starts with "+", "00", "(0" or "0"; what may not stand before it (a word
# character, "+", "/", ".", ",", "-") is checked in code (:func:`_not_after`)
_PHONE_CANDIDATE = re.compile(
    rf"(?:\+|00)[1-9][\d{_PHONE_SPACE}().\-/\u2010\u2011]{{6,24}}\d"
    rf"|\(?0[1-9][\d{_PHONE_SPACE}().\-/\u2010\u2011]{{5,22}}\d"
)
_US_CANDIDATE = re.compile(r"\(?[2-9]\d\d\)?[ .\-]?[2-9]\d\d[ .\-]\d{4}(?!\d)")
_DATE_SHAPE = re.compile(r"\d{1,2}([./-])\d{1,2}\1\d{2,4}|\d{4}-\d{2}-\d{2}")
_PHONE_PLAIN = str.maketrans({"\u202f": " ", "\u2009": " ", "\u2010": "-", "\u2011": "-"})
_REGIONS = {"fr": "FR", "de": "DE", "en": "GB"}
_ALL_REGIONS = ("FR", "DE", "GB", "US")


def _phone_regions(lang: str | None) -> tuple[str, ...]:
    primary, region = _primary(lang), _region(lang)
    if primary == "en" and region == "us":
        return ("US",)
    if primary in _REGIONS:
        return (_REGIONS[primary],)
    return _ALL_REGIONS


def _guarded_matches(
    pattern: re.Pattern[str], text: str, may_start: Callable[[str, int], bool]
) -> Iterator[re.Match[str]]:
    """The matches of ``pattern`` that may start where they start, left to right: a match
    refused is tried again one character further (``finditer`` would skip it whole)."""
    position = 0
    search = pattern.search
    while (match := search(text, position)) is not None:
        if may_start(text, match.start()):
            yield match
            position = max(match.end(), match.start() + 1)
        else:
            position = match.start() + 1


def _phone_start(text: str, start: int) -> bool:
    return start == 0 or not (text[start - 1].isalnum() or text[start - 1] in "_+/.,-")


def _phones(text: str, lang: str | None, found: _Collector) -> None:
    regions = _phone_regions(lang)
    candidates = [match.span() for match in _guarded_matches(_PHONE_CANDIDATE, text, _phone_start)]
    if "US" in regions:
        candidates += [
            match.span() for match in _guarded_matches(_US_CANDIDATE, text, _phone_start)
        ]
    for start, end in sorted(candidates):
        candidate = text[start:end]
        digits = sum(char.isdigit() for char in candidate)
        if not 8 <= digits <= 17 or not found.free((start, end)):
            continue
        if _DATE_SHAPE.fullmatch(candidate.strip()):
            continue
        international = candidate.startswith(("+", "00"))
        tried = (*regions, *(r for r in _ALL_REGIONS if r not in regions))
        if international:
            for region in tried:
                hit = _phone_in(candidate, region, international)
                if hit is not None:
                    key, (offset, stop) = hit
                    found.add("phone", "phone:" + key, (start + offset, start + stop))
                    break
            continue
        # a national number ("02 85 52 41 90") does not say its country: the first region
        # that reads it (the language's first) gives its key, the next one reading it
        # otherwise its alternative (a German answer quoting a French number)
        readings = (_phone_in(candidate, region, False) for region in tried)
        hit = next(filter(None, readings), None)
        if hit is None:
            continue
        key, (offset, stop) = hit
        other = next(
            (other for other in filter(None, readings) if other[0] != key and other[1] == hit[1]),
            None,
        )
        found.add(
            "phone",
            "phone:" + key,
            (start + offset, start + stop),
            ambiguous=other is not None,
            alternative=None if other is None else "phone:" + other[0],
        )


def _phone_in(
    candidate: str, region: str, international: bool
) -> tuple[str, tuple[int, int]] | None:
    """The E.164 form and span of the phone number phonenumbers reads in ``candidate``."""
    import phonenumbers

    leniency = phonenumbers.Leniency.POSSIBLE if international else phonenumbers.Leniency.VALID
    # phonenumbers knows the ASCII space and the no-break space only: one character for one,
    # so its offsets stay the candidate's
    plain = candidate.translate(_PHONE_PLAIN)
    for match in phonenumbers.PhoneNumberMatcher(plain, region, leniency=leniency):
        raw = match.raw_string.lstrip()
        if region != "US" and not raw.startswith(("+", "0", "(")):
            continue
        key = phonenumbers.format_number(match.number, phonenumbers.PhoneNumberFormat.E164)
        return key, (match.start, match.end)
    return None
