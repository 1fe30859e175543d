"""A refusal is about the sources or the assistant's knowledge (issue 24).

Written before the detector was changed: the issue's own examples, each judged, then
generalisation sentences in three languages (half refusals, half negated statements about
the world) worded apart from the examples and from the development set of
``test_answer_refusal.py``, and the whole-answer reading (:func:`read_refusal`).
"""

from __future__ import annotations

import pytest

from pytest_ragv2.scoring.phrases import DEFAULT_REFUSAL_PHRASES
from pytest_ragv2.scoring.refusal import find_refusal, read_refusal

NO_PHRASES: dict[str, tuple[str, ...]] = {"fr": (), "de": (), "en": ()}


# --------------------------------------------------------------------- the examples

REASSURANCES = [
    (
        "fr",
        "Non, aucune vulnérabilité critique n'a été trouvée lors du dernier audit de sécurité.",
    ),
    (
        "de",
        "Nein, bisher sind keine Kundendaten durch einen Sicherheitsvorfall kompromittiert worden.",
    ),
    (
        "en",
        "The latest penetration test was carried out by Synacktiv in September 2025; no "
        "critical vulnerability was found.",
    ),
]


@pytest.mark.parametrize(("lang", "text"), REASSURANCES)
def test_a_fabricated_reassurance_is_no_refusal(lang: str, text: str) -> None:
    assert find_refusal(text, lang, DEFAULT_REFUSAL_PHRASES) is None
    reading = read_refusal(text, lang, DEFAULT_REFUSAL_PHRASES)
    assert reading.verdict == "answers"
    assert reading.refusals == ()
    assert reading.facts


UNLISTED = [
    (
        "fr",
        "Le tarif de Cumulus m'échappe : il n'est écrit dans aucune des pièces transmises.",
    ),
    ("en", "That goes past what I was given."),
]


@pytest.mark.parametrize(("lang", "text"), UNLISTED)
def test_a_refusal_in_unlisted_words_is_found(lang: str, text: str) -> None:
    assert find_refusal(text, lang, NO_PHRASES) is not None
    reading = read_refusal(text, lang, NO_PHRASES)
    assert reading.verdict == "refuses"
    assert reading.facts == ()


def test_the_cumulus_refusal_refuses_in_both_its_clauses() -> None:
    text = "Le tarif de Cumulus m'échappe : il n'est écrit dans aucune des pièces transmises."
    reading = read_refusal(text, "fr", NO_PHRASES)
    assert len(reading.refusals) == 2


def test_a_nearby_fact_set_apart_keeps_the_refusal() -> None:
    text = (
        "Dazu steht nichts in den Unterlagen; die Frist von 90 Tagen gilt nur für den "
        "Meridia-Vertrag."
    )
    assert find_refusal(text, "de", DEFAULT_REFUSAL_PHRASES) is not None
    reading = read_refusal(text, "de", DEFAULT_REFUSAL_PHRASES)
    assert reading.verdict == "refuses"
    assert len(reading.refusals) == 1
    assert len(reading.set_apart) == 1
    start, end = reading.set_apart[0]
    assert text[start:end].rstrip(".") == "die Frist von 90 Tagen gilt nur für den Meridia-Vertrag"


# ----------------------------------------------------------------- generalisation, by clause

GENERAL_REFUSALS = [
    ("fr", "Les pièces que vous m'avez transmises ne disent rien du délai de rétractation."),
    ("fr", "Je ne suis pas en mesure d'indiquer le nombre de sites certifiés ISO 27001."),
    ("fr", "Le montant de la franchise ne figure dans aucun des documents mis à ma disposition."),
    ("fr", "Cette question va au-delà de ce qui m'a été communiqué."),
    ("fr", "Je n'ai relevé aucune information sur l'astreinte du week-end dans les extraits."),
    (
        "fr",
        "Impossible de vous confirmer la date de migration : les sources fournies n'en "
        "parlent pas.",
    ),
    ("de", "In den übermittelten Unterlagen taucht die Kündigungsfrist für Cumulus nicht auf."),
    ("de", "Das kann ich Ihnen anhand der bereitgestellten Dokumente nicht beantworten."),
    ("de", "Mir liegen zu den Wartungskosten des TVK 350 keine Informationen vor."),
    ("de", "Ob der Vertrag eine Verlängerungsoption enthält, geht aus dem Material nicht hervor."),
    ("de", "Hierüber weiß ich leider nichts."),
    ("de", "Diese Frage übersteigt das, was mir zur Verfügung gestellt wurde."),
    ("en", "Nothing in the files you shared covers the on-call rota."),
    ("en", "I wasn't able to pin down the renewal date from the excerpts."),
    ("en", "The contract value isn't recorded anywhere in the material provided to me."),
    ("en", "I can't say which firmware the RX-9 ships with."),
    ("en", "That question lies outside the information I was given."),
    ("en", "I have no details on the Cumulus pricing."),
]

