"""The clause analysis the refusal reading rests on: an answer cut into clauses, each clause's
words folded, its subject and predicate, what it negates, and the constructions of each
language's lexicon it makes. The reading of a whole answer is
pytest_ragv2.scoring.refusal's.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

from pytest_ragv2.scoring.answer_text import fold
from pytest_ragv2.scoring.refusal_lexicon import Lexicon

WINDOW = 8  # words between a source as the place of a clause and the clause's negation


SCOPE_BEFORE = 5  # a negation scopes over a predicate up to this many words after it ...


SCOPE_AFTER = 3  # ... or this many words before it ("mentions no", "nennt keinen")


SUBJECT_WORDS = 4  # a source among a clause's first words is its subject


_CONTRACTIONS = (
    (re.compile(r"\bcan'?t\b"), "can not"),
    (re.compile(r"\bcannot\b"), "can not"),
    (re.compile(r"\bwon'?t\b"), "will not"),
    (re.compile(r"n't\b"), " not"),
)


_CLAUSE_END = re.compile(r"[.!?;:\n]+(?:\s|$)|[.!?;:\n]*\s+-\s+|\s*[(\[]\d+[)\]]\s*")


_WORD = re.compile(r"[^\W\d_]+")


# a clause that goes on without a subject of its own after a contrast word ("but is silent
# on ...", "mais ne précise pas ...", "aber schweigt ...") keeps the previous one's source
_CONTINUATIONS = frozenset(
    {"is", "are", "was", "were", "does", "do", "did", "has", "have", "says", "stays", "remains"}
    | {"est", "sont", "reste", "restent", "ne", "n", "dit", "disent", "demeure"}
    | {"ist", "sind", "hat", "haben", "bleibt", "bleiben", "sagt", "sagen", "schweigt"}
)


_AMBIGUOUS_BLOCKERS = frozenset({"that"})  # a complementizer or a pronoun


# "je n'ai rien", "I have nothing on ...", "ich habe nichts dazu": a possession of nothing
_NOTHING = frozenset({"rien", "nothing", "nichts"})


Verdict = Literal["refuses", "answers", "unclear"]


Role = Literal["refusal", "set_apart", "source", "courtesy", "fact"]


@dataclass(frozen=True, slots=True)
class Refusal:
    """A refusal found in an answer: the clause and which construction ("phrase" for a
    configured phrase)."""

    clause: str
    how: str
    language: str


@dataclass(frozen=True, slots=True)
class ReadClause:
    """One clause of an answer as :func:`read_refusal` reads it.

    ``start``/``end`` are its span in the original answer (``answer[start:end]`` is
    ``text``). ``role``: ``refusal`` (``how`` names the construction, ``language`` the
    lexicon or phrase list), ``set_apart`` (a fact next to a refusal that says what it
    applies to: "the 90-day period only applies to the Meridia contract"), ``source`` (what
    the sources do hold: "the datasheet gives the maximum pressure"), ``courtesy`` (an
    apology, a pointer elsewhere, a hedge: no fact) or ``fact``.
    """

    start: int
    end: int
    text: str
    role: Role
    how: str | None = None
    language: str | None = None


@dataclass(frozen=True, slots=True)
class RefusalReading:
    """What an answer does about its question (:func:`read_refusal`).

    ``verdict``: ``refuses`` (a refusal about the sources or the assistant's knowledge, and
    no fact stated as the answer), ``answers`` (facts, and no refusal, or facts first with a
    caveat after them, or a guess after a refusal) or ``unclear`` (the rules cannot tell:
    a refusal then a fact whose relation to it is unknown, a hedge or courtesy with neither
    refusal nor fact, an empty answer). ``reason`` says which.
    """

    verdict: Verdict
    reason: str
    clauses: tuple[ReadClause, ...]
    guessed: bool = False  # a refusal, then a guess at the answer ("probably around €900")

    @property
    def refusals(self) -> tuple[ReadClause, ...]:
        """The refusing clauses."""
        return tuple(c for c in self.clauses if c.role == "refusal")

    @property
    def facts(self) -> tuple[ReadClause, ...]:
        """The clauses that state facts: neither refusal nor courtesy (set-apart facts and
        what the sources hold included)."""
        return tuple(c for c in self.clauses if c.role in ("fact", "set_apart", "source"))

    @property
    def set_apart(self) -> tuple[tuple[int, int], ...]:
        """The (start, end) spans, in the original answer, of the facts a refusal sets
        apart: a claim scorer may leave them out of its search for forbidden claims."""
        return tuple((c.start, c.end) for c in self.clauses if c.role == "set_apart")


def _prepared(text: str) -> str:
    folded = fold(text).replace("’", "'")
    for pattern, replacement in _CONTRACTIONS:
        folded = pattern.sub(replacement, folded)
    return folded


def _clause_parts(text: str, splitters: Iterable[str]) -> list[tuple[str, bool]]:
    """The clauses of a folded text, each with whether a splitter word opened it."""
    words = frozenset(splitters)
    found: list[tuple[str, bool]] = []
    for part in _CLAUSE_END.split(text):
        current: list[str] = []
        opened = False
        for token in part.split():
            bare = token.strip(",\"'()[]«»")
            if bare in words and current:
                found.append((" ".join(current), opened))
                current, opened = [], True
            current.append(token)
        if current:
            found.append((" ".join(current), opened))
    return [(clause, opened) for clause, opened in found if clause.strip()]


def clauses(text: str, splitters: Iterable[str] = ()) -> list[str]:
    """The clauses of a folded text (see the module docstring)."""
    return [clause for clause, _ in _clause_parts(text, splitters)]


@lru_cache(maxsize=1 << 16)
def _is(word: str, entries: tuple[str, ...], compounds: bool = False) -> bool:
    # cached: an answer's words recur from conversation to conversation, and each lookup
    # walks a lexicon list (a third of a layer-B conversation's scoring time)
    for entry in entries:
        if entry.endswith("*"):
            stem = entry[:-1]
            if word.startswith(stem) or (compounds and len(stem) >= 5 and stem in word[1:]):
                return True
        elif word == entry or (compounds and len(entry) >= 5 and word.endswith(entry)):
            return True
    return False


@lru_cache(maxsize=512)
def _multi_pattern(entries: tuple[str, ...]) -> re.Pattern[str] | None:
    """Entries of several words ("knowledge base", "sans doute") as one pattern."""
    bodies = [re.escape(entry.rstrip("*")) for entry in entries if " " in entry]
    return re.compile(rf"(?<!\w)(?:{'|'.join(bodies)})") if bodies else None


@lru_cache(maxsize=256)
def _phrases_pattern(phrases: tuple[str, ...]) -> re.Pattern[str] | None:
    """Any of ``phrases`` (regular expressions) as a whole word sequence."""
    if not phrases:
        return None
    return re.compile(rf"(?<!\w)(?:{'|'.join(f'(?:{phrase})' for phrase in phrases)})(?!\w)")


def _index(joined: str, offset: int) -> int:
    """The index of the word at ``offset`` of words joined by single spaces."""
    return joined.count(" ", 0, offset)


def _found_at(pattern: re.Pattern[str] | None, joined: str) -> list[int]:
    if pattern is None:
        return []
    return [_index(joined, match.start()) for match in pattern.finditer(joined)]


@dataclass(frozen=True, slots=True)
class _Clause:
    """A clause's words in one language, with the positions the rules read."""

    words: tuple[str, ...]
    joined: str
    lexicon: Lexicon

    def at(self, entries: tuple[str, ...], compounds: bool = False) -> list[int]:
        found = [i for i, w in enumerate(self.words) if _is(w, entries, compounds)]
        return sorted({*found, *_found_at(_multi_pattern(entries), self.joined)})

    def has(self, words: frozenset[str]) -> bool:
        return not words.isdisjoint(self.words)

    def blocked(self, a: int, b: int) -> bool:
        """Whether a complementizer stands between positions ``a`` and ``b``."""
        low, high = min(a, b), max(a, b)
        return any(self.blocker(k) for k in range(low + 1, high))

    def blocker(self, k: int) -> bool:
        """Whether the word at ``k`` opens another clause: "que", "dass", "whether"; "that"
        only after a verb of saying or showing ("shows that"), not as a pronoun ("about
        that")."""
        word = self.words[k]
        if word not in self.lexicon.blockers:
            return False
        if word not in _AMBIGUOUS_BLOCKERS:
            return True
        before = self.words[k - 1] if k else ""
        lexicon = self.lexicon
        return any(
            _is(before, entries)
            for entries in (lexicon.text_report, lexicon.knowledge, lexicon.weak_report)
        )

    def _second_member(self, cue: int) -> int:
        """Where a correlative negation's second member stands ("weder … noch", "neither …
        nor", "ni … ni"), else ``cue``."""
        partner = _CORRELATIVES.get(self.words[cue])
        if partner is None:
            return cue
        return next(
            (
                k
                for k in range(cue + 1, min(len(self.words), cue + WINDOW))
                if self.words[k] == partner
            ),
            cue,
        )

    def negated(self, index: int, cues: Sequence[int]) -> bool:
        """Whether a negation of ``cues`` scopes over the word at ``index``."""
        for cue in cues:
            # a negative determiner of the subject reaches the verb past a longer noun
            # phrase ("aucun délai de résolution n'est mentionné"), a correlative one from
            # its second member on ("weder der Name der Stelle noch das Datum des Audits
            # finden sich ...")
            reach = (
                WINDOW
                if cue < SUBJECT_WORDS and self.words[cue] in self.lexicon.determiners
                else SCOPE_BEFORE
            )
            start = self._second_member(cue)
            if cue < index and index - start <= reach and not self.blocked(cue, index):
                return True
            if (
                cue == len(self.words) - 1
                and self.words[cue] in self.lexicon.final_negations
                and index < cue
                and not self.blocked(index, cue)
            ):
                return True  # "Ein Ablaufdatum enthält die Bescheinigung ... nicht"
            if index < cue and cue - index <= SCOPE_AFTER and not self.blocked(index, cue):
                return True
        return False


