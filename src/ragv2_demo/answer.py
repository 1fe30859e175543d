"""The demo's answer model: a deterministic, extractive stand-in for an LLM (layer B).

``answer(messages, tools, variant)`` takes an OpenAI chat request (messages and the tools on
offer) and returns one OpenAI assistant message: either tool calls of
``search_knowledge_base`` or a text answer. It is a pure function (no I/O, no clock, no
randomness) and fast (about a millisecond), so it can sit behind the demo server's
OpenAI-compatible route and inside the reference command without a model on disk. Like
``demo/engine.py`` it is a system under test: it never reads cases/ or gold/, but its
heuristics are honestly shaped by knowing the genres of the bundled corpora (contracts,
policies, datasheets with "Key: value" table rows, synthetic project records) and the kinds
of questions people ask of them. It only imports the standard library, so the reference
command starts fast.

What it does with the latest user message (the "prompt"):

1. **Tool results present** (``tool`` messages after the prompt): an extractive answer from
   the sources (below). The model never searches twice in one turn.
2. **Small talk** — greetings, thanks, "how are you" — (``_SMALL_TALK``) with at most one
   content word left once those phrases are removed: a short fixed reply in the prompt's
   language, no tool.
3. **Memory** — the prompt refers to the conversation itself ("dont nous avons parlé",
   "tout à l'heure", "we discussed", "vorhin", ``_MEMORY``) and an earlier assistant answer
   exists: recall from the conversation, no tool. The earlier turn is the one whose prompt
   and answer share most terms with this prompt (ties: the later turn); its answer lines are
   re-used verbatim with their citation markers removed (they named that turn's sources).
4. **A question and the search tool is offered**: tool calls.
   - V1 sends one call with the raw prompt.
   - V2 splits a two-subject question at ", and / et / und" followed by a question word
     ("..., and how many remote days...") into one call per part, unless the later part
     points back with a pronoun or demonstrative ("ce trimestre", "ne le respectons pas",
     "dazu"), then it sends the whole prompt. An implicit follow-up — a prompt with a
     demonstrative naming a noun it has not mentioned itself ("ce contrat", "this
     contract"), or starting "Et / And / Und", and with no name or identifier of its own —
     gets the names and identifiers of the previous user prompt appended to its query
     ("... ce contrat ? Meridia Distribution").
5. **A question without the tool**: no sources, so the refusal sentence (both variants:
   there is nothing to quote).

Language: an explicit request ("en français", "in English", "auf Deutsch") wins; otherwise
the language whose function words (``_LANGUAGE_WORDS``) occur most in the prompt; English
on a tie.

Extractive answers. Each source is cut into units: a line with " | " is a table row or
record whose "Key: value" segments are its cells (the caption, ``unité`` and ``note``
segments are not cells); any other line is split into sentences. A source's first line is
its heading (title, section path) when it has more lines and no final punctuation: it is
context for matching names, never quoted. The prompt's *terms* are its content words (folded
— case, accents — with French, German and English stop words and the vocabulary of asking
removed); its *names* are identifiers (letters with digits "TW-P-24-001", "X2", an acronym
with a number "TVS 75", all-capital acronyms "RPO") and, outside German (which capitalises
every noun), capitalised words inside a sentence ("Meridia Distribution", "Japon"); quarter
names in the three languages become q1..q4 ("quatrième trimestre" = "T4"). A term matches a
unit word when equal, when both share their first five letters (four for a four-letter
term), or through a small French/German/English vocabulary of business and engineering
words (``_LEXICON``, the model's "multilingual knowledge"). A unit's score is the number of
terms it matches, +2 per name, +3 for the asked quarter, +1 per number of the prompt it
contains.

- **V1** (baseline) answers from its top-ranked source (the lowest [n]) whatever it says:
  its one or two best-scoring units, quoted verbatim with the citation. No refusal (unless
  there is no source at all), no table, no sentence limit, no synthetic-data label.
- **V2** answers per part of the question. Its evidence must cover the part: every name of
  the part occurs in some source (heading, filename and section included) — in German,
  where names cannot be told by their capital, every capitalised noun inside the sentence
  must match some source word instead ("Japan", "Schalldruckpegel") — and the unit
  must come from a source holding one of the part's identifiers when it has any; the best
  unit must match at least a third of the part's terms (``COVERAGE``). A part that is not
  covered gets the refusal sentence ("Cette information ne figure pas dans les documents.",
  "Diese Information ist in den Dokumenten nicht enthalten.", "This information is not in
  the documents."). Kept units: the best and those scoring at least 3/4 of it (up to 4; 12
  table rows when a table is asked), skipping a row labelled with another quarter or year
  than the one asked. For a row with more than three cells only the label and the cells
  matching the prompt are quoted (a cell whose key names another year than the one asked is
  left out); a numeric cell "CA (k€): 1 689" is written "CA: 1 689 k€" so the unit follows
  the number. Rows from a source whose own metadata says it is synthetic (a ``synthetic:
  true`` field, or "synthetic" / "synthetisch" / "synthétique" in its heading or filename)
  are labelled "(synthetic record)" / "(synthetischer Datensatz)" / "(donnée synthétique)".
  "tableau" / "Tabelle" / "table" in the prompt gives a Markdown table of the kept rows
  (their cell keys as columns, plus the source); "en une phrase" / "in one sentence" /
  "in einem Satz" gives one sentence (units joined by "; ").
  Engineering checks (V2): when the prompt names a medium and a product identifier, the
  medium is checked against the evidence (a negated mention, or a media listing that lacks
  it, answers "<product> is not approved for <medium>" with that evidence, and no variant is
  quoted); a table row whose medium or pressure cell contradicts the medium or the pressure in
  bar the prompt asks for is never quoted as a match; a unit asked for explicitly ("in
  dB(A)") must appear in the kept units, or the part is refused.

Never invented: every number and identifier in an answer is copied from a source, the prompt
or an earlier message; the connective text and labels hold no digit. Citation markers are
``[n]`` with the source's own number. A sum or any other computed figure is therefore out of
reach (the model quotes the rows instead).
"""

