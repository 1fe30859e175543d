"""What a clause does in an answer that may refuse: refuse, set a fact apart, name a source, be
a courtesy or a pointer, guess, or state a fact (pytest_ragv2.scoring.refusal reads the
answer's clauses in order with these roles).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from pytest_ragv2.scoring.refusal_clauses import (
    SUBJECT_WORDS,
    ReadClause,
    Role,
    _Clause,
    _is,
    _multi_pattern,
    _phrases_pattern,
    _prepared,
    _source_subject,
    _sources,
    _words,
)
from pytest_ragv2.scoring.refusal_constructions import (
    _document_subject,
)
from pytest_ragv2.scoring.refusal_lexicon import Lexicon

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
