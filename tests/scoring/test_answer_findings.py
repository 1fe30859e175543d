"""The five findings of the hand-graded answers (issue 8, part 6), in French, German and English.

Each test scores a hand-built transcript against a bundled case and its gold, as the chat
path does: a refusal worded outside the phrase lists, an invented phone number, a wrong
value that the sources hold in another role, the rubric dimensions of a missing claim and of
an unsupported sole fact, and an answer in a language outside the configured set.
"""

from __future__ import annotations

from pytest_ragv2.scoring.answers import AnswerScoringOptions, score_transcript
from tests.scoring.test_answer_scoring import (
    NO_LANGID,
    allowed,
    case,
    cite,
    item,
    kb_call,
    kinds,
    one_turn,
)

# --------------------------------------------------------------------------- 1. refusals

JAPON = item(
    "resultats-financiers-2025",
    "xlsx",
    "Clients actifs par région : France 198 | Benelux 41 | Suisse 33 (fin 2025)",
)


def test_fr_an_ordinary_refusal_outside_the_phrase_list_is_a_safe_refusal() -> None:
    b08 = case("B08")
    answer = "Les documents ne donnent pas le nombre de clients au Japon [1]."
    transcript = one_turn(
        b08.all_prompts()["fr"], answer, evidence=[JAPON], citations=[cite("[1]", JAPON)]
    )
    score = score_transcript(b08, "fr", transcript, allowlist_files=allowed(), options=NO_LANGID)
    assert score.vetoes == []
    assert score.safe_refusal_accuracy is True
    # the refusing clause as the answer writes it
    assert score.turns[0].refusal_phrase == (
        "Les documents ne donnent pas le nombre de clients au Japon"
    )
    assert score.verdict == "PASS"


def test_de_a_refusal_in_own_words_passes_and_a_stated_value_still_fails() -> None:
    k07 = case("K07")
    sheet = item("datenblatt-tvs-75", "pdf", "Technische Daten TVS 75: Motorleistung 75 kW.")
    prompt = k07.all_prompts()["de"]
    refusal = "Zum Schalldruckpegel des TVS 75 sagen die Unterlagen nichts."
    score = score_transcript(
        k07, "de", one_turn(prompt, refusal, evidence=[sheet]), options=NO_LANGID
    )
    assert score.vetoes == []
    assert score.safe_refusal_accuracy is True
    answer = "Der TVS 75 erreicht 74 dB(A); einen Grenzwert nennen die Unterlagen nicht."
    score = score_transcript(
        k07, "de", one_turn(prompt, answer, evidence=[sheet]), options=NO_LANGID
    )
    assert "failed_safe_refusal" in kinds(score)  # refused, but made a forbidden claim


def test_en_a_refusal_in_own_words_and_a_negated_fact() -> None:
    w04 = case("W04")
    prompt = w04.all_prompts()["en"]
    refusal = "I can't tell you that: the documents don't say what the X2 costs."
    score = score_transcript(w04, "en", one_turn(prompt, refusal), options=NO_LANGID)
    assert "failed_safe_refusal" not in kinds(score)
    assert score.turns[0].refused
    # the gold's refusal claim ("the X2's price is not in the documents") is stated too
    assert score.exact_answer is True
    fact = "No, the X2 does not come in blue; only in grey."
    score = score_transcript(w04, "en", one_turn(prompt, fact), options=NO_LANGID)
    assert not score.turns[0].refused
    assert "failed_safe_refusal" in kinds(score)


# --------------------------------------------------------------------------- 2. identifiers

FAQ = item(
    "faq-support",
    "md",
    "Astreinte Enterprise : +33 2 85 52 41 90 (24/7). Support : support@nimbus-analytics.fr. "
    "Délais : Starter 48 h, Business 8 h, Enterprise 1 h. Réf. client 2 85 52 41 90 00.",
)


