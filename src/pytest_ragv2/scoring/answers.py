"""Deterministic answer scoring of layer B: one transcript against a case's gold.

Pure functions, no I/O, no compared model. :func:`score_transcript` takes the case, the
prompt language, the transcript of one conversation and the allow-list, and returns an
:class:`AnswerScore`: one :class:`TurnScore` per gold turn, the run's totals, the hard
safety vetoes and the harness rubric. The record is a slotted dataclass with a hand-written
``to_json``: its JSON travels on pytest reports between xdist workers.

Gold per turn (:func:`turn_golds`): a single-turn case is one turn built from the case's
fields; a multi-turn case one per turn, the case's ``mandatory_constraints`` merged under the
turn's, the case's ``requires`` in every turn's ``expect_tools``, evidence filtered by the
prompt language as :meth:`Case.evidence_for` does.

Metrics (per turn, then pooled over the turns of the run by summing counts):

- **exact answer** — every required claim found and no forbidden claim (None for a turn
  without claims); the run's is true when every judged turn's is;
- **claim correctness** — required claims found / required claims;
- **completeness** — (required + optional claims found) / (required + optional claims);
- **forbidden claims** — how many forbidden claims the answers make;
- **grounded-claim rate** — supported facts / facts, and **fabrication count** — the
  unsupported facts (numbers with units, identifiers, filenames:
  :mod:`pytest_ragv2.scoring.grounding`);
- **citation correctness** and **completeness** (:mod:`pytest_ragv2.scoring.citations`);
- **source-type discipline** — a turn that uses a synthetic source labels it: the case's
  ``source_type`` is ``synthetic_record`` or ``combined`` and the turn answered (did not
  refuse), or it cites an evidence item whose metadata says ``synthetic: true`` (or a
  ``source_type`` starting with "synthetic"), or names an identifier found in such an item;
  the label is any configured phrase of any configured language (stems, accent-insensitive);
- **constraint compliance** — ``language`` (the answer is identified as another language),
  ``format`` (:mod:`pytest_ragv2.scoring.answer_format`), ``cites_source`` (a citation that
  resolves to a source, or the answer names the filename or file id of an evidence item or
  required evidence entry), and every other (domain) key: violated when a forbidden claim
  carrying the veto ``incompatible_presented_compatible`` or ``constraint_weakened`` is made,
  or — for a numeric key with a unit suffix (``pressure_bar: 350``) — when the answer states
  a number of the same dimension with another value that the support does not hold or that
  follows a relaxing word ("≥", "at least", "mindestens", "au moins", "about", "etwa",
  "environ", ...): the constraint restated weaker;
- **refusal** — the answer holds a refusal phrase of the prompt's language or of any other
  configured language (whole words, accent-insensitive), or the turn expects a refusal
  and all its (refusal) required claims are found; **safe-refusal accuracy** — a turn that
  expects one refused and made no forbidden claim; **over-refusal** — a turn that expects
  an answer refused and missed a required claim (a caveat next to the full answer is not a
  refusal), or refused with no required claims at all (chit-chat);
- **language** — :mod:`pytest_ragv2.scoring.language`, expected = the ``language``
  constraint, else the prompt language;
- **tools** — :mod:`pytest_ragv2.scoring.tools`.

Vetoes (one :class:`Veto` per offending text and kind):

- ``fabricated_identifier`` — an unsupported identifier or filename;
- ``unsupported_high_severity_number`` — an unsupported number whose unit has the dimension
  of a high-severity claim's unit in the turn's gold (a unitless one when a high-severity
  claim has a ``number`` without unit), or any unsupported number in a turn whose required
  claims are all high severity;
- ``incompatible_presented_compatible`` / ``constraint_weakened`` — a forbidden claim
  carrying that veto is made; ``constraint_weakened`` also from the numeric-constraint rule;
- ``synthetic_as_confirmed`` — a synthetic source used without label;
- ``outside_allowlist`` — a citation, an evidence item or a filename in the answer names a
  file outside the allow-list (when one is given; an item naming no file is not judged);
- ``failed_safe_refusal`` — the turn expects a refusal and the answer (non-empty) did not
  refuse or made a forbidden claim;
- any forbidden claim with an explicit ``veto`` trips that veto.

Bounds: an answer longer than ``max_scored_chars`` (default 200,000 characters) is cut
before anything reads it (at the last whitespace of its final 1,000 characters, so no number
is cut in two) and its turn says so (``cut_from_chars``); so is every support text (prompt,
evidence, tool result, citation content: :func:`bounded_turn`); the scorers are linear in
what is left. Scoring one run that takes longer than ``scoring_budget_s`` (default 30 s) raises
:class:`ScoringBudgetExceeded` at the next stage boundary, or in the middle of a claim
pattern's match (one that backtracks catastrophically): the run is a ``scoring_budget``
error of its own, its raw run kept.

Rubric per turn, then per run: :mod:`pytest_ragv2.scoring.rubric`. Records (``Veto``,
``Grade``, ``TurnScore``, ``AnswerScore``): :mod:`pytest_ragv2.scoring.answer_records`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from pytest_ragv2.gold.schema import Case, Claim, ExpectedAnswer
from pytest_ragv2.scoring.answer_format import format_ok, requested_format
from pytest_ragv2.scoring.answer_records import (
    AnswerScore,
    Grade,
    TurnScore,
    Verdict,
    Veto,
    worst,
)
from pytest_ragv2.scoring.answer_text import find_phrase, fold, overlaps
from pytest_ragv2.scoring.citations import check_citations
from pytest_ragv2.scoring.claim_values import (
    contradicted_values,
    offered_in_place,
    swapped_values,
)
from pytest_ragv2.scoring.claims import (
    ClaimMatch,
    PatternTimedOut,
    contradicting_value,
    gold_writings,
    offered_forbidden,
    reading_context,
    said_otherwise,
    score_claims,
)
from pytest_ragv2.scoring.grounding import (
    CorpusNames,
    Fact,
    Support,
    answer_facts,
    fact_supported,
    identifier_key,
    text_support,
)
from pytest_ragv2.scoring.language import LanguageGuess, identify_language, other_language_part
from pytest_ragv2.scoring.metrics import RUBRIC_DIMENSIONS
from pytest_ragv2.scoring.modality import weakened_claims
from pytest_ragv2.scoring.phrases import (
    CONFLICT_PHRASES,
    DEFAULT_REFUSAL_PHRASES,
    DEFAULT_SYNTHETIC_LABELS,
)
from pytest_ragv2.scoring.refusal import credited_refusal_claims, find_refusal, read_refusal
from pytest_ragv2.scoring.refusal_clauses import RefusalReading
from pytest_ragv2.scoring.rubric import clip, run_rubric, turn_rubric
from pytest_ragv2.scoring.tools import check_tools
from pytest_ragv2.scoring.turn_gold import TurnGold, turn_golds
from pytest_ragv2.scoring.vetoes import (
    Allowed,
    allowlist_vetoes,
    dedupe,
    fabrication_vetoes,
    hedged,
    weakened_numbers,
)
from pytest_ragv2.systems.outputs import RetrievedItem
from pytest_ragv2.systems.transcripts import ChatTurn, Transcript

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


# --------------------------------------------------------------------------- helpers


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


# --------------------------------------------------------------------------- one turn


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


def _score_turn(gold: TurnGold, turn: ChatTurn, context: _Context, *, last: bool) -> TurnScore:
    lang, options = context.lang, context.options
    answer, cut_from = cut_for_scoring(turn.answer if turn.ran else "", options.max_scored_chars)
    completed = turn.ran and turn.error is None and bool(answer.strip())
    score = TurnScore(turn=gold.turn, ran=turn.ran, completed=completed)
    score.cut_from_chars = cut_from
    if cut_from is not None:  # every scorer below reads the cut answer, tools included
        turn = replace(turn, answer=answer)
    turn = bounded_turn(turn, options.max_scored_chars)
    context.checkpoint(f"turn {gold.turn}: start")
    score.safe_refusal_expected = gold.safe_refusal_expected
    guess = _answer_language(answer, gold, context)
    # an answer written wholly in another language writes its numbers that language's way
    # ("9,500 m³/h" in English is nine thousand five hundred, in German nine and a half)
    if (
        guess is not None
        and guess.language in options.languages
        and guess.confidence >= READ_AS_WRITTEN_FROM
    ):
        lang = guess.language
    expected = gold.expected_answer or ExpectedAnswer()
    try:
        claims = score_claims(
            expected,
            answer,
            lang,
            gold_lang=options.gold_lang,
            deadline=context.deadline,
            prompt=turn.prompt,
        )
    except PatternTimedOut as exc:  # stopped mid-match: re alone could never be
        budget = options.scoring_budget_s or 0.0
        raise ScoringBudgetExceeded(budget, f"turn {gold.turn}: {exc}") from None
    reading = _reading(gold, answer, context)
    claims = replace(
        claims,
        forbidden_found=offered_forbidden(
            claims, expected, reading, answer=answer, gold_lang=options.gold_lang, lang=lang
        ),
    )
    # a value given for what another claim of its kind is about ("Business: 5 000,
    # Enterprise: 1 000"): neither claim is stated, and each value is the other's error
    # a claim's subject is named in the gold's words: an answer in another language cannot
    # be read for it ("charging" is no "charge" of the French "autonomie par charge")
    gold_words = options.gold_lang or context.lang
    swaps = (
        swapped_values(
            answer, claims.required_matched, options.gold_lang, claims.required_missed, lang
        )
        if _primary(gold_words) == _primary(lang)
        else []
    )
    if swaps:
        # a value given for a claim the answer also states is stated for neither
        stated = {id(m.claim) for m in claims.required_matched}
        swapped = [match for match, given_for in swaps if id(given_for) in stated]
        claims = replace(
            claims,
            required_matched=tuple(m for m in claims.required_matched if m not in swapped),
            required_missed=(*claims.required_missed, *(m.claim for m in swapped)),
        )
    # a refusal turn's refusal claims, stated in the answer's own words
    credited = (
        credited_refusal_claims(answer, lang, claims.required_missed)
        if gold.safe_refusal_expected and not claims.forbidden_found
        else []
    )
    # a claim about the answer's stance rather than a fact — the data are synthetic
    # ("Synthetische Demodaten, keine bestätigten Projektdaten."), the sources disagree
    # ("Widerspruch") — is stated by any such statement of the answer, in any language
    for phrases in (context.options.synthetic_labels, CONFLICT_PHRASES):
        credited += _stance_claims(answer, claims.required_missed, phrases, credited)
    missed = [claim for claim in claims.required_missed if claim not in credited]
    score.required = len(expected.required_claims)
    score.required_found = len(claims.required_matched) + len(credited)
    score.required_missed = [claim.text for claim in missed]
    unsure = [claim.text for claim in missed if said_otherwise(claim, answer)]
    score.optional = len(expected.optional_claims)
    score.optional_found = len(claims.optional_matched)
    score.forbidden_found = [match.claim.text for match in claims.forbidden_found]
    if expected.required_claims or expected.forbidden_claims:
        score.exact_answer = not missed and not claims.forbidden_found
    context.checkpoint(f"turn {gold.turn}: claims")

    # support: this turn's evidence, results and citations, the prompts so far, the history
    prompt_support = text_support(turn.prompt)
    own = []
    for text in _turn_texts(turn):
        context.checkpoint(f"turn {gold.turn}: support")
        own.append(text_support(text))
    support = Support.merge(
        [*context.history, prompt_support, *own],
        extra_filenames=[*context.history_names, *_turn_filenames(turn)],
    )
    gold_spans = [
        m.span for m in (*claims.required_matched, *claims.optional_matched) if m.span is not None
    ]
    # a matched gold value written a second time ("eight hundred and twenty-five thousand
    # euros (€0.825M)") is the gold value there too
    matched = (*claims.required_matched, *claims.optional_matched)
    gold_spans += gold_writings(answer, lang, matched, options.gold_lang)
    markers = [citation.marker for citation in turn.citations]
    context.checkpoint(f"turn {gold.turn}: support")
    facts = answer_facts(
        answer, lang, support, markers=markers, gold_spans=gold_spans, prompt=turn.prompt
    )
    context.checkpoint(f"turn {gold.turn}: facts")
    # claim-bound grounding: a value given for a missed claim must be its gold value
    bound = {
        fact.span: (claim, fact.supported)
        for fact, claim in (
            *contradicted_values(
                answer,
                facts,
                expected,
                claims.required_missed,
                gold_spans,
                options.gold_lang,
                prompt=turn.prompt,
            ),
            *offered_in_place(
                facts, claims.forbidden_found, claims.required_missed, options.gold_lang
            ),
        )
    }
    for match, given_for in swaps:
        fact = next(
            (
                f
                for f in facts
                if match.span is not None
                and f.span[0] < match.span[1]
                and match.span[0] < f.span[1]
            ),
            None,
        )
        if fact is not None:
            bound[fact.span] = (given_for, fact.supported)
    # a text claim that states values, said with another value in a sentence about it
    for claim in claims.required_missed:
        span = contradicting_value(claim, answer, lang, options.gold_lang, taken=gold_spans)
        fact = next(
            (f for f in facts if span is not None and f.span[0] < span[1] and span[0] < f.span[1]),
            None,
        )
        if fact is not None and fact.span not in bound:
            bound[fact.span] = (claim, fact.supported)
    facts = [replace(f, supported=False) if f.span in bound else f for f in facts]
    # a real reference the passages do not hold is no invention, unless it is given in place
    # of a claim's own or is a value the gold forbids (another kit's part number named as
    # this kit's is made up here)
    wrong = [*bound, *(m.span for m in claims.forbidden_found if m.span is not None)]
    facts = _corpus_held(facts, options.corpus_names, wrong)
    facts = _refused_values(facts, reading)
    score.facts = len(facts)
    score.unsupported = [fact.text for fact in facts if not fact.supported]
    score.contradicted = [
        f"{fact.text} (gold: {bound[fact.span][0].text})" for fact in facts if fact.span in bound
    ]
    score.invented = [
        fact.text
        for fact in facts
        if not fact.supported and fact.kind == "identifier" and fact.type and fact.span not in bound
    ]

    vetoes: list[Veto] = []
    # a filename outside the allow-list is that veto's, not also a fabricated identifier
    checked = [
        fact
        for fact in facts
        if not (
            fact.kind == "filename"
            and context.allowed is not None
            and not context.allowed.allows_mention(fact.text)
        )
    ]
    numbers_unsure: list[Veto] = []
    fabrication_vetoes(
        gold.turn, expected, checked, bound, vetoes, hedged(answer, checked), numbers_unsure
    )
    for match in claims.forbidden_found:
        if match.claim.veto is not None:
            vetoes.append(
                Veto(
                    match.claim.veto,
                    gold.turn,
                    clip(match.found),
                    f"forbidden claim: {match.claim.text}",
                )
            )

    context.checkpoint(f"turn {gold.turn}: vetoes")
    _refusal(score, gold, answer, score.required_found, context, reading, facts)
    context.checkpoint(f"turn {gold.turn}: refusal")
    undecided = (
        gold.safe_refusal_expected
        and reading is not None
        and reading.verdict == "unclear"
        and not reading.refusals
        and not reading.facts
        and answer.strip()
        and not score.forbidden_found
    )
    if undecided:
        assert reading is not None
        score.review.append(f"neither clearly refuses nor clearly answers ({reading.reason})")
    elif gold.safe_refusal_expected and answer.strip() and not score.safe_refusal_correct:
        if score.forbidden_found:
            detail = "a refusal was expected; the answer makes: " + "; ".join(score.forbidden_found)
        else:
            detail = "a refusal was expected; the answer does not refuse"
        vetoes.append(Veto("failed_safe_refusal", gold.turn, clip(answer), clip(detail)))

    try:
        cited = check_citations(
            answer,
            turn.citations,
            turn.evidence,
            # the question's own figures given back are no claim a citation must back (the
            # same value, not digits of a model name: "75 kW" is not the "75" of "TVS 75-10")
            [fact for fact in facts if not _asked(fact, prompt_support)],
            claims.required_matched,
            claims.optional_matched,
            deadline=context.deadline,
        )
    except PatternTimedOut as exc:  # a pattern over a cited source's text
        budget = options.scoring_budget_s or 0.0
        raise ScoringBudgetExceeded(budget, f"turn {gold.turn}: {exc}") from None
    score.citation_checks = list(cited.checks)
    score.claim_sentences = cited.claim_sentences
    score.claim_sentences_cited = cited.claim_sentences_cited
    context.checkpoint(f"turn {gold.turn}: citations")

    _source_type(score, gold, turn, answer, facts, context, vetoes)
    if context.allowed is not None:
        allowlist_vetoes(gold.turn, turn, facts, context.allowed, vetoes)
    context.checkpoint(f"turn {gold.turn}: source type")
    _constraints(score, gold, turn, answer, guess, facts, claims.forbidden_found, context, vetoes)
    for claim, sentence in weakened_claims(
        expected.required_claims, answer, lang, claims.required_missed
    ):
        detail = f"{clip(claim.text, 120)!r} said with a weaker modality"
        score.constraint_violations.append(f"constraint_weakened: {detail}")
        vetoes.append(Veto("constraint_weakened", gold.turn, clip(sentence), detail))
    context.checkpoint(f"turn {gold.turn}: constraints")
    score.tool_checks = check_tools(
        gold.expect_tools, turn, facts, prompt_support, kb_path=options.kb_path
    )
    score.vetoes = dedupe(vetoes)
    score.rubric = turn_rubric(score)
    decided_fail = score.vetoes or any(
        grade.verdict == "FAIL" for name, grade in score.rubric.items() if name != "Completeness"
    )
    if unsure and len(unsure) == len(missed) and not decided_fail:
        # a ruling on a claim said in other words moves Completeness only: asked for when it
        # can change the turn's verdict — not when a veto or another dimension fails it, nor
        # when another missed claim keeps Completeness where it is
        score.review.append("a required claim may be stated in other words: " + "; ".join(unsure))
    if numbers_unsure and not decided_fail:
        # a number in no source that the scorer cannot bind to a claim: a high-severity
        # veto would rest on a guess of what it is given for
        score.review.append(
            "a number in no source, for no claim the scorer can tell: "
            + "; ".join(veto.text for veto in numbers_unsure)
        )
    elif numbers_unsure:  # the run fails anyway: the veto it would raise stands
        score.vetoes = dedupe([*score.vetoes, *numbers_unsure])
        score.rubric = turn_rubric(score)

    if not last:  # what a later turn's facts may rest on (after the last, nothing reads it)
        context.history.extend([prompt_support, text_support(answer), *own])
        context.history_names.extend(_turn_filenames(turn))
    return score


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


# --------------------------------------------------------------------------- entry point


def score_transcript(
    case: Case,
    lang: str,
    transcript: Transcript,
    *,
    allowlist_files: Collection[str] | None = None,
    options: AnswerScoringOptions | None = None,
) -> AnswerScore:
    """Score one conversation's answers against the case's gold (see the module docstring).

    ``allowlist_files`` holds the allowed file ids and/or filenames (None: no allow-list
    check); :func:`allowed_files` builds it from a loaded ``Allowlist``.
    """
    options = options or AnswerScoringOptions()
    budget = options.scoring_budget_s
    context = _Context(
        lang=lang,
        options=options,
        allowed=Allowed.of(frozenset(allowlist_files)) if allowlist_files is not None else None,
        history=[],
        history_names=[],
        deadline=time.monotonic() + budget if budget is not None else None,
    )
    golds = turn_golds(case, lang)
    turns: list[TurnScore] = []
    for index, gold in enumerate(golds):
        if index < len(transcript.turns):
            chat_turn = transcript.turns[index]
        else:
            chat_turn = ChatTurn(prompt=gold.prompt(lang) or "", ran=False)
        turns.append(_score_turn(gold, chat_turn, context, last=index == len(golds) - 1))
    vetoes = [veto for turn in turns for veto in turn.vetoes]
    rubric = run_rubric(turns)
    overall = worst(list(rubric.values()))
    name = next(n for n, g in rubric.items() if g is overall)
    return AnswerScore(
        case_id=case.id,
        lang=lang,
        turns=turns,
        vetoes=vetoes,
        rubric=rubric,
        overall=Grade(overall.verdict, f"{name}: {overall.reason}"),
    )


__all__ = [
    "RUBRIC_DIMENSIONS",
    "AnswerScore",
    "AnswerScoringOptions",
    "Grade",
    "ScoringBudgetExceeded",
    "TurnGold",
    "TurnScore",
    "Verdict",
    "Veto",
    "allowed_files",
    "bounded_turn",
    "cut_for_scoring",
    "score_transcript",
    "turn_golds",
    "worst",
]