GENERAL_WORLD_STATEMENTS = [
    ("fr", "Non, aucune donnée client n'a été exfiltrée lors de l'incident de mars."),
    ("fr", "Aucun défaut n'a été constaté lors de la dernière inspection du TVK 220."),
    ("fr", "Le contrat ne prévoit aucune pénalité de retard au-delà de 10 %."),
    ("fr", "Nous n'avons jamais subi de panne de plus de quatre heures en 2025."),
    ("fr", "Le serveur n'a pas été piraté ; les journaux ne montrent aucune connexion suspecte."),
    ("fr", "Le TVK 110 ne nécessite aucun entretien particulier avant 4 000 heures."),
    ("de", "Bei der letzten Prüfung wurden keine Mängel festgestellt."),
    ("de", "Nein, es gab im vergangenen Jahr keinen Datenverlust."),
    ("de", "Die Kundendaten wurden zu keinem Zeitpunkt an Dritte weitergegeben."),
    ("de", "Der Hersteller hat den Liefertermin noch nicht bestätigt."),
    ("de", "Ein Angriff auf die Server wurde nicht entdeckt."),
    ("de", "Der TVK 220 braucht keinen separaten Ölabscheider, laut Handbuch ist er integriert."),
    ("en", "No, there has been no data breach affecting customer accounts."),
    ("en", "No anomalies were detected during the March audit."),
    ("en", "The supplier has not confirmed the delivery date yet."),
    ("en", "The TVK 350 does not require a separate dryer; the datasheet lists it as integrated."),
    ("en", "None of our customers reported data loss after the update."),
    ("en", "The auditors found no critical issues in the 2025 review."),
]


@pytest.mark.parametrize(("lang", "text"), GENERAL_REFUSALS)
def test_a_refusal_about_the_sources_or_the_assistant_is_found(lang: str, text: str) -> None:
    assert find_refusal(text, lang, NO_PHRASES) is not None, text
    assert read_refusal(text, lang, DEFAULT_REFUSAL_PHRASES).verdict == "refuses", text


@pytest.mark.parametrize(("lang", "text"), GENERAL_WORLD_STATEMENTS)
def test_a_negated_statement_about_the_world_is_no_refusal(lang: str, text: str) -> None:
    assert find_refusal(text, lang, DEFAULT_REFUSAL_PHRASES) is None, text
    assert read_refusal(text, lang, DEFAULT_REFUSAL_PHRASES).verdict == "answers", text


# -------------------------------------------------------------------- the whole-answer reading

