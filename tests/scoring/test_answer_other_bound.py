"""A value under the opposite bound that is another claim's, stated (issue 24, from a kind
of wording met in validation11, written here in three languages apart from it): "screw
compressors up to 14 bar, piston compressors above" states the "up to 14 bar" claim; its
14 bar does not contradict the missed "above 14 bar: piston" claim, whose words the answer
says otherwise."""

from __future__ import annotations

import pytest

from tests.scoring.test_answer_scoring import item, kinds
from tests.scoring.test_answer_verdicts import gold, scored

OVERVIEW = item(
    "product-family-overview-en",
    "md",
    "Screw compressors are the most economical choice up to 14 bar; above 14 bar, piston "
    "compressors (TVK family).",
)
CASES = {
    "en": (
        "up to 14 bar: screw compressors",
        "above 14 bar: piston compressors",
        "Screw compressors up to 14 bar, piston compressors beyond that [1].",
    ),
    "fr": (
        "jusqu'à 14 bar : compresseurs à vis",
        "au-delà de 14 bar : compresseurs à piston",
        "Compresseurs à vis jusqu'à 14 bar, à piston au-dessus [1].",
    ),
    "de": (
        "bis 14 bar: Schraubenverdichter",
        "über 14 bar: Kolbenverdichter",
        "Schraube bis 14 bar, Kolben darüber [1].",
    ),
}


@pytest.mark.parametrize("lang", ["en", "fr", "de"])
def test_the_other_bound_of_a_stated_claim_contradicts_nothing(lang: str) -> None:
    stated, missed, answer = CASES[lang]
    case = gold(
        f"BOUND-{lang}",
        "?",
        lang,
        required=[
            {"text": stated, "severity": "high"},
            {"text": missed, "severity": "high"},
        ],
    )
    score = scored(case, lang, answer, OVERVIEW)
    assert "unsupported_high_severity_number" not in kinds(score)
    assert score.turns[0].contradicted == []
