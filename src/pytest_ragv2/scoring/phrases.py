"""Default phrase lists of the answer scorers, per language (configurable in the options).

Matched with :func:`pytest_ragv2.scoring.answer_text.find_phrase`: accent-insensitive,
casefolded, typographic apostrophes folded. Refusal phrases must match whole words; synthetic
labels are stems ("synthetisch" finds "synthetische", "synthetischer").

A refusal phrase says the answer is not given: the fact is absent from the documents, the
model does not know, or the request is incompatible (the "incompatible medium" kind of
safe no-answer: "nicht für Wasserstoff zugelassen"). " ... " inside a phrase stands for up to
four words: "nicht ... zugelassen" finds "nicht für Wasserstoff zugelassen".

The phrases are additions to the constructions of :mod:`pytest_ragv2.scoring.refusal`, which
recognise a refusal worded outside these lists. Phrases that also state ordinary facts ("not
available" in "not available in 400 V", "ne contient pas", "nicht enthalten", "nicht
vorgesehen", "no information" in "no information is lost") are left to the constructions,
which read them only next to a source or information word. So are phrases of finding
without the one who looked ("nicht gefunden", "could not find", "impossible de trouver",
"pas en mesure de"): "der Fehler wurde nicht gefunden" and "the technician could not find
the leak" are events; the constructions read a finding as a refusal only when the assistant
looked ("ich habe nichts gefunden", "I could not find") or looked in the sources.
"""

from __future__ import annotations

from collections.abc import Mapping

DEFAULT_REFUSAL_PHRASES: Mapping[str, tuple[str, ...]] = {
    "fr": (
        "ne figure pas",
        "ne figurent pas",
        "pas dans les documents",
        "aucune mention",
        "n'est pas mentionne",
        "n'est pas mentionnee",
        "ne mentionne pas",
        "ne mentionnent pas",
        "n'est pas indique",
        "n'est pas indiquee",
        "n'est pas precise",
        "n'est pas precisee",
        "ne precise pas",
        "ne precisent pas",
        "ne disposons pas",
        "je ne sais pas",
        "je n'ai pas trouve",
        "je ne trouve pas",
        "n'est pas compatible",
        "n'est pas adapte",
        "n'est pas adaptee",
        "ne convient pas",
        "n'est pas homologue",
        "n'est pas autorise",
        "n'est pas approuve",
        "n'est pas concu",
        "n'est pas concue",
        "n'est pas ... homologue",
        "n'est pas ... autorise",
        "n'est pas ... adapte",
    ),
    "de": (
        "nicht in den dokumenten",
        "nicht in den unterlagen",
        "keine angabe",
        "keine angaben",
        "nicht angegeben",
        "nicht genannt",
        "nicht erwahnt",
        "nicht aufgefuhrt",
        "nennt keinen",
        "nennt keine",
        "nennen keinen",
        "nennen keine",
        "weiss ich nicht",
        "weiss nicht",
        "ist mir nicht bekannt",
        "nicht zugelassen",
        "nicht geeignet",
        "nicht kompatibel",
        "nicht freigegeben",
        "nicht ... zugelassen",
        "nicht ... geeignet",
        "nicht ... freigegeben",
    ),
    "en": (
        "not in the documents",
        "not in the provided documents",
        "not in the knowledge base",
        "not mentioned",
        "not specified",
        "not stated",
        "not listed",
        "does not mention",
        "doesn't mention",
        "do not mention",
        "don't mention",
        "does not specify",
        "doesn't specify",
        "do not specify",
        "don't specify",
        "don't know",
        "do not know",
        "not approved",
        "not suitable",
        "not compatible",
        "not designed for",
        "cannot recommend",
        "can't recommend",
        "not ... approved",
        "not ... suitable",
        "not ... designed for",
    ),
}

DEFAULT_SYNTHETIC_LABELS: Mapping[str, tuple[str, ...]] = {
    "fr": (
        "synthetique",
        "donnees de demonstration",
        "donnees de demo",
        "fictif",
        "fictive",
        "non confirme",
        "non reel",
    ),
    "de": (
        "synthetisch",
        "demodaten",
        "demo-daten",
        "beispieldaten",
        "fiktiv",
        "nicht bestatigt",
        "nicht real",
    ),
    "en": (
        "synthetic",
        "demo data",
        "demonstration data",
        "sample data",
        "fictional",
        "fictitious",
        "not confirmed",
        "not real",
    ),
}

# Statements that the sources disagree. A required claim that says so ("die beiden Quellen
# widersprechen sich", "Widerspruch") is stated by any of them in the answer, in any of the
# three languages (folded, matched inside words: "widersprüchlich", "conflicting").
CONFLICT_PHRASES: Mapping[str, tuple[str, ...]] = {
    "fr": (
        "contradi",
        "se contredisent",
        "divergen",
        "incoheren",
        "discordan",
        "ne concordent pas",
        "ne coincident pas",
    ),
    "de": (
        "widersprech",
        "widerspruch",
        "nicht eindeutig",
        "uneinheitlich",
        "stimmen nicht uberein",
        "weichen voneinander ab",
        "abweichende angaben",
        "unterschiedliche angaben",
    ),
    "en": (
        "contradict",
        "conflict",
        "inconsisten",
        "disagree",
        "discrepanc",
        "do not match",
        "don't match",
    ),
}
