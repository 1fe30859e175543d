"""The gold of each turn of a case's conversation, the case's defaults applied: light (the
case schema only), so the reports read it without loading the answer scorers."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pytest_ragv2.gold.schema import Case, Evidence, ExpectedAnswer, ExpectTools


@dataclass(frozen=True, slots=True)
class TurnGold:
    """The gold of one turn (1-based ``turn``), with the case's defaults applied."""

    turn: int
    prompts: Mapping[str, str]
    expected_answer: ExpectedAnswer | None
    required_evidence: tuple[Evidence, ...]
    expect_tools: ExpectTools
    mandatory_constraints: Mapping[str, Any]
    safe_refusal_expected: bool
    source_type: str = "public_document"

    def prompt(self, lang: str) -> str | None:
        return self.prompts.get(lang)


def turn_golds(case: Case, lang: str) -> list[TurnGold]:
    """One :class:`TurnGold` per turn the case's conversation has (how a turn inherits the
    case's gold: see :mod:`pytest_ragv2.scoring.answers`)."""
    if not case.turns:
        return [
            TurnGold(
                turn=1,
                prompts=case.all_prompts(),
                expected_answer=case.expected_answer,
                required_evidence=tuple(case.evidence_for(lang)),
                expect_tools=case.expect_tools,
                mandatory_constraints=dict(case.mandatory_constraints),
                safe_refusal_expected=case.safe_refusal_expected,
                source_type=case.source_type,
            )
        ]
    golds = []
    for number, turn in enumerate(case.turns, start=1):
        expect = turn.expect_tools
        if "requires" not in expect.model_fields_set:
            expect = expect.model_copy(update={"requires": case.expect_tools.requires})
        golds.append(
            TurnGold(
                turn=number,
                prompts=dict(turn.prompts),
                expected_answer=turn.expected_answer,
                required_evidence=tuple(
                    e for e in turn.required_evidence if e.lang in (None, lang)
                ),
                expect_tools=expect,
                mandatory_constraints={**case.mandatory_constraints, **turn.mandatory_constraints},
                safe_refusal_expected=turn.safe_refusal_expected,
                source_type=case.source_type,
            )
        )
    return golds
