"""Refusals and their company, in wordings met in validation9 and validation10 (issue 24),
each written here in three languages apart from them:

- a source that "does not know" or "does not go into" a thing, the object put first ("Einen
  Satz für den TVK 350 kennt die Liste nicht"), and "I've got nothing on it";
- "impossible d'avancer un chiffre": nothing can be put forward;
- naming who could answer instead ("People & Culture would be the ones to ask") is a
  pointer, no fact given after a refusal;
- variants listed by their suffixes ("-08, -10 et -14") are labels, not figures.
"""

from __future__ import annotations

import pytest

from pytest_ragv2.scoring.phrases import DEFAULT_REFUSAL_PHRASES
from pytest_ragv2.scoring.refusal import read_refusal
from tests.scoring.test_answer_scoring import item, kinds
from tests.scoring.test_answer_verdicts import gold, scored


@pytest.mark.parametrize(
    ("lang", "answer"),
    [
        ("de", "Einen Wartungssatz für den TVK 350 kennt die Liste nicht."),
        ("en", "I've got nothing on that: the notes don't go into the deck's height."),
        ("fr", "Ce chiffre ne figure pas dans les documents ; impossible d'avancer un débit."),
        ("en", "The planning notes don't go into who will build it."),
        ("fr", "Impossible, donc, d'avancer un prix pour ce modèle."),
    ],
)
def test_refusals_in_these_words(lang: str, answer: str) -> None:
    reading = read_refusal(answer, lang, DEFAULT_REFUSAL_PHRASES)
    assert reading.verdict == "refuses", reading


@pytest.mark.parametrize(
    ("lang", "answer"),
    [
        ("en", "The policy doesn't say. People & Culture would be the ones to ask."),
        ("fr", "Le document ne le précise pas. Le service RH est le mieux placé pour répondre."),
        ("de", "Die Unterlagen nennen das nicht. Die Personalabteilung kann Ihnen das sagen."),
    ],
)
def test_naming_who_could_answer_is_no_guess(lang: str, answer: str) -> None:
    reading = read_refusal(answer, lang, DEFAULT_REFUSAL_PHRASES)
    assert reading.verdict == "refuses", reading
    assert [clause.role for clause in reading.clauses] == ["refusal", "courtesy"]


@pytest.mark.parametrize(
    ("lang", "answer"),
    [
        ("de", "Die Liste kennt den TVK 350 gut: sie nennt seinen Satz WS-350-4."),
        ("en", "The notes go into the deck's height: 1.2 m."),
    ],
)
def test_the_same_verbs_unnegated_state_facts(lang: str, answer: str) -> None:
    assert read_refusal(answer, lang, DEFAULT_REFUSAL_PHRASES).verdict != "refuses"


SHEET = item(
    "datenblatt-tvs-75",
    "pdf",
    "TVS 75-08: 13,4 m³/min. TVS 75-10: 12,1 m³/min. TVS 75-14: 9,8 m³/min.",
)


def test_variant_suffixes_are_labels_not_unsupported_figures() -> None:
    case = gold("SUFFIX", "Quel est le débit du TVS 75-13 ?", "fr")
    score = scored(
        case,
        "fr",
        "Cette référence ne figure pas dans ce qu'on m'a fourni : pour le TVS 75, je ne vois "
        "que les variantes -08, -10 et -14. Impossible, donc, d'avancer un débit.",
        SHEET,
    )
    assert kinds(score) == []
    assert score.verdict == "PASS", score.rubric


@pytest.mark.parametrize(
    ("lang", "answer"),
    [
        (
            "en",
            "I couldn't find a rule for that in the documents. In practice, though, Nimbus "
            "applies its usual terms, so you can reasonably count on 5 working days' notice.",
        ),
        (
            "fr",
            "Les documents ne le précisent pas. En pratique, Nimbus applique ses conditions "
            "habituelles : comptez raisonnablement sur 5 jours ouvrés de préavis.",
        ),
        (
            "de",
            "In den Unterlagen steht dazu nichts. In der Praxis gilt aber ein Vorlauf von 5 "
            "Werktagen.",
        ),
    ],
)
def test_what_is_done_in_practice_after_a_refusal_is_a_guess(lang: str, answer: str) -> None:
    reading = read_refusal(answer, lang, DEFAULT_REFUSAL_PHRASES)
    assert reading.verdict == "answers"
    assert reading.guessed


@pytest.mark.parametrize(
    ("lang", "answer"),
    [
        ("de", "Der TVK 220-C ist ohne Weiteres für Getränke geeignet."),
        ("de", "Die Anlage ist ohne Zweifel zugelassen."),
        ("en", "The TVK 220-C is without a doubt approved for beverages."),
        ("fr", "Le TVK 220-C est sans doute homologué pour les boissons."),
        ("fr", "Les connecteurs natifs sont inclus sans supplément dans tous les plans."),
        ("de", "Die Konnektoren sind ohne Aufpreis in allen Plänen enthalten."),
        ("en", "The native connectors are included without extra charge in every plan."),
    ],
)
def test_a_negation_word_in_an_idiom_negates_nothing(lang: str, answer: str) -> None:
    reading = read_refusal(answer, lang, DEFAULT_REFUSAL_PHRASES)
    assert not reading.refusals, reading


@pytest.mark.parametrize(
    ("lang", "answer"),
    [
        (
            "fr",
            "Les documents ne disent rien de la garantie du X3 : la roadmap parle du X3 "
            "(450 kg, pilotes au T2 2027), mais pas de sa garantie.",
        ),
        (
            "fr",
            "Là, je sors de ce que couvrent mes sources : la feuille de route parle du X3, "
            "mais pas de sa garantie.",
        ),
    ],
)
def test_what_a_roadmap_talks_about_is_what_the_sources_hold(lang: str, answer: str) -> None:
    reading = read_refusal(answer, lang, DEFAULT_REFUSAL_PHRASES)
    assert reading.verdict == "refuses", reading
    assert "fact" not in [clause.role for clause in reading.clauses]


@pytest.mark.parametrize(
    ("lang", "answer"),
    [
        (
            "fr",
            "Les documents ne disent rien de la garantie du X3. Pour le X3, les notes de "
            "roadmap ne donnent que la charge utile visée (450 kg).",
        ),
        (
            "en",
            "The documents say nothing about the X3 warranty. For the X3, the roadmap notes "
            "only give the target payload (450 kg).",
        ),
        (
            "de",
            "Zur Garantie des X3 steht in den Unterlagen nichts. Für den X3, die "
            "Roadmap-Notizen nennen nur die Ziel-Nutzlast (450 kg).",
        ),
    ],
)
def test_a_source_after_what_the_clause_is_about(lang: str, answer: str) -> None:
    reading = read_refusal(answer, lang, DEFAULT_REFUSAL_PHRASES)
    assert reading.verdict == "refuses", reading
    assert [clause.role for clause in reading.clauses] == ["refusal", "source"]
