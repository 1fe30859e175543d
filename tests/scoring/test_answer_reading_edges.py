"""Where an answer's reading must not cut or count (issue 24, from kinds of wording met in
the answer corpus's development half, each written here in three languages apart from it).

- a number naming a part of a document ("Tabelle 1", "article 2", "page 3") is a reference,
  like a citation marker, not a value of the answer;
- an identifier of digits alone ("Revision 2") is found as a number token, not inside a
  citation marker or a date;
- an abbreviation's full stop ("i.e.", "a.m.", "z. B.") ends no sentence, so a derived
  value stays beside the values it is derived from and "10 a.m. to 3 p.m." is one sentence;
- a format the prompt asks for in so many words is the format judged;
- a refusal's clauses are not cut inside a value ("1. Quartal 2026") nor at a citation
  marker the sentence runs on after, and what a colon introduces after a set-apart clause
  is set apart too.
"""

from __future__ import annotations

import pytest

from pytest_ragv2.gold.schema import Claim, ExpectedAnswer
from pytest_ragv2.scoring.answer_format import format_ok, requested_format
from pytest_ragv2.scoring.answer_text import sentence_spans
from pytest_ragv2.scoring.claims import claim_found
from pytest_ragv2.scoring.grounding import answer_facts, text_support
from pytest_ragv2.scoring.refusal import read_refusal
from pytest_ragv2.scoring.values import read_values

NO_PHRASES: dict[str, tuple[str, ...]] = {"fr": (), "de": (), "en": ()}


@pytest.mark.parametrize(
    ("lang", "text"),
    [
        ("fr", "Voir le tableau 2 et l'article 14, section 3.1, page 7 du contrat."),
        ("de", "Siehe Tabelle 2 und Abschnitt 3.1 auf Seite 7, Anhang 4."),
        ("en", "See Table 2 and clause 14, section 3.1 on page 7, appendix 4."),
    ],
)
def test_the_number_of_a_document_part_is_no_value(lang: str, text: str) -> None:
    assert read_values(text, lang) == ()


@pytest.mark.parametrize(
    ("lang", "text"),
    [
        ("fr", "Le tableau 2 donne 14 modèles."),
        ("de", "Tabelle 2 nennt 14 Modelle."),
        ("en", "Table 2 lists 14 models."),
    ],
)
def test_a_count_beside_a_document_part_is_still_read(lang: str, text: str) -> None:
    assert [value.key for value in read_values(text, lang)] == ["count:14"]


def _revision(number: str) -> Claim:
    return Claim(text=number, kind="identifier", value=number)


@pytest.mark.parametrize(
    ("lang", "answer", "found"),
    [
        ("fr", "Le certificat est à la révision 3 [1].", True),
        ("fr", "Le certificat, voir [3], date du 03.05.2024.", False),
        ("de", "Aktuell gilt die Revision von 2025 [3].", False),
        ("de", "Aktuell gilt Revision 3 [1][2].", True),
        ("en", "It was reissued on 3 March 2024 [3].", False),
        ("en", "It is now at revision 3, issued in 2024 [1].", True),
    ],
)
def test_an_identifier_of_digits_is_found_as_a_number(lang: str, answer: str, found: bool) -> None:
    assert claim_found(_revision("3"), answer, lang).matched is found


@pytest.mark.parametrize(
    ("lang", "answer", "evidence"),
    [
        (
            "en",
            "The lease starts on 1 March 2025 and runs 24 months (i.e. until 28 February 2027).",
            "Start: 1 March 2025. Term: 24 months.",
        ),
        (
            "fr",
            "Le bail court 24 mois à partir du 1er mars 2025, c.-à-d. jusqu'au 28 février 2027.",
            "Début : 1er mars 2025. Durée : 24 mois.",
        ),
        (
            "de",
            "Laufzeit 24 Monate ab 1. März 2025, d. h. bis zum 28. Februar 2027.",
            "Beginn: 1. März 2025. Laufzeit: 24 Monate.",
        ),
    ],
)
def test_an_end_date_after_an_abbreviation_is_derived(
    lang: str, answer: str, evidence: str
) -> None:
    facts = answer_facts(answer, lang, text_support(evidence))
    dates = [fact for fact in facts if fact.kind == "date"]
    assert dates
    assert all(fact.supported for fact in dates), dates


@pytest.mark.parametrize(
    "text",
    [
        "The office opens at 9 a.m. and closes at 5 p.m. on weekdays.",
        "Der Zugang gilt z. B. für Gäste, d. h. ohne Konto.",
        "Le tarif inclut p. ex. la maintenance, cf. l'annexe.",
    ],
)
def test_an_abbreviation_ends_no_sentence(text: str) -> None:
    assert len(sentence_spans(text)) == 1


@pytest.mark.parametrize(
    ("text", "sentences"),
    [
        ("Die Frist endet am 1. März 2027 und gilt ab dem 2. Quartal 2026.", 1),
        ("Es sind 12. Danach folgt nichts.", 2),
        ("Le délai court jusqu'au 1er mars 2027. Il est ferme.", 2),
    ],
)
def test_a_german_ordinal_date_ends_no_sentence(text: str, sentences: int) -> None:
    assert len(sentence_spans(text)) == sentences


def test_a_capital_after_a_sentence_still_starts_one() -> None:
    text = "It applies from Revision D. The delivery is 0.92 m³/min."
    assert len(sentence_spans(text)) == 2


@pytest.mark.parametrize(
    ("prompt", "wanted"),
    [
        ("Donne-moi les tarifs sous forme de tableau.", "table"),
        ("Réponds en une seule phrase : quel est le délai ?", "one_sentence"),
        ("Bitte die Werte als Tabelle.", "table"),
        ("Antworte in einem Satz: Wie lange gilt das?", "one_sentence"),
        ("List the plans as a bulleted list.", "list"),
        ("Give me the limits in a table, please.", "table"),
        ("Which plans appear in the table of prices?", None),
        ("Quelle est la liste des connecteurs ?", None),
        ("Welche Werte stehen in Tabelle 2?", None),
    ],
)
def test_the_prompt_asks_for_a_format_in_so_many_words(prompt: str, wanted: str | None) -> None:
    assert requested_format(prompt) == wanted


def test_a_requested_sentence_is_judged_as_one() -> None:
    assert format_ok("Core hours are 10 a.m. to 3 p.m., on Tuesdays.", "one_sentence")
    assert not format_ok("- Core hours: 10 to 3\n- Day: Tuesday", "one_sentence")


def _roles(answer: str, lang: str) -> list[tuple[str, str]]:
    return [(c.role, c.text) for c in read_refusal(answer, lang, NO_PHRASES).clauses]


@pytest.mark.parametrize(
    ("lang", "answer", "kept"),
    [
        (
            "de",
            "Die Unterlagen nennen keinen Termin. Geplant ist nur das Modul B (2. Quartal 2027).",
            "2. Quartal 2027",
        ),
        (
            "fr",
            "Les documents ne donnent pas de date ; seul le module B est prévu "
            "(1er trimestre 2027).",
            "1er trimestre 2027",
        ),
        ("en", "The documents give no date; only module B is planned (Q2 2027).", "Q2 2027"),
    ],
)
def test_no_clause_is_cut_inside_a_value(lang: str, answer: str, kept: str) -> None:
    assert any(kept in text for _, text in _roles(answer, lang))


@pytest.mark.parametrize(
    ("lang", "answer", "value"),
    [
        (
            "de",
            "Eine Kündigungsfrist nennen die Unterlagen nicht. Die Frist von 60 Tagen [2] gilt "
            "nur für den Rahmenvertrag.",
            "60 Tagen",
        ),
        (
            "fr",
            "Les documents ne donnent aucun délai de préavis. Le seul délai cité est celui du "
            "contrat Alpha [1] (60 jours) : il ne vaut que pour ce client.",
            "60 jours",
        ),
        (
            "en",
            "The documents do not state a notice period. The closest figures they give are "
            "different: the pilot contract's 60 days and the trial's 14 days.",
            "60 days",
        ),
    ],
)
def test_a_value_set_apart_beside_a_refusal_is_context(lang: str, answer: str, value: str) -> None:
    roles = _roles(answer, lang)
    assert roles[0][0] == "refusal"
    holding = [role for role, text in roles if value in text]
    assert holding
    assert all(role in ("set_apart", "source") for role in holding), roles


# --------------------------------------------------------------------------- times of day


@pytest.mark.parametrize(
    ("lang", "text", "times"),
    [
        (
            "fr",
            "Le standard répond de 9 h à 18 h, la hotline de 8h30 à 20h00.",
            ["09:00", "18:00", "08:30", "20:00"],
        ),
        ("fr", "Un délai de 48 h, puis 9 h de reprise.", []),
        (
            "de",
            "Erreichbar werktags von 9 bis 18 Uhr, samstags 10:00–14:00 Uhr.",
            ["09:00", "18:00", "10:00", "14:00"],
        ),
        ("de", "Zwischen 9.30 und 17 Uhr; Preis 9.30 €.", ["09:30", "17:00"]),
        ("en", "Open from 10 a.m. to 3 p.m., and 7pm on Fridays.", ["10:00", "15:00", "19:00"]),
        (
            "en",
            "Staffed 10 to 3 p.m. and 12:30-13:15 on Mondays.",
            ["10:00", "15:00", "12:30", "13:15"],
        ),
    ],
)
def test_a_time_of_day_is_read_in_every_writing(lang: str, text: str, times: list[str]) -> None:
    read = [value.key for value in read_values(text, lang) if value.kind == "time"]
    assert sorted(read) == sorted(f"time:{time}" for time in times)