from __future__ import annotations

import json
import re
import unicodedata
import zlib
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING

from pytest_ragv2.frozen_prompt import parse_user

if TYPE_CHECKING:  # typing costs ~10 ms of the reference command's start
    from collections.abc import Iterable, Mapping, Sequence
    from typing import Any, Literal

    Variant = Literal["v1", "v2"]
    Language = Literal["fr", "de", "en"]
    Name = tuple[str, ...]  # a folded word sequence, e.g. ("tw", "p", "24", "001")

SEARCH_TOOL_NAME = "search_knowledge_base"
COVERAGE = 1.0 / 3.0
KEEP_RATIO = 0.75
MAX_UNITS = 4
MAX_TABLE_ROWS = 12

REFUSAL: dict[Language, str] = {
    "fr": "Cette information ne figure pas dans les documents.",
    "de": "Diese Information ist in den Dokumenten nicht enthalten.",
    "en": "This information is not in the documents.",
}
SYNTHETIC_LABEL: dict[Language, str] = {
    "fr": "donnée synthétique",
    "de": "synthetischer Datensatz",
    "en": "synthetic record",
}
_LEAD: dict[Language, str] = {
    "fr": "D'après les documents :",
    "de": "Laut den Dokumenten:",
    "en": "According to the documents:",
}
_MEMORY_LEAD: dict[Language, str] = {
    "fr": "Pour rappel :",
    "de": "Zur Erinnerung:",
    "en": "As a reminder:",
}
_EXCERPT_HEADER: dict[Language, str] = {"fr": "Extrait", "de": "Auszug", "en": "Excerpt"}
_SMALL_TALK_REPLY: dict[Language, str] = {
    "fr": "Bonjour ! Je vais bien, merci. Comment puis-je vous aider avec vos documents ?",
    "de": "Hallo! Mir geht es gut, danke. Wie kann ich Ihnen mit Ihren Dokumenten helfen?",
    "en": "Hello! I'm doing well, thank you. How can I help you with your documents?",
}
_THANKS_REPLY: dict[Language, str] = {
    "fr": "Avec plaisir ! N'hésitez pas si vous avez une autre question sur vos documents.",
    "de": "Gern geschehen! Fragen Sie gern, wenn Sie noch etwas zu Ihren Dokumenten wissen "
    "möchten.",
    "en": "You're welcome! Just ask if you have another question about your documents.",
}

# --------------------------------------------------------------------------------------------
# Text folding and words
# --------------------------------------------------------------------------------------------

_CHAR_MAP = {
    **dict.fromkeys(map(ord, "\u00a0\u202f\u2007\u2009\u2002\u2003\t\r"), " "),
    **dict.fromkeys(map(ord, "’‘`´ʼ"), "'"),
    **dict.fromkeys(map(ord, "‐‑‒–—−"), "-"),
    ord("œ"): "oe",
    ord("æ"): "ae",
    ord("ß"): "ss",
}
_COMBINING = re.compile(r"[\u0300-\u036f]")
_WORD = re.compile(r"[^\W_]+")
_CITATION = re.compile(r"\s*\[\d+(?:\s*[-–,;]\s*\d+)*\]")


@lru_cache(maxsize=1 << 14)
def fold(text: str) -> str:
    """Casefold, strip accents, unify exotic spaces, apostrophes and dashes."""
    text = unicodedata.normalize("NFKD", text.translate(_CHAR_MAP))
    return _COMBINING.sub("", text).casefold()


def _words(text: str) -> list[str]:
    return _WORD.findall(fold(text))


def _word_set(words: str) -> frozenset[str]:
    return frozenset(words.split())


def _stop_words() -> frozenset[str]:
    french = (
        "a au aux avec avons ce ces cet cette ceux comme d dans de des du elle en est et etre "
        "eu il ils je l la le les leur leurs lui ma mais me meme mes moi mon ne nos notre nous "
        "on ou par pas pour qu que qui sa se ses si son sont sur ta te tes toi ton tu un une "
        "vos votre vous y quel quelle quels quelles combien comment quand ou est-ce peux peut "
        "pouvez faut fait fais faire donne donner dis dire rappeler rappelle moi svp plait "
        "il-y-a y-a-t-il quoi lequel laquelle lesquels sont-ils avez ont a-t-il se-passe-t-il "
        "passe tout toute tous toutes tres plus aussi alors bien ainsi autre autres chaque "
        "differents differentes entre selon respecter doit doivent"
    )
    german = (
        "der die das den dem des ein eine einen einem einer eines und oder aber ist sind war "
        "wird werden wurde hat haben hatte es er sie wir ihr ich du mit fur von zu zum zur auf "
        "in im an am bei aus nach uber unter vor nicht kein keine welche welcher welches "
        "welchen welchem wie was wann wo wer warum wieviel viel viele bitte gibt gilt muss "
        "mussen darf durfen kann konnen soll sollen unser unsere unseren unserem unserer "
        "dieser diese dieses diesen diesem dazu davon dafur damit dort hier auch noch schon "
        "sich man als ob so sehr nur mal denn doch ja nein laut genau"
    )
    english = (
        "a an the and or but is are was were be been being has have had do does did it its "
        "this that these those they them their we our us you your i me my of for to in on at "
        "by with from as into about what which who whom whose when where why how many much "
        "please tell give can could would should will shall may might must there here not no "
        "any some all each every also just than then so very one get got does did let use "
        "uses used used"
    )
    return frozenset((french + " " + german + " " + english).split())


