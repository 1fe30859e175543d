"""Where an answer names a claim's value, whether it denies it ("nicht 30 Tage", "not the 16
bar model") or says it otherwise, and the role a sentence or a table row names for a value
(pytest_ragv2.scoring.claims asks before it counts a value as the claim's).
"""

from __future__ import annotations

import functools
import re

from pytest_ragv2.gold.schema import Claim
from pytest_ragv2.scoring.answer_text import fold, sentence_of, sentence_spans

_WORDS = re.compile(r"[^\W\d_]{4,}")


_TABLE_ROW = re.compile(r"^[ \t]*\|.*$", re.MULTILINE)


# a role's words: four letters or more, or a short label of letters and digits ("Q4", "T1")
_ROLE_WORDS = re.compile(r"[^\W\d_]{4,}|\b[^\W\d_]\d\b")


_NOTE = re.compile(r"\(([^()]*)\)")


def _row_names_role(
    answer: str, span: tuple[int, int], claim: Claim, asked: frozenset[str]
) -> bool:
    """Whether a forbidden value stands in a table row whose other cells name the role the
    gold gives it ("| Starter | toutes les 24 h |" for "toutes les 24 h (fréquence du plan
    Starter)"): the row states it for that role, not as the answer. The note's words that
    the required claims use too (``asked``: "Liefermenge") name what is asked, no role."""
    row = next((m for m in _TABLE_ROW.finditer(answer) if m.start() <= span[0] < m.end()), None)
    notes = _NOTE.findall(claim.text)
    if row is None or not notes:
        return False
    role = {word[:5] for note in notes for word in _ROLE_WORDS.findall(fold(note))} - asked
    rest = answer[row.start() : span[0]] + answer[span[1] : row.end()]
    return not role.isdisjoint(word[:5] for word in _ROLE_WORDS.findall(fold(rest)))


# words of a note that say what a value is not ("nicht die Zentrale"): no role
_NOT_ROLE = frozenset({"nicht", "keine", "kein", "pas", "non", "sans", "ohne", "without"})


def _sentence_names_role(
    answer: str, span: tuple[int, int], claim: Claim, asked: frozenset[str]
) -> bool:
    """Whether a forbidden value stands in a sentence that gives it the role the gold's
    note says it has ("+33 2 85 52 41 90 ist dagegen die Bereitschaft für P1-Vorfälle von
    Enterprise-Kunden" for "+33 2 85 52 41 90 (Bereitschaftsnummer für P1-Vorfälle von
    Enterprise-Kunden)"): told apart, not offered. In running text, where more is said than
    in a table row, half the note's role words at least, and two."""
    notes = _NOTE.findall(claim.text)
    if not notes:
        return False
    role = {
        word[:5]
        for note in notes
        for word in _ROLE_WORDS.findall(fold(note))
        if word not in _NOT_ROLE
    } - asked
    if len(role) < 2:
        return False
    spans = sentence_spans(answer)
    index = sentence_of(spans, span[0])
    if index is None:
        return False
    start, end = spans[index]
    rest = answer[start : span[0]] + answer[span[1] : end]
    have = {word[:5] for word in _ROLE_WORDS.findall(fold(rest))}
    return 2 * len(role & have) >= len(role)


_DIGIT_TOKENS = re.compile(r"\d+(?:[.,:]\d+)*")


def said_otherwise(claim: Claim, answer: str) -> bool:
    """Whether a missed **text** claim may be in ``answer`` in other words: every number it
    writes is in one sentence of the answer, with at least half of its words (their first
    five letters, accents ignored). A deterministic scorer cannot tell a paraphrase
    ("Statuscode 429" for "HTTP 429", "nur in Zone 1 oder 2" for "nur in Zone 1 oder Zone 2
    zulässig") from a near miss: such a run waits for a reviewer rather than a guess."""
    if claim.kind is not None or claim.pattern or claim.number is not None:
        return False
    text = fold(claim.text)
    digits = set(_DIGIT_TOKENS.findall(text))
    words = {word[:5] for word in _WORDS.findall(text)}
    if not digits and len(words) < 2:
        return False  # one word, missed: nothing else to go by
    for start, end in sentence_spans(answer):
        sentence = fold(answer[start:end])
        if not digits <= set(_DIGIT_TOKENS.findall(sentence)):
            continue
        have = {word[:5] for word in _WORDS.findall(sentence)}
        if not words or 2 * len(words & have) >= len(words):
            return True
    return False


