"""A text claim with the author's wordings (``any_of``) whose text states a value: the value
stands for the claim in any writing, and another value of its kind in a sentence about it
contradicts it — unless the claim's text denies the value ("non, pas 30 jours")."""

from __future__ import annotations

import pytest

from pytest_ragv2.gold.schema import Claim
from pytest_ragv2.scoring.claim_contradictions import contradicting_value
from pytest_ragv2.scoring.claims import claim_found

FUSE = Claim(
    text="Vorsicherung 160 Ampere träge",
    any_of=["160 A", "160 Ampere", "160A"],
    severity="high",
)
NOT_THIRTY = Claim(text="non, pas 30 jours", any_of=["pas 30 jours", "et non 30"])
CYCLES = Claim(text="4,000 full cycles", any_of=["4,000 cycles", "4000 cycles"])


@pytest.mark.parametrize(
    ("claim", "lang", "answer"),
    [
        (FUSE, "de", "Die Vorsicherung: hundertsechzig Ampere, träge Charakteristik."),
        (CYCLES, "en", "It is rated for four thousand full cycles [1]."),
    ],
)
def test_an_any_of_claims_value_in_another_writing_is_found(
    claim: Claim, lang: str, answer: str
) -> None:
    assert claim_found(claim, answer, lang, gold_lang=lang).matched


@pytest.mark.parametrize(
    ("claim", "lang", "answer", "wrong"),
    [
        (FUSE, "de", "Die Vorsicherung beträgt 60 A träge.", "60 A"),
        (CYCLES, "en", "The battery lasts 3,000 full cycles.", "3,000"),
    ],
)
def test_another_value_in_a_sentence_about_an_any_of_claim_contradicts_it(
    claim: Claim, lang: str, answer: str, wrong: str
) -> None:
    span = contradicting_value(claim, answer, lang, lang)
    assert span is not None
    assert answer[span[0] : span[1]].startswith(wrong.split()[0])


def test_a_claim_that_denies_its_value_is_not_made_by_that_value() -> None:
    answer = "Oui, c'est exact : le client dispose de 30 jours pour exporter ses données."
    assert not claim_found(NOT_THIRTY, answer, "fr", gold_lang="fr").matched
    assert contradicting_value(NOT_THIRTY, "Il dispose de 45 jours.", "fr", "fr") is None


def test_a_tempting_value_given_with_its_own_role_beside_the_gold_value_is_not_offered() -> None:
    from pytest_ragv2.gold.schema import ExpectedAnswer
    from pytest_ragv2.scoring.claim_offers import offered_forbidden
    from pytest_ragv2.scoring.claims import score_claims

    expected = ExpectedAnswer(
        required_claims=[
            Claim(text="Zentrale +33 2 85 52 40 00", kind="phone", value="+33 2 85 52 40 00")
        ],
        forbidden_claims=[
            Claim(
                text="+33 2 85 52 41 90 (Bereitschaftsnummer für P1-Vorfälle von "
                "Enterprise-Kunden, nicht die Zentrale)",
                kind="phone",
                value="+33 2 85 52 41 90",
            )
        ],
    )
    told_apart = (
        "Die Zentrale erreichen Sie unter +33 2 85 52 40 00. Die Nummer +33 2 85 52 41 90 ist "
        "dagegen die Bereitschaft für kritische Vorfälle (P1) von Enterprise-Kunden."
    )
    offered = "Die Zentrale erreichen Sie unter +33 2 85 52 40 00 oder +33 2 85 52 41 90."
    for answer, made in ((told_apart, False), (offered, True)):
        claims = score_claims(expected, answer, "de", gold_lang="de")
        assert bool(offered_forbidden(claims, expected, None, answer=answer, lang="de")) is made