_STOP_WORDS = _stop_words()
# Words that ask for a format or a language or refer to the conversation: never terms.
_META_WORDS = _word_set(
    "tableau recapitulatif recap table tabelle ubersicht summary summarise summarize "
    "phrase sentence satz francais french franzosisch anglais english englisch allemand "
    "german deutsch reponds reponds answer antworte antworten reply ecris write schreib "
    "dont parle parler discute discussed talked mentioned besprochen erwahnt vorhin "
    "earlier tout heure tot finir pour-finir finally schluss remind erinnere erinnern "
    "rappelle rappeler rappel chiffres figures zahlen deux two zwei calculer calculate "
    "berechne additionnant adding addiere"
)

# --------------------------------------------------------------------------------------------
# The model's small multilingual vocabulary
# --------------------------------------------------------------------------------------------

# concept -> folded prefixes (an entry ending in "=" must be the whole word, or + "s").
_LEXICON: dict[str, str] = {
    "price": "tarif prix price pricing cost cout preis kosten factur listenpreis devis quote=",
    "availability": "disponib availab uptime verfugbar",
    "runtime": "autonom runtime laufzeit betriebsdauer",
    "battery": "batter akku",
    "warranty": "garanti warrant gewahrleist",
    "payload": "payload nutzlast traglast",
    "speed": "vitesse speed geschwind",
    "notice": "preavis notice kundigungsfrist frist=",
    "termination": "resili terminat cancel kundig",
    "contract": "contrat contract vertrag",
    "revenue": "revenu umsatz affaires ca= sales= chiffre",
    "customer": "client customer kunde",
    "new": "nouveau nouvel nouvelle new= neu= neue neuen",
    "quarter": "trimestr quarter quartal",
    "support": "support assistance helpdesk",
    "response": "delai reponse response antwort reaktion",
    "pressure": "pression pressure druck",
    "delivery": "debit delivery liefermenge forderstrom flow",
    "power": "puissance power leistung",
    "oil": "huile oil= ol= oel",
    "change": "vidange change wechsel replace ersetz",
    "interval": "interval frequen often haufig",
    "certificate": "certific zertifik bescheinig",
    "validity": "valid gultig",
    "hydrogen": "hydrog wassersto",
    "nitrogen": "azote nitrogen stickst",
    "temperature": "temperat",
    "part": "piece part= parts= teil= ersatzteil teilenummer",
    "project": "projet project projekt",
    "remote": "remote teletrav homeoffice",
    "day": "jour day= days= tag= tage",
    "week": "semaine week woche",
    "month": "mois= month monat mensuel",
    "year": "annee annuel year annual jahr",
    "allowance": "allowance indemnit zuschuss pauschale",
    "equipment": "equipement equipment ausstattung",
    "maintenance": "maintenance wartung",
    "recovery": "reprise recover wiederherst sinistre disaster",
    "compressor": "compress verdicht",
    "noise": "bruit noise sound schall",
    "launch": "lancement launch markteinf",
    "capacity": "capacit capacity kapazit",
    "objective": "objectif objective target ziel",
    "phone": "telephon phone telefon numero",
    "security": "securit security sicherheit",
}


def _lexicon_tables() -> tuple[dict[str, str], list[tuple[str, str]]]:
    exact: dict[str, str] = {}
    prefixes: list[tuple[str, str]] = []
    for concept, entries in _LEXICON.items():
        for entry in entries.split():
            if entry.endswith("="):
                exact[entry[:-1]] = concept
            else:
                prefixes.append((entry, concept))
    prefixes.sort(key=lambda pair: -len(pair[0]))
    return exact, prefixes


_LEXICON_EXACT, _LEXICON_PREFIXES = _lexicon_tables()


@lru_cache(maxsize=1 << 14)
def concept_of(word: str) -> str | None:
    """The vocabulary concept of a folded word, or None."""
    concept = _LEXICON_EXACT.get(word)
    if concept is None and word.endswith("s"):
        concept = _LEXICON_EXACT.get(word[:-1])
    if concept is not None:
        return concept
    for prefix, candidate in _LEXICON_PREFIXES:
        if word.startswith(prefix):
            return candidate
    return None


# --------------------------------------------------------------------------------------------
# Language, small talk, memory, follow-ups
# --------------------------------------------------------------------------------------------

_LANGUAGE_WORDS: dict[Language, frozenset[str]] = {
    "fr": _word_set(
        "le la les des du de est et quel quelle quels quelles combien pour avec dans nous vous "
        "une un que qui sur au aux ce cette ces peux tu en pas fais moi rappelle bonjour merci "
        "avons sont notre nos il elle"
    ),
    "de": _word_set(
        "der die das den dem des und ist welche welcher welches welchen welchem wie was wir ein "
        "eine einen mit fur bei auf nicht zu es sie hat gilt wann wo bitte hallo danke "
        "unser unsere im vom zum sind werden wird"
    ),
    "en": _word_set(
        "the an is are what which how and of for with to in on we our do does you it this "
        "that please hi hello thanks many much can has have"
    ),
}
_EXPLICIT_LANGUAGE: tuple[tuple[re.Pattern[str], Language], ...] = (
    (re.compile(r"\ben francais\b|\bin french\b|\bauf franzosisch\b"), "fr"),
    (re.compile(r"\bauf deutsch\b|\bin german\b|\ben allemand\b"), "de"),
    (re.compile(r"\bin english\b|\ben anglais\b|\bauf englisch\b"), "en"),
)


def detect_language(text: str) -> Language:
    """fr, de or en: an explicit request, else the most function words (en on a tie)."""
    folded = fold(text)
    for pattern, language in _EXPLICIT_LANGUAGE:
        if pattern.search(folded):
            return language
    words = _WORD.findall(folded)
    counts = {lang: sum(w in vocab for w in words) for lang, vocab in _LANGUAGE_WORDS.items()}
    best: Language = "en"
    for language in ("fr", "de"):
        if counts[language] > counts[best]:
            best = language
    return best