# a negation word that negates nothing in these idioms: "ohne Weiteres geeignet" (readily),
# "sans doute" (probably), "without a doubt", "sans problème", "sans supplément"
_IDIOMS = {
    "ohne": frozenset({"weiteres", "weitere", "zweifel", "probleme", "problem"})
    # what costs nothing more ("ohne Aufpreis", "sans supplément", "without extra charge")
    | {"aufpreis", "zusatzkosten", "mehrkosten"},
    "sans": frozenset({"doute", "probleme", "difficulte", "reserve", "aucun"})
    | {"supplement", "frais", "surcout"},
    "without": frozenset({"doubt", "a", "problems", "issue", "issues", "charge", "extra"}),
}


def _idiom(words: Sequence[str], index: int) -> bool:
    """Whether the negation word at ``index`` opens an idiom that negates nothing ("ohne
    Weiteres", "without a doubt")."""
    following = _IDIOMS.get(words[index])
    if following is None or index + 1 >= len(words):
        return False
    after = words[index + 1]
    if after == "a":  # "without a doubt"
        return index + 2 < len(words) and words[index + 2] == "doubt"
    if after == "aucun":  # "sans aucun doute"
        return index + 2 < len(words) and words[index + 2] == "doute"
    return after in following


# a correlative negation's first member and its second
_CORRELATIVES = {"weder": "noch", "neither": "nor", "ni": "ni"}


