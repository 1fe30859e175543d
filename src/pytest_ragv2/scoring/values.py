"""Typed values of a text, each in one canonical form: the one reading of an answer's values.

Pure functions, no I/O. :func:`read_values` reads every typed value of an answer or an
evidence passage written in French, German or English; :func:`read_value` reads a gold
value (the whole text must hold exactly one value of the given kind); :func:`identifier_spans`
finds a given identifier in a text whatever its separators. Every value has a **key**: equal
values have equal keys, different values different keys, whatever the writing. Spans index
the **original** text (``text[value.span] == value.text``), also where Unicode normalisation
changes characters (no-break spaces, ligatures, full-width digits).

What is returned
----------------
Values are found in this order, and a later one may not overlap an earlier one (a phone
number is one phone, never numbers; a date is one date, never counts):

1. e-mail addresses, URLs (also a bare ``domain.tld/path``) and IBANs
   (:mod:`.identifiers`); filenames ("datenblatt-tvs-75.pdf") and citation markers ("[1]")
   are blocked: no value is read inside them;
2. phone numbers;
3. part numbers: labelled ("Art.-Nr. 4711") or three digit groups ("301-224-05");
4. dates; then list markers at a line's start ("1.", "2)") are blocked;
5. identifiers;
6. numbers written in digits, then numbers written in words, as money, percent, quantity
   or count.

A number that is none of these — a bare number with decimals and no unit ("0,92"), an
ordinal ("1er", "2nd", "4th"), a number glued to letters that are no unit ("3x", "14h30")
— is not returned. A time of day with a unit ("de 8 h à 18 h") reads as a duration: the
text does not say which it is.

Kinds and keys
--------------
- **quantity** — a number with a unit of a physical or time dimension, converted to the
  dimension's base unit (:data:`pytest_ragv2.scoring.numbers.UNIT_DIMENSIONS`: ``s`` for
  durations, ``months`` for months and years, ``m``, ``g``, ``bar``, ``W``, ``°C``, ...).
  "480 min" = "8 h" = "8 Stunden" → ``quantity:s:28800``; "4 000 Bh" = "4 000 h";
  "90 jours" = "90 Tage" = "90 days" → ``quantity:s:7776000``; "1,5 an" = "18 mois" =
  "1.5 years" → ``quantity:months:18``. Besides the number table this module reads
  working days ("5 jours ouvrés", "5 Werktage", "5 business days": ``workdays``, not
  calendar days), percentage points ("3 Prozentpunkte": ``pp``, not percent), a German
  compound's unit after a hyphen ("24-Stunden-Service", "5-Jahres-Vertrag"), and a unit
  shared by a range or list ("10-16 bar", "8 à 10 heures", "8, 10 und 13 bar": each
  number has the unit written after the last).
- **money** — an amount in a currency (EUR, USD, GBP, CHF), in units of the currency: a
  scale ("k", "M", "Mio.", "Mrd.", "million", "millions", "Millionen", "bn", "k€", "M€",
  "Md€", "TEUR") multiplies, a currency may stand before ("€3.145M", "EUR 5,763k", "€5.763
  million") or after ("5 763 k€", "5,763 M€", "5.763 Mio. €", "5,76 millions d'euros",
  "290,- €"). "billion" is 10^9 in English and with no language, 10^12 in French and
  German ("Billionen" always).
  All of "5 763 k€", "5 763 000 €", "5,763 M€" (fr), "5.763 Mio. €" (de), "€5.763M",
  "€5.763 million", "EUR 5,763k" (en) → ``money:EUR:5763000``. Keys are exact: "5,76 M€"
  is ``money:EUR:5760000``, another value; :attr:`Value.precision` (the step of the last
  digit written, in the currency: 10000 for "5,76 M€", 1000 for "5 763 k€") lets a matcher
  accept a rounded writing if it so decides. With a scale of a million or more, "5,763" and
  "5.763" are decimals in every language (nobody writes 5 763 million as "5.763 Mio.").
  A scale word without a currency ("2,5 millions de clients", "3 Mio. Nutzer") makes a
  count of 2 500 000 / 3 000 000.
- **percent** — "38 %", "38%", "38 pour cent", "38 Prozent", "38 percent", "trente-huit
  pour cent", "achtunddreißig Prozent", "thirty-eight percent" → ``percent:38``.
- **date** — at day, month, quarter, half-year or year granularity:

  - day: "6 octobre 2025", "1er octobre 2025", "6. Oktober 2025", "October 6, 2025",
    "6 Oct 2025", "6th of October 2025", "2025-10-06", "06/10/2025", "6.10.2025", "6.10.25"
    → ``date:day:2025-10-06``; a day and month without a year ("le 6 octobre") →
    ``date:day:--10-06`` (ISO 8601's year-less form);
  - month: "octobre 2025", "Oktober 2025", "Oct. 2025", "10/2025", "04.2025" →
    ``date:month:2025-10``;
  - quarter: "T1 2026", "Q1 2026", "Q1/2026", "Q1'26", "1Q 2026", "2026-Q1", "1. Quartal
    2026", "ersten Quartal 2026", "1er trimestre 2026", "premier trimestre 2026", "first
    quarter of 2026" → ``date:quarter:2026-Q1``;
  - half: "S2 2026", "H2 2026", "2. Halbjahr 2026", "zweite Jahreshälfte 2026", "second
    semestre 2026", "second half of 2026" → ``date:half:2026-H2``;
  - year: a year (1900-2099) only in a date context: after "en", "depuis", "dès", "fin",
    "début", "im", "im Jahr", "seit", "bis", "ab", "Ende", "Stand", "wurde", "in", "since",
    "until", "by", "end of", "FY", ... ("en 2026", "seit 2019", "since 2019", "FY2026",
    "mi-2026"), in
    parentheses ("(2019)"), in a range of years ("2019-2021", "de 2019 à 2021", "seit 2019
    und 2020"), or as part of the forms above → ``date:year:2026``. A year followed by a
    unit is not one ("bis 2000 bar", "en 2000 heures"). Outside a date context "2026" is a
    count.

  Month names come from babel (wide and abbreviated, format and stand-alone, of fr, de
  and en, also without their accents and final dot); ordinals ("premier", "2e", "zweites",
  "third") are a short list of this module. Numeric day-first or month-first order: fr and
  de are day-first; ``en-US`` is month-first; ``en-GB`` and any other ``en-XX`` day-first;
  plain ``en`` and no language (None) read day-first but, when both readings are valid
  dates ("10/06/2025"), mark the value :attr:`Value.ambiguous` with the month-first key in
  :attr:`Value.alternative` — never a silent guess. Two-digit years are 20xx.
- **time** — a time of day, in any of the three languages' writings: "10:00", "9h00",
  "18 h 30", "9.30 Uhr", "9 Uhr", "10 a.m.", "3 p.m." (12 p.m. is noon) → ``time:10:00``,
  ``time:15:00``; a bare hour takes the clock of the time it is a range with ("von 9 bis
  18 Uhr", "9–18 Uhr", "de 9 h à 18 h", "entre 9 h et 18 h", "10 to 3 p.m."). "9 h" alone
  is a duration (a "délai de 9 h"), "9.30" alone a decimal, and hours with minutes written
  "h" are a time only after a preposition of time or in a range ("à 9 h 30", "de 9h00 à
  18h00"); else a duration ("tient 11 h 30" is 11.5 hours).
- **phone** — found with a candidate pattern (a ``+``, ``00`` or national ``0`` prefix,
  8 to 15 digits; with ``en-US`` also "(555) 123-4567") and read by the **phonenumbers**
  library's ``PhoneNumberMatcher`` on the candidate, with the region of the language (fr →
  FR, de → DE, en → GB, en-US → US; none: FR, DE, GB, US in turn, the first that reads it);
  a number with a country prefix needs to be possible, a national one valid. Key: E.164.
  "0033 2 85 52 41 90" = "+33 (0)2 85 52 41 90" = "02 85 52 41 90" (fr) = "+33285524190"
  → ``phone:+33285524190``. A date ("06.10.2025") is never a phone.
- **email** — ``email:`` and the address casefolded.
- **url** — ``url:`` and the URL without scheme, ``www.``, trailing ``/`` and punctuation,
  casefolded (:func:`pytest_ragv2.scoring.identifiers.url_key`).
- **identifier** — a reference, part, model, document or contract number: a token of
  letters and digits joined by ``-`` ``/`` ``.`` (also U+2010/U+2011 hyphens) holding a
  digit and at least two letters (or one capital and three characters: "F12", "A380"), or
  three digit groups and more ("301-224-05"), or anything after a part-number label
  ("Art.-Nr. 4711"), or an IBAN; and an all-capital word followed by a space and a number,
  alone or joined to more groups, that is no quantity, decimal, thousands group or year
  ("ISO 27001", "SOC 2", "TVK 220", "ISO/IEC 27001", "TVS 75-10", "TVK 220-C", "TVM 30-H2",
  "EN 1090"; not "RTO 4 h", "RTO 4h", "SLA 99,7 %", "CA 2024", nor after
  a currency code or a capitalised function word such as "UND"). A standard's name (ISO
  27001, SOC 2, EN 1090) is an identifier. Key: ``identifier:``
  and the groups in capitals joined by ``-``, where a group ends at every separator
  (hyphen, slash, dot, space, no-break space, no-break hyphen are all equivalent) and at
  every change from letters to digits or back: "CC-MER-2024-017" = "CC/MER/2024/017" =
  "CC MER 2024 017" → ``identifier:CC-MER-2024-017``; "TVS75" = "TVS 75" = "TVS-75" →
  ``identifier:TVS-75``; "DB-TVS75-DE-09" → ``identifier:DB-TVS-75-DE-09``. One character
  more, less or different is another identifier ("SK-22OA" ≠ "SK-220A"; "KV-4501-8" ≠
  "KV-450-18": a boundary between two digit groups is kept). An IBAN's key is its letters
  and digits without separators. Not identifiers: a number with its unit or scale ("48h",
  "3.145M", "m3/min"), an ordinal ("1er"), a token with one letter and fewer than three
  characters or not a capital first ("Q4", "T4", "3x"), filenames.

  German compounds: a group at either end of a token that is an ordinary word — letters
  only, four or more, all lower-case after the first — is not part of the identifier:
  "ISO-27001-Zertifizierung" → "ISO-27001", "SOC-2-Bericht" → "SOC-2",
  "TVK-220-Datenblatt" → "TVK-220"; "Dynamics-365-Connector" leaves "365", a bare number
  in a compound word, which is no value at all. A spaced identifier ("CC MER 2024 017") is
  not read in running text (nothing tells its end); claim matching looks a given
  identifier up with :func:`identifier_spans`, which finds it whatever its separators
  (an ordinary word may follow or precede it joined by a hyphen; another group may not).
- **count** — an integer without a unit, with or without a count noun ("33 nouveaux
  clients" → ``count:33``; "12 Monate" is a quantity), in digits or in words
  ("trente-trois", "dreiunddreißig", "thirty-three"). Numbers in words are read by
  **text2num** (``find_numbers``) on maximal runs of number words, so each keeps its span;
  "pour cent" is read as percent before, so "pour cent et quatre-vingt-dix" never merges
  into 190. Number words that are also articles or adjectives ("un", "une", "ein", "eine",
  "one", "neuf"; with no language also "elf", "sept", "cent", "mille", which are words of
  another of the three languages) are values only with a unit after them ("un an", "eine
  Woche", "one hour"). With no language, number words of fr, de and en are read, each run
  in the first language that knows its first word. Ordinals in words are no counts.

Keys use the plain decimal notation of the amount in the base unit (no exponent, no
trailing zeros). Numeric kinds carry :attr:`Value.amount` and :attr:`Value.dimension`;
dates carry the granularity as dimension. A number whose reading rests on a guess — "1.689"
or "1,689" with no language to decide it — is marked ambiguous, its other reading in
:attr:`Value.alternative`.

Why some code is written here
-----------------------------
Libraries do what they can: babel gives month names, phonenumbers reads and validates
phone numbers, text2num reads numbers in words. None finds numbers in running text in three
locales: babel parses a given string in a given locale but does not find numbers in text,
nor can it tell "1.689" from "1,689" from the text's own conventions
(:mod:`pytest_ragv2.scoring.numbers` does, and is reused here). Dates in free text at
quarter and half-year granularity in three languages, and the canonical form of
identifiers, have no maintained library; ``dateparser`` parses a given string (with a
large import and locale guessing) but neither finds dates in text with their spans nor
reads "T1 2026" or "2. Halbjahr 2026". phonenumbers' own matcher over a whole text takes
about 0.7 ms per KB even without a phone number in it, and with a German region reads
"1 689 000" and "06.10.2025" as phone numbers, so it runs only on candidates.

The three libraries are imported on first use (phonenumbers only when a text holds a
phone candidate); importing this module costs none of them.

Cost
----
``benchmarks/bench_values.py``: about 0.6 ms per KB of a typical answer (a handful of
values) and 1.2 ms per KB of a dense one (30 values per KB), normalisation included, on
the project's 2-core machine; the first read in a process adds about 30 ms (babel's month
names, text2num), the first phone candidate about 20 ms (phonenumbers). Every pattern
starts with a character class or literals, so ``re`` skips to where it may match; what may
not stand before a match is checked in code.
"""