_SMALL_TALK = re.compile(
    r"\b(?:bonjour|bonsoir|salut|coucou|hello|hi|hey|hallo|servus|moin|guten (?:tag|morgen|abend)"
    r"|good (?:morning|afternoon|evening)|au revoir|bye|goodbye|tschuss|bis bald"
    r"|how are you(?: doing)?(?: today)?|how is it going|how's it going"
    r"|comment (?:ca va|vas-tu|allez-vous|vas tu|allez vous)(?: aujourd'hui)?|ca va"
    r"|wie geht(?:'s| es)(?: (?:dir|ihnen))?(?: heute)?"
    r"|(?:thank you|thanks)(?: a lot| so much| very much)?(?: for (?:your|the) help)?"
    r"(?: earlier| today| again)?"
    r"|merci(?: beaucoup| bien)?(?: pour (?:ton|votre) aide)?(?: tout a l'heure)?"
    r"|danke(?: schon| sehr)?(?: fur (?:deine|ihre) hilfe)?(?: vorhin)?)\b"
)
_GREETING = re.compile(
    r"\b(?:bonjour|bonsoir|salut|hello|hi|hey|hallo|guten|good morning|how are you|comment|"
    r"wie geht|ca va)\b"
)
_THANKS = re.compile(r"\b(?:thank|thanks|merci|danke)\b")
_MEMORY = re.compile(
    r"dont nous avons (?:parle|discute)|que nous avons (?:vu|evoque|mentionne)|tout a l'heure"
    r"|plus tot dans (?:la|cette) conversation"
    r"|\b(?:we|you) (?:talked|spoke|discussed|mentioned)\b|\byou (?:told|gave) me\b"
    r"|earlier in (?:this|our) (?:conversation|chat)"
    r"|\b(?:besprochen|erwahnt) (?:haben|hatten)\b|\bvorhin\b"
)
_DEMONSTRATIVE = re.compile(
    r"\b(?:ce|cet|cette|ces|this|that|these|those|diese[rsmn]?|dieses|jene[rsmn]?)\s+"
    r"([^\W\d_]{3,})"
)
_FOLLOW_UP_START = re.compile(r"^\s*(?:et|and|und)\b")
_BACK_REFERENCE = re.compile(
    r"\b(?:ce|cet|cette|ces|il|elle|ils|elles|celui|celle|cela|ceci|ca"
    r"|it|its|they|them|this|that|these|those"
    r"|es|ihn|ihm|dazu|davon|dafur|damit|dies\w*|jene\w*)\b|\bne (?:le|la|les|l')"
)
_PART_SPLIT = re.compile(
    r",?\s+(?:and|et|und)\s+(?=(?:(?:a|in|on|for|at|by|from|zu|bei|mit|de|en|pour|sur)\s+)?"
    r"(?:what|which|how|when|where|who|quel|quelle|quels|quelles|combien|comment|quand|ou|qui"
    r"|welche[rsmn]?|wie|was|wann|wo|wer|wieviel)\b)"
)
_TABLE_REQUEST = re.compile(r"\b(?:tableau|tabelle|table|tabellarisch)\b")
_ONE_SENTENCE = re.compile(
    r"\b(?:en une (?:seule )?phrase|in (?:one|a single) sentence|in einem (?:einzigen )?satz)\b"
)

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


# --------------------------------------------------------------------------------------------
# Sources and units
# --------------------------------------------------------------------------------------------


def parse_sources(text: str) -> list[dict[str, Any]]:
    """The sources of a tool result, as ``systems.kb_tool.parse_sources`` reads them.

    Re-implemented here (same contract, checked by a test) because importing
    ``pytest_ragv2.systems`` pulls httpx and pydantic, ~0.4 s the reference command cannot
    afford per turn.
    """
    try:
        data = json.loads(text)
    except ValueError:
        return []
    sources = data.get("sources") if isinstance(data, dict) else None
    if not isinstance(sources, list):
        return []
    return [
        source
        for source in sources
        if isinstance(source, dict)
        and isinstance(source.get("n"), int)
        and not isinstance(source.get("n"), bool)
        and isinstance(source.get("text"), str)
    ]


@dataclass(frozen=True, slots=True)
class _Source:
    n: int
    text: str
    context_words: str  # " w1 w2 ... " of text + filename + section + table (name matching)
    synthetic: bool


@dataclass(slots=True)
class _Unit:
    source: _Source
    text: str  # verbatim from the source
    cells: list[tuple[str, str]] = field(default_factory=list)  # table row: (key, value)
    caption: str = ""
    words: frozenset[str] = frozenset()
    score: float = 0.0
    matched: frozenset[str] = frozenset()

    @property
    def is_row(self) -> bool:
        return bool(self.cells)


_SYNTHETIC_FIELD = re.compile(r"\bsynthetic\s*:\s*true\b", re.IGNORECASE)
_SYNTHETIC_WORD = re.compile(r"synthet|synthetic", re.IGNORECASE)
_SENTENCE_SPLIT = re.compile(r"(?<=[.!?])\s+(?=[A-ZÀ-Ö0-9«\"(•-])")
_SKIPPED_CELL_KEYS = frozenset({"note", "unite", "unit", "einheit"})


def _source(raw: Mapping[str, Any]) -> _Source:
    text = str(raw["text"])
    filename = str(raw.get("filename") or "")
    section = str(raw.get("section") or "")
    table = str(raw.get("table") or "")
    context = " ".join(_words(" ".join((text, filename, section, table))))
    heading = text.split("\n", 1)[0]
    synthetic = bool(
        _SYNTHETIC_FIELD.search(text)
        or _SYNTHETIC_WORD.search(heading)
        or _SYNTHETIC_WORD.search(filename)
    )
    return _Source(n=int(raw["n"]), text=text, context_words=f" {context} ", synthetic=synthetic)


