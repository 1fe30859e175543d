"""Numbers with their units in answers written in French, German or English.

Pure functions, no I/O. Numbers are read on the normalised text
(:mod:`pytest_ragv2.scoring.normalisation`) and reported at their span in the original.

Numbers (:func:`parse_numbers`)
-------------------------------
A number is a run of ASCII digit groups joined by single separators ``.`` ``,`` ``'`` or a
space; a space joins only a group of exactly three digits (``"1 689"``; ``"2025 100"`` is
two numbers because a thousands-grouped number starts with one to three digits). How the
separators read:

- a separator that is repeated (``1.234.567``, ``1,234,567``, ``1 234 567``) or is a space or
  ``'`` is a thousands separator, and every group after the first must then have three
  digits;
- a final ``.`` or ``,`` that differs from the thousands separators before it is the decimal
  separator (``1.689,5``, ``1,689.5``, ``1 689,5``, ``1'689.50``);
- a single ``.`` or ``,`` followed by anything other than exactly three digits, or after a
  ``0`` or more than three digits, is a decimal separator in every language (``99,7``,
  ``1.5``, ``0,689``, ``1689,125``);
- a single ``.`` or ``,`` followed by exactly three digits after 1-3 digits (``1.689``,
  ``1,689``) is the only ambiguous form and is read by language (but three zeros,
  ``4,000``, are thousands in every language):
  ``en``: ``,`` thousands, ``.`` decimal; ``de``: ``.`` thousands, ``,`` decimal;
  ``fr``: both decimal (French groups thousands with spaces); other or no language
  (``None``): the convention the same text uses in its unambiguous numbers decides
  (a decimal comma elsewhere makes ``1,689`` a decimal and ``1.689`` thousands, a decimal
  point elsewhere the reverse); without any evidence, or with as much for both, it is
  **thousands** — three-digit groups are far more common in answers than three decimals;
- anything else (``12.03.2025``, ``1.2.3``) is split into its space-free parts and, if still
  unreadable, into plain integers.

A digit run that belongs to an identifier — a token of word characters joined by ``- _ / .``
that starts with a letter and holds a digit (``TW-P-24-003``, ``SK-22OA``, ``T4``, ``m3/min``)
— or that directly follows a letter (``3x33``) is not a number. A ``-`` or ``+`` right before
a number that does not follow a word character is its sign (``-5 °C``; ``10-16`` is two
numbers).

Units: the unit right after the number (one optional space) from a table of spellings in the
three languages, normalised to a canonical symbol (``EUR``/``euros`` → ``€``, ``Prozent``/
``pour cent`` → ``%``, ``heures``/``Stunden``/``hours`` → ``h``, ``Betriebsstunden`` → ``Bh``,
``jours``/``Tage`` → ``days``, ``mois``/``Monate`` → ``months``, ``m3/min`` → ``m³/min`` ...).
``€`` / ``EUR`` / ``$`` written before the number count as its unit too. Units of one
dimension convert for comparison (:func:`unit_scale`): ``€``/``k€``/``M€``/``Md€``,
``s``/``min``/``h``/``Bh``/``days``/``weeks``, ``months``/``years``, ``g``/``kg``,
``mm``/``cm``/``m``/``km``, ``W``/``kW``, ``mbar``/``bar``; ``bar(g)`` and ``bar`` are
compatible (answers rarely say gauge), ``bar(a)`` is not; ``dB(A)`` and ``dB`` are.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Literal

from pytest_ragv2.scoring.identifiers import typed_spans
from pytest_ragv2.scoring.normalisation import normalise

# --------------------------------------------------------------------------- units

# canonical unit -> (dimension, factor to the dimension's base unit)
UNIT_DIMENSIONS: dict[str, tuple[str, Decimal]] = {
    "%": ("%", Decimal(1)),
    "€": ("EUR", Decimal(1)),
    "k€": ("EUR", Decimal(10) ** 3),
    "M€": ("EUR", Decimal(10) ** 6),
    "Md€": ("EUR", Decimal(10) ** 9),
    "$": ("USD", Decimal(1)),
    "bar": ("bar", Decimal(1)),
    "bar(g)": ("bar", Decimal(1)),
    "mbar": ("bar", Decimal("0.001")),
    "bar(a)": ("bar(a)", Decimal(1)),
    "m³/min": ("m³/h", Decimal(60)),
    "m³/h": ("m³/h", Decimal(1)),
    "l/min": ("m³/h", Decimal("0.06")),
    "Nm³/h": ("Nm³/h", Decimal(1)),
    "s": ("s", Decimal(1)),
    "min": ("s", Decimal(60)),
    "h": ("s", Decimal(3600)),
    "Bh": ("s", Decimal(3600)),
    "days": ("s", Decimal(86400)),
    "weeks": ("s", Decimal(604800)),
    "months": ("months", Decimal(1)),
    "years": ("months", Decimal(12)),
    "g": ("g", Decimal(1)),
    "kg": ("g", Decimal(1000)),
    "°C": ("°C", Decimal(1)),
    "l": ("l", Decimal(1)),
    "dB(A)": ("dB", Decimal(1)),
    "dB": ("dB", Decimal(1)),
    "W": ("W", Decimal(1)),
    "kW": ("W", Decimal(1000)),
    "mm": ("m", Decimal("0.001")),
    "cm": ("m", Decimal("0.01")),
    "m": ("m", Decimal(1)),
    "km": ("m", Decimal(1000)),
    "rpm": ("rpm", Decimal(1)),
    # speed in metres per second: 1 km/h = 1/3.6 m/s
    "m/s": ("m/s", Decimal(1)),
    "km/h": ("m/s", Decimal(1) / Decimal("3.6")),
    "Pa": ("Pa", Decimal(1)),
    "hPa": ("Pa", Decimal(100)),
    "volt": ("V", Decimal(1)),
    "Wh": ("Wh", Decimal(1)),
    "kWh": ("Wh", Decimal(1000)),
    "MWh": ("Wh", Decimal(10) ** 6),
    # storage, decimal as plans and datasheets state it: 1 GB = 1 Go = 10^9 bytes
    "MB": ("B", Decimal(10) ** 6),
    "GB": ("B", Decimal(10) ** 9),
    "TB": ("B", Decimal(10) ** 12),
}

_UNIT_SPELLINGS: dict[str, tuple[str, ...]] = {
    "%": (
        "%",
        "pour cent",
        "pourcent",
        "pour-cent",
        "prozent",
        "percent",
        "per cent",
        # per cent by volume, as German datasheets write it
        "vol.-%",
        "vol.%",
        "vol-%",
        "vol. %",
    ),
    "€": ("€", "eur", "euro", "euros"),
    "k€": (
        "k€",
        "k €",
        "keur",
        "k eur",
        "t€",
        "teur",
        "tsd. €",
        "tsd €",
        "tsd. eur",
        "tsd eur",
        "tausend euro",
        "milliers d'euros",
        "thousand euros",
    ),
    "M€": (
        "m€",
        "m €",
        "meur",
        "m eur",
        "mio. €",
        "mio €",
        "mio. eur",
        "mio eur",
        "mio. euro",
        "mio euro",
        "millionen euro",
        "million euro",
        "millions d'euros",
        "million d'euros",
        "millions €",
        "million €",
        "millions of euros",
        "million euros",
        "millions euros",
    ),
    "Md€": (
        "md€",
        "mrd. €",
        "mrd €",
        "mrd. eur",
        "mrd eur",
        "milliards d'euros",
        "milliard d'euros",
        "milliarden euro",
        "billion euros",
        "bn €",
        "bn€",
    ),
    "$": ("$", "usd", "dollars", "dollar"),
    "bar(g)": (
        "bar(g)",
        "bar (g)",
        "barg",
        "bar g",
        "bar(ü)",
        "bar (ü)",
        "bar ü",
        "bar(ue)",
        "bar(e)",
    ),
    "bar(a)": ("bar(a)", "bar (a)", "bara"),
    "bar": ("bar", "bars"),
    "mbar": ("mbar",),
    "m³/min": (
        "m3/min",
        "m^3/min",
        "cbm/min",
        "m3 /min",
        "cubic metres per minute",
        "cubic meters per minute",
        "kubikmeter pro minute",
        "kubikmeter je minute",
        "mètres cubes par minute",
        "metres cubes par minute",
        "m3 par minute",
        "m3 pro minute",
    ),
    "m³/h": (
        "m3/h",
        "m^3/h",
        "cbm/h",
        "cubic metres per hour",
        "cubic meters per hour",
        "kubikmeter pro stunde",
        "kubikmeter je stunde",
        "mètres cubes par heure",
        "metres cubes par heure",
        "m3 par heure",
        "m3 pro stunde",
    ),
    "l/min": (
        "l/min",
        "litres per minute",
        "liters per minute",
        "liter pro minute",
        "litres par minute",
    ),
    "Nm³/h": (
        "nm3/h",
        "nm^3/h",
        "normal cubic metres per hour",
        "normal cubic meters per hour",
        "normkubikmeter pro stunde",
        "normokubikmeter pro stunde",
        "normo-mètres cubes par heure",
        "normomètres cubes par heure",
    ),
    "Bh": (
        "bh",
        "betriebsstunden",
        "betriebsstunde",
        "operating hours",
        "operating hour",
        "heures de fonctionnement",
        "heures de service",
        "service hours",
    ),
    "h": (
        *("h", "hr", "hrs", "hour", "hours", "heure", "heures", "std.", "std", "stunde", "stunden"),
        # hours of working time, as "8 h ouvrées" reads: hours
        *("working hours", "working hour", "business hours", "business hour"),
        *("arbeitsstunden", "arbeitsstunde", "geschäftsstunden", "geschaftsstunden"),
    ),
    "min": ("min", "min.", "mins", "minute", "minutes", "minuten", "mn"),
    "s": ("s", "sec", "secs", "second", "seconds", "seconde", "secondes", "sekunde", "sekunden"),
    "days": ("j", "jour", "jours", "day", "days", "tag", "tage", "tagen"),
    "weeks": ("semaine", "semaines", "week", "weeks", "woche", "wochen"),
    "months": ("mois", "month", "months", "monat", "monate", "monaten"),
    "years": ("an", "ans", "année", "années", "year", "years", "jahr", "jahre", "jahren"),
    "kg": ("kg", "kilo", "kilos", "kilogramm", "kilogramme", "kilogrammes", "kilograms"),
    "g": ("g", "gramm", "gramme", "grammes", "grams"),
    # "Grad" and "degrees" alone are a temperature too ("bis minus 28 Grad"): the corpora
    # state slopes in per cent, not in degrees
    "°C": (
        *("°c", "° c", "grad celsius", "degrés celsius", "degrees celsius", "degree celsius"),
        *("grad", "degrés", "degres", "degrees"),
    ),
    "l": ("l", "liter", "litre", "litres", "liters", "litern"),
    "dB(A)": ("db(a)", "db (a)", "dba"),
    "dB": ("db", "decibel", "decibels", "décibel", "décibels", "dezibel"),
    "kW": ("kw", "kilowatt", "kilowatts"),
    "kWh": (
        "kwh",
        "kilowattheure",
        "kilowattheures",
        "kilowattstunde",
        "kilowattstunden",
        "kilowatt-hour",
        "kilowatt-hours",
        "kilowatt hours",
    ),
    "Wh": ("wh", "wattheure", "wattheures", "wattstunde", "wattstunden", "watt-hours"),
    "MWh": ("mwh",),
    "volt": ("volts",),  # not "V": a letter that ends part numbers ("KR 1100 V")
    "W": ("w", "watt", "watts"),
    "Pa": ("pa", "pascal", "pascals"),
    "hPa": ("hpa", "hectopascal", "hectopascals", "hektopascal"),
    "mm": ("mm",),
    "cm": ("cm",),
    "m": ("m", "meter", "metre", "meters", "metres", "mètre", "mètres"),
    "km": ("km",),
    "m/s": (
        *("m/s", "m/sec", "mètre par seconde", "mètres par seconde", "meter pro sekunde"),
        *("metre per second", "metres per second", "meter per second", "meters per second"),
    ),
    "km/h": (
        *("km/h", "km / h", "kmh", "km/std", "kilomètres par heure", "kilomètres-heure"),
        *("kilometres per hour", "kilometers per hour", "stundenkilometer", "kilometer pro stunde"),
    ),
    "rpm": ("rpm", "tr/min", "u/min"),
    # not "to" nor "mo" ("from 10 to 20", "10 mo"): the French To and Mo are spelled out
    "MB": ("mb", "megabyte", "megabytes", "mégaoctet", "mégaoctets"),
    "GB": ("gb", "go", "gigabyte", "gigabytes", "gigaoctet", "gigaoctets"),
    "TB": ("tb", "terabyte", "terabytes", "téraoctet", "téraoctets"),
}

_CANONICAL_BY_SPELLING: dict[str, str] = {}
for _canonical, _spellings in _UNIT_SPELLINGS.items():
    for _spelling in (*_spellings, _canonical):
        _CANONICAL_BY_SPELLING.setdefault(normalise(_spelling).text, _canonical)


def _unit_regex(spellings: Sequence[str]) -> re.Pattern[str]:
    # Longest first so "minutes" beats "min" and "bar(g)" beats "bar"; a spelling ending in a
    # word character must not run on into a word ("16 bar garantiert" is bar, not bar g).
    parts = []
    for spelling in sorted(set(spellings), key=len, reverse=True):
        # nor into an elided word ("2 l'unité"); a possessive may follow ("30 days' notice")
        tail = r"(?![\w]|'[^\W\d_])" if re.match(r".*\w$", spelling) else ""
        parts.append(re.escape(spelling) + tail)
    return re.compile("|".join(parts))


_UNIT_AFTER = _unit_regex(list(_CANONICAL_BY_SPELLING))
_CURRENCY_BEFORE = re.compile(r"(?:(?<![\w])(eur|usd)|(€|\$)) ?$")


def normalise_unit(unit: str) -> str:
    """The canonical symbol of a unit spelling; an unknown unit comes back normalised."""
    folded = normalise(unit).text
    return _CANONICAL_BY_SPELLING.get(folded, folded)


def unit_scale(unit: str) -> tuple[str, Decimal] | None:
    """(dimension, factor to the dimension's base unit) of a unit, None when unknown."""
    return UNIT_DIMENSIONS.get(normalise_unit(unit))


# --------------------------------------------------------------------------- numbers


@dataclass(frozen=True)
class FoundNumber:
    """A number in a text: its value, canonical unit and where it is (original indices)."""

    value: float
    unit: str | None
    span: tuple[int, int]
    text: str
    decimals: int
    ambiguous: bool = False
    """True when the reading rested on the language rule for ``1.689`` / ``1,689``."""


@dataclass(frozen=True)
class Num:
    value: Decimal
    unit: str | None
    start: int  # normalised span of number and unit
    end: int
    number_end: int  # normalised end of the digits (before any unit)
    decimals: int
    ambiguous: bool


# digits, then groups joined by . , ' or by a space that is followed by exactly three digits
_NUMBER_TOKEN = re.compile(
    # a sign, not the "-" of a tolerance "+/-10 mm" (read as 10 mm)
    r"((?<!\+/)[-+](?=[0-9]))?[0-9]+" r"(?:(?:[.,'](?=[0-9])| (?=[0-9]{3}(?![0-9])))[0-9]+)*"
)
_COMPOUND = re.compile(r"\w+(?:[-/.]\w+)*")
_SEPARATOR = re.compile(r"[.,' ]")

_Style = Literal["en", "de", "fr"] | None
_Vote = Literal["comma", "dot"]


def _style(lang: str | None) -> _Style:
    primary = re.split(r"[-_]", lang.strip().lower(), maxsplit=1)[0] if lang else ""
    if primary == "en":
        return "en"
    if primary == "de":
        return "de"
    if primary == "fr":
        return "fr"
    return None


@dataclass(frozen=True)
class _Reading:
    digits: str  # canonical "1689.5"
    decimals: int
    vote: _Vote | None  # which decimal mark an unambiguous reading proves
    ambiguous_mark: str | None  # "." or "," of a 1-3 digit + mark + 3 digit form


def _valid_grouping(groups: Sequence[str]) -> bool:
    return (
        1 <= len(groups[0]) <= 3
        and not (len(groups[0]) > 1 and groups[0][0] == "0")
        and all(len(group) == 3 for group in groups[1:])
    )


def _read(groups: Sequence[str], seps: Sequence[str]) -> _Reading | None:
    """The separator-level reading of one token, None when no consistent reading exists."""
    if not seps:
        return _Reading(groups[0], 0, None, None)
    last = seps[-1]
    before = seps[:-1]
    if last in " '" or last in before:
        if len(set(seps)) != 1 or not _valid_grouping(groups):
            return None
        # a repeated "." proves a decimal comma (1.234.567), a repeated "," a decimal point
        proves: _Vote | None = "comma" if last == "." else "dot" if last == "," else None
        return _Reading("".join(groups), 0, proves, None)
    if before and (len(set(before)) != 1 or not _valid_grouping(groups[:-1])):
        return None
    integer, fraction = "".join(groups[:-1]), groups[-1]
    vote: _Vote = "comma" if last == "," else "dot"
    if before or len(fraction) != 3 or integer[0] == "0" or len(integer) > 3:
        return _Reading(f"{integer}.{fraction}", len(fraction), vote, None)
    return _Reading(f"{integer}.{fraction}", 3, None, last)


def _resolve(reading: _Reading, style: _Style, votes: dict[_Vote, int]) -> tuple[str, int]:
    mark = reading.ambiguous_mark
    if mark is None:
        return reading.digits, reading.decimals
    if reading.digits.endswith(".000"):
        # "4,000" is four thousand in every language: nobody writes 4 with three zero
        # decimals, while a value copied from an English source keeps its comma
        return reading.digits.replace(".", ""), 0
    if style == "en":
        thousands = mark == ","
    elif style == "de":
        thousands = mark == "."
    elif style == "fr":
        thousands = False
    elif votes["comma"] != votes["dot"]:
        decimal_mark = "," if votes["comma"] > votes["dot"] else "."
        thousands = mark != decimal_mark
    else:
        thousands = True
    if thousands:
        return reading.digits.replace(".", ""), 0
    return reading.digits, reading.decimals


@dataclass(frozen=True)
class _Token:
    start: int
    end: int
    sign: str
    reading: _Reading


def _split_token(text: str, start: int, end: int, sign: str) -> Iterator[_Token]:
    """Readings of one digit run: whole, else per space-free part, else per integer group."""
    raw = text[start:end]
    groups = _SEPARATOR.split(raw)
    seps = _SEPARATOR.findall(raw)
    reading = _read(groups, seps)
    if reading is not None:
        yield _Token(start, end, sign, reading)
        return
    if " " in seps:
        offset = start
        for index, part in enumerate(raw.split(" ")):
            yield from _split_token(text, offset, offset + len(part), sign if index == 0 else "")
            offset += len(part) + 1
        return
    for index, match in enumerate(re.finditer(r"[0-9]+", raw)):
        part = match.group()
        yield _Token(
            start + match.start(),
            start + match.end(),
            sign if index == 0 else "",
            _Reading(part, 0, None, None),
        )


_DIGIT = re.compile(r"\d")


def _mask_compound(match: re.Match[str]) -> str:
    word = match.group()
    if not word[0].isdigit() and _DIGIT.search(word):
        return "#" * len(word)
    return word


# a whitespace-delimited token holding a digit: a compound that needs masking lies in one
# (compounds hold no whitespace), so the others are not cut into compounds at all
_DIGIT_TOKEN = re.compile(r"(?<!\S)[^\s\d]*\d\S*")


def _mask_token(match: re.Match[str]) -> str:
    return _COMPOUND.sub(_mask_compound, match.group())


def _masked_identifiers(text: str, typed: bool = True) -> str:
    if not _DIGIT.search(text):
        return text
    masked = _DIGIT_TOKEN.sub(_mask_token, text)
    for start, end in typed_spans(text) if typed else ():
        # a phone number, e-mail address, URL or IBAN is one identifier, not numbers
        masked = masked[:start] + "#" * (end - start) + masked[end:]
    return masked


def _unit_at(text: str, position: int) -> tuple[str, int] | None:
    at = position + 1 if text.startswith(" ", position) else position
    match = _UNIT_AFTER.match(text, at)
    if match is None:
        return None
    return _CANONICAL_BY_SPELLING[match.group()], match.end()


def unit_after(norm: str, position: int) -> tuple[str, int] | None:
    """The canonical unit spelled at ``position`` of a normalised text (one optional space
    first) and where its spelling ends; None when none of the table's spellings is there."""
    return _unit_at(norm, position)


def read_numbers(norm: str, lang: str | None, *, typed: bool = True) -> list[Num]:
    """Every number of the normalised text ``norm``; ``typed=False`` leaves the digits of
    phone numbers, e-mail addresses, URLs and IBANs in (for a caller that has set those
    spans aside itself: :mod:`pytest_ragv2.scoring.values`)."""
    masked = _masked_identifiers(norm, typed)
    tokens: list[_Token] = []
    for match in _NUMBER_TOKEN.finditer(masked):
        sign = match.group(1) or ""
        start = match.start() + len(sign)
        previous = norm[match.start() - 1] if match.start() > 0 else " "
        if sign and (previous.isalnum() or previous in "_.,"):
            sign = ""
        if start > 0 and norm[start - 1].isalpha() and not sign:
            continue
        tokens.extend(_split_token(norm, start, match.end(), sign))
    votes: dict[_Vote, int] = {"comma": 0, "dot": 0}
    for token in tokens:
        if token.reading.vote is not None:
            votes[token.reading.vote] += 1
    style = _style(lang)
    found: list[Num] = []
    for token in tokens:
        digits, decimals = _resolve(token.reading, style, votes)
        value = Decimal(digits)
        if token.sign == "-":
            value = -value
        start = token.start - len(token.sign)
        end = token.end
        unit: str | None = None
        after = _unit_at(norm, token.end)
        if after is not None:
            unit, end = after
        else:
            before = _CURRENCY_BEFORE.search(norm, max(0, start - 5), start)
            if before is not None:
                unit = "$" if (before.group(1) or before.group(2)) in ("usd", "$") else "€"
                start = before.start()
        found.append(
            Num(
                value,
                unit,
                start,
                end,
                token.end,
                decimals,
                token.reading.ambiguous_mark is not None,
            )
        )
    return found


def parse_numbers(text: str, lang: str | None) -> list[FoundNumber]:
    """Every number in ``text`` with its unit and original span (rules in the module doc)."""
    norm = normalise(text)
    result = []
    for number in read_numbers(norm.text, lang):
        span = norm.original_span(number.start, number.end)
        result.append(
            FoundNumber(
                value=float(number.value),
                unit=number.unit,
                span=span,
                text=text[span[0] : span[1]],
                decimals=number.decimals,
                ambiguous=number.ambiguous,
            )
        )
    return result
