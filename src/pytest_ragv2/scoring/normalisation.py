"""Answer text normalisation, with every normalised character mapped back to the original.

Pure functions, no I/O. Normalisation: Unicode NFKC, casefold, typographic
apostrophes/quotes/dashes folded to ``' " -``, zero-width characters and soft hyphens
dropped, every run of whitespace (also no-break U+00A0, narrow no-break U+202F, thin U+2009,
line breaks) collapsed to one space, trimmed. NFKC turns ``m³`` into ``m3`` and ``℃`` into
``°c``. A superscript digit glued to a number is a footnote marker and is dropped
(``16² bar`` is 16 bar).

:class:`Normalised` keeps, per normalised character, the span of the original text it came
from, so a match found in the normalised text is reported at its place in the original.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache

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
class Normalised:
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


# every ASCII whitespace character (``str.isspace``) as a space
_ASCII_SPACES = str.maketrans(dict.fromkeys("\t\n\v\f\r\x1c\x1d\x1e\x1f", " "))
_SPACES = re.compile(r"  +")


def _normalise_ascii(text: str) -> Normalised:
    """The same result for ASCII text, without per-character Unicode work (NFKC leaves
    ASCII unchanged and casefold is lower): only whitespace runs collapse."""
    out: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    _fold_ascii(text, 0, len(text), out, starts, ends)
    return _finished(out, starts, ends)


def _finished(out: list[str], starts: list[int], ends: list[int]) -> Normalised:
    """The normalised text, its trailing space dropped."""
    if out and out[-1].endswith(" "):
        out[-1] = out[-1][:-1]
        starts.pop()
        ends.pop()
    return Normalised("".join(out), tuple(starts), tuple(ends))


_ASCII_RUN = re.compile(r"[\x01-\x7f]+")
_SHORT_ASCII_RUN = 8  # shorter runs go through the cluster loop with what surrounds them


@lru_cache(maxsize=4096)
def normalise(text: str) -> Normalised:
    if text.isascii() and "\x00" not in text:
        return _normalise_ascii(text)
    # the ASCII runs of a text (a French or German text is mostly ASCII) lower-cased whole,
    # the rest cluster by cluster: the same result as every cluster folded one by one
    out: list[str] = []  # characters, and whole ASCII pieces
    starts: list[int] = []
    ends: list[int] = []
    done = 0
    for run in _ASCII_RUN.finditer(text):
        start, end = run.span()
        if end < len(text) and unicodedata.combining(text[end]):
            end -= 1  # the run's last character takes the marks that follow it
        if end - start < _SHORT_ASCII_RUN:
            continue
        _fold_clusters(text, done, start, out, starts, ends)
        _fold_ascii(text, start, end, out, starts, ends)
        done = end
    _fold_clusters(text, done, len(text), out, starts, ends)
    return _finished(out, starts, ends)


def _fold_clusters(
    text: str, begin: int, stop: int, out: list[str], starts: list[int], ends: list[int]
) -> None:
    """Fold ``text[begin:stop]`` (whole clusters) cluster by cluster onto ``out``."""
    if begin >= stop:
        return
    for start, end in _clusters(text[begin:stop]):
        start, end = start + begin, end + begin
        cluster = text[start:end]
        if cluster in _DROPPED:
            continue
        if cluster in _SUPERSCRIPT_DIGITS and start > 0 and text[start - 1].isdigit():
            continue  # a footnote marker glued to a number: "16² bar" is 16 bar
        for char in _fold_cluster(cluster):
            if char.isspace():
                if not out or out[-1].endswith(" "):
                    continue
                char = " "
            out.append(char)
            starts.append(start)
            ends.append(end)


def _fold_ascii(
    text: str, begin: int, stop: int, out: list[str], starts: list[int], ends: list[int]
) -> None:
    """Fold the ASCII run ``text[begin:stop]`` onto ``out``: lower-cased (its NFKC and
    casefold), each whitespace run one space at its first character's place (none first in
    the text, nor after a space). Every kept character maps to itself: a piece is copied
    whole, only the runs of two or more spaces are stepped over."""
    run = text[begin:stop].lower().translate(_ASCII_SPACES)
    position = 0
    if run.startswith(" ") and (not out or out[-1].endswith(" ")):
        position = len(run) - len(run.lstrip(" "))
    for spaces in _SPACES.finditer(run, position):
        _keep(run, begin, position, spaces.start() + 1, out, starts, ends)
        position = spaces.end()
    _keep(run, begin, position, len(run), out, starts, ends)


def _keep(
    run: str,
    begin: int,
    start: int,
    stop: int,
    out: list[str],
    starts: list[int],
    ends: list[int],
) -> None:
    if start < stop:
        out.append(run[start:stop])
        starts.extend(range(begin + start, begin + stop))
        ends.extend(range(begin + start + 1, begin + stop + 1))


def normalise_answer_text(text: str) -> str:
    """NFKC, casefolded, typographic punctuation folded, whitespace collapsed and trimmed."""
    return normalise(text).text


# a typographic dash of a pattern is folded as the texts are, escaped ("\-"), so that a
# character class listing dashes ("[:=|–—]") stays a list and becomes no range ("[:=|--]");
# one the author escaped already ("\–") keeps its one backslash
_PATTERN_DASH = re.compile(r"\\?[\u2010-\u2015\u2212\ufe58\ufe63\uff0d]")


def normalise_pattern(pattern: str) -> str:
    escaped = _PATTERN_DASH.sub(r"\\-", pattern)
    return unicodedata.normalize("NFKC", escaped.translate(_TYPOGRAPHIC)).translate(_TYPOGRAPHIC)