def _units(source: _Source) -> list[_Unit]:
    lines = [line.strip() for line in source.text.split("\n")]
    lines = [line for line in lines if line]
    if (
        len(lines) > 1
        and not lines[0].endswith((".", "!", "?", ":", ";"))
        and (" | " not in lines[0])
    ):
        lines = lines[1:]  # the heading: context, never quoted
    units: list[_Unit] = []
    for line in lines:
        if " | " in line:
            units.append(_row_unit(source, line))
            continue
        for sentence in _SENTENCE_SPLIT.split(line):
            sentence = sentence.strip()
            if sentence and _WORD.search(sentence):
                units.append(_Unit(source, sentence, words=frozenset(_words(sentence))))
    return units


def _row_unit(source: _Source, line: str) -> _Unit:
    cells: list[tuple[str, str]] = []
    captions: list[str] = []
    for segment in line.split(" | "):
        key, sep, value = segment.partition(": ")
        if sep and key.strip() and fold(key.strip()) not in _SKIPPED_CELL_KEYS:
            cells.append((key.strip(), value.strip()))
        elif not sep:
            captions.append(segment.strip())
    if not cells:
        return _Unit(source, line, words=frozenset(_words(line)))
    return _Unit(
        source,
        line,
        cells=cells,
        caption=" ".join(captions),
        words=frozenset(_words(line)),
    )


def _word_matches(term: str, words: frozenset[str], concepts: frozenset[str]) -> bool:
    if term in words:
        return True
    if len(term) >= 4:
        for word in words:
            size = min(5, len(term), len(word))
            if size >= 4 and word[:size] == term[:size]:
                return True
    concept = concept_of(term)
    return concept is not None and concept in concepts


def _concepts(words: Iterable[str]) -> frozenset[str]:
    return frozenset(c for c in map(concept_of, words) if c is not None)


def _score(unit: _Unit, part: _Part) -> None:
    concepts = _concepts(unit.words)
    matched = {t for t in part.terms if _word_matches(t, unit.words, concepts)}
    joined = f" {' '.join(_words(unit.text))} "
    names = sum(1 for name in part.names.identifiers if _contains_name(joined, name))
    folded = fold(unit.text)
    quarter = 3 if part.quarters and part.quarters & _quarters(folded) else 0
    numbers = sum(1 for number in part.numbers if number in unit.text)
    unit.matched = frozenset(matched)
    unit.score = len(matched) + 2 * names + quarter + numbers


def _conflicts(unit: _Unit, part: _Part) -> bool:
    """A row labelled with another quarter or year than the one the part asks about."""
    if not unit.is_row:
        return False
    label = fold(unit.cells[0][1])
    quarters = _quarters(label)
    if part.quarters and quarters and not quarters & part.quarters:
        return True
    years = set(_YEAR.findall(label))
    return bool(part.years and years and not years & part.years)


def _covered(part: _Part, sources: Sequence[_Source]) -> bool:
    """Every name of the part occurs in some source, and (German) every noun of the part
    is matched by some source word."""
    if not all(any(_contains_name(s.context_words, n) for s in sources) for n in part.names.all):
        return False
    if part.nouns:
        words = frozenset(w for s in sources for w in s.context_words.split())
        concepts = _concepts(words)
        return all(_word_matches(noun, words, concepts) for noun in part.nouns)
    return True


def _eligible(source: _Source, part: _Part) -> bool:
    """A source holding one of the part's identifiers, when the part names any."""
    ids = part.names.identifiers
    return not ids or any(_contains_name(source.context_words, n) for n in ids)


# --------------------------------------------------------------------------------------------
# Rendering
# --------------------------------------------------------------------------------------------

_KEY_WITH_UNIT = re.compile(r"^(.*?)\s*\(([^()]+)\)\s*[¹²³⁴⁵⁶⁷⁸⁹⁰*]*$")
_NUMERIC_VALUE = re.compile(r"^[+-]?\d[\d  .,]*[¹²³⁴⁵⁶⁷⁸⁹⁰]*$")


def _cell_text(key: str, value: str) -> str:
    """ "CA (k€): 1 689" → "CA: 1 689 k€" (the unit right after the number)."""
    match = _KEY_WITH_UNIT.match(key)
    if match and _NUMERIC_VALUE.match(value) and match.group(1):
        return f"{match.group(1)}: {value} {match.group(2)}"
    return f"{key}: {value}"


def _selected_cells(unit: _Unit, part: _Part) -> list[tuple[str, str]]:
    if len(unit.cells) <= 3:
        return list(unit.cells)
    chosen = [unit.cells[0]]
    for key, value in unit.cells[1:]:
        key_years = set(_YEAR.findall(key))
        if part.years and key_years and not key_years & part.years:
            continue
        words = frozenset(_words(f"{key} {value}"))
        concepts = _concepts(words)
        if any(_word_matches(t, words, concepts) for t in part.terms) or any(
            _contains_name(f" {' '.join(_words(value))} ", n) for n in part.names.all
        ):
            chosen.append((key, value))
    return chosen if len(chosen) > 1 else list(unit.cells)


def _v2_unit_text(unit: _Unit, part: _Part) -> str:
    if not unit.is_row:
        return unit.text
    return " | ".join(_cell_text(k, v) for k, v in _selected_cells(unit, part))


def _strip_end(text: str) -> str:
    return text.rstrip().rstrip(".;").rstrip()


def _cite(text: str, unit: _Unit, language: Language, label: bool) -> str:
    suffix = f" ({SYNTHETIC_LABEL[language]})" if label and unit.source.synthetic else ""
    return f"{_strip_end(text)} [{unit.source.n}]{suffix}"


