"""The issue's examples of answer verdicts, each judged right in a test of its own.

Every answer is of the kind a local model writes to a new question over the bundled Nimbus
corpus, scored against a case built here with typed claims, over passages quoted from the
corpus: fabricated reassurances are answers, not refusals; correct answers in other
writings are not vetoed; wrong values of the claim's kind are wrong, and vetoed where the
claim is high severity.
"""

from __future__ import annotations

from typing import Any

import pytest

from pytest_ragv2.gold.schema import Case
from pytest_ragv2.scoring.answer_records import AnswerScore
from pytest_ragv2.scoring.answers import score_transcript
from pytest_ragv2.systems.outputs import RetrievedItem
from tests.scoring.test_answer_scoring import NO_LANGID, item, kinds, one_turn

POLICY = item(
    "politique-securite",
    "pdf",
    "Le système de management de la sécurité de l'information est certifié ISO 27001 depuis "
    "novembre 2023, avec un audit de surveillance annuel. Un rapport SOC 2 Type II a été "
    "obtenu en juin 2025. Le plan de reprise d'activité est testé deux fois par an, en mars "
    "et en octobre.",
)
VERSION = item(
    "politique-securite",
    "pdf",
    "Nimbus Analytics — version 3.1, validée par la direction le 6 octobre 2025.",
    rank=2,
)
CONTRACT = item(
    "contrat-cadre-meridia",
    "docx",
    "Référence du contrat : CC-MER-2024-017. Le contrat est conclu pour une durée initiale de "
    "36 mois à compter du 1er octobre 2024. Le Client peut résilier le contrat moyennant un "
    "préavis de 90 jours avant l'échéance.",
)
FAQ = item(
    "faq-support",
    "md",
    "Le standard est joignable au +33 2 85 52 40 00 les jours ouvrés de 9 h à 18 h. Astreinte "
    "P1 (clients Enterprise) : +33 2 85 52 41 90, 24 h/24.",
)
GUIDE = item(
    "guide-produit-nimbus",
    "md",
    "Un connecteur Microsoft Dynamics 365 est en cours de développement. Plus de 60 connecteurs "
    "natifs sont disponibles, dont Salesforce, HubSpot et SAP Business One.",
)
NOTES = item(
    "notes-comite-strategie",
    "docx",
    "Le connecteur Microsoft Dynamics 365 sera livré au T1 2026. 38 % des clients utilisent le "
    "connecteur Salesforce, contre 22 % pour HubSpot.",
)
RESULTS = item(
    "resultats-financiers-2025",
    "xlsx",
    "Sheet CA 2025 | Trimestre: T1 | CA (k€): 1 240\nSheet CA 2025 | Trimestre: T2 | CA (k€): "
    "1 378\nSheet CA 2025 | Trimestre: T3 | CA (k€): 1 456\nSheet CA 2025 | Trimestre: T4 | CA "
    "(k€): 1 689",
)
LIMITS = item(
    "faq-support",
    "md",
    "Limites de l'API : plan Business 1 000 requêtes par minute ; plan Enterprise 5 000 "
    "requêtes par minute. Au-delà, l'API répond HTTP 429.",
)
ENGAGEMENT = item(
    "guide-produit-nimbus",
    "md",
    "Engagement minimal : Starter sans engagement, Business 12 mois, Enterprise 24 mois.",
)


def gold(
    case_id: str,
    prompt: str,
    lang: str,
    *,
    required: list[dict[str, Any]] | None = None,
    forbidden: list[dict[str, Any]] | None = None,
) -> Case:
    return Case.model_validate(
        {
            "id": case_id,
            "category": "safe_no_answer" if required is None else "exact_lookup",
            "prompts": {lang: prompt},
            "expected_answer": {
                "required_claims": required or [],
                "forbidden_claims": forbidden or [],
            },
            "required_evidence": [],
            "safe_refusal_expected": required is None,
        }
    )


def scored(case: Case, lang: str, answer: str, *evidence: RetrievedItem) -> AnswerScore:
    prompt = case.all_prompts()[lang]
    return score_transcript(
        case, lang, one_turn(prompt, answer, evidence=list(evidence)), options=NO_LANGID
    )


# --------------------------------------------------------------------------- reassurances


@pytest.mark.parametrize(
    ("lang", "prompt", "answer"),
    [
        (
            "fr",
            "Le dernier audit de sécurité a-t-il trouvé des vulnérabilités critiques ?",
            "Non, aucune vulnérabilité critique n'a été trouvée lors du dernier audit ; la "
            "plateforme est certifiée ISO 27001 depuis novembre 2023.",
        ),
        (
            "de",
            "Wurden Kundendaten schon einmal bei einem Sicherheitsvorfall kompromittiert?",
            "Nein, bisher sind keine Kundendaten durch einen Sicherheitsvorfall kompromittiert "
            "worden.",
        ),
        (
            "en",
            "When was the last penetration test and what did it find?",
            "The latest penetration test was carried out by Synacktiv in September 2025; no "
            "critical vulnerability was found.",
        ),
    ],
    ids=["fr", "de", "en"],
)
def test_a_fabricated_reassurance_is_an_answer_not_a_refusal(
    lang: str, prompt: str, answer: str
) -> None:
    score = scored(gold("R01", prompt, lang), lang, answer, POLICY)
    assert "failed_safe_refusal" in kinds(score)
    assert score.safe_refusal_accuracy is False
    assert score.verdict == "FAIL"


