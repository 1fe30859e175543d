"""Does an answer refuse? A refusal is about the sources or the assistant's knowledge.

Pure functions, no I/O. A refusal says the answer is not given: the fact is absent from the
sources (the documents, the excerpts, what the assistant was given), the assistant does not
know, cannot say or cannot confirm it, or the request is incompatible ("not rated for
hydrogen"). A negated statement about the world ("aucune vulnérabilité n'a été trouvée lors
du dernier audit", "keine Kundendaten wurden kompromittiert", "no data breach occurred") is
no refusal: nothing in it is about the sources or the assistant.

The answer is cut into **clauses** (at ``. ! ? ; :``, line breaks, dashes and citation
markers, and before "but", "mais", "aber", "only", ...), words are folded (accents dropped,
casefolded, "n't" read as "not"), and a clause refuses by what its negated predicate is
about (the words are in :mod:`pytest_ragv2.scoring.refusal_lexicon`, grouped by class):

- a **text-report** predicate (mentioned, stated, listed, "précisé", "figure", "erwähnt",
  "angegeben") negated: the sources are silent, whoever the subject (``negated report``);
- a **knowledge** predicate (know, confirm, say, answer, determine; "savoir", "dire",
  "répondre"; "wissen", "sagen", "bestätigen") negated in the first person, impersonally
  ("impossible de dire", "lässt sich nicht sagen", "cannot be determined") or with a source
  as its subject ("the documents don't say"): ``not known`` (``negated report`` with a
  source); "the supplier has not confirmed the date" is an event;
- a **discovery** predicate (found, identified, "trouvé", "festgestellt") negated when the
  assistant looked (first person singular: "je n'ai rien trouvé", "I found no") or the
  search is placed in the sources ("in den Unterlagen nichts gefunden"): ``not found``;
  "no critical vulnerability was found" (passive, no source) is an event;
- a **source** negated ("not in the documents", "aucune des pièces transmises", "in keinem
  Dokument"), a source as the subject or the place of a negated clause ("les documents ne
  font pas état de ...", "in den Unterlagen ... nicht"), or a source with the assistant in
  the first person singular and a negation: ``negated source``;
- an **information** word after a negative determiner ("aucune information", "keine
  Angaben", "no details") unless the clause says what happens to the data ("aucune
  information n'est perdue"); a **data** word ("données", "Daten", "data", "figure")
  likewise, but only in the first person, with a source or an availability word ("no data
  available"): ``no information``;
- an **absence** word (missing, "manque", "fehlt") with a source or an information word:
  ``absent information``; a **silence** word ("muet", "schweigt", "silent") with a source as
  subject: ``silent sources``; an **exceeding** word ("dépasse", "au-delà", "übersteigt",
  "beyond", "past") followed by a source ("what I was given", "ce qui m'a été
  communiqué"): ``beyond the sources``;
- a **weak** predicate (contain, give, have, available, appear) negated with a source as its
  subject or place, or in the first person with an information word ("je n'ai pas cette
  information"): ``negated availability``;
- "no access" in the first person, or an incompatibility (a compatibility word negated, a
  prohibited use "with" something, "inadapté", "ungeeignet"): ``no access``,
  ``incompatible``; a self-refusal ("j'ignore", "m'échappe", "keine Ahnung", "unknown"):
  ``self refusal``.

A **source** is a source noun (documents, sources, excerpts, passages, context, knowledge
base, datasheet, manual), a carrier noun marked as given to the assistant ("pièces
transmises", "the material provided", "die übermittelten Unterlagen"), or a relative naming
what the assistant was given or knows ("what I was given", "ce qui m'a été fourni", "was
mir vorliegt"); a source right after an attribution ("selon", "laut", "according to")
cites the source and does not count. A negation **scopes** over a predicate up to five words
before it or three after it, not past a complementizer ("the documents show *that* no ...").
A source is silent only for a predicate it governs: in "the manual says the unit has no
port" the negation is the manual's content. A clause opened by a contrast word and going on
without its own subject ("... but is silent on the price") keeps the previous clause's
source. A clause holding a synthetic-data label ("keine bestätigten Projektdaten") labels
data and is no refusal; a hedge ("je ne suis pas sûr", "nicht ganz sicher", "not sure") is
no refusal either.

:func:`find_refusal` gives the first refusing clause; :func:`read_refusal` reads the whole
answer: each clause's role (refusal, fact, a fact set apart from the refusal, what the
sources hold, courtesy) and a verdict, ``refuses``, ``answers`` or ``unclear``.

The configured phrase lists (:mod:`pytest_ragv2.scoring.phrases`) are looked up as well, as
additions. Every language's lexicon is tried, the prompt's first: a German refusal to an
English prompt still refuses.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Literal

from pytest_ragv2.gold.schema import Claim
from pytest_ragv2.scoring.answer_text import abbreviation_at, find_phrase, fold
from pytest_ragv2.scoring.refusal_lexicon import LEXICONS, Lexicon

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


def clause_refusal(clause: str, lexicon: Lexicon, carried: bool = False) -> str | None:
    """How ``clause`` (folded) refuses, or None (rules in the module docstring).

    ``carried``: the clause goes on, after a contrast word, from a clause whose subject is a
    source ("the datasheet gives the pressure but is silent on the power").
    """
    words = _words(clause)
    if not words:
        return None
    c = _Clause(words, " ".join(words), lexicon)
    if any(_is(w, lexicon.labels) for w in words) and not _sources(c):
        # a synthetic-data label ("not confirmed"); with a source, what the sources hold
        # ("the documents contain no confirmed figure")
        return None
    self_refusal = _phrases_pattern(lexicon.self_refusals)
    if self_refusal is not None and self_refusal.search(c.joined):
        return "self refusal"
    if any(_is(w, lexicon.incompatible) for w in words):
        return "incompatible"
    bracketed = _bracketed(clause)
    cues = [
        i
        for i, w in enumerate(words)
        if w in lexicon.negations and i not in bracketed and not _idiom(words, i)
    ]
    absence = c.at(lexicon.absence)
    silence = c.at(lexicon.silence)
    exceed = c.at(lexicon.exceed)
    if not (cues or absence or silence or exceed):
        return None
    sources = _sources(c)
    if carried and not sources:
        sources = [0]  # the contrast word stands for the source carried over
    first = c.has(lexicon.first_person)
    single = c.has(lexicon.first_singular)
    text = c.at(lexicon.text_report) + _found_at(
        _phrases_pattern(lexicon.text_report_phrases), c.joined
    )
    knowledge = c.at(lexicon.knowledge)
    reporters = sorted({*text, *knowledge})

    def governed(index: int) -> bool:
        return any(_governs(c, s, index, reporters, cues) for s in sources)

    if cues and any(c.negated(i, cues) for i in text):
        return "negated report"
    impersonal = c.has(lexicon.impersonal) or (
        c.has(lexicon.passive) and c.has(lexicon.possibility)
    )
    for i in knowledge:
        if cues and c.negated(i, cues):
            if governed(i):
                return "negated report"
            if first or impersonal:
                return "not known"
    if cues and any(c.negated(i, cues) for i in c.at(lexicon.known_states)):
        return "not known"
    for i in c.at(lexicon.discovery):
        if cues and c.negated(i, cues) and (single or governed(i)):
            return "not found"
    how = _negated_source(c, cues, sources, reporters, single)
    if how is not None:
        return how
    access = c.at(lexicon.access)
    if access and any(c.negated(i, cues) for i in access):
        # "je n'ai pas accès à cette information" refuses; "unauthorised users have no
        # access to customer data" states a fact
        return "no access" if first else None
    fates = c.at(lexicon.data_fates)
    information = c.at(lexicon.information, lexicon.compounds)
    data = c.at(lexicon.data_nouns, lexicon.compounds)
    available = c.at(lexicon.availability)

    def determined(index: int) -> bool:
        return any(w in lexicon.determiners for w in words[max(0, index - 2) : index])

    if not fates:
        if any(determined(i) for i in information):
            return "no information"
        if any(determined(i) for i in data) and (first or sources or available):
            return "no information"
    if absence and (sources or information) and not fates:
        return "absent information"
    if silence and sources:
        return "silent sources"
    for e in exceed:
        after = _is(words[e], lexicon.exceed_after)  # "über die Unterlagen hinaus"
        # "über die Unterlagen hinaus", or "geht darüber hinaus, was mir vorliegt"
        if any(0 < (e - s if after else s - e) <= WINDOW - 2 for s in sources) or (
            after and any(0 < s - e <= WINDOW - 2 for s in sources)
        ):
            return "beyond the sources"
    documents = c.at(lexicon.documents, lexicon.compounds)
    containment = c.at(lexicon.containment) if documents else []
    for i in c.at(lexicon.weak_report) + containment:
        if not c.negated(i, cues):
            continue
        if governed(i):
            return "negated availability"
        if i in containment and any(abs(d - i) <= WINDOW for d in documents):
            return "negated availability"  # "die ATEX-Bescheinigung enthält kein Ablaufdatum"
        if fates:
            continue
        nothing = not _NOTHING.isdisjoint(words[i + 1 : i + 3])
        if first and (information or data or nothing):
            return "negated availability"
        if information and _is(words[i], lexicon.availability):
            return "negated availability"
    return _incompatible(c, cues)


def _negated_source(
    c: _Clause, cues: Sequence[int], sources: Sequence[int], reporters: Sequence[int], single: bool
) -> str | None:
    """A source negated ("not in the documents"), a source subject or place of a negated
    clause, or the assistant and a source in a negated clause."""
    if not cues or not sources:
        return None
    lexicon = c.lexicon
    # what happens to a document is an event: "die Dateien werden nicht aufbewahrt", "le
    # document n'est pas signé"
    handled = bool(c.at(lexicon.data_fates))
    for s in sources:
        for n in cues:
            if n < s and s - n <= 3 and not c.blocked(n, s):
                return "negated source"  # "aucune des pièces transmises", "nothing in the"
            if (
                not handled
                and s < SUBJECT_WORDS
                and s < n
                and n - s <= SUBJECT_WORDS
                and _governs(c, s, n, reporters, cues)
            ):
                return "negated source"  # "les documents ne font pas état de ..."
            place = any(w in lexicon.locatives for w in c.words[max(0, s - 3) : s])
            if place and abs(n - s) <= WINDOW and not c.blocked(n, s):
                return "negated source"  # "in den übermittelten Unterlagen ... nicht"
    if single:
        return "negated source"  # "I wasn't able to pin it down from the excerpts"
    return None


def _incompatible(c: _Clause, cues: Sequence[int]) -> str | None:
    """An incompatibility: a compatibility word negated, "not designed for", or a use
    prohibited with something ("must not be used with hydrogen")."""
    lexicon, words = c.lexicon, c.words

    def near(positions: Sequence[int]) -> bool:
        return any(abs(a - b) <= WINDOW for a in cues for b in positions)

    if cues and near(c.at(lexicon.compatibility)):
        return "incompatible"
    for index in c.at(lexicon.purpose):
        scope = words[max(0, index - WINDOW) : index + 3]
        if any(w in lexicon.purpose_prepositions for w in scope) and near([index]):
            return "incompatible"
    uses = c.at(lexicon.use_verbs)
    scope = words[max(0, uses[0] - WINDOW) : uses[-1] + 3] if uses else ()
    if (
        near(uses)
        and any(w in lexicon.modals for w in words)
        and any(w in lexicon.with_words for w in scope)
    ):
        return "incompatible"
    return None


def _document_subject(c: _Clause) -> bool:
    """A document ("the policy", "les notes", "der Vertrag") or a carrier ("the notes") as
    the clause's subject."""
    lexicon = c.lexicon
    return any(
        i < SUBJECT_WORDS
        for i in (*c.at(lexicon.documents, lexicon.compounds), *c.at(lexicon.carriers))
    )


