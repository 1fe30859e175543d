"""Records of layer-B answer scoring: vetoes, rubric grades, per-turn and per-run scores.

Slotted dataclasses with hand-written ``to_json``: their JSON travels on pytest reports
between xdist workers and is written to the item records. No scoring logic here
(:mod:`pytest_ragv2.scoring.answers` fills them, :mod:`pytest_ragv2.scoring.rubric` grades).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from typing import Any, Literal

from pytest_ragv2.scoring.citations import CitationCheck
from pytest_ragv2.scoring.tools import ToolCheck
from pytest_ragv2.scoring.veto_record import Veto

Verdict = Literal["PASS", "PARTIAL", "FAIL"]
_RANK: dict[str, int] = {"PASS": 0, "PARTIAL": 1, "FAIL": 2}


@dataclass(frozen=True, slots=True)
class Grade:
    """One rubric dimension's verdict and why."""

    verdict: Verdict
    reason: str

    def to_json(self) -> dict[str, str]:
        return {"verdict": self.verdict, "reason": self.reason}


def worst(grades: Sequence[Grade]) -> Grade:
    """The worst grade (the first of equally bad ones); PASS for none."""
    if not grades:
        return Grade("PASS", "nothing to judge")
    return max(grades, key=lambda grade: _RANK[grade.verdict])


def _dump(value: Any) -> Any:
    if isinstance(value, (Veto, Grade, ToolCheck, CitationCheck)):
        return value.to_json()
    if isinstance(value, list):
        return [_dump(item) for item in value]
    if isinstance(value, dict):
        return {key: _dump(item) for key, item in value.items()}
    return value


@dataclass(slots=True)
class TurnScore:
    """Everything measured on one turn (1-based ``turn``)."""

    turn: int
    ran: bool = True
    completed: bool = True
    required: int = 0
    required_found: int = 0
    required_missed: list[str] = field(default_factory=list)
    optional: int = 0
    optional_found: int = 0
    forbidden_found: list[str] = field(default_factory=list)
    exact_answer: bool | None = None
    facts: int = 0
    unsupported: list[str] = field(default_factory=list)
    contradicted: list[str] = field(default_factory=list)
    # phone numbers, e-mail addresses and URLs in no source: invented contacts
    invented: list[str] = field(default_factory=list)
    citation_checks: list[CitationCheck] = field(default_factory=list)
    claim_sentences: int = 0
    claim_sentences_cited: int = 0
    synthetic_used: bool = False
    synthetic_labelled: bool = False
    constraints: list[str] = field(default_factory=list)
    constraint_violations: list[str] = field(default_factory=list)
    refused: bool = False
    refusal_phrase: str | None = None
    safe_refusal_expected: bool = False
    over_refusal: bool = False
    language_expected: str | None = None
    language_detected: str | None = None
    language_note: str = ""
    # another configured language a part of the answer is in, beside the expected one
    language_mixed: str | None = None
    format_expected: str | None = None
    format_ok: bool | None = None
    tool_checks: list[ToolCheck] = field(default_factory=list)
    vetoes: list[Veto] = field(default_factory=list)
    rubric: dict[str, Grade] = field(default_factory=dict)
    # the answer's length when it was longer than ``max_scored_chars`` and cut for scoring
    cut_from_chars: int | None = None
    # why the scorer could not decide this turn (the run then waits for a reviewer's ruling)
    review: list[str] = field(default_factory=list)

    @property
    def citations_correct(self) -> int:
        return sum(1 for check in self.citation_checks if check.verdict == "correct")

    @property
    def citations_judged(self) -> int:
        return sum(1 for check in self.citation_checks if check.verdict != "unverifiable")

    @property
    def safe_refusal_correct(self) -> bool | None:
        if not self.safe_refusal_expected:
            return None
        return self.refused and not self.forbidden_found

    def to_json(self) -> dict[str, Any]:
        return {name: _dump(getattr(self, name)) for name in _TURN_FIELDS}


_TURN_FIELDS = tuple(f.name for f in fields(TurnScore))