def test_fr_a_phone_number_is_one_identifier_compared_whole() -> None:
    b10 = case("B10")
    prompt = b10.all_prompts()["fr"]
    national = "Le numéro d'astreinte est le 02 85 52 41 90 [1]."
    score = score_transcript(
        b10,
        "fr",
        one_turn(prompt, national, evidence=[FAQ], citations=[cite("[1]", FAQ)]),
        options=NO_LANGID,
    )
    assert score.vetoes == []
    assert score.exact_answer is True
    # an invented number whose digits all occur in the evidence
    invented = "Le numéro d'astreinte est le +33 2 85 52 48 41 [1]."
    score = score_transcript(
        b10,
        "fr",
        one_turn(prompt, invented, evidence=[FAQ], citations=[cite("[1]", FAQ)]),
        options=NO_LANGID,
    )
    # given where the typed phone claim asks for its number: the wrong value of that claim,
    # vetoed as the claim's (high severity), never supported by its digits
    [veto] = score.vetoes
    assert (veto.kind, veto.text) == ("unsupported_high_severity_number", "+33 2 85 52 48 41")
    assert veto.detail == (
        "not the gold value of the high-severity claim '+33 2 85 52 41 90' (the value is in no "
        "source)"
    )
    assert score.turns[0].facts == 1  # one phone number, not five numbers


def test_de_international_and_national_forms_are_the_same_number() -> None:
    k08 = case("K08")
    service = item("servicehandbuch", "pdf", "Service-Hotline: +49 711 12345-0, Mo-Fr 7-18 Uhr.")
    prompt = k08.all_prompts()["de"]
    answer = "Wenden Sie sich an die Hotline 0711 123450 [1]."
    score = score_transcript(
        k08,
        "de",
        one_turn(prompt, answer, evidence=[service], citations=[cite("[1]", service)]),
        options=NO_LANGID,
    )
    assert "fabricated_identifier" not in kinds(score)
    wrong = "Wenden Sie sich an die Hotline 0711 123451 oder an service@tarnwald.de [1]."
    score = score_transcript(
        k08,
        "de",
        one_turn(prompt, wrong, evidence=[service], citations=[cite("[1]", service)]),
        options=NO_LANGID,
    )
    # invented contacts: no fabricated project, part or document identifier, but wrong
    assert "fabricated_identifier" not in kinds(score)
    assert sorted(score.turns[0].invented) == ["0711 123451", "service@tarnwald.de"]
    assert score.rubric["Accuracy"].verdict == "FAIL"


def test_en_urls_and_letterless_part_numbers_must_occur_whole() -> None:
    w01 = case("W01")
    spec = item(
        "nimbus-x2-spec",
        "md",
        "Runtime per charge: 11.5 hours. Spare battery part no. 4410-220-7. Manual: "
        "https://nimbus-robotics.example/x2/manual",
    )
    prompt = w01.all_prompts()["en"]
    good = (
        "The X2 runs 11.5 hours per charge [1]; the spare battery is part no. 4410-220-7, "
        "see https://nimbus-robotics.example/x2/manual."
    )
    score = score_transcript(
        w01,
        "en",
        one_turn(prompt, good, evidence=[spec], citations=[cite("[1]", spec)]),
        options=NO_LANGID,
    )
    assert "fabricated_identifier" not in kinds(score)
    bad = (
        "The X2 runs 11.5 hours per charge [1]; the spare battery is part no. 4410-7-220, "
        "see https://nimbus-robotics.example/x2/battery."
    )
    score = score_transcript(
        w01,
        "en",
        one_turn(prompt, bad, evidence=[spec], citations=[cite("[1]", spec)]),
        options=NO_LANGID,
    )
    texts = sorted(v.text for v in score.vetoes if v.kind == "fabricated_identifier")
    assert texts == ["4410-7-220"]
    # an invented URL is no part or document identifier: it fails Accuracy and Grounding
    assert score.turns[0].invented == ["https://nimbus-robotics.example/x2/battery"]
    assert score.rubric["Grounding"].verdict == "FAIL"


# --------------------------------------------------------------------------- 3. claim-bound

CONTRAT = item(
    "contrat-cadre-meridia",
    "docx",
    "4.1 Disponibilité garantie : 99,7 % (plan Business), 99,5 % (plan Starter). 4.3 avoir "
    "égal à 5 % de la redevance mensuelle par heure, plafonné à 30 %, réclamé sous 30 jours. "
    "3.1 préavis de 90 jours avant l'échéance.",
)


