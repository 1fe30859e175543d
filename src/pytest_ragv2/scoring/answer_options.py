"""How an answer is scored within bounds, and what every turn's scoring shares: the options
([tool.ragv2.answer_scoring]), the cut of an answer and of its support texts, the scoring
budget, the allowed files and the turn's context (pytest_ragv2.scoring.answers scores with
them).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from pytest_ragv2.scoring.answer_text import fold
from pytest_ragv2.scoring.grounding import (
    CorpusNames,
    Support,
)
from pytest_ragv2.scoring.phrases import (
    DEFAULT_REFUSAL_PHRASES,
    DEFAULT_SYNTHETIC_LABELS,
)
from pytest_ragv2.scoring.turn_gold import TurnGold
from pytest_ragv2.scoring.vetoes import (
    Allowed,
)
from pytest_ragv2.systems.outputs import RetrievedItem
from pytest_ragv2.systems.transcripts import ChatTurn

SYNTHETIC_SOURCE_TYPES = frozenset({"synthetic_record", "combined"})


_CONSTRAINT_VETOES = frozenset({"incompatible_presented_compatible", "constraint_weakened"})


MIXED_BELOW = 0.999


# an answer identified as another language at this confidence has its values read that way
READ_AS_WRITTEN_FROM = 0.99


_GENERIC_CONSTRAINTS = frozenset({"language", "format", "cites_source"})


MAX_SCORED_CHARS = 200_000  # of one answer; the rest is not scored (the turn says so)


SCORING_BUDGET_S = 30.0  # per run; beyond it the run is a ``scoring_budget`` error


_CUT_BACKOFF_CHARS = 1_000  # look this far back for a whitespace to cut at


class ScoringBudgetExceeded(Exception):
    """Scoring one run took longer than its budget (``scoring_budget_s``)."""

    def __init__(self, budget_s: float, stage: str) -> None:
        super().__init__(f"scoring took longer than its budget of {budget_s:g} s (at {stage})")
        self.budget_s = budget_s
        self.stage = stage


def bounded_turn(turn: ChatTurn, max_chars: int) -> ChatTurn:
    """``turn`` with its prompt, every evidence text, tool result and citation content cut
    to ``max_chars`` (the answer is cut by the caller, which records it): support texts are
    read by the same linear scorers, and a 100 MB tool result must not outlast the budget
    before the first checkpoint. The turn itself when nothing is that long."""

    def cut(text: str) -> str:
        return cut_for_scoring(text, max_chars)[0]

    def long(text: str | None) -> bool:
        return text is not None and len(text) > max_chars

    if not (
        long(turn.prompt)
        or any(long(item.text) for item in turn.evidence)
        or any(long(call.result) for call in turn.tool_calls)
        or any(long(citation.content) for citation in turn.citations)
    ):
        return turn
    return replace(
        turn,
        prompt=cut(turn.prompt),
        evidence=[replace(i, text=cut(i.text)) if long(i.text) else i for i in turn.evidence],
        tool_calls=[
            replace(c, result=cut(c.result)) if c.result is not None and long(c.result) else c
            for c in turn.tool_calls
        ],
        citations=[
            replace(c, content=cut(c.content)) if c.content is not None and long(c.content) else c
            for c in turn.citations
        ],
    )


def cut_for_scoring(answer: str, max_chars: int) -> tuple[str, int | None]:
    """``answer`` cut to at most ``max_chars`` characters, at the last whitespace of its
    final :data:`_CUT_BACKOFF_CHARS` characters when there is one (no number or word cut in
    two), and the answer's length when it was cut (None when it was not)."""
    if len(answer) <= max_chars:
        return answer, None
    cut = answer[:max_chars]
    window = cut[-_CUT_BACKOFF_CHARS:]
    for index in range(len(window) - 1, -1, -1):
        if window[index].isspace():
            cut = cut[: len(cut) - len(window) + index]
            break
    return cut, len(answer)


def _default_refusals() -> Mapping[str, tuple[str, ...]]:
    return DEFAULT_REFUSAL_PHRASES


def _default_labels() -> Mapping[str, tuple[str, ...]]:
    return DEFAULT_SYNTHETIC_LABELS


@dataclass(frozen=True, slots=True)
class AnswerScoringOptions:
    """Knobs of the answer scorers.

    ``kb_path`` is the path of the system under test (``systematic`` disables the
    ``search_knowledge_base`` count checks). ``identify_language`` False skips language
    identification (the Language dimension then passes as "not checked").
    """

    languages: tuple[str, ...] = ("fr", "de", "en")
    identify_language: bool = True
    language_min_words: int = 3
    language_min_confidence: float = 0.8
    refusal_phrases: Mapping[str, tuple[str, ...]] = field(default_factory=_default_refusals)
    synthetic_labels: Mapping[str, tuple[str, ...]] = field(default_factory=_default_labels)
    kb_path: Literal["agentic", "systematic", "any"] = "any"
    gold_lang: str | None = None
    max_scored_chars: int = MAX_SCORED_CHARS
    scoring_budget_s: float | None = SCORING_BUDGET_S
    # the identifiers and filenames of the indexed corpus, read on first need: one the
    # passages do not hold but the corpus does is real, not invented
    corpus_names: Callable[[], CorpusNames] | None = None


def allowed_files(allowlist: Any) -> frozenset[str]:
    """The ``allowlist_files`` set of an allow-list (:mod:`pytest_ragv2.gold.allowlist`): its
    file ids and names."""
    return frozenset(allowlist.file_ids) | frozenset(allowlist.filenames)


def _is_synthetic(item: RetrievedItem) -> bool:
    metadata = item.metadata
    if metadata.get("synthetic") is True:
        return True
    return str(metadata.get("source_type", "")).startswith("synthetic")


def _turn_texts(turn: ChatTurn) -> list[str]:
    texts = [item.text for item in turn.evidence]
    texts += [call.result for call in turn.tool_calls if call.result]
    texts += [citation.content for citation in turn.citations if citation.content]
    return texts


def _turn_filenames(turn: ChatTurn) -> list[str]:
    names = [name for item in turn.evidence for name in (item.filename, item.file_id) if name]
    names += [name for c in turn.citations for name in (c.filename, c.file_id) if name]
    return names


def _names_source(answer: str, turn: ChatTurn, gold: TurnGold) -> bool:
    if any(c.file_id or c.filename or c.content for c in turn.citations):
        return True
    folded = fold(answer)
    names = [n for item in turn.evidence for n in (item.filename, item.file_id) if n]
    names += [n for e in gold.required_evidence for n in (e.filename, e.file_id) if n]
    for name in names:
        base = fold(name)
        stem = base.rsplit(".", 1)[0]
        if base in folded or (len(stem) >= 4 and stem in folded):
            return True
    return False


@dataclass(slots=True)
class _Context:
    lang: str
    options: AnswerScoringOptions
    allowed: Allowed | None
    history: list[Support]
    history_names: list[str]
    deadline: float | None = None  # time.monotonic() after which scoring stops

    def checkpoint(self, stage: str) -> None:
        """Raise :class:`ScoringBudgetExceeded` once the run's budget is spent."""
        budget = self.options.scoring_budget_s
        if self.deadline is not None and budget is not None and time.monotonic() > self.deadline:
            raise ScoringBudgetExceeded(budget, stage)