# ------------------------------------------------------- text claims that state values


def _text(text: str) -> Claim:
    return Claim(text=text)


@pytest.mark.parametrize(
    ("lang", "claim", "answer", "found"),
    [
        # same language: the values with two thirds of the claim's words
        (
            "fr",
            "renouvellement tacite par périodes successives de 12 mois",
            "Ensuite, il se renouvelle tacitement par périodes successives de douze mois.",
            True,
        ),
        (
            "fr",
            "renouvellement tacite par périodes successives de 12 mois",
            "La durée initiale est de 12 mois.",
            False,
        ),
        (
            "en",
            "support desk open on working days from 9:00 to 17:00",
            "The support desk is open 9 a.m. to 5 p.m. on working days.",
            True,
        ),
        (
            "en",
            "support desk open on working days from 9:00 to 17:00",
            "The support desk is open 9 a.m. to 6 p.m. on working days.",
            False,
        ),
        # another language than the claim's: the values alone, in one sentence
        (
            "de",
            "le support est joignable les jours ouvrés de 9 h à 17 h",
            "Der Support ist werktags von 9 bis 17 Uhr erreichbar.",
            True,
        ),
        (
            "en",
            "Lieferung innerhalb von 14 Tagen nach Auftragseingang",
            "Delivery takes two weeks from the order, or 14 days.",
            True,
        ),
        (
            "de",
            "le support est joignable les jours ouvrés de 9 h à 17 h",
            "Der Support ist ab 9 Uhr erreichbar. Er schließt um 17 Uhr.",
            False,
        ),
        # a bound the answer turns round is another claim
        (
            "en",
            "routing for fleets of more than 40 vehicles",
            "It adds routing for fleets of up to 40 vehicles.",
            False,
        ),
        (
            "de",
            "Flottensteuerung für mehr als 40 Fahrzeuge",
            "Neu ist die Flottensteuerung für mehr als vierzig Fahrzeuge.",
            True,
        ),
    ],
)
def test_a_text_claim_that_states_values_is_found_by_them(
    lang: str, claim: str, answer: str, found: bool
) -> None:
    assert claim_found(_text(claim), answer, lang).matched is found


def test_a_forbidden_text_claim_is_made_only_as_written() -> None:
    from pytest_ragv2.gold.schema import ExpectedAnswer
    from pytest_ragv2.scoring.claims import score_claims

    expected = ExpectedAnswer.model_validate(
        {"forbidden_claims": ["le support est joignable les jours ouvrés de 8 h à 20 h"]}
    )
    answer = "Der Vertrieb ist von 8 bis 20 Uhr erreichbar."
    assert score_claims(expected, answer, "de").forbidden_found == ()


@pytest.mark.parametrize(
    ("lang", "answer"),
    [
        ("de", "Die Temperatur darf 60 °C nicht überschreiten."),
        ("fr", "La température ne doit pas dépasser 60 °C."),
        ("en", "The temperature must not exceed 60 °C."),
    ],
)
def test_a_negated_limit_states_its_value(lang: str, answer: str) -> None:
    from pytest_ragv2.scoring.claim_denials import denied_at

    start = answer.index("60")
    assert not denied_at(answer, (start, start + 5), "60 °C")


# ---------------------------------------------------------------- synthetic sources


def test_a_name_a_real_source_also_holds_is_no_use_of_a_synthetic_one() -> None:
    from pytest_ragv2.gold.schema import Case
    from pytest_ragv2.scoring.answers import score_transcript
    from pytest_ragv2.systems.outputs import RetrievedItem
    from tests.scoring.test_answer_scoring import NO_LANGID, kinds, one_turn

    case = Case.model_validate(
        {
            "id": "D1",
            "category": "exact_lookup",
            "prompts": {"en": "What pressure does the TVM 30-H2 reach?"},
            "expected_answer": {"required_claims": [{"kind": "quantity", "value": "250 bar"}]},
            "required_evidence": [],
        }
    )
    datasheet = RetrievedItem(
        rank=1,
        text="TVM 30-H2: maximum discharge pressure 250 bar at 5 bar(g) suction.",
        file_id="datenblatt-tvm-30",
        filename="datenblatt-tvm-30.pdf",
    )
    records = RetrievedItem(
        rank=2,
        text="project_id: TW-P-24-003 | compressor: TVM 30-H2 | pressure_bar: 350",
        file_id="digital-twin-projekte-2024",
        filename="digital-twin-projekte-2024.json",
        metadata={"synthetic": True},
    )
    prompt = "What pressure does the TVM 30-H2 reach?"

    def vetoes(answer: str) -> list[str]:
        turn = one_turn(prompt, answer, evidence=[datasheet, records])
        return kinds(score_transcript(case, "en", turn, options=NO_LANGID))

    assert "synthetic_as_confirmed" not in vetoes("The TVM 30-H2 reaches 250 bar.")
    assert "synthetic_as_confirmed" in vetoes("TW-P-24-003 runs a TVM 30-H2 at 250 bar.")
    # a value only the synthetic record holds, the record named by the question alone
    assert "synthetic_as_confirmed" in vetoes("The installation runs at 350 bar.")
    assert "synthetic_as_confirmed" not in vetoes(
        "The synthetic demo record gives 350 bar for the installation."
    )


# ----------------------------------------------------------- hard-wrapped answers


@pytest.mark.parametrize(
    ("text", "sentences"),
    [
        ("Il est renouvelé par tacite reconduction, par périodes\nsuccessives de 12 mois.", 1),
        ("Die Frist beträgt\nsechzig Tage, danach\nendet der Zugang.", 1),
        ("It renews for\nsuccessive 12-month periods.\nThe notice is 90 days.", 2),
        ("- erste Zeile\n- zweite Zeile", 2),
        ("Voici :\nles valeurs du tableau", 2),
        ("| a | b |\n| c | d |", 2),
    ],
)
def test_a_hard_wrapped_line_goes_on_with_its_sentence(text: str, sentences: int) -> None:
    assert len(sentence_spans(text)) == sentences


# ---------------------------------------------------------------- citations


def _citation_checks(answer: str, evidence: list[tuple[str, str]]) -> dict[str, str]:
    from pytest_ragv2.scoring.citations import check_citations
    from pytest_ragv2.systems.kb_tool import resolve_citations
    from pytest_ragv2.systems.outputs import RetrievedItem

    items = [
        RetrievedItem(rank=rank, text=text, file_id=name, filename=f"{name}.pdf")
        for rank, (name, text) in enumerate(evidence, 1)
    ]
    facts = answer_facts(answer, "en", text_support("\n".join(text for _, text in evidence)))
    result = check_citations(answer, resolve_citations(answer, items), items, facts, ())
    return {check.marker: check.verdict for check in result.checks}


def test_each_marker_of_a_sentence_cites_the_part_before_it() -> None:
    evidence = [
        (
            "recovery-plan",
            "The recovery plan is tested twice a year, in March 2026 and October 2026.",
        ),
        ("security-policy", "The system is certified ISO 27001 since November 2023."),
    ]
    answer = (
        "The only tests it mentions are the recovery tests of March 2026 and October 2026 [1], "
        "and the audit of the ISO 27001 certification [2]."
    )
    assert _citation_checks(answer, evidence) == {"[1]": "correct", "[2]": "correct"}
    swapped = answer.replace("[1]", "[9]").replace("[2]", "[1]").replace("[9]", "[2]")
    assert _citation_checks(swapped, evidence) == {"[1]": "wrong", "[2]": "wrong"}


# ------------------------------------------------------- review only where it decides


def test_a_claim_said_in_other_words_is_reviewed_only_where_the_ruling_decides() -> None:
    from pytest_ragv2.gold.schema import Case
    from pytest_ragv2.scoring.answers import score_transcript
    from pytest_ragv2.systems.outputs import RetrievedItem
    from tests.scoring.test_answer_scoring import NO_LANGID, one_turn

    contract = RetrievedItem(
        rank=1,
        text="Durée initiale : 36 mois à compter du 1er octobre 2024, puis renouvellement par "
        "tacite reconduction pour des périodes successives de 12 mois.",
        file_id="contrat",
        filename="contrat.docx",
    )
    prompt = "Quelle est la durée du contrat ?"
    case = Case.model_validate(
        {
            "id": "R1",
            "category": "exact_lookup",
            "prompts": {"fr": prompt},
            "expected_answer": {
                "required_claims": [
                    {"kind": "quantity", "value": "36 mois", "severity": "high"},
                    {"kind": "date", "value": "1er octobre 2024", "severity": "high"},
                    "tacite reconduction pour des périodes successives de 12 mois",
                ]
            },
            "required_evidence": [],
        }
    )

    def review(answer: str) -> list[str]:
        turn = one_turn(prompt, answer, evidence=[contract])
        return score_transcript(case, "fr", turn, options=NO_LANGID).turns[0].review

    # the renewal in other words, everything else right: the ruling decides PASS or PARTIAL
    assert review(
        "36 mois dès le 1er octobre 2024, puis reconduction pour des périodes de 12 mois."
    )
    # the start date wrong and vetoed: the run fails whatever the ruling
    assert not review(
        "36 mois dès le 1er janvier 2024, puis reconduction pour des périodes de 12 mois."
    )


# --------------------------------------------------- certifications and compatibility


