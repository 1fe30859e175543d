"""A rule the gold states, restated with an exception or a permission the sources never
give ("but your manager can approve it"), or said of most cases only ("mainly"), is
weakened: ``constraint_weakened``. A rule that itself provides for exceptions is not
weakened by an answer naming one, and a sentence about something else is not about it."""

from __future__ import annotations

import pytest

from pytest_ragv2.gold.schema import Claim
from pytest_ragv2.scoring.modality import weakened

CARRY_OVER = {
    "en": Claim(text="unused remote days cannot be carried over to the following week"),
    "fr": Claim(text="les jours non utilisés ne peuvent pas être reportés sur la semaine suivante"),
    "de": Claim(text="nicht genutzte Remote-Tage können nicht in die Folgewoche übertragen werden"),
}
ONLY_SECURITY = {
    "en": Claim(text="logs consulted only by the security team"),
    "fr": Claim(text="journaux consultés uniquement par l'équipe sécurité"),
    "de": Claim(text="Protokolle nur vom Sicherheitsteam eingesehen"),
}


@pytest.mark.parametrize(
    ("lang", "answer"),
    [
        (
            "en",
            "Unused days generally aren't carried over, but your manager can approve "
            "moving them to the following week.",
        ),
        (
            "fr",
            "Les jours non utilisés ne sont pas reportés, mais un report sur la semaine "
            "suivante reste possible avec l'accord de votre manager.",
        ),
        (
            "de",
            "Nicht genutzte Remote-Tage verfallen, können aber nach Absprache mit der "
            "Führungskraft in die Folgewoche übertragen werden.",
        ),
    ],
)
def test_an_exception_added_to_a_prohibition_weakens_it(lang: str, answer: str) -> None:
    assert weakened(CARRY_OVER[lang], answer, lang) is not None


@pytest.mark.parametrize(
    ("lang", "answer"),
    [
        ("en", "The logs are mainly consulted by the security team."),
        ("fr", "Les journaux sont principalement consultés par l'équipe sécurité."),
        ("de", "Die Protokolle werden in erster Linie vom Sicherheitsteam eingesehen."),
    ],
)
def test_an_exclusive_rule_said_of_most_cases_is_weakened(lang: str, answer: str) -> None:
    assert weakened(ONLY_SECURITY[lang], answer, lang) is not None


@pytest.mark.parametrize(
    ("lang", "answer"),
    [
        (
            "en",
            "Unused remote days cannot be carried over to the following week. A written "
            "confirmation of your schedule is available on request.",
        ),
        (
            "fr",
            "Les jours non utilisés ne peuvent pas être reportés sur la semaine suivante. "
            "Une attestation d'horaire est disponible sur demande.",
        ),
        (
            "de",
            "Nicht genutzte Remote-Tage können nicht in die Folgewoche übertragen werden. "
            "Eine Bescheinigung gibt es auf Anfrage.",
        ),
    ],
)
def test_a_permission_about_something_else_weakens_nothing(lang: str, answer: str) -> None:
    assert weakened(CARRY_OVER[lang], answer, lang) is None


def test_a_rule_that_provides_for_exceptions_is_not_weakened_by_naming_one() -> None:
    rule = Claim(text="exceptions are only possible with the RSSI's written approval")
    answer = "Exceptions can also be granted, with the approval of the RSSI in writing."
    assert weakened(rule, answer, "en") is None


def test_a_rule_held_in_a_pattern_claim_is_judged_by_its_text() -> None:
    rule = Claim(text="unused remote days cannot be carried over", pattern=r"cannot be carried")
    answer = "Unused remote days are usually not carried over, but your manager can approve it."
    assert weakened(rule, answer, "en") is not None


@pytest.mark.parametrize(
    ("lang", "claim", "answer"),
    [
        (
            "de",
            "jährliche Erhöhung auf 3 % pro Jahr gedeckelt",
            "Die Erhöhung sollte dabei in der Regel 3 % pro Jahr nicht überschreiten.",
        ),
        (
            "de",
            "Genehmigung mindestens 15 Arbeitstage im Voraus",
            "Idealerweise holst du die Genehmigung etwa 15 Arbeitstage vorher ein.",
        ),
        (
            "en",
            "approval at least 15 working days in advance",
            "Ideally you should ask for approval around 15 working days in advance.",
        ),
        (
            "de",
            "Genehmigung mindestens 15 Arbeitstage im Voraus",
            "Die Genehmigung ist mindestens 15 Arbeitstage im Voraus nötig – außer bei kurzen "
            "Aufenthalten, die deine Führungskraft direkt freigeben kann.",
        ),
    ],
)
def test_a_limit_said_with_a_weak_word_or_an_exception_is_weakened(
    lang: str, claim: str, answer: str
) -> None:
    assert weakened(Claim(text=claim), answer, lang) is not None


@pytest.mark.parametrize(
    ("lang", "claim", "answer"),
    [
        (
            "de",
            "jährliche Erhöhung auf 3 % pro Jahr gedeckelt",
            "Die Erhöhung darf 3 % pro Jahr nicht überschreiten.",
        ),
        (
            "en",
            "approval at least 15 working days in advance",
            "Approval must be obtained at least 15 working days in advance.",
        ),
    ],
)
def test_a_limit_kept_is_not_weakened(lang: str, claim: str, answer: str) -> None:
    assert weakened(Claim(text=claim), answer, lang) is None


@pytest.mark.parametrize(
    ("lang", "claim", "answer", "softened"),
    [
        (
            "fr",
            "avoir réclamé dans un délai de 30 jours suivant la fin du mois",
            "Il doit en principe être réclamé dans les 30 jours suivant la fin du mois.",
            True,
        ),
        (
            "de",
            "Anschluss nur durch eine Elektrofachkraft",
            "Der Anschluss muss in der Regel durch eine Elektrofachkraft erfolgen.",
            True,
        ),
        (
            "en",
            "allowable pressure up to 250 bar",
            "The allowable pressure is 250 bar; brief excursions above 250 bar are tolerated.",
            True,
        ),
        (
            "en",
            "the safety valve must not be adjusted",
            "You should note that the safety valve must not be adjusted.",
            False,
        ),
    ],
)
def test_a_hedge_softens_a_strong_word_a_weak_modal_verb_does_not(
    lang: str, claim: str, answer: str, softened: bool
) -> None:
    assert (weakened(Claim(text=claim), answer, lang) is not None) is softened


def test_a_limit_exceeded_on_a_condition_the_sources_never_set_is_weakened() -> None:
    claim = Claim(text="at most 12 remote days that month", kind="count", value="12")
    answer = "So around 12 days in that month — a bit more if your manager agrees."
    assert weakened(claim, answer, "en") is not None
    assert weakened(claim, "So at most 12 days in that month.", "en") is None
