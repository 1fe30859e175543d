"""Numbers written in words (text2num), and halves and hours-and-minutes said in words, read as
values. (:mod:`pytest_ragv2.scoring.values` reads an answer with them.)
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from decimal import Decimal, InvalidOperation
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from pytest_ragv2.scoring.normalisation import Normalised

if TYPE_CHECKING:
    pass

from pytest_ragv2.scoring.value_amounts import _emit, _Number, _shared_units, _suffix
from pytest_ragv2.scoring.value_base import ValueKind, _Collector, _plain, _primary

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
