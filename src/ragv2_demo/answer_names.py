"""The answer model's reading of a question: names (identifiers and proper nouns), quarters,
years and numbers, the parts of a question (``split_parts``), small talk and implicit
follow-ups."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ragv2_demo.answer_language import (
    _BACK_REFERENCE,
    _DEMONSTRATIVE,
    _FOLLOW_UP_START,
    _META_WORDS,
    _PART_SPLIT,
    _SMALL_TALK,
    _STOP_WORDS,
    _WORD,
    _words,
    detect_language,
    fold,
)

if TYPE_CHECKING:
    from collections.abc import Iterable

    from ragv2_demo.answer_language import Name

# --------------------------------------------------------------------------------------------
# Names (identifiers and proper nouns), quarters, numbers
# --------------------------------------------------------------------------------------------

_IDENTIFIER = re.compile(
    r"(?<![\w-])(?=[\w./-]*[^\W\d_])(?=[\w./-]*\d)[^\W_]+(?:[-./][^\W_]+)*(?![\w-])"
)
_ACRONYM_NUMBER = re.compile(r"\b[A-Z][A-Z0-9]{1,6}[ -]\d+(?:[-./][A-Za-z0-9]+)*\b")
_ACRONYM = re.compile(r"\b[A-Z]{2,}\b")
_CAPITALISED_RUN = re.compile(r"\b[A-ZÀ-ÖØ-Þ][\w'’-]*(?:\s+[A-ZÀ-ÖØ-Þ][\w'’-]*)*")
_SENTENCE_START = re.compile(r"(?:^|[.!?:;]\s+|\n)\s*$")
_NUMBER = re.compile(r"\d+(?:[ .,]\d+)*")
_QUARTER_NAME = re.compile(
    r"\b(premier|1er|deuxieme|second|troisieme|quatrieme|first|third|fourth|erstes?|zweites?"
    r"|drittes?|viertes?|[1-4](?:st|nd|rd|th|e|\.)?)\s+(?:trimestre|quarter|quartal)"
)
_QUARTER_TOKEN = re.compile(r"\b[tq]([1-4])\b")
_ORDINALS = {
    "premier": "1", "1er": "1", "first": "1", "erste": "1", "erstes": "1",
    "deuxieme": "2", "second": "2", "zweite": "2", "zweites": "2",
    "troisieme": "3", "third": "3", "dritte": "3", "drittes": "3",
    "quatrieme": "4", "fourth": "4", "vierte": "4", "viertes": "4",
}  # fmt: skip
_YEAR = re.compile(r"\b(?:19|20)\d\d\b")


def _quarters(folded: str) -> set[str]:
    found = {"q" + m.group(1) for m in _QUARTER_TOKEN.finditer(folded)}
    for match in _QUARTER_NAME.finditer(folded):
        ordinal = match.group(1)
        number = _ORDINALS.get(ordinal) or (ordinal[0] if ordinal[0] in "1234" else None)
        if number:
            found.add("q" + number)
    return found


@dataclass(frozen=True, slots=True)
class _Names:
    identifiers: tuple[Name, ...]  # with digits, or all-capital acronyms
    proper: tuple[Name, ...]  # capitalised words inside a sentence (not German)

    @property
    def all(self) -> tuple[Name, ...]:
        return self.identifiers + self.proper

    def phrases(self, text: str) -> list[str]:
        """The names as written in ``text`` (for carrying a subject into a query)."""
        out: list[str] = []
        for match in _name_phrases(text):
            if match not in out:
                out.append(match)
        return out


def _name_phrases(text: str) -> list[str]:
    found = [m.group(0) for m in _ACRONYM_NUMBER.finditer(text)]
    found += [m.group(0) for m in _IDENTIFIER.finditer(text) if not _inside(m.group(0), found)]
    found += [m.group(0) for m in _ACRONYM.finditer(text) if not _inside(m.group(0), found)]
    if detect_language(text) != "de":
        found += [p for p in _proper_nouns(text) if not _inside(p, found)]
    return found


def _inside(part: str, wholes: Iterable[str]) -> bool:
    return any(part in whole for whole in wholes)


def _proper_nouns(text: str) -> list[str]:
    nouns: list[str] = []
    for match in _CAPITALISED_RUN.finditer(text):
        start = match.start()
        words = match.group(0).split()
        if _SENTENCE_START.search(text[:start]):
            words = words[1:]  # the first word of a sentence is capitalised anyway
        words = [w.removesuffix("'s").removesuffix("’s") for w in words]
        words = [w for w in words if fold(w) not in _STOP_WORDS and len(w) > 1]
        if words:
            nouns.append(" ".join(words))
    return nouns


def _names(text: str) -> _Names:
    language = detect_language(text)
    identifiers: list[Name] = []
    raw: list[str] = [m.group(0) for m in _ACRONYM_NUMBER.finditer(text)]
    raw += [m.group(0) for m in _IDENTIFIER.finditer(text) if not _inside(m.group(0), raw)]
    raw += [m.group(0) for m in _ACRONYM.finditer(text) if not _inside(m.group(0), raw)]
    for item in raw:
        name = tuple(_words(item))
        if name and name not in identifiers and not _QUARTER_TOKEN.fullmatch(" ".join(name)):
            identifiers.append(name)
    proper: list[Name] = []
    if language != "de":
        for phrase in _proper_nouns(text):
            for word in phrase.split():
                name = tuple(_words(word))
                if (
                    name
                    and name not in proper
                    and not any(set(name) <= set(i) for i in identifiers)
                ):
                    proper.append(name)
    return _Names(tuple(identifiers), tuple(proper))


def _contains_name(haystack_words: str, name: Name) -> bool:
    """Whether the space-joined folded words ``haystack_words`` contain ``name`` in a row."""
    return f" {' '.join(name)} " in haystack_words


# --------------------------------------------------------------------------------------------
# The question
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Part:
    text: str
    terms: tuple[str, ...]
    names: _Names
    quarters: frozenset[str]
    years: frozenset[str]
    numbers: tuple[str, ...]
    nouns: tuple[str, ...]  # German only: capitalised words inside a sentence, folded


_GERMAN_NOUN = re.compile(r"(?<=\s)[A-ZÄÖÜ][a-zäöüß]{3,}")


def _part(text: str) -> _Part:
    folded = fold(text)
    names = _names(text)
    nouns: tuple[str, ...] = ()
    if detect_language(text) == "de":
        nouns = tuple(
            w
            for w in (fold(m.group(0)) for m in _GERMAN_NOUN.finditer(text))
            if w not in _STOP_WORDS and w not in _META_WORDS
        )
    name_words = {w for name in names.all for w in name}
    terms: list[str] = []
    for word in _WORD.findall(folded):
        if (
            len(word) < 2
            or word in _STOP_WORDS
            or word in _META_WORDS
            or word in name_words
            or any(c.isdigit() for c in word)
        ):
            continue
        if word not in terms:
            terms.append(word)
    numbers = tuple(dict.fromkeys(m.group(0) for m in _NUMBER.finditer(text)))
    return _Part(
        text=text,
        terms=tuple(terms),
        names=names,
        quarters=frozenset(_quarters(folded)),
        years=frozenset(_YEAR.findall(folded)),
        numbers=numbers,
        nouns=nouns,
    )


def split_parts(prompt: str) -> list[str]:
    """The prompt's sub-questions (V2): split at ", and <question word>" unless the later
    part points back at the earlier one."""
    folded = fold(prompt)
    cuts = [m for m in _PART_SPLIT.finditer(folded)]
    if not cuts:
        return [prompt]
    parts: list[str] = []
    start = 0
    for match in cuts:
        parts.append(prompt[start : match.start()])
        start = match.end()
    parts.append(prompt[start:])
    parts = [p.strip(" ,;") for p in parts if p.strip(" ,;?")]
    if len(parts) < 2 or any(_BACK_REFERENCE.search(fold(p)) for p in parts[1:]):
        return [prompt]
    if any(len(_part(p).terms) + len(_part(p).names.all) < 2 for p in parts):
        return [prompt]
    return parts


def is_small_talk(prompt: str) -> bool:
    folded = fold(prompt)
    rest = _SMALL_TALK.sub(" ", folded)
    content = [w for w in _WORD.findall(rest) if w not in _STOP_WORDS and w not in _META_WORDS]
    had_small_talk = rest != folded
    return (had_small_talk and len(content) <= 1) or not _WORD.findall(folded)


def is_follow_up(prompt: str) -> bool:
    """An implicit follow-up: refers to a subject it does not name itself."""
    if _names(prompt).all:
        return False
    folded = fold(prompt)
    if _FOLLOW_UP_START.search(folded):
        return True
    for match in _DEMONSTRATIVE.finditer(folded):
        if match.group(1) not in _WORD.findall(folded[: match.start()]):
            return True
    return False
