"""A difference of percentages written in "points" (issue 24, from a kind of wording met in
validation10, written here in three languages apart from it): a number followed by "points"
("pts", "Punkte") in a sentence that speaks of percentages is in percentage points, so a
wrong difference is a wrong value for the claim; and a difference in points is a magnitude,
its direction in the words ("-2,8 pts" of error is the "amélioration de 2,8 points")."""

from __future__ import annotations

import pytest

from pytest_ragv2.scoring.claim_bounds import same_value
from pytest_ragv2.scoring.values import read_value, read_values
from tests.scoring.test_answer_scoring import item, kinds
from tests.scoring.test_answer_verdicts import gold, scored


@pytest.mark.parametrize(
    ("lang", "text", "key"),
    [
        ("fr", "14,2 % − 11,4 % = 3,8 points d'amélioration.", "quantity:pp:3.8"),
        ("de", "Die MAPE sank von 14,2 % auf 11,4 %, also um 2,8 Punkte.", "quantity:pp:2.8"),
        ("en", "MAPE fell from 14.2% to 11.4%, a gain of -2.8 pts.", "quantity:pp:-2.8"),
    ],
)
def test_points_beside_percentages_are_percentage_points(lang: str, text: str, key: str) -> None:
    assert key in [value.key for value in read_values(text, lang)]


@pytest.mark.parametrize(
    ("lang", "text"),
    [
        ("fr", "Le contrat compte 12 points de contrôle."),
        ("de", "Die Checkliste hat 12 Punkte."),
        ("en", "Churn was 11.2 %. The audit has 12 points."),  # the percent is another sentence
    ],
)
def test_points_without_percentages_are_no_unit(lang: str, text: str) -> None:
    assert "count:12" in [value.key for value in read_values(text, lang)]


def test_a_difference_in_points_is_a_magnitude() -> None:
    unsigned = read_value("2,8 points de pourcentage", "quantity", "fr")
    signed = read_value("-2,8 points de pourcentage", "quantity", "fr")
    assert unsigned is not None
    assert signed is not None
    (answer,) = [
        v for v in read_values("MAPE 14,2 % → 11,4 % : -2,8 pts", "fr") if v.dimension == "pp"
    ]
    assert same_value(unsigned, answer)
    assert not same_value(signed, read_values("gain 14,2 % → 11,4 % : 2,8 pts", "fr")[-1])


EVIDENCE = item(
    "guide-produit-nimbus",
    "md",
    "La MAPE de NimbusPredict est de 11,4 %, contre 14,2 % pour la version bêta précédente.",
)
CASE = gold(
    "POINTS",
    "De combien de points la MAPE s'est-elle améliorée ?",
    "fr",
    required=[
        {
            "text": "amélioration de 2,8 points",
            "kind": "quantity",
            "value": "2,8 points de pourcentage",
            "severity": "high",
        }
    ],
)


def test_a_wrong_difference_in_points_is_vetoed_and_the_right_one_passes() -> None:
    wrong = scored(CASE, "fr", "14,2 % − 11,4 % = 3,8 points d'amélioration [1].", EVIDENCE)
    assert "unsupported_high_severity_number" in kinds(wrong)
    right = scored(
        CASE, "fr", "14,2 % → 11,4 % : -2,8 pts de MAPE, une amélioration [1].", EVIDENCE
    )
    assert kinds(right) == []
    assert right.verdict == "PASS", right.rubric
