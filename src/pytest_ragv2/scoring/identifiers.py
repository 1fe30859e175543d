"""Typed identifiers: phone numbers, e-mail addresses, URLs, IBANs and part numbers.

Pure functions, no I/O. Such an identifier is one fact, compared **whole**: it is supported
only when the support holds the same identifier (its digits spread over other numbers do
not count), and its digits are never read as numbers ("+33 2 85 52 41 90" is not five
numbers). Each has one or more **keys**, the form identifiers are compared in:

- **phone**: a number written with a ``+`` or ``00`` country prefix ("+49 711 12345-0",
  "0049 711 123450", "+33 (0)2 85 52 41 90") or a national ``0`` trunk prefix ("0711
  123450", "(0711) 12345-0", "02 85 52 41 90"), 8 to 15 digits in groups joined by spaces,
  ``-``, ``.`` or ``/``; a date ("01.02.2025") is none. Its key is the national significant
  number: the digits after the country code (a table of common codes; others keep every
  digit) or after the trunk ``0``, with an "(0)" dropped — so the international and the
  national writing of one number have the same key;
- **email**: ``local@domain.tld``, casefolded;
- **url**: ``http(s)://...`` or ``www....``, without scheme, ``www.``, trailing ``/`` and
  punctuation, casefolded; in a support text also a bare ``domain.tld/path``;
- **iban**: two capital letters, two check digits and 11 to 30 letters or digits, in groups
  of four or not ("DE89 3704 0044 0532 0130 00"), spaces ignored;
- **part**: a part or model number written without a letter: three or more digit groups
  joined by ``-`` or ``/`` ("301-224-05"; an ISO date is none), or any token holding a
  digit right after a part-number label ("Art.-Nr. 4711", "part no. 0815", "réf. 12.345",
  "Teilenummer 4711-0815"). A part number is compared as letters and digits, so it needs
  the same consecutive groups in the support, as any other identifier.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Literal

IdentifierType = Literal["phone", "email", "url", "iban", "part"]

# country calling codes tried longest first; a code outside the table keeps every digit
COUNTRY_CODES = frozenset(
    {"1", "7", "20", "27", "30", "31", "32", "33", "34", "36", "39", "40", "41", "43", "44"}
    | {"45", "46", "47", "48", "49", "52", "55", "61", "64", "81", "82", "86", "90", "91"}
    | {"351", "352", "353", "354", "356", "357", "358", "359", "370", "371", "372", "377"}
    | {"385", "386", "420", "421", "423"}
)

# one separator style per number ("+49 711 12345-0": spaces, then a "-" extension)
_STYLES = (r"[ \u00a0\u202f\u2009]", r"\.", r"[-\u2010\u2011]")


# what may not stand right before a phone number: a word character or one of "+.,/-", or a
# digit and a space (one character, two characters before its first)
_NOT_AFTER = (r"[\w+.,/\-]", r"\d[ \u00a0\u202f\u2009]")
_PLUS, _PAREN = r"\+", r"\("


def _first(literal: str) -> str:
    """``literal`` as a phone number's first character, then what may not stand before it.

    The checks follow the character instead of preceding it: a pattern that starts with a
    literal in every branch is searched for that character alone (re skips to it), where a
    leading lookbehind is tried at every position of the text (seven times slower)."""
    return literal + "".join(rf"(?<!{before}{literal})" for before in _NOT_AFTER)


def _phone_patterns() -> tuple[tuple[re.Pattern[str], tuple[str, ...]], ...]:
    """Each pattern with the literals one of which any match holds (``_scan``): a number
    with a ``+`` or ``00`` country prefix, or with a national ``(0`` or ``0`` trunk prefix,
    in each separator style."""
    patterns: list[tuple[re.Pattern[str], tuple[str, ...]]] = []
    for sep in _STYLES:
        tail = rf"(?:{sep}\d{{2,8}}){{1,6}}(?:-\d{{1,4}})?(?![\w]|[.,]\d)"
        prefix = rf"(?:{_first(_PLUS)}|{_first('0')}0)"
        international = rf"{prefix}[1-9]\d{{0,2}}(?:{sep}?\(0\))?{sep}?\(?\d{{1,6}}\)?"
        national = rf"(?:{_first(_PAREN)}0[1-9]\d{{0,4}}\)|{_first('0')}[1-9]\d{{0,4}})"
        patterns.append((re.compile(international + tail), ("+", "00")))
        patterns.append((re.compile(national + tail), ("0",)))
    return tuple(patterns)


_PHONES = _phone_patterns()
_DATE = re.compile(r"^\d{1,2}([./-])\d{1,2}\1\d{2,4}$|^\d{4}-\d{2}-\d{2}$")
_EMAIL = re.compile(r"(?<![\w.+-])[\w.+-]+@[\w-]+(?:\.[\w-]+)*\.[^\W\d_]{2,}(?![\w-])")
URL = re.compile(r"(?:https?://|(?<![\w/.@])www\.)[^\s<>()\[\]\"'|]+", re.IGNORECASE)
_BARE_URL = re.compile(r"(?<![\w/.@-])(?:[a-z0-9-]+\.)+[a-z]{2,}/[^\s<>()\[\]\"'|]*", re.IGNORECASE)
_IBAN = re.compile(
    r"(?<![\w])[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,3})?(?![\w])", re.IGNORECASE
)
_PART_GROUPS = re.compile(r"(?<![\w.,/-])\d+(?:[-/]\d+){2,}(?![\w/-]|[.,]\d)")
_PART_LABEL = re.compile(
    r"(?:\b(?:art\.?\s*-?\s*nr|artikel-?\s*nr|artikelnummer|teilenummer|teile-?nr|sachnummer"
    r"|best\.?\s*-?\s*nr|bestellnummer|bestell-?nr|part\s+(?:no|number|#)|p/n"
    r"|model\s+(?:no|number)|r[ée]f(?=\.)|n°\s+de\s+pi[èe]ce|num[ée]ro\s+de\s+pi[èe]ce"
    r"|r[ée]f[ée]rence\s+(?:article|pi[èe]ce))\.?\s*:?\s*)"
    r"(\w[\w.\-/]*\d[\w\-/]*|\d[\w.\-/]*)",
    re.IGNORECASE,
)
_TRAILING = ".,;:!?)]}>\"'"

# the literals one of which every match of a pattern holds: a text without any is not scanned
# (each scan tries every position of the text: a dozen patterns over every support text)
EMAIL_NEEDS = ("@",)
PART_GROUPS_NEEDS = ("-", "/")
# in the lower-cased text (none of their letters has another case-insensitive spelling):
# every label holds "nr", "num", "part", "p/n", "model", "ref", "réf" or "n°"
PART_LABEL_NEEDS = ("nr", "num", "part", "p/n", "model", "ref", "réf", "n°")
# a bare URL holds ".tld/"; searched from its "." (re skips to it)
BARE_URL_HINT = re.compile(r"\.[a-z]{2,}/", re.IGNORECASE)


def _scan(
    pattern: re.Pattern[str], needs: tuple[str, ...], text: str, *, lowered: str | None = None
) -> Iterator[re.Match[str]]:
    """``pattern``'s matches in ``text``, if it (or ``lowered``) holds one of ``needs``."""
    haystack = text if lowered is None else lowered
    if any(literal in haystack for literal in needs):
        yield from pattern.finditer(text)


def _url_matches(text: str, lowered: str, *, support: bool) -> Iterator[re.Match[str]]:
    # "http(s)://" and "www." (any case: "www." has no other case-insensitive spelling)
    if "://" in text or "www." in lowered:
        yield from URL.finditer(text)
    if support and BARE_URL_HINT.search(text) is not None:
        yield from _BARE_URL.finditer(text)


@dataclass(frozen=True, slots=True)
class TypedIdentifier:
    """One typed identifier of a text: its type, text, span and comparison keys."""

    type: IdentifierType
    text: str
    span: tuple[int, int]
    keys: frozenset[str]


def _digits(text: str) -> str:
    return "".join(char for char in unicodedata.normalize("NFKC", text) if char.isdigit())


def phone_keys(text: str) -> frozenset[str]:
    """The national significant number(s) of a phone number as written (module docstring)."""
    compact = re.sub(r"\(0\)", "", unicodedata.normalize("NFKC", text))
    digits = _digits(compact)
    international = compact.lstrip().startswith("+") or digits.startswith("00")
    if international:
        digits = digits[2:] if not compact.lstrip().startswith("+") else digits
        for size in (3, 2, 1):
            if digits[:size] in COUNTRY_CODES:
                rest = digits[size:]
                return frozenset({"tel:" + rest.removeprefix("0")})
        return frozenset({"tel:+" + digits})
    return frozenset({"tel:" + digits.removeprefix("0")})


def url_key(url: str) -> str:
    """A URL without scheme, ``www.``, trailing ``/`` and punctuation, casefolded."""
    key = re.sub(r"^(?:https?://)?(?:www\.)?", "", url.strip().casefold())
    return key.rstrip("/" + _TRAILING)


def _strip(match: re.Match[str]) -> tuple[str, int, int]:
    text = match.group()
    trimmed = text.rstrip(_TRAILING)
    return trimmed, match.start(), match.start() + len(trimmed)


def _free(span: tuple[int, int], taken: Iterable[tuple[int, int]]) -> bool:
    return not any(span[0] < end and start < span[1] for start, end in taken)


def typed_identifiers(
    text: str, *, support: bool = False, phones: bool = True
) -> list[TypedIdentifier]:
    """Every typed identifier of ``text``, in order; ``support`` adds bare URLs
    (``domain.tld/path``), which an answer does not state as facts; ``phones=False`` leaves
    phone numbers out (for a caller that reads them itself, before the part numbers)."""
    found: list[TypedIdentifier] = []
    taken: list[tuple[int, int]] = []

    def add(kind: IdentifierType, value: str, start: int, end: int, keys: frozenset[str]) -> None:
        if keys and _free((start, end), taken):
            found.append(TypedIdentifier(kind, value, (start, end), keys))
            taken.append((start, end))

    for match in _scan(_EMAIL, EMAIL_NEEDS, text):
        value, start, end = _strip(match)
        add("email", value, start, end, frozenset({"mail:" + value.casefold()}))
    lowered = text.lower()
    for match in _url_matches(text, lowered, support=support):
        value, start, end = _strip(match)
        add("url", value, start, end, frozenset({"url:" + url_key(value)}))
    for match in _IBAN.finditer(text):
        compact = re.sub(r"\s", "", match.group())
        if 15 <= len(compact) <= 34:
            add("iban", match.group(), *match.span(), frozenset({"iban:" + compact.upper()}))
    found_phones = [
        match
        for pattern, needs in (_PHONES if phones else ())
        for match in _scan(pattern, needs, text)
    ]
    for match in sorted(found_phones, key=lambda m: (m.start(), -m.end())):
        value = match.group()
        count = len(_digits(value))
        if 8 <= count <= 15 and not _DATE.match(value.strip()):
            add("phone", value, *match.span(), phone_keys(value))
    for match in _scan(_PART_LABEL, PART_LABEL_NEEDS, text, lowered=lowered):
        value = match.group(1).rstrip(_TRAILING)
        start = match.start(1)
        add("part", value, start, start + len(value), frozenset({"part:" + _key(value)}))
    for match in _scan(_PART_GROUPS, PART_GROUPS_NEEDS, text):
        if not _DATE.match(match.group()):
            add("part", match.group(), *match.span(), frozenset({"part:" + _key(match.group())}))
    found.sort(key=lambda identifier: identifier.span)
    return found


def _key(token: str) -> str:
    return "".join(re.findall(r"[^\W_]+", unicodedata.normalize("NFKC", token).casefold()))


def typed_keys(text: str) -> frozenset[str]:
    """The keys of every typed identifier a support text holds (bare URLs included)."""
    return frozenset(key for found in typed_identifiers(text, support=True) for key in found.keys)


def typed_spans(text: str) -> list[tuple[int, int]]:
    """Spans of the phone numbers, e-mail addresses, URLs and IBANs of ``text``: text whose
    digits are no numbers."""
    return [found.span for found in typed_identifiers(text, support=True) if found.type != "part"]
