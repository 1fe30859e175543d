"""Layer B: one conversation, its raw run, and its scored item record.

The raw run (the whole transcript: every turn's exchanges, tool calls, evidence) is written
before anything is scored, so ``ragv2 rescore`` can rebuild the record from disk alone.
The item record is plain JSON: flat answer metrics for the session tables, the rubric, the
vetoes with their offending text, and the reasons the run did not meet its case.
"""

from __future__ import annotations

import hashlib
from collections.abc import Collection, Iterable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pytest_ragv2.deciding.records import ChatRecord
from pytest_ragv2.gold.corpus_names import corpus_names_source
from pytest_ragv2.gold.schema import Case
from pytest_ragv2.report.excerpts import excerpt
from pytest_ragv2.run.keys import RunKey
from pytest_ragv2.scoring.answers import (
    MAX_SCORED_CHARS,
    AnswerScore,
    AnswerScoringOptions,
    ScoringBudgetExceeded,
    score_transcript,
)
from pytest_ragv2.scoring.metrics import answer_values
from pytest_ragv2.systems.outputs import RunError
from pytest_ragv2.systems.transcripts import Transcript

if TYPE_CHECKING:
    from pytest_ragv2.run.raw_models import ChatRawRun

ANSWER_EXCERPT_CHARS = 240


def raw_chat_run(
    key: RunKey, *, prompts: list[str], role: str, adapter: str, transcript: Transcript
) -> dict[str, Any]:
    """The raw run as it is written to disk before any scoring."""
    error = transcript.error
    return {
        "key": key.to_json(),
        "role": role,
        "adapter": adapter,
        "prompts": prompts,
        "finished_at": datetime.now(UTC).isoformat(),
        "latency_s": transcript.latency_s,
        "error": error.to_json() if error else None,
        "transcript": transcript.to_json(),
    }


def skipped_record(key: RunKey, *, case: Case, split: str, role: str, reason: str) -> ChatRecord:
    """The record of a run the system cannot serve (its setup lacks what the case needs)."""
    return ChatRecord(
        key=key,
        category=case.category,
        split=split,
        gold_status=case.gold_status,
        role=role,
        skipped=reason,
        ok=True,
        latency_s=0.0,
        met=True,
    )


def scoring_failed_record(
    key: RunKey, *, case: Case, split: str, role: str, transcript: Transcript, exc: Exception
) -> ChatRecord:
    """The record of a run whose scoring raised: an internal error on the run (counted in the
    error rate, the item fails with the message), its transcript still in the raw runs. A
    run whose scoring outlasted its budget is a ``scoring_budget`` error instead: the item
    fails, the run is counted apart from the system's error rate."""
    if isinstance(exc, ScoringBudgetExceeded):
        error = RunError("scoring_budget", str(exc))
        reason = f"scoring error: {error.message}"
    else:
        error = RunError("internal", f"scoring failed: {exc!r}"[:500])
        reason = f"internal error: {error.message}"
    return ChatRecord(
        key=key,
        category=case.category,
        split=split,
        gold_status=case.gold_status,
        role=role,
        ok=False,
        error=error,
        latency_s=transcript.latency_s,
        met=False,
        reasons=(reason,),
    )


def _usage_totals(transcript: Transcript) -> dict[str, int]:
    totals: dict[str, int] = {}
    for turn in transcript.turns:
        for name, value in turn.usage.items():
            totals[name] = totals.get(name, 0) + value
    return totals


def _sizes(transcript: Transcript) -> dict[str, int]:
    """Input, evidence and output size in characters (tokens when the system reports them
    are in ``usage``), the tool calls, the searches that repeat an earlier query of the same
    turn, and the tool calls whose result is an error."""
    repeated = 0
    for turn in transcript.turns:
        seen: set[tuple[str, str]] = set()
        for call in turn.tool_calls:
            query = " ".join(str(call.arguments.get("query", "")).casefold().split())
            if query and (call.name, query) in seen:
                repeated += 1
            seen.add((call.name, query))
    return {
        "input_chars": sum(len(turn.prompt) for turn in transcript.turns),
        "evidence_chars": sum(
            len(item.text) for turn in transcript.turns for item in turn.evidence
        ),
        "output_chars": sum(len(turn.answer) for turn in transcript.turns),
        "tool_calls": len(transcript.tool_calls),
        "repeated_searches": repeated,
        "tool_errors": sum(1 for call in transcript.tool_calls if _is_tool_error(call.result)),
    }


def _is_tool_error(result: str | None) -> bool:
    if result is None:
        return False
    head = result.lstrip()[:40].casefold()
    return head.startswith(("error", '{"error"'))


DIGEST_CHUNK_CHARS = 1 << 16


def answer_fingerprint(transcript: Transcript) -> str:
    """A short digest of the final answer, whitespace- and case-normalised: equal digests
    over a case's repetitions are the "answer consistency" of the report."""
    return text_fingerprint(transcript.final_answer)


