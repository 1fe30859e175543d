"""Real Codex 0.171 streams (``tests/fixtures/codex/``) through the command adapter.

Each turn is a real process that prints what Codex printed for that turn: the adapter's
``argv`` and ``resume_argv`` run a replay script over the recorded file, so the events go
through the same pipe, parsing and mapping as with Codex itself. The replay checks that a
resumed turn was given the recorded thread id, after ``--``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from pytest_ragv2.systems.codex_events import DUPLICATE_KEYS
from pytest_ragv2.systems.command import CommandConfig, CommandRunner
from pytest_ragv2.systems.transcripts import ChatTurn, Transcript

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "codex"
SERVER_USAGE: dict[str, Any] = json.loads((FIXTURES / "server-usage.json").read_text("utf-8"))
WARNING = (
    "Model metadata for `local-model` not found. Defaulting to fallback metadata; "
    "this can degrade performance and cause issues."
)

# prints the recorded stream of the turn whose prompt it is given (the streams of a file
# follow each other, each starting with thread.started); a resumed turn must name the thread
REPLAY = """\
import json, sys
fixture, prompts, args = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3:]
if args[0] == "resume":
    assert args[1] == "--", args
    thread_id, prompt = args[2], args[3]
else:
    assert args[0] == "--", args
    thread_id, prompt = None, args[1]
turns = []
for line in open(fixture, encoding="utf-8"):
    if line.startswith('{"type":"thread.started"'):
        turns.append([])
    turns[-1].append(line)
stream = turns[prompts.index(prompt)]
if thread_id is not None and thread_id not in stream[0]:
    sys.exit("resumed with thread " + thread_id + ", recorded " + stream[0])