def _words(clause: str) -> tuple[str, ...]:
    return tuple(_WORD.findall(clause.replace("'", " ")))


def _bracketed(clause: str) -> frozenset[int]:
    """The positions (in :func:`_words`) of the words inside parentheses: a negation there
    qualifies a noun ("availability targets (not guarantees)"), not the clause's verb."""
    text = clause.replace("'", " ")
    if "(" not in text:
        return frozenset()
    inside, depth, index = set(), 0, 0
    for token in re.finditer(r"[()]|[^\W\d_]+", text):
        mark = token.group()
        if mark == "(":
            depth += 1
        elif mark == ")":
            depth = max(0, depth - 1)
        else:
            if depth:
                inside.add(index)
            index += 1
    return frozenset(inside)


def _sources(c: _Clause) -> list[int]:
    """Where ``c`` names a source (see the module docstring), attributions left out."""
    lexicon = c.lexicon
    found = set(c.at(lexicon.sources, lexicon.compounds))
    for i in c.at(lexicon.carriers, lexicon.compounds):
        # an attribute ("pièces transmises", "the provided material", "die übermittelten
        # Unterlagen"), not a predicate ("data is not shared")
        near = c.words[max(0, i - 2) : i] + c.words[i + 1 : i + 2]
        if any(_is(w, lexicon.given) for w in near):
            found.add(i)
    found.update(_found_at(_phrases_pattern(lexicon.given_phrases), c.joined))
    return sorted(
        i
        for i in found
        if not any(w in lexicon.attributions for w in c.words[max(0, i - SUBJECT_WORDS) : i])
    )


def _source_subject(c: _Clause, sources: Sequence[int]) -> bool:
    return any(i < SUBJECT_WORDS for i in sources)


def _governs(
    c: _Clause, source: int, index: int, reporters: Sequence[int], cues: Sequence[int]
) -> bool:
    """Whether the source at ``source`` is the subject or the place of the predicate at
    ``index``: no complementizer (but a relative right after the source) and no other,
    affirmed, report or knowledge predicate stands between them."""
    low, high = min(source, index), max(source, index)
    for k in range(low + 1, high):
        if c.blocker(k) and not (source < k <= source + 1):
            return False
        if k in reporters and not c.negated(k, cues):
            return False
    return True