@pytest.mark.parametrize(
    ("lang", "text", "refuses"),
    [
        ("fr", "Non, la société n'est pas certifiée HDS.", False),
        ("fr", "Le compresseur n'est pas certifié pour l'hydrogène.", True),
        ("de", "Nein, das Unternehmen ist nicht nach TISAX zertifiziert.", False),
        ("de", "Der Verdichter ist nicht für Zone 0 zertifiziert.", True),
        ("en", "No, the company is not certified to HDS.", False),
        ("en", "The unit is not certified for hydrogen service.", True),
    ],
)
def test_a_missing_certification_is_a_fact_unless_it_is_for_a_use(
    lang: str, text: str, refuses: bool
) -> None:
    reading = read_refusal(text, lang, NO_PHRASES)
    assert bool(reading.refusals) is refuses


# ------------------------------------------- a tempting value beside the right one


def test_a_tempting_operand_beside_the_right_result_is_context() -> None:
    from pytest_ragv2.gold.schema import ExpectedAnswer
    from pytest_ragv2.scoring.claim_offers import offered_forbidden
    from pytest_ragv2.scoring.claims import score_claims

    expected = ExpectedAnswer.model_validate(
        {
            "required_claims": [{"kind": "money", "value": "250 k€"}],
            "forbidden_claims": [
                {"kind": "money", "value": "1 100 k€"},
                {"kind": "money", "value": "850 k€"},
            ],
        }
    )
    answer = "EUR 250k more.\n\n- 2025: EUR 1,100k\n- 2024: EUR 850k\n- Difference: EUR 250k"
    claims = score_claims(expected, answer, "en")
    assert len(claims.forbidden_found) == 2
    assert offered_forbidden(claims, expected, None, answer=answer, lang="en") == ()
    alone = "EUR 250k more.\n\n- 2025: EUR 1,100k\n- 2024: EUR 850k"
    claims = score_claims(expected, alone, "en")
    assert len(offered_forbidden(claims, expected, None, answer=alone, lang="en")) == 2


@pytest.mark.parametrize(
    ("lang", "claim", "answer", "wrong"),
    [
        (
            "fr",
            "les jours ouvrés de 9 h à 18 h",
            "Joignable les jours ouvrés de 8 h à 20 h.",
            "8 h",
        ),
        ("en", "10:00 to 15:00", "Core hours run from 9:00 to 15:00 CET.", "9:00"),
        (
            "de",
            "Flottensteuerung für mehr als 40 Fahrzeuge",
            "Flottensteuerung für bis zu 40 Fahrzeuge.",
            "40",
        ),
        ("de", "les jours ouvrés de 9 h à 18 h", "Werktags von 9 bis 20 Uhr.", "20 Uhr"),
        # nothing ties the sentence to the claim: no value of it, another language
        ("de", "les jours ouvrés de 9 h à 18 h", "Werktags von 8 bis 20 Uhr.", None),
        # a bare value is a typed claim's business
        ("fr", "1 240", "| T1 | 1,24 M€ | 18 |", None),
        # the claim stated: nothing contradicts it
        ("fr", "les jours ouvrés de 9 h à 18 h", "Les jours ouvrés, de 9h00 à 18h00.", None),
    ],
)
def test_a_text_claim_said_with_another_value_is_contradicted(
    lang: str, claim: str, answer: str, wrong: str | None
) -> None:
    from pytest_ragv2.scoring.claim_contradictions import contradicting_value

    span = contradicting_value(_text(claim), answer, lang)
    assert (answer[span[0] : span[1]] if span else None) == wrong


# ------------------------------------------------------------ claims about a stance


def _missed_after_scoring(lang: str, claim: str, answer: str) -> list[str]:
    from pytest_ragv2.gold.schema import Case
    from pytest_ragv2.scoring.answers import score_transcript
    from tests.scoring.test_answer_scoring import NO_LANGID, one_turn

    prompt = "?"
    case = Case.model_validate(
        {
            "id": "S1",
            "category": "cross_document",
            "prompts": {lang: prompt},
            "expected_answer": {"required_claims": [claim]},
            "required_evidence": [],
        }
    )
    turn = one_turn(prompt, answer)
    return score_transcript(case, lang, turn, options=NO_LANGID).turns[0].required_missed


@pytest.mark.parametrize(
    ("lang", "claim", "answer", "stated"),
    [
        ("de", "Widerspruch zwischen den Quellen", "Die Angaben sind nicht eindeutig.", True),
        ("fr", "les deux sources se contredisent", "Les documents divergent sur ce point.", True),
        ("en", "the sources conflict", "The two documents are inconsistent here.", True),
        ("en", "the sources conflict", "The two documents agree: 2018.", False),
        (
            "de",
            "Synthetische Demodaten, keine bestätigten Projekte",
            "Achtung: synthetic demo records.",
            True,
        ),
        ("fr", "données de démonstration synthétiques", "Ce sont des projets confirmés.", False),
    ],
)
def test_a_claim_about_a_stance_is_stated_by_any_statement_of_it(
    lang: str, claim: str, answer: str, stated: bool
) -> None:
    assert (_missed_after_scoring(lang, claim, answer) == []) is stated


@pytest.mark.parametrize(
    ("lang", "text", "refuses"),
    [
        ("de", "Ein Ablaufdatum enthält die Bescheinigung nicht.", True),
        ("de", "Die Bescheinigung hat kein Ablaufdatum.", False),
        ("fr", "Le contrat ne contient aucune clause de pénalité.", True),
        ("fr", "Le certificat n'a pas de date d'expiration.", False),
        ("en", "The certificate does not contain an expiry date.", True),
        ("en", "The certificate has no expiry date.", False),
        ("de", "Der Verdichter läuft nicht.", False),
    ],
)
def test_a_document_that_is_also_a_thing_is_silent_only_by_what_it_contains(
    lang: str, text: str, refuses: bool
) -> None:
    assert bool(read_refusal(text, lang, NO_PHRASES).refusals) is refuses


# ---------------------------------------------------------------- softened constraints


@pytest.mark.parametrize(
    ("lang", "claim", "answer", "softened"),
    [
        ("en", "the valve must not be adjusted", "The valve shouldn't normally be adjusted.", True),
        ("en", "the valve must not be adjusted", "The valve must never be adjusted.", False),
        ("de", "nur in Zone 1 oder Zone 2 zulässig", "Empfohlen wird Zone 1 oder Zone 2.", True),
        ("de", "nur in Zone 1 oder Zone 2 zulässig", "Erlaubt ist nur Zone 1 oder 2.", False),
        (
            "fr",
            "chaque séjour doit être approuvé",
            "Il est conseillé de faire approuver chaque séjour.",
            True,
        ),
        ("fr", "chaque séjour doit être approuvé", "Chaque séjour doit être approuvé.", False),
        # a recommendation about something else softens nothing
        ("en", "the valve must not be adjusted", "You should read the manual first.", False),
    ],
)
def test_a_constraint_said_as_a_recommendation_is_weakened(
    lang: str, claim: str, answer: str, softened: bool
) -> None:
    from pytest_ragv2.scoring.modality import weakened

    assert (weakened(_text(claim), answer, lang) is not None) is softened


# ------------------------------------------- what is usual elsewhere, after a refusal


@pytest.mark.parametrize(
    ("lang", "text", "guessed"),
    [
        ("fr", "Les documents ne le précisent pas, mais le préavis habituel est d'un mois.", True),
        ("fr", "Les documents ne le précisent pas ; il faut le demander au service client.", False),
        ("de", "Die Unterlagen nennen keine Frist; üblicherweise sind es 30 Tage.", True),
        ("de", "Die Unterlagen nennen keine Frist.", False),
        ("en", "The documents don't say, but there would be no open vulnerabilities.", True),
        ("en", "The documents don't give the date; typically it is audited yearly.", True),
        ("en", "The documents don't give the date of the last test.", False),
    ],
)
def test_what_is_usual_elsewhere_after_a_refusal_is_a_guess_at_the_answer(
    lang: str, text: str, guessed: bool
) -> None:
    reading = read_refusal(text, lang, NO_PHRASES)
    assert reading.refusals
    assert reading.guessed is guessed


# ------------------------------------------------- approximate or usual values


@pytest.mark.parametrize(
    ("lang", "answer", "hedged_value"),
    [
        ("en", "A calendar month usually has 21 working days.", True),
        ("en", "That is about four weeks.", True),
        ("fr", "Un mois compte généralement 21 jours ouvrés.", True),
        ("de", "Das sind etwa vier Wochen.", True),
        ("de", "Der Starter-Plan erlaubt 100 Anfragen pro Minute.", False),
    ],
)
def test_a_value_given_as_approximate_or_usual_is_hedged(
    lang: str, answer: str, hedged_value: bool
) -> None:
    from pytest_ragv2.scoring.vetoes import hedged

    facts = [f for f in answer_facts(answer, lang, text_support("")) if f.kind == "number"]
    assert facts
    assert bool(hedged(answer, facts)) is hedged_value


# ---------------------------------------------------------------- swapped values


def _swaps(lang: str, claims: list[dict[str, str]], answer: str) -> list[tuple[str, str]]:
    from pytest_ragv2.gold.schema import ExpectedAnswer
    from pytest_ragv2.scoring.claim_values import swapped_values
    from pytest_ragv2.scoring.claims import score_claims

    expected = ExpectedAnswer.model_validate({"required_claims": claims})
    scored = score_claims(expected, answer, lang)
    swaps = swapped_values(answer, scored.required_matched, None, scored.required_missed)
    return [(m.found, given_for.text) for m, given_for in swaps]


PLANS = [
    {"text": "Business: 1 000 requests per minute", "kind": "count", "value": "1 000"},
    {"text": "Enterprise: 5 000 requests per minute", "kind": "count", "value": "5 000"},
]


