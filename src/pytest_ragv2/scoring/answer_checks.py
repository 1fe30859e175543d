"""What one turn's scoring checks besides its claims: the refusal and the values it sets apart,
the answer's language, the source type of its facts, and the mandatory constraints
(pytest_ragv2.scoring.answers scores a turn with them).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import replace

from pytest_ragv2.gold.schema import Claim
from pytest_ragv2.scoring.answer_format import format_ok, requested_format
from pytest_ragv2.scoring.answer_options import (
    _CONSTRAINT_VETOES,
    _GENERIC_CONSTRAINTS,
    MIXED_BELOW,
    SYNTHETIC_SOURCE_TYPES,
    _Context,
    _is_synthetic,
    _names_source,
)
from pytest_ragv2.scoring.answer_records import TurnScore
from pytest_ragv2.scoring.answer_text import find_phrase, overlaps
from pytest_ragv2.scoring.claim_offers import reading_context
from pytest_ragv2.scoring.claims import ClaimMatch
from pytest_ragv2.scoring.grounding import (
    CorpusNames,
    Fact,
    Support,
    fact_supported,
    identifier_key,
    text_support,
)
from pytest_ragv2.scoring.language import LanguageGuess, identify_language, other_language_part
from pytest_ragv2.scoring.refusal import find_refusal, read_refusal
from pytest_ragv2.scoring.refusal_clauses import RefusalReading
from pytest_ragv2.scoring.rubric import clip
from pytest_ragv2.scoring.turn_gold import TurnGold
from pytest_ragv2.scoring.veto_record import Veto
from pytest_ragv2.scoring.vetoes import (
    weakened_numbers,
)
from pytest_ragv2.systems.transcripts import ChatTurn


def _asked(fact: Fact, prompt: Support) -> bool:
    """Whether the question itself states ``fact``: its value's key, or a filename it names."""
    if fact.value is None:
        return fact_supported(fact, prompt)
    return fact.value.key in prompt.keys or (
        fact.value.alternative is not None and fact.value.alternative in prompt.keys
    )


def _refused_values(facts: list[Fact], reading: RefusalReading | None) -> list[Fact]:
    """``facts`` with the numbers and dates inside the refusing clauses of an answer that
    refuses marked supported: what the answer says it cannot give ("impossible d'en tirer
    une année", "I can't confirm a 48 V figure") is not asserted. An identifier there names
    a source as real ("in der Bescheinigung EPZ 24 ATEX 3018 X nicht genannt"): it is."""
    if reading is None or reading.verdict != "refuses":
        return facts
    spans = [(clause.start, clause.end) for clause in reading.refusals]
    return [
        replace(f, supported=True)
        if not f.supported
        and f.kind in ("number", "date")
        and any(a <= f.span[0] and f.span[1] <= b for a, b in spans)
        else f
        for f in facts
    ]


def _corpus_held(
    facts: list[Fact],
    corpus_names: Callable[[], CorpusNames] | None,
    wrong: Collection[tuple[int, int]],
) -> list[Fact]:
    """``facts`` with each identifier and filename the passages do not hold but the corpus
    does marked supported, but for those overlapping a span of ``wrong``."""
    wanted = [
        fact
        for fact in facts
        if not fact.supported
        and fact.kind in ("identifier", "filename")
        and not overlaps(fact.span, wrong)
    ]
    if corpus_names is None or not wanted:
        return facts  # the corpus is read only when an answer needs it
    names = corpus_names()
    held = {fact.span for fact in wanted if names.holds(fact)}
    return [replace(f, supported=True) if f.span in held else f for f in facts]


def _stance_claims(
    answer: str,
    missed: Sequence[Claim],
    phrases: Mapping[str, Sequence[str]],
    credited: Sequence[Claim],
) -> list[Claim]:
    """The missed text claims that state one of ``phrases`` (any language), when the
    answer states one too."""
    listed = [phrase for entries in phrases.values() for phrase in entries]
    if find_phrase(answer, listed, whole_words=False) is None:
        return []
    return [
        claim
        for claim in missed
        if claim.kind is None
        and claim.number is None
        and not claim.pattern
        and claim not in credited
        and find_phrase(claim.text, listed, whole_words=False) is not None
    ]