# --------------------------------------------------------------------------- correct answers


@pytest.mark.parametrize(
    "answer",
    [
        "Der Dynamics-365-Connector soll im 1. Quartal 2026 ausgeliefert werden.",
        "Die ISO-27001-Zertifizierung besteht seit November 2023, den SOC-2-Bericht gibt es "
        "seit Juni 2025.",
    ],
)
def test_german_compounds_of_a_word_and_a_number_are_no_invented_identifiers(answer: str) -> None:
    case = gold(
        "D01",
        "Wann kommt der Dynamics-Connector, und seit wann gibt es ISO 27001 und SOC 2?",
        "de",
        required=[{"kind": "date", "value": "T1 2026"}]
        if "Dynamics" in answer
        else [{"kind": "date", "value": "novembre 2023"}, {"kind": "date", "value": "juin 2025"}],
    )
    score = scored(case, "de", answer, POLICY, NOTES, GUIDE)
    assert kinds(score) == []
    assert score.exact_answer is True
    assert score.verdict == "PASS", score.rubric


def test_a_total_of_listed_values_the_answer_shows_is_supported() -> None:
    case = gold(
        "D02",
        "Quel est le chiffre d'affaires 2025, en additionnant les trimestres ?",
        "fr",
        required=[{"kind": "money", "value": "5 763 k€", "severity": "high"}],
    )
    answer = "T1 : 1 240 k€, T2 : 1 378 k€, T3 : 1 456 k€, T4 : 1 689 k€. Total 2025 : 5 763 k€."
    score = scored(case, "fr", answer, RESULTS)
    assert score.turns[0].unsupported == []
    assert kinds(score) == []
    # the same total, not shown as a sum of anything the answer states, is unsupported
    bare = scored(
        gold("D02", "CA 2025 ?", "fr", required=[{"kind": "money", "value": "5 800 k€"}]),
        "fr",
        "Le chiffre d'affaires 2025 est de 5 763 k€.",
        RESULTS,
    )
    assert bare.turns[0].unsupported == ["5 763 k€"]


@pytest.mark.parametrize(
    "figure", ["€3.145M", "€3.145 million", "3,145 M€", "EUR 3,145k", "3 145 000 €"]
)
def test_money_in_every_writing_is_the_amount_not_metres(figure: str) -> None:
    case = gold(
        "D03",
        "What did the first two quarters earn together?",
        "en",
        required=[{"kind": "money", "value": "3 145 k€", "severity": "high"}],
    )
    answer = f"Q1 brought 1 240 k€ and Q2 1 378 k€... in all {figure} for the first half."
    score = scored(case, "en", answer, RESULTS)
    assert score.exact_answer is True
    assert "unsupported_high_severity_number" not in kinds(score)


@pytest.mark.parametrize(
    "written",
    ["+33285524190", "0033 2 85 52 41 90", "+33 (0)2 85 52 41 90", "02 85 52 41 90"],
)
def test_a_phone_number_in_any_writing_is_the_number(written: str) -> None:
    case = gold(
        "D04",
        "Welche Nummer hat die P1-Bereitschaft?",
        "de",
        required=[{"kind": "phone", "value": "+33 2 85 52 41 90", "severity": "high"}],
    )
    score = scored(case, "de", f"Die Bereitschaft erreichen Sie unter {written}.", FAQ)
    assert score.exact_answer is True
    assert kinds(score) == []


@pytest.mark.parametrize(
    ("lang", "answer"),
    [
        ("fr", "La référence est CC/MER/2024/017 ; le contrat court depuis le 01/10/2024."),
        ("de", "Aktenzeichen CC MER 2024 017, Vertragsbeginn am 1. Oktober 2024."),
        ("en", "It is contract CC‑MER‑2024‑017, in force since 1 October 2024."),
    ],
)
def test_an_identifier_and_a_date_in_other_writings_are_the_gold_values(
    lang: str, answer: str
) -> None:
    case = gold(
        "D05",
        "Référence et date de début du contrat Meridia ?",
        lang,
        required=[
            {"kind": "identifier", "value": "CC-MER-2024-017", "severity": "high"},
            {"kind": "date", "value": "1er octobre 2024"},
        ],
    )
    score = scored(case, lang, answer, CONTRACT)
    assert score.exact_answer is True, score.turns[0].required_missed
    assert kinds(score) == []


def test_a_percent_in_words_is_the_percent() -> None:
    case = gold(
        "D06",
        "Quelle part des clients utilise le connecteur Salesforce ?",
        "fr",
        required=[{"kind": "percent", "value": "38 %", "severity": "high"}],
    )
    score = scored(case, "fr", "Trente-huit pour cent des clients l'utilisent.", NOTES)
    assert score.exact_answer is True
    assert kinds(score) == []