@dataclass(slots=True)
class AnswerScore:
    """One run's answer score: per-turn records, pooled metrics, vetoes and the rubric."""

    case_id: str
    lang: str
    turns: list[TurnScore]
    vetoes: list[Veto]
    rubric: dict[str, Grade]
    overall: Grade

    @property
    def review(self) -> list[str]:
        """Why the scorer could not decide the run, turn by turn (empty: it could)."""
        return [f"turn {turn.turn}: {reason}" for turn in self.turns for reason in turn.review]

    @property
    def verdict(self) -> Verdict:
        return self.overall.verdict

    def _pooled(self, part: str, whole: str) -> float | None:
        total = sum(getattr(turn, whole) for turn in self.turns)
        return sum(getattr(turn, part) for turn in self.turns) / total if total else None

    @property
    def exact_answer(self) -> bool | None:
        judged = [turn.exact_answer for turn in self.turns if turn.exact_answer is not None]
        return all(judged) if judged else None

    @property
    def claim_correctness(self) -> float | None:
        return self._pooled("required_found", "required")

    @property
    def completeness(self) -> float | None:
        total = sum(turn.required + turn.optional for turn in self.turns)
        found = sum(turn.required_found + turn.optional_found for turn in self.turns)
        return found / total if total else None

    @property
    def forbidden_claims(self) -> int:
        return sum(len(turn.forbidden_found) for turn in self.turns)

    @property
    def fabrication_count(self) -> int:
        return sum(len(turn.unsupported) for turn in self.turns)

    @property
    def grounded_claim_rate(self) -> float | None:
        facts = sum(turn.facts for turn in self.turns)
        return (facts - self.fabrication_count) / facts if facts else None

    @property
    def citation_correctness(self) -> float | None:
        return self._pooled("citations_correct", "citations_judged")

    @property
    def citation_completeness(self) -> float | None:
        return self._pooled("claim_sentences_cited", "claim_sentences")

    @property
    def source_type_discipline(self) -> bool | None:
        used = [turn for turn in self.turns if turn.synthetic_used]
        return all(turn.synthetic_labelled for turn in used) if used else None

    @property
    def constraint_compliance(self) -> bool | None:
        if not any(turn.constraints for turn in self.turns):
            return None
        return not any(turn.constraint_violations for turn in self.turns)

    @property
    def safe_refusal_accuracy(self) -> bool | None:
        judged = [t.safe_refusal_correct for t in self.turns if t.safe_refusal_expected]
        return all(judged) if judged else None

    @property
    def over_refusals(self) -> int:
        return sum(1 for turn in self.turns if turn.over_refusal)

    @property
    def language_ok(self) -> bool | None:
        judged = [t for t in self.turns if t.language_detected and t.language_expected]
        return all(t.language_detected == t.language_expected for t in judged) if judged else None

    @property
    def format_ok(self) -> bool | None:
        judged = [turn.format_ok for turn in self.turns if turn.format_ok is not None]
        return all(judged) if judged else None

    @property
    def tools_ok(self) -> bool | None:
        judged = [c.passed for t in self.turns for c in t.tool_checks if c.passed is not None]
        return all(judged) if judged else None

    def metrics(self) -> dict[str, Any]:
        """The run's answer metrics by name (the protocol's table)."""
        return {
            "exact_answer": self.exact_answer,
            "claim_correctness": self.claim_correctness,
            "completeness": self.completeness,
            "forbidden_claims": self.forbidden_claims,
            "grounded_claim_rate": self.grounded_claim_rate,
            "fabrication_count": self.fabrication_count,
            "citation_correctness": self.citation_correctness,
            "citation_completeness": self.citation_completeness,
            "source_type_discipline": self.source_type_discipline,
            "constraint_compliance": self.constraint_compliance,
            "safe_refusal_accuracy": self.safe_refusal_accuracy,
            "over_refusals": self.over_refusals,
            "language_ok": self.language_ok,
            "format_ok": self.format_ok,
            "tools_ok": self.tools_ok,
        }

    def to_json(self) -> dict[str, Any]:
        return {
            "case_id": self.case_id,
            "lang": self.lang,
            "turns": [turn.to_json() for turn in self.turns],
            "vetoes": [veto.to_json() for veto in self.vetoes],
            "rubric": {name: grade.to_json() for name, grade in self.rubric.items()},
            "overall": self.overall.to_json(),
        }