def _reading(gold: TurnGold, answer: str, context: _Context) -> RefusalReading | None:
    """The whole answer read for refusal (:func:`read_refusal`), when it may refuse or a
    refusal is due; None for an answer with no refusal construction in any language."""
    if not answer.strip():
        return None
    phrases = context.options.refusal_phrases
    if not gold.safe_refusal_expected and find_refusal(answer, context.lang, phrases) is None:
        return None
    return read_refusal(answer, context.lang, phrases)


def _refusal(
    score: TurnScore,
    gold: TurnGold,
    answer: str,
    required_found: int,
    context: _Context,
    reading: RefusalReading | None,
    facts: Sequence[Fact],
) -> None:
    # the prompt language's constructions first, then every other language's: an answer
    # that refuses in another language (a German refusal to an English prompt) still
    # refuses. A refusal clause next to the answer's facts (a caveat) is no refusal: the
    # whole answer is read (``reading``) before any veto or rubric reads ``refused``.
    refuses = reading is not None and reading.verdict == "refuses"
    if gold.safe_refusal_expected and reading is not None and reading.refusals:
        # where a refusal is due, an answer that says the sources are silent refuses unless
        # it offers an answer all the same: a forbidden claim (already left out where it is
        # set apart or quoted from the sources) or a fact of its own (unsupported) outside
        # the clauses it uses as context
        context_spans = reading_context(reading)
        own = [
            fact
            for fact in facts
            if not fact.supported
            and not any(start <= fact.span[0] < end for start, end in context_spans)
        ]
        refuses = not own and not score.forbidden_found and not reading.guessed
    clause = reading.refusals[0].text if refuses and reading and reading.refusals else None
    score.refusal_phrase = clause
    required = gold.expected_answer.required_claims if gold.expected_answer else []
    all_found = bool(required) and required_found == len(required)
    if not gold.safe_refusal_expected and required_found:
        refuses = False  # it states what was asked: a caveat about the rest is no refusal
    score.refused = refuses or (gold.safe_refusal_expected and all_found)
    if not gold.safe_refusal_expected and refuses:
        score.over_refusal = not all_found


def _synthetic_value(turn: ChatTurn, facts: Sequence[Fact]) -> str:
    """How the answer uses a synthetic source through a value only it holds (a project
    record's commissioning year): a number or date no real source nor the prompt holds;
    "" when none."""
    synthetic = [item for item in turn.evidence if _is_synthetic(item)]
    if not synthetic:
        return ""
    real = [text_support(turn.prompt)] + [
        text_support(item.text) for item in turn.evidence if not _is_synthetic(item)
    ]
    for fact in facts:
        if fact.kind not in ("number", "date") or any(fact_supported(fact, s) for s in real):
            continue
        for item in synthetic:
            if fact_supported(fact, text_support(item.text)):
                name = item.filename or item.file_id
                return f"states {fact.text}, which only synthetic source {name} holds"
    return ""


