"""Text helpers shared by the answer scorers: phrase search, sentences, masked spans.

Pure functions, no I/O. Phrases (refusals, synthetic-data labels) are looked up on a
**folded** copy of the text: Unicode NFKD with combining marks dropped (accent-insensitive:
"présenté" = "presente"), casefolded, typographic apostrophes/quotes/dashes folded to ASCII,
whitespace runs collapsed. Folding keeps one character per source character except where
NFKD expands one (ligatures, "ß"), so a found phrase is reported by its folded text.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from functools import lru_cache

from pytest_ragv2.scoring.markers import CITATION_MARKER

_TYPOGRAPHIC = str.maketrans(
    {
        **dict.fromkeys("\u2018\u2019\u201a\u201b\u2032\u02bc\u00b4\uff07", "'"),
        **dict.fromkeys("\u201c\u201d\u201e\u201f\u00ab\u00bb\u2039\u203a\u2033", '"'),
        **dict.fromkeys("\u2010\u2011\u2012\u2013\u2014\u2015\u2212\ufe58\ufe63\uff0d", "-"),
    }
)
_SPACES = re.compile(r"\s+")


@lru_cache(maxsize=4096)
def fold(text: str) -> str:
    """Accent-insensitive, casefolded, typographic punctuation folded, whitespace collapsed."""
    decomposed = unicodedata.normalize("NFKD", text.translate(_TYPOGRAPHIC))
    stripped = "".join(char for char in decomposed if not unicodedata.combining(char))
    return _SPACES.sub(" ", stripped.casefold()).strip()


GAP = "..."  # inside a phrase: up to MAX_GAP_WORDS words ("nicht ... zugelassen")
MAX_GAP_WORDS = 4


def _phrase_pattern(phrase: str) -> str:
    parts = [re.escape(part.strip()) for part in phrase.split(GAP)]
    return rf"(?:\s+\S+){{0,{MAX_GAP_WORDS}}}?\s+".join(parts)


@lru_cache(maxsize=1024)
def _phrase_regex(phrases: tuple[str, ...], whole_words: bool) -> re.Pattern[str] | None:
    folded = sorted({fold(phrase) for phrase in phrases if phrase.strip()}, key=len, reverse=True)
    if not folded:
        return None
    tail = r"(?!\w)" if whole_words else ""
    alternatives = "|".join(_phrase_pattern(phrase) for phrase in folded)
    return re.compile(rf"(?<!\w)(?:{alternatives}){tail}")


def find_phrase(text: str, phrases: Iterable[str], *, whole_words: bool = True) -> str | None:
    """The first of ``phrases`` found in ``text`` (folded), or None.

    A phrase must start at a word boundary; with ``whole_words`` it must also end at one,
    without it a phrase is a stem ("synthetisch" finds "synthetischer").
    """
    pattern = _phrase_regex(tuple(phrases), whole_words)
    if pattern is None:
        return None
    found = pattern.search(fold(text))
    return found.group() if found is not None else None


# --------------------------------------------------------------------------- sentences

# A sentence ends at . ! ? … followed by whitespace and a capital, a quote, a bracket or a
# bullet (not a digit: "max. 16 bar", "Art. 7" stay whole), and at a line break that is no
# hard wrap inside a sentence (:func:`_soft_wrap`).
_SENTENCE_END = re.compile(r"(?<=[.!?…])[\"')\]»”]*(\s+)(?=[^\s\d])|\n+")


# a full stop after a lowercase one-letter word ("i.e.", "10 a.m.", "z. B.": a letter after
# another's stop) or after one of these ends an abbreviation, not a sentence
ABBREVIATIONS = frozenset(
    {"ca", "bzw", "vgl", "ggf", "inkl", "zzgl", "evtl", "env", "approx", "nr", "art", "abs"}
    | {"resp", "usw", "dr", "vs", "cf", "excl", "incl", "exkl"}
)
_WORD_BEFORE = re.compile(r"(?<![^\W\d_])([^\W\d_]+)$")
_LETTER_STOP_BEFORE = re.compile(r"(?<![^\W\d_])[^\W\d_]\.\s?$")


def abbreviation_at(text: str, stop: int) -> bool:
    """Whether the full stop at ``stop`` ends an abbreviation (:data:`ABBREVIATIONS`)."""
    before = _WORD_BEFORE.search(text, max(0, stop - 12), stop)
    if before is None:
        return False
    word = before.group(1)
    if len(word) == 1:
        return word.islower() or (
            _LETTER_STOP_BEFORE.search(text, max(0, before.start() - 4), before.start()) is not None
        )
    return word.casefold() in ABBREVIATIONS


_ORDINAL_BEFORE = re.compile(r"(?<![\d.,])\d{1,2}$")
_WORD_AFTER = re.compile(r"[^\W\d_]+")
_PERIOD_WORDS = ("quartal", "halbjahr", "jahrhundert", "jahrtausend")


def ordinal_at(text: str, stop: int, after: int) -> bool:
    """Whether the full stop at ``stop`` makes the number before it an ordinal of a date
    ("am 1. März 2025", "im 2. Quartal"), not the end of a sentence."""
    if _ORDINAL_BEFORE.search(text, max(0, stop - 3), stop) is None:
        return False
    word = _WORD_AFTER.match(text, after)
    if word is None:
        return False
    from pytest_ragv2.scoring.values import month_names  # values reads with this module

    folded = word.group().casefold()
    return folded in month_names() or folded.startswith(_PERIOD_WORDS)


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of each sentence or line of ``text``, whitespace trimmed, empties dropped."""
    spans: list[tuple[int, int]] = []
    start = 0
    for match in _SENTENCE_END.finditer(text):
        if match.group(1) is None:  # a line break
            if _soft_wrap(text, match):
                continue
            _add_span(text, start, match.start(), spans)
            start = match.end()
        elif (
            "\n" not in match.group(1)
            and text[match.start() - 1] == "."
            and (
                abbreviation_at(text, match.start() - 1)
                or ordinal_at(text, match.start() - 1, match.end())
            )
        ):
            continue
        elif "\n" in match.group(1) or _starts_upper_or_mark(text, match.end()):
            _add_span(text, start, match.start(1), spans)
            start = match.end()
    _add_span(text, start, len(text), spans)
    return spans