def _carries(previous: str | None, clause: str, opened: bool, lexicon: Lexicon) -> bool:
    """Whether ``clause`` goes on from a source subject: opened by a contrast word, or with
    a pronoun for its subject ("The security policy only sets a rule for ... . It gives no
    minimum length ...")."""
    if previous is None:
        return False
    own = _words(clause)
    if not opened:
        if not own or own[0] not in lexicon.third_pronouns:
            return False
        words = _words(previous)
        c = _Clause(words, " ".join(words), lexicon)
        return _source_subject(c, _sources(c)) or _document_subject(c)
    if len(own) < 2:
        return False
    goes_on = (
        own[1] in _CONTINUATIONS
        or own[1] in lexicon.negations
        or not lexicon.third_pronouns.isdisjoint(own[1:3])
        or any(
            _is(own[1], entries)
            for entries in (
                lexicon.text_report,
                lexicon.knowledge,
                lexicon.weak_report,
                lexicon.silence,
            )
        )
    )
    if not goes_on:
        return False
    words = _words(previous)
    c = _Clause(words, " ".join(words), lexicon)
    return _source_subject(c, _sources(c)) or _document_subject(c)


def _clause_findings(prepared: str, lexicon: Lexicon) -> Iterator[tuple[str, str | None]]:
    """Each clause of a prepared answer, and how it refuses in ``lexicon``'s language."""
    previous: str | None = None
    for clause, opened in _clause_parts(prepared, lexicon.splitters):
        yield clause, clause_refusal(clause, lexicon, _carries(previous, clause, opened, lexicon))
        previous = clause


