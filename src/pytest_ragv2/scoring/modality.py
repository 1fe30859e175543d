"""Does an answer soften an obligation or a prohibition the gold states?

Pure functions, no I/O. A required claim whose text states a constraint with a **strong**
modality — an obligation, a prohibition or an exclusive permission ("must not be adjusted
or blocked", "nur in Zone 1 oder Zone 2 zulässig", "doit être approuvé") — is **weakened**
when a clause of the answer about the claim says it with a **weak** modality (a
recommendation or a hedge: "shouldn't normally be adjusted", "empfohlen wird die Aufstellung
in Zone 1 oder Zone 2", "il est conseillé de ...") and with no strong one. The protocol's
hard gate "silently weakens an explicit constraint" (``constraint_weakened``). A limit is
weakened too when a missed number claim ("50 exports planifiés par jour") is said to be
none ("des exports planifiés illimités", "unbegrenzt", "unlimited"; :func:`lifted`).

A sentence is **about** the claim when it holds one of the claim's values (any writing,
:func:`pytest_ragv2.scoring.claim_bounds.same_value`) or at least half of its content words
(words of four letters or more, modal words left out, compared by their first five
letters, accents ignored). The modal words are folded phrases of the three languages,
matched on word boundaries (:func:`pytest_ragv2.scoring.answer_text.find_phrase`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from pytest_ragv2.gold.schema import Claim
from pytest_ragv2.scoring.answer_text import find_phrase, fold, sentence_spans
from pytest_ragv2.scoring.values import read_values

# a cap said as a participle ("auf 3 % pro Jahr gedeckelt", "plafonnée à 3 %")
CAPS: tuple[str, ...] = (
    *("gedeckelt", "begrenzt auf", "beschrankt auf", "plafonne", "plafonnee", "plafonnes"),
    *("plafonnees", "capped", "limited to", "limite a", "limitee a", "limites a"),
    # a deadline or an upper bound ("dans un délai de 30 jours", "allowable up to 250 bar")
    *("dans un delai de", "within", "innerhalb", "binnen", "up to", "bis zu", "jusqu'a"),
)
STRONG: tuple[str, ...] = (
    # fr
    "doit",
    "doivent",
    "ne doit pas",
    "ne doivent pas",
    "interdit",
    "interdite",
    "obligatoire",
    "imperativement",
    "uniquement",
    "exclusivement",
    "seulement",
    "jamais",
    "ne ... que",
    "est tenu",
    "sont tenus",
    # de
    "muss",
    "mussen",
    "darf",
    "durfen",
    "darf nicht",
    "nur",
    "ausschliesslich",
    "zwingend",
    "verboten",
    "unzulassig",
    "zulassig",
    "nie",
    "niemals",
    "untersagt",
    "ist ... zu",
    # en
    "must",
    "must not",
    "shall",
    "only",
    "never",
    "prohibited",
    "mandatory",
    "required to",
    "is not allowed",
    "may not",
    # limits and conditions: a bound or a prerequisite is a constraint too (a limit word
    # keeps no modality: "sollte 3 % nicht überschreiten" is softened; see LIMITS)
    "au plus",
    "au maximum",
    "ne peut exceder",
    "ne peuvent exceder",
    "ne doit pas depasser",
    "non autorise",
    "non autorisee",
    "non admis",
    "non admise",
    "pas plus de",
    "exige",
    "suppose",
    "hochstens",
    "maximal",
    "nicht uberschreiten",
    "nicht mehr als",
    "nicht zugelassen",
    "voraus",
    "erforderlich",
    "at most",
    "no more than",
    "must not exceed",
    "not permitted",
    "not allowed",
    "requires",
    "au moins",
    "au minimum",
    "mindestens",
    "wenigstens",
    "at least",
    "no less than",
    *CAPS,
    # prohibitions and reservations said without a modal verb
    "cannot",
    "can't",
    "can not",
    "ne peut pas",
    "ne peuvent pas",
    "ne peut etre",
    "ne peuvent etre",
    "n'est pas autorise",
    "kann nicht",
    "konnen nicht",
    "durfen nicht",
    "keine",
    "reserve",
    "reservee",
    "reserves",
    "reservees",
    "reserved",
    "vorbehalten",
    "refused",
    "refuses",
    "refusees",
    "abgelehnt",
    "excluded",
    "exclu",
    "exclue",
    "exclus",
    "ausgeschlossen",
    "not offered",
    "not available",
    "n'est pas propose",
    "nicht angeboten",
)
# the strong phrases that only bound a value: beside a weak word they are softened with it
# ("die Erhöhung sollte in der Regel 3 % nicht überschreiten")
LIMITS: tuple[str, ...] = (
    *("au plus", "au maximum", "ne peut exceder", "ne peuvent exceder", "ne doit pas depasser"),
    *("pas plus de", "hochstens", "maximal", "nicht uberschreiten", "nicht mehr als"),
    *("at most", "no more than", "must not exceed", "au moins", "au minimum", "mindestens"),
    *("wenigstens", "at least", "no less than"),
    *CAPS,
)
WEAK: tuple[str, ...] = (
    # fr
    "devrait",
    "devraient",
    "conseille",
    "conseillee",
    "conseilles",
    "conseillees",
    "recommande",
    "recommandee",
    "recommandes",
    "recommandees",
    "de preference",
    "idealement",
    "si possible",
    "normalement",
    "en principe",
    "il vaut mieux",
    "eviter de",
    "autant que possible",
    # de
    "sollte",
    "sollten",
    "moglichst",
    "empfohlen",
    "empfohlene",
    "empfohlener",
    "empfiehlt",
    "idealerweise",
    "normalerweise",
    "in der regel",
    "besser",
    "vorzugsweise",
    "nach moglichkeit",
    # en
    "should",
    "shouldn't",
    "recommended",
    "ideally",
    "preferably",
    "if possible",
    "normally",
    "generally",
    "advisable",
    "best to",
    "good idea",
    "suggest",
    "recommend",
    "recommends",
    "discouraged",
    "not ideal",
    "in general",
    "in principle",
    "as a rule",
    "as a rule of thumb",
    "en general",
    "pas ideal",
    "deconseille",
    "deconseillee",
    "im allgemeinen",
    "nicht ideal",
    "abgeraten",
    "faustregel",
    # a restriction said of most cases only ("mainly consulted by the security team")
    "mainly",
    "mostly",
    "primarily",
    "chiefly",
    "usually",
    "typically",
    "principalement",
    "essentiellement",
    "majoritairement",
    "generalement",
    "habituellement",
    "en regle generale",
    "in erster linie",
    "hauptsachlich",
    "vorwiegend",
    "uberwiegend",
    "meistens",
    "grundsatzlich",
    "ublicherweise",
    "typischerweise",
)
# an exception or a permission the answer adds to a rule ("but your manager can approve
# moving them", "mais un report reste possible avec l'accord de votre manager", "können aber
# nach Absprache übertragen werden"): it weakens the rule even beside a strong word
EXCEPTION: tuple[str, ...] = (
    # fr
    "avec l'accord",
    "avec accord",
    "apres accord",
    "sur accord",
    "avec l'autorisation",
    "sur demande",
    "en cas de besoin",
    "au cas par cas",
    "reste possible",
    "restent possibles",
    "peut egalement",
    "peuvent egalement",
    "peut aussi",
    "peuvent aussi",
    "restent toleres",
    "reste tolere",
    "sont toleres",
    "exceptionnellement",
    "sauf accord",
    "sauf derogation",
    "a moins que",
    # de
    "nach absprache",
    "mit zustimmung",
    "mit genehmigung",
    "auf anfrage",
    "auf wunsch",
    "gegebenenfalls",
    "ausnahmsweise",
    "in ausnahmefallen",
    "ausnahmen sind moglich",
    "im einzelfall",
    "konnen aber",
    "kann aber",
    "durfen aber",
    "darf aber",
    "aber auch",
    "es sei denn",
    # en
    "on request",
    "upon request",
    "with approval",
    "with the approval",
    "can approve",
    "may approve",
    "can also",
    "may also",
    "may still",
    "can still",
    "can usually",
    "if needed",
    "when they need to",
    "case by case",
    "unless agreed",
    "exceptions can",
    "exceptions are possible",
    # an exception named by its case ("außer bei kurzen Aufenthalten", "except for short
    # stays"), a permission set against the rule ("können allerdings ... bestehen bleiben")
    "ausser bei",
    "ausser wenn",
    "ausser fur",
    "sauf pour",
    "sauf en cas",
    "sauf si",
    "except for",
    "except when",
    "except if",
    "konnen allerdings",
    "kann allerdings",
    "peuvent toutefois",
    "peut toutefois",
    "can however",
    "may however",
    # a permission on a condition the sources never set ("a bit more if your manager
    # agrees", "un accord ponctuel reste envisageable")
    "if your manager agrees",
    "if the manager agrees",
    "if your manager approves",
    "wenn die fuhrungskraft zustimmt",
    "si votre manager est d'accord",
    "a bit more",
    "slightly more",
    "etwas mehr",
    "un peu plus",
    "envisageable",
    "denkbar",
    "conceivable",
    # a tolerance the answer grants ("brief excursions above it are generally tolerated")
    "tolerated",
    "toleriert",
    "unkritisch",
)
# the words of a rule that itself provides for exceptions or permissions (then an answer's
# exception may be the rule's own)
_PERMISSIVE = (
    "exception",
    "exceptions",
    "derogation",
    "ausnahme",
    "ausnahmen",
    "possible",
    "moglich",
    "erlaubt",
    "allowed",
    "permitted",
    "autorise",
)
_MODAL_STRONG = tuple(phrase for phrase in STRONG if phrase not in LIMITS)
_WORDS = re.compile(r"[^\W\d_]{4,}")
_MODAL_WORDS = frozenset(
    word[:5] for phrase in (*STRONG, *WEAK, *EXCEPTION) for word in phrase.split() if len(word) >= 4
)


def _content(text: str) -> frozenset[str]:
    return frozenset(
        word[:5] for word in _WORDS.findall(fold(text)) if word[:5] not in _MODAL_WORDS
    )


# a clause: a sentence cut at a semicolon or a comma ("il faut utiliser les appareils de
# l'entreprise, le VPN est recommandé hors du bureau, l'écran doit être verrouillé")
_CLAUSE_CUT = re.compile(r"[;,]\s")


def _clause_spans(answer: str) -> list[tuple[int, int]]:
    spans = []
    for start, end in sentence_spans(answer):
        low = start
        for cut in _CLAUSE_CUT.finditer(answer, start, end):
            spans.append((low, cut.start()))
            low = cut.end()
        spans.append((low, end))
    return spans


# the weak words that hedge whatever they stand beside, a strong modal verb too ("doit en
# principe être réclamé", "muss in der Regel", "must normally"); not a weak modal verb
# ("you should note that it must ...")
HEDGES: tuple[str, ...] = (
    *("en principe", "normalement", "generalement", "en regle generale", "habituellement"),
    *("in der regel", "normalerweise", "grundsatzlich", "ublicherweise", "im allgemeinen"),
    *("normally", "generally", "usually", "typically", "as a rule", "in principle"),
)


def _strong_modality(sentence: str) -> bool:
    """Whether a weak word of ``sentence`` softens it: it holds no strong word but a
    limit's, or a hedge (which softens a strong word too)."""
    return find_phrase(sentence, _MODAL_STRONG) is None or find_phrase(sentence, HEDGES) is not None


