"""An optional judge model: a separate, clearly labelled signal that never decides.

The protocol's primary judge is the verified gold; a model's opinion is at most advisory.
With ``[tool.ragv2.judge]`` configured (any OpenAI-compatible chat model), every scored
layer-B run is also shown to the judge together with its gold claims, and the judge's
grade (PASS / PARTIAL / FAIL and one line of reason) is stored on the record under
``judge``. No item outcome, gate or exit status reads it: the report shows it in its own
table, beside the rubric, with how often the two agree. A judge that fails or answers
something unreadable is recorded as such; the run is unaffected.
"""

from __future__ import annotations

import json
import re

from pytest_ragv2.deciding.records import JudgeGrade
from pytest_ragv2.gold.schema import Case
from pytest_ragv2.scoring.metrics import GRADES
from pytest_ragv2.systems.openai_chat import OpenAIChat, OpenAIChatConfig
from pytest_ragv2.systems.transcripts import Transcript

JUDGE_INSTRUCTIONS = (
    "You grade one conversation of a retrieval-augmented assistant against verified gold "
    "claims. PASS: every required claim is stated correctly and no forbidden claim is made "
    "(or, when a refusal is required, the assistant says the information is not available). "
    "PARTIAL: some required claims are missing but nothing wrong is stated. FAIL: a forbidden "
    "or wrong claim is stated, or a required refusal is missing. Reply with one line of JSON "
    'only: {"grade": "PASS" | "PARTIAL" | "FAIL", "reason": "<one sentence>"}'
)
_GRADE_WORD = re.compile(r"\b(PASS|PARTIAL|FAIL)\b")


def judge_prompt(case: Case, lang: str, transcript: Transcript) -> str:
    """What the judge sees: each turn's question, gold and the answer given."""
    from pytest_ragv2.scoring.answers import turn_golds

    lines: list[str] = []
    for gold, turn in zip(turn_golds(case, lang), transcript.turns, strict=False):
        expected = gold.expected_answer
        lines.append(f"Turn {gold.turn} question: {turn.prompt}")
        if expected is not None and expected.required_claims:
            claims = "; ".join(claim.text for claim in expected.required_claims)
            lines.append(f"Required claims: {claims}")
        if expected is not None and expected.forbidden_claims:
            claims = "; ".join(claim.text for claim in expected.forbidden_claims)
            lines.append(f"Forbidden claims: {claims}")
        if gold.safe_refusal_expected:
            lines.append("A refusal is required: the information is not in the documents.")
        lines.append(f"Answer given: {turn.answer if turn.ran else '(not sent)'}")
        lines.append("")
    return "\n".join(lines).strip()


def parse_grade(text: str) -> tuple[str | None, str]:
    """(grade, reason) from the judge's reply: its JSON line, else the first grade word."""
    match = re.search(r"\{.*\}", text, re.DOTALL)
    if match is not None:
        try:
            data = json.loads(match.group())
        except ValueError:
            data = None
        if isinstance(data, dict) and str(data.get("grade", "")).upper() in GRADES:
            return str(data["grade"]).upper(), str(data.get("reason", ""))[:300]
    word = _GRADE_WORD.search(text.upper())
    if word is not None:
        return word.group(1), text.strip()[:300]
    return None, text.strip()[:300]


class Judge:
    """The configured judge model; one fresh conversation per graded run."""

    def __init__(self, config: OpenAIChatConfig) -> None:
        if config.system_prompt is None:
            config = config.model_copy(update={"system_prompt": JUDGE_INSTRUCTIONS})
        self.config = config
        self._chat = OpenAIChat("judge", config)

    def grade(self, case: Case, lang: str, transcript: Transcript) -> JudgeGrade:
        """The judge's advisory grade of one run (never raises)."""
        model = self.config.model
        try:
            reply = self._chat.converse([judge_prompt(case, lang, transcript)])
        except Exception as exc:  # the judge must never cost the run
            return JudgeGrade(None, model, error=f"{exc!r}"[:300])
        if reply.error is not None:
            error = f"{reply.error.kind}: {reply.error.message}"[:300]
            return JudgeGrade(None, model, error=error)
        grade, reason = parse_grade(reply.final_answer)
        missing = "no grade in the judge's reply" if grade is None else None
        return JudgeGrade(grade, model, reason, missing)

    def close(self) -> None:
        self._chat.close()
