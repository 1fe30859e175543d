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
from collections.abc import Mapping, Sequence
from dataclasses import replace

from pytest_ragv2.gold.schema import Claim
from pytest_ragv2.scoring.answer_text import abbreviation_at, find_phrase, fold
from pytest_ragv2.scoring.refusal_clauses import (
    _WORD,
    ReadClause,
    Refusal,
    RefusalReading,
    _Clause,
    _prepared,
    _source_subject,
    _sources,
    _words,
)
from pytest_ragv2.scoring.refusal_constructions import (
    _carries,
    _clause_findings,
    _document_subject,
    _may_refuse,
    _ordered,
    clause_refusal,
)
from pytest_ragv2.scoring.refusal_lexicon import LEXICONS, Lexicon
from pytest_ragv2.scoring.refusal_roles import _CITED, _NOT_FIRST, _cited, _guess, _named, _role


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
