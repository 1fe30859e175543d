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

import re
from functools import lru_cache
from typing import TYPE_CHECKING

from pytest_ragv2.scoring.normalisation import normalise

if TYPE_CHECKING:
    pass

from pytest_ragv2.scoring.value_amounts import _numbers
from pytest_ragv2.scoring.value_base import VALUE_KINDS, Granularity, Value, ValueKind, _Collector
from pytest_ragv2.scoring.value_codes import (
    _block_markers,
    _identifiers,
    _parts,
    _typed,
    _whole_identifier,
    identifier_key,
    identifier_spans,
)
from pytest_ragv2.scoring.value_date_words import month_names
from pytest_ragv2.scoring.value_dates import _block_list_markers, _dates
from pytest_ragv2.scoring.value_phones import _phones
from pytest_ragv2.scoring.value_times import _times
from pytest_ragv2.scoring.value_words import _every, _halves, _hours_minutes, _words

__all__ = [
    "VALUE_KINDS",
    "Granularity",
    "Value",
    "ValueKind",
    "identifier_key",
    "identifier_spans",
    "month_names",
    "read_value",
    "read_values",
]


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
