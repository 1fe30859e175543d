"""Dates at day, month, quarter, half or year granularity, in French, German and English
writings, read as values. (:mod:`pytest_ragv2.scoring.values` reads an answer with them.)
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import date
from functools import lru_cache
from typing import TYPE_CHECKING, Literal, NamedTuple

from pytest_ragv2.scoring.markers import LIST_MARKER
from pytest_ragv2.scoring.normalisation import Normalised

if TYPE_CHECKING:
    pass

from pytest_ragv2.scoring.value_amounts import _suffix
from pytest_ragv2.scoring.value_base import (
    Granularity,
    _alternatives,
    _Collector,
    _primary,
    _region,
)
from pytest_ragv2.scoring.value_date_words import (
    _ORDINALS,
    _day_word_before,
    _day_words,
    month_names,
)
from pytest_ragv2.scoring.value_phones import _guarded_matches

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