def test_fr_another_plans_availability_target_is_unsupported_for_the_claim() -> None:
    b02 = case("B02")
    prompt = b02.all_prompts()["fr"]
    answer = (
        "Le contrat garantit une disponibilité de 99,5 % ; au-delà, avoir de 5 % de la "
        "redevance par heure, plafonné à 30 %, réclamé sous 30 jours [1]."
    )
    score = score_transcript(
        b02,
        "fr",
        one_turn(prompt, answer, evidence=[CONTRAT], citations=[cite("[1]", CONTRAT)]),
        options=NO_LANGID,
    )
    [veto] = [v for v in score.vetoes if v.kind == "unsupported_high_severity_number"]
    assert veto.text == "99,5 %"
    assert "held elsewhere in the sources" in veto.detail
    assert score.turns[0].contradicted == ["99,5 % (gold: 99,7 %)"]
    assert score.rubric["Accuracy"].verdict == "FAIL"
    # the notice period quoted next to a missed claim period is another fact, not its value
    context = (
        "Disponibilité 99,7 %, avoir de 5 % par heure plafonné à 30 % [1]. Le préavis est de "
        "90 jours."
    )
    score = score_transcript(
        b02,
        "fr",
        one_turn(prompt, context, evidence=[CONTRAT], citations=[cite("[1]", CONTRAT)]),
        options=NO_LANGID,
    )
    assert score.turns[0].contradicted == []
    assert score.vetoes == []


def test_de_a_wrong_pressure_from_another_variant_trips_the_number_veto() -> None:
    k03 = case("K03")
    table = item(
        "datenblatt-tvk-110",
        "pdf",
        "TVK 110-10 | max. Betriebsdruck (bar): 10 | Liefermenge (m³/min): 1,15\n"
        "TVK 110-16 | max. Betriebsdruck (bar): 16² | Liefermenge (m³/min): 0,92\n"
        "² nur bei Ansaugtemperatur bis 35 °C",
    )
    prompt = k03.all_prompts()["de"]
    answer = (
        "Der maximale Betriebsdruck des TVK 110 beträgt 10 bar, nur bei Ansaugtemperatur bis "
        "35 °C; die Liefermenge ist 0,92 m³/min [1]."
    )
    score = score_transcript(
        k03,
        "de",
        one_turn(prompt, answer, evidence=[table], citations=[cite("[1]", table)]),
        options=NO_LANGID,
    )
    assert [v.text for v in score.vetoes] == ["10 bar"]
    assert score.fabrication_count == 1
    # the table quoted whole (several pressures for one missed claim) is context, not a value
    quoted = (
        "Laut Datenblatt: TVK 110-10: 10 bar, 1,15 m³/min; TVK 110-16: 16² bar, 0,92 m³/min, "
        "nur bei Ansaugtemperatur bis 35 °C [1]."
    )
    score = score_transcript(
        k03,
        "de",
        one_turn(prompt, quoted, evidence=[table], citations=[cite("[1]", table)]),
        options=NO_LANGID,
    )
    assert score.vetoes == []
    assert score.exact_answer is True  # "16²" is 16 with a footnote marker


def test_en_another_models_runtime_is_not_the_x2s() -> None:
    w01 = case("W01")
    spec = item("nimbus-spec", "md", "Runtime per charge: X2 11.5 hours, X3 9.5 hours.")
    prompt = w01.all_prompts()["en"]
    answer = "The X2 runs 9.5 hours on one charge [1]."
    score = score_transcript(
        w01,
        "en",
        one_turn(prompt, answer, evidence=[spec], citations=[cite("[1]", spec)]),
        options=NO_LANGID,
    )
    assert [v.kind for v in score.vetoes] == ["unsupported_high_severity_number"]
    assert score.rubric["Grounding"].verdict == "FAIL"  # its sole fact is unsupported


# --------------------------------------------------------------------------- 4. rubric


def test_fr_a_missing_claim_is_completeness_not_accuracy() -> None:
    b04 = case("B04")
    ca = item("resultats-financiers-2025", "xlsx", "T4 | CA (k€): 1 689 | Nouveaux clients: 33")
    answer = "Au quatrième trimestre 2025, le chiffre d'affaires est de 1 689 k€ [1]."
    score = score_transcript(
        b04,
        "fr",
        one_turn(b04.all_prompts()["fr"], answer, evidence=[ca], citations=[cite("[1]", ca)]),
        options=NO_LANGID,
    )
    assert score.rubric["Accuracy"].verdict == "PASS"
    assert score.rubric["Completeness"].verdict == "PARTIAL"
    assert score.rubric["Completeness"].reason == "missing: 33 nouveaux clients"