@pytest.mark.parametrize(
    ("lang", "answer", "swapped"),
    [
        ("en", "Business: 5,000 requests a minute, Enterprise: 1,000.", 2),
        ("en", "Business: 1,000 requests a minute, Enterprise: 5,000.", 0),
        ("en", "The limits are 1,000 and 5,000 requests a minute for Business and Enterprise.", 0),
        ("de", "| Business | 5.000 |\n| Enterprise | 1.000 |", 2),
        ("fr", "Plan Business : 1 000 requêtes par minute ; plan Enterprise : 5 000.", 0),
        ("fr", "Plan Business : 5 000 requêtes par minute ; plan Enterprise : 1 000.", 2),
    ],
)
def test_a_value_given_for_what_another_claim_is_about_is_swapped(
    lang: str, answer: str, swapped: int
) -> None:
    assert len(_swaps(lang, PLANS, answer)) == swapped


def test_claims_written_as_bare_values_are_never_paired() -> None:
    bare = [{"kind": "count", "value": "1 000"}, {"kind": "count", "value": "5 000"}]
    assert _swaps("en", bare, "Business: 5,000 requests a minute, Enterprise: 1,000.") == []


def test_a_value_given_for_a_missed_claim_of_its_kind_is_swapped_onto_it() -> None:
    claims = [
        {"text": "safety valve setting 15.5 bar", "kind": "quantity", "value": "15.5 bar"},
        {"text": "maximum operating pressure 14 bar", "kind": "quantity", "value": "14 bar"},
    ]
    answer = "The safety valve is set to 14 bar, the same as the maximum operating pressure."
    assert _swaps("en", claims, answer) == [("14 bar", "safety valve setting 15.5 bar")]
    right = "The safety valve is set to 15.5 bar; the maximum operating pressure is 14 bar."
    assert _swaps("en", claims, right) == []


@pytest.mark.parametrize(
    ("answer", "offered"),
    [
        ("Aktuell gilt Revision 2 (die Erstausgabe war Revision 1).", False),
        ("Aktuell gilt Revision 1.", True),
    ],
)
def test_a_number_that_names_beside_the_right_one_is_context(answer: str, offered: bool) -> None:
    from pytest_ragv2.gold.schema import ExpectedAnswer
    from pytest_ragv2.scoring.claim_offers import offered_forbidden
    from pytest_ragv2.scoring.claims import score_claims

    expected = ExpectedAnswer.model_validate(
        {
            "required_claims": [{"text": "Revision 2", "kind": "identifier", "value": "2"}],
            "forbidden_claims": [{"text": "Revision 1", "kind": "identifier", "value": "1"}],
        }
    )
    claims = score_claims(expected, answer, "de")
    assert bool(offered_forbidden(claims, expected, None, answer=answer, lang="de")) is offered


@pytest.mark.parametrize(
    ("lang", "claim", "answer", "lifted_limit"),
    [
        ("fr", "50 exports planifiés par jour", "Des exports planifiés illimités.", True),
        ("de", "50 geplante Exporte pro Tag", "Geplante Exporte sind unbegrenzt möglich.", True),
        ("en", "50 scheduled exports a day", "Scheduled exports are unlimited.", True),
        ("en", "50 scheduled exports a day", "Storage is unlimited.", False),
    ],
)
def test_a_limit_said_to_be_none_is_lifted(
    lang: str, claim: str, answer: str, lifted_limit: bool
) -> None:
    from pytest_ragv2.scoring.modality import lifted

    typed = Claim(text=claim, kind="count", value="50")
    assert (lifted(typed, answer) is not None) is lifted_limit


# ------------------------------------------------ what the sources hold, near a refusal


@pytest.mark.parametrize(
    ("lang", "text"),
    [
        (
            "fr",
            "Le taux 2024 n'est pas chiffré dans les documents. Les notes du comité indiquent "
            "seulement que le taux 2025 (11,2 %) est en baisse.",
        ),
        (
            "de",
            "Ein Preis steht in den Unterlagen nicht. Die Preisliste nennt nur 350 € für das "
            "Modul A.",
        ),
        (
            "en",
            "The documents don't state a Starter figure. The product guide gives targets "
            "(not guarantees) only for Business (99.5 %).",
        ),
    ],
)
def test_what_a_document_says_beside_a_refusal_is_what_the_sources_hold(
    lang: str, text: str
) -> None:
    reading = read_refusal(text, lang, NO_PHRASES)
    assert reading.clauses[0].role == "refusal"
    assert all(c.role in ("refusal", "source", "set_apart") for c in reading.clauses), [
        (c.role, c.text) for c in reading.clauses
    ]


@pytest.mark.parametrize(
    ("lang", "answer", "denied"),
    [
        ("de", "Nicht mit SK-350A (Ziffer 0, Stufe 1-2, 6 000 Bh) verwechseln.", True),
        ("en", "Don't confuse it with MV-3012-S, the stage-1 valve.", True),
        ("fr", "La pièce SK-350A (6 000 h) convient.", False),
    ],
)
def test_a_parenthesis_is_denied_with_what_it_qualifies(
    lang: str, answer: str, denied: bool
) -> None:
    from pytest_ragv2.scoring.claim_denials import denied_at

    target = "6 000" if "6 000" in answer else "MV-3012-S"
    start = answer.index(target)
    assert denied_at(answer, (start, start + len(target)), target) is denied


@pytest.mark.parametrize(
    ("text", "identifiers"),
    [
        ("a 10-to-90 % charge in 52 min", []),
        ("targets for end-2026 and pre-2020 units", []),
        ("parts SK-35OA and KV-4502-8", ["identifier:SK-35-OA", "identifier:KV-4502-8"]),
    ],
)
def test_a_short_lower_case_word_joined_to_a_number_is_no_identifier(
    text: str, identifiers: list[str]
) -> None:
    found = [v.key for v in read_values(text, "en") if v.kind == "identifier"]
    assert found == identifiers


@pytest.mark.parametrize(
    ("lang", "text", "key"),
    [
        ("de", "9500 Kubikmeter pro Stunde", "quantity:m³/h:9500"),
        ("fr", "neuf mille cinq cents mètres cubes par heure", "quantity:m³/h:9500"),
        ("en", "310 normal cubic metres per hour", "quantity:Nm³/h:310"),
        ("en", "ninety kilowatts", "quantity:W:90000"),
        ("fr", "soixante pascals", "quantity:Pa:60"),
        ("de", "höchstens 60 Pa", "quantity:Pa:60"),
    ],
)
def test_a_unit_written_in_words_is_the_unit(lang: str, text: str, key: str) -> None:
    assert [value.key for value in read_values(text, lang)] == [key]


def test_a_typed_claim_whose_text_is_a_constraint_is_weakened_by_a_recommendation() -> None:
    from pytest_ragv2.scoring.modality import weakened

    claim = Claim(
        text="avec une gaine, la pression résiduelle ne doit pas dépasser 60 Pa",
        kind="quantity",
        value="60 Pa",
    )
    assert weakened(claim, "Avec une gaine, environ 60 Pa est recommandée.", "fr") is not None
    assert weakened(claim, "Avec une gaine, 60 Pa au maximum.", "fr") is None


def test_hours_and_minutes_of_a_range_are_both_on_the_clock() -> None:
    assert [v.key for v in read_values("de 9 h 30 à 18 h", "fr")] == [
        "time:09:30",
        "time:18:00",
    ]


@pytest.mark.parametrize(
    ("lang", "text"),
    [
        (
            "de",
            "Eine Garantiedauer steht dafür nirgends. Ausdrücklich geregelt sind nur 24 Monate "
            "Grundgarantie.",
        ),
        (
            "en",
            "There is no price for extra users in the documents, but the only pack it prices "
            "is the storage pack at €19.",
        ),
        (
            "fr",
            "La politique ne fixe aucune fréquence de changement. Elle impose seulement 16 "
            "caractères pour les comptes à privilèges.",
        ),
    ],
)
def test_only_what_there_is_beside_a_refusal_is_set_apart(lang: str, text: str) -> None:
    reading = read_refusal(text, lang, NO_PHRASES)
    assert reading.clauses[0].role == "refusal"
    assert "fact" not in [c.role for c in reading.clauses], [
        (c.role, c.text) for c in reading.clauses
    ]


def test_a_pronoun_goes_on_from_the_last_source_subject() -> None:
    text = (
        "The security policy only sets a rule for privileged accounts: passwords of at least "
        "16 characters. It gives no minimum length for ordinary accounts."
    )
    roles = [c.role for c in read_refusal(text, "en", NO_PHRASES).clauses]
    assert roles[-1] == "refusal"


# ---------------------------------------------------------------- mixed languages


@pytest.mark.parametrize(
    ("expected", "answer", "other"),
    [
        (
            "de",
            "That is not covered by the documents I have – die Sicherheitsrichtlinie sagt "
            "nichts über Phishing-Schulungen.",
            "en",
        ),
        (
            "en",
            "The policy was validated by management on 6 October 2025. Les sauvegardes "
            "complètes quotidiennes sont conservées trente-cinq jours.",
            "fr",
        ),
        (
            "fr",
            "La politique a été validée par la direction le 6 octobre 2025. Les sauvegardes "
            "complètes sont conservées trente-cinq jours.",
            None,
        ),
        ("fr", "The policy was validated by management in October 2025.", None),
    ],
)
def test_an_answer_partly_in_another_language_is_mixed(
    expected: str, answer: str, other: str | None
) -> None:
    from pytest_ragv2.scoring.language import other_language_part

    assert other_language_part(answer, ("fr", "de", "en"), expected) == other


