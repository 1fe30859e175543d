"""Text analysis shared by the demo's two retrieval paths.

``fold`` casefolds, strips accents and unifies exotic spaces, apostrophes and dashes, so
"Disponibilité" and "disponibilite" meet. ``analyze`` splits on non-alphanumerics and adds
extra tokens that plain splitting destroys: identifiers with letters and digits
("NX-450B" → ``nx450b``, "T1–T4"), upper-case acronym + number ("ISO 27001" → ``iso27001``),
phone numbers, numbers written with French/German separators ("1 689" → ``1689``,
"99,7" → ``99.7``; "1.689" yields both ``1689`` and ``1.689`` because it is ambiguous) and
quarter names in the three languages ("T4", "quatrième trimestre", "Q4", "4. Quartal" →
``q4``). Stop words (French, English, German) are dropped from the content terms. A crude
prefix stem (first six letters, ``contra~``) and the word's lexicon concept (below,
``@contract``) are indexed beside each word.

Concept lexicon
A small hand-written French/English/German lexicon of generic business and IT vocabulary
(``_CONCEPTS``) maps words to concepts, so "availability", "Verfügbarkeit" and
"disponibilité" meet. It is the demo's stand-in for a multilingual embedding model; it was
written as general vocabulary, not from any evaluation question.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache

# --------------------------------------------------------------------------------------------
# Text analysis
# --------------------------------------------------------------------------------------------

_CHAR_MAP = {
    **dict.fromkeys(map(ord, "\u00a0\u202f\u2007\u2009\u2002\u2003\t\r\n"), " "),
    **dict.fromkeys(map(ord, "’‘`´ʼ"), "'"),
    **dict.fromkeys(map(ord, "‐‑‒–—−"), "-"),
    **dict.fromkeys(map(ord, "«»“”„"), '"'),
    ord("œ"): "oe",
    ord("Œ"): "OE",
    ord("æ"): "ae",
    ord("Æ"): "AE",
    ord("ß"): "ss",
}
_COMBINING = re.compile(r"[\u0300-\u036f]")
_WORD = re.compile(r"[^\W_]+")
# Words joined by - _ . / that contain at least one letter and one digit: NX-450B, T4, AES-256.
_IDENT = re.compile(r"(?<![\w.-])(?=[\w./-]*[a-z])(?=[\w./-]*\d)[a-z0-9]+(?:[-_./][a-z0-9]+)*")
_ACRONYM_NUMBER = re.compile(r"\b([A-Z][A-Z0-9]{1,7})[ -](\d+(?:\.\d+)*)\b")
_PHONE = re.compile(r"(?:\+\d{1,3}|\b0\d)(?:[ .]\d{1,4}){3,}\b")
_NUMBER = re.compile(r"(?<![\w.,])(\d{1,3}(?:[ .]\d{3})+(?!\d)|\d+)(?:,(\d+)(?!\d))?")
_DECIMAL_POINT = re.compile(r"(?<![\w.,])(\d+)\.(\d+)(?![\d.])")
_ID_SEPARATORS = dict.fromkeys(map(ord, "-_./"))
_QUOTED = re.compile(r'"([^"]{2,200})"')


def _stop_words() -> frozenset[str]:
    from bm25s.stopwords import STOPWORDS_EN, STOPWORDS_FRENCH, STOPWORDS_GERMAN

    words: set[str] = set()
    for word in (*STOPWORDS_EN, *STOPWORDS_FRENCH, *STOPWORDS_GERMAN):
        words.update(_WORD.findall(fold(word)))
    words.update({"quel", "quelle", "quels", "quelles", "combien", "est", "sont", "nous", "notre"})
    return frozenset(words)


def fold(text: str) -> str:
    """Casefold and strip accents; exotic spaces, apostrophes, dashes and quotes unified."""
    text = unicodedata.normalize("NFKD", text.translate(_CHAR_MAP))
    return _COMBINING.sub("", text).casefold()


_STOP_WORDS = _stop_words()


def _strip_accents_keep_case(text: str) -> str:
    return _COMBINING.sub("", unicodedata.normalize("NFKD", text.translate(_CHAR_MAP)))


@lru_cache(maxsize=1 << 16)
def stem(word: str) -> str:
    """Prefix stem of a long alphabetic word ("disponibilite" → "dispon~"), else ""."""
    if len(word) > 6 and word.isalpha():
        return word[:6] + "~"
    return ""


@dataclass(frozen=True, slots=True)
class Analysis:
    """What the analyzer found in one text, every string folded."""

    words: tuple[str, ...]  # every alphanumeric word, in order (positions for proximity)
    content: tuple[str, ...]  # words minus stop words, in order
    extra: tuple[str, ...]  # identifiers, acronym+number ids, phones, canonical numbers
    quoted: tuple[str, ...]  # quoted phrases (queries)

    @property
    def index_terms(self) -> list[str]:
        """Terms for the lexical index: content words, stems, lexicon concepts, extra tokens."""
        terms = list(self.content)
        terms.extend(s for s in map(stem, self.content) if s)
        terms.extend("@" + c for c in map(concept_of, self.content) if c)
        terms.extend(self.extra)
        return terms


def _numbers(folded: str) -> list[str]:
    found: list[str] = []
    for match in _NUMBER.finditer(folded):
        integer, decimals = match.group(1), match.group(2)
        if " " in integer or "." in integer:
            digits = re.sub(r"[ .]", "", integer)
            found.append(digits if decimals is None else f"{digits}.{decimals}")
            if "." in integer and integer.count(".") == 1 and decimals is None:
                found.append(integer)  # "1.689": German thousands or an English decimal
        elif decimals is not None:
            found.append(f"{integer}.{decimals}")
    for match in _DECIMAL_POINT.finditer(folded):
        found.append(f"{match.group(1)}.{match.group(2)}")
    return found


_QUARTER = re.compile(r"\b(?:[tq]([1-4])|([a-z0-9]+\.?) (?:trimestre|quarter|quartal))\b")
_ORDINAL = {
    **dict.fromkeys(
        ("premier", "1er", "1re", "first", "1st", "erstes", "erste", "ersten", "1."), "1"
    ),
    **dict.fromkeys(("deuxieme", "second", "2e", "2nd", "zweites", "zweite", "zweiten", "2."), "2"),
    **dict.fromkeys(("troisieme", "3e", "third", "3rd", "drittes", "dritte", "dritten", "3."), "3"),
    **dict.fromkeys(
        ("quatrieme", "4e", "fourth", "4th", "viertes", "vierte", "vierten", "4."), "4"
    ),
}


def _quarters(folded: str) -> list[str]:
    """Quarter names in any of the three languages as q1..q4 ("T4", "quatrième trimestre")."""
    found: list[str] = []
    for match in _QUARTER.finditer(folded):
        number = match.group(1) or _ORDINAL.get(match.group(2) or "")
        if number:
            found.append("q" + number)
    return found


def analyze(text: str, stop_words: frozenset[str] | None = None) -> Analysis:
    """Split ``text`` into folded words plus the extra tokens described in the module doc."""
    stops = _STOP_WORDS if stop_words is None else stop_words
    folded = fold(text)
    words = tuple(_WORD.findall(folded))
    content = tuple(w for w in words if w not in stops)
    extra: list[str] = []
    for match in _IDENT.finditer(folded):
        token = match.group(0).translate(_ID_SEPARATORS)
        if not token.isdigit():
            extra.append(token)
    for match in _ACRONYM_NUMBER.finditer(_strip_accents_keep_case(text)):
        extra.append((match.group(1) + match.group(2)).casefold())
    for match in _PHONE.finditer(folded):
        extra.append(re.sub(r"\D", "", match.group(0)))
    extra.extend(_numbers(folded))
    extra.extend(_quarters(folded))
    quoted = tuple(q.strip() for q in _QUOTED.findall(folded) if q.strip())
    return Analysis(words, content, tuple(extra), quoted)


# Generic business/IT vocabulary in French, English and German, as folded prefixes separated
# by spaces (an entry ending in "=" must match the whole word, optionally plus a plural "s").
# It lets the vector space bridge languages and synonyms the way a multilingual embedding would.
_CONCEPTS: dict[str, str] = {
    "price": (
        "tarif prix price pricing cout cost preis kosten abonnement subscription redevance "
        "fee= gebuhr facturat"
    ),
    "plan": "plan= formule offre offer tier= paket edition",
    "availability": "disponibil availab uptime verfugbar sla=",
    "contract": "contrat contract vertrag agreement accord vereinbarung",
    "termination": "resili terminat cancel kundig kuendig beend",
    "notice": "preavis notice frist=",
    "duration": "duree duration laufzeit dauer",
    "month": "mois= month monat mensuel monatlich",
    "year": "annee annuel year annual jahr jahrlich exercice",
    "quarter": "trimestr quarter quartal",
    "revenue": "revenu revenue umsatz ventes sales= affaires erlos",
    "customer": "client customer kunde",
    "new": "nouveau nouvel new= neu= neue signe signed gewonnen",
    "staff": "effectif employe salarie staff headcount mitarbeit personnel personal equipe team",
    "expense": "charge depense expense ausgabe aufwand kosten",
    "security": "securit security sicherheit",
    "encryption": "chiffrement chiffre= encrypt verschlussel aes tls",
    "recovery": (
        "sauvegard backup restaur recover reprise wiederherstell sinistre disaster "
        "katastroph notfall pra= rpo rto"
    ),
    "test": "test exercice drill ubung",
    "hosting": "heberg hosting hosted datacenter centre rechenzentrum serveur server cloud",
    "certification": "certif zertifi audit iso soc=",
    "logs": "journa log= logs= protokoll",
    "retention": "conserv retention retain aufbewahr archiv",
    "deletion": "purge suppress delet losch effac",
    "export": "export",
    "support": "support assistance helpdesk hotline astreinte on-call bereitschaft service",
    "response_time": "delai response reponse antwort reaktion respond",
    "incident": "incident violation breach vorfall datenpann notifi meldung cnil",
    "maintenance": "maintenance wartung",
    "penalty": (
        "penalit penalty avoir= credit gutschrift compensation indemn entschadig strafe "
        "remise rabatt"
    ),
    "liability": "responsabil liabil haftung",
    "cap": "plafon cap= capped limit maximum grenz obergrenz hochst",
    "target": "objectif cible target goal ziel",
    "churn": "churn attrition abwanderung",
    "launch": "lancement lancer launch roadmap markteinf sortie release beta=",
    "integration": "integrat connect schnittstell",
    "office": "bureau office buro implant expansion ouverture filiale standort niederlass",
    "market": "marche= market markt",
    "forecast": "predict prevision forecast prognos vorhersag",
    "accuracy": "precision accuracy erreur error fehler mape genauigk",
    "user": "utilisateur user nutzer benutzer seat licence license",
    "refresh": "rafraich refresh actualis aktualisier update frequen",
    "downgrade": "downgrade retrograd herabstuf upgrade",
    "phone": "telephon phone telefon appel call= anruf numero",
    "guarantee": "garanti guarantee gewahrleist zusich engagement commit",
    "hour": "heure hour stunde",
    "day": "jour day= days= tag= tage",
    "week": "semaine week woche",
    "minute": "minute",
    "share": "part= parts= share anteil pourcentage percent prozent",
    "country": "pays country land= lander",
    "growth": "croissance growth wachstum hausse increase augment",
}


def _concept_tables() -> tuple[dict[str, str], dict[str, str], tuple[int, ...]]:
    exact: dict[str, str] = {}
    prefixes: dict[str, str] = {}
    for concept, entries in _CONCEPTS.items():
        for entry in entries.split():
            if entry.endswith("="):
                exact.setdefault(entry[:-1], concept)
            else:
                prefixes.setdefault(entry, concept)
    lengths = tuple(sorted({len(p) for p in prefixes}, reverse=True))
    return exact, prefixes, lengths


_CONCEPT_EXACT, _CONCEPT_PREFIXES, _CONCEPT_PREFIX_LENGTHS = _concept_tables()


@lru_cache(maxsize=1 << 16)
def concept_of(word: str) -> str | None:
    """The lexicon concept of a folded word (longest matching prefix wins), or None."""
    hit = _CONCEPT_EXACT.get(word)
    if hit is None and word.endswith("s"):
        hit = _CONCEPT_EXACT.get(word[:-1])
    if hit is not None:
        return hit
    for length in _CONCEPT_PREFIX_LENGTHS:
        if length <= len(word):
            hit = _CONCEPT_PREFIXES.get(word[:length])
            if hit is not None:
                return hit
    return None


@lru_cache(maxsize=1 << 16)
def _word_features(word: str) -> tuple[str, ...]:
    if word.isdigit():
        return ("x:" + word,)  # the same feature as a canonical number token
    features = ["w:" + (stem(word) or word)]
    concept = concept_of(word)
    if concept is not None:
        features.append("c:" + concept)
    if len(word) > 2:
        padded = f" {word} "
        features.extend(padded[i : i + n] for n in (3, 4) for i in range(len(padded) - n + 1))
    return tuple(features)


def vector_features(analysis: Analysis) -> Counter[str]:
    """The sparse features of one text: word stems, concepts and character 3/4-grams."""
    features: Counter[str] = Counter()
    for word in analysis.content:
        features.update(_word_features(word))
    features.update("x:" + token for token in analysis.extra)
    return features


# Relative weight of each feature family in the vector space (by key prefix).
_FAMILY_WEIGHT = {"w": 1.0, "c": 1.5, "x": 1.5}
_CHAR_WEIGHT = 0.25


def _family_weight(feature: str) -> float:
    if len(feature) > 2 and feature[1] == ":":
        return _FAMILY_WEIGHT.get(feature[0], _CHAR_WEIGHT)
    return _CHAR_WEIGHT