READINGS = [
    # a refusal with courtesy around it
    (
        "fr",
        "Désolé, je n'ai rien trouvé à ce sujet dans les documents. Je vous conseille de "
        "contacter le support de Tarnwald.",
        "refuses",
    ),
    ("en", "Sorry, I don't know. Please contact your account manager.", "refuses"),
    # an answer with a caveat after it
    (
        "fr",
        "Le préavis est de 90 jours ; le montant des pénalités n'est pas précisé.",
        "answers",
    ),
    (
        "de",
        "Die Garantie beträgt 24 Monate. Den Preis der Verlängerung nennen die Unterlagen nicht.",
        "answers",
    ),
    # a hedge before a full answer is an answer
    (
        "en",
        "I'm not completely sure, but the contract sets the notice period at 90 days.",
        "answers",
    ),
    # a guess after a refusal is an answer
    (
        "en",
        "The documents don't give the X2's price, but it is probably around €900.",
        "answers",
    ),
    # what the sources do hold, next to what they do not
    (
        "en",
        "The excerpts describe the installation steps but say nothing about the warranty.",
        "refuses",
    ),
    # an incompatibility and its alternative
    ("en", "The TVS 75 is not rated for hydrogen; use the TVM 30-H2 instead.", "refuses"),
    # set apart, three languages
    (
        "fr",
        "Je ne trouve pas ce délai dans les documents ; le délai de 30 jours concerne "
        "uniquement le plan Starter.",
        "refuses",
    ),
    (
        "en",
        "The documents don't state the Cumulus notice period. The 90-day period only applies "
        "to the Meridia contract.",
        "refuses",
    ),
    # a fact next to a refusal, relation unknown
    (
        "fr",
        "Les documents ne donnent pas le prix de l'abonnement. Le support coûte 90 € HT "
        "de l'heure.",
        "unclear",
    ),
    # ... known: about another named thing, cited, or set apart by what follows
    ("fr", "Les documents ne donnent pas le prix du X2. Le X1 coûte 900 € HT.", "refuses"),
    (
        "en",
        "The documents don't give the subscription price. Support costs €90 an hour [2].",
        "refuses",
    ),
    (
        "fr",
        "Cette information ne figure pas dans les documents. Le contrat Meridia prévoit un "
        "préavis de 90 jours, mais il ne s'agit pas du contrat Cumulus.",
        "refuses",
    ),
    # a fact cited first, then a refusal of what was asked
    (
        "de",
        "Die Kündigungsfrist beträgt 90 Tage [1]. Ob eine Vertragsstrafe anfällt, geht aus den "
        "Unterlagen nicht hervor.",
        "refuses",
    ),
    ("en", "Hmm, good question!", "unclear"),
    # a hedge alone: no refusal, no fact
    ("fr", "Je ne suis pas sûr.", "unclear"),
    ("de", "Da bin ich mir nicht ganz sicher.", "unclear"),
]


@pytest.mark.parametrize(("lang", "text", "verdict"), READINGS)
def test_the_whole_answer_is_read(lang: str, text: str, verdict: str) -> None:
    reading = read_refusal(text, lang, DEFAULT_REFUSAL_PHRASES)
    assert reading.verdict == verdict, (text, reading)


def test_the_reading_names_its_clauses_by_their_span_in_the_answer() -> None:
    text = "The documents don't give the X2's price. The X2 costs €900."
    reading = read_refusal(text, "en", DEFAULT_REFUSAL_PHRASES)
    (refusal,) = reading.refusals
    (fact,) = reading.facts
    assert text[refusal.start : refusal.end].startswith("The documents don't give")
    assert text[fact.start : fact.end].startswith("The X2 costs")
    assert refusal.role == "refusal"
    assert fact.role == "fact"


def test_an_empty_answer_reads_unclear_with_no_clause() -> None:
    reading = read_refusal("   ", "en", DEFAULT_REFUSAL_PHRASES)
    assert reading.verdict == "unclear"
    assert reading.clauses == ()


def test_a_set_apart_clause_without_a_refusal_is_a_plain_fact() -> None:
    reading = read_refusal(
        "The 90-day period only applies to the Meridia contract.", "en", DEFAULT_REFUSAL_PHRASES
    )
    assert reading.verdict == "answers"
    assert reading.set_apart == ()


def test_a_refusal_in_another_language_than_the_prompt_is_read() -> None:
    reading = read_refusal("Dazu habe ich in den Unterlagen nichts gefunden.", "en", NO_PHRASES)
    assert reading.verdict == "refuses"
    assert reading.refusals[0].language == "de"


@pytest.mark.parametrize(
    ("lang", "text"),
    [
        ("de", "Der Fehler wurde bei der Inspektion nicht gefunden."),
        ("en", "The technician could not find the leak."),
        ("fr", "Le technicien n'est pas en mesure de fournir une date d'intervention."),
    ],
)
def test_a_default_phrase_of_finding_needs_the_one_who_looked(lang: str, text: str) -> None:
    """The default phrases hold no finding without its finder: the constructions read a
    finding as a refusal only when the assistant looked, or looked in the sources."""
    assert find_refusal(text, lang, DEFAULT_REFUSAL_PHRASES) is None


@pytest.mark.parametrize(
    ("lang", "text"),
    [
        ("de", "Ich habe dazu nichts gefunden."),
        ("en", "I could not find the notice period."),
        ("fr", "Je ne suis pas en mesure de vous indiquer ce délai."),
    ],
)
def test_a_finding_by_the_assistant_still_refuses(lang: str, text: str) -> None:
    assert find_refusal(text, lang, DEFAULT_REFUSAL_PHRASES) is not None
