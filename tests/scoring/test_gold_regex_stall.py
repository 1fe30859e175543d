"""A gold claim pattern that backtracks catastrophically cannot stall a session: its match
is stopped at the run's scoring budget, the run is a ``scoring_budget`` error with its raw
run kept, and every other run is scored as usual."""

from __future__ import annotations

import time

import pytest

from pytest_ragv2.gold.schema import Claim, ExpectedAnswer, claim_pattern_problem
from pytest_ragv2.scoring.claims import PatternTimedOut, claim_found, score_claims
from tests.layers.test_layer_b import CHAT_CASES, CHATBOT, RUN_ID, chat_pyproject
from tests.plugin.test_plugin import raw_lines, summary_of

CATASTROPHIC = "(a+)+$"
STALLING_ANSWER = "a" * 50_000 + "b"  # (a+)+$ tries every split of the a's before failing
BUDGET_S = 3.0  # the language identifier is off: its one-time load would count in a run's budget
SESSION_BOUND_S = 90.0  # generous: re would take far longer than the age of the universe

STALL_MODE = """
if mode == "stall" and "pressure" in low:
    answer = "a" * 50000 + "b"
"""


def test_a_catastrophic_pattern_is_stopped_at_the_deadline() -> None:
    claim = Claim(text="16 bar", pattern=CATASTROPHIC)
    with pytest.raises(PatternTimedOut, match=r"\(a\+\)\+\$"):
        score_claims(
            ExpectedAnswer(required_claims=[claim]),
            STALLING_ANSWER,
            "en",
            deadline=time.monotonic() + 0.2,
        )  # raised: the match (ages at this size) was stopped at its deadline
    with pytest.raises(PatternTimedOut):  # a deadline already passed: not even started
        claim_found(claim, "aaa", "en", deadline=time.monotonic() - 1)


@pytest.mark.parametrize(
    ("pattern", "answer", "found"),
    [
        (r"max(?:imum)?\s+16\s*bar", "The maximum 16 bar", "maximum 16 bar"),
        (r"TVS 75-(?:08|10|14)", "the tvs 75-10 fits", "tvs 75-10"),
        (r"\bNX-\d{3}[A-Z]\b", "Part NX-450B.", "NX-450B"),
        (r"(?P<n>\d+)\s(?P=n)", "it is 12 12", "12 12"),
        (r"a.b", "a\nb", "a\nb"),  # DOTALL, as before
    ],
)
def test_valid_patterns_keep_their_meaning(pattern: str, answer: str, found: str) -> None:
    match = claim_found(Claim(text="x", pattern=pattern), answer, "en")
    assert match.how == "pattern"
    assert match.found == found


def test_a_pattern_that_does_not_compile_is_still_refused_at_load() -> None:
    assert claim_pattern_problem("(unclosed") is not None
    assert claim_pattern_problem(CATASTROPHIC) is None  # valid: stopped when matched


def test_a_session_with_a_catastrophic_pattern_ends_with_that_run_a_scoring_error(
    project: pytest.Pytester,
) -> None:
    (project.path / "chatbot.py").write_text(
        CHATBOT.replace("\n\ndef emit(event):", STALL_MODE + "\n\ndef emit(event):")
    )
    cases = CHAT_CASES.replace(
        '[{text: "16 bar", number: 16, unit: bar, severity: high}]',
        '[{text: "16 bar", number: 16, unit: bar, severity: high, pattern: "(a+)+$"}]',
    )
    assert cases != CHAT_CASES
    (project.path / "cases" / "development.yaml").write_text(cases)
    extra = f"answer_scoring = {{scoring_budget_s = {BUDGET_S}, identify_language = false}}"
    (project.path / "pyproject.toml").write_text(chat_pyproject(candidate="stall", extra=extra))
    # the session ends (a stall would hang it: the subprocess's timeout is the net), and the
    # stalled run is a scoring error, not a hang
    result = project.runpytest_subprocess("--ragv2-layer=B", *RUN_ID, timeout=SESSION_BOUND_S)
    assert "scoring error: scoring took longer than its budget" in result.stdout.str()
    raws = [raw for raw in raw_lines(project, "chatrun") if not raw.get("skipped")]
    assert len(raws) == 10  # every run recorded, the stalled one included
    stalled = [raw for raw in raws if "a" * 1000 in raw["transcript"]["turns"][0]["answer"]]
    assert len(stalled) == 1
    assert stalled[0]["key"]["system"] == "v2"
    summary = summary_of(project, "chatrun")
    assert summary["runs"] == {"expected": 12, "recorded": 12}
    v2, v1 = summary["systems"]["v2"], summary["systems"]["v1"]
    assert v2["scoring_errors"] == 1
    assert v2["errors"] == 0  # the gold's pattern is not the system's failure
    assert v1.get("scoring_errors", 0) == 0
    assert v1["exact_answer"] == 1.0  # the same pattern over plain answers: scored as usual