def test_a_table_row_is_read_with_its_header() -> None:
    answer = (
        "| Plan | Prix | Utilisateurs inclus | Sources de données |\n"
        "|---|---|---|---|\n"
        "| Starter | 89 € | 3 | 5 |\n"
        "| Business | 290 € | 25 | 20 |"
    )
    claim = _text("25 utilisateurs ; 20 sources de données")
    assert claim_found(claim, answer, "fr").matched
    assert not claim_found(
        _text("25 utilisateurs ; 20 sources de données"), "25 ; 20", "fr"
    ).matched


# ---------------------------------------------------------------- units a number shares


@pytest.mark.parametrize(
    ("lang", "text", "keys"),
    [
        (
            "en",
            "Salaries 790 + hosting 115 + premises 45 = 950 k€.",
            ["money:EUR:790000", "money:EUR:115000", "money:EUR:45000", "money:EUR:950000"],
        ),
        (
            "fr",
            "Total : 1 240 + 1 378 = **2 618 k€**.",
            ["money:EUR:1240000", "money:EUR:1378000", "money:EUR:2618000"],
        ),
        ("de", "Rund 6,2 m³/min mehr (13,4 statt 7,2 m³/min).", None),
        # a factor is no term: "4 × 290 €" is no 4 €
        ("fr", "4 × 290 € = 1 160 €", ["count:4", "money:EUR:290", "money:EUR:1160"]),
        ("en", "In 2025, revenue was 5,763 k€.", ["date:year:2025", "money:EUR:5763000"]),
        ("de", "also 340 kg × 0,8 = 272 kg", ["quantity:g:340000", "quantity:g:272000"]),
    ],
)
def test_the_terms_of_a_sum_or_comparison_share_the_unit_after_the_last(
    lang: str, text: str, keys: list[str] | None
) -> None:
    read = read_values(text, lang)
    if keys is None:  # the three quantities are cubic metres per minute, none a bare number
        assert [value.kind for value in read] == ["quantity"] * 3
        assert read[1].text == "13,4"
        assert read[1].dimension == read[2].dimension
    else:
        assert [value.key for value in read] == keys


@pytest.mark.parametrize(
    ("lang", "table", "kind"),
    [
        ("fr", "| Trimestre | CA (k€) | Clients |\n|---|---|---|\n| T1 | 1 240 | 18 |", "money"),
        ("de", "| Modell | Liefermenge [m³/min] |\n|---|---|\n| TVS 75-08 | 13,4 |", "quantity"),
        ("en", "| Plan | Price (€) | Users |\n|---|---|---|\n| Business | 290 | 25 |", "money"),
    ],
)
def test_a_table_cell_takes_the_unit_its_column_header_names(
    lang: str, table: str, kind: str
) -> None:
    read = [value for value in read_values(table, lang) if value.kind != "identifier"]
    assert read[0].kind == kind
    # the column without a unit keeps its bare number
    assert all(value.kind == "count" for value in read[1:])


# ---------------------------------------------------------------- the answer's own language


@pytest.mark.parametrize(
    ("lang", "prompt", "claim", "answer"),
    [
        (
            "de",
            "Wie viel Kühlluft braucht der TVS 75?",
            {"text": "Kühlluftbedarf 9 500 m³/h", "kind": "quantity", "value": "9 500 m³/h"},
            "According to the operating manual, the TVS 75 needs 9,500 m³/h of cooling air.",
        ),
        (
            "fr",
            "Quel est le chiffre d'affaires 2025 ?",
            {"text": "CA 2025 = 5 763 k€", "kind": "money", "value": "5 763 k€"},
            "Adding up the four quarters, the annual revenue for 2025 comes to 5,763 k€.",
        ),
        (
            "en",
            "What is the cooling air demand?",
            {"text": "cooling air 9,500 m³/h", "kind": "quantity", "value": "9,500 m³/h"},
            "Laut Betriebsanleitung braucht der Verdichter 9.500 m³/h Kühlluft pro Stunde.",
        ),
    ],
)
def test_an_answer_in_another_language_has_its_numbers_read_that_way(
    lang: str, prompt: str, claim: dict[str, str], answer: str
) -> None:
    from pytest_ragv2.gold.schema import Case
    from pytest_ragv2.scoring.answers import score_transcript
    from tests.scoring.test_answer_scoring import one_turn

    case = Case.model_validate(
        {
            "id": "X01",
            "category": "exact_lookup",
            "prompts": {lang: prompt},
            "expected_answer": {"required_claims": [claim]},
            "required_evidence": [],
        }
    )
    turn = score_transcript(case, lang, one_turn(prompt, answer)).turns[0]
    assert turn.required_found == 1
    assert not turn.unsupported or all("9" not in text[:1] for text in turn.unsupported)
    assert turn.language_detected != lang  # still the wrong language for the question


def test_a_claim_subject_is_not_looked_for_in_an_answer_of_another_language() -> None:
    from pytest_ragv2.gold.schema import Case
    from pytest_ragv2.scoring.answers import score_transcript
    from tests.scoring.test_answer_scoring import one_turn

    prompt = "Quelle est l'autonomie du X2 et la durée de recharge ?"
    case = Case.model_validate(
        {
            "id": "X02",
            "category": "exact_lookup",
            "prompts": {"fr": prompt},
            "expected_answer": {
                "required_claims": [
                    {
                        "text": "autonomie de 11,5 heures par charge",
                        "kind": "quantity",
                        "value": "11,5 heures",
                    },
                    {
                        "text": "recharge de 10 % à 90 % en 52 minutes",
                        "kind": "quantity",
                        "value": "52 minutes",
                    },
                ]
            },
            "required_evidence": [],
        }
    )
    answer = (
        "The Nimbus X2 runs for 11.5 hours per charge, and charging from 10 % to 90 % takes "
        "52 minutes."
    )
    turn = score_transcript(case, "fr", one_turn(prompt, answer)).turns[0]
    # "charging" is no French "charge": the 52 minutes are not swapped onto the autonomy
    assert turn.required_found == 2
    assert not turn.contradicted


# ---------------------------------------------------------------- values not swapped


CATALOGUE = [
    {
        "text": "licence Business du contrat Meridia : 1 160 € HT par mois pour 4 entités",
        "kind": "money",
        "value": "1 160 €",
    },
    {
        "text": "prix catalogue du plan Business : 290 € HT par mois (par espace de travail)",
        "kind": "money",
        "value": "290 €",
    },
]


def test_a_value_also_given_for_its_own_subject_is_not_swapped() -> None:
    answer = (
        "Le contrat facture la licence 1 160 € HT par mois pour 4 entités, soit 290 € par "
        "entité, ce qui correspond au prix catalogue du plan Business (290 € HT par mois)."
    )
    assert _swaps("fr", CATALOGUE, answer) == []
    # given only per entity, the catalogue price is still given for the licence's subject
    alone = (
        "Le contrat facture la licence 1 160 € HT par mois pour 4 entités, soit 290 € par entité."
    )
    assert _swaps("fr", CATALOGUE, alone) == [("290 €", CATALOGUE[0]["text"])]


@pytest.mark.parametrize(
    ("lang", "answer", "words"),
    [
        ("en", "Adding the lines: salaries 790 + hosting 115 = 905 k€.", "total salaries hosting"),
        ("de", "Summe der Zeilen: Gehälter 790 + Hosting 115 = 905 k€.", "Summe Gehälter Hosting"),
        (
            "fr",
            "En additionnant : salaires 790 + hébergement 115 = 905 k€.",
            "total salaires hébergement",
        ),
    ],
)
def test_the_result_of_a_computation_is_not_swapped_onto_its_terms(
    lang: str, answer: str, words: str
) -> None:
    total, salaries, hosting = words.split()
    claims = [
        {"text": f"{total} 905 k€", "kind": "money", "value": "905 k€"},
        {"text": f"{salaries} 790 k€", "kind": "money", "value": "790 k€"},
        {"text": f"{hosting} 115 k€", "kind": "money", "value": "115 k€"},
    ]
    assert _swaps(lang, claims, answer) == []


@pytest.mark.parametrize(
    ("lang", "text"),
    [
        (
            "fr",
            "Cela correspond exactement au prix catalogue du plan Business pour chaque entité\n"
            "(290 € HT par mois) [2].",
        ),
        (
            "de",
            "Das entspricht genau dem Listenpreis des Business-Tarifs für jede einzelne Einheit\n"
            "(290 € netto pro Monat) [2].",
        ),
        (
            "en",
            "This is exactly the catalogue price of the Business plan for every single entity\n"
            "(€290 excl. VAT per month) [2].",
        ),
    ],
)
def test_a_long_line_going_on_with_a_bracket_is_one_sentence(lang: str, text: str) -> None:
    assert len(sentence_spans(text)) == 1


# ---------------------------------------------------------------- refusals that name things


def _verdict_and_roles(lang: str, text: str) -> tuple[str, list[str]]:
    reading = read_refusal(text, lang, NO_PHRASES)
    return reading.verdict, [clause.role for clause in reading.clauses]


@pytest.mark.parametrize(
    ("lang", "text"),
    [
        (
            "en",
            "The TVK 350 datasheet doesn't give a cooling-water figure: it lists the discharge "
            "pressure and the 90 kW motor.",
        ),
        (
            "fr",
            "La politique de télétravail ne mentionne pas le coworking. Elle prévoit une "
            "indemnité d'équipement de 650 €.",
        ),
        (
            "de",
            "Das Datenblatt des TVK 350 nennt keinen Kühlwasserbedarf. Es nennt den Enddruck "
            "und den 90-kW-Motor.",
        ),
    ],
)
def test_a_singular_pronoun_with_a_text_verb_goes_on_from_a_document(lang: str, text: str) -> None:
    verdict, roles = _verdict_and_roles(lang, text)
    assert verdict == "refuses"
    assert roles == ["refusal", "source"]