def text_fingerprint(text: str, chunk_chars: int = DIGEST_CHUNK_CHARS) -> str:
    """The first 12 hex digits of the SHA-1 of ``" ".join(text.casefold().split())``, read
    ``chunk_chars`` at a time: memory bounded by the chunk, never by the text's tokens."""
    digest = hashlib.sha1()
    wrote = False  # a token was written
    space_pending = False  # whitespace followed the last token written
    for start in range(0, len(text), chunk_chars):
        chunk = text[start : start + chunk_chars].casefold()
        tokens = chunk.split()
        if not tokens:
            space_pending = space_pending or (wrote and bool(chunk))
            continue
        if wrote and (space_pending or chunk[0].isspace()):
            digest.update(b" ")
        digest.update(" ".join(tokens).encode("utf-8", "surrogatepass"))
        wrote = True
        space_pending = chunk[-1].isspace()
    return digest.hexdigest()[:12]


def evidence_files(transcript: Transcript) -> list[str]:
    """The files of every evidence item and citation of the conversation, sorted."""
    names = {
        item.filename or item.file_id or "?" for turn in transcript.turns for item in turn.evidence
    }
    names |= {
        citation.filename or citation.file_id or "?"
        for turn in transcript.turns
        for citation in turn.citations
        if citation.filename or citation.file_id
    }
    return sorted(names)


def _rate(value: bool | float | int | None) -> float | None:
    return None if value is None else float(value)


def flat_answer_metrics(score: AnswerScore, transcript: Transcript) -> dict[str, float | None]:
    """The run's answer metrics as numbers, as :data:`pytest_ragv2.scoring.metrics.ANSWER_METRICS`
    declares them; None where a metric does not apply to the run."""
    return answer_values(score, transcript)


def _turn_reasons(score: AnswerScore, turns: int) -> list[str]:
    """Why the run did not meet its case, turn by turn, in the words a reviewer needs."""
    reasons: list[str] = []
    for turn in score.turns:
        where = f"turn {turn.turn}: " if turns > 1 else ""
        if turn.required_missed:
            reasons.append(f"{where}required claim(s) missing: {', '.join(turn.required_missed)}")
        if turn.forbidden_found:
            reasons.append(f"{where}forbidden claim(s) made: {', '.join(turn.forbidden_found)}")
        if turn.safe_refusal_correct is False:
            reasons.append(f"{where}a safe refusal was required")
        if turn.over_refusal:
            reasons.append(f"{where}refused where an answer was due")
        for violation in turn.constraint_violations:  # language, format, cites_source, ...
            reasons.append(f"{where}constraint not kept: {violation}")
        for check in turn.tool_checks:
            if check.passed is False:
                reasons.append(f"{where}tools: {check.tool}.{check.key}: {check.detail}")
    for veto in score.vetoes:
        reasons.append(f"VETO {veto.kind} (turn {veto.turn}): {veto.text!r} — {veto.detail}")
    return reasons


def scoring_notes(score: AnswerScore) -> tuple[str, ...]:
    """What scoring left out of the run's answers (an answer cut to ``max_scored_chars``)."""
    notes = []
    for turn in score.turns:
        if turn.cut_from_chars is not None:
            where = f"turn {turn.turn}: " if len(score.turns) > 1 else ""
            notes.append(f"{where}answer of {turn.cut_from_chars:,} characters cut for scoring")
    return tuple(notes)


def _unique(texts: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(texts))


def chat_record(
    key: RunKey,
    *,
    case: Case,
    split: str,
    role: str,
    transcript: Transcript,
    allowed_files: Collection[str] | None,
    options: AnswerScoringOptions,
) -> ChatRecord:
    """Score one conversation and decide whether it met its case; pure."""
    score = score_transcript(
        case, key.lang, transcript, allowlist_files=allowed_files, options=options
    )
    error = transcript.error
    reasons: list[str] = []
    if error is not None:
        reasons.append(f"{error.kind} error: {error.message}")
    reasons.extend(_turn_reasons(score, len(transcript.turns)))
    # the scorer did not guess: the run waits for a reviewer (never met until ruled)
    reasons.extend(f"needs review: {reason}" for reason in score.review)
    rubric = {name.lower(): grade.verdict for name, grade in score.rubric.items()}
    rubric["overall"] = score.verdict
    return ChatRecord(
        key=key,
        category=case.category,
        split=split,
        gold_status=case.gold_status,
        role=role,
        ok=error is None,
        error=error,
        latency_s=transcript.latency_s,
        turn_latency_s=tuple(turn.latency_s for turn in transcript.turns),
        metrics=flat_answer_metrics(score, transcript),
        rubric=rubric,
        rubric_reasons={
            name.lower(): grade.reason
            for name, grade in score.rubric.items()
            if grade.verdict != "PASS"
        },
        vetoes=tuple(score.vetoes),
        met=not reasons,
        reasons=tuple(reasons),
        usage=_usage_totals(transcript),
        sizes=_sizes(transcript),
        answer_digest=answer_fingerprint(transcript),
        evidence_files=tuple(evidence_files(transcript)),
        answer=excerpt(transcript.final_answer, ANSWER_EXCERPT_CHARS),
        claims_missed=_unique(claim for turn in score.turns for claim in turn.required_missed),
        claims_forbidden=_unique(claim for turn in score.turns for claim in turn.forbidden_found),
        scoring_notes=scoring_notes(score),
        review=tuple(score.review),
        cited_files=tuple(
            sorted(
                {
                    citation.filename or citation.file_id or "?"
                    for turn in transcript.turns
                    for citation in turn.citations
                    if citation.filename or citation.file_id
                }
            )
        ),
    )