def _source_type(
    score: TurnScore,
    gold: TurnGold,
    turn: ChatTurn,
    answer: str,
    facts: Sequence[Fact],
    context: _Context,
    vetoes: list[Veto],
) -> None:
    if not answer.strip():
        return
    used_by = ""
    if gold.source_type in SYNTHETIC_SOURCE_TYPES and not score.refused:
        used_by = f"case source_type {gold.source_type}"
    else:
        keys = {identifier_key(f.text) for f in facts if f.kind == "identifier"}
        # a name the prompt or a real source also holds (a product model the synthetic
        # records mention too) is no sign that the synthetic source was used
        keys -= text_support(turn.prompt).identifiers
        for item in turn.evidence:
            if keys and not _is_synthetic(item):
                keys -= text_support(item.text).identifiers
        cited = {(c.file_id, c.filename) for c in turn.citations}
        for item in turn.evidence:
            if not _is_synthetic(item):
                continue
            if (item.file_id, item.filename) in cited or any(
                c.file_id == item.file_id and item.file_id for c in turn.citations
            ):
                used_by = f"cites synthetic source {item.filename or item.file_id}"
                break
            if keys & text_support(item.text).identifiers:
                used_by = f"names an identifier of synthetic source {item.filename or item.file_id}"
                break
        if not used_by:
            used_by = _synthetic_value(turn, facts)
    if not used_by:
        return
    score.synthetic_used = True
    labels = [p for ps in context.options.synthetic_labels.values() for p in ps]
    score.synthetic_labelled = find_phrase(answer, labels, whole_words=False) is not None
    if not score.synthetic_labelled:
        vetoes.append(
            Veto(
                "synthetic_as_confirmed",
                gold.turn,
                clip(answer),
                f"synthetic data used without a label ({used_by})",
            )
        )


def _primary(lang: str) -> str:
    return lang.split("-", 1)[0].split("_", 1)[0].lower()


def _answer_language(answer: str, gold: TurnGold, context: _Context) -> LanguageGuess | None:
    """The answer's language among the configured ones; None when not checked or empty."""
    options = context.options
    if not options.identify_language or not answer.strip():
        return None
    return identify_language(
        answer,
        options.languages,
        expected=str(gold.mandatory_constraints.get("language") or context.lang),
        min_words=options.language_min_words,
        min_confidence=options.language_min_confidence,
    )


def _constraints(
    score: TurnScore,
    gold: TurnGold,
    turn: ChatTurn,
    answer: str,
    guess: LanguageGuess | None,
    facts: Sequence[Fact],
    forbidden: Sequence[ClaimMatch],
    context: _Context,
    vetoes: list[Veto],
) -> None:
    constraints = gold.mandatory_constraints
    score.constraints = sorted(constraints)
    options = context.options
    expected_language = constraints.get("language") or context.lang
    score.language_expected = str(expected_language)
    if not options.identify_language:
        score.language_note = "not checked"
    elif guess is None:
        score.language_note = "no answer"
    else:
        score.language_detected = guess.language
        score.language_note = guess.reason
        # a mixed answer leaves the whole answer's reading unsure; one read at 0.999 or
        # more is in one language, and its parts need no reading of their own
        if options.languages and (guess.language is None or guess.confidence < MIXED_BELOW):
            score.language_mixed = other_language_part(
                answer,
                options.languages,
                score.language_expected,
                min_confidence=options.language_min_confidence,
            )
    if "language" in constraints and score.language_detected not in (
        None,
        score.language_expected,
    ):
        score.constraint_violations.append(
            f"language: {score.language_expected} expected, answer in {score.language_detected}"
        )
    if "format" in constraints:
        score.format_expected = str(constraints["format"])
        score.format_ok = format_ok(answer, score.format_expected)
        if score.format_ok is False:
            score.constraint_violations.append(f"format: not a {score.format_expected}")
    elif (asked := requested_format(turn.prompt)) is not None:
        # the prompt's own request: judged on the Format dimension, no gold constraint
        score.format_expected = asked
        score.format_ok = format_ok(answer, asked)
    if constraints.get("cites_source") and not _names_source(answer, turn, gold):
        score.constraint_violations.append("cites_source: no source cited or named")
    for match in forbidden:
        if match.claim.veto in _CONSTRAINT_VETOES:
            score.constraint_violations.append(f"{match.claim.veto}: {clip(match.claim.text, 120)}")
    for key, value in constraints.items():
        if key in _GENERIC_CONSTRAINTS:
            continue
        for fact, detail in weakened_numbers(answer, key, value, facts):
            score.constraint_violations.append(detail)
            vetoes.append(Veto("constraint_weakened", gold.turn, clip(fact.text), detail))