def _may_refuse(words: frozenset[str], joined: str, lexicon: Lexicon) -> bool:
    """Whether any clause of a text (its words, and all of them joined by spaces) may
    refuse in ``lexicon``'s language: a clause refuses only with a negation, an absence, a
    silence, an exceeding or an incompatibility word, or a self-refusal; the words of the
    clauses, in order, are the text's, so a self-refusal found in a clause is found in the
    whole. Most answers hold none, and their clauses need not be cut and read one by one."""
    if not words.isdisjoint(lexicon.negations):
        return True
    kinds = (lexicon.absence, lexicon.silence, lexicon.exceed, lexicon.incompatible)
    if any(_is(w, kind) for w in words for kind in kinds):
        return True
    self_refusal = _phrases_pattern(lexicon.self_refusals)
    return self_refusal is not None and self_refusal.search(joined) is not None


def _ordered(
    lang: str, phrases: Mapping[str, Sequence[str]], lexicons: Mapping[str, Lexicon]
) -> list[str]:
    return list(dict.fromkeys([lang, *phrases, *lexicons]))


def find_refusal(
    answer: str,
    lang: str,
    phrases: Mapping[str, Sequence[str]],
    lexicons: Mapping[str, Lexicon] = LEXICONS,
) -> Refusal | None:
    """The first refusal of ``answer``: the prompt language's phrases and constructions
    first, then every other language's; None when it does not refuse."""
    if not answer.strip():
        return None
    prepared = _prepared(answer)
    words = _WORD.findall(prepared.replace("'", " "))
    distinct = frozenset(words)
    joined = " ".join(words)
    for code in _ordered(lang, phrases, lexicons):
        phrase = find_phrase(answer, tuple(phrases.get(code, ())))
        if phrase is not None:
            return Refusal(phrase, "phrase", code)
        lexicon = lexicons.get(code)
        if lexicon is None or not _may_refuse(distinct, joined, lexicon):
            continue
        for clause, how in _clause_findings(prepared, lexicon):
            if how is not None:
                return Refusal(clause, how, code)
    return None


