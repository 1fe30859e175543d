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
- a **compatibility** word: an incompatibility refusal (FR "compatible", "adapté",
  "homologué", "autorisé", "prévu pour", "conçu pour"; DE "zugelassen", "geeignet",
  "freigegeben", "für ... ausgelegt"; EN "rated", "approved", "suitable", "designed for",
  "intended for").

A clause holding "j'ignore", "keine Ahnung", "unknown" or "unspecified" refuses by itself.
A source word right after an attribution ("selon", "laut", "according to") cites the source
and does not count. A clause holding a synthetic-data label ("keine bestätigten Projektdaten", "not confirmed",
"données fictives") labels data and is no refusal. A fact stated with a negation ("Le plan
Pro n'inclut pas de frais de mise en service", "No, the TVK 110 is not available in 400 V;
only 230 V.") is no refusal either: nothing in it is about the sources, the model's
knowledge or compatibility. The configured phrase lists
(:mod:`pytest_ragv2.scoring.phrases`) are looked up as well, as additions.

Every language's lexicon is tried, the prompt's first: a German refusal to an English prompt
still refuses.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from pytest_ragv2.scoring.answer_text import find_phrase, fold

WINDOW = 8  # words between the negation and the word it scopes over


@dataclass(frozen=True, slots=True)
class Lexicon:
    """The words of one language, folded; a word ending in ``*`` is a prefix (a stem)."""

    negations: frozenset[str]
    absence: tuple[str, ...]
    determiners: frozenset[str]  # negative determiners before an information word
    report: tuple[str, ...]
    weak_report: tuple[str, ...]
    sources: tuple[str, ...]
    information: tuple[str, ...]
    data_fates: tuple[str, ...]  # what happens to data: "aucune donnée n'est perdue"
    compatibility: tuple[str, ...]
    purpose: tuple[str, ...]  # compatibility words that need "for": "prévu pour"
    purpose_prepositions: frozenset[str]
    modals: frozenset[str]  # "must not be used with": a prohibition ...
    use_verbs: tuple[str, ...]  # ... of a use ...
    with_words: frozenset[str]  # ... with something (a medium): an incompatibility
    splitters: frozenset[str]  # words that open a new clause ("mais", "only")
    labels: tuple[str, ...]  # synthetic-data labels: "keine bestätigten Projektdaten"
    attributions: frozenset[str]  # "laut Datenblatt": a source cited, not one that is silent
    self_refusals: tuple[str, ...]  # word sequences that refuse by themselves ("j'ignore")
    compounds: bool = False  # German: a source or information word may end a compound


LEXICONS: Mapping[str, Lexicon] = {
    "fr": Lexicon(
        negations=frozenset(
            {"pas", "aucun", "aucune", "aucuns", "aucunes", "rien", "jamais", "nulle"}
            | {"nullement", "sans", "impossible", "guere", "ni"}
        ),
        absence=(
            "manque*",
            "absent*",
            "inexistant*",
            "silencieu*",
            "muet*",
            "depasse*",
            "hors",
            "perimetre",
        ),
        determiners=frozenset({"aucun", "aucune", "pas", "sans", "nulle"}),
        report=(
            "trouv*",
            "mentionn*",
            "indiqu*",
            "precis*",
            "specifi*",
            "figur*",
            "renseign*",
            "reference*",
            "sais",
            "sait",
            "savons",
            "savoir",
            "connai*",
            "confirmer",
            "repondre",
            "determin*",
            "documente*",
            "cite*",
            "dire",
            "dit",
            "disent",
            "evoqu*",
            "aborde*",
            "traite*",
        ),
        weak_report=(
            "contien*",
            "conten*",
            "fourni*",
            "disponible*",
            "dispos*",
            "donne*",
            "decri*",
            "detaill*",
            "couvr*",
            "inclu*",
            "comport*",
            "communiqu*",
            "publi*",
            "existe",
            "trace*",
            "ai",
            "avons",
            "possed*",
        ),
        sources=(
            "document*",
            "source*",
            "extrait*",
            "passage*",
            "fiche*",
            "corpus",
            "base de connaissance*",
            "base documentaire",
            "contexte",
            "fichier*",
            "nulle part",
        ),
        information=(
            "information*",
            "donnee*",
            "detail*",
            "precision*",
            "indication*",
            "mention*",
            "renseignement*",
            "element*",
            "chiffre*",
            "valeur*",
            "reponse*",
            "trace*",
        ),
        data_fates=(
            "perdu*",
            "stocke*",
            "conserve*",
            "supprime*",
            "transmis*",
            "partage*",
            "vendu*",
            "quitt*",
            "sort*",
            "collecte*",
            "heberge*",
        ),
        compatibility=(
            "compatible*",
            "adapte*",
            "homologue*",
            "autorise*",
            "approuve*",
            "certifie*",
            "convien*",
            "agree*",
            "qualifie*",
            "valide*",
            "utilisable*",
            "recommand*",
            "admissible*",
        ),
        purpose=("prevu*", "concu*", "destine*", "dimensionne*"),
        purpose_prepositions=frozenset({"pour", "a", "au", "aux"}),
        modals=frozenset({"doit", "doivent", "faut", "peut", "peuvent", "devez", "saurait"}),
        use_verbs=("utilis*", "employ*", "fonctionn*", "exploit*", "comprim*", "alimente*"),
        with_words=frozenset({"avec", "sous"}),
        splitters=frozenset({"mais", "seulement", "cependant", "toutefois", "neanmoins"}),
        labels=("synthetique*", "demonstration", "fictif*", "fictive*", "confirme", "confirmee*"),
        attributions=frozenset({"selon", "apres", "conformement", "suivant"}),
        self_refusals=("j ignore", "nous ignorons", "aucune idee", "pas la moindre idee"),
    ),
    "de": Lexicon(
        negations=frozenset(
            {"nicht", "kein", "keine", "keinen", "keiner", "keines", "keinem", "nichts"}
            | {"weder", "nie", "niemals", "nirgends", "nirgendwo", "ohne", "unmoglich"}
        ),
        absence=("fehlt", "fehlen", "fehlend*", "schweig*", "hinaus", "ausserhalb"),
        determiners=frozenset({"kein", "keine", "keinen", "keiner", "keines", "keinem", "ohne"}),
        report=(
            "gefunden",
            "finde*",
            "erwahn*",
            "genannt",
            "nenn*",
            "angegeben",
            "angeben",
            "aufgefuhrt",
            "aufgelistet",
            "spezifiziert",
            "dokumentiert",
            "weiss",
            "wissen",
            "bekannt",
            "bestatigen",
            "beantwort*",
            "sagen",
            "hervor",
            "ersichtlich",
            "entnehm*",
            "belegt",
            "feststellen",
            "ermitteln",
            "beziffer*",
            "auffind*",
            "sicher",
        ),
        weak_report=(
            "enthalt*",
            "verfugbar*",
            "vorhanden",
            "vor",
            "vorliegen*",
            "geben",
            "gibt",
            "liefer*",
            "beschrieb*",
            "beschreib*",
            "abgedeckt",
            "behandel*",
            "aufgefuhrt",
            "macht",
            "machen",
            "habe",
            "haben",
            "hat",
            "liegt",
            "liegen",
        ),
        sources=(
            "unterlagen",
            "dokument*",
            "quelle*",
            "datenblatt*",
            "datenblatter*",
            "wissensbasis",
            "wissensdatenbank",
            "auszug*",
            "auszuge*",
            "kontext",
            "dateien",
            "betriebsanleitung*",
            "handbuch*",
        ),
        information=(
            "information*",
            "angabe*",
            "daten",
            "detail*",
            "hinweis*",
            "erwahnung*",
            "auskunft*",
            "eintrag*",
            "wert",
            "werte",
            "zahl",
            "zahlen",
            "antwort*",
            "beleg*",
            "aussage*",
        ),
        data_fates=(
            "verloren",
            "gespeichert",
            "geloscht",
            "ubertragen",
            "weitergegeben",
            "verkauft",
            "verlass*",
            "erhoben",
            "aufbewahrt",
            "gehostet",
        ),
        compatibility=(
            "zugelassen",
            "geeignet",
            "kompatibel",
            "freigegeben",
            "zertifiziert",
            "verwendbar",
            "einsetzbar",
            "tauglich",
            "erlaubt",
            "empfehl*",
            "zulassig",
        ),
        purpose=("ausgelegt", "vorgesehen", "bestimmt", "konzipiert", "gedacht"),
        purpose_prepositions=frozenset({"fur"}),
        modals=frozenset({"darf", "durfen", "soll", "sollte", "sollten", "kann", "konnen"}),
        use_verbs=("betrieben", "betreiben", "eingesetzt", "einsetzen", "verwende*", "verdicht*"),
        with_words=frozenset({"mit"}),
        splitters=frozenset({"aber", "sondern", "nur", "jedoch", "allerdings", "lediglich"}),
        labels=("synthetisch*", "demodaten", "beispieldaten", "fiktiv*", "bestatigt*"),
        attributions=frozenset({"laut", "gemass", "entsprechend", "zufolge"}),
        self_refusals=("keine ahnung", "unbekannt"),
        compounds=True,
    ),
    "en": Lexicon(
        negations=frozenset(
            {"no", "not", "nothing", "none", "never", "unable", "cannot", "without"}
            | {"nowhere", "neither", "nor"}
        ),
        absence=("missing", "absent", "lack", "lacks", "lacking", "silent", "beyond", "outside"),
        determiners=frozenset({"no", "without"}),
        report=(
            "found",
            "find",
            "mention*",
            "stated",
            "state",
            "states",
            "specif*",
            "indicat*",
            "listed",
            "documented",
            "know",
            "known",
            "confirm",
            "answer",
            "say",
            "says",
            "determine",
            "tell",
            "locate",
            "identify",
            "verify",
            "cite",
            "address",
            "addressed",
            "addresses",
            "sure",
            "certain",
        ),
        weak_report=(
            "contain*",
            "provid*",
            "available",
            "include*",
            "cover*",
            "describ*",
            "give*",
            "detail*",
            "record*",
            "report*",
            "discuss*",
            "publish*",
            "show*",
            "have",
            "has",
            "had",
            "hold*",
        ),
        sources=(
            "document*",
            "source*",
            "knowledge base",
            "datasheet*",
            "data sheet*",
            "excerpt*",
            "passage*",
            "context",
            "material*",
            "file*",
            "manual*",
        ),
        information=(
            "information",
            "info",
            "data",
            "detail*",
            "mention*",
            "figure*",
            "value*",
            "record",
            "reference*",
            "indication*",
            "answer*",
            "knowledge",
        ),
        data_fates=(
            "lost",
            "stored",
            "deleted",
            "transmitted",
            "shared",
            "sold",
            "leave*",
            "left",
            "collected",
            "retained",
            "hosted",
            "kept",
        ),
        compatibility=(
            "approved",
            "suitable",
            "compatible",
            "certified",
            "permitted",
            "qualified",
            "allowed",
            "recommend*",
        ),
        purpose=("rated", "designed", "intended", "meant", "built", "made"),
        purpose_prepositions=frozenset({"for"}),
        modals=frozenset({"must", "should", "may", "can", "shall"}),
        use_verbs=("used", "use", "operated", "operate", "run", "compress*", "fed"),
        with_words=frozenset({"with", "on"}),
        splitters=frozenset({"but", "only", "however", "although", "though", "instead"}),
        labels=("synthetic", "demo", "fictional", "fictitious", "confirmed"),
        attributions=frozenset({"according", "per", "citing"}),
        self_refusals=("unknown", "unspecified", "undocumented", "no idea"),
    ),
}

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


def _is(word: str, entries: Sequence[str] | frozenset[str], compounds: bool = False) -> bool:
    for entry in entries:
        if entry.endswith("*"):
            stem = entry[:-1]
            if word.startswith(stem) or (compounds and len(stem) >= 5 and stem in word[1:]):
                return True
        elif word == entry or (compounds and len(entry) >= 5 and word.endswith(entry)):
            return True
    return False


def _multi(clause: str, entries: Sequence[str]) -> bool:
    """Entries of several words ("knowledge base", "nulle part") looked up in the clause."""
    for entry in entries:
        if " " in entry:
            body = re.escape(entry.rstrip("*"))
            if re.search(rf"(?<!\w){body}", clause):
                return True
    return False


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
    if any(re.search(rf"(?<!\w){phrase}(?!\w)", joined) for phrase in lexicon.self_refusals):
        return "self refusal"
    negations = [i for i, w in enumerate(words) if w in lexicon.negations]
    absence = [i for i, w in enumerate(words) if _is(w, lexicon.absence)]
    cues = sorted(negations + absence)
    if not cues:
        return None

    def at(entries: Sequence[str], compounds: bool = False) -> list[int]:
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
    for code in ordered:
        phrase = find_phrase(answer, tuple(phrases.get(code, ())))
        if phrase is not None:
            return Refusal(phrase, "phrase", code)
        lexicon = lexicons.get(code)
        if lexicon is None:
            continue
        for clause in clauses(prepared, lexicon.splitters):
            how = clause_refusal(clause, lexicon)
            if how is not None:
                return Refusal(clause, how, code)
    return None


def is_refusal(answer: str, lang: str, phrases: Mapping[str, Sequence[str]]) -> bool:
    """Does ``answer`` refuse (see :func:`find_refusal`)?"""
    return find_refusal(answer, lang, phrases) is not None