@pytest.mark.parametrize(
    ("lang", "text"),
    [
        ("en", "The TVK 350 datasheet gives the pressure. It is rated at 90 kW."),
        ("fr", "La fiche du TVK 350 donne la pression. Il est équipé d'un moteur de 90 kW."),
    ],
)
def test_a_singular_pronoun_without_a_text_verb_may_be_the_product(lang: str, text: str) -> None:
    _, roles = _verdict_and_roles(lang, text)
    assert roles[-1] == "fact"


@pytest.mark.parametrize(
    ("lang", "text"),
    [
        (
            "en",
            "The specification gives IP54 for the robot itself, but it says nothing about the "
            "charging station's rating.",
        ),
        (
            "fr",
            "La spécification donne IP54 pour le robot lui-même, mais elle ne dit rien de "
            "l'indice de la station de charge.",
        ),
        (
            "de",
            "Die Spezifikation gibt IP54 für den Roboter selbst an, aber sie sagt nichts über "
            "die Schutzart der Ladestation.",
        ),
    ],
)
def test_a_contrast_goes_on_from_a_document_subject(lang: str, text: str) -> None:
    verdict, roles = _verdict_and_roles(lang, text)
    assert verdict == "refuses"
    assert roles[-1] == "refusal"


@pytest.mark.parametrize(
    ("lang", "text"),
    [
        ("de", "Das geht über das hinaus, was mir vorliegt."),
        ("fr", "Cela dépasse ce qu'on m'a fourni."),
        ("en", "That goes past what I was given."),
        ("de", "Die Ausschussnotizen enthalten keine Kennzahl zur Net Revenue Retention."),
    ],
)
def test_what_goes_beyond_what_was_given_is_refused(lang: str, text: str) -> None:
    assert _verdict_and_roles(lang, text) == ("refuses", ["refusal"])


@pytest.mark.parametrize(
    ("lang", "text"),
    [
        ("fr", "La fiche n'indique pas ce besoin. Il faudrait demander la valeur à Tarnwald."),
        ("de", "Das Datenblatt nennt den Wert nicht. Dafür müsste man bei Tarnwald nachfragen."),
        ("en", "The datasheet does not state it. One would need to ask Tarnwald."),
    ],
)
def test_an_impersonal_pointer_elsewhere_is_courtesy(lang: str, text: str) -> None:
    assert _verdict_and_roles(lang, text) == ("refuses", ["refusal", "courtesy"])


@pytest.mark.parametrize(
    ("lang", "answer"),
    [
        (
            "en",
            "The TVK 350 datasheet gives no cooling-water figure. The 1.8 m³/h in the documents "
            "is the demand of the TVK 220, not the TVK 350.",
        ),
        (
            "fr",
            "La fiche du TVK 350 n'indique pas de besoin en eau. Le chiffre de 1,8 m³/h que l'on "
            "trouve dans la documentation concerne le TVK 220, pas le TVK 350.",
        ),
        (
            "de",
            "Das Datenblatt des TVK 350 nennt keinen Kühlwasserbedarf. Die 1,8 m³/h in den "
            "Unterlagen sind der Bedarf des TVK 220, nicht des TVK 350.",
        ),
    ],
)
def test_a_value_inside_a_refusal_is_not_offered(lang: str, answer: str) -> None:
    from pytest_ragv2.gold.schema import ExpectedAnswer
    from pytest_ragv2.scoring.claim_offers import offered_forbidden
    from pytest_ragv2.scoring.claims import score_claims

    expected = ExpectedAnswer.model_validate(
        {
            "forbidden_claims": [
                {"text": "1,8 m³/h (TVK 220)", "kind": "quantity", "value": "1,8 m³/h"}
            ]
        }
    )
    scored = score_claims(expected, answer, lang)
    assert scored.forbidden_found  # named ...
    reading = read_refusal(answer, lang, NO_PHRASES)
    assert reading.verdict == "refuses"
    # ... to be refused, not offered
    assert offered_forbidden(scored, expected, reading, answer=answer, lang=lang) == ()


@pytest.mark.parametrize(
    ("lang", "text", "key"),
    [
        ("de", "das 50-GB-Paket", "quantity:B:50000000000"),
        ("fr", "stockage inclus 100 Go", "quantity:B:100000000000"),
        ("en", "1 TB of storage", "quantity:B:1000000000000"),
        ("en", "from 10 to 20 users", "count:10"),
    ],
)
def test_storage_sizes_are_quantities_not_identifiers(lang: str, text: str, key: str) -> None:
    assert read_values(text, lang)[0].key == key


# ---------------------------------------------------------------- limits said weaker


@pytest.mark.parametrize(
    ("lang", "claim", "answer", "softened"),
    [
        (
            "fr",
            "hydrogène : pas plus de 10 % en volume (au-delà, non admis)",
            "La teneur en hydrogène est en principe limitée à 10 % en volume.",
            True,
        ),
        (
            "de",
            "Wasserstoffanteil höchstens 10 Vol.-%",
            "Der Wasserstoffanteil sollte in der Regel 10 Vol.-% nicht übersteigen.",
            True,
        ),
        (
            "en",
            "hydrogen fractions above 10 Vol.-% are not permitted",
            "The datasheet recommends keeping the hydrogen share below 10 vol.-%.",
            True,
        ),
        (
            "en",
            "hydrogen fractions above 10 Vol.-% are not permitted",
            "Hydrogen fractions above 10 vol.-% are not permitted.",
            False,
        ),
    ],
)
def test_a_limit_said_as_a_rule_of_thumb_is_weakened(
    lang: str, claim: str, answer: str, softened: bool
) -> None:
    from pytest_ragv2.scoring.modality import weakened

    typed = Claim(text=claim, kind="percent", value="10 Vol.-%")
    assert (weakened(typed, answer, lang) is not None) is softened


@pytest.mark.parametrize(
    ("lang", "answer"),
    [
        (
            "fr",
            "Il faut utiliser les appareils de l'entreprise, le VPN est recommandé hors du "
            "bureau, l'écran doit être verrouillé.",
        ),
        (
            "de",
            "Man muss Firmengeräte nutzen, das VPN wird außerhalb des Büros empfohlen, der "
            "Bildschirm muss gesperrt werden.",
        ),
        (
            "en",
            "Company devices must be used, the VPN is recommended outside the office, screens "
            "must be locked.",
        ),
    ],
)
def test_an_obligation_softened_in_one_clause_of_a_sentence_is_weakened(
    lang: str, answer: str
) -> None:
    from pytest_ragv2.scoring.modality import weakened

    claims = {
        "fr": "le VPN est obligatoire hors du bureau",
        "de": "das VPN ist außerhalb des Büros zwingend",
        "en": "the VPN is mandatory outside the office",
    }
    assert weakened(_text(claims[lang]), answer, lang) is not None


@pytest.mark.parametrize("writing", ["10 Vol.-%", "10 vol.-%", "10 vol.%", "10 Vol-%"])
def test_per_cent_by_volume_is_a_percent(writing: str) -> None:
    assert [value.key for value in read_values(writing, "de")] == ["percent:10"]


# ---------------------------------------------------------------- intervals and table rows


@pytest.mark.parametrize(
    ("lang", "text", "key"),
    [
        ("fr", "Les sources sont actualisées toutes les heures.", "quantity:s:3600"),
        ("fr", "une fois par heure", "quantity:s:3600"),
        ("de", "Die Quellen werden stündlich aktualisiert.", "quantity:s:3600"),
        ("de", "einmal pro Stunde", "quantity:s:3600"),
        ("en", "Sources are refreshed every hour.", "quantity:s:3600"),
        ("en", "once a day", "quantity:s:86400"),
        ("fr", "toutes les 5 minutes", "quantity:s:300"),
    ],
)
def test_an_interval_of_one_unit_needs_no_number(lang: str, text: str, key: str) -> None:
    assert [value.key for value in read_values(text, lang)] == [key]


@pytest.mark.parametrize(
    ("lang", "text"),
    [
        ("en", "The monthly fee is due."),
        ("fr", "La redevance mensuelle est due."),
        ("de", "Jährliche Überwachungsaudits sind nötig."),
    ],
)
def test_an_adjective_of_frequency_is_no_value(lang: str, text: str) -> None:
    assert read_values(text, lang) == ()


def _offered(lang: str, answer: str, required: list[dict[str, str]], forbidden: str) -> bool:
    from pytest_ragv2.gold.schema import ExpectedAnswer
    from pytest_ragv2.scoring.claim_offers import offered_forbidden
    from pytest_ragv2.scoring.claims import score_claims

    expected = ExpectedAnswer.model_validate(
        {
            "required_claims": required,
            "forbidden_claims": [{"text": forbidden, "kind": "quantity", "value": "24 h"}],
        }
    )
    scored = score_claims(expected, answer, lang)
    return bool(offered_forbidden(scored, expected, None, answer=answer, lang=lang))


PLAN_ROWS = [{"text": "Enterprise : toutes les 5 minutes", "kind": "quantity", "value": "5 min"}]