@pytest.mark.parametrize(
    ("answer", "found"),
    [("environ 25,5 %", True), ("(+25,52 %)", True), ("25 %", False), ("30 %", False)],
)
def test_a_rounded_writing_of_an_ambiguous_gold_values_other_reading_is_found(
    answer: str, found: bool
) -> None:
    # read with no language, "25,517 %" is 25517 % or 25.517 %: the answer rounds the second
    claim = Claim(text="soit environ +25,5 %", kind="percent", value="25,517 %")
    assert claim_found(claim, answer, "fr").matched is found


@pytest.mark.parametrize(
    ("answer", "denied"),
    [
        ("Ab Revision D ersetzt er den alten Abscheider TS-7508-5.", True),
        ("It supersedes the former separator TS-7508-5.", True),
        ("Le filtre TS-7508-5 se remplace toutes les 6 000 heures.", False),
        ("Bestellen Sie den Abscheider TS-7508-5.", False),
    ],
)
def test_a_value_named_as_superseded_is_denied(answer: str, denied: bool) -> None:
    from pytest_ragv2.scoring.claim_denials import denied_at

    start = answer.index("TS-7508-5")
    assert denied_at(answer, (start, start + 9), "TS-7508-5 (Abscheider bis Revision C)") is denied


@pytest.mark.parametrize(
    ("answer", "unsure"),
    [
        ("The team froze the X2 design at revision C [2].", True),
        ("The X2 carries a warranty covering parts and labour.", False),
    ],
)
def test_a_text_claim_half_of_whose_words_one_sentence_holds_may_be_said_otherwise(
    answer: str, unsure: bool
) -> None:
    from pytest_ragv2.scoring.claim_denials import said_otherwise

    claim = Claim(text="the X2 hardware design is frozen after revision C")
    assert said_otherwise(claim, answer) is unsure


def test_a_claims_value_is_found_in_a_short_answer_that_leaves_its_subject_to_the_question() -> (
    None
):
    from pytest_ragv2.gold.schema import ExpectedAnswer
    from pytest_ragv2.scoring.claims import score_claims

    expected = ExpectedAnswer(
        required_claims=[
            Claim(text="2 Sätze je Verdichter", any_of=["2 Sätze", "zwei Sätze"], severity="medium")
        ]
    )
    answer = "| Merkmal | Wert |\n|---|---|\n| Menge | 2 Stück |"
    prompt = "Wie viele Sätze braucht man je Verdichter?"
    assert score_claims(expected, answer, "de", prompt=prompt).required_matched
    # without the question, nothing says what the 2 counts
    assert not score_claims(expected, answer, "de").required_matched


def test_a_pattern_listing_typographic_dashes_in_a_class_stays_valid() -> None:
    claim = Claim(text="suction side", pattern=r"suction\s*[:=|–—]\s*KV-?4502-?B")
    for answer in ("Suction — KV-4502-B.", "Suction: KV-4502-B.", "Suction – KV 4502 B."):
        assert claim_found(claim, answer, "en").matched is ("KV 4502" not in answer)


@pytest.mark.parametrize(
    ("answer", "found"),
    [
        ("| Punkt | Enterprise |\n|---|---|\n| Benutzer | unbegrenzt |", True),
        ("| Punkt | Enterprise |\n|---|---|\n| Benutzer | 25 |\n| Quellen | unbegrenzt |", False),
        ("Die Benutzer sind begrenzt, die Quellen unbegrenzt.", False),
        ("- Benutzer: unbegrenzt\n- Quellen: 20", True),
    ],
)
def test_a_text_claim_said_in_a_table_row_in_another_order_is_found(
    answer: str, found: bool
) -> None:
    claim = Claim(text="unbegrenzte Benutzer", any_of=["Benutzer unbegrenzt"], severity="medium")
    assert claim_found(claim, answer, "de").matched is found


def test_a_typed_value_written_as_its_source_writes_it_is_read_in_any_language() -> None:
    from pytest_ragv2.scoring.claim_targets import gold_value

    assert gold_value("three hours", "quantity", "fr") is not None
    assert gold_value("drei Stunden", "quantity", "en") is not None
