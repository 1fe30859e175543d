"""Bounded answer scoring: linear in the answer, cut to ``max_scored_chars``, within a budget.

Random and adversarial answers (long tokens, digit runs, repeated separators, nested
brackets, unicode, right-to-left text, zero-width characters) up to 1 MB are scored through
the entry point layer B uses (``layers.chat.chat_record``) and must stay within a fixed
multiple of a plain answer's work and peak memory (tracemalloc).

Work is counted, not timed: the Python and C function calls scoring makes
(``sys.setprofile``), the same on any machine under any load. A scan that is quadratic in
the answer makes quadratically many calls; four times the answer making about four times
the calls is linear. How fast scoring is, in seconds, is ``benchmarks/bench_scoring.py``'s.
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
import tracemalloc
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_ragv2.deciding.aggregate import summarize
from pytest_ragv2.deciding.records import ChatRecord
from pytest_ragv2.gold.allowlist import load_allowlist
from pytest_ragv2.gold.cases import load_catalog
from pytest_ragv2.gold.schema import Case
from pytest_ragv2.layers.chat.run import (
    chat_record,
    raw_chat_run,
    score_raw_chat_run,
    scoring_failed_record,
    scoring_options,
    text_fingerprint,
)
from pytest_ragv2.run.keys import RunKey
from pytest_ragv2.run.raw_models import ChatRawRun, read_raw_run
from pytest_ragv2.scoring.answers import (
    MAX_SCORED_CHARS,
    AnswerScoringOptions,
    ScoringBudgetExceeded,
    allowed_files,
    bounded_turn,
    cut_for_scoring,
    score_transcript,
)
from pytest_ragv2.scoring.language import language_text
from pytest_ragv2.scoring.markers import CITATION_MARKER, FILENAME, URL
from pytest_ragv2.systems.outputs import RetrievedItem
from pytest_ragv2.systems.transcripts import ChatTurn, Citation, ToolCall, Transcript

ROOT = Path(__file__).resolve().parents[2]
PLAIN = "The maximum operating pressure of the valve is 16 bar at 20 °C, see the datasheet. "
MB = 1_000_000
# the shapes that made scoring quadratic or heavy, one repeating unit each
ADVERSARIAL = {
    "long token": "abcdefghij",
    "digit run": "0123456789",
    "numbers": "1 2,3.4 ",
    "separators": ".-/",
    "nested brackets": "[(",
    "markers": "[1]",
    "guillemets": "«a ",
    "quotes": '"',
    "unicode": "\u200bשלום\u202e é ß\ufb01 ",
    "identifiers": "DE-12a X9 ",
    "filenames": "a.pdf.",
    "urls": "http://x/",
    # a vulgar fraction reads as digits: thousands of numbers in one sentence
    "fractions": "\u00be",
    # sentences that each say a figure is usual, or yearly
    "usual figures": "usually 43. ",
    "yearly figures": "12 × 290 € = 3 480 € per year; ",
}


@cache
def _gold() -> tuple[Case, str, frozenset[str]]:
    allowlist = load_allowlist(ROOT / "gold" / "allowlist.yaml")
    catalog = load_catalog(ROOT / "cases", ROOT / "gold", allowlist=allowlist)
    case = next(
        loaded.case
        for loaded in catalog.cases()
        if not loaded.case.turns
        and loaded.case.expected_answer
        and loaded.case.expected_answer.required_claims
    )
    return case, next(iter(case.all_prompts())), allowed_files(allowlist)


def score(answer: str, options: AnswerScoringOptions) -> ChatRecord:
    case, lang, files = _gold()
    transcript = Transcript([ChatTurn(prompt=case.all_prompts()[lang], answer=answer)], 1.0)
    return chat_record(
        RunKey(case.id, "cand", 1, lang, "B"),
        case=case,
        split="development",
        role="candidate",
        transcript=transcript,
        allowed_files=files,
        options=options,
    )


def repeat(unit: str, size: int) -> str:
    return (unit * (size // len(unit) + 1))[:size]


def work(run: Callable[[], Any]) -> int:
    """The function calls ``run`` makes, Python and C alike, in this thread."""
    calls = 0

    def count(frame: Any, event: str, arg: Any) -> None:
        nonlocal calls
        if event in ("call", "c_call"):
            calls += 1

    sys.setprofile(count)
    try:
        run()
    finally:
        sys.setprofile(None)
    return calls


def peak_bytes(run: Callable[[], Any]) -> int:
    tracemalloc.start()
    try:
        run()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


# --------------------------------------------------------------------------- within bounds

CAP = 8_000  # a small cap keeps every example fast; what matters is what happens before it
CAPPED_WORK_MAX = 40  # times a plain answer's calls at the cap
CAPPED = AnswerScoringOptions(max_scored_chars=CAP)


@cache
def _plain_at_cap() -> tuple[int, int]:
    plain = repeat(PLAIN, MB)
    score("A short warm-up answer in plain English words.", CAPPED)  # loads py3langid
    return work(lambda: score(plain, CAPPED)), peak_bytes(lambda: score(plain, CAPPED))


answers = st.one_of(
    st.tuples(st.sampled_from(sorted(ADVERSARIAL.values())), st.integers(1_000, MB)).map(
        lambda drawn: repeat(*drawn)
    ),
    st.tuples(st.text(min_size=1, max_size=40), st.integers(1_000, MB)).map(
        lambda drawn: repeat(*drawn)
    ),
    st.lists(st.sampled_from(sorted(ADVERSARIAL.values())), min_size=2, max_size=8).map(
        lambda units: repeat("".join(units), MB)
    ),
)


@settings(
    max_examples=6,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(answer=answers)
def test_random_and_adversarial_answers_cost_a_multiple_of_a_plain_one(answer: str) -> None:
    plain_work, plain_peak = _plain_at_cap()
    done = work(lambda: score(answer, CAPPED))
    peak = peak_bytes(lambda: score(answer, CAPPED))
    # the densest shapes (fractions, yearly figures: a value every few characters) make 18x
    # a plain answer's calls at the cap; an uncapped megabyte would make hundreds of times
    assert done <= CAPPED_WORK_MAX * plain_work, (len(answer), answer[:40], done, plain_work)
    assert peak <= 10 * plain_peak + 2 * MB, (len(answer), answer[:40], peak, plain_peak)


def assert_linear(small: str, large: str, shape: str) -> None:
    """Uncapped, four times the answer makes about four times the calls (3.8 to 4.2 for
    every shape when this was written): under 6 times (a quadratic scorer makes 16). The
    warm-up scores another text of the shape, so neither counted answer is cached whole."""
    uncapped = AnswerScoringOptions(max_scored_chars=10 * MB)
    score(small[: len(small) // 2], uncapped)  # loads and compiles what scoring needs
    small_work = work(lambda: score(small, uncapped))
    large_work = work(lambda: score(large, uncapped))
    assert large_work <= 6 * small_work, (shape, small_work, large_work)


@pytest.mark.parametrize("shape", sorted(ADVERSARIAL))
def test_scoring_is_linear_in_the_answer(shape: str) -> None:
    """Uncapped, four times the answer costs about four times the time (never sixteen)."""
    unit = ADVERSARIAL[shape]
    assert_linear(repeat(unit, 6_000), repeat(unit, 24_000), shape)


# one long run inside an ordinary sentence: whitespace, markdown, a number that never ends
RUNS: dict[str, Callable[[int], str]] = {
    "whitespace run": lambda n: "The answer is " + " \t" * (n // 2) + "\n here.",
    "markdown run": lambda n: "The answer\n|" + "-|" * (n // 2) + "\n",
    "grouped number": lambda n: "The value is 1" + ",000" * (n // 4) + " bar.",
    "open bracket": lambda n: "The answer [" + "1," * (n // 2),
}


@pytest.mark.parametrize("shape", sorted(RUNS))
def test_scoring_is_linear_in_one_long_run(shape: str) -> None:
    assert_linear(RUNS[shape](6_000), RUNS[shape](24_000), shape)


# --------------------------------------------------------------------------- the cap


def test_a_long_answer_is_cut_for_scoring_and_the_record_says_so() -> None:
    record = score(repeat(PLAIN, 60_000), AnswerScoringOptions(max_scored_chars=20_000))
    assert record.scoring_notes == ("answer of 60,000 characters cut for scoring",)
    assert record.to_json()["scoring_notes"] == ["answer of 60,000 characters cut for scoring"]
    assert record.sizes["output_chars"] == 60_000  # the answer's own size is kept
    assert score(PLAIN, AnswerScoringOptions(max_scored_chars=20_000)).scoring_notes == ()


def test_a_cut_turn_records_the_answer_length() -> None:
    case, lang, _ = _gold()
    transcript = Transcript([ChatTurn(prompt="q", answer=repeat(PLAIN, 5_000))], 1.0)
    scored = score_transcript(
        case, lang, transcript, options=AnswerScoringOptions(max_scored_chars=1_000)
    )
    assert scored.turns[0].cut_from_chars == 5_000
    assert scored.turns[0].to_json()["cut_from_chars"] == 5_000


def supported(support: str) -> ChatTurn:
    """A plain answer whose evidence, search result and citation are each ``support``."""
    return ChatTurn(
        prompt="q",
        answer=PLAIN,
        evidence=[RetrievedItem(rank=1, text=support, file_id="d")],
        tool_calls=[ToolCall("1", "search_knowledge_base", {"query": "q"}, support)],
        citations=[Citation("[1]", "d", None, None, support)],
    )


def test_support_texts_are_cut_as_the_answer_is() -> None:
    long_text = repeat("Maximum pressure 16 bar. ", 3 * MB)
    bounded = bounded_turn(supported(long_text), 50_000)
    assert len(bounded.evidence[0].text) <= 50_000
    assert len(bounded.tool_calls[0].result or "") <= 50_000
    assert len(bounded.citations[0].content or "") <= 50_000
    assert bounded_turn(bounded, 50_000) is bounded  # nothing left to cut
    case, lang, _ = _gold()
    options = AnswerScoringOptions(max_scored_chars=20_000)

    def scored(support: str) -> int:
        transcript = Transcript([supported(support)], 1.0)
        return work(lambda: score_transcript(case, lang, transcript, options=options))

    scored(repeat("Maximum pressure 15 bar! ", 40_000))  # warm-up on another text
    # 3 MB of support texts cost what 40 KB of the same shape cost (another text: the parse
    # of a support text is cached): both are cut to 20,000 characters first
    assert scored(long_text) <= 1.5 * scored(repeat("Maximum pressure 17 bar. ", 40_000))


def test_cut_for_scoring_cuts_at_a_whitespace_never_inside_a_number() -> None:
    assert cut_for_scoring("short", 10) == ("short", None)
    cut, length = cut_for_scoring("a" * 5 + " 350 bar", 9)
    assert (cut, length) == ("aaaaa", 13)
    cut, length = cut_for_scoring("x" * 50, 10)  # no whitespace: a hard cut
    assert (cut, length) == ("x" * 10, 50)


def test_the_default_cap_and_budget() -> None:
    options = scoring_options({})
    assert options.max_scored_chars == MAX_SCORED_CHARS == 200_000
    assert options.scoring_budget_s == 30.0
    options = scoring_options({"max_scored_chars": 50_000, "scoring_budget_s": 5})
    assert (options.max_scored_chars, options.scoring_budget_s) == (50_000, 5.0)


@pytest.mark.parametrize(
    ("settings_", "message"),
    [
        ({"max_scored_chars": 10}, "max_scored_chars must be an integer >= 1000"),
        ({"max_scored_chars": "big"}, "max_scored_chars must be an integer >= 1000"),
        ({"scoring_budget_s": 0}, "scoring_budget_s must be a number > 0"),
        ({"scoring_budget_s": True}, "scoring_budget_s must be a number > 0"),
    ],
)
def test_bad_bounds_are_refused(settings_: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        scoring_options(settings_)


# --------------------------------------------------------------------------- the budget


def test_a_run_over_its_scoring_budget_is_a_scoring_error_not_the_systems() -> None:
    case, lang, _ = _gold()
    transcript = Transcript([ChatTurn(prompt="q", answer=PLAIN)], 1.0)
    with pytest.raises(ScoringBudgetExceeded) as raised:
        score(PLAIN, AnswerScoringOptions(scoring_budget_s=1e-9))
    record = scoring_failed_record(
        RunKey(case.id, "cand", 1, lang, "B"),
        case=case,
        split="development",
        role="candidate",
        transcript=transcript,
        exc=raised.value,
    )
    assert record.error is not None
    assert record.error.kind == "scoring_budget"
    assert not record.met
    assert record.reasons[0].startswith("scoring error: scoring took longer")
    ok = score(PLAIN, AnswerScoringOptions())
    row = summarize([record, ok], layer="B")
    assert (row.runs, row.errors, row.error_rate, row.scoring_errors) == (2, 0, 0.0, 1)
    assert row.error_kinds == {}
    assert row.to_json()["scoring_errors"] == 1


def test_rescoring_a_run_over_its_budget_records_it_as_the_session_did() -> None:
    case, lang, files = _gold()
    transcript = Transcript([ChatTurn(prompt="q", answer=PLAIN)], 1.0)
    key = RunKey(case.id, "cand", 1, lang, "B")
    raw = raw_chat_run(
        key, prompts=["q"], role="candidate", adapter="python", transcript=transcript
    )
    line = read_raw_run(json.loads(json.dumps(raw)))  # as a rescore reads it from disk
    assert isinstance(line, ChatRawRun)
    record = score_raw_chat_run(
        key,
        line,
        case=case,
        split="development",
        allowed_files=files,
        options=AnswerScoringOptions(scoring_budget_s=1e-9),
    )
    assert record.error is not None
    assert record.error.kind == "scoring_budget"


@settings(max_examples=300, deadline=None)
@given(
    st.text(alphabet=st.sampled_from(list("aB ß\u0130\n\t\u3000é1")), max_size=60),
    st.integers(1, 8),
)
def test_the_answer_digest_reads_in_chunks_as_it_read_whole(text: str, chunk: int) -> None:
    whole = " ".join(text.casefold().split())
    expected = hashlib.sha1(whole.encode("utf-8")).hexdigest()[:12]
    assert text_fingerprint(text, chunk) == expected


# --------------------------------------------------------------------------- language text

_OLD_QUOTED = re.compile(r"«[^»]*»|„[^“”\"]*[“”\"]|“[^”]*”|\"[^\"\n]*\"|`[^`]*`")
_OLD_NOISE = re.compile(r"\S*\d\S*|[|*#_>=~+-]+")


def _old_language_text(text: str) -> str:
    for pattern in (_OLD_QUOTED, URL, FILENAME, CITATION_MARKER, _OLD_NOISE):
        text = pattern.sub(" ", text)
    return re.sub(r"\s+", " ", text).strip()


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list('ab é1 2\n\t-*#|«»„“”"`[]().:/_')), max_size=300))
def test_language_cleaning_keeps_its_meaning(text: str) -> None:
    """The linear cleaning removes exactly what the former regex cleaning removed."""
    assert language_text(text) == _old_language_text(text)