sys.stdout.write("".join(stream))
sys.exit(1 if any('"turn.failed"' in line for line in stream) else 0)
"""


def replay(scenario: str) -> Transcript:
    prompts: list[str] = SERVER_USAGE[scenario]["prompts"]
    base = [sys.executable, "-c", REPLAY, str(FIXTURES / f"{scenario}.jsonl"), json.dumps(prompts)]
    config = CommandConfig(
        adapter="command",
        argv=[*base, "--", "{prompt}"],
        resume_argv=[*base, "resume", "--", "{thread_id}", "{prompt}"],
        timeout_s=30.0,
    )
    return CommandRunner("codex-0.171", config).converse(prompts)


def server_turn_usage(requests: list[dict[str, Any]]) -> dict[str, int]:
    """One turn's usage as the Responses server counted it, in Codex's names."""
    return {
        "input_tokens": sum(r["input_tokens"] for r in requests),
        "cached_input_tokens": sum(r["input_tokens_details"]["cached_tokens"] for r in requests),
        "cache_write_input_tokens": 0,
        "output_tokens": sum(r["output_tokens"] for r in requests),
        "reasoning_output_tokens": sum(
            r["output_tokens_details"]["reasoning_tokens"] for r in requests
        ),
    }


def recorded_usage(turn: ChatTurn) -> dict[str, Any]:
    """The usage Codex printed for the turn (its raw turn.completed)."""
    events = turn.exchanges[0].response_body
    [completed] = [event for event in events if event.get("type") == "turn.completed"]
    usage: dict[str, Any] = completed["usage"]
    return usage


def test_ten_resumed_turns_report_the_models_own_per_request_counts() -> None:
    transcript = replay("resumed-ten-turns")
    per_turn_requests = SERVER_USAGE["resumed-ten-turns"]["per_turn_requests"]

    assert transcript.ok, transcript.error
    assert len(transcript.turns) == 10
    expected = [server_turn_usage(requests) for requests in per_turn_requests]
    assert [turn.usage for turn in transcript.turns] == expected
    # Codex's own figure (the thread's running total) is kept beside it
    assert [turn.usage_running_total for turn in transcript.turns] == [
        recorded_usage(turn) for turn in transcript.turns
    ]
    server_input = sum(r["input_tokens"] for turn in per_turn_requests for r in turn)
    assert sum(turn.usage["input_tokens"] for turn in transcript.turns) == server_input
    reported = sum(turn.usage_running_total["input_tokens"] for turn in transcript.turns)
    assert reported > 4 * server_input  # what summing Codex's figures would have claimed
    thread_ids = {turn.thread_id for turn in transcript.turns}
    assert len(thread_ids) == 1
    assert None not in thread_ids
    assert all(turn.warnings == [WARNING] for turn in transcript.turns)
    later = [call.name for call in transcript.tool_calls]
    assert later == ["kb.search", "shell", "kb.search"]


def test_a_first_turn_keeps_the_thread_id_the_warning_and_the_answer() -> None:
    [turn] = replay("first-turn").turns

    assert turn.error is None
    assert turn.answer == "Answer: What is the maximum pressure of the Nimbus?"
    assert turn.thread_id is not None
    assert turn.thread_id == turn.exchanges[0].response_body[0]["thread_id"]
    assert turn.warnings == [WARNING]
    requests = SERVER_USAGE["first-turn"]["per_turn_requests"][0]
    assert turn.usage == server_turn_usage(requests)
    assert turn.usage_running_total == turn.usage  # the thread's total after its first turn


def test_a_command_execution_keeps_its_exit_code_and_status() -> None:
    [turn] = replay("command-execution").turns

    assert turn.error is None
    [call] = turn.tool_calls
    assert call.name == "shell"
    assert call.arguments == {"command": "/bin/bash -lc 'echo nimbus-16-bar; exit 3'"}
    assert call.result == "nimbus-16-bar\n"
    assert (call.status, call.exit_code) == ("failed", 3)
    requests = SERVER_USAGE["command-execution"]["per_turn_requests"][0]
    assert len(requests) == 2  # the tool call, then the answer
    assert turn.usage == server_turn_usage(requests)


def test_an_mcp_tool_call_gives_evidence_and_resolved_citations() -> None:
    [turn] = replay("mcp-tool-call").turns

    assert turn.error is None
    [call] = turn.tool_calls
    assert (call.name, call.arguments, call.status) == (
        "kb.search",
        {"query": "Nimbus maximum pressure"},
        "completed",
    )
    assert [item.file_id for item in turn.evidence] == ["guide-produit-nimbus", "faq-support"]
    assert turn.answer == "From the tool: 16 bar [1]."
    [citation] = turn.citations
    assert (citation.marker, citation.file_id, citation.page) == ("[1]", "guide-produit-nimbus", 3)


def test_a_web_search_item_with_a_repeated_id_key_is_read() -> None:
    [turn] = replay("web-search").turns

    assert turn.error is None
    [call] = turn.tool_calls
    assert (call.id, call.name, call.arguments) == (
        "item_1",
        "web_search",
        {"query": "Nimbus datasheet"},
    )
    completed = [
        event
        for event in turn.exchanges[0].response_body
        if event.get("type") == "item.completed" and event["item"]["type"] == "web_search"
    ]
    assert completed[0]["item"]["id"] == "item_1"
    assert completed[0]["item"][DUPLICATE_KEYS] == {"id": ["ws_1"]}


@pytest.mark.parametrize("scenario", ["turn-failed", "resumed-turn-failed"])
def test_a_turn_failed_is_an_error_and_its_partial_text_is_not_the_answer(
    scenario: str,
) -> None:
    transcript = replay(scenario)
    turn = transcript.turns[-1]

    assert turn.error is not None
    assert turn.error.kind == "adapter"
    assert turn.error.message == (
        "turn.failed: stream disconnected before completion: scripted failure mid-stream"
    )
    assert turn.answer == ""
    assert turn.partial_answer == "Partial answer before the failure"
    assert transcript.final_answer == ""
    assert turn.usage == {}
    assert turn.exchanges[0].status_code == 1
    if scenario == "resumed-turn-failed":
        first = transcript.turns[0]
        assert first.error is None
        assert first.answer == "Answer: Question 1: the pressure?"
        assert turn.thread_id == first.thread_id
    # the partial text survives the JSON round trip, still apart from the answer
    again = Transcript.from_json(json.loads(json.dumps(transcript.to_json())))
    assert again == transcript


def test_an_http_500_from_the_model_is_a_failed_turn() -> None:
    [turn] = replay("http-500").turns

    assert turn.error is not None
    assert turn.error.message.startswith("turn.failed: We")
    assert turn.answer == turn.partial_answer == ""
    assert turn.warnings == [WARNING]


def test_prompts_starting_with_a_dash_reach_codex_as_prompts() -> None:
    transcript = replay("dash-prompt")

    assert transcript.ok, transcript.error
    assert [turn.answer for turn in transcript.turns] == [
        "Answer: -v is this taken as an option?",
        "Answer: --help and this one?",
    ]


def test_the_new_turn_fields_round_trip_and_older_transcripts_still_read() -> None:
    transcript = replay("resumed-ten-turns")
    data = json.loads(json.dumps(transcript.to_json()))

    assert Transcript.from_json(data) == transcript
    shell = data["turns"][4]["tool_calls"][0]
    assert (shell["status"], shell["exit_code"]) == ("completed", 0)
    # a transcript written before these fields existed (and any other adapter's, which
    # leaves them unset) has none of their keys
    new_keys = {"partial_answer", "warnings", "thread_id", "usage_running_total", "stderr_tail"}
    for turn in data["turns"]:
        for key in new_keys:
            turn.pop(key, None)
        for call in turn["tool_calls"]:
            call.pop("status", None)
            call.pop("exit_code", None)
    older = Transcript.from_json(data)
    assert older.turns[4].tool_calls[0].exit_code is None
    assert older.turns[0].warnings == []
    assert older.turns[0].thread_id is None
    assert set(older.turns[0].to_json()) & new_keys == set()
    assert [turn.usage for turn in older.turns] == [turn.usage for turn in transcript.turns]
