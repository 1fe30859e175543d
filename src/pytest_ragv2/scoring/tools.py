"""Tool-use expectations of one turn (``expect_tools``, docs/case-format.md).

Pure functions, no I/O. Every key the gold gives is one :class:`ToolCheck`:

- ``calls`` / ``min_calls`` / ``max_calls``: the number of the turn's calls of that tool
  (``any_tool``: of every tool together);
- ``queries_cover``: every subject has an alternative occurring (folded: case- and
  accent-insensitive) in the string arguments of the tool's calls taken together;
- ``cites_result_url``: the answer (or a citation's file id/filename) holds a URL that occurs
  in the tool's results (compared without scheme, ``www.``, trailing ``/`` and punctuation);
- ``grounded_in_results``: the answer's numbers and identifiers that the prompt does not
  already hold all occur in the tool's results, and there is at least one;
- ``result_contains``: some result of the tool contains the text (folded);
- ``turn_completes``: the turn ran, has no error and a non-empty answer.

On the systematic knowledge-base path (``kb_path="systematic"``) the search is no model tool
call: every ``search_knowledge_base`` key is skipped (recorded with ``passed=None``).
``requires``, ``follow_up_of`` and ``answers_from_turn`` are not scored here.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pytest_ragv2.gold.schema import ExpectTools, ToolExpectation
from pytest_ragv2.scoring.answer_text import fold
from pytest_ragv2.scoring.grounding import Fact, Support, fact_supported, text_support
from pytest_ragv2.scoring.markers import URL
from pytest_ragv2.systems.transcripts import ChatTurn, ToolCall

KB_TOOL = "search_knowledge_base"
ANY_TOOL = "any_tool"


@dataclass(frozen=True, slots=True)
class ToolCheck:
    """One ``expect_tools`` key judged on one turn; ``passed`` None = not applicable."""

    tool: str
    key: str
    passed: bool | None
    detail: str

    def to_json(self) -> dict[str, Any]:
        return {"tool": self.tool, "key": self.key, "passed": self.passed, "detail": self.detail}


def tool_name_matches(called: str, expected: str) -> bool:
    """An MCP tool is called as ``<server>.<tool>`` (Codex): it counts as ``<tool>``."""
    return called == expected or called.endswith("." + expected)


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [text for item in value.values() for text in _strings(item)]
    if isinstance(value, list):
        return [text for item in value for text in _strings(item)]
    return []


def _url_key(url: str) -> str:
    key = re.sub(r"^https?://(www\.)?", "", url.strip().casefold())
    return key.rstrip("/.,;:)")


def _count_checks(tool: str, expectation: ToolExpectation, count: int) -> list[ToolCheck]:
    checks = []
    if expectation.calls is not None:
        checks.append(
            ToolCheck(
                tool,
                "calls",
                count == expectation.calls,
                f"{count} calls, expected {expectation.calls}",
            )
        )
    if expectation.min_calls is not None:
        checks.append(
            ToolCheck(
                tool,
                "min_calls",
                count >= expectation.min_calls,
                f"{count} calls, expected at least {expectation.min_calls}",
            )
        )
    if expectation.max_calls is not None:
        checks.append(
            ToolCheck(
                tool,
                "max_calls",
                count <= expectation.max_calls,
                f"{count} calls, expected at most {expectation.max_calls}",
            )
        )
    return checks


def _tool_checks(
    tool: str,
    expectation: ToolExpectation,
    calls: Sequence[ToolCall],
    turn: ChatTurn,
    facts: Sequence[Fact],
    prompt_support: Support,
) -> list[ToolCheck]:
    checks = _count_checks(tool, expectation, len(calls))
    if expectation.queries_cover:
        arguments = fold(" ".join(text for call in calls for text in _strings(call.arguments)))
        missing = []
        for subject in expectation.queries_cover:
            alternatives = [subject] if isinstance(subject, str) else list(subject)
            if not any(fold(alternative) in arguments for alternative in alternatives):
                missing.append(" / ".join(alternatives))
        detail = "every subject searched" if not missing else "not searched: " + "; ".join(missing)
        checks.append(ToolCheck(tool, "queries_cover", not missing, detail))
    results = [call.result for call in calls if call.result is not None]
    if expectation.cites_result_url:
        result_urls = {_url_key(m.group()) for text in results for m in URL.finditer(text)}
        cited = [m.group() for m in URL.finditer(turn.answer)]
        cited += [
            name
            for citation in turn.citations
            for name in (citation.file_id, citation.filename)
            if name and URL.match(name)
        ]
        hit = next((url for url in cited if _url_key(url) in result_urls), None)
        detail = f"cites {hit}" if hit else f"{len(cited)} URLs cited, none from the results"
        checks.append(ToolCheck(tool, "cites_result_url", hit is not None, detail))
    if expectation.grounded_in_results:
        checks.append(_grounded_check(tool, results, facts, prompt_support))
    if expectation.result_contains is not None:
        wanted = fold(expectation.result_contains)
        found = any(wanted in fold(text) for text in results)
        detail = (
            "found in a result" if found else f"no result holds {expectation.result_contains!r}"
        )
        checks.append(ToolCheck(tool, "result_contains", found, detail))
    return checks


def _grounded_check(
    tool: str, results: Sequence[str], facts: Sequence[Fact], prompt_support: Support
) -> ToolCheck:
    support = Support.merge(text_support(text) for text in results)
    own = []
    for fact in facts:
        if fact.kind == "filename" or fact_supported(fact, prompt_support):
            continue
        own.append((fact, fact_supported(fact, support)))
    if not own:
        return ToolCheck(tool, "grounded_in_results", False, "the answer states no fact to check")
    missing = [fact.text for fact, backed in own if not backed]
    if missing:
        return ToolCheck(
            tool, "grounded_in_results", False, "not in the results: " + ", ".join(missing)[:150]
        )
    return ToolCheck(tool, "grounded_in_results", True, f"{len(own)} facts found in the results")


def check_tools(
    expect: ExpectTools,
    turn: ChatTurn,
    facts: Sequence[Fact],
    prompt_support: Support,
    *,
    kb_path: str = "any",
) -> list[ToolCheck]:
    """Every ``expect_tools`` key of the turn judged (see the module docstring)."""
    checks: list[ToolCheck] = []
    for tool, expectation in expect.tools.items():
        if tool == KB_TOOL and kb_path == "systematic":
            checks.append(
                ToolCheck(tool, "*", None, "systematic knowledge-base path: no tool call to judge")
            )
            continue
        calls = (
            list(turn.tool_calls)
            if tool == ANY_TOOL
            else [call for call in turn.tool_calls if tool_name_matches(call.name, tool)]
        )
        checks.extend(_tool_checks(tool, expectation, calls, turn, facts, prompt_support))
    if expect.turn_completes:
        completed = turn.ran and turn.error is None and bool(turn.answer.strip())
        if completed:
            detail = "final answer given"
        elif not turn.ran:
            detail = "the turn was not sent"
        elif turn.error is not None:
            detail = f"{turn.error.kind}: {turn.error.message}"[:200]
        else:
            detail = "empty answer"
        checks.append(ToolCheck("turn", "turn_completes", completed, detail))
    return checks
