"""Does an answer refuse? Negation and absence constructions over a small lexicon, per language.

Pure functions, no I/O. A refusal says the answer is not given: the fact is absent from the
sources, the model does not know or cannot confirm it, or the request is incompatible ("not
rated for hydrogen"). It is recognised without an exact phrase: the answer is cut into
**clauses** (at ``. ! ? ; :`` and line breaks, and before "but", "mais", "aber", "only",
"seulement", "nur", ...), words are folded (accents dropped, casefolded, "n't" read as
"not") and a clause refuses when it holds a **negation** (FR "ne ... pas", "aucun", "rien",
"nulle part", "sans", "jamais"; DE "kein", "nicht", "nichts", "weder", "nie", "ohne"; EN "no",
"not", "nothing", "none", "never", "unable", "cannot", "without", "nowhere") or an
**absence** word ("manque", "fehlt", "missing", "absent", "lacks") together with, within
:data:`WINDOW` words of it:

- a **report** word: found, mentioned, stated, specified, indicated, listed, documented,
  know, confirm, answer, say, determine, ... (FR "trouvé", "mentionné", "indiqué",
  "précisé", "figure", "sais", "confirmer", "répondre"; DE "gefunden", "erwähnt", "genannt",
  "angegeben", "aufgeführt", "weiß", "bestätigen", "hervor", "ersichtlich"); or
- a **source** word: documents, sources, knowledge base, datasheet, excerpts, ... (FR
  "documents", "sources", "base de connaissances", "fiche"; DE "Unterlagen", "Dokumente",
  "Quellen", "Datenblatt"); or
- an **information** word right after a negative determiner ("aucune information", "pas de
  données", "keine Angaben", "no information", "no details"), unless the clause says what
  happens to the data ("aucune donnée n'est perdue", "no data is stored": a fact); or
- a **weak report** word (contain, provide, available, include, cover, describe, give ...)
  with a source or information word near the negation ("les documents ne contiennent
  pas", "this information is not available") — alone it states a fact ("not available in
  400 V", "the kit does not contain a filter"); or
- a prohibited use with something ("ne doit pas être utilisé avec de l'hydrogène", "darf
  nicht mit Wasserstoff betrieben werden", "must not be used with hydrogen"), or
- "no access" in the first person ("je n'ai pas accès à cette information", "I have no
  access to the price list"; "unauthorised users have no access to the data" states a
  fact), or
- a **compatibility** word: an incompatibility refusal (FR "compatible", "adapté",
  "homologué", "autorisé", "prévu pour", "conçu pour"; DE "zugelassen", "geeignet",
  "freigegeben", "für ... ausgelegt"; EN "rated", "approved", "suitable", "designed for",
  "intended for").

A clause holding "j'ignore", "keine Ahnung", "unknown" or "unspecified" refuses by itself,
and one holding an incompatibility word ("inadapté", "ungeeignet", "unsuitable") too.
A source word right after an attribution ("selon", "laut", "according to") cites the source
and does not count. A clause holding a synthetic-data label ("keine bestätigten
Projektdaten", "not confirmed", "données fictives") labels data and is no refusal. A fact
stated with a negation ("Le plan Pro n'inclut pas de frais de mise en service", "No, the
TVK 110 is not available in 400 V; only 230 V.") is no refusal either: nothing in it is
about the sources, the model's knowledge or compatibility. The configured phrase lists
(:mod:`pytest_ragv2.scoring.phrases`) are looked up as well, as additions. The words of
each language are in :mod:`pytest_ragv2.scoring.refusal_lexicon`.

Every language's lexicon is tried, the prompt's first: a German refusal to an English prompt
still refuses.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache

from pytest_ragv2.schema import Claim
from pytest_ragv2.scoring.answer_text import find_phrase, fold
from pytest_ragv2.scoring.refusal_lexicon import LEXICONS, Lexicon

WINDOW = 8  # words between the negation and the word it scopes over


_CONTRACTIONS = (
    (re.compile(r"\bcan'?t\b"), "can not"),
    (re.compile(r"\bcannot\b"), "can not"),
    (re.compile(r"\bwon'?t\b"), "will not"),
    (re.compile(r"n't\b"), " not"),
)
_CLAUSE_END = re.compile(r"[.!?;:\n]+(?:\s|$)|[.!?;:\n]*\s+-\s+|\s*[(\[]\d+[)\]]\s*")
_WORD = re.compile(r"[^\W\d_]+")


@dataclass(frozen=True, slots=True)
class Refusal:
    """A refusal found in an answer: the clause and which construction ("phrase" for a
    configured phrase)."""

    clause: str
    how: str
    language: str


def _prepared(text: str) -> str:
    folded = fold(text).replace("’", "'")
    for pattern, replacement in _CONTRACTIONS:
        folded = pattern.sub(replacement, folded)
    return folded


def clauses(text: str, splitters: Iterable[str] = ()) -> list[str]:
    """The clauses of a folded text (see the module docstring)."""
    words = frozenset(splitters)
    found: list[str] = []
    for part in _CLAUSE_END.split(text):
        current: list[str] = []
        for token in part.split():
            bare = token.strip(",\"'()[]«»")
            if bare in words and current:
                found.append(" ".join(current))
                current = []
            current.append(token)
        if current:
            found.append(" ".join(current))
    return [clause for clause in found if clause.strip()]


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


def _multi(clause: str, entries: tuple[str, ...]) -> bool:
    """Entries of several words ("knowledge base", "nulle part") looked up in the clause."""
    pattern = _multi_pattern(entries)
    return pattern is not None and pattern.search(clause) is not None


@lru_cache(maxsize=256)
def _multi_pattern(entries: tuple[str, ...]) -> re.Pattern[str] | None:
    bodies = [re.escape(entry.rstrip("*")) for entry in entries if " " in entry]
    return re.compile(rf"(?<!\w)(?:{'|'.join(bodies)})") if bodies else None


@lru_cache(maxsize=256)
def _phrases_pattern(phrases: tuple[str, ...]) -> re.Pattern[str] | None:
    """Any of ``phrases`` (regular expressions) as a whole word sequence."""
    if not phrases:
        return None
    return re.compile(rf"(?<!\w)(?:{'|'.join(f'(?:{phrase})' for phrase in phrases)})(?!\w)")


def _near(positions: Sequence[int], others: Sequence[int]) -> bool:
    return any(abs(a - b) <= WINDOW for a in positions for b in others)


def clause_refusal(clause: str, lexicon: Lexicon) -> str | None:
    """How ``clause`` (folded) refuses, or None (rules in the module docstring)."""
    words = _WORD.findall(clause.replace("'", " "))
    if not words:
        return None
    if any(_is(w, lexicon.labels) for w in words):
        return None  # a synthetic-data label ("not confirmed")
    joined = " ".join(words)
    self_refusal = _phrases_pattern(lexicon.self_refusals)
    if self_refusal is not None and self_refusal.search(joined):
        return "self refusal"
    if any(_is(w, lexicon.incompatible) for w in words):
        return "incompatible"
    negations = [i for i, w in enumerate(words) if w in lexicon.negations]
    absence = [i for i, w in enumerate(words) if _is(w, lexicon.absence)]
    cues = sorted(negations + absence)
    if not cues:
        return None

    def at(entries: tuple[str, ...], compounds: bool = False) -> list[int]:
        return [i for i, w in enumerate(words) if _is(w, entries, compounds)]

    sources = [
        i
        for i in at(lexicon.sources, lexicon.compounds)
        if not any(w in lexicon.attributions for w in words[max(0, i - 3) : i])
    ]
    if _multi(clause, lexicon.sources):
        sources = sources or [cues[0]]
    information = at(lexicon.information, lexicon.compounds)
    report = at(lexicon.report)
    if negations and _near(negations, report):
        return "negated report"
    if negations and _near(negations, sources):
        return "negated source"
    access = at(lexicon.access)
    if access and _near(negations, access):
        # "je n'ai pas accès à cette information" refuses; "unauthorised users have no
        # access to customer data" states a fact
        if any(w in lexicon.first_person for w in words):
            return "no access"
        return None
    fates = at(lexicon.data_fates)
    for index in information:
        before = words[max(0, index - 2) : index]
        if any(w in lexicon.determiners for w in before) and not fates:
            return "no information"
    if absence and (_near(absence, information) or _near(absence, sources)) and not fates:
        return "absent information"
    weak = at(lexicon.weak_report)
    if _near(negations, weak) and _near(negations, sources + information) and not fates:
        return "negated availability"
    compatible = at(lexicon.compatibility)
    if negations and _near(negations, compatible):
        return "incompatible"
    for index in at(lexicon.purpose):
        scope = words[max(0, index - WINDOW) : index + 3]
        if any(w in lexicon.purpose_prepositions for w in scope) and _near(negations, [index]):
            return "incompatible"
    uses = at(lexicon.use_verbs)
    scope = words[max(0, uses[0] - WINDOW) : uses[-1] + 3] if uses else []
    if (
        _near(negations, uses)
        and any(w in lexicon.modals for w in words)
        and any(w in lexicon.with_words for w in scope)
    ):
        return "incompatible"
    return None


def _may_refuse(words: frozenset[str], joined: str, lexicon: Lexicon) -> bool:
    """Whether any clause of a text (its words, and all of them joined by spaces) may
    refuse in ``lexicon``'s language: a clause refuses only with a negation, an absence or
    an incompatibility word, or a self-refusal; the words of the clauses, in order, are the
    text's, so a self-refusal found in a clause is found in the whole. Most answers hold
    none, and their clauses need not be cut and read one by one."""
    if not words.isdisjoint(lexicon.negations):
        return True
    if any(_is(w, lexicon.absence) or _is(w, lexicon.incompatible) for w in words):
        return True
    self_refusal = _phrases_pattern(lexicon.self_refusals)
    return self_refusal is not None and self_refusal.search(joined) is not None


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
    languages = [lang, *(code for code in (*phrases, *lexicons) if code != lang)]
    ordered = list(dict.fromkeys(languages))
    prepared = _prepared(answer)
    words = _WORD.findall(prepared.replace("'", " "))
    distinct = frozenset(words)
    joined = " ".join(words)
    for code in ordered:
        phrase = find_phrase(answer, tuple(phrases.get(code, ())))
        if phrase is not None:
            return Refusal(phrase, "phrase", code)
        lexicon = lexicons.get(code)
        if lexicon is None or not _may_refuse(distinct, joined, lexicon):
            continue
        for clause in clauses(prepared, lexicon.splitters):
            how = clause_refusal(clause, lexicon)
            if how is not None:
                return Refusal(clause, how, code)
    return None


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