from __future__ import annotations

import itertools
import re
import unicodedata
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import date
from decimal import Decimal, InvalidOperation
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

from pytest_ragv2.gold.kinds import CLAIM_KINDS, ClaimKind
from pytest_ragv2.scoring.identifiers import TypedIdentifier, typed_identifiers, url_key
from pytest_ragv2.scoring.markers import CITATION_MARKER, FILENAME, LIST_MARKER
from pytest_ragv2.scoring.normalisation import Normalised, normalise
from pytest_ragv2.scoring.numbers import UNIT_DIMENSIONS, normalise_unit, read_numbers, unit_after

if TYPE_CHECKING:
    from pytest_ragv2.scoring.numbers import Num

# the kinds of value are the gold's claim kinds: one list for the schema and the reader
ValueKind = ClaimKind
VALUE_KINDS: tuple[ValueKind, ...] = CLAIM_KINDS
Granularity = Literal["day", "month", "quarter", "half", "year"]


@dataclass(frozen=True, slots=True)
class Value:
    """One typed value of a text (rules in the module docstring)."""

    kind: ValueKind
    key: str
    """The canonical form: equal values have equal keys, different values different keys."""
    span: tuple[int, int]
    """Where the value is written, in the original text."""
    text: str
    """The original text of the span."""
    amount: Decimal | None = None
    """Numeric kinds: the value in the dimension's base unit."""
    dimension: str | None = None
    """Numeric kinds: the dimension ("s", "months", "EUR", "%", ...); dates: the
    granularity ("day", "month", "quarter", "half", "year")."""
    precision: Decimal | None = None
    """Numeric kinds: the step of the last digit written, in the base unit ("5,76 M€":
    10000; "99,7 %": 0.1; "1,5 an": 1.2 months)."""
    ambiguous: bool = False
    """The reading rests on a guess: "1,689" or a numeric date with no language to decide."""
    alternative: str | None = None
    """The key of the other reading of an ambiguous value."""
    implicit: bool = False
    """Said with no number ("every hour", "jeden Monat"): a value a claim may ask for, but no
    figure the answer states for grounding to check."""


# =========================================================================== helpers


def _alternatives(text: str) -> tuple[str, ...]:
    """The spellings of a table written as one string, separated by ``|``."""
    return tuple(text.split("|"))


def _tidy(amount: Decimal) -> Decimal:
    """``amount`` without trailing zeros, an integer without exponent (1000, not 1E+3)."""
    integral = amount.to_integral_value()
    if amount != integral:
        return amount.normalize()
    try:
        return integral.quantize(Decimal(1))
    except InvalidOperation:  # more digits than the context's precision
        return integral


def _plain(amount: Decimal) -> str:
    """``amount`` in plain decimal notation, without exponent or trailing zeros."""
    text = format(amount.normalize(), "f")
    return "0" if text in ("-0", "0") else text


def _primary(lang: str | None) -> str:
    return re.split(r"[-_]", lang.strip().lower(), maxsplit=1)[0] if lang else ""


def _region(lang: str | None) -> str:
    parts = re.split(r"[-_]", lang.strip().lower()) if lang else []
    return parts[1] if len(parts) > 1 else ""


