"""Times of day, in digits and in words, read as values. (:mod:`pytest_ragv2.scoring.values`
reads an answer with them.)
"""

from __future__ import annotations

import re
from decimal import Decimal
from typing import TYPE_CHECKING

from pytest_ragv2.scoring.normalisation import Normalised

if TYPE_CHECKING:
    pass

from pytest_ragv2.scoring.value_base import _Collector, _primary
from pytest_ragv2.scoring.value_words import (
    _JOINERS,
    _languages,
    _number_word,
    _text2num,
    _word_value,
)

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