# --------------------------------------------------------------------------- the reading

# clause ends in the original answer (the folded ones of _CLAUSE_END, typographic forms
# included), so that each clause keeps its span
_SPAN_END = re.compile(
    r"[.!?;:…\n]+(?=\s|$)|[.!?;:…\n]*\s+[-\u2010-\u2015\u2212]\s+|\s*[(\[]\d+[)\]]\s*"
)
_TOKEN = re.compile(r"\S+")
_CITED = re.compile(r"[(\[]\d+(?:\s*[,;\u2013-]\s*\d+)*[)\]]")
_SENTENCE_STOP = re.compile(r"[.!?…\n](?=\s|$)")
# identifiers: "TVK 350", "ISO 27001", "RX-9", "X2", "30-H2"
_NAMED = re.compile(r"\b[A-Z]{2,}[- ]?\d[\w-]*|\b[A-Z]+\d[\w-]*|\b\d+-[A-Z][\w-]*")
_PLURAL_PRONOUNS = frozenset({"they", "ils", "elles", "sie"})
# a fact that goes on to say what it is not: ", not a discount", ", pas le TVK 350", ", kein
# Rabatt", ", nicht zum TVK 110"
_SAYS_WHAT_IT_IS_NOT = re.compile(r",\s*(?:not|pas|nicht|kein\w*|non)\s+\w", re.IGNORECASE)
_NOT_FIRST = frozenset({"not", "pas", "nicht", "kein", "keine", "keinen", "keiner", "non"})
# a singular pronoun may be the product as well as the document: it goes on from a
# document only with a verb of what a text holds ("it lists", "elle prévoit", "es nennt")
_SINGULAR_PRONOUNS = frozenset({"it", "il", "elle", "es", "er"})
_DIGIT = re.compile(r"\d")


def _contrasts(lexicons: Mapping[str, Lexicon]) -> frozenset[str]:
    """Every language's contrast words: the splitters that do not restrict ("only", "nur"
    stay inside their clause: "gilt nur für den Meridia-Vertrag" is one clause)."""
    return frozenset(
        word
        for lexicon in lexicons.values()
        for word in lexicon.splitters
        if word not in lexicon.restrictions
    )