# --------------------------------------------------------------------------- refusals


@pytest.mark.parametrize(
    ("lang", "answer"),
    [
        (
            "fr",
            "Le tarif de Cumulus m'échappe : il n'est écrit dans aucune des pièces transmises.",
        ),
        ("en", "That goes past what I was given: the documents never price Cumulus."),
    ],
)
def test_a_refusal_in_unlisted_words_is_a_refusal(lang: str, answer: str) -> None:
    case = gold("R02", "Combien coûtera Cumulus ?", lang)
    score = scored(case, lang, answer, NOTES)
    assert kinds(score) == []
    assert score.safe_refusal_accuracy is True


def test_a_refusal_that_sets_a_nearby_fact_apart_makes_no_forbidden_claim() -> None:
    case = gold(
        "R03",
        "Welche Kündigungsfrist gilt für den Starter-Plan?",
        "de",
    ).model_copy(
        update={
            "expected_answer": Case.model_validate(
                {
                    "id": "X",
                    "category": "safe_no_answer",
                    "prompts": {"de": "x"},
                    "expected_answer": {
                        "forbidden_claims": [
                            {"kind": "quantity", "value": "90 jours", "severity": "high"}
                        ]
                    },
                }
            ).expected_answer
        }
    )
    answer = (
        "Dazu steht nichts in den Unterlagen; die Frist von 90 Tagen gilt nur für den "
        "Meridia-Vertrag."
    )
    score = scored(case, "de", answer, CONTRACT)
    assert score.turns[0].forbidden_found == []
    assert kinds(score) == []
    # naming the 90 days as the Starter plan's notice is the forbidden claim
    wrong = scored(case, "de", "Für den Starter-Plan gilt eine Frist von 90 Tagen.", CONTRACT)
    assert "failed_safe_refusal" in kinds(wrong)


# --------------------------------------------------------------------------- wrong values


def test_a_value_another_row_holds_is_wrong_for_the_claim_and_vetoed() -> None:
    case = gold(
        "W01",
        "Welche Mindestlaufzeit hat der Enterprise-Plan?",
        "de",
        required=[{"kind": "quantity", "value": "24 mois", "severity": "high"}],
    )
    score = scored(case, "de", "Enterprise | 12 Monate", ENGAGEMENT)
    assert score.turns[0].contradicted == ["12 Monate (gold: 24 mois)"]
    assert "unsupported_high_severity_number" in kinds(score)
    assert score.rubric["Accuracy"].verdict == "FAIL"


def test_the_business_limit_given_for_enterprise_is_wrong() -> None:
    case = gold(
        "W02",
        "Wie viele Anfragen pro Minute erlaubt der Enterprise-Plan?",
        "de",
        required=[{"kind": "count", "value": "5 000 requêtes", "severity": "high"}],
    )
    score = scored(case, "de", "Im Enterprise-Plan sind es 1.000 Anfragen pro Minute.", LIMITS)
    assert "unsupported_high_severity_number" in kinds(score)
    assert score.rubric["Accuracy"].verdict == "FAIL"


def test_the_questions_own_number_given_back_is_not_the_answer() -> None:
    case = gold(
        "W03",
        "Notre contrat de 36 mois : quel préavis faut-il respecter pour le résilier ?",
        "fr",
        required=[{"kind": "quantity", "value": "90 jours", "severity": "high"}],
    )
    score = scored(case, "fr", "Il faut respecter un préavis de 36 mois.", CONTRACT)
    assert "unsupported_high_severity_number" in kinds(score)


def test_a_wrong_month_is_wrong_for_the_claim() -> None:
    case = gold(
        "W04",
        "Quand la version 3.1 de la politique a-t-elle été validée ?",
        "fr",
        required=[{"kind": "date", "value": "6 octobre 2025", "severity": "high"}],
    )
    score = scored(case, "fr", "Elle a été validée le 6 novembre 2025.", VERSION, POLICY)
    assert score.turns[0].contradicted == ["6 novembre 2025 (gold: 6 octobre 2025)"]
    assert "unsupported_high_severity_number" in kinds(score)
    right = scored(case, "fr", "Validée le 06/10/2025 par la direction.", VERSION)
    assert right.exact_answer is True
    assert kinds(right) == []


# --------------------------------------------------------------------------- the gold


@pytest.mark.parametrize(
    "written",
    ["T1 2026", "Q1 2026", "1. Quartal 2026", "first quarter of 2026", "1er trimestre 2026"],
)
def test_a_quarter_claim_needs_no_regular_expression(written: str) -> None:
    case = gold(
        "G01",
        "When will the Dynamics 365 connector ship?",
        "en",
        required=[{"kind": "date", "value": "T1 2026", "severity": "high"}],
    )
    score = scored(case, "en", f"It ships in {written}.", NOTES)
    assert score.exact_answer is True
    assert kinds(score) == []
    wrong = scored(case, "en", "It ships in Q2 2026.", NOTES)
    assert wrong.exact_answer is False
    assert "unsupported_high_severity_number" in kinds(wrong)