_WRAPPED_BEFORE = re.compile(r"[^\W\d_][\w,)\]%€]*$|[,\d]$")


_LIST_NUMBER = re.compile(r"\d{1,2}[.)]\s")
_WRAPPED_LINE = 60  # a line this long that ends without punctuation was wrapped


def _soft_wrap(text: str, line_break: re.Match[str]) -> bool:
    """A single line break inside a sentence that an answer hard-wraps ("... par
    périodes\nsuccessives de 12 mois."): after a word or a comma (not a sentence's end, a
    colon or a table cell), the line goes on with a lower-case word or a number — or, after
    a long line (a wrapped one, not a heading), with any word or an opening bracket or
    quote ("... eine jährliche\nAbwanderungsquote"); never with a list item, a table row or
    a heading."""
    if line_break.group() != "\n":
        return False
    after = line_break.end()
    if after >= len(text) or text[after] in "|-*•#+":
        return False
    line_start = text.rfind("\n", 0, line_break.start()) + 1
    line = text[line_start : line_break.start()].rstrip()
    if not line or line.lstrip().startswith(("|", "-", "*", "•", "#")):
        return False
    if _WRAPPED_BEFORE.search(line) is None:
        return False
    following = text[after]
    if following.islower() or following.isdigit():
        return not _LIST_NUMBER.match(text, after)
    return (following.isalpha() or following in '(«"„“') and len(line) >= _WRAPPED_LINE


def _starts_upper_or_mark(text: str, position: int) -> bool:
    if position >= len(text):
        return True
    char = text[position]
    return char.isupper() or char in "\"'«„“([*-•|#"


def _add_span(text: str, start: int, end: int, spans: list[tuple[int, int]]) -> None:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    if end > start:
        spans.append((start, end))


def sentence_of(spans: Sequence[tuple[int, int]], position: int) -> int | None:
    """Index of the span holding ``position`` (the nearest one before it between spans)."""
    found: int | None = None
    for index, (start, end) in enumerate(spans):
        if start <= position < end:
            return index
        if start <= position:
            found = index
    return found


# --------------------------------------------------------------------------- masking


def marker_spans(text: str, markers: Iterable[str] = ()) -> list[tuple[int, int]]:
    """Spans of citation markers: ``[1]``, ``[1, 3]``, private-use markers, and ``markers``."""
    spans = [match.span() for match in CITATION_MARKER.finditer(text)]
    for marker in set(markers):
        if not marker:
            continue
        position = text.find(marker)
        while position >= 0:
            spans.append((position, position + len(marker)))
            position = text.find(marker, position + 1)
    return spans


def mask(text: str, spans: Iterable[tuple[int, int]]) -> str:
    """``text`` with every span replaced by spaces (same length, so offsets stay valid)."""
    chars = list(text)
    for start, end in spans:
        chars[start:end] = " " * (end - start)
    return "".join(chars)


def overlaps(span: tuple[int, int], others: Iterable[tuple[int, int]]) -> bool:
    return any(span[0] < end and start < span[1] for start, end in others)


class Coverage:
    """Which characters of a text some span covers: adding a span and asking whether one
    overlaps the covered ones both cost the span's length (never the number of spans)."""

    __slots__ = ("_covered",)

    def __init__(self, length: int, spans: Iterable[tuple[int, int]] = ()) -> None:
        self._covered = bytearray(length)
        for span in spans:
            self.add(span)

    def add(self, span: tuple[int, int]) -> None:
        start, end = max(span[0], 0), min(span[1], len(self._covered))
        if end > start:
            self._covered[start:end] = b"\x01" * (end - start)

    def overlaps(self, span: tuple[int, int]) -> bool:
        start, end = max(span[0], 0), min(span[1], len(self._covered))
        return end > start and self._covered.find(1, start, end) >= 0
