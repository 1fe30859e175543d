"""A refusal followed by a guess at the answer is an answer (``failed_safe_refusal`` where a
safe refusal is due), in the three languages, also where the refusal's contrast sets the
guess apart ("Vermutlich fällt er aber unter ..."); a set-apart fact that is only rounded
("etwa 6 Wochen gilt nur für ...") keeps the refusal."""

from __future__ import annotations

import pytest

from pytest_ragv2.scoring.refusal import read_refusal

NO_PHRASES: dict[str, tuple[str, ...]] = {"fr": (), "de": (), "en": ()}


@pytest.mark.parametrize(
    ("lang", "answer"),
    [
        (
            "en",
            "The documents don't give it directly, but since the standard X2 carries 340 kg, "
            "you can expect about 272 kg for the Cold variant [2].",
        ),
        (
            "fr",
            "Le chiffre exact n'est pas donné dans les documents. Il devait toutefois se situer "
            "autour de 105 %.",
        ),
        (
            "de",
            "Eine eigene Bescheinigung für den TVM 30-H2 ist nicht aufgeführt. Vermutlich fällt "
            "er aber unter die Baureihenbescheinigung EPZ-DGR-B-2024-0417.",
        ),
    ],
)
def test_a_guess_after_a_refusal_answers(lang: str, answer: str) -> None:
    reading = read_refusal(answer, lang, NO_PHRASES)
    assert reading.verdict == "answers"
    assert reading.guessed


@pytest.mark.parametrize(
    ("lang", "answer"),
    [
        (
            "de",
            "Der Preis ist nicht angegeben; die Lieferzeit von etwa 6 Wochen gilt nur für "
            "Ersatzteile.",
        ),
        (
            "en",
            "The price is not given in the documents; the lead time of around 6 weeks applies "
            "only to spare parts.",
        ),
    ],
)
def test_a_rounded_fact_set_apart_keeps_the_refusal(lang: str, answer: str) -> None:
    assert read_refusal(answer, lang, NO_PHRASES).verdict == "refuses"


@pytest.mark.parametrize(
    ("lang", "answer"),
    [
        (
            "fr",
            "La spécification ne donne pas de durée pour une charge complète. Elle indique "
            "seulement 52 minutes de 10 à 90 % [1] et environ trois heures avec le chargeur "
            "mobile [2] ; je ne peux pas en déduire le temps d'une charge complète.",
        ),
        (
            "en",
            "The specification doesn't give that. It only says the station delivers up to "
            "1.5 kW [1], with opportunity charging keeping a fleet running around the clock [2].",
        ),
        (
            "en",
            "I can't name a customer or a site. TW-P-24-007 comes from project data labelled "
            "synthetic demo data [2].",
        ),
        (
            "de",
            "Die Projektdaten sind laut Dateihinweis synthetische Demodaten [2]. Eine Anlage, "
            "die man besichtigen könnte, lässt sich daraus nicht ableiten.",
        ),
    ],
)
def test_a_refusal_quoting_what_the_sources_say_roughly_is_a_refusal(
    lang: str, answer: str
) -> None:
    assert read_refusal(answer, lang, NO_PHRASES).verdict == "refuses"


@pytest.mark.parametrize(
    ("lang", "answer"),
    [
        (
            "de",
            "Die Dokumente nennen keine eigene Laufzeit für den X2 Cold. Es ist aber davon "
            "auszugehen, dass sie wie beim normalen X2 bei etwa 11,5 Stunden liegt.",
        ),
        (
            "en",
            "No weight is listed for the TVS 75. For planning purposes you could assume "
            "roughly 1,500 kg [2].",
        ),
        (
            "de",
            "Direkt angegeben ist das nicht. Rechnerisch ergibt sich aber aus 2,6 kWh [3] und "
            "rund drei Stunden Ladezeit [1] eine Ladeleistung von etwa 0,9 kW.",
        ),
    ],
)
def test_an_assumption_or_a_computation_after_a_refusal_answers(lang: str, answer: str) -> None:
    assert read_refusal(answer, lang, NO_PHRASES).verdict == "answers"


@pytest.mark.parametrize(
    ("lang", "answer"),
    [
        (
            "en",
            "The Meridia contract doesn't set an RPO or an RTO. Its service-level clause only "
            "guarantees 99.7 % monthly availability [1].",
        ),
        (
            "de",
            "Eine Leistungsangabe in kW für das mobile Ladegerät steht nicht in der Spezifikation.",
        ),
        ("fr", "La puissance du chargeur mobile ne figure pas dans la spécification."),
    ],
)
def test_a_document_that_sets_nothing_or_a_specification_that_does_not_hold_it_refuses(
    lang: str, answer: str
) -> None:
    assert read_refusal(answer, lang, NO_PHRASES).verdict == "refuses"


@pytest.mark.parametrize(
    ("lang", "answer"),
    [
        (
            "de",
            "Kurz gesagt: Dafür finde ich in den Unterlagen keine Grundlage. Die einzige laufende "
            "Zahlung, die die Richtlinie nennt, ist die Konnektivitätspauschale von 35 € im "
            "Monat; Energiekosten werden dort nicht angesprochen.",
        ),
        (
            "de",
            "Zu einer Heizkostenpauschale steht in der Remote-Work-Richtlinie nichts.",
        ),
        ("en", "In short: the documents don't say."),
    ],
)
def test_a_lead_in_an_only_and_a_far_nichts_keep_the_refusal(lang: str, answer: str) -> None:
    assert read_refusal(answer, lang, NO_PHRASES).verdict == "refuses"