@pytest.mark.parametrize(
    ("lang", "row", "offered"),
    [
        # the Starter row states the Starter interval: its own role, named
        ("fr", "| Starter | toutes les 24 h |", False),
        ("de", "| Starter | alle 24 h |", False),
        ("en", "| Starter | every 24 h |", False),
        # given for Business, it is the wrong answer, whatever another row holds
        ("fr", "| Business | toutes les 24 h |", True),
        ("de", "| Business | alle 24 h |", True),
        ("en", "| Business | every 24 h |", True),
    ],
)
def test_a_table_row_states_its_own_thing(lang: str, row: str, offered: bool) -> None:
    answer = f"| Plan | Interval |\n|---|---|\n{row}\n| Enterprise | 5 min |"
    note = "24 h (intervalle du plan Starter)"
    assert _offered(lang, answer, PLAN_ROWS, note) is offered


# ---------------------------------------------------------------- claims in another language


def test_a_missed_claim_of_no_unsure_kind_waits_for_no_ruling() -> None:
    from pytest_ragv2.gold.schema import Case
    from pytest_ragv2.scoring.answers import score_transcript
    from tests.scoring.test_answer_scoring import one_turn

    prompt = "What does the policy say about older TLS versions?"
    case = Case.model_validate(
        {
            "id": "L2",
            "category": "exact_lookup",
            "prompts": {"en": prompt},
            "expected_answer": {"required_claims": ["earlier TLS versions are refused"]},
            "required_evidence": [],
        }
    )
    answer = "Data in transit uses TLS 1.3 at a minimum."
    turn = score_transcript(case, "en", one_turn(prompt, answer)).turns[0]
    assert turn.required_missed == ["earlier TLS versions are refused"]
    assert turn.review == []


@pytest.mark.parametrize(
    "answer",
    [
        "The X2 carries 272 kg on ramps. The maximum gradient is 5 % [1][2].",
        "The X2 carries 272 kg on ramps. The maximum gradient is 5 % [1] [2].",
        "The X2 carries 272 kg on ramps. The maximum gradient is 5 % [2][1].",
    ],
)
def test_a_run_of_markers_cites_its_part_together(answer: str) -> None:
    evidence = [
        ("payload", "On ramps the payload of 340 kg is reduced by 20 %, to 272 kg."),
        ("gradient", "The maximum ramp gradient is 5 %."),
    ]
    assert set(_citation_checks(answer, evidence).values()) == {"correct"}
    # alone, the payload passage does not hold the gradient
    alone = answer.replace("[2]", "").replace("[1] ", "[1]")
    assert _citation_checks(alone, evidence) == {"[1]": "wrong"}


@pytest.mark.parametrize(
    ("lang", "claim", "answer", "found"),
    [
        ("de", "revision C", "- Revision: C [1]", True),
        ("fr", "Erdgas (H- und L-Gas)", "Le gaz naturel (Erdgas H und L Gas) est admis.", True),
        ("en", "pairwise only", "Replace them pairwise. Only the kit has both.", False),
        ("en", "revision C", "The revision is Cx.", False),
    ],
)
def test_a_text_claim_is_found_whatever_punctuation_stands_between_its_words(
    lang: str, claim: str, answer: str, found: bool
) -> None:
    assert claim_found(Claim(text=claim), answer, lang).matched is found


# ---------------------------------------------------------------- validation-set kinds, round 3


@pytest.mark.parametrize(
    ("lang", "claim", "answer", "contradicted"),
    [
        (
            "fr",
            "l'authentification à deux facteurs est obligatoire pour l'administration",
            "Au moins seize caractères, authentification à deux facteurs pour l'administration.",
            False,
        ),
        (
            "de",
            "zwei Sätze je Verdichter",
            "Pro Verdichter braucht man zwanzig Liter Öl und zwei Sätze.",
            False,
        ),
        ("en", "two kits per compressor", "Each compressor needs three kits.", True),
    ],
)
def test_a_count_of_another_thing_does_not_contradict_a_count(
    lang: str, claim: str, answer: str, contradicted: bool
) -> None:
    from pytest_ragv2.scoring.claim_contradictions import contradicting_value

    assert (contradicting_value(_text(claim), answer, lang) is not None) is contradicted


@pytest.mark.parametrize(
    ("lang", "answer"),
    [
        ("en", "It came to eight hundred and twenty-five thousand euros (€0.825M)."),
        ("fr", "Cela fait huit cent vingt-cinq mille euros (0,825 M€)."),
        ("de", "Das sind achthundertfünfundzwanzigtausend Euro (0,825 Mio. €)."),
    ],
)
def test_every_writing_of_a_matched_gold_value_is_the_gold_value(lang: str, answer: str) -> None:
    from pytest_ragv2.scoring.claim_offers import gold_writings
    from pytest_ragv2.scoring.claims import score_claims

    expected = ExpectedAnswer.model_validate(
        {"required_claims": [{"kind": "money", "value": "825 k€", "severity": "high"}]}
    )
    scored = score_claims(expected, answer, lang)
    assert scored.required_matched
    assert len(gold_writings(answer, lang, scored.required_matched)) == 2


@pytest.mark.parametrize(
    ("lang", "answer", "supported"),
    [
        ("fr", "Au deuxième trimestre 2027 (avril à juin 2027).", True),
        ("en", "In Q2 2027 (April to June 2027).", True),
        ("de", "Im 2. Quartal 2027 (April bis Juni 2027).", True),
        # a month outside the quarter, or said as more precise than the quarter, is not
        ("en", "In Q2 2027 (July 2027).", False),
        ("en", "In Q2 2027, more precisely in June 2027.", False),
    ],
)
def test_a_quarter_spelled_out_in_brackets_is_supported(
    lang: str, answer: str, supported: bool
) -> None:
    facts = answer_facts(answer, lang, text_support("Livraison prévue au T2 2027."))
    # after the quarter: its months as a range (the quarter again), or a month
    spelled = [fact for fact in facts if fact.kind == "date"][1:]
    assert spelled
    assert all(fact.supported is supported for fact in spelled)


@pytest.mark.parametrize(
    ("lang", "text"),
    [
        (
            "en",
            "Nothing in these passages sets a discount. (The 3 % in the contract is a cap on "
            "yearly price increases, not a discount.)",
        ),
        (
            "fr",
            "Aucune remise n'est indiquée dans les documents. Les 3 % du contrat plafonnent "
            "la hausse annuelle, pas une remise.",
        ),
        (
            "de",
            "Eine Teilenummer steht nicht in der Ersatzteilliste. Die Ölfilter TS-7506-F "
            "gehören zum TVS 75, nicht zum TVK 110.",
        ),
    ],
)
def test_a_fact_that_says_what_it_is_not_is_set_apart(lang: str, text: str) -> None:
    verdict, roles = _verdict_and_roles(lang, text)
    assert verdict == "refuses"
    assert roles[0] == "refusal"
    assert "fact" not in roles


@pytest.mark.parametrize(
    ("lang", "answer", "named"),
    [
        (
            "de",
            "Gemeint ist der Satz KR 1100 W – nicht zu verwechseln mit dem normalen "
            "Keilriemensatz\nKR 1100 V. Er wird nach 12 000 Bh gewechselt.",
            "KR 1100 V",
        ),
        (
            "fr",
            "Il s'agit du kit KR 1100 W, à ne pas confondre avec le kit de courroies\n"
            "KR 1100 V. Il se change toutes les 12 000 heures.",
            "KR 1100 V",
        ),
        (
            "en",
            "It is the reinforced set KR 1100 W, not the standard belt set\nKR 1100 V. It is "
            "changed every 12,000 hours.",
            "KR 1100 V",
        ),
    ],
)
def test_a_denial_goes_on_over_a_wrapped_line(lang: str, answer: str, named: str) -> None:
    from pytest_ragv2.scoring.claim_denials import denied_at

    start = answer.index(named)
    assert denied_at(answer, (start, start + len(named)), "KR-1100-V (standard set)")


@pytest.mark.parametrize("writing", ["−20 … +40 °C", "-20 ... +40 °C", "-20 bis +40 °C"])
def test_a_range_written_with_an_ellipsis_shares_its_unit(writing: str) -> None:
    keys = [value.key for value in read_values(writing, "de")]
    assert keys == ["quantity:°C:-20", "quantity:°C:40"]


def test_two_claims_one_relating_the_other_are_never_swapped() -> None:
    claims = [
        {"text": "delivery 90 Nm³/h", "kind": "quantity", "value": "90 Nm³/h"},
        {
            "text": "one TVM 30-H2 is rated 30 Nm³/h, so 90 Nm³/h is three times that",
            "kind": "quantity",
            "value": "30 Nm³/h",
        },
    ]
    answer = (
        "| Delivery | 90 Nm³/h |\n\nCompared with the datasheet: one unit delivers 30 Nm³/h, "
        "so 90 Nm³/h is three times the single-unit rating."
    )
    assert _swaps("en", claims, answer) == []


# ---------------------------------------------------------------- validation-set kinds, round 4


@pytest.mark.parametrize(
    ("lang", "answer"),
    [
        ("de", "Zusätzlich wird jeden Monat eine Kopie erstellt."),
        ("fr", "Une copie est faite tous les mois."),
        ("en", "A copy is made every month."),
    ],
)
def test_an_interval_without_a_number_is_no_figure_to_ground(lang: str, answer: str) -> None:
    assert [value.implicit for value in read_values(answer, lang)] == [True]
    assert answer_facts(answer, lang, text_support("")) == []


@pytest.mark.parametrize("writing", ["+/-10 mm", "+/- 10 mm", "±10 mm"])
def test_a_tolerance_is_no_negative_number(writing: str) -> None:
    assert [value.key for value in read_values(writing, "en")] == ["quantity:m:0.01"]


