"""The answer model's language and vocabulary: its fixed sentences in three languages,
folding and words, stop words, the small fr/de/en vocabulary (``concept_of``), language
detection and the phrases it recognises (small talk, memory, follow-ups, split points, format
requests). Standard library only."""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # typing costs ~10 ms of the reference command's start
    from typing import Literal

    Variant = Literal["v1", "v2"]
    Language = Literal["fr", "de", "en"]
    Name = tuple[str, ...]  # a folded word sequence, e.g. ("tw", "p", "24", "001")

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
# "[n]" markers, and LibreChat's file anchors ("\\ue202turn0file2", the model copies them)
_CITATION = re.compile(r"\s*(?:\[\d+(?:\s*[-–,;]\s*\d+)*\]|(?:\\ue202|\ue202)turn\d+file\d+)")


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