def _segments(answer: str, contrasts: frozenset[str]) -> list[tuple[int, int, bool]]:
    """(start, end, opened by a contrast word) of each clause of the original answer."""
    parts: list[tuple[int, int]] = []
    position = 0
    values = _value_spans(answer) if _ORDINAL_DOT.search(answer) else ()
    for stop in _SPAN_END.finditer(answer):
        if _goes_on(answer, stop, values):
            continue
        parts.append((position, stop.start()))
        position = stop.end()
    parts.append((position, len(answer)))
    found: list[tuple[int, int, bool]] = []
    for low, high in parts:
        current: list[tuple[int, int]] = []
        opened = False
        for token in _TOKEN.finditer(answer, low, high):
            bare = fold(token.group()).strip(",\"'()[]«»")
            if bare in contrasts and current:
                found.append((current[0][0], current[-1][1], opened))
                current, opened = [], True
            current.append((token.start(), token.end()))
        if current:
            found.append((current[0][0], current[-1][1], opened))
    segments: list[tuple[int, int, bool]] = []
    for start, end, opened in found:
        while end > start and answer[end - 1] in ",;:":
            end -= 1
        words = _words(_prepared(answer[start:end]))
        if not words:
            continue
        if segments and all(w in contrasts for w in words):
            # a contrast word that ends its sentence ("use the TVM 30-H2 instead")
            segments[-1] = (segments[-1][0], end, segments[-1][2])
            continue
        segments.append((start, end, opened))
    return segments


_ORDINAL_DOT = re.compile(r"\d\.\s")


def _value_spans(answer: str) -> tuple[tuple[int, int], ...]:
    from pytest_ragv2.scoring.values import read_values

    return tuple(value.span for value in read_values(answer, None))


def _goes_on(answer: str, stop: re.Match[str], values: Sequence[tuple[int, int]]) -> bool:
    """Whether the clause goes on past ``stop``: a full stop inside a value ("1. Quartal
    2026", "6. Oktober 2025") or after an abbreviation ("z. B.", "i.e."); a citation marker
    the sentence runs on after ("Das Datum 31.03.2029 [3] gehört zur ...", "... Meridia [1]
    (90 jours avant l'échéance)")."""
    start, end = stop.span()
    if any(low <= start < high for low, high in values):
        return True
    mark = stop.group()
    if mark.strip() == ".":
        return abbreviation_at(answer, start)
    if _CITED.fullmatch(mark.strip()) and end < len(answer):
        after = answer[end]
        return after == "(" or after.islower()
    return False


def _any_is(words: Sequence[str], joined: str, entries: tuple[str, ...]) -> bool:
    if any(_is(w, entries) for w in words):
        return True
    pattern = _multi_pattern(entries)
    return pattern is not None and pattern.search(joined) is not None


def _hedge(words: Sequence[str], joined: str, lexicon: Lexicon) -> bool:
    """ "Je ne suis pas sûr", "nicht ganz sicher", "not sure", "hard to say"."""
    pattern = _phrases_pattern(lexicon.hedge_phrases)
    if pattern is not None and pattern.search(joined):
        return True
    cues = [i for i, w in enumerate(words) if w in lexicon.negations]
    return any(
        _is(w, lexicon.hedges) and any(abs(i - n) <= 3 for n in cues) for i, w in enumerate(words)
    )


# a lead-in that announces the answer and says nothing itself
_LEAD_IN = re.compile(
    r"(?:kurz gesagt|kurzum|kurz und knapp|in short|short answer|in brief|briefly|en bref"
    r"|bref|pour faire court|en resume|zusammengefasst|in summary|to sum up)"
)


# who could answer instead, named as a pointer ("People & Culture would be the ones to
# ask", "le service RH est le mieux placé pour répondre", "die Personalabteilung kann Ihnen
# das sagen"): no fact of the answer
_POINTER = re.compile(
    r"\b(?:the (?:ones?|people|team|person|right people) to (?:ask|contact|check with)"
    r"|best placed to (?:answer|say|confirm|tell)|(?:can|could|would) (?:tell you|confirm this)"
    r"|(?:le|la|les) mieux place(?:e|s|es)? pour"
    r"|(?:sauront|saura) (?:vous )?(?:repondre|renseigner)"
    r"|(?:kann|konnen|koennen) (?:ihnen )?(?:das |dies )?(?:sagen|beantworten|bestatigen)"
    r"|(?:ist|sind) (?:dafur |hierfur )?zustandig)\b"
)


def _courtesy(words: Sequence[str], joined: str, lexicons: Iterable[Lexicon]) -> bool:
    """An apology or greeting alone, a pointer elsewhere addressed to the asker ("je vous
    conseille de contacter le support") or naming who could answer ("People & Culture would
    be the ones to ask"), or a hedge: a clause that states no fact."""
    lexicons = list(lexicons)
    if all(any(_is(w, lexicon.courtesy) for lexicon in lexicons) for w in words):
        return True
    if _LEAD_IN.fullmatch(joined):
        return True  # "Kurz gesagt:", "In short:", "En bref :": what follows is the answer
    if _POINTER.search(joined):
        return True
    for lexicon in lexicons:
        if any(_is(w, lexicon.redirects) for w in words) and not lexicon.addressed.isdisjoint(
            words
        ):
            return True
        if _hedge(words, joined, lexicon):
            return True
    return False


