"""The bounds every chat adapter shares: a total deadline per conversation.

``conversation_timeout_s`` bounds one ``converse`` call as a whole: every turn, every tool
round, every retry and its backoff. The adapter makes a ``Deadline`` when the conversation
starts and hands it to each call it makes; a call never waits past it (an HTTP try is
given at most the time left, a command is killed when it passes), and the turn under way
when it passes ends with a ``timeout`` error, so the later turns are recorded as not run
(``transcripts.run_conversation``).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from pytest_ragv2.systems.config import CONVERSATION_TIMEOUT_MAX_S, AdapterConfig, seconds_field


@dataclass(frozen=True, slots=True)
class Deadline:
    """A point in ``time.monotonic()`` time no call of one conversation may pass."""

    at: float
    seconds: float  # as configured, for the messages

    @classmethod
    def after(cls, seconds: float) -> Deadline:
        return cls(at=time.monotonic() + seconds, seconds=seconds)

    def remaining(self) -> float:
        return self.at - time.monotonic()

    def passed(self) -> bool:
        return self.remaining() <= 0

    def message(self, doing: str) -> str:
        bound = f"conversation_timeout_s = {self.seconds:g}"
        return f"{doing}: the conversation's deadline passed ({bound})"


class ChatAdapterConfig(AdapterConfig):
    """A chat adapter's configuration: what bounds one conversation as a whole."""

    conversation_timeout_s: float | None = seconds_field(
        None,
        CONVERSATION_TIMEOUT_MAX_S,
        "total deadline of one conversation (every turn, tool round, retry); "
        "when it passes the turn under way is a timeout and the later turns are not run; "
        "None: only the per-call timeout_s bounds",
    )

    def conversation_deadline(self) -> Deadline | None:
        """A fresh deadline for a conversation starting now (None: no total bound)."""
        seconds = self.conversation_timeout_s
        return None if seconds is None else Deadline.after(seconds)
