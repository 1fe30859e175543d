"""The refusal constructions a clause makes, per language: a negated text-report, discovery or
knowledge predicate with its subject and object, a source said to be silent, an
incompatibility; and what carries a refusal from one clause to the next
(pytest_ragv2.scoring.refusal_clauses has the clause's words and roles).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence

from pytest_ragv2.scoring.refusal_clauses import (
    _CONTINUATIONS,
    _NOTHING,
    SUBJECT_WORDS,
    WINDOW,
    _bracketed,
    _Clause,
    _clause_parts,
    _found_at,
    _governs,
    _idiom,
    _is,
    _phrases_pattern,
    _source_subject,
    _sources,
    _words,
)
from pytest_ragv2.scoring.refusal_lexicon import Lexicon


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