@pytest.mark.parametrize(
    ("lang", "text"),
    [
        ("fr", "Aucun délai de résolution cible n'est mentionné pour ce plan dans les documents."),
        ("de", "Keine Angabe zur maximalen Lieferzeit wird in den Unterlagen genannt."),
        ("en", "No figure for the Enterprise resolution time is stated anywhere."),
        ("fr", "Là, je sors de ce que contiennent les passages fournis."),
        ("fr", "Aucun d'eux ne recense les notifications faites à la CNIL."),
        ("en", "The spare-parts list I have contains no valve plate for the TVK 350."),
    ],
)
def test_these_refuse(lang: str, text: str) -> None:
    verdict, roles = _verdict_and_roles(lang, text)
    assert verdict == "refuses"
    assert roles == ["refusal"]


@pytest.mark.parametrize(
    ("lang", "text"),
    [
        ("fr", "Aucune vulnérabilité critique n'a été trouvée lors du dernier audit de l'année."),
        ("de", "Keine Kundendaten wurden bei dem letzten Vorfall im Jahr 2025 kompromittiert."),
        ("en", "No critical vulnerability at all was found in the last audit."),
    ],
)
def test_a_negated_subject_about_the_world_still_answers(lang: str, text: str) -> None:
    verdict, _ = _verdict_and_roles(lang, text)
    assert verdict == "answers"


@pytest.mark.parametrize(
    ("claim", "value", "is_input"),
    [
        ("écart de poids réservoir − plaque de base (412 − 268)", "412 kg", True),
        ("total mensuel 1 950 € × 1,03 = 2 008,50 €", "1 950 €", True),
        ("fenêtre d'export de 60 jours (la prémisse de 30 jours est fausse)", "30 jours", False),
    ],
)
def test_a_term_of_the_claims_own_computation_is_its_input(
    claim: str, value: str, is_input: bool
) -> None:
    from pytest_ragv2.scoring.claim_values import _input_of

    [read] = read_values(value, "fr")
    assert _input_of(Claim(text=claim), read) is is_input


@pytest.mark.parametrize(
    ("lang", "value", "answer", "found", "weakened"),
    [
        ("en", "at least eight years", "Spare parts: up to eight years.", False, True),
        ("en", "at least eight years", "Spare parts: at least eight years.", True, False),
        ("en", "at least eight years", "Spare parts: eight years.", True, False),
        ("fr", "au plus 6 heures", "Au moins 6 heures de maintenance par mois.", False, True),
        ("de", "mindestens 16 Stunden", "Höchstens 16 Stunden.", False, True),
    ],
)
def test_a_bounded_typed_claim_is_not_found_under_the_opposite_bound(
    lang: str, value: str, answer: str, found: bool, weakened: bool
) -> None:
    from pytest_ragv2.scoring.modality import weakened_claims

    claim = Claim(text=f"limit: {value}", kind="quantity", value=value)
    assert claim_found(claim, answer, lang).matched is found
    missed = [] if found else [claim]
    assert bool(weakened_claims([claim], answer, lang, missed)) is weakened


@pytest.mark.parametrize(
    ("lang", "answer", "found"),
    [
        ("en", "The lowest quarter was Q2, at 58 k€.", True),
        ("en", "Lowest: the second quarter, at 58 k€.", True),
        ("de", "Am niedrigsten war das 2. Quartal.", True),
        ("fr", "Le plus bas est le deuxième trimestre.", True),
        ("fr", "Le plus bas est le T3.", False),
    ],
)
def test_a_quarter_label_is_found_in_any_languages_writing(
    lang: str, answer: str, found: bool
) -> None:
    assert claim_found(Claim(text="T2"), answer, lang).matched is found


@pytest.mark.parametrize(
    ("lang", "answer", "derived"),
    [
        ("en", "€290 − 10 % (annual-commitment discount) = €261 a month.", "261"),
        ("fr", "290 € moins la remise de 10 % font 261 € par mois.", "261"),
        ("de", "Ohne Rabatt: 12 × 290 € = 3 480 € im Jahr.", "3 480"),
    ],
)
def test_an_amount_moved_by_a_percentage_or_multiplied_by_a_count_is_derived(
    lang: str, answer: str, derived: str
) -> None:
    support = text_support("Business : 290 € HT par mois. Engagement annuel : remise de 10 %.")
    facts = answer_facts(answer, lang, support)
    [fact] = [f for f in facts if f.text.startswith(("€" + derived, derived))]
    assert fact.supported


@pytest.mark.parametrize(
    ("lang", "text"),
    [
        ("de", "Eine Höchstgeschwindigkeit steht dort nicht."),
        ("en", "The contract doesn't say."),
        ("de", "Der Vertrag sagt dazu nichts."),
    ],
)
def test_a_document_that_does_not_say_refuses(lang: str, text: str) -> None:
    assert _verdict_and_roles(lang, text) == ("refuses", ["refusal"])


def test_what_a_fact_concerns_beside_a_refusal_sets_it_apart() -> None:
    text = (
        "No notice period is stated in the contract. (The 5 working days in clause 4.2 "
        "concern scheduled maintenance.)"
    )
    verdict, roles = _verdict_and_roles("en", text)
    assert verdict == "refuses"
    assert roles == ["refusal", "set_apart"]


@pytest.mark.parametrize(
    ("text", "keys"),
    [
        # the part KR-1100-V: its last group, spaced like the rest
        ("Nicht zu verwechseln mit KR 1100 V.", ["identifier:KR-1100-V"]),
        ("A 48 volt battery.", ["quantity:V:48"]),
    ],
)
def test_a_v_after_a_number_is_a_part_number_letter_and_volts_are_spelled(
    text: str, keys: list[str]
) -> None:
    assert [value.key for value in read_values(text, "de")] == keys


def test_a_term_of_a_computation_shown_is_not_swapped() -> None:
    claims = [
        {"text": "annual cost per workspace 3 132 €", "kind": "money", "value": "3 132 €"},
        {"text": "list price 290 € per month", "kind": "money", "value": "290 €"},
    ]
    answer = (
        "€3,132 per year per workspace: €290 − 10 % (annual-commitment discount) = €261 a "
        "month, × 12 months."
    )
    assert _swaps("en", claims, answer) == []


@pytest.mark.parametrize(
    ("lang", "text", "key"),
    [
        ("en", "down to minus 20 degrees Celsius", "quantity:°C:-20"),
        ("fr", "jusqu'à moins 28 °C", "quantity:°C:-28"),
        ("de", "bis minus 28 Grad Celsius", "quantity:°C:-28"),
        ("fr", "une remise de moins 20 %", "percent:20"),
    ],
)
def test_a_temperatures_sign_may_be_written_as_a_word(lang: str, text: str, key: str) -> None:
    assert [value.key for value in read_values(text, lang)] == [key]


@pytest.mark.parametrize(
    ("prompt", "wanted"),
    [
        ("Please give me a table of the TVS 45 variants and their pressures.", "table"),
        ("Gib mir bitte eine Tabelle der Varianten mit ihrem Druck.", "table"),
        ("Dressez-moi un tableau des plans et de leurs prix.", "table"),
        # in the infinitive after a modal
        ("Peux-tu me faire un tableau avec le stockage et l'historique ?", "table"),
        ("Kannst du mir bitte eine Tabelle erstellen mit den Varianten?", "table"),
        ("Could you make me a table of the variants?", "table"),
        ("Le tableau 2 donne les valeurs ; que dit-il du plan Business ?", None),
        ("What does the table of prices say about the Business plan?", None),
        ("Welche Werte nennt die Tabelle der Varianten?", None),
    ],
)
def test_a_table_asked_for_by_a_verb_of_request_is_requested(
    prompt: str, wanted: str | None
) -> None:
    assert requested_format(prompt) == wanted


def test_prose_wrapped_with_a_semicolon_on_each_line_is_no_table() -> None:
    prose = (
        "Three records use a TVS 75: TW-P-24-001 with a TVS 75-10 on air at 10 bar in a\n"
        "2 x 100 % redundant arrangement; TW-P-25-012 with a TVS 75-14 on nitrogen as a single\n"
        "unit; and TW-P-25-014 with a TVS 75-10 on air at 10 bar, 2 x 50 % parallel."
    )
    assert format_ok(prose, "table") is False
    assert format_ok("TVS 45-08; 8 bar; 7,2 m³/min\nTVS 45-10; 10 bar; 6,5 m³/min", "table")


COUNTED = [
    {"text": "25 utilisateurs avec le plan Business", "kind": "count", "value": "25"},
    {"text": "20 sources de données avec le plan Business", "kind": "count", "value": "20"},
]


@pytest.mark.parametrize(
    ("answer", "swapped"),
    [
        ("Le plan Business vous donnera 20 utilisateurs et 25 sources de données.", True),
        ("Le plan Business vous donnera 25 utilisateurs et 20 sources de données.", False),
        ("Business : utilisateurs 25, sources de données 20.", False),
    ],
)
def test_a_count_names_what_it_counts_right_after_it(answer: str, swapped: bool) -> None:
    assert bool(_swaps("fr", COUNTED, answer)) is swapped


PREMISES = [
    {"text": "premises costs of 180 k€ for the whole of 2025", "kind": "money", "value": "180 k€"},
    {
        "text": "premises 45 k€ in every quarter, unchanged over the year",
        "kind": "money",
        "value": "45 k€",
    },
]


def test_a_result_announced_in_words_is_no_swap() -> None:
    answer = (
        "The premises line comes to 45 k€ in each quarter. Over the full year that adds up to "
        "180 k€ (4 × 45 k€)."
    )
    assert _swaps("en", PREMISES, answer) == []
