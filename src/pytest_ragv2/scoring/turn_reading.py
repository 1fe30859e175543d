"""What a turn's answer says, read before anything is judged of it: its claims (matched,
swapped for one another, stated in its own words) and its facts, each judged against the
support the turn had and bound to the claim it is given for. :mod:`pytest_ragv2.scoring.answers`
scores a turn from these.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from pytest_ragv2.gold.schema import Claim, ExpectedAnswer
from pytest_ragv2.scoring.answer_checks import (
    _corpus_held,
    _primary,
    _refused_values,
    _stance_claims,
)
from pytest_ragv2.scoring.answer_options import (
    ScoringBudgetExceeded,
    _Context,
    _turn_filenames,
    _turn_texts,
)
from pytest_ragv2.scoring.claim_contradictions import contradicting_value
from pytest_ragv2.scoring.claim_denials import said_otherwise
from pytest_ragv2.scoring.claim_offers import gold_writings, offered_forbidden
from pytest_ragv2.scoring.claim_values import (
    contradicted_values,
    offered_in_place,
    swapped_values,
)
from pytest_ragv2.scoring.claims import ClaimMatch, ClaimsScore, PatternTimedOut, score_claims
from pytest_ragv2.scoring.grounding import Fact, Support, answer_facts, text_support
from pytest_ragv2.scoring.phrases import CONFLICT_PHRASES
from pytest_ragv2.scoring.refusal import credited_refusal_claims
from pytest_ragv2.scoring.refusal_clauses import RefusalReading
from pytest_ragv2.scoring.turn_gold import TurnGold
from pytest_ragv2.systems.transcripts import ChatTurn


@dataclass(slots=True)
class ClaimsRead:
    """What the answer makes of the turn's claims, after every reading of them."""

    claims: ClaimsScore
    swaps: list[tuple[ClaimMatch, Claim]]  # a value given for another claim of its kind
    credited: int  # required claims the answer states in its own words (a refusal, a stance)
    missed: list[Claim]  # the required claims neither matched nor credited
    unsure: list[str]  # missed claims the answer may state in other words


@dataclass(slots=True)
class FactsRead:
    """The answer's facts, each judged against the support and the claims."""

    facts: list[Fact]
    bound: dict[tuple[int, int], tuple[Claim, bool]]  # a fact given for a claim: its gold
    prompt_support: Support
    own_support: list[Support]  # this turn's evidence, tool results and citations


def read_claims(
    gold: TurnGold,
    turn: ChatTurn,
    answer: str,
    lang: str,
    expected: ExpectedAnswer,
    reading: RefusalReading | None,
    context: _Context,
) -> ClaimsRead:
    options = context.options
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
    for phrases in (options.synthetic_labels, CONFLICT_PHRASES):
        credited += _stance_claims(answer, claims.required_missed, phrases, credited)
    missed = [claim for claim in claims.required_missed if claim not in credited]
    unsure = [claim.text for claim in missed if said_otherwise(claim, answer)]
    return ClaimsRead(claims, list(swaps), len(credited), missed, unsure)


def read_facts(
    gold: TurnGold,
    turn: ChatTurn,
    answer: str,
    lang: str,
    expected: ExpectedAnswer,
    read: ClaimsRead,
    reading: RefusalReading | None,
    context: _Context,
) -> FactsRead:
    """The answer's facts against the support: this turn's evidence, results and
    citations, the prompts so far and the history; a value given for a claim is bound to
    that claim's gold value."""
    options, claims = context.options, read.claims
    prompt_support = text_support(turn.prompt)
    own = []
    for text in _turn_texts(turn):
        context.checkpoint(f"turn {gold.turn}: support")
        own.append(text_support(text))
    support = Support.merge(
        [*context.history, prompt_support, *own],
        extra_filenames=[*context.history_names, *_turn_filenames(turn)],
    )
    matched = (*claims.required_matched, *claims.optional_matched)
    gold_spans = [m.span for m in matched if m.span is not None]
    # a matched gold value written a second time ("eight hundred and twenty-five thousand
    # euros (€0.825M)") is the gold value there too
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
    for match, given_for in read.swaps:
        fact = fact_over(facts, match.span)
        if fact is not None:
            bound[fact.span] = (given_for, fact.supported)
    # a text claim that states values, said with another value in a sentence about it
    for claim in claims.required_missed:
        span = contradicting_value(claim, answer, lang, options.gold_lang, taken=gold_spans)
        fact = fact_over(facts, span)
        if fact is not None and fact.span not in bound:
            bound[fact.span] = (claim, fact.supported)
    facts = [replace(f, supported=False) if f.span in bound else f for f in facts]
    # a real reference the passages do not hold is no invention, unless it is given in place
    # of a claim's own or is a value the gold forbids (another kit's part number named as
    # this kit's is made up here)
    wrong = [*bound, *(m.span for m in claims.forbidden_found if m.span is not None)]
    facts = _corpus_held(facts, options.corpus_names, wrong)
    facts = _refused_values(facts, reading)
    return FactsRead(facts, bound, prompt_support, own)


def fact_over(facts: Sequence[Fact], span: tuple[int, int] | None) -> Fact | None:
    """The first fact overlapping ``span``."""
    if span is None:
        return None
    return next((f for f in facts if f.span[0] < span[1] and span[0] < f.span[1]), None)
