"""Deterministic claim matching for chat answers written in French, German or English.

Pure functions, no I/O. Everything is matched on a **normalised** copy of the answer
(:func:`normalise_answer_text`) and every span reported points back into the **original**
answer string, so a report can highlight exactly what was found.

Normalisation: Unicode NFKC, casefold, typographic apostrophes/quotes/dashes folded to
``' " -``, zero-width characters and soft hyphens dropped, every run of whitespace (also
no-break U+00A0, narrow no-break U+202F, thin U+2009, line breaks) collapsed to one space,
trimmed. NFKC turns ``m³`` into ``m3`` and ``℃`` into ``°c``.

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
  ``1,689``) is the only ambiguous form and is read by language:
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

Claims (:func:`claim_found`)
----------------------------
A claim is found when any of its matchers finds it, tried in this order (``how`` names the
first that did): ``pattern`` (case-insensitive regex on the normalised answer; the pattern
itself gets NFKC and the typographic folding but no casefolding, which would break escapes
such as ``\\S``), ``number`` (a number in the answer equal to it in the claim's unit, see
below), ``any_of`` then ``text`` (normalised substring). A substring that starts or ends with
a digit must not continue a number in the answer (``"100 €"`` is not found in
``"1 100 €"``, ``"33"`` not in ``"1 336"``), and an alternative or text that is itself one
number, with or without a unit (``"99,7 %"``, ``"1 689 k€"``, ``"16 bar"``, ``"33"``), is also
matched as a number, so every writing of it counts.

Number equality: the answer's value converted to the claim's unit (``1 689 000 €`` is
``1689 k€``, ``1,689 M€`` in French is too) equals the claim's number within ``tolerance``
(absolute, in the claim's unit) or, without a tolerance, after rounding the answer's value
half-up to the claim's decimals (claim ``99.7`` accepts ``99,72 %``; claim ``16`` does not
accept ``1,6`` or ``160``). A claim with a unit needs an answer number with a compatible unit
(a claim unit outside the table must appear literally after the number); a claim without a
unit accepts the number with any unit or none. Claim texts are read as written in
``gold_lang`` (``None``: inferred as above).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from functools import lru_cache
from typing import Literal

from pytest_ragv2.schema import Claim, ExpectedAnswer
from pytest_ragv2.scoring.identifiers import typed_spans

MatchHow = Literal["", "text", "any_of", "pattern", "number"]

# --------------------------------------------------------------------------- normalisation

_DROPPED = frozenset("\u00ad\u200b\u200c\u200d\u2060\ufeff")
_SUPERSCRIPT_DIGITS = frozenset("\u00b9\u00b2\u00b3\u2070\u2074\u2075\u2076\u2077\u2078\u2079")
_TYPOGRAPHIC = str.maketrans(
    {
        **dict.fromkeys("\u2018\u2019\u201a\u201b\u2032\u02bc\u00b4\uff07", "'"),
        **dict.fromkeys("\u201c\u201d\u201e\u201f\u00ab\u00bb\u2039\u203a\u2033", '"'),
        **dict.fromkeys("\u2010\u2011\u2012\u2013\u2014\u2015\u2212\ufe58\ufe63\uff0d", "-"),
    }
)


@lru_cache(maxsize=8192)
def _fold_cluster(cluster: str) -> str:
    folded = unicodedata.normalize("NFKC", cluster.translate(_TYPOGRAPHIC))
    return folded.casefold().translate(_TYPOGRAPHIC)


def _clusters(text: str) -> Iterator[tuple[int, int]]:
    """(start, end) of each base character with the combining marks that follow it."""
    start = 0
    for index in range(1, len(text) + 1):
        if index == len(text) or not unicodedata.combining(text[index]):
            yield start, index
            start = index


@dataclass(frozen=True)
class _Normalised:
    """A normalised text and, per character, the original span it came from."""

    text: str
    starts: tuple[int, ...]
    ends: tuple[int, ...]

    def original_span(self, start: int, end: int) -> tuple[int, int]:
        if end <= start:
            position = self.starts[start] if start < len(self.starts) else self.source_len
            return position, position
        return self.starts[start], self.ends[end - 1]

    @property
    def source_len(self) -> int:
        return self.ends[-1] if self.ends else 0


_ASCII_SPACE_RUN = re.compile(r"[ \t\n\r\f\v\x1c-\x1f\x85]+")


def _normalise_ascii(text: str) -> _Normalised:
    """The same result for ASCII text, without per-character Unicode work (NFKC leaves
    ASCII unchanged and casefold is lower): only whitespace runs collapse."""
    lowered = text.lower()
    parts: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    position = 0
    for match in _ASCII_SPACE_RUN.finditer(lowered):
        chunk = lowered[position : match.start()]
        parts.append(chunk)
        starts.extend(range(position, match.start()))
        if chunk or parts[:-1]:  # a run after text becomes one space; a leading run goes
            parts.append(" ")
            starts.append(match.start())
        position = match.end()
    parts.append(lowered[position:])
    starts.extend(range(position, len(lowered)))
    normalised = "".join(parts)
    if normalised.endswith(" "):
        normalised = normalised[:-1]
        starts.pop()
    ends = [start + 1 for start in starts]
    return _Normalised(normalised, tuple(starts), tuple(ends))


@lru_cache(maxsize=4096)
def _normalise(text: str) -> _Normalised:
    if text.isascii() and "\x00" not in text:
        return _normalise_ascii(text)
    out: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    for start, end in _clusters(text):
        cluster = text[start:end]
        if cluster in _DROPPED:
            continue
        if cluster in _SUPERSCRIPT_DIGITS and start > 0 and text[start - 1].isdigit():
            continue  # a footnote marker glued to a number: "16² bar" is 16 bar
        for char in _fold_cluster(cluster):
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
    return _Normalised("".join(out), tuple(starts), tuple(ends))


def normalise_answer_text(text: str) -> str:
    """NFKC, casefolded, typographic punctuation folded, whitespace collapsed and trimmed."""
    return _normalise(text).text


def _normalise_pattern(pattern: str) -> str:
    return unicodedata.normalize("NFKC", pattern.translate(_TYPOGRAPHIC)).translate(_TYPOGRAPHIC)


# --------------------------------------------------------------------------- units

# canonical unit -> (dimension, factor to the dimension's base unit)
_UNIT_DIMENSIONS: dict[str, tuple[str, Decimal]] = {
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
}

_UNIT_SPELLINGS: dict[str, tuple[str, ...]] = {
    "%": ("%", "pour cent", "pourcent", "pour-cent", "prozent", "percent", "per cent"),
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
    "m³/min": ("m3/min", "m^3/min", "cbm/min", "m3 /min"),
    "m³/h": ("m3/h", "m^3/h", "cbm/h"),
    "l/min": ("l/min",),
    "Nm³/h": ("nm3/h", "nm^3/h"),
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
    "h": ("h", "hr", "hrs", "hour", "hours", "heure", "heures", "std.", "std", "stunde", "stunden"),
    "min": ("min", "min.", "mins", "minute", "minutes", "minuten", "mn"),
    "s": ("s", "sec", "secs", "second", "seconds", "seconde", "secondes", "sekunde", "sekunden"),
    "days": ("j", "jour", "jours", "day", "days", "tag", "tage", "tagen"),
    "weeks": ("semaine", "semaines", "week", "weeks", "woche", "wochen"),
    "months": ("mois", "month", "months", "monat", "monate", "monaten"),
    "years": ("an", "ans", "année", "années", "year", "years", "jahr", "jahre", "jahren"),
    "kg": ("kg", "kilo", "kilos", "kilogramm", "kilogramme", "kilogrammes", "kilograms"),
    "g": ("g", "gramm", "gramme", "grammes", "grams"),
    "°C": ("°c", "° c", "grad celsius", "degrés celsius", "degrees celsius", "degree celsius"),
    "l": ("l", "liter", "litre", "litres", "liters", "litern"),
    "dB(A)": ("db(a)", "db (a)", "dba"),
    "dB": ("db",),
    "kW": ("kw",),
    "W": ("w", "watt", "watts"),
    "mm": ("mm",),
    "cm": ("cm",),
    "m": ("m", "meter", "metre", "meters", "metres", "mètre", "mètres"),
    "km": ("km",),
    "rpm": ("rpm", "tr/min", "u/min"),
}

_CANONICAL_BY_SPELLING: dict[str, str] = {}
for _canonical, _spellings in _UNIT_SPELLINGS.items():
    for _spelling in (*_spellings, _canonical):
        _CANONICAL_BY_SPELLING.setdefault(_normalise(_spelling).text, _canonical)


def _unit_regex(spellings: Sequence[str]) -> re.Pattern[str]:
    # Longest first so "minutes" beats "min" and "bar(g)" beats "bar"; a spelling ending in a
    # word character must not run on into a word ("16 bar garantiert" is bar, not bar g).
    parts = []
    for spelling in sorted(set(spellings), key=len, reverse=True):
        tail = r"(?![\w'])" if re.match(r".*\w$", spelling) else ""
        parts.append(re.escape(spelling) + tail)
    return re.compile("|".join(parts))


_UNIT_AFTER = _unit_regex(list(_CANONICAL_BY_SPELLING))
_CURRENCY_BEFORE = re.compile(r"(?:(?<![\w])(eur|usd)|(€|\$)) ?$")


def normalise_unit(unit: str) -> str:
    """The canonical symbol of a unit spelling; an unknown unit comes back normalised."""
    folded = _normalise(unit).text
    return _CANONICAL_BY_SPELLING.get(folded, folded)


def unit_scale(unit: str) -> tuple[str, Decimal] | None:
    """(dimension, factor to the dimension's base unit) of a unit, None when unknown."""
    return _UNIT_DIMENSIONS.get(normalise_unit(unit))


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
class _Num:
    value: Decimal
    unit: str | None
    start: int  # normalised span of number and unit
    end: int
    number_end: int  # normalised end of the digits (before any unit)
    decimals: int
    ambiguous: bool


# digits, then groups joined by . , ' or by a space that is followed by exactly three digits
_NUMBER_TOKEN = re.compile(
    r"([-+](?=[0-9]))?[0-9]+" r"(?:(?:[.,'](?=[0-9])| (?=[0-9]{3}(?![0-9])))[0-9]+)*"
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


def _masked_identifiers(text: str) -> str:
    if not _DIGIT.search(text):
        return text
    masked = _COMPOUND.sub(_mask_compound, text)
    for start, end in typed_spans(text):
        # a phone number, e-mail address, URL or IBAN is one identifier, not numbers
        masked = masked[:start] + "#" * (end - start) + masked[end:]
    return masked


def _unit_at(text: str, position: int) -> tuple[str, int] | None:
    at = position + 1 if text.startswith(" ", position) else position
    match = _UNIT_AFTER.match(text, at)
    if match is None:
        return None
    return _CANONICAL_BY_SPELLING[match.group()], match.end()


def _numbers(norm: str, lang: str | None) -> list[_Num]:
    masked = _masked_identifiers(norm)
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
    found: list[_Num] = []
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
            _Num(
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
    norm = _normalise(text)
    result = []
    for number in _numbers(norm.text, lang):
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


# --------------------------------------------------------------------------- claims


@dataclass(frozen=True)
class ClaimMatch:
    """Whether one claim was found in an answer, by which matcher and where."""

    claim: Claim
    matched: bool
    how: MatchHow = ""
    span: tuple[int, int] | None = None
    found: str = ""


@dataclass(frozen=True)
class _Answer:
    source: str
    norm: _Normalised
    numbers: tuple[_Num, ...]

    @classmethod
    def of(cls, answer: str, lang: str | None) -> _Answer:
        norm = _normalise(answer)
        return cls(answer, norm, tuple(_numbers(norm.text, lang)))

    def hit(self, claim: Claim, how: MatchHow, start: int, end: int) -> ClaimMatch:
        span = self.norm.original_span(start, end)
        return ClaimMatch(claim, True, how, span, self.source[span[0] : span[1]])


@dataclass(frozen=True)
class _Target:
    value: Decimal
    unit: str | None
    decimals: int
    tolerance: Decimal | None


def _decimal(value: float) -> Decimal:
    return Decimal(repr(float(value)))


def _decimals_of(value: Decimal) -> int:
    exponent = value.normalize().as_tuple().exponent
    return max(0, -exponent) if isinstance(exponent, int) else 0


def _in_unit(number: _Num, unit: str | None, norm: str) -> Decimal | None:
    """The number's value in ``unit`` (its own value when ``unit`` is None), None if foreign."""
    if unit is None:
        return number.value
    wanted = _UNIT_DIMENSIONS.get(unit)
    if wanted is None:
        # a unit outside the table: the answer must spell it right after the number
        at = number.number_end + 1 if norm.startswith(" ", number.number_end) else number.number_end
        if norm.startswith(unit, at):
            tail = at + len(unit)
            if tail >= len(norm) or not (norm[tail].isalnum() and unit[-1].isalnum()):
                return number.value
        return None
    if number.unit is None:
        return None
    have = _UNIT_DIMENSIONS.get(number.unit)
    if have is None or have[0] != wanted[0]:
        return None
    return number.value * have[1] / wanted[1]


def _equal(value: Decimal, target: _Target) -> bool:
    if target.tolerance is not None:
        return abs(value - target.value) <= target.tolerance
    quantum = Decimal(1).scaleb(-target.decimals)
    rounded = value.quantize(quantum, rounding=ROUND_HALF_UP)
    return rounded == target.value.quantize(quantum, rounding=ROUND_HALF_UP)


def _find_number(answer: _Answer, target: _Target) -> tuple[int, int] | None:
    for number in answer.numbers:
        value = _in_unit(number, target.unit, answer.norm.text)
        if value is not None and _equal(value, target):
            return number.start, number.end
    return None


def _as_number(text: str, gold_lang: str | None) -> _Num | None:
    """The single number (with or without unit) that a whole claim text consists of."""
    norm = _normalise(text).text
    numbers = _numbers(norm, gold_lang)
    if len(numbers) == 1 and numbers[0].start == 0 and numbers[0].end == len(norm):
        return numbers[0]
    return None


def _continues_number(text: str, start: int, end: int) -> bool:
    """Does a substring match at [start, end) begin or end inside a number of ``text``?"""
    if text[start].isdigit() and start > 0:
        before = text[start - 1]
        if before.isdigit() or before.isalpha():
            return True
        if before in ".,' " and start > 1 and text[start - 2].isdigit():
            return True
    if text[end - 1].isdigit() and end < len(text):
        after = text[end]
        if after.isdigit():
            return True
        if after in ".,'" and end + 1 < len(text) and text[end + 1].isdigit():
            return True
        lead = re.search(r"[0-9]+$", text[start:end])
        if (
            after == " "
            and lead is not None
            and len(lead.group()) <= 3
            and re.match(r" [0-9]{3}(?![0-9])", text[end:]) is not None
        ):
            return True
    return False


def _find_text(answer: _Answer, phrase: str, gold_lang: str | None) -> tuple[int, int] | None:
    needle = _normalise(phrase).text
    if not needle:
        return None
    haystack = answer.norm.text
    position = haystack.find(needle)
    while position >= 0:
        if not _continues_number(haystack, position, position + len(needle)):
            return position, position + len(needle)
        position = haystack.find(needle, position + 1)
    written = _as_number(phrase, gold_lang)
    if written is None:
        return None
    target = _Target(written.value, written.unit, written.decimals, None)
    return _find_number(answer, target)


def _claim_found(claim: Claim, answer: _Answer, gold_lang: str | None) -> ClaimMatch:
    if claim.pattern:
        flags = re.IGNORECASE | re.DOTALL
        match = re.search(_normalise_pattern(claim.pattern), answer.norm.text, flags)
        if match is not None:
            return answer.hit(claim, "pattern", match.start(), match.end())
    if claim.number is not None:
        value = _decimal(claim.number)
        target = _Target(
            value=value,
            unit=normalise_unit(claim.unit) if claim.unit else None,
            decimals=_decimals_of(value),
            tolerance=_decimal(claim.tolerance) if claim.tolerance is not None else None,
        )
        span = _find_number(answer, target)
        if span is not None:
            return answer.hit(claim, "number", *span)
    for alternative in claim.any_of:
        span = _find_text(answer, alternative, gold_lang)
        if span is not None:
            return answer.hit(claim, "any_of", *span)
    span = _find_text(answer, claim.text, gold_lang)
    if span is not None:
        return answer.hit(claim, "text", *span)
    return ClaimMatch(claim, False)


def claim_found(
    claim: Claim, answer: str, lang: str | None, *, gold_lang: str | None = None
) -> ClaimMatch:
    """Is ``claim`` in ``answer`` (written in ``lang``)? Rules in the module docstring."""
    return _claim_found(claim, _Answer.of(answer, lang), gold_lang)


@dataclass(frozen=True)
class ClaimsScore:
    """Claim-level outcome of one answer against one expected answer."""

    required_matched: tuple[ClaimMatch, ...]
    required_missed: tuple[Claim, ...]
    optional_matched: tuple[ClaimMatch, ...]
    forbidden_found: tuple[ClaimMatch, ...]

    @property
    def exact_answer(self) -> bool:
        """Every required claim present and no forbidden claim found."""
        return not self.required_missed and not self.forbidden_found

    @property
    def claim_correctness(self) -> float | None:
        """Matched required / (required + forbidden found); None when both are zero."""
        denominator = len(self.required_matched) + len(self.required_missed)
        denominator += len(self.forbidden_found)
        return len(self.required_matched) / denominator if denominator else None

    @property
    def completeness(self) -> float | None:
        """Matched required / required; None without required claims."""
        required = len(self.required_matched) + len(self.required_missed)
        return len(self.required_matched) / required if required else None

    @property
    def high_severity_forbidden(self) -> tuple[ClaimMatch, ...]:
        return tuple(m for m in self.forbidden_found if m.claim.severity == "high")


def score_claims(
    expected: ExpectedAnswer, answer: str, lang: str | None, *, gold_lang: str | None = None
) -> ClaimsScore:
    """Required, optional and forbidden claims of ``expected`` looked up in ``answer``."""
    parsed = _Answer.of(answer, lang)
    required = [_claim_found(claim, parsed, gold_lang) for claim in expected.required_claims]
    optional = [_claim_found(claim, parsed, gold_lang) for claim in expected.optional_claims]
    forbidden = [_claim_found(claim, parsed, gold_lang) for claim in expected.forbidden_claims]
    return ClaimsScore(
        required_matched=tuple(m for m in required if m.matched),
        required_missed=tuple(m.claim for m in required if not m.matched),
        optional_matched=tuple(m for m in optional if m.matched),
        forbidden_found=tuple(m for m in forbidden if m.matched),
    )