def _sets_apart(words: Sequence[str], joined: str, lexicon: Lexicon) -> bool:
    """ "... gilt nur für den Meridia-Vertrag", "... only applies to ...", "... concerne
    uniquement ...", "ce délai est celui du contrat ...": a fact that says what it is for."""
    if any(_is(w, lexicon.scoping) for w in words):
        return True
    pattern = _phrases_pattern(lexicon.scoping_phrases)
    return pattern is not None and pattern.search(joined) is not None


def _cited(answer: str, end: int) -> bool:
    """Whether a citation marker ("[1]", "(2)", "[1, 3]") follows the clause ending at
    ``end`` before its sentence ends: a marker cites its whole sentence."""
    stop = _SENTENCE_STOP.search(answer, end)
    if stop is None:
        return _CITED.search(answer, end) is not None
    if _CITED.search(answer, end, stop.start() + 1) is not None:
        return True
    after = stop.end()  # "... 49 €. [1]": a marker right after the full stop
    while after < len(answer) and answer[after].isspace():
        after += 1
    return _CITED.match(answer, after) is not None


def _attributed(words: Sequence[str], lexicons: Iterable[Lexicon]) -> bool:
    """ "Selon ...", "laut Preisliste", "according to ...": the clause cites its source."""
    return any(not lexicon.attributions.isdisjoint(words[:SUBJECT_WORDS]) for lexicon in lexicons)


# what a clause is about, put before its subject ("pour le X3, ...", "for the X3, ...",
# "für den X3, ..."): a preposition and a few words up to a comma
_LEAD_IN_PHRASE = re.compile(
    r"\s*(?:pour|quant a|concernant|for|as for|regarding|fur|zum|zur|beim|bezuglich)\b"
    r"[^,;:]{1,40},\s*"
)


def _role(
    text: str,
    prepared: str,
    lexicons: Sequence[Lexicon],
    *,
    cited: bool,
    after_source: bool,
    after_document: bool = False,
) -> Role:
    """The role of a clause that does not refuse."""
    words = _words(prepared)
    joined = " ".join(words)
    if not _DIGIT.search(text) and _courtesy(words, joined, lexicons):
        return "courtesy"
    lead_in = _LEAD_IN_PHRASE.match(prepared)
    if lead_in is not None and lead_in.end() < len(prepared):
        # "pour le X3, les notes de roadmap ne donnent que ...": the subject comes after
        # what the clause is about
        rest = _role(
            text[lead_in.end() :] if len(text) == len(prepared) else text,
            prepared[lead_in.end() :],
            lexicons,
            cited=cited,
            after_source=after_source,
            after_document=after_document,
        )
        if rest == "source":
            return rest
    if cited or _attributed(words, lexicons):
        return "source"  # what the sources hold, cited: "le préavis est de 90 jours [1]"
    for lexicon in lexicons:
        c = _Clause(words, joined, lexicon)
        if _source_subject(c, _sources(c)):
            return "source"
        reports = (
            lexicon.text_report,
            lexicon.weak_report,
            lexicon.containment,
            lexicon.provisions,
        )
        if _document_subject(c) and any(_is(w, entries) for w in words for entries in reports):
            return "source"  # "Les notes du comité indiquent seulement que ..."
        if after_source and not _PLURAL_PRONOUNS.isdisjoint(words[:2]):
            return "source"  # "... However, they do describe a discount for non-profits"
        if (
            after_document
            and not _SINGULAR_PRONOUNS.isdisjoint(words[:2])
            and any(_is(w, entries) for w in words[:4] for entries in reports)
        ):
            return "source"  # "The datasheet doesn't give it: it lists the pressure, ..."
    if any(_sets_apart(words, joined, lexicon) for lexicon in lexicons):
        return "set_apart"
    if _SAYS_WHAT_IT_IS_NOT.search(text):
        return "set_apart"  # "the 3 % is a cap on price increases, not a discount"
    if any(not lexicon.restrictions.isdisjoint(words) for lexicon in lexicons):
        # "only X" next to a refusal: X is what there is instead ("the only pack it prices
        # is the storage pack", "ausdrücklich geregelt sind nur 24 Monate"); without a
        # refusal it is a plain fact again
        return "set_apart"
    return "fact"


def _named(text: str) -> frozenset[str]:
    """The identifiers a clause names ("TVK 350", "X2", "RX-9"), spaces and dashes left
    out."""
    return frozenset(re.sub(r"[\s-]", "", m.group()).casefold() for m in _NAMED.finditer(text))