def _markdown_table(units: Sequence[_Unit], language: Language, label: bool) -> str:
    source_header = "Source" if language != "de" else "Quelle"
    rows = [u for u in units if u.is_row]
    if not rows:
        header = f"| {_EXCERPT_HEADER[language]} | {source_header} |\n| --- | --- |"
        body = [f"| {_escape(_strip_end(u.text))} | [{u.source.n}] |" for u in units]
        return "\n".join([header, *body])
    keys: list[str] = []
    for unit in rows:
        for key, _ in unit.cells:
            if key not in keys:
                keys.append(key)
    lines = [
        "| " + " | ".join([*map(_escape, keys), source_header]) + " |",
        "| " + " | ".join(["---"] * (len(keys) + 1)) + " |",
    ]
    for unit in rows:
        values = dict(unit.cells)
        marker = f"[{unit.source.n}]"
        if label and unit.source.synthetic:
            marker += f" ({SYNTHETIC_LABEL[language]})"
        cells = [_escape(values.get(key, "")) for key in keys]
        lines.append("| " + " | ".join([*cells, marker]) + " |")
    return "\n".join(lines)


def _escape(cell: str) -> str:
    return cell.replace("|", "\\|").replace("\n", " ")


# --------------------------------------------------------------------------------------------
# Composing answers
# --------------------------------------------------------------------------------------------


def _all_sources(messages: Sequence[Mapping[str, Any]]) -> list[_Source]:
    sources: dict[int, _Source] = {}
    for message in messages:
        if message.get("role") == "tool":
            for raw in parse_sources(_text_of(message.get("content"))):
                sources.setdefault(raw["n"], _source(raw))
    return [sources[n] for n in sorted(sources)]


def _answer_v1(prompt: str, sources: Sequence[_Source], language: Language) -> str:
    if not sources:
        return REFUSAL[language]
    top = sources[0]
    part = _part(prompt)
    units = _units(top)
    if not units:
        return f"{_LEAD[language]} {_strip_end(top.text)} [{top.n}]"
    for unit in units:
        _score(unit, part)
    ranked = sorted(units, key=lambda u: -u.score)
    chosen = [ranked[0]]
    if len(ranked) > 1 and ranked[1].score > 0 and ranked[1].score >= KEEP_RATIO * ranked[0].score:
        chosen.append(ranked[1])
    chosen.sort(key=units.index)
    if len(chosen) == 1:
        return f"{_LEAD[language]} {_cite(chosen[0].text, chosen[0], language, False)}."
    lines = [f"- {_cite(u.text, u, language, False)}" for u in chosen]
    return "\n".join([_LEAD[language], *lines])


_PROMPT_BAR = re.compile(r"(\d+(?:[.,]\d+)?)\s*bar\b")
_CELL_NUMBER = re.compile(r"^\s*(\d+(?:[.,]\d+)?)\s*$")


def _requirements(prompt: str) -> tuple[set[str], set[float]]:
    """The media and the pressures in bar a question asks for (V2 keeps them)."""
    folded = fold(prompt)
    pressures = {float(m.group(1).replace(",", ".")) for m in _PROMPT_BAR.finditer(folded)}
    return _media_in(folded), pressures


def _row_contradicts(unit: _Unit, media: set[str], pressures: set[float]) -> bool:
    """A table row (a project record) whose medium or pressure cell differs from what the
    question asks for: V2 does not present it as a match."""
    for key, value in unit.cells:
        folded_key = fold(key)
        if media and "medi" in folded_key:
            listed = _media_in(fold(value))
            if listed and not media & listed:
                return True
        if pressures and ("pressure" in folded_key or "druck" in folded_key):
            number = _CELL_NUMBER.match(value)
            if number and float(number.group(1).replace(",", ".")) not in pressures:
                return True
    return False


def _best_units(part: _Part, sources: Sequence[_Source], table: bool) -> list[_Unit] | None:
    """The kept units for one part, or None when the evidence does not cover it."""
    if not _covered(part, sources):
        return None
    media, pressures = _requirements(part.text)
    candidates: list[_Unit] = []
    for source in sources:
        if not _eligible(source, part):
            continue
        for unit in _units(source):
            _score(unit, part)
            if unit.score > 0 and not _conflicts(unit, part):
                if unit.is_row and _row_contradicts(unit, media, pressures):
                    continue
                candidates.append(unit)
    if not candidates:
        return None
    # stable: ties keep the source order (the retriever's ranking)
    candidates.sort(key=lambda u: -u.score)
    best = candidates[0]
    if (part.terms and not best.matched) or (not part.terms and not part.names.all):
        return None
    limit = MAX_TABLE_ROWS if table else MAX_UNITS
    kept: list[_Unit] = []
    seen: set[str] = set()
    for unit in candidates:
        if unit.score < KEEP_RATIO * best.score or len(kept) == limit:
            break
        if unit.text in seen:
            continue
        seen.add(unit.text)
        kept.append(unit)
    matched = {term for unit in kept for term in unit.matched}
    if part.terms and len(matched) < COVERAGE * len(part.terms):
        return None
    return kept


