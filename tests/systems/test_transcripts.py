"""The conversation loop every chat adapter shares, and the transcript's JSON round trip."""

from __future__ import annotations

from pytest_ragv2.systems.outputs import RetrievedItem, RunError
from pytest_ragv2.systems.transcripts import (
    ChatTurn,
    Citation,
    ToolCall,
    Transcript,
    run_conversation,
)


def test_a_failed_turn_ends_the_conversation_and_a_bug_is_an_internal_error() -> None:
    sent: list[tuple[int, str]] = []

    def send(number: int, prompt: str) -> ChatTurn:
        sent.append((number, prompt))
        if number == 1:
            raise ValueError("adapter bug")
        return ChatTurn(prompt=prompt, answer=prompt.upper())

    transcript = run_conversation(["a", "b", "c"], send)
    assert sent == [(0, "a"), (1, "b")]
    first, second, third = transcript.turns
    assert first.answer == "A"
    assert second.error == RunError("internal", "ValueError: adapter bug")
    assert third.ran is False
    assert transcript.error == second.error
    assert transcript.final_answer == ""


def test_a_recorded_error_stops_as_well() -> None:
    def send(number: int, prompt: str) -> ChatTurn:
        return ChatTurn(prompt=prompt, error=RunError("timeout", "no answer"))

    transcript = run_conversation(["a", "b"], send)
    assert [turn.ran for turn in transcript.turns] == [True, False]


def test_a_transcript_survives_its_json() -> None:
    turn = ChatTurn(
        prompt="p",
        answer="16 bar [1]",
        tool_calls=[ToolCall("c1", "search_knowledge_base", {"query": "q"}, '{"sources": []}')],
        citations=[Citation("[1]", "datasheet", "datasheet.pdf", 2, "max 16 bar")],
        usage={"prompt_tokens": 3},
        evidence=[RetrievedItem(rank=1, text="max 16 bar", file_id="datasheet", page=2)],
        finish_reason="stop",
    )
    transcript = Transcript(turns=[turn, ChatTurn(prompt="q", ran=False)], latency_s=0.5)
    assert Transcript.from_json(transcript.to_json()) == transcript
