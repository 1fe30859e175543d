"""What an answer offers in place of a claim it missed or a forbidden one it avoided: the
gold's writings of a value, the sentences and paragraphs around it, and the values a refusal
sets apart (pytest_ragv2.scoring.answers asks after the claims are scored).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence

from pytest_ragv2.gold.schema import ExpectedAnswer
from pytest_ragv2.scoring.answer_text import fold
from pytest_ragv2.scoring.claim_bounds import same_value
from pytest_ragv2.scoring.claim_denials import (
    _WORDS,
    _row_names_role,
    _sentence_names_role,
    denied_at,
)
from pytest_ragv2.scoring.claim_targets import claim_target
from pytest_ragv2.scoring.claims import ClaimMatch, ClaimsScore
from pytest_ragv2.scoring.refusal_clauses import RefusalReading
from pytest_ragv2.scoring.values import Value, read_values


def gold_writings(
    answer: str, lang: str | None, matched: Sequence[ClaimMatch], gold_lang: str | None = None
) -> list[tuple[int, int]]:
    """Where ``answer`` writes the value of a matched typed claim, every writing of it."""
    targets = [
        target.value
        for match in matched
        if match.claim.kind is not None
        and (target := claim_target(match.claim, gold_lang)) is not None
        and target.value is not None
        and target.value.kind != "identifier"
    ]
    if not targets:
        return []
    return [
        value.span
        for value in read_values(answer, lang)
        if any(same_value(gold, value) for gold in targets)
    ]


def _names_by_number(value: Value) -> bool:
    """An identifier of digits alone ("Revision 2"): a number, for the context rules too."""
    return value.kind == "identifier" and value.key.split(":", 1)[-1].isdigit()


def _paragraphs(text: str) -> list[tuple[int, int]]:
    """The spans of the paragraphs of ``text`` (separated by a blank line); a table row is
    a paragraph of its own (each row states its own thing: "| Business | toutes les 24 h |"
    is not compared with "| Enterprise | toutes les 5 minutes |")."""
    bounds = {0, len(text) + 1, *(m.end() for m in re.finditer(r"\n\s*\n", text))}
    for row in re.finditer(r"^[ \t]*\|.*$", text, re.MULTILINE):
        bounds.update((row.start(), row.end()))
    return list(itertools.pairwise(sorted(bounds)))


def _sentence_at(
    sentences: Sequence[tuple[int, int]], span: tuple[int, int]
) -> tuple[int, int] | None:
    return next(((start, end) for start, end in sentences if start <= span[0] < end), None)


def reading_context(reading: RefusalReading | None) -> list[tuple[int, int]]:
    """The spans of the clauses an answer that refuses uses as context: facts it sets apart
    from the asked one, what it says the sources do hold, and the refusals themselves (a
    value inside a refusal is named to be refused: "the 1.8 m³/h in the documents is the
    TVK 220's, not the TVK 350's"); none without a refusal."""
    if reading is None or not reading.refusals:
        return []
    roles = ("set_apart", "source", "refusal")
    return [(c.start, c.end) for c in reading.clauses if c.role in roles]


def offered_forbidden(
    claims: ClaimsScore,
    expected: ExpectedAnswer,
    reading: RefusalReading | None,
    *,
    answer: str = "",
    gold_lang: str | None = None,
    lang: str | None = None,
) -> tuple[ClaimMatch, ...]:
    """The forbidden claims the answer **offers**, of those it names.

    A forbidden claim found inside a clause that a refusal sets apart ("die 90 Tage gelten
    nur für den Meridia-Vertrag") or that says what the sources do hold, in an answer that
    refuses the asked fact, is named to be told apart, not offered. A typed forbidden claim is
    decided by its value only where the value can say it: not when the same value is also
    a required or optional claim's (by value alone the wrong pairing cannot be told from the
    right one), and not when the answer states the gold value of its kind and misses no
    required claim of that kind (a tempting value beside the right one is context: "€1.689M
    against €1.312M, so €377k higher"; but "745 + … + 62 = 1 163 k€" gives a wrong total for
    the missed total's claim though 745 k€ is another claim's gold value). A
    forbidden claim the answer denies in its own clause ("Zone 0 ist ausgeschlossen", "not
    in Zone 0", "pas 99,5 %, mais 99,7 %") is not offered either, unless the claim itself
    is a denial."""
    found = claims.forbidden_found
    if not found:
        return found
    context_spans = reading_context(reading)
    golden = [
        target
        for claim in (*expected.required_claims, *expected.optional_claims)
        if (target := claim_target(claim, gold_lang)) is not None and target.value is not None
    ]
    # the gold values the answer states, with the paragraph of each place it states them
    # (a list of figures is one paragraph: "Difference: 1,689k − 1,312k = EUR 377k")
    sentences = _paragraphs(answer) if answer else []
    written = read_values(answer, lang) if answer else ()
    stated = [
        (target, _sentence_at(sentences, span))
        for match in (*claims.required_matched, *claims.optional_matched)
        if match.claim.kind is not None
        and match.span is not None
        and (target := claim_target(match.claim, gold_lang)) is not None
        and target.value is not None
        and (target.of != "identifier" or _names_by_number(target.value))
        for span in {
            match.span,
            *(v.span for v in written if target.value and same_value(target.value, v)),
        }
    ]
    missed_targets = [
        target
        for claim in claims.required_missed
        if claim.kind is not None and (target := claim_target(claim, gold_lang)) is not None
    ]
    # what the gold asks about: words of a forbidden claim's note that name no role
    asked = frozenset(
        word[:5]
        for claim in (*expected.required_claims, *expected.optional_claims)
        for word in _WORDS.findall(fold(claim.text))
    )
    offered = []
    for match in found:
        span = match.span
        if span is not None and any(start <= span[0] < end for start, end in context_spans):
            continue
        if span is not None and denied_at(answer, span, match.claim.text):
            continue
        if span is not None and _row_names_role(answer, span, match.claim, asked):
            continue
        target = claim_target(match.claim, gold_lang) if match.claim.kind else None
        if target is not None and target.value is not None:
            value = target.value
            if any(gold.value is not None and gold.value.key == value.key for gold in golden):
                continue
            # the answer gives the gold value of the kind, and this one with its own role
            if (
                span is not None
                and any(
                    (gold := claim_target(m.claim, gold_lang)) is not None
                    and gold.value is not None
                    and gold.same_class(value)
                    for m in claims.required_matched
                    if m.claim.kind is not None
                )
                and _sentence_names_role(answer, span, match.claim, asked)
            ):
                continue
            here = _sentence_at(sentences, span) if span is not None else None
            # ... unless a required claim of its kind is missed: it may be given for that one
            if not any(
                other.value is not None and other.same_class(value) for other in missed_targets
            ) and any(
                gold.value is not None
                and (
                    gold.same_class(value)
                    or (_names_by_number(gold.value) and _names_by_number(value))
                )
                and where == here
                for gold, where in stated
            ):
                continue
        offered.append(match)
    return tuple(offered)