def weakened(claim: Claim, answer: str, lang: str | None) -> str | None:
    """The sentence of ``answer`` that softens ``claim``'s constraint, or None (rules in
    the module docstring)."""
    if find_phrase(claim.text, STRONG) is None:
        return None
    from pytest_ragv2.scoring.claim_bounds import same_value

    # a typed claim's text says what its value is for ("la pression ne doit pas dépasser
    # 60 Pa"): its value anchors the sentences about it
    values = read_values(claim.value if claim.kind and claim.value else claim.text, lang)
    words = _content(claim.text)
    written = read_values(answer, lang) if values else ()
    exceptions = find_phrase(claim.text, _PERMISSIVE) is None
    for start, end in _clause_spans(answer):
        sentence = answer[start:end]
        softened = find_phrase(sentence, WEAK) is not None and _strong_modality(sentence)
        if not softened and not (exceptions and find_phrase(sentence, EXCEPTION) is not None):
            continue
        inside = [v for v in written if start <= v.span[0] < end]
        anchored = any(same_value(gold, value) for gold in values for value in inside)
        if anchored or (words and 2 * len(words & _content(sentence)) >= len(words)):
            return sentence
    return None


UNLIMITED: tuple[str, ...] = (
    "illimite",
    "illimites",
    "illimitee",
    "illimitees",
    "sans limite",
    "non limite",
    "unbegrenzt",
    "unbegrenzte",
    "unbegrenzten",
    "unlimitiert",
    "ohne limit",
    "ohne begrenzung",
    "unlimited",
    "no limit",
    "without limit",
    "no restriction",
    "no specific restriction",
    "keine einschrankung",
    "keine begrenzung",
    "aucune restriction",
    "aucune limite",
    "pas de limite",
)
_NUMERIC = frozenset({"quantity", "money", "percent", "count"})