# Media a compressor question may name, with the words each language uses for them.
_MEDIA: dict[str, tuple[str, ...]] = {
    "hydrogen": ("hydrogen", "wasserstoff", "hydrogene", "h2"),
    "nitrogen": ("nitrogen", "stickstoff", "azote"),
    "oxygen": ("oxygen", "sauerstoff", "oxygene"),
    "natural gas": ("natural gas", "erdgas", "gaz naturel"),
    "biogas": ("biogas",),
    "co2": ("co2", "carbon dioxide", "kohlendioxid"),
    "air": ("air", "luft", "druckluft"),
}
_MEDIUM_WORD: dict[str, dict[Language, str]] = {
    "hydrogen": {"en": "hydrogen", "de": "Wasserstoff", "fr": "l'hydrogène"},
    "nitrogen": {"en": "nitrogen", "de": "Stickstoff", "fr": "l'azote"},
    "oxygen": {"en": "oxygen", "de": "Sauerstoff", "fr": "l'oxygène"},
    "natural gas": {"en": "natural gas", "de": "Erdgas", "fr": "le gaz naturel"},
    "biogas": {"en": "biogas", "de": "Biogas", "fr": "le biogaz"},
    "co2": {"en": "CO2", "de": "CO2", "fr": "le CO2"},
    "air": {"en": "air", "de": "Luft", "fr": "l'air"},
}
_ANSWERS_NO = re.compile(r"\s*(?:no|nein|non)\b")
_NEGATION = re.compile(r"\b(?:not|no|nein|nicht|kein\w*|pas|aucun\w*|never|nie)\b")
_MEDIA_LABEL = re.compile(r"\b(?:media|medium|medien|fordermedi\w*|fluides?|gases?)\b")
_NOT_APPROVED: dict[Language, str] = {
    "en": "{name} is not approved for {medium}: {medium} is not among the media the "
    "documents list for it.",
    "de": "{name} ist nicht für {medium} zugelassen: die Dokumente nennen {medium} nicht "
    "unter seinen Medien.",
    "fr": "{name} n'est pas homologué pour {medium} : les documents ne le mentionnent pas "
    "parmi ses fluides.",
}
# A unit asked for explicitly ("in dB(A)", "en k€"): the answer must show a value in it.
_ASKED_UNIT = re.compile(
    r"\b(?:in|en)\s+(db\s*\(a\)|dba|db|kw|kwh|bar|m3/min|m³/min|°c|k€|€)(?=\W|$)"
)


def _media_in(folded: str) -> set[str]:
    return {
        medium
        for medium, words in _MEDIA.items()
        if any(re.search(rf"(?<![\w-]){re.escape(word)}(?![\w-])", folded) for word in words)
    }


def _media_listing(source: _Source) -> tuple[_Unit, str, set[str]] | None:
    """The first unit of ``source`` that lists media ("Media: Air, nitrogen"), the listing
    as quoted (only the media cell of a table row), and the media it names."""
    for unit in _units(source):
        for key, value in unit.cells or [("", unit.text)]:
            folded_key = fold(key) if key else fold(unit.text.split(":", 1)[0])
            if not _MEDIA_LABEL.search(folded_key):
                continue
            listed = _media_in(fold(value))
            if listed:
                quoted = f"{key}: {value}" if key else unit.text
                return unit, quoted, listed
    return None


def _incompatible_medium(
    prompt: str, part: _Part, sources: Sequence[_Source], language: Language
) -> str | None:
    """V2 checks a named medium against the media its evidence lists for the named product:
    an unlisted medium is answered as not approved, quoting the listing, and no variant is
    recommended (an incompatible medium is never presented as compatible)."""
    asked = _media_in(fold(prompt))
    if not asked or not part.names.identifiers:
        return None
    names = part.names.phrases(prompt)
    name = names[0] if names else "It"
    for source in sources:  # an explicit exclusion: "... nicht für Wasserstoff zugelassen"
        if not _eligible(source, part) or source.synthetic:
            continue
        heading = _media_in(source.context_words)  # an FAQ's question names the medium
        for unit in _units(source):
            folded = fold(unit.text)
            # the heading counts only for an answer that starts by saying no ("Nein. ...")
            named = _media_in(folded) | (heading if _ANSWERS_NO.match(folded) else set())
            excluded = sorted(asked & named)
            if excluded and _NEGATION.search(folded):
                medium = _MEDIUM_WORD[excluded[0]][language]
                statement = _NOT_APPROVED[language].format(name=name, medium=medium)
                return f"{statement} {_cite(unit.text, unit, language, True)}"
    # documents before synthetic records: a project's medium is not the product's approval
    for source in sorted(sources, key=lambda s: s.synthetic):
        if not _eligible(source, part):
            continue
        listing = _media_listing(source)
        if listing is None:
            continue
        unit, quoted, listed = listing
        missing = sorted(asked - listed)
        if not missing:
            return None
        medium = _MEDIUM_WORD[missing[0]][language]
        statement = _NOT_APPROVED[language].format(name=name, medium=medium)
        return f"{statement} {_cite(quoted, unit, language, True)}."
    return None


def _unit_asked_but_absent(prompt: str, units: Sequence[_Unit]) -> bool:
    asked = {m.group(1).replace(" ", "") for m in _ASKED_UNIT.finditer(fold(prompt))}
    if not asked:
        return False
    shown = fold(" ".join(unit.text for unit in units)).replace(" ", "")
    return not all(unit in shown for unit in asked)


def _answer_v2(prompt: str, sources: Sequence[_Source], language: Language) -> str:
    if not sources:
        return REFUSAL[language]
    incompatible = _incompatible_medium(prompt, _part(prompt), sources, language)
    if incompatible is not None:
        return incompatible
    folded = fold(prompt)
    table = bool(_TABLE_REQUEST.search(folded))
    one_sentence = bool(_ONE_SENTENCE.search(folded))
    parts = [_part(p) for p in split_parts(prompt)]
    pieces: list[tuple[_Part, list[_Unit] | None]] = [
        (part, _best_units(part, sources, table)) for part in parts
    ]
    answered = [
        (part, units)
        for part, units in pieces
        if units and not _unit_asked_but_absent(part.text, units)
    ]
    if not answered:
        return REFUSAL[language]
    missing = len(answered) < len(pieces)
    if table:
        units = [u for _, group in answered for u in group]
        text = f"{_LEAD[language]}\n\n{_markdown_table(units, language, True)}"
        return text + (f"\n\n{REFUSAL[language]}" if missing else "")
    quoted = [
        _cite(_v2_unit_text(unit, part), unit, language, True)
        for part, group in answered
        for unit in group
    ]
    if one_sentence:
        return f"{_LEAD[language]} " + "; ".join(_flat(q) for q in quoted) + "."
    if len(quoted) == 1:
        text = f"{_LEAD[language]} {quoted[0]}."
    else:
        text = "\n".join([_LEAD[language], *(f"- {q}" for q in quoted)])
    return text + (f"\n{REFUSAL[language]}" if missing else "")


