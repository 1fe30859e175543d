"""Tool-use expectations (docs/case-format.md vocabulary), one key at a time."""

from __future__ import annotations

from collections.abc import Mapping

from pytest_ragv2.gold.schema import ExpectTools
from pytest_ragv2.scoring.grounding import Support, answer_facts, text_support
from pytest_ragv2.scoring.tools import ToolCheck, check_tools
from pytest_ragv2.systems.outputs import RunError
from pytest_ragv2.systems.transcripts import ChatTurn, Citation, ToolCall

PY_RESULT = (
    '{"results": [{"url": "https://www.python.org/downloads/release/python-3131/", '
    '"snippet": "Python 3.13.1 is the latest stable release."}]}'
)


def judge(expect: Mapping[str, object], turn: ChatTurn, kb_path: str = "any") -> list[ToolCheck]:
    support = Support.merge([text_support(turn.prompt)])
    facts = answer_facts(turn.answer, "en", support)
    return check_tools(ExpectTools.model_validate(expect), turn, facts, support, kb_path=kb_path)


def passed(checks: list[ToolCheck]) -> list[tuple[str, str, bool | None]]:
    return [(c.tool, c.key, c.passed) for c in checks]


def kb(query: str) -> ToolCall:
    return ToolCall("c", "search_knowledge_base", {"query": query}, "{}")


def web(query: str, result: str | None = PY_RESULT) -> ToolCall:
    return ToolCall("w", "web_search", {"query": query}, result)


def test_call_counts_exact_min_max_and_any_tool() -> None:
    turn = ChatTurn(prompt="q", answer="a", tool_calls=[kb("x"), kb("y")])
    expect = {"search_knowledge_base": {"calls": 1, "min_calls": 1, "max_calls": 2}}
    assert passed(judge(expect, turn)) == [
        ("search_knowledge_base", "calls", False),
        ("search_knowledge_base", "min_calls", True),
        ("search_knowledge_base", "max_calls", True),
    ]
    restraint = judge({"any_tool": {"calls": 0}}, turn)
    assert passed(restraint) == [("any_tool", "calls", False)]
    assert restraint[0].detail == "2 calls, expected 0"
    assert passed(judge({"web_search": {"calls": 0}}, turn)) == [("web_search", "calls", True)]


def test_the_systematic_path_skips_knowledge_base_keys_only() -> None:
    turn = ChatTurn(prompt="q", answer="a", tool_calls=[web("x")])
    expect = {"search_knowledge_base": {"min_calls": 1}, "web_search": {"calls": 0}}
    assert passed(judge(expect, turn, kb_path="systematic")) == [
        ("search_knowledge_base", "*", None),
        ("web_search", "calls", False),
    ]


def test_queries_cover_every_subject_with_any_alternative() -> None:
    expect = {"search_knowledge_base": {"queries_cover": [["payload", "capacity"], ["remote"]]}}
    both = ChatTurn(prompt="q", answer="a", tool_calls=[kb("X2 Capacity"), kb("remote days")])
    assert passed(judge(expect, both)) == [("search_knowledge_base", "queries_cover", True)]
    one = ChatTurn(prompt="q", answer="a", tool_calls=[kb("X2 payload and more")])
    [check] = judge(expect, one)
    assert check.passed is False
    assert check.detail == "not searched: remote"
    accents = {"search_knowledge_base": {"queries_cover": ["préavis"]}}
    folded = ChatTurn(prompt="q", answer="a", tool_calls=[kb("PREAVIS Meridia")])
    assert passed(judge(accents, folded)) == [("search_knowledge_base", "queries_cover", True)]


def test_cites_result_url_and_grounded_in_results() -> None:
    expect = {"web_search": {"calls": 1, "cites_result_url": True, "grounded_in_results": True}}
    good = ChatTurn(
        prompt="What is the latest stable Python release?",
        answer="The latest stable release is Python 3.13.1 "
        "(https://python.org/downloads/release/python-3131).",
        tool_calls=[web("latest python")],
    )
    assert passed(judge(expect, good)) == [
        ("web_search", "calls", True),
        ("web_search", "cites_result_url", True),
        ("web_search", "grounded_in_results", True),
    ]
    by_citation = ChatTurn(
        prompt="q",
        answer="Python 3.13.1 [1].",
        tool_calls=[web("latest python")],
        citations=[Citation("[1]", "https://www.python.org/downloads/release/python-3131/")],
    )
    assert judge(expect, by_citation)[1].passed is True
    invented = ChatTurn(
        prompt="q", answer="It is Python 3.14.2, see https://example.org/py.", tool_calls=[web("p")]
    )
    checks = judge(expect, invented)
    assert passed(checks)[1:] == [
        ("web_search", "cites_result_url", False),
        ("web_search", "grounded_in_results", False),
    ]
    assert "3.14.2" in checks[2].detail or "14" in checks[2].detail


def test_result_contains_and_turn_completes() -> None:
    offline = "Error during Web Search: no internet connection"
    expect = {
        "web_search": {"calls": 1, "result_contains": offline},
        "turn_completes": True,
    }
    relayed = ChatTurn(
        prompt="q",
        answer="I could not search the web: there is no internet connection.",
        tool_calls=[web("python", result=offline)],
    )
    assert passed(judge(expect, relayed)) == [
        ("web_search", "calls", True),
        ("web_search", "result_contains", True),
        ("turn", "turn_completes", True),
    ]
    hung = ChatTurn(
        prompt="q",
        answer="",
        tool_calls=[web("python", result="[]")],
        error=RunError("timeout", "no answer within 60 s"),
    )
    checks = judge(expect, hung)
    assert passed(checks)[1:] == [
        ("web_search", "result_contains", False),
        ("turn", "turn_completes", False),
    ]
    assert checks[2].detail == "timeout: no answer within 60 s"
    not_sent = ChatTurn(prompt="q", ran=False)
    assert judge({"turn_completes": True}, not_sent)[0].detail == "the turn was not sent"