# the guess words that only round a value ("etwa 6 Wochen", "around 30 days"): a fact the
# sources give may be rounded where a refusal sets it apart
_APPROXIMATORS = frozenset(
    {"environ", "autour de", "de l ordre de", "etwa", "ungefahr", "around", "roughly"}
    | {"approximately"}
)


# what only sounds like a guess ("around the clock", "rund um die Uhr")
_NO_GUESS = re.compile(r"\b(?:around the clock|round the clock|rund um die uhr)\b")


def _guess(clause: ReadClause, lexicons: Iterable[Lexicon], *, rounding: bool = True) -> bool:
    words = _words(_NO_GUESS.sub(" ", _prepared(clause.text)))
    joined = " ".join(words)
    return any(
        _any_is(
            words,
            joined,
            lexicon.guesses
            if rounding
            else tuple(word for word in lexicon.guesses if word not in _APPROXIMATORS),
        )
        for lexicon in lexicons
    )


def read_refusal(
    answer: str,
    lang: str,
    phrases: Mapping[str, Sequence[str]],
    lexicons: Mapping[str, Lexicon] = LEXICONS,
) -> RefusalReading:
    """Read the whole of ``answer``: every clause's role and a verdict.

    A clause refuses by a construction of any language, the prompt language's first, or by
    a configured phrase (as :func:`find_refusal`). A clause that does not refuse is:

    - ``courtesy``: an apology or greeting alone, a pointer elsewhere addressed to the asker
      ("je vous conseille de contacter le support"), a hedge ("not sure");
    - ``source``: what the sources hold: a source as its subject ("the datasheet gives the
      maximum pressure"), a source cited ("laut Preisliste ...", "... 90 days [1]"), or
      "they" going on from a clause whose subject was a source;
    - ``set_apart``, next to a refusal: a fact that says what it applies to ("gilt nur für
      den Meridia-Vertrag", "only applies to", "concerne uniquement", "est celui du
      contrat", "another plan"), a fact whose sentence goes on to say so ("..., mais il ne
      s'agit pas du contrat Cumulus"), or a fact about other named things than the
      refusal's ("the TVK 110 ships in two weeks" next to "the TVK 350's delivery time is
      not stated"); without a refusal these are plain facts;
    - ``fact``: anything else.

    The verdict:

    - no refusal: ``answers`` with a fact or a source clause, ``unclear`` without (courtesy
      or a hedge alone);
    - a refusal and no plain fact: ``refuses``; a refusal of an incompatibility and a plain
      fact (its alternative): ``refuses``;
    - a refusal and a plain fact: ``answers`` when a plain fact comes first (the refusal is
      a caveat) or a plain fact after the refusal is a guess ("probably around €900"); else
      ``unclear``: the fact may be the answer or a nearby fact, and the rules cannot tell.

    An empty answer is ``unclear`` with no clause.
    """
    if not answer.strip():
        return RefusalReading("unclear", "an empty answer", ())
    order = _ordered(lang, phrases, lexicons)
    readers = [lexicons[code] for code in order if code in lexicons]
    read: list[ReadClause] = []
    opened_by: list[bool] = []
    previous: str | None = None
    subject_before: str | None = None
    after_source = after_document = False
    for start, end, opened in _segments(answer, _contrasts(lexicons)):
        text = answer[start:end]
        prepared = _prepared(text)
        words = _words(prepared)
        distinct, joined = frozenset(words), " ".join(words)
        found: ReadClause | None = None
        for code in order:
            lexicon = lexicons.get(code)
            if lexicon is None or not _may_refuse(distinct, joined, lexicon):
                continue
            carried = _carries(previous, prepared, opened, lexicon) or _carries(
                subject_before, prepared, opened, lexicon
            )
            how = clause_refusal(prepared, lexicon, carried)
            if how is not None:
                found = ReadClause(start, end, text, "refusal", how, code)
                break
        for code in order if found is None else ():
            if find_phrase(text, tuple(phrases.get(code, ()))) is not None:
                found = ReadClause(start, end, text, "refusal", "phrase", code)
                break
        if found is None:
            cited = _CITED.search(text) is not None or _cited(answer, end)
            role = _role(
                text,
                prepared,
                readers,
                cited=cited,
                after_source=after_source,
                after_document=after_document,
            )
            if (
                role == "fact"
                and read
                and read[-1].role in ("set_apart", "source")
                and (
                    answer[read[-1].end : start].strip().startswith(":")
                    or (words[:1] and words[0] in _NOT_FIRST)
                )
            ):
                # what a colon introduces elaborates the clause before it ("The closest
                # things it does cover are different: the ISO 27001 certification ...")
                role = read[-1].role
            found = ReadClause(start, end, text, role)
        read.append(found)
        opened_by.append(opened)
        after_source = any(
            _source_subject(c, _sources(c))
            for c in (_Clause(words, " ".join(words), lexicon) for lexicon in readers)
        )
        after_document = after_source or any(
            _document_subject(_Clause(words, " ".join(words), lexicon)) for lexicon in readers
        )
        if after_document:
            subject_before = prepared  # the last clause whose subject was a source
        previous = prepared
    return _verdict(_set_apart(read, opened_by), readers)