# words that exclude what they stand beside, besides every lexicon's negations
_EXCLUSIONS = frozenset(
    {"ausgeschlossen", "ausgenommen", "ausser", "excluded", "except", "exclu", "exclue"}
    | {"exclus", "exclues", "sauf", "hormis", "interdit", "interdite", "verboten", "forbidden"}
    | {"prohibited", "untersagt", "unzulassig", "unzulaessig", "scheidet", "entfallt"}
    | {"ungeeignet", "unpassend", "unsuitable", "unsuited", "ruled", "inadapte", "inadaptee"}
    # "weder … noch" denies by its first member: "noch" alone is "still" ("noch 8 Tage")
    | {"neither", "nor", "weder"}
    # what is named as superseded ("den alten Abscheider TS-7508-5"); not "replace", which
    # is maintenance as often ("se remplace toutes les 6 000 heures")
    | {"alten", "alte", "alter", "altes", "old", "older", "ancien", "ancienne", "former"}
    | {"formerly", "superseded", "supersedes", "veraltet", "obsolete"}
)


# a clause ends at a sentence's end, a semicolon, a bracket, a comma or a dash; not at a
# colon, which introduces what it qualifies ("Nicht passend: TW-P-24-007 (250 bar)")
_CLAUSE_EDGE = re.compile(r"[.;!?\n(),\u2013\u2014]|\s-\s")


@functools.lru_cache(maxsize=1)
def _denials() -> frozenset[str]:
    from pytest_ragv2.scoring.refusal_lexicon import LEXICONS

    return _EXCLUSIONS.union(*(lexicon.negations for lexicon in LEXICONS.values()))


def denied_at(answer: str, span: tuple[int, int], claim_text: str) -> bool:
    """Whether the clause of ``answer`` holding ``span`` denies what stands there (a
    negation or an exclusion word of any language), for a claim that is no denial itself."""
    denials = _denials()
    if set(_WORDS_ANY.findall(fold(claim_text))) & denials:
        return False
    # within its sentence: a hard-wrapped line goes on with it ("nicht zu verwechseln mit
    # dem Keilriemensatz\nKR 1100 V")
    low, high = next(
        ((a, b) for a, b in sentence_spans(answer) if a <= span[0] < b), (0, len(answer))
    )
    before = [m.end() for m in _CLAUSE_EDGE.finditer(answer, low, span[0]) if m.group() != "\n"]
    start = before[-1] if before else low
    after = next(
        (m for m in _CLAUSE_EDGE.finditer(answer, span[1], high) if m.group() != "\n"), None
    )
    end = after.start() if after else high
    clause = answer[start:end]
    opening = answer.rfind("(", 0, span[0])
    if opening >= 0 and answer.find(")", opening, span[0]) < 0:
        # inside parentheses, which qualify what stands before them: "nicht mit SK-350A
        # (Ziffer 0, Stufe 1-2, 6 000 Bh) verwechseln" denies what the brackets hold too
        outer = [m.end() for m in _CLAUSE_EDGE.finditer(answer, 0, opening)]
        closing = answer.find(")", span[1])
        tail = _CLAUSE_EDGE.search(answer, closing + 1) if closing >= 0 else None
        clause += " " + answer[outer[-1] if outer else 0 : opening]
        if closing >= 0:
            clause += " " + answer[closing + 1 : tail.start() if tail else len(answer)]
    words = set(_WORDS_ANY.findall(_NOT.sub(" not", fold(clause))))
    if any(word.startswith(_LIMIT_VERBS) for word in words):
        return False  # "darf 45 °C nicht überschreiten": a negated limit states a maximum
    return bool(words & denials)


_WORDS_ANY = re.compile(r"[^\W\d_]+")


_NOT = re.compile(r"n't\b")


# verbs whose negation sets a limit at the value rather than denying it
_LIMIT_VERBS = (
    "exceed",
    "surpass",
    "go beyond",
    "depass",
    "exced",
    "uberschreit",
    "ubersteig",
    "uberschritt",
    "ueberschreit",
)