def lifted(claim: Claim, answer: str) -> str | None:
    """The sentence of ``answer`` that says a missed limit is none: a typed number claim
    ("50 exports planifiés par jour") whose content words, half of them at least, stand in a
    sentence saying "unlimited" ("des exports planifiés illimités"). None when no sentence
    does."""
    if claim.kind not in _NUMERIC:
        return None
    words = _content(claim.text) - _content(claim.value or "")
    if not words:
        return None
    for start, end in sentence_spans(answer):
        sentence = answer[start:end]
        if find_phrase(sentence, UNLIMITED) is None:
            continue
        if 2 * len(words & _content(sentence)) >= len(words):
            return sentence
    return None


def _sentence_at(answer: str, span: tuple[int, int]) -> str:
    return next(
        (answer[start:end] for start, end in sentence_spans(answer) if start <= span[0] < end),
        answer[span[0] : span[1]],
    )


def weakened_claims(
    claims: Sequence[Claim], answer: str, lang: str | None, missed: Sequence[Claim] = ()
) -> list[tuple[Claim, str]]:
    """Each claim of ``claims`` whose constraint ``answer`` softens, and each limit of
    ``missed`` it lifts, with the sentence."""
    from pytest_ragv2.scoring.claim_bounds import opposite_bound

    found = []
    for claim in claims:
        sentence = weakened(claim, answer, lang)
        if sentence is None and claim in missed:
            sentence = lifted(claim, answer)
        if sentence is None and claim in missed:
            # a bound said the other way: a minimum restated as a maximum
            span = opposite_bound(claim, answer, lang)
            if span is not None:
                sentence = _sentence_at(answer, span)
        if sentence is not None:
            found.append((claim, sentence))
    return found