def _flat(text: str) -> str:
    """One clause of a single sentence: inner sentence ends become commas."""
    return re.sub(r"(?<=[^\W\d_])[.!?]\s+", ", ", text)


# --------------------------------------------------------------------------------------------
# Memory
# --------------------------------------------------------------------------------------------


def _turns(messages: Sequence[Mapping[str, Any]], upto: int) -> list[tuple[str, str]]:
    """(user prompt, final assistant text) of each earlier turn."""
    turns: list[tuple[str, str]] = []
    prompt: str | None = None
    reply = ""
    for message in messages[:upto]:
        role = message.get("role")
        if role == "user":
            if prompt is not None and reply:
                turns.append((prompt, reply))
            prompt, reply = _text_of(message.get("content")), ""
        elif role == "assistant":
            content = _text_of(message.get("content"))
            if content.strip():
                reply = content
    if prompt is not None and reply:
        turns.append((prompt, reply))
    return turns


def _recall(prompt: str, turns: Sequence[tuple[str, str]], variant: Variant) -> str:
    language = detect_language(prompt)
    part = _part(prompt)
    best_index, best_score = len(turns) - 1, -1.0
    for index, (earlier_prompt, reply) in enumerate(turns):
        unit = _Unit(
            _Source(0, "", " ", False),
            earlier_prompt,
            words=frozenset(_words(f"{earlier_prompt} {reply}")),
        )
        _score(unit, part)
        if part.quarters and part.quarters & _quarters(fold(earlier_prompt)):
            unit.score += 3
        if unit.score >= best_score:
            best_index, best_score = index, unit.score
    reply = turns[best_index][1]
    lines: list[str] = []
    for line in reply.split("\n"):
        line = _CITATION.sub("", line).strip()
        for lead in (*_LEAD.values(), *_MEMORY_LEAD.values()):
            if line.startswith(lead):
                line = line[len(lead) :].strip()
        line = line.lstrip("-• ").strip()
        if line and not line.startswith("|") and line not in REFUSAL.values():
            lines.append(_strip_end(line))
    if not lines:
        return REFUSAL[language]
    if variant == "v2" and _ONE_SENTENCE.search(fold(prompt)):
        return f"{_MEMORY_LEAD[language]} " + "; ".join(_flat(line) for line in lines) + "."
    return "\n".join([_MEMORY_LEAD[language], *(f"- {line}" for line in lines)])


# --------------------------------------------------------------------------------------------
# Tool calls
# --------------------------------------------------------------------------------------------


def search_queries(prompt: str, earlier_prompts: Sequence[str], variant: Variant) -> list[str]:
    """The search queries the model sends for ``prompt`` (see the module doc)."""
    if variant == "v1":
        return [prompt]
    parts = split_parts(prompt)
    if len(parts) == 1 and earlier_prompts and is_follow_up(prompt):
        previous = earlier_prompts[-1]
        subject = _names(previous).phrases(previous) if _names(previous).all else []
        if subject:
            return [f"{prompt.strip()} {' '.join(subject)}"]
    return parts


def _tool_call(query: str, turn: int, index: int) -> dict[str, Any]:
    digest = zlib.crc32(f"{turn}:{index}:{query}".encode())
    return {
        "id": f"call_{turn}_{index}_{digest:08x}",
        "type": "function",
        "function": {
            "name": SEARCH_TOOL_NAME,
            "arguments": json.dumps({"query": query}, ensure_ascii=False),
        },
    }


def _offers_search(tools: Sequence[Mapping[str, Any]]) -> bool:
    for tool in tools:
        function = tool.get("function") if isinstance(tool, dict) else None
        if isinstance(function, dict) and function.get("name") == SEARCH_TOOL_NAME:
            return True
    return False


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return ""


# --------------------------------------------------------------------------------------------
# The model
# --------------------------------------------------------------------------------------------


def answer(
    messages: Sequence[Mapping[str, Any]],
    tools: Sequence[Mapping[str, Any]],
    variant: Variant,
) -> dict[str, Any]:
    """One assistant message (OpenAI shape) for the conversation so far."""
    user_indices = [i for i, m in enumerate(messages) if m.get("role") == "user"]
    if not user_indices:
        return {"role": "assistant", "content": _SMALL_TALK_REPLY["en"]}
    last = user_indices[-1]
    prompt = _text_of(messages[last].get("content"))
    frozen = parse_user(prompt)
    if frozen is not None:  # layer C: the evidence is in the prompt, no tool is offered
        question, raw_sources = frozen
        sources = [_source(raw) for raw in parse_sources(json.dumps({"sources": raw_sources}))]
        language = detect_language(question)
        if variant == "v1":
            return {"role": "assistant", "content": _answer_v1(question, sources, language)}
        return {"role": "assistant", "content": _answer_v2(question, sources, language)}
    language = detect_language(prompt)
    after = messages[last + 1 :]
    if any(m.get("role") == "tool" for m in after):
        sources = _all_sources(after)
        if variant == "v1":
            text = _answer_v1(prompt, sources, language)
        else:
            text = _answer_v2(prompt, sources, language)
        return {"role": "assistant", "content": text}
    if is_small_talk(prompt):
        thanks_only = _THANKS.search(fold(prompt)) and not _GREETING.search(fold(prompt))
        replies = _THANKS_REPLY if thanks_only else _SMALL_TALK_REPLY
        return {"role": "assistant", "content": replies[language]}
    turns = _turns(messages, last)
    if turns and _MEMORY.search(fold(prompt)):
        return {"role": "assistant", "content": _recall(prompt, turns, variant)}
    if _offers_search(tools):
        earlier = [_text_of(messages[i].get("content")) for i in user_indices[:-1]]
        queries = search_queries(prompt, earlier, variant)
        calls = [_tool_call(q, len(user_indices), i) for i, q in enumerate(queries)]
        return {"role": "assistant", "content": None, "tool_calls": calls}
    return {"role": "assistant", "content": REFUSAL[language]}