def scoring_options(
    settings: Mapping[str, Any],
    kb_path: Literal["agentic", "systematic", "any"] = "any",
    corpus: Path | None = None,
) -> AnswerScoringOptions:
    """The answer scorers' options from ``[tool.ragv2.answer_scoring]``: ``languages``,
    ``identify_language``, ``language_min_words``, ``language_min_confidence``, and
    ``refusal_phrases`` / ``synthetic_labels`` (per language; a language given replaces
    that language's defaults, the others keep theirs), the bounds ``max_scored_chars``
    (an answer's characters scored, the rest cut) and ``scoring_budget_s`` (seconds to score
    one run), and ``corpus_names`` (default true: an identifier or filename the passages do
    not hold is looked up in the documents of ``corpus`` before it counts as invented)."""
    defaults = AnswerScoringOptions()
    known = {
        "languages",
        "identify_language",
        "language_min_words",
        "language_min_confidence",
        "refusal_phrases",
        "synthetic_labels",
        "max_scored_chars",
        "scoring_budget_s",
        "corpus_names",
    }
    unknown = sorted(set(settings) - known)
    if unknown:
        raise ValueError(f"answer_scoring: unknown option(s) {', '.join(unknown)}")
    max_chars = settings.get("max_scored_chars", MAX_SCORED_CHARS)
    if isinstance(max_chars, bool) or not isinstance(max_chars, int) or max_chars < 1_000:
        raise ValueError(
            f"answer_scoring: max_scored_chars must be an integer >= 1000: {max_chars!r}"
        )
    budget = settings.get("scoring_budget_s", defaults.scoring_budget_s)
    if isinstance(budget, bool) or not isinstance(budget, int | float) or budget <= 0:
        raise ValueError(f"answer_scoring: scoring_budget_s must be a number > 0: {budget!r}")
    use_corpus = settings.get("corpus_names", True)
    if not isinstance(use_corpus, bool):
        raise ValueError(f"answer_scoring: corpus_names must be true or false: {use_corpus!r}")
    phrases = dict(defaults.refusal_phrases)
    phrases.update({lang: tuple(v) for lang, v in settings.get("refusal_phrases", {}).items()})
    labels = dict(defaults.synthetic_labels)
    labels.update({lang: tuple(v) for lang, v in settings.get("synthetic_labels", {}).items()})
    return AnswerScoringOptions(
        languages=tuple(settings.get("languages", defaults.languages)),
        identify_language=bool(settings.get("identify_language", defaults.identify_language)),
        language_min_words=int(settings.get("language_min_words", defaults.language_min_words)),
        language_min_confidence=float(
            settings.get("language_min_confidence", defaults.language_min_confidence)
        ),
        refusal_phrases=phrases,
        synthetic_labels=labels,
        kb_path=kb_path,
        max_scored_chars=max_chars,
        scoring_budget_s=float(budget),
        corpus_names=corpus_names_source(corpus) if use_corpus else None,
    )


def score_raw_chat_run(
    key: RunKey,
    raw: ChatRawRun,
    *,
    case: Case,
    split: str,
    allowed_files: Collection[str] | None,
    options: AnswerScoringOptions,
) -> ChatRecord:
    """Rebuild an item record from a raw run alone (rescoring); a run whose scoring raises
    or outlasts its budget is recorded as the session recorded it (never a crash)."""
    transcript = raw.transcript.transcript()
    try:
        return chat_record(
            key,
            case=case,
            split=split,
            role=raw.role,
            transcript=transcript,
            allowed_files=allowed_files,
            options=options,
        )
    except Exception as exc:  # a scorer bug costs this run's score, never the rescore
        return scoring_failed_record(
            key, case=case, split=split, role=raw.role, transcript=transcript, exc=exc
        )


def unserved_setup(case: Case, capabilities: Any) -> str | None:
    """Why a system with ``capabilities`` (a ``ChatCapabilities``) cannot serve the case's
    ``expect_tools.requires``; None when it can."""
    requires = case.expect_tools.requires
    problems: list[str] = []
    if requires.kb != capabilities.kb:
        problems.append(f"kb {'attached' if requires.kb else 'detached'}")
    if requires.kb and requires.kb_path not in ("any", capabilities.kb_path):
        problems.append(f"kb_path {requires.kb_path}")
    if requires.web != capabilities.web:
        problems.append(f"web search {'on' if requires.web else 'off'}")
    if requires.network != capabilities.network:
        problems.append("online" if requires.network else "offline")
    if requires.tools_wire and not capabilities.tools_wire:
        problems.append("tool calls on the wire")
    if not problems:
        return None
    return f"needs a setup the system does not provide: {', '.join(problems)}"
