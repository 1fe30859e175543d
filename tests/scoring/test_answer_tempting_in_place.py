"""A tempting value beside another claim's gold value (issue 24, from a kind of flaw met in
validation9 and validation10, written here in three languages apart from it): a wrong total
next to a correct line item is offered when a required claim of its kind is missed, and it
stands in for the high-severity claim it is a near miss of — wrong for it, and that claim's
veto."""

from __future__ import annotations

import pytest

from pytest_ragv2.gold.schema import Case
from tests.scoring.test_answer_scoring import item, kinds
from tests.scoring.test_answer_verdicts import gold, scored

COSTS = item(
    "resultats-financiers-2025",
    "xlsx",
    "Charges T2 2025 (k€) | Salaires 745 | Hébergement 101 | Marketing 210 | Locaux 45 | "
    "Frais généraux 58 || Charges T3 2025 (k€) | Frais généraux 62",
)
PROMPTS = {
    "fr": "Quel est le total des charges du T2 2025, et quel est le poste principal ?",
    "de": "Wie hoch sind die Betriebskosten im Q2 2025, und welcher Posten ist der größte?",
    "en": "What were the total operating costs in Q2 2025, and which item was the largest?",
}
TOTAL = {"fr": "total des charges du T2", "de": "Betriebskosten Q2 gesamt", "en": "Q2 total costs"}
ITEM = {
    "fr": "poste principal : salaires",
    "de": "größter Posten: Gehälter",
    "en": "largest item: salaries",
}
WRONG = {
    "fr": "745 + 101 + 210 + 45 + 62 = 1 163 k€. Le poste principal : les salaires (745 k€).",
    "de": "745 + 101 + 210 + 45 + 62 = 1 163 k€. Größter Posten sind die Gehälter (745 k€).",
    "en": "745 + 101 + 210 + 45 + 62 = 1 163 k€. The largest item is salaries (745 k€).",
}


def _case(lang: str) -> Case:
    return gold(
        f"TEMPT-{lang}",
        PROMPTS[lang],
        lang,
        required=[
            {"text": TOTAL[lang], "kind": "money", "value": "1 159 k€", "severity": "high"},
            {"text": ITEM[lang], "kind": "money", "value": "745 k€", "severity": "medium"},
        ],
        forbidden=[{"text": "1 163 k€ (T3)", "kind": "money", "value": "1 163 k€"}],
    )


@pytest.mark.parametrize("lang", ["fr", "de", "en"])
def test_a_wrong_total_beside_a_right_item_is_offered_for_the_total(lang: str) -> None:
    score = scored(_case(lang), lang, WRONG[lang], COSTS)
    vetoes = [veto for veto in score.vetoes if veto.kind == "unsupported_high_severity_number"]
    assert [veto.text for veto in vetoes] == ["1 163 k€"]
    assert TOTAL[lang] in vetoes[0].detail
    assert score.rubric["Accuracy"].verdict == "FAIL"


@pytest.mark.parametrize("lang", ["fr", "de", "en"])
def test_the_right_total_beside_the_item_passes(lang: str) -> None:
    right = WRONG[lang].replace("62 = 1 163", "58 = 1 159")
    score = scored(_case(lang), lang, right, COSTS)
    assert kinds(score) == []


ALLOWANCES = item(
    "hr-allowances",
    "xlsx",
    "Equipment allowance 650 € once | Connectivity allowance 35 € per month",
)


def test_a_tempting_value_stands_in_for_the_high_severity_claim_it_nearly_is() -> None:
    case = gold(
        "NEAR",
        "How much do the allowances come to in 2026?",
        "en",
        required=[
            {"text": "connectivity 12 × 35 € = 420 €", "kind": "money", "value": "420 €"},
            {"text": "total 1 070 €", "kind": "money", "value": "1 070 €", "severity": "high"},
        ],
        forbidden=[{"text": "1 035 € (11 months)", "kind": "money", "value": "1 035 €"}],
    )
    score = scored(case, "en", "650 € + 11 × 35 € = 1 035 € in 2026.", ALLOWANCES)
    (veto,) = [veto for veto in score.vetoes if veto.kind == "unsupported_high_severity_number"]
    assert "total 1 070 €" in veto.detail
