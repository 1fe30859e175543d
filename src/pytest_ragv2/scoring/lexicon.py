"""What a language's refusal lexicon holds, field by field (the words themselves are in
``refusal_lexicon_*.py``; :mod:`pytest_ragv2.scoring.refusal_lexicon` gathers them)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Lexicon:
    """The words of one language, folded; a word ending in ``*`` is a prefix (a stem)."""

    negations: frozenset[str]
    absence: tuple[str, ...]  # "manque", "fehlt", "missing": with a source or information word
    silence: tuple[str, ...]  # "muet", "schweigt", "silent": with a source as subject
    exceed: tuple[str, ...]  # "dépasse", "übersteigt", "beyond": followed by a source
    exceed_after: tuple[str, ...]  # ... or after it: "über die Unterlagen hinaus"
    determiners: frozenset[str]  # negative determiners before an information word
    text_report: tuple[str, ...]  # inherently about a text: refuses when negated
    text_report_phrases: tuple[str, ...]  # the same, of several words ("fait etat")
    discovery: tuple[str, ...]  # found, identified: the first person or a source needed
    knowledge: tuple[str, ...]  # know, confirm, say: the first person (or impersonal) needed
    known_states: tuple[str, ...]  # "connu", "bekannt", "known": agentless, refuse negated
    weak_report: tuple[str, ...]  # contain, give, have: a source or information object needed
    sources: tuple[str, ...]
    carriers: tuple[str, ...]  # nouns that are sources once given: "pièces transmises"
    given: tuple[str, ...]  # participles of giving: "transmises", "provided", "übermittelt"
    given_phrases: tuple[str, ...]  # what the assistant was given or knows, as a relative
    locatives: frozenset[str]  # "dans", "in", "from": a source as the place of the clause
    information: tuple[str, ...]  # about a question: information, details, Angaben
    data_nouns: tuple[str, ...]  # about the world as much as a question: data, figure
    availability: tuple[str, ...]  # "disponible", "vorliegen", "available": data made information
    data_fates: tuple[str, ...]  # what happens to data: "aucune donnée n'est perdue"
    compatibility: tuple[str, ...]
    purpose: tuple[str, ...]  # compatibility words that need "for": "prévu pour"
    purpose_prepositions: frozenset[str]
    modals: frozenset[str]  # "must not be used with": a prohibition ...
    use_verbs: tuple[str, ...]  # ... of a use ...
    with_words: frozenset[str]  # ... with something (a medium): an incompatibility
    splitters: frozenset[str]  # words that open a new clause ("mais", "only")
    restrictions: frozenset[str]  # splitters that restrict rather than contrast ("only")
    labels: tuple[str, ...]  # synthetic-data labels: "keine bestätigten Projektdaten"
    attributions: frozenset[str]  # "laut Datenblatt": a source cited, not one that is silent
    self_refusals: tuple[str, ...]  # word sequences that refuse by themselves ("j'ignore")
    incompatible: tuple[str, ...]  # incompatibility words without a negation ("ungeeignet")
    access: tuple[str, ...]  # "I have no access to ...": a refusal in the first person
    first_person: frozenset[str]  # any first person, singular or plural
    first_singular: frozenset[str]  # the assistant itself (a "we" may be the company)
    impersonal: frozenset[str]  # "on", "man", "sich", "impossible": no agent named
    passive: frozenset[str]  # "be", "être", "werden": with a modal, an impersonal clause
    possibility: frozenset[str]  # "can", "peut", "kann", "lässt"
    blockers: frozenset[str]  # complementizers: a negation past one scopes over another clause
    third_pronouns: frozenset[str]  # "it", "il", "es": a subject carried from the clause before
    hedges: tuple[str, ...]  # "sure", "sûr", "sicher": a hedge, no refusal
    hedge_phrases: tuple[str, ...]
    courtesy: tuple[str, ...]  # apologies and greetings, alone in a clause
    redirects: tuple[str, ...]  # "contact", "contacter", "wenden": with the person addressed
    addressed: frozenset[str]  # "vous", "you", "Sie", "please": the person addressed
    guesses: tuple[str, ...]  # "probablement", "probably": a value given as a guess
    scoping: tuple[str, ...]  # "s'applique", "gilt", "applies": a fact set apart
    scoping_phrases: tuple[str, ...]
    compounds: bool = False  # German: a source or information word may end a compound
    # documents that are also things ("the certificate", "le contrat"): sources only as the
    # subject or object of a negated containment verb ("die Bescheinigung enthält kein
    # Ablaufdatum"), not of "have" ("le certificat n'a pas de date d'expiration": a fact)
    documents: tuple[str, ...] = ()
    containment: tuple[str, ...] = ()
    # what a document stipulates ("elle prévoit une indemnité", "it provides"): said of a
    # document, what the sources hold; negated, a fact about the thing, never a refusal
    provisions: tuple[str, ...] = ()
    # a negation that closes a clause negates its verb wherever it stands (German "nicht")
    final_negations: frozenset[str] = frozenset()
