"""Numbers with their units, money and percentages, read as values.
(:mod:`pytest_ragv2.scoring.values` reads an answer with them.)
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from decimal import Decimal
from typing import TYPE_CHECKING

from pytest_ragv2.scoring.normalisation import Normalised, normalise
from pytest_ragv2.scoring.numbers import UNIT_DIMENSIONS, read_numbers, unit_after

if TYPE_CHECKING:
    from pytest_ragv2.scoring.numbers import Num

from pytest_ragv2.scoring.value_base import (
    ValueKind,
    _alternatives,
    _Collector,
    _plain,
    _primary,
    _tidy,
)

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