class _Collector:
    """The values found so far and the original characters they (or blocked text) cover."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.covered = bytearray(len(text))
        self.values: list[Value] = []

    def free(self, span: tuple[int, int]) -> bool:
        start, end = span
        return end > start and self.covered.find(1, start, end) < 0

    def block(self, span: tuple[int, int]) -> None:
        start, end = span
        if end > start:
            self.covered[start:end] = b"\x01" * (end - start)

    def add(self, kind: ValueKind, key: str, span: tuple[int, int], **fields: Any) -> bool:
        if not self.free(span):
            return False
        self.block(span)
        self.values.append(Value(kind, key, span, self.text[span[0] : span[1]], **fields))
        return True


# =========================================================================== typed identifiers


def _typed(text: str, found: _Collector) -> list[TypedIdentifier]:
    """E-mail addresses, URLs and IBANs; the part numbers are returned, to be added after the
    phone numbers (a phone number written "0711-123-450" is no part number)."""
    parts = []
    for item in typed_identifiers(text, support=True, phones=False):
        if item.type == "email":
            found.add("email", "email:" + item.text.casefold(), item.span)
        elif item.type == "url":
            found.add("url", "url:" + url_key(item.text), item.span)
        elif item.type == "iban":
            compact = "".join(_GROUP.findall(unicodedata.normalize("NFKC", item.text))).upper()
            found.add("identifier", "identifier:" + compact, item.span)
        elif item.type == "part":
            parts.append(item)
    return parts


def _parts(parts: list[TypedIdentifier], found: _Collector) -> None:
    for item in parts:
        found.add("identifier", "identifier:" + identifier_key(item.text), item.span)


_EXTENSION = re.compile(r"\.(?:pdf|docx?|xlsx?|pptx?|md|json|csv|txt|html?|odt|ods)(?!\w)", re.I)
_NAME_BEFORE = re.compile(r"[\w][\w.-]*$")


# a number naming a part of a document ("Tabelle 1", "article 2", "section 6.2", "p. 3") points
# into the source the way a citation marker does: it is no value of the answer
_DOCUMENT_PART = re.compile(
    r"(?<![^\W\d_])(?:tabelle|tableau|table|tab\.|abschnitt|section|sect\.|article|artikel"
    r"|art\.|annexe?|anhang|appendix|chapter|chapitre|kapitel|figure|abbildung|abb\.|fig\."
    r"|page|seite|p\.|s\.|§|ziffer|footnote|fu(?:ß|ss)note|ligne|zeile|row|colonne|spalte"
    r"|column|clause)\s?\d+(?:\.\d+)*(?![\d.,]\d|[^\W\d_])",
    re.IGNORECASE,
)


def _block_markers(text: str, found: _Collector) -> None:
    """Filenames ("datenblatt-tvs-75.pdf", as :data:`answer_text.FILENAME` reads them: found
    from their extension, the name looked up before it), citation markers and the numbers
    of document parts (:data:`_DOCUMENT_PART`)."""
    for part in _DOCUMENT_PART.finditer(text):
        found.block(part.span())
    for extension in _EXTENSION.finditer(text):
        start = extension.start()
        name = _NAME_BEFORE.search(text, max(0, start - 120), start)
        if name is not None:
            match = FILENAME.match(text, name.start())
            if match is not None:
                found.block(match.span())
    if "[" in text or any("\ue000" <= char <= "\uf8ff" for char in text if char > "\ud7ff"):
        for match in CITATION_MARKER.finditer(text):
            found.block(match.span())


# =========================================================================== phones

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


# =========================================================================== dates

_ORDINALS: dict[str, int] = {
    **dict.fromkeys(("1er", "1re", "1ère", "1ere", "premier", "première", "premiere"), 1),
    **dict.fromkeys(("1.", "erste", "ersten", "erstes", "erster", "erstem", "1st", "first"), 1),
    **dict.fromkeys(("2e", "2ème", "2eme", "2nd", "2nde", "2d", "deuxième", "deuxieme"), 2),
    **dict.fromkeys(("second", "seconde", "2.", "zweite", "zweiten", "zweites", "zweiter"), 2),
    **dict.fromkeys(("3e", "3ème", "3eme", "3rd", "troisième", "troisieme", "third", "3."), 3),
    **dict.fromkeys(("dritte", "dritten", "drittes", "dritter"), 3),
    **dict.fromkeys(("4e", "4ème", "4eme", "4th", "quatrième", "quatrieme", "fourth", "4."), 4),
    **dict.fromkeys(("vierte", "vierten", "viertes", "vierter"), 4),
    # the last of the periods: the fourth quarter, the second half (0: read by the period)
    **dict.fromkeys(("last", "final", "dernier", "derniere", "dernière", "letzte"), 0),
    **dict.fromkeys(("letzten", "letztes", "letzter"), 0),
}
_QUARTER_WORDS = r"(?:quartals?|quarter|trimestre)"
_HALF_WORDS = r"(?:halbjahr(?:es)?|jahreshälfte|hälfte|semestre|half[- ]?year|half|moitié)"
_PERIOD_OF = r"(?: (?:de l'année|de l'an|des jahres|of the year|de|du|of))?"
# what may stand before a year that makes it a date ("en 2026", "seit 2019", "since 2019")
_YEAR_CONTEXT = (
    # fr
    *_alternatives(
        "en|depuis|dès|avant|après|jusqu'en|jusqu'à|fin|début|mi|courant|l'année|année|l'an"
        "|exercice|d'ici|à partir de|au cours de|entre|printemps|été|automne|hiver"
    ),
    # de
    *_alternatives(
        "im|im jahr|im jahre|seit|bis|ab|vor|nach|jahr|jahres|ende|anfang|mitte|stand"
        "|wurde|wurden|wird|werden"
        "|geschäftsjahr|gj|von|zwischen|frühjahr|sommer|herbst|winter"
    ),
    # en
    *_alternatives(
        "in|since|until|till|by|before|after|from|during|year|end of|beginning of|start of"
        "|early|late|mid|as of|fiscal|fy|between|spring|summer|autumn|fall"
    ),
)
_YEAR_RANGE = re.compile(r" ?- ?(?P<year>19\d\d|20\d\d)(?![\w]|[.,]\d)")
_DE_BEFORE = re.compile(r"(?<![\w'])de $")
_FISCAL = re.compile(r"(?<![\w])(?:fy|gj)$")
_A_YEAR_AFTER = re.compile(r" (?:à|au) (?:19|20)\d\d(?!\d|[.,]\d)")
_YEAR_NEXT = re.compile(
    r"(?: ?(?:-|/)|,| (?:à|au|bis|to|and|und|et|ou|or|oder|through|jusqu'à|jusqu'en)) ?"
    r"(?P<year>19\d\d|20\d\d)(?!\d|[.,]\d)"
)


class _DateHit(NamedTuple):
    start: int  # normalised
    end: int
    granularity: Granularity
    key: str
    ambiguous: bool = False
    alternative: str | None = None


def _fold_accents(text: str) -> str:
    decomposed = unicodedata.normalize("NFD", text)
    return unicodedata.normalize(
        "NFC", "".join(c for c in decomposed if not unicodedata.combining(c))
    )


@lru_cache(maxsize=1)
def month_names() -> dict[str, int]:
    """Every normalised spelling of a month name in fr, de and en (babel's wide and
    abbreviated names, format and stand-alone), also without accents and final dot."""
    from babel.dates import get_month_names

    names: dict[str, int] = {}
    for locale in ("fr", "de", "en"):
        for width in ("wide", "abbreviated"):
            for context in ("format", "stand-alone"):
                for number, name in get_month_names(width, context, locale).items():
                    spelling = normalise(str(name)).text.rstrip(".")
                    for form in (spelling, _fold_accents(spelling)):
                        if len(form) >= 3:
                            names.setdefault(form, int(number))
    return names


_DateGuard = Literal["number", "year", ""]


class _DatePattern(NamedTuple):
    regex: re.Pattern[str]
    form: str
    gate: str  # the text must match _GATES[gate] or hold this literal ("": always tried)
    guard: _DateGuard  # what may not stand right before a match (checked in code)


# One scan decides for a whole form: a numeric date needs a digit, a separator and a digit;
# a quarter or half code a letter and a digit side by side; a period in words its word.
_GATES = {
    "numeric": re.compile(r"\d[./-]\d"),
    "code": re.compile(r"[qths](?=[1-4])|[1-4](?=[qh])"),
    "period": re.compile(r"quart|trimest|halbj|hälfte|semest|half|moitié"),
}
_Y = r"(?:1[89]|20|21)\d\d"
_AFTER_YEAR = r"(?!\d|[.,]\d)"
_AFTER_NUMERIC = r"(?![\w]|[-/.,]\d)"
_DAY = r"(?P<day>3[01]|[12]\d|0?[1-9])"
# a month name starts with one of these (fr, de, en; also without accents: a test checks)
_MONTH_WORD = r"(?P<month>[adfjmnos][^\W\d_]{2,9})"
_MONTH_BEFORE_YEAR = re.compile(
    rf"(?<![^\W\d_]){_MONTH_WORD}\.?,? "
    r"(?:de l'annee |de l'année |des jahres |of the year |de |of )?$"
)
_MONTH_BEFORE_DAY = re.compile(rf"(?<![^\W\d_]){_MONTH_WORD}\.? ?$")
# after a day whose next word is no month: "October 6, 2025", "Oct 6th" (month before)
_MDY_AFTER_DAY = re.compile(
    rf"(?P<suffix>st|nd|rd|th)?(?:,? (?P<year>{_Y}){_AFTER_YEAR}|(?<=[a-z])(?![\w]))"
)


# Every pattern starts with one character class or with literals (so re skips to where it
# may match: a pattern starting with an alternation of classes, an optional character or
# a lookbehind is tried at every position of the text, several times the cost); what may
# not precede a match is checked after it. Month-name forms are anchored on their digits
# and periods in words on their period word; the month or ordinal is looked up around them.
@lru_cache(maxsize=1)
def _date_patterns() -> tuple[_DatePattern, ...]:
    patterns: tuple[tuple[str, str, str, _DateGuard], ...] = (
        # 2025-10-06, 2025/10/06
        (
            rf"(?P<iy>\d\d{{3}})(?P<isep>[-/])(?P<im>\d\d?)(?P=isep)(?P<id>\d\d?){_AFTER_NUMERIC}",
            "numeric",
            "numeric",
            "number",
        ),
        # 06/10/2025, 6.10.2025, 06-10-2025, 6.10.25
        (
            rf"(?P<a>\d\d?)(?P<sep>[./-])(?P<b>\d\d?)(?P=sep)(?P<ny>\d{{4}}|(?<=[./])\d\d)"
            rf"{_AFTER_NUMERIC}",
            "numeric",
            "numeric",
            "number",
        ),
        # 10/2025, 04.2025
        (
            rf"(?P<mm>\d\d?)(?P<msep>[/.])(?P<my>{_Y}){_AFTER_NUMERIC}",
            "numeric",
            "numeric",
            "number",
        ),
        # 6 octobre 2025, 1er octobre 2025, 6. Oktober 2025, 6th of October 2025, le 6 octobre
        # (an abbreviation's dot belongs to the date only before the year: "oct. 2025"); else
        # a month before the day: "October 6, 2025", "Oct 6th"
        (
            # "of" only after an ordinal: "the 1st of April", not "revision 1 of April"
            rf"(?P<day>\d\d?)(?:(?:(?:er|re|\.)? ?|(?:st|nd|rd|th) ?(?:of )?){_MONTH_WORD}"
            rf"(?:\.(?= ?\d)|(?![\w]))(?:,? (?P<year>{_Y}){_AFTER_YEAR})?"
            rf"|(?P<suffix>st|nd|rd|th)?(?:,? (?P<year2>{_Y}){_AFTER_YEAR}|(?<=[a-z])(?![\w])))",
            "day",
            "",
            "number",
        ),
        # "octobre 2025", "Oct. 2025", "October of 2025"; a year in a date context ("en 2026",
        # "seit 2019", "mi-2026") or a range ("2019-2021"): looked up around the year
        (rf"(?P<year>{_Y}){_AFTER_YEAR}", "year", "", "year"),
        (r"\((?P<year>19\d\d|20\d\d)\)", "bare-year", "(", ""),
        # Q1 2026, T1 2026, Q1/2026, Q1-2026, Q1 of 2026, Q1'26, Q1/26, S2 2026, H2 2026
        (
            r"(?P<letter>[qths])(?P<n>[1-4])(?P<sep> ?[/-] ?| |'|)(?:of |de )?"
            rf"(?:(?P<year>{_Y}){_AFTER_YEAR}|(?P<yy>\d\d)(?![\w]|[.,]\d))",
            "code",
            "code",
            "number",
        ),
        # 1Q 2026, 1Q26, 2H 2026
        (
            r"(?P<n>[1-4])(?P<letter>[qh])(?P<sep> ?)"
            rf"(?:(?P<year>{_Y}){_AFTER_YEAR}|(?P<yy>\d\d)(?![\w]|[.,]\d))",
            "code",
            "code",
            "number",
        ),
        # 2026-Q1, 2026 H2
        (
            r"(?P<year>\d\d{3}) ?[-/ ] ?(?P<letter>[qths])(?P<n>[1-4])(?![\w])",
            "code",
            "code",
            "number",
        ),
        # 1. Quartal 2026, ersten Quartal 2026, 1er trimestre 2026, first quarter of 2026,
        # 2. Halbjahr 2026, zweite Jahreshälfte 2026, second semestre 2026, second half of 2026
        (rf"{_QUARTER_WORDS}|{_HALF_WORDS}", "period", "period", ""),
    )
    return tuple(
        _DatePattern(re.compile(pattern), form, gate, guard)
        for pattern, form, gate, guard in patterns
    )


@lru_cache(maxsize=1)
def _ordinal_before() -> re.Pattern[str]:
    ordinals = "|".join(re.escape(word) for word in sorted(_ORDINALS, key=len, reverse=True))
    return re.compile(rf"(?<![\w.,])(?P<ord>{ordinals}) ?$")


_PERIOD_YEAR = re.compile(rf"{_PERIOD_OF} (?P<year>{_Y}){_AFTER_YEAR}")
_QUARTER_WORD = re.compile(_QUARTER_WORDS)


@lru_cache(maxsize=1)
def _year_context() -> re.Pattern[str]:
    words = "|".join(re.escape(word) for word in sorted(_YEAR_CONTEXT, key=len, reverse=True))
    return re.compile(rf"(?<![\w'])(?:{words})(?: |-)$")


def _guarded(norm: str, start: int, guard: _DateGuard) -> bool:
    """May a match start at ``start``? Not inside a number or an identifier ("1.6.10.2025",
    "DOC-2025-10-06"); a year also after "mi-" and "mid-"."""
    if not guard or start == 0:
        return True
    before = norm[start - 1]
    if guard == "year" and (
        (before == "-" and norm[max(0, start - 4) : start - 1] in ("mi", "mid"))
        or _FISCAL.search(norm, max(0, start - 3), start)
    ):
        return True  # "mi-2026", "mid-2026", "FY2026", "GJ2026"
    if before.isalnum() or before in "_.,":
        return False
    return not (before in "-/" and start >= 2 and norm[start - 2].isalnum())


def _matches(pattern: _DatePattern, norm: str, gates: dict[str, bool]) -> Iterator[re.Match[str]]:
    if pattern.gate:
        if pattern.gate not in gates:
            gate = _GATES.get(pattern.gate)
            gates[pattern.gate] = (
                pattern.gate in norm if gate is None else gate.search(norm) is not None
            )
        if not gates[pattern.gate]:
            return
    yield from _guarded_matches(
        pattern.regex, norm, lambda text, start: _guarded(text, start, pattern.guard)
    )


_HAS_DIGIT = re.compile(r"\d")


def _day_key(year: int, month: int, day: int) -> str | None:
    try:
        return f"date:day:{date(year, month, day).isoformat()}"
    except ValueError:
        return None


def _date_order(lang: str | None) -> tuple[str, bool]:
    """("dmy" or "mdy", whether the language fixes it) for numeric dates."""
    primary, region = _primary(lang), _region(lang)
    if primary in ("fr", "de"):
        return "dmy", True
    if primary == "en" and region == "us":
        return "mdy", True
    if primary == "en" and region:
        return "dmy", True
    return "dmy", False


def _numeric_day(
    start: int, end: int, first: int, second: int, year: int, lang: str | None
) -> _DateHit | None:
    dmy = _day_key(year, second, first)
    mdy = _day_key(year, first, second)
    order, fixed = _date_order(lang)
    preferred, other = (dmy, mdy) if order == "dmy" else (mdy, dmy)
    if preferred is None or other is None or preferred == other:
        key = preferred or other
        return None if key is None else _DateHit(start, end, "day", key)
    if fixed:
        return _DateHit(start, end, "day", preferred)
    return _DateHit(start, end, "day", preferred, ambiguous=True, alternative=other)


def _numeric(match: re.Match[str], lang: str | None) -> Iterator[_DateHit]:
    start, end = match.span()
    groups = match.groupdict()
    if groups.get("iy"):
        key = _day_key(int(match["iy"]), int(match["im"]), int(match["id"]))
        if key is not None:
            yield _DateHit(start, end, "day", key)
    elif groups.get("a"):
        year = int(match["ny"])
        if len(match["ny"]) == 2:
            if match["sep"] == "-":
                return
            year += 2000
        hit = _numeric_day(start, end, int(match["a"]), int(match["b"]), year, lang)
        if hit is not None:
            yield hit
    else:
        month = int(match["mm"])
        if 1 <= month <= 12 and (match["msep"] == "/" or len(match["mm"]) == 2):
            yield _DateHit(start, end, "month", f"date:month:{match['my']}-{month:02d}")


def _day_month(
    start: int, end: int, day: int, month_text: str, year: str | None, dmy: bool
) -> Iterator[_DateHit]:
    month = month_names().get(month_text)
    if month is None:
        return
    if year is None:
        # "3 may be", "7 sept jours": a verb or a number, not a day without its year
        if dmy and month_text in ("may", "march", "sept", "mar"):
            return
        try:
            date(2000, month, day)  # a leap year: "29 février" is a day
        except ValueError:
            return
        yield _DateHit(start, end, "day", f"date:day:--{month:02d}-{day:02d}")
        return
    key = _day_key(int(year), month, day)
    if key is not None:
        yield _DateHit(start, end, "day", key)


def _day(match: re.Match[str], norm: str) -> Iterator[_DateHit]:
    day = int(match["day"])
    if not 1 <= day <= 31:
        return
    if match["month"] and match["month"] in month_names():
        yield from _day_month(match.start(), match.end(), day, match["month"], match["year"], True)
        return
    after = _MDY_AFTER_DAY.match(norm, match.end("day"))
    if after is None:
        return
    before = _MONTH_BEFORE_DAY.search(norm, max(0, match.start() - 14), match.start())
    if before is not None:
        yield from _day_month(
            before.start(), after.end(), day, before["month"], after["year"], False
        )


@lru_cache(maxsize=1)
def _day_words() -> dict[str, int]:
    """The days of a month in words, as dates write them: English and German ordinals
    ("the sixth of October", "am sechsten Oktober"), French cardinals ("le six octobre")."""
    en = [
        "first",
        "second",
        "third",
        "fourth",
        "fifth",
        "sixth",
        "seventh",
        "eighth",
        "ninth",
        "tenth",
        "eleventh",
        "twelfth",
        "thirteenth",
        "fourteenth",
        "fifteenth",
        "sixteenth",
        "seventeenth",
        "eighteenth",
        "nineteenth",
        "twentieth",
    ]
    days: dict[str, int] = {word: number for number, word in enumerate(en, 1)}
    for number, word in enumerate(en[:9], 1):
        days[f"twenty-{word}"] = days[f"twenty {word}"] = 20 + number
    days.update({"thirtieth": 30, "thirty-first": 31, "thirty first": 31})
    de_units = ("ein", "zwei", "drei", "vier", "fünf", "sechs", "sieben", "acht", "neun")
    de = [
        "erst",
        "zweit",
        "dritt",
        "viert",
        "fünft",
        "sechst",
        "siebt",
        "acht",
        "neunt",
        "zehnt",
        "elft",
        "zwölft",
        "dreizehnt",
        "vierzehnt",
        "fünfzehnt",
        "sechzehnt",
        "siebzehnt",
        "achtzehnt",
        "neunzehnt",
        "zwanzigst",
    ]
    stems: dict[str, int] = {stem: number for number, stem in enumerate(de, 1)}
    stems["siebent"] = 7
    for number, unit in enumerate(de_units, 1):
        stems[f"{unit}undzwanzigst"] = 20 + number
    stems.update({"dreissigst": 30, "einunddreissigst": 31})
    for stem, number in stems.items():
        for ending in ("e", "en", "er", "es", "em"):
            days[stem + ending] = number
            days[_fold_accents(stem) + ending] = number
    fr = [
        "premier",
        "deux",
        "trois",
        "quatre",
        "cinq",
        "six",
        "sept",
        "huit",
        "neuf",
        "dix",
        "onze",
        "douze",
        "treize",
        "quatorze",
        "quinze",
        "seize",
        "dix-sept",
        "dix-huit",
        "dix-neuf",
        "vingt",
    ]
    days.update({word: number for number, word in enumerate(fr, 1)})
    for number, word in enumerate(fr[1:9], 2):
        days[f"vingt-{word}"] = 20 + number
    days.update({"vingt et un": 21, "vingt-et-un": 21, "trente": 30, "trente et un": 31})
    return days


@lru_cache(maxsize=1)
def _day_word_before() -> re.Pattern[str]:
    words = "|".join(re.escape(word) for word in sorted(_day_words(), key=len, reverse=True))
    return re.compile(rf"(?<![\w-])(?P<day>{words}) (?:of (?:the )?)?$")


def _year(match: re.Match[str], norm: str) -> Iterator[_DateHit]:
    start, end = match.span()
    year = int(match["year"])
    months = month_names()
    # "octobre 2025", "Oct. 2025", "October of 2025"; "am sechsten Oktober 2025" to the day
    before = _MONTH_BEFORE_YEAR.search(norm, max(0, start - 32), start)
    if before is not None and before["month"] in months:
        month = months[before["month"]]
        day = _day_word_before().search(norm, max(0, before.start() - 24), before.start())
        key = _day_key(year, month, _day_words()[day["day"]]) if day is not None else None
        if day is not None and key is not None:
            yield _DateHit(day.start(), end, "day", key)
        else:
            yield _DateHit(before.start(), end, "month", f"date:month:{year:04d}-{month:02d}")
    if not 1900 <= year <= 2099:
        return
    # "2019-2021"
    following = _YEAR_RANGE.match(norm, end)
    if following is not None and int(following["year"]) > year:
        yield _DateHit(start, end, "year", f"date:year:{year}")
        yield _DateHit(*following.span("year"), "year", f"date:year:{following['year']}")
        return
    # "en 2026", "seit 2019", "since 2019", "de 2019 à 2021"
    window = max(0, start - 24)
    if (
        _year_context().search(norm, window, start)
        or _FISCAL.search(norm, max(0, start - 3), start)
    ) or (_DE_BEFORE.search(norm, window, start) and _A_YEAR_AFTER.match(norm, end)):
        yield _DateHit(start, end, "year", f"date:year:{year}")


def _code(match: re.Match[str]) -> Iterator[_DateHit]:
    letter, number = match["letter"], int(match["n"])
    groups = match.groupdict()
    if groups.get("year"):
        year = int(match["year"])
    elif groups.get("yy") and (
        match["sep"] in ("'", "/", "-") or (match.start("n") == match.start() and not match["sep"])
    ):
        year = 2000 + int(match["yy"])  # "Q1'26", "Q1/26", "1Q26"
    else:
        return
    quarter = letter in "qt"
    if not quarter and number > 2:
        return
    if quarter:
        yield _DateHit(*match.span(), "quarter", f"date:quarter:{year}-Q{number}")
    else:
        yield _DateHit(*match.span(), "half", f"date:half:{year}-H{number}")


def _date_hit(match: re.Match[str], form: str, norm: str, lang: str | None) -> Iterator[_DateHit]:
    if form == "numeric":
        yield from _numeric(match, lang)
    elif form == "day":
        yield from _day(match, norm)
    elif form == "year":
        yield from _year(match, norm)
    elif form == "bare-year":
        yield _DateHit(*match.span("year"), "year", f"date:year:{match['year']}")
    elif form == "code":
        yield from _code(match)
    else:
        yield from _period(match, norm)


def _period(match: re.Match[str], norm: str) -> Iterator[_DateHit]:
    """A quarter or half-year in words, found from its period word: "1er trimestre 2026"."""
    start, end = match.span()
    before = _ordinal_before().search(norm, max(0, start - 14), start)
    after = _PERIOD_YEAR.match(norm, end)
    if before is None or after is None:
        return
    number, year = _ORDINALS[before["ord"]], int(after["year"])
    quarter = _QUARTER_WORD.fullmatch(match.group()) is not None
    if number == 0:  # "das letzte Quartal 2026", "the last half of 2026"
        number = 4 if quarter else 2
    if quarter:
        yield _DateHit(before.start(), after.end(), "quarter", f"date:quarter:{year}-Q{number}")
    elif number <= 2:
        yield _DateHit(before.start(), after.end(), "half", f"date:half:{year}-H{number}")


def _followed_by_unit(norm: str, end: int) -> bool:
    """Does a unit, scale or currency follow ``end`` ("2000 bar", "2000 €")?"""
    return _suffix(norm, end, None, prefixed=False).dimension is not None


def _date_hits(norm: str, lang: str | None) -> list[_DateHit]:
    if not _HAS_DIGIT.search(norm):
        return []
    hits: list[_DateHit] = []
    gates: dict[str, bool] = {}
    for pattern in _date_patterns():
        for match in _matches(pattern, norm, gates):
            for hit in _date_hit(match, pattern.form, norm, lang):
                if hit.granularity == "year" and _followed_by_unit(norm, hit.end):
                    continue
                hits.append(hit)
    hits += _month_ranges(norm)
    return hits


def _month_ranges(norm: str) -> list[_DateHit]:
    """A range of months that is exactly a quarter or a half-year, as that period ("April-
    June 2027", "d'avril à juin 2027", "von Januar bis Juni 2026"): not its last month."""
    found = []
    for match in _month_range_regex().finditer(norm):
        names = month_names()
        first, last = names[match["m1"].rstrip(".")], names[match["m2"].rstrip(".")]
        year = match["year"]
        if first % 3 == 1 and last == first + 2:
            key = f"date:quarter:{year}-Q{(first + 2) // 3}"
            found.append(_DateHit(match.start("m1"), match.end("year"), "quarter", key))
        elif first in (1, 7) and last == first + 5:
            key = f"date:half:{year}-H{1 if first == 1 else 2}"
            found.append(_DateHit(match.start("m1"), match.end("year"), "half", key))
    return found


@lru_cache(maxsize=1)
def _month_range_regex() -> re.Pattern[str]:
    months = "|".join(re.escape(name) for name in sorted(month_names(), key=len, reverse=True))
    return re.compile(
        rf"(?<![\w])(?P<m1>{months})\.?"
        r"(?: ?[-\u2013\u2014/] ?| (?:to|through|till|until|bis|à|a|au|et|und|and) )"
        rf"(?P<m2>{months})\.? (?P<year>(?:19|20)\d\d)(?!\d)"
    )


def _dates(norm: Normalised, lang: str | None, found: _Collector) -> None:
    hits = _date_hits(norm.text, lang)
    # the longest reading first: "6 octobre 2025" is a day, not the month "octobre 2025"
    hits.sort(key=lambda hit: (hit.start - hit.end, hit.start))
    years: list[_DateHit] = []
    for hit in hits:
        if _add_date(norm, hit, found) and hit.granularity == "year":
            years.append(hit)
    # the second year of a range or list: "seit 2019 und 2020", "de 2019 à 2021"
    while years:
        hit = years.pop()
        match = _YEAR_NEXT.match(norm.text, hit.end)
        if match is None or _followed_by_unit(norm.text, match.end()):
            continue
        following = _DateHit(*match.span("year"), "year", f"date:year:{match['year']}")
        if _add_date(norm, following, found):
            years.append(following)


def _add_date(norm: Normalised, hit: _DateHit, found: _Collector) -> bool:
    span = norm.original_span(hit.start, hit.end)
    return found.add(
        "date",
        hit.key,
        span,
        dimension=hit.granularity,
        ambiguous=hit.ambiguous,
        alternative=hit.alternative,
    )


def _block_list_markers(text: str, found: _Collector) -> None:
    for match in LIST_MARKER.finditer(text):
        found.block(match.span())


# =========================================================================== times of day

_HOUR = r"(?:[01]?\d|2[0-3])"
# an hour with the mark of a clock: minutes after a colon, "h" and minutes, "Uhr", a.m./p.m.
_CLOCK = re.compile(
    rf"(?<![\w.,:/])(?P<h>{_HOUR})"
    r"(?:"
    r":(?P<m1>[0-5]\d)(?![\d]|[:.,]\d)(?:\s?(?:uhr|h)(?![^\W\d_]))?"
    r"|\s?h\s?(?P<m2>[0-5]\d)(?![\d]|[.,]\d)"
    r"|\.(?P<m3>[0-5]\d)\s?uhr(?![^\W\d_])"
    r"|\s?uhr(?![^\W\d_])"
    r"|(?::(?P<m4>[0-5]\d))?\s?(?P<mer>a\.\s?m\.?|p\.\s?m\.?|am|pm)(?![^\W\d_])"
    r")"
)
# a bare hour (or "9 h") before a range's separator, the range's other end following
_RANGE_START = re.compile(
    rf"(?<![\w.,:/])(?P<h>{_HOUR})(?:[:.h](?P<m>[0-5]\d))?(?:\s?h)?"
    r"(?:\s?[-\u2013\u2014]\s?|\s(?:bis|to|till|until|und|and|et|à|a)\s)$"
)
# "de 9 h à 18 h", "entre 9 h et 18 h", "9 h - 18 h": both ends written "h" alone
_H_RANGE = re.compile(
    rf"(?<![\w.,:/])(?P<a>{_HOUR})\s?h(?:\s?[-\u2013]\s?|\s(?:à|a|et)\s)"
    rf"(?P<b>{_HOUR})\s?h(?![^\W\d_]|\s?\d)"
)


# what puts "9 h 30" on the clock: a preposition of time before it, or a range around it
_CLOCK_BEFORE = re.compile(
    r"(?:\b(?:a|à|vers|des|dès|jusqu'a|jusqu'à|avant|apres|après|entre|et|um|ab|bis|gegen"
    r"|at|until|by|before|after|to|und|and)|[-\u2013])\s?$"
)
_RANGE_AFTER = re.compile(r"\s?(?:[-\u2013]|\b(?:a|à|bis|to|et|und|and)\b)\s?\d")
_RANGE_END = re.compile(
    rf"\s?(?:[-\u2013]|\s(?:a|à|bis|to|et|und|and)\s)\s?(?P<h>{_HOUR})\s?h(?![^\W\d_]|\s?\d)"
)


def _clock_context(text: str, start: int, end: int) -> bool:
    """Whether the hours and minutes at ``text[start:end]`` are a time of day."""
    if _CLOCK_BEFORE.search(text, max(0, start - 10), start):
        return True
    return _RANGE_AFTER.match(text, end) is not None


def _time_key(hour: int, minute: int, meridiem: str | None) -> str:
    if meridiem is not None:
        if meridiem.startswith("p") and hour < 12:
            hour += 12
        elif meridiem.startswith("a") and hour == 12:
            hour = 0
    return f"time:{hour:02d}:{minute:02d}"


# an hour in words (or digits) with the mark of a clock: "vierzehn Uhr", "nine o'clock",
# "à neuf heures", "à 9 heures"
_WORD_CLOCK = re.compile(
    r"(?<![\w.,:-])(?P<w>[^\W_]+(?:-[^\W\d_]+)*) ?(?P<mark>uhr|o'clock|o\u2019clock|heures?)"
    r"(?![^\W\d_])"
)
# what makes hours a duration after all: a rate or a kind of hours ("6 heures par mois",
# "4 heures ouvrées", "2 heures de travail")
_DURATION_AFTER = re.compile(r" ?(?:par|per|pro|/|ouvr|de |d'|cumul)")
# minutes in words after an hour on the clock ("onze heures trente")
_MINUTE_WORDS = re.compile(r" (?P<m>[^\W\d_]+(?:-[^\W\d_]+)*)(?![\w-])")
# the start of a range before it ("von neun bis", "from nine to", "de 9 à")
_WORD_RANGE_START = re.compile(
    r"(?<![\w.,:-])(?P<w>[^\W_]+(?:-[^\W\d_]+)*)"
    r"(?: ?[-\u2013] ?| (?:bis|to|till|until|à|a|et|und|and) )$"
)


def _hour_word(word: str, lang: str | None) -> int | None:
    """The hour a number word (or digits) names (0 to 24), None when it names none."""
    if word.isdigit():
        return int(word) if len(word) <= 2 and int(word) <= 24 else None
    if word in _JOINERS:
        return None
    text2num, _ = _text2num()
    for code in _languages(lang):
        if not _number_word(word, code):
            continue
        value = int(text2num(word, code))
        return value if 0 <= value <= 24 else None
    return None


def _word_times(norm: Normalised, lang: str | None, found: _Collector) -> None:
    """Hours written in words or digits with "Uhr" or "o'clock", and the start of a range
    before one ("von neun bis vierzehn Uhr", "from nine to five o'clock"); with "heures" only
    after a preposition of time ("à neuf heures"; "de 2 à 3 heures" may be a duration).
    Minutes in words are not read."""
    text = norm.text
    if "uhr" not in text and "clock" not in text and "heure" not in text:
        return
    for match in _WORD_CLOCK.finditer(text):
        hour = _hour_word(match.group("w"), lang)
        if hour is None:
            continue
        mark = match.group("mark")
        if mark == "uhr" and match.group("w").isdigit():
            continue  # "17 Uhr" is the clock reader's, with its ranges ("9.30 und 17 Uhr")
        before = _WORD_RANGE_START.search(text, max(0, match.start() - 24), match.start())
        if mark in ("heure", "heures") and (
            (before is not None and _hour_word(before.group("w"), lang) is not None)
            or not _CLOCK_BEFORE.search(text, max(0, match.start() - 10), match.start())
            or _DURATION_AFTER.match(text, match.end())
        ):
            continue  # "pendant neuf heures", "en 2 à 3 heures", "jusqu'à 6 heures par mois"
        minute, end = 0, match.end()
        after = _MINUTE_WORDS.match(text, end)
        if after is not None:  # "à onze heures trente", "um neun Uhr dreißig"
            minutes = _word_value(after.group("m"), lang)
            if minutes is not None and 0 < minutes < 60:
                minute, end = int(minutes), after.end()
        if not found.add(
            "time", _time_key(hour, minute, None), norm.original_span(match.start(), end)
        ):
            continue
        first = _hour_word(before.group("w"), lang) if before is not None else None
        if before is not None and first is not None:
            span = norm.original_span(before.start("w"), before.end("w"))
            found.add("time", _time_key(first, 0, None), span)


def _times(norm: Normalised, lang: str | None, found: _Collector) -> None:
    text = norm.text
    _word_times(norm, lang, found)
    if not any(char.isdigit() for char in text):
        return
    english = _primary(lang) in ("en", "")
    for match in _H_RANGE.finditer(text):
        for group in ("a", "b"):
            hour_end = text.index("h", match.end(group)) + 1  # the hour with its "h"
            span = norm.original_span(match.start(group), hour_end)
            found.add("time", _time_key(int(match.group(group)), 0, None), span)
    for match in _CLOCK.finditer(text):
        meridiem = match.group("mer")
        if meridiem is not None and meridiem in ("am", "pm") and not english:
            continue  # "9 am Montag": German "am"
        minute = next((match.group(g) for g in ("m1", "m2", "m3", "m4") if match.group(g)), "0")
        hour = int(match.group("h"))
        if meridiem is not None and hour > 12:
            continue
        key = _time_key(hour, int(minute), meridiem)
        if match.group("m2") and not _clock_context(text, match.start(), match.end()):
            # "tient 11 h 30", "en 2 h 15": hours and minutes of a duration, not a time
            seconds = hour * 3600 + int(minute) * 60
            found.add(
                "quantity",
                f"quantity:s:{seconds}",
                norm.original_span(*match.span()),
                amount=Decimal(seconds),
                dimension="s",
                precision=Decimal(60),
            )
            continue
        if not found.add("time", key, norm.original_span(*match.span())):
            continue
        end = _RANGE_END.match(text, match.end())
        if end is not None:  # "de 9 h 30 à 18 h": the end of the range is on the clock too
            hour_end = text.index("h", end.end("h")) + 1
            found.add(
                "time",
                _time_key(int(end.group("h")), 0, None),
                norm.original_span(end.start("h"), hour_end),
            )
        start = _RANGE_START.search(text, max(0, match.start() - 16), match.start())
        if start is not None:
            first = int(start.group("h"))
            if meridiem is not None and first > 12:
                continue
            # "10 to 3 p.m.": the start keeps its morning when it is later than the end
            if meridiem is not None and meridiem.startswith("p") and first > hour:
                meridiem = "a"
            first_key = _time_key(first, int(start.group("m") or 0), meridiem)
            written_end = start.end("m") if start.group("m") else start.end("h")
            found.add("time", first_key, norm.original_span(start.start("h"), written_end))


# =========================================================================== identifiers

_GROUP = re.compile(r"[^\W_]+")
_SPACE_RUN = re.compile(r"\s+")
_PLAIN_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
_PLAIN_TOKEN = re.compile(r"[(\[\"'«„]?[-+]?\d+(?:[.,']\d+)*[%€$£)\]\"'»“.,;:!?]*")
_KEY_GROUP = re.compile(r"[^\W\d_]+|\d+")
_ID_SEPARATORS = "-/.\u2010\u2011"
_DIGIT_WORD = re.compile(r"(?<!\S)[^\s\d]*\d\S*")
_COMPOUND = re.compile(r"[^\W_]+(?:[-/.\u2010\u2011][^\W_]+)*")
_CAPS_BEFORE = re.compile(
    r"(?:^|(?<=[\s(\[\"'«„]))(?P<caps>[A-Z][A-Z0-9]*(?:[/\-][A-Z][A-Z0-9]*)*)[^\S\n\r]+$"
)
_CAPS_STOP = frozenset(
    {"EUR", "USD", "GBP", "CHF", "ET", "OU", "UND", "ODER", "AND", "OR", "LE", "LA", "LES"}
    | {"DE", "DU", "DES", "DER", "DIE", "DAS", "THE", "TO", "IN", "AB", "BIS", "VON"}
    | {"TVA", "MWST", "VAT", "FY", "GJ", "CA", "NR", "NO", "REF"}
)
# a number glued to a unit, scale or ordinal suffix ("48h", "3.145M", "1er", "4th"): no identifier
_NUMBER_SUFFIX = re.compile(r"[\d.,']*\d[^\W\d_]{1,4}")
_ORDINARY = re.compile(r"[^\W\d_][^\W\d_A-Z]{3,}")


def identifier_key(text: str) -> str:
    """The canonical groups of an identifier as written: capitals, each separator and each
    change between letters and digits a ``-`` ("DB-TVS75-DE-09" → "DB-TVS-75-DE-09")."""
    return "-".join(_KEY_GROUP.findall(unicodedata.normalize("NFKC", text).upper()))


def _ordinary_word(word: str) -> bool:
    """A dictionary-like word: letters only, four or more, lower-case after the first."""
    return _ORDINARY.fullmatch(word) is not None and word[1:] == word[1:].lower()


def _capital_before(text: str, start: int) -> bool:
    """Do white space and, before it, a capital letter precede ``start``?"""
    window = text[max(0, start - 8) : start]
    return window[-1:].isspace() and window.rstrip()[-1:].isupper()


def _caps_before(text: str, start: int, found: _Collector) -> int | None:
    """Where an all-capital word ending one space before ``start`` begins ("ISO 27001")."""
    if not _capital_before(text, start):
        return None
    window_start = max(0, start - 40)
    match = _CAPS_BEFORE.search(text, window_start, start)
    if match is None:
        return None
    word = match["caps"]
    if sum(char.isupper() for char in word) < 2 or word in _CAPS_STOP:
        return None
    if match.start("caps") == window_start and window_start > 0:
        return None
    if not found.free((match.start("caps"), start)):
        return None
    return match.start("caps")


def _spaced_number_ok(text: str, end: int, core: str) -> bool:
    """May the number ``core`` (ending at ``end``) follow a capital word as an identifier?
    Not a year, a decimal, a thousands group, nor a number with its unit."""
    if re.fullmatch(r"(?:19|20)\d\d", core):
        return False
    rest = text[end : end + 24]
    if re.match(r"[.,]\d|[^\S\n\r]+\d{3}(?!\d)", rest):
        return False
    tail = _SPACE_RUN.sub(" ", unicodedata.normalize("NFKC", rest).casefold()).lstrip()
    return _suffix(tail, 0, None, prefixed=False).dimension is None


def _after_capitals(
    text: str, start: int, core_start: int, core_end: int, found: _Collector
) -> tuple[int, int] | None:
    """A number right after an all-capital word ("ISO 27001", "TVS 75D") as one identifier."""
    if core_start != start or not start or not text[start - 1].isspace():
        return None
    caps = _caps_before(text, core_start, found)
    if caps is None:
        return None
    letter = _CAPITAL_AFTER.match(text, core_end)
    if letter is not None and not re.fullmatch(r"(?:19|20)\d\d", text[core_start:core_end]):
        return caps, letter.end()  # "TS 7502 L": a part number's last group, not litres
    if not _spaced_number_ok(text, core_end, text[core_start:core_end]):
        return None
    return caps, core_end


# a single capital letter after the number of a spaced identifier ("TS 7502 L", "SK 220 A")
_CAPITAL_AFTER = re.compile(r" [A-Z](?![\w/\u00b2\u00b3]|\.\w)")


def _identifier_of(text: str, start: int, end: int, found: _Collector) -> tuple[int, int] | None:
    """The identifier span within the compound ``text[start:end]``, None when it is none."""
    groups = [(m.start(), m.end(), m.group()) for m in _GROUP.finditer(text, start, end)]
    while groups and _ordinary_word(groups[0][2]):
        groups.pop(0)
    while groups and _ordinary_word(groups[-1][2]):
        groups.pop()
    if not groups:
        return None
    core_start, core_end = groups[0][0], groups[-1][1]
    core = text[core_start:core_end]
    if not any(char.isdigit() for char in core):
        return None
    if not any(char.isupper() for char in core) and any(
        re.fullmatch(r"[^\W\d_]{2,3}", group) for _, _, group in groups
    ):
        return None  # "end-2026", "10-to-90", "pre-2020": a short word and a number, in lower case
    stripped = core_start != start or core_end != end
    letters = sum(char.isalpha() for char in core)
    if core[0].isalpha() and len(core) <= 8 and normalise_unit(core) in UNIT_DIMENSIONS:
        return None  # "m3/min", "m³/h"
    if core[0].isdigit():
        if _NUMBER_SUFFIX.fullmatch(core) and _unit_or_ordinal(core):
            return None  # "48h", "3.145M", "1er", "4th"
        number, hyphen, unit = core.partition("-")
        if hyphen and re.fullmatch(r"\d+(?:[.,]\d+)?", number) and _unit_or_ordinal(number + unit):
            return None  # "22-kW-Motor", "5-bar-Ventil": a number and its unit, joined
        capitals = _after_capitals(text, start, core_start, core_end, found)
        if capitals is not None:
            return capitals  # "ISO 27001", "TVS 75-10", "TVK 220-C", "TVM 30-H2"
        if letters == 0:
            # digit groups joined by hyphens or slashes ("301-224-05"); never by dots or
            # commas ("1.689.000" is a number)
            joined = set(_GROUP.sub("", core)) <= set(_ID_SEPARATORS) - {"."}
            if joined and (len(groups) >= 3 or (stripped and len(groups) >= 2)):
                return core_start, core_end
            return None
        if _NUMBER_SUFFIX.fullmatch(core):
            return None  # "22OA", "75D" alone: a number and letters
    alnum = sum(char.isalnum() for char in core)
    # one letter: a capital and three characters at least ("F12", "A380"; not "Q4", "3x")
    if letters < 2 and not (core[0].isupper() and alnum >= 3):
        return None
    return core_start, core_end


_ORDINAL_SUFFIXES = frozenset({"er", "re", "e", "ème", "eme", "st", "nd", "rd", "th", "te"})


def _unit_or_ordinal(core: str) -> bool:
    """Is ``core`` a number glued to a unit, scale, currency or ordinal suffix?"""
    letters = core.lstrip("0123456789.,'").casefold()
    if letters in _ORDINAL_SUFFIXES:
        return True
    folded = core.casefold()
    number_end = len(core) - len(letters)
    return (
        _suffix(folded, number_end, None, prefixed=False).dimension is not None
        or _SCALE_AFTER.fullmatch(letters) is not None
    )


# two spaced models joined by a slash ("TVS 45/TVS 75"): two identifiers, not one
_SLASHED_MODELS = re.compile(
    r"(?<![\w/-])(?P<a>[A-Z][A-Z0-9]{1,5} \d+(?:-[A-Z0-9]+)*)"
    r" ?/ ?(?P<b>[A-Z][A-Z0-9]{1,5} \d+(?:-[A-Z0-9]+)*)(?![\w/-])"
)


def _identifiers(text: str, found: _Collector) -> None:
    for pair in _SLASHED_MODELS.finditer(text):
        for group in ("a", "b"):
            start, end = pair.span(group)
            found.add("identifier", "identifier:" + identifier_key(text[start:end]), (start, end))
    for word in _DIGIT_WORD.finditer(text):
        start = word.start()
        if _PLAIN_TOKEN.fullmatch(word.group()) and not _capital_before(text, start):
            continue  # "1.689,", "(2024)", "99,7": a number, no identifier
        for compound in _COMPOUND.finditer(text, word.start(), word.end()):
            if _HAS_DIGIT.search(text, compound.start(), compound.end()) is None:
                continue
            start = compound.start()
            if _PLAIN_NUMBER.fullmatch(text, start, compound.end()) and not _capital_before(
                text, start
            ):
                continue  # "1.689", "2024": a number (unless a capital word precedes it)
            if not found.free(compound.span()):
                continue
            span = _identifier_of(text, *compound.span(), found)
            if span is not None:
                found.add(
                    "identifier", "identifier:" + identifier_key(text[span[0] : span[1]]), span
                )


def _whole_identifier(text: str) -> Value | None:
    """The whole of ``text`` as one identifier (a gold value, spaced or not)."""
    stripped = text.strip()
    start = text.find(stripped) if stripped else 0
    if not re.fullmatch(r"[^\W_]+(?:(?: ?[-/.\u2010\u2011] ?|[ \u00a0\u202f])[^\W_]+)*", stripped):
        return None
    groups = _KEY_GROUP.findall(unicodedata.normalize("NFKC", stripped))
    has_digit = any(group[0].isdigit() for group in groups)
    span = (start, start + len(stripped))
    if len(groups) == 1 and stripped.isdigit() and stripped.isascii():
        # a number that names rather than counts ("Revision 2"); claims find it as a number
        return Value("identifier", "identifier:" + str(int(stripped)), span, stripped)
    if not has_digit or len(groups) < 2:
        return None
    return Value("identifier", "identifier:" + identifier_key(stripped), span, stripped)


_IDENTIFIER_SEP = r"(?: ?[-/.] ?| )"


@lru_cache(maxsize=1024)
def _identifier_regex(key: str) -> re.Pattern[str] | None:
    body = key.removeprefix("identifier:")
    groups = _KEY_GROUP.findall(unicodedata.normalize("NFKC", body))
    if not groups:
        return None
    if re.fullmatch(r"[A-Z]{2}\d{2}[A-Z0-9]{11,30}", body):
        # an IBAN: any spacing
        parts = [re.escape(char.casefold()) for char in body]
        return re.compile(r"(?<![^\W_])" + " ?".join(parts) + r"(?![^\W_])")
    pattern = []
    for index, group in enumerate(groups):
        if index:
            previous = groups[index - 1]
            optional = previous[-1].isdigit() != group[0].isdigit()
            pattern.append(_IDENTIFIER_SEP + ("?" if optional else ""))
        pattern.append(re.escape(normalise(group).text))
    # a version number may carry its "v" ("v3.1" is version 3.1)
    before = r"(?<![^\W_])(?:v(?=\d))?" if groups[0][0].isdigit() else r"(?<![^\W_])"
    return re.compile(before + "".join(pattern) + r"(?![^\W_])")


def _joined_group(text: str, norm: Normalised, start: int, end: int) -> str:
    """The original text of the normalised span [start, end)."""
    original = norm.original_span(start, end)
    return text[original[0] : original[1]]


def identifier_spans(text: str, key: str) -> list[tuple[int, int]]:
    """Where the identifier ``key`` (``identifier:CC-MER-2024-017`` or ``CC-MER-2024-017``)
    is written in ``text``, whatever its separators ("CC MER 2024 017", "CC/MER/2024/017",
    "cc-mer-2024-017"); not where it is part of a longer identifier ("CC-MER-2024-0171",
    "X-CC-MER-2024-017"), but also where an ordinary word is joined to it by a hyphen
    ("ISO-27001-Zertifizierung" for ISO-27001). Spans index the original text."""
    pattern = _identifier_regex(key)
    if pattern is None:
        return []
    norm = normalise(text)
    haystack = norm.text
    spans: list[tuple[int, int]] = []
    for match in pattern.finditer(haystack):
        start, end = match.span()
        after = re.match(r"[-/.]([^\W_]+)", haystack[end:])
        if after is not None:
            word = _joined_group(text, norm, end + 1, end + 1 + len(after.group(1)))
            if not _ordinary_word(word):
                continue
        before = re.search(r"([^\W_]+)[-/.]$", haystack[max(0, start - 40) : start])
        if before is not None:
            word = _joined_group(text, norm, start - 1 - len(before.group(1)), start - 1)
            if not _ordinary_word(word):
                continue
        spans.append(norm.original_span(start, end))
    return spans


# =========================================================================== numbers and units

_CURRENCIES = {"€": "EUR", "$": "USD", "£": "GBP", "chf": "CHF", "eur": "EUR", "usd": "USD"}
_CURRENCIES |= {"gbp": "GBP"}
_MONEY_DIMENSIONS = frozenset({"EUR", "USD", "GBP", "CHF"})
_SCALE_WORDS = (
    r"k|t|tsd\.?|thousand|tausend|milliers?|m|mn|mio\.?|mios\.?|millions?|millionen|md|mds"
    r"|mrd\.?|mrds\.?|bn|milliards?|milliarden?|billions?|billionen"
)
_CURRENCY_WORDS = (
    r"€|\$|£|euros?|eur|usd|us dollars?|dollars?|gbp|pounds?(?: sterling)?|chf"
    r"|francs? suisses|schweizer franken|franken"
)
_CURRENCY_OF_WORD = {
    **dict.fromkeys(("euro", "euros"), "EUR"),
    **dict.fromkeys(("us dollar", "us dollars", "dollar", "dollars"), "USD"),
    **dict.fromkeys(("pound", "pounds", "pound sterling", "pounds sterling"), "GBP"),
    **dict.fromkeys(("franc suisse", "francs suisses", "schweizer franken", "franken"), "CHF"),
}
_MONEY_AFTER = re.compile(
    rf"(?:(?P<scale>{_SCALE_WORDS})(?![^\W\d_]) ?)?(?:d'|de |of )?(?P<cur>{_CURRENCY_WORDS})"
    r"(?![^\W\d_])"
)
_SCALE_AFTER = re.compile(rf"(?P<scale>{_SCALE_WORDS})(?![^\W\d_])")
_COUNT_SCALE_AFTER = re.compile(
    r"(?P<scale>thousand|tausend|milliers|millions?|millionen|mio\.|mio|milliards?"
    r"|milliarden?|mrd\.|mrd|billions?|billionen)(?![^\W\d_])"
)
_BEFORE = frozenset("€$£rdpf")  # the last character of a currency written before a number
_CURRENCY_BEFORE = re.compile(r"(?:(?<![\w])(?P<code>eur|usd|gbp|chf)|(?P<sign>[€$£])) ?$")
# units this module reads besides the number table: (dimension, factor), by spelling
_EXTRA_UNITS: dict[str, tuple[str, Decimal]] = {
    **dict.fromkeys(
        _alternatives(
            "jours ouvrés|jours ouvres|jours ouvrables|jour ouvré|jour ouvrable|werktage|werktagen"
            "|werktag|arbeitstage|arbeitstagen|arbeitstag|business days|business day|working days"
            "|working day"
        ),
        ("workdays", Decimal(1)),
    ),
    **dict.fromkeys(
        _alternatives(
            "points de pourcentage|point de pourcentage|prozentpunkte|prozentpunkten|prozentpunkt"
            "|percentage points|percentage point|pp"
        ),
        ("pp", Decimal(1)),
    ),
}
_EXTRA_AFTER = re.compile(
    "(?:"
    + "|".join(re.escape(s) for s in sorted(_EXTRA_UNITS, key=len, reverse=True))
    + r")(?![\w]|'[^\W\d_])"
)
# a German compound's unit after a hyphen ("5-Jahres-Vertrag"): genitive forms
_COMPOUND_UNITS: dict[str, str] = {"jahres": "years", "monats": "months", "tages": "days"}
_COMPOUND_UNIT_AFTER = re.compile(r"-(?P<unit>jahres|monats|tages)(?=-)")


def _scale_factor(word: str, lang: str | None) -> Decimal:
    word = word.rstrip(".")
    if word in ("k", "t", "tsd", "thousand", "tausend", "millier", "milliers"):
        return Decimal(10) ** 3
    if word in ("m", "mn", "mio", "mios", "million", "millions", "millionen"):
        return Decimal(10) ** 6
    if word == "billionen" or (word in ("billion", "billions") and _primary(lang) in ("de", "fr")):
        return Decimal(10) ** 12
    return Decimal(10) ** 9


def _currency(text: str) -> str:
    return _CURRENCIES.get(text) or _CURRENCY_OF_WORD.get(text, "EUR")


@dataclass(frozen=True, slots=True)
class _Suffix:
    dimension: str | None  # None: no unit
    factor: Decimal  # to the dimension's base unit, scale included
    scale: Decimal  # the scale word's own factor (1 without one)
    end: int  # normalised end of the unit
    count: bool = False  # a scale word without currency: a count


_NO_UNIT = _Suffix(None, Decimal(1), Decimal(1), -1)
_PRICE_DASH = re.compile(r"[.,]-{1,2} ?")
# what a unit, scale or currency after a number may start with besides a letter
_UNIT_START = frozenset("€$£%°'-")


def _suffix(norm: str, end: int, lang: str | None, *, prefixed: bool) -> _Suffix:
    """The unit written after a number ending at ``end`` (rules in the module docstring);
    ``prefixed``: a currency stands before the number, so only a scale may follow."""
    dash = _PRICE_DASH.match(norm, end) if not prefixed else None
    if dash is not None:
        # "290,- €", "290,-- EUR": a German price, a currency only
        money = _MONEY_AFTER.match(norm, dash.end())
        if money is not None and not money["scale"]:
            return _Suffix(_currency(money["cur"]), Decimal(1), Decimal(1), money.end())
        return _NO_UNIT
    at = end + 1 if norm.startswith(" ", end) else end
    if at >= len(norm) or not (norm[at].isalpha() or norm[at] in _UNIT_START):
        return _NO_UNIT if not prefixed else _Suffix("", Decimal(1), Decimal(1), end)
    if prefixed:
        scale = _SCALE_AFTER.match(norm, at)
        if scale is not None:
            factor = _scale_factor(scale["scale"], lang)
            return _Suffix("", factor, factor, scale.end())
        return _Suffix("", Decimal(1), Decimal(1), end)
    money = _MONEY_AFTER.match(norm, at)
    if money is not None:
        factor = _scale_factor(money["scale"], lang) if money["scale"] else Decimal(1)
        return _Suffix(_currency(money["cur"]), factor, factor, money.end())
    extra = _EXTRA_AFTER.match(norm, at)
    if extra is not None:
        dimension, factor = _EXTRA_UNITS[extra.group()]
        return _Suffix(dimension, factor, Decimal(1), extra.end())
    hyphen = norm.startswith("-", end) and end + 1 < len(norm) and norm[end + 1].isalpha()
    compound = _COMPOUND_UNIT_AFTER.match(norm, end) if hyphen else None
    if compound is not None:
        dimension, factor = UNIT_DIMENSIONS[_COMPOUND_UNITS[compound["unit"]]]
        return _Suffix(dimension, factor, Decimal(1), compound.end())
    unit = unit_after(norm, end + 1 if hyphen else end)
    # after a hyphen only a unit spelled as a word ("24-Stunden-Service", not "10-m")
    if unit is not None and (not hyphen or unit[1] - end > 2):
        canonical, unit_end = unit
        dimension, factor = UNIT_DIMENSIONS[canonical]
        return _Suffix(dimension, factor, Decimal(1), unit_end)
    scale = _COUNT_SCALE_AFTER.match(norm, at)
    if scale is not None:
        factor = _scale_factor(scale["scale"], lang)
        return _Suffix(None, factor, factor, scale.end(), count=True)
    return _NO_UNIT


@dataclass(slots=True)
class _Number:
    value: Decimal
    decimals: int
    ambiguous: bool  # the 1.689 form read by a guess
    start: int  # normalised start (a currency before included)
    digits_start: int
    digits_end: int
    suffix: _Suffix
    glued: bool  # letters right after the digits that are no unit


# the separators joining numbers of a range or list that share the last one's unit
_RANGE = re.compile(
    r" ?(?:-|,|à|au|bis|to|through|und|et|and|ou|or|oder|jusqu'à|…|\.\.\.) ?(?:(?:plus|\+) ?)?"
)
# and of a sum, difference or comparison, each term perhaps named ("salaries 790 + hosting
# 115 = 905 k€", "13,4 statt 7,2 m³/min"); not a factor ("4 × 290 €" is no 4 €)
_TERMS = re.compile(
    r" ?(?:[-+=\u2212\u2013]|statt|contre|vs\.?|versus|minus|moins|plus|bzw\.?|resp\.?) ?"
    r"(?:[^\W\d_][\w&'.-]* ){0,4}\**"
)
# a factor of a product ("340 kg × 0,8 = 272 kg"): no term, its own unit none
_FACTOR_BEFORE = re.compile(r"[×x*/÷] ?$")
# a table column's unit, in brackets at the end of its header cell: "CA (k€)", "[m³/min]"
# the unit in brackets at the end of a header cell, one level of brackets inside ("(dB(A))")
_HEADER_UNIT = re.compile(r"[(\[] ?((?:[^()\[\]|]|\([^()\[\]|]{1,3}\)){1,12}?) ?[)\]] ?$")
_DIGITS_START = re.compile(r"[-+]?\d")


def _other_reading(value: Decimal, decimals: int) -> tuple[Decimal, int]:
    """The other reading of "1.689" / "1,689": thousands for a decimal and back."""
    if decimals == 0:
        return value / 1000, 3
    return value * 1000, 0


def _from_digits(number: Num, digits_start: int, norm: str, lang: str | None) -> _Number:
    before = None
    if digits_start and norm[max(0, digits_start - 2) : digits_start].strip()[-1:] in _BEFORE:
        before = _CURRENCY_BEFORE.search(norm, max(0, digits_start - 5), digits_start)
    suffix = _suffix(norm, number.number_end, lang, prefixed=before is not None)
    start = digits_start
    if before is not None:
        suffix = _Suffix(
            _CURRENCIES[before["code"] or before["sign"]],
            suffix.factor,
            suffix.scale,
            suffix.end,
        )
        start = before.start()
    value, decimals, ambiguous = number.value, number.decimals, number.ambiguous
    if ambiguous and decimals == 0 and suffix.scale >= Decimal(10) ** 6:
        # "5.763 Mio. €", "5,763 M€": a decimal before a scale of a million or more
        value, decimals, ambiguous = value / 1000, 3, False
    if ambiguous and _primary(lang) in ("fr", "de", "en"):
        ambiguous = False  # the language's rule decided (numbers module)
    end = number.number_end
    glued = (
        end < len(norm)
        and norm[end].isalpha()
        and ((suffix.dimension is None and not suffix.count) or suffix.end == end)
    )
    return _Number(value, decimals, ambiguous, start, digits_start, end, suffix, glued)


def _shared_units(numbers: list[_Number], norm: str) -> None:
    """A unitless number before one with a unit, joined as a range or list ("10-16 bar",
    "8 à 10 heures", "8, 10 und 13 bar"), takes that unit."""
    for index in range(len(numbers) - 2, -1, -1):
        number, following = numbers[index], numbers[index + 1]
        if number.suffix is not _NO_UNIT or number.glued or following.suffix.dimension is None:
            continue
        if following.suffix.count or following.start != following.digits_start:
            continue
        gap = norm[number.digits_end : following.digits_start]
        factor = _FACTOR_BEFORE.search(norm, max(0, number.start - 3), number.start)
        if _RANGE.fullmatch(gap) is None and (_TERMS.fullmatch(gap) is None or factor):
            continue
        number.suffix = _Suffix(
            following.suffix.dimension,
            following.suffix.factor,
            following.suffix.scale,
            number.digits_end,
        )


def _column_units(numbers: list[_Number], norm: Normalised, text: str, lang: str | None) -> None:
    """A unitless number alone in a Markdown table cell takes the unit its column's header
    names in brackets ("| CA (k€) |" over "| 1 240 |"), or else the unit its row's first
    cell names ("| Marketing et ventes (k€) | 210 | 195 |")."""
    if "|" not in text:
        return
    units: list[str | None] | None = None
    offset = 0
    for line in text.splitlines(keepends=True):
        start, row = offset, line.strip()
        offset += len(line)
        if not row.startswith("|"):
            units = None
            continue
        cells = row.strip("|").split("|")
        if units is None:
            units = [m[1] if (m := _HEADER_UNIT.search(cell.strip())) else None for cell in cells]
            continue
        pipes = [start + m.start() for m in re.finditer(r"\|", line)]
        labelled = _HEADER_UNIT.search(cells[0].strip()) if cells else None
        for column, (low, high) in enumerate(itertools.pairwise(pipes)):
            unit = units[column] if column < len(units) else None
            if unit is None and column > 0 and labelled is not None:
                unit = labelled[1]
            if unit is None:
                continue
            cell = text[low + 1 : high].strip().strip("*_")  # "**1,101**": bold, one number
            for number in numbers:
                if number.suffix is not _NO_UNIT or number.glued:
                    continue
                first, last = norm.original_span(number.start, number.digits_end)
                if low < first < high and text[first:last] == cell:
                    suffix = _suffix(f"0 {normalise(unit).text}", 1, lang, prefixed=False)
                    if suffix.dimension is not None and not suffix.count:
                        number.suffix = _Suffix(
                            suffix.dimension, suffix.factor, suffix.scale, number.digits_end
                        )


# a temperature's sign written as a word
_MINUS_WORD = re.compile(r"(?<![\w-])(?:minus|moins) $")


def _emit(
    norm: Normalised,
    lang: str | None,
    number: _Number,
    found: _Collector,
    span: tuple[int, int] | None = None,
) -> None:
    """Add ``number`` as its value; ``span`` (original) where the writing runs past its unit."""
    if number.glued:
        return
    suffix = number.suffix
    end = max(suffix.end, number.digits_end)
    span = span or norm.original_span(number.start, end)
    value = number.value
    if (
        suffix.dimension == "°C"
        and value > 0
        and _MINUS_WORD.search(norm.text, max(0, number.start - 7), number.start)
    ):
        value = -value  # "minus 20 degrees Celsius", "moins 20 °C", "minus 28 Grad"
    step = Decimal(1).scaleb(-number.decimals)
    kind: ValueKind
    dimension = suffix.dimension
    if dimension is None:
        amount = value * suffix.factor
        if amount != amount.to_integral_value():
            return  # a bare decimal: no value
        kind, dimension, precision = "count", None, step * suffix.factor
        key = f"count:{_plain(amount)}"
    else:
        amount = value * suffix.factor
        precision = step * suffix.factor
        if dimension in _MONEY_DIMENSIONS:
            kind = "money"
            key = f"money:{dimension}:{_plain(amount)}"
        elif dimension == "%":
            kind = "percent"
            key = f"percent:{_plain(amount)}"
        else:
            kind = "quantity"
            key = f"quantity:{dimension}:{_plain(amount)}"
    alternative = None
    if number.ambiguous:
        other, _ = _other_reading(value, number.decimals)
        alternative = key.rsplit(":", 1)[0] + ":" + _plain(other * suffix.factor)
    found.add(
        kind,
        key,
        span,
        amount=_tidy(amount),
        dimension=dimension,
        precision=_tidy(precision),
        ambiguous=number.ambiguous,
        alternative=alternative,
    )


def _numbers(norm: Normalised, lang: str | None, found: _Collector) -> None:
    numbers: list[_Number] = []
    for read in read_numbers(norm.text, lang, typed=False):
        digits = _DIGITS_START.search(norm.text, read.start)
        digits_start = digits.start() if digits is not None else read.start
        if found.free(norm.original_span(digits_start, read.number_end)):
            numbers.append(_from_digits(read, digits_start, norm.text, lang))
    _shared_units(numbers, norm.text)
    _column_units(numbers, norm, found.text, lang)
    _point_units(numbers, norm.text)
    for number in numbers:
        _emit(norm, lang, number, found)


# "points" alone after a number, and what says the sentence speaks of percentages
_POINTS_AFTER = re.compile(r" ?(?:points?|pts?\.?|punkte?n?)(?![\w'])")
_PERCENT_NEAR = re.compile(r"%|\bpour ?cent\b|\bprozent|\bper ?cent\b")


def _point_units(numbers: list[_Number], norm: str) -> None:
    """A unitless number followed by "points" ("pts", "Punkte") in a sentence that speaks of
    percentages is a difference of percentages, in percentage points ("14,2 % − 11,4 % =
    3,8 points d'amélioration")."""
    for number in numbers:
        if number.suffix is not _NO_UNIT or number.glued:
            continue
        after = _POINTS_AFTER.match(norm, number.digits_end)
        if after is None:
            continue
        low = max(norm.rfind("\n", 0, number.start), norm.rfind(". ", 0, number.start))
        high = min(
            (
                end
                for end in (norm.find("\n", after.end()), norm.find(". ", after.end()))
                if end >= 0
            ),
            default=len(norm),
        )
        if _PERCENT_NEAR.search(norm, max(low, 0), high):
            number.suffix = _Suffix("pp", Decimal(1), Decimal(1), after.end())


# =========================================================================== numbers in words

_WORD = re.compile(r"[^\W\d_]+")
_JOINERS = frozenset({"et", "und", "and", "virgule", "komma", "point"})
_LONE = frozenset({"un", "une", "ein", "eine", "einen", "einem", "einer", "eines", "one", "neuf"})
_LONE_UNKNOWN = _LONE | {"elf", "sept", "cent", "mille"}
_WORD_LANGS = ("fr", "de", "en")
# a number in words ending in a scale word is written to that scale (its power of ten)
_WORD_SCALES = {
    **dict.fromkeys(("mille", "tausend", "thousand"), 3),
    **dict.fromkeys(("million", "millions", "millionen", "millione"), 6),
    **dict.fromkeys(("milliard", "milliards", "milliarde", "milliarden"), 9),
}


@lru_cache(maxsize=1)
def _text2num() -> tuple[Callable[[str, str], Any], Callable[..., Any]]:
    from text_to_num import find_numbers, text2num

    return text2num, find_numbers


@lru_cache(maxsize=32768)
def _number_word(word: str, lang: str) -> bool:
    if word in _JOINERS or len(word) < 2:
        return False  # "o" is no zero
    text2num, _ = _text2num()
    try:
        text2num(word, lang)
    except ValueError:
        return False
    return True


class _Token:
    """A word for text2num's ``find_numbers`` (its ``Token`` protocol)."""

    __slots__ = ("end", "skip", "start", "word")

    def __init__(self, word: str, start: int, end: int, skip: bool) -> None:
        self.word, self.start, self.end, self.skip = word, start, end, skip

    def text(self) -> str:
        return self.word

    def nt_separated(self, previous: _Token) -> bool:
        return False

    def not_a_number_part(self) -> bool:
        return self.skip


def _languages(lang: str | None) -> tuple[str, ...]:
    primary = _primary(lang)
    return (primary,) if primary in _WORD_LANGS else _WORD_LANGS


_KNOWN: dict[tuple[str, ...], dict[str, bool]] = {}
_KNOWN_MAX = 100_000  # words remembered per language set, then forgotten all at once


def _known_words(languages: tuple[str, ...]) -> dict[str, bool]:
    known = _KNOWN.setdefault(languages, {})
    if len(known) > _KNOWN_MAX:
        known.clear()
    return known


def _word_runs(norm: str, languages: tuple[str, ...]) -> Iterator[list[_Token]]:
    """Maximal runs of number words (and the joiners between them) of ``norm``; words of a
    run are separated by a space or a hyphen ("quatre-vingt-dix", "vingt et un")."""
    known = _known_words(languages)
    run: list[_Token] = []
    last_end = 0
    for match in _WORD.finditer(norm):
        word = match.group()
        is_number = known.get(word)
        if is_number is None:
            is_number = known[word] = any(_number_word(word, code) for code in languages)
        if not is_number and (not run or word not in _JOINERS):
            if run:
                yield run
                run = []
            continue
        start, end = match.span()
        if word == "cent" and norm[max(0, start - 5) : start] in ("pour ", "pour-"):
            # "pour cent" is percent, never the number 100 ("pour cent et quatre-vingt-dix")
            if run:
                yield run
                run = []
            continue
        if run and norm[last_end:start] not in (" ", "-"):
            yield run
            run = []
            if not is_number:
                continue
        run.append(_Token(word, start, end, False))
        last_end = end
    if run:
        yield run


def _words(norm: Normalised, lang: str | None, found: _Collector) -> None:
    text = norm.text
    if not any(char.isalpha() for char in text):
        return
    languages = _languages(lang)
    lone = _LONE if lang is not None and _primary(lang) in _WORD_LANGS else _LONE_UNKNOWN
    known = _known_words(languages)
    present = set()
    for word in set(_WORD.findall(text)):
        is_number = known.get(word)
        if is_number is None:
            is_number = known[word] = any(_number_word(word, code) for code in languages)
        if is_number:
            present.add(word)
    if not present:
        return
    if present <= lone:
        _lone_words(norm, lang, lone, found)
        return
    _, find_numbers = _text2num()
    numbers: list[_Number] = []
    for run in _word_runs(text, languages):
        while run and run[-1].word in _JOINERS:
            run.pop()
        if not run:
            continue
        code = next((c for c in languages if _number_word(run[0].word, c)), languages[0])
        for occurrence in find_numbers(run, code, 0.0):
            if occurrence.is_ordinal:
                continue
            tokens = run[occurrence.start : occurrence.end]
            words = [token for token in tokens if token.word not in _JOINERS]
            if not words:
                continue
            start, end = tokens[0].start, tokens[-1].end
            written = str(occurrence.text).replace(" ", "").replace(",", ".")
            try:
                value = Decimal(written)
            except InvalidOperation:
                continue
            decimals = len(written.partition(".")[2])
            if not decimals and words[-1].word in _WORD_SCALES:
                # "cinq millions" is written to the million
                decimals = -_WORD_SCALES[words[-1].word]
            suffix = _suffix(text, end, lang, prefixed=False)
            if len(words) == 1 and words[0].word in lone and suffix.dimension is None:
                continue  # "un client", "eine Frage", "one of": an article, not a count
            numbers.append(_Number(value, decimals, False, start, start, end, suffix, False))
    # "von minus zwanzig bis plus vierzig Grad Celsius": a range in words shares its unit
    _shared_units(numbers, text)
    for number in numbers:
        _emit(norm, lang, number, found)


def _lone_words(
    norm: Normalised, lang: str | None, lone: frozenset[str], found: _Collector
) -> None:
    """A text whose only number words are articles or adjectives ("un", "eine", "one"): each
    is a value only with a unit after it ("un an", "eine Woche", "one hour")."""
    text2num, _ = _text2num()
    for match in _lone_regex(lone).finditer(norm.text):
        suffix = _suffix(norm.text, match.end(), lang, prefixed=False)
        if suffix.dimension is None:
            continue
        code = next(c for c in _languages(lang) if _number_word(match.group(), c))
        value = Decimal(int(text2num(match.group(), code)))
        start, end = match.span()
        _emit(norm, lang, _Number(value, 0, False, start, start, end, suffix, False), found)


@lru_cache(maxsize=2)
def _lone_regex(lone: frozenset[str]) -> re.Pattern[str]:
    words = "|".join(sorted(lone, key=len, reverse=True))
    return re.compile(rf"(?<![\w'-])(?:{words})(?![\w'-])")


# =========================================================================== halves

_HALF_BASE = r"(?:[a-zäöüéèêàçß]+(?:[- ][a-zäöüéèêàçß]+){0,3}|\d+)"
# "deux heures et demie", "un an et demi", "two and a half years", "15 and a half bar"
_ET_DEMI = re.compile(rf"(?<![\w-])(?P<n>{_HALF_BASE}) (?P<unit>[^\W\d_]+\.?) et demie?(?!\w)")
_AND_A_HALF = re.compile(rf"(?<![\w-])(?P<n>{_HALF_BASE}) and a half(?!\w)")
# "anderthalb", "eineinhalb", "zweieinhalb", "dreieinhalb"
_EINHALB = re.compile(r"(?<![\w-])(?P<n>anderthalb|[a-zäöüß]+einhalb)(?!\w)")


def _half_base(words: str, lang: str | None) -> Decimal | None:
    """The whole number before "and a half", in digits or in words (text2num)."""
    words = words.strip()
    if words.isdigit():
        return Decimal(words)
    text2num, _ = _text2num()
    for code in _languages(lang):
        for start in range(len(words.split())):
            tail = " ".join(words.split()[start:])
            try:
                return Decimal(int(text2num(tail, code)))
            except ValueError:
                continue
    return None


# an interval of one unit with no number: "every hour", "toutes les heures", "stündlich"
_INTERVAL_UNITS: dict[str, tuple[str, Decimal]] = {
    "minute": ("s", Decimal(60)),
    "hour": ("s", Decimal(3600)),
    "day": ("s", Decimal(86400)),
    "week": ("s", Decimal(604800)),
    "month": ("months", Decimal(1)),
    "year": ("months", Decimal(12)),
}
_INTERVAL_WORDS = {
    "minute": r"minutes?|minuten?",
    "hour": r"hours?|heures?|stunden?",
    "day": r"days?|jours?|tage?s?",
    "week": r"weeks?|semaines?|wochen?",
    "month": r"months?|mois|monate?s?",
    "year": r"years?|ans|annees?|jahre?s?",
}
_INTERVAL_UNIT = "|".join(f"(?P<{name}>{words})" for name, words in _INTERVAL_WORDS.items())
_EVERY = re.compile(
    r"(?<![\w.,])(?:every|each|once (?:an?|per|every)|toutes les|tous les|chaque|une fois par"
    r"|jede[nrs]?|einmal (?:pro|je|in der|im|am))"
    rf" (?:{_INTERVAL_UNIT})(?![\w-])"
    r"|(?<![\w-])(?P<adverb>hourly|st(?:u|ü|ue)ndlich)(?![\w-])"
)


_EVERY_WORDS = (
    *("every", "each", "once", "hourly"),
    *("tou", "chaque", "fois"),
    *("jede", "einmal", "ndlich"),
)


def _every(norm: Normalised, found: _Collector) -> None:
    """An interval of one unit said without a number ("every hour", "toutes les heures",
    "une fois par heure", "jede Stunde", "stündlich"): a duration of one unit, as "every
    24 hours" is one of 24. Adjectives ("monthly fee", "jährliche Audits") are left alone:
    they name a thing, not how often it happens."""
    text = norm.text
    if not any(word in text for word in _EVERY_WORDS):
        return  # most texts say no interval: the pattern's scan is dearer than these checks
    for match in _EVERY.finditer(text):
        name = "hour" if match["adverb"] else next(n for n in _INTERVAL_UNITS if match[n])
        dimension, factor = _INTERVAL_UNITS[name]
        kind: ValueKind = "quantity"
        found.add(
            kind,
            f"quantity:{dimension}:{_plain(factor)}",
            norm.original_span(match.start(), match.end()),
            amount=factor,
            dimension=dimension,
            precision=factor,
            implicit=True,
        )


# hours and minutes in words, as a duration: "onze heures trente", "elf Stunden dreißig"
_HOURS_MINUTES = re.compile(
    r"(?<![\w-])(?P<h>[^\W\d_]+(?:-[^\W\d_]+)*) (?P<unit>heures?|stunden?|hours?) "
    r"(?P<m>[^\W\d_]+(?:-[^\W\d_]+)*)(?![\w-])(?! (?:minutes?|minuten?|min\b))"
)


def _hours_minutes(norm: Normalised, lang: str | None, found: _Collector) -> None:
    """A duration in hours and minutes in words ("onze heures trente" is 11.5 h), read
    before the hours alone take it."""
    text = norm.text
    if not any(unit in text for unit in ("heure", "stunde", "hour")):
        return
    for match in _HOURS_MINUTES.finditer(text):
        hours = _word_value(match.group("h"), lang)
        minutes = _word_value(match.group("m"), lang)
        if hours is None or minutes is None or not 0 < minutes < 60:
            continue
        seconds = hours * 3600 + minutes * 60
        found.add(
            "quantity",
            f"quantity:s:{_plain(seconds)}",
            norm.original_span(*match.span()),
            amount=seconds,
            dimension="s",
            precision=Decimal(60),
        )


def _word_value(words: str, lang: str | None) -> Decimal | None:
    """The whole number ``words`` name in one of the languages, None when they name none."""
    text2num, _ = _text2num()
    for code in _languages(lang):
        try:
            return Decimal(int(text2num(words, code)))
        except ValueError:
            continue
    return None


def _halves(norm: Normalised, lang: str | None, found: _Collector) -> None:
    """A number and a half, written in words ("un an et demi", "two and a half years",
    "zweieinhalb Stunden", "anderthalb Kubikmeter"): text2num reads none of them."""
    text = norm.text
    if (
        "demi" not in text
        and "half" not in text
        and "einhalb" not in text
        and ("anderthalb" not in text)
    ):
        return
    hits: list[tuple[Decimal, int, int, int]] = []  # value, start, number end, unit start
    for match in _ET_DEMI.finditer(text):
        base = _half_base(match.group("n"), lang)
        if base is not None:
            hits.append((base, match.start("n"), match.end("n"), match.start("unit")))
    for match in _AND_A_HALF.finditer(text):
        base = _half_base(match.group("n"), lang)
        if base is not None:
            hits.append((base, match.start("n"), match.end(), match.end()))
    for match in _EINHALB.finditer(text):
        word = match.group("n")
        base = Decimal(1) if word == "anderthalb" else _half_base(word[: -len("einhalb")], "de")
        if base is not None:
            hits.append((base, match.start(), match.end(), match.end()))
    for base, start, number_end, unit_at in hits:
        value = base + Decimal("0.5")
        # the unit stands after the number ("two and a half years") or before "et demi"
        suffix = _suffix(text, number_end, lang, prefixed=False)
        if suffix.dimension is None:
            continue
        end = max(suffix.end, number_end)
        if unit_at != number_end:  # "un an et demi": the span runs to "demi"
            tail = _ET_DEMI.match(text, start)
            end = tail.end() if tail is not None else end
        span = norm.original_span(start, end)
        if not found.free(span):
            continue
        number = _Number(value, 1, False, start, start, number_end, suffix, False)
        _emit(norm, lang, number, found, span)


# =========================================================================== reading


@lru_cache(maxsize=256)
def read_values(text: str, lang: str | None) -> tuple[Value, ...]:
    """Every typed value of ``text`` (an answer or an evidence passage), in text order,
    non-overlapping (a phone number is one phone, never numbers; a date is one date, never
    a count). ``lang``: the text's language ("fr", "de", "en", "en-US", ...) or None."""
    if not text or not text.strip():
        return ()
    found = _Collector(text)
    norm = normalise(text)
    parts = _typed(text, found)
    _block_markers(text, found)
    _phones(text, lang, found)
    _parts(parts, found)
    _dates(norm, lang, found)
    _times(norm, lang, found)
    _block_list_markers(text, found)
    _identifiers(text, found)
    _halves(norm, lang, found)
    _hours_minutes(norm, lang, found)
    _numbers(norm, lang, found)
    _words(norm, lang, found)
    _every(norm, found)
    return tuple(sorted(found.values, key=lambda value: value.span))


def read_value(text: str, kind: ValueKind, lang: str | None) -> Value | None:
    """A gold value: ``text`` read as exactly one value of ``kind``, else None.

    The text must hold one value of the kind and no other of it ("90 jours", "T1 2026",
    "33 nouveaux clients", "ISO 27001 depuis novembre 2023" as a date); values of other
    kinds may stand beside it. Where the text says nothing else, the kind decides what
    running text would leave open: a bare "2026" read as a date is the year, and a whole
    text read as an identifier may be spaced ("CC MER 2024 017") or hold ordinary words
    ("Dynamics 365")."""
    values = read_values(text, lang)
    same = [value for value in values if value.kind == kind]
    if len(same) == 1:
        return same[0]
    if same:
        return None
    if kind == "date":
        years = [
            value
            for value in values
            if value.kind == "count" and re.fullmatch(r"(?:1[89]|20|21)\d\d", value.text)
        ]
        if len(years) == 1:
            year = years[0]
            return Value("date", f"date:year:{year.text}", year.span, year.text, dimension="year")
        return None
    if kind == "identifier":
        return _whole_identifier(text)
    return None