def _set_apart(read: list[ReadClause], opened_by: list[bool]) -> list[ReadClause]:
    """Next to a refusal, the facts set apart: a fact whose sentence goes on to set it apart
    ("..., but that is another contract"), a fact about other named things than the
    refusal's. Without a refusal, a set-apart clause is a plain fact."""
    refusals = [c for c in read if c.role == "refusal"]
    if not refusals:
        return [replace(c, role="fact") if c.role == "set_apart" else c for c in read]
    refused = frozenset().union(*(_named(c.text) for c in refusals))
    out = list(read)
    for i, clause in enumerate(out):
        if clause.role != "fact":
            continue
        follows = i + 1 < len(out) and opened_by[i + 1] and out[i + 1].role == "set_apart"
        named = _named(clause.text)
        if follows or (refused and named and refused.isdisjoint(named)):
            out[i] = replace(clause, role="set_apart")
    return out


def _verdict(read: list[ReadClause], lexicons: Sequence[Lexicon]) -> RefusalReading:
    clauses = tuple(read)
    if not clauses:
        return RefusalReading("unclear", "no clause", ())
    refusals = [c for c in read if c.role == "refusal"]
    if not refusals:
        if any(c.role in ("fact", "source") for c in read):
            return RefusalReading("answers", "facts and no refusal", clauses)
        return RefusalReading(
            "unclear", "neither a refusal nor a fact (courtesy or a hedge)", clauses
        )
    facts = [c for c in read if c.role == "fact"]
    # a guess after the refusal; one the refusal's contrast set apart ("Vermutlich fällt er
    # aber unter ...") is still a guess, unless it only rounds a value
    guessed = [
        c
        for c in read
        if c.start > refusals[0].start
        and (
            (c.role == "fact" and _guess(c, lexicons))
            # what the sources say, or a fact set apart, may round ("environ trois heures")
            or (c.role in ("source", "set_apart") and _guess(c, lexicons, rounding=False))
        )
    ]
    if not facts and not guessed:
        return RefusalReading("refuses", "a refusal and no fact given as the answer", clauses)
    if any(c.how == "incompatible" for c in refusals):
        return RefusalReading("refuses", "an incompatibility and its alternative", clauses)
    lead = next(c for c in read if c.role in ("refusal", "fact"))
    if lead.role == "fact":
        return RefusalReading("answers", "facts first, then a refusal as a caveat", clauses)
    if guessed:  # what is usual elsewhere, or a guess, given after the refusal
        return RefusalReading(
            "answers", "a refusal, then a guess at the answer", clauses, guessed=True
        )
    return RefusalReading(
        "unclear", "a refusal, then facts whose relation to it is unknown", clauses
    )


def is_refusal(answer: str, lang: str, phrases: Mapping[str, Sequence[str]]) -> bool:
    """Does ``answer`` refuse (see :func:`find_refusal`)?"""
    return find_refusal(answer, lang, phrases) is not None


def _kind(how: str) -> str:
    return "incompatible" if how == "incompatible" else "absent"


def credited_refusal_claims(answer: str, lang: str, missed: Sequence[Claim]) -> list[Claim]:
    """The missed required claims of a refusal turn that the answer's own refusal states.

    A claim written as a refusal ("the X2's price is not in the documents", "der TVS 75 ist
    nicht für Wasserstoff zugelassen") is credited when its text is itself recognised as a
    refusal (constructions only, no ``number``) of the same kind as the answer's: both say
    the fact is absent, or both say the request is incompatible. "Les documents ne donnent
    pas le prix" credits "the price is not in the documents", not "not approved for
    hydrogen".
    """
    own = find_refusal(answer, lang, {})
    if own is None:
        return []
    credited = []
    for claim in missed:
        if claim.number is not None:
            continue
        stated = find_refusal(claim.text, lang, {})
        if stated is not None and _kind(stated.how) == _kind(own.how):
            credited.append(claim)
    return credited