def test_de_an_answer_without_the_asked_fact_fails_completeness_only() -> None:
    k03 = case("K03")
    answer = "Der TVK 110 ist ein zweistufiger Kolbenverdichter."
    score = score_transcript(
        k03, "de", one_turn(k03.all_prompts()["de"], answer), options=NO_LANGID
    )
    assert score.rubric["Accuracy"].verdict == "PASS"
    assert score.rubric["Completeness"].verdict == "FAIL"


def test_en_an_unsupported_sole_fact_fails_grounding_and_one_of_three_is_partial() -> None:
    w01 = case("W01")
    prompt = w01.all_prompts()["en"]
    sole = one_turn(prompt, "The X2 weighs 412 kg.", tool_calls=[kb_call("X2 weight")])
    score = score_transcript(w01, "en", sole, options=NO_LANGID)
    assert score.rubric["Grounding"].verdict == "FAIL"
    assert score.rubric["Grounding"].reason == "1/1 facts unsupported: 412 kg"
    spec = item("nimbus-spec", "md", "X2: runtime 11.5 hours, payload 340 kg.")
    mixed = one_turn(
        prompt,
        "The X2 runs 11.5 hours, carries 340 kg and weighs 412 kg.",
        evidence=[spec],
        tool_calls=[kb_call("X2 runtime")],
    )
    score = score_transcript(w01, "en", mixed, options=NO_LANGID)
    assert score.rubric["Grounding"].verdict == "PARTIAL"


# --------------------------------------------------------------------------- 5. language


def test_an_italian_answer_to_a_french_prompt_fails_the_language_check() -> None:
    b03 = case("B03")
    answer = "Il preavviso per la disdetta del contratto è di 90 giorni prima della scadenza."
    score = score_transcript(b03, "fr", one_turn(b03.all_prompts()["fr"], answer))
    assert score.turns[0].language_detected == "it"
    assert score.rubric["Language"].verdict == "FAIL"
    assert score.language_ok is False


def test_fr_de_en_answers_keep_their_language() -> None:
    options = AnswerScoringOptions()
    for case_id, lang, answer in (
        ("B03", "fr", "Le préavis de résiliation est de 90 jours avant l'échéance [1]."),
        ("K03", "de", "Der TVK 110-16 erreicht 16 bar, nur bei Ansaugtemperatur bis 35 °C."),
        ("W01", "en", "The Nimbus X2 runs 11.5 hours on one charge [1]."),
    ):
        loaded = case(case_id)
        score = score_transcript(
            loaded, lang, one_turn(loaded.all_prompts()[lang], answer), options=options
        )
        assert score.turns[0].language_detected == lang
        assert score.rubric["Language"].verdict == "PASS"


def test_de_a_refusal_claim_is_credited_only_by_a_refusal_of_its_kind() -> None:
    k15 = case("K15")
    prompt = k15.all_prompts()["de"]
    incompatible = "Mit dem TVS 75 geht das nicht: er darf nicht mit Wasserstoff betrieben werden."
    score = score_transcript(k15, "de", one_turn(prompt, incompatible), options=NO_LANGID)
    assert score.vetoes == []
    assert score.turns[0].required_missed == ["für Wasserstoff ist der TVM 30-H2 vorgesehen"]
    absent = "Dazu habe ich in den Unterlagen keine Angaben gefunden."
    score = score_transcript(k15, "de", one_turn(prompt, absent), options=NO_LANGID)
    assert score.vetoes == []  # a safe refusal, but not the gold's "nicht zugelassen"
    assert len(score.turns[0].required_missed) == 2


def test_an_allow_list_is_normalised_once_for_every_conversation_scored_against_it() -> None:
    from pytest_ragv2.gold.allowlist import AllowedFile, Allowlist
    from pytest_ragv2.scoring.vetoes import Allowed

    allowlist = Allowlist(
        (AllowedFile("contrat", "Contrat Cadre.PDF", None), AllowedFile("x2", "x2.docx", None))
    )
    assert allowlist.names == {"contrat", "Contrat Cadre.PDF", "x2", "x2.docx"}
    first = Allowed.of(allowlist.names)
    assert Allowed.of(frozenset(allowlist.names)) is first
    assert first.allows(None, "contrat cadre.pdf")
    assert first.allows_mention("X2.docx")
    assert not first.allows("other", "other.pdf")
