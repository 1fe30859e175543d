"""Claim-bound grounding: a value stated for a required claim must be the gold value.

Pure functions, no I/O. Grounding by value (:mod:`pytest_ragv2.scoring.grounding`) accepts
a number that occurs anywhere in the support, whatever it measures there: an answer giving
another plan's availability target ("99,5 %" where the gold is "99,7 %") is grounded, since
the sources hold 99,5 % too. This module binds numbers to the claims they answer:

A number of the answer **contradicts** a required claim when

- the claim was **missed** (the answer does not state the gold value),
- the claim has a ``number`` with a ``unit``, and the answer's number has a unit of the
  same dimension (``%`` for ``%``; ``h``, ``min``, ``days`` for a duration; ``€``, ``k€``
  for an amount ...),
- its value, converted to the claim's unit, differs from the claim's (beyond the claim's
  ``tolerance``), and is not the value of another required or optional claim of the turn
  (a second figure of the same kind the gold asks for), and
- it is not inside the span of a matched gold claim, and
- when the claim's text has content words (words of four letters or more that are no unit
  or stop word, compared by their first five letters, accents ignored: "réclamé sous 30
  jours" has "recla"), the number's sentence holds one of them: "un préavis de 90 jours"
  is another fact, not the claim period of "réclamé sous 30 jours"; a claim written as a
  bare value ("99,7 %") binds any number of its kind, and
- the answer states no more such numbers than it misses claims of that dimension: an
  answer that quotes a whole table or compares several variants ("8 bar, 10 bar, 13 bar")
  gives context, not its value for the claim.

Such a number is unsupported for the claim even when the sources hold it elsewhere; it
counts as a fabrication, fails Accuracy, and trips ``unsupported_high_severity_number``
when the claim is high severity. A claim without a unit ("33 nouveaux clients") binds no
number: a unitless count cannot be told from the other counts of an answer.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from decimal import Decimal

from pytest_ragv2.schema import Claim, ExpectedAnswer
from pytest_ragv2.scoring.answer_text import fold, sentence_of, sentence_spans
from pytest_ragv2.scoring.grounding import Fact
from pytest_ragv2.scoring.numbers import unit_scale


def _base(value: float, unit: str | None) -> tuple[str, Decimal] | None:
    """(dimension, value in the dimension's base unit), None without a known unit."""
    if unit is None:
        return None
    scale = unit_scale(unit)
    if scale is None:
        return None
    return scale[0], Decimal(repr(float(value))) * scale[1]


def _claim_base(claim: Claim) -> tuple[str, Decimal, Decimal] | None:
    """(dimension, base value, tolerance in the base unit) of a claim with number and unit."""
    if claim.number is None or not claim.unit:
        return None
    scale = unit_scale(claim.unit)
    if scale is None:
        return None
    tolerance = Decimal(repr(float(claim.tolerance or 0))) * scale[1]
    return scale[0], Decimal(repr(float(claim.number))) * scale[1], tolerance


_STOPWORDS = frozenset(
    {"avec", "dans", "pour", "sous", "plus", "moins", "entre", "chaque", "mois", "jours"}
    | {"heures", "mit", "bei", "nach", "oder", "und", "eine", "einer", "einem", "einen"}
    | {"with", "from", "than", "that", "this", "each", "within", "über", "uber", "pro"}
)


def content_words(text: str) -> frozenset[str]:
    """The stems (first five letters, folded) of the words of four letters or more of
    ``text`` that are neither units nor stop words."""
    words = re.findall(r"[^\W\d_]{4,}", fold(text))
    return frozenset(
        word[:5] for word in words if word not in _STOPWORDS and unit_scale(word) is None
    )


def _sentence(answer: str, spans: Sequence[tuple[int, int]], span: tuple[int, int]) -> str:
    index = sentence_of(spans, span[0])
    if index is None:
        return answer
    start, end = spans[index]
    return answer[start:end]


def contradicted_values(
    answer: str,
    facts: Sequence[Fact],
    expected: ExpectedAnswer,
    missed: Sequence[Claim],
    gold_spans: Sequence[tuple[int, int]] = (),
) -> list[tuple[Fact, Claim]]:
    """Each number of ``facts`` that contradicts a missed required claim, with the claim
    (rules in the module docstring), paired in the order they are written."""
    bound = [(claim, base) for claim in missed if (base := _claim_base(claim)) is not None]
    if not bound:
        return []
    golden = [
        base
        for claim in (*expected.required_claims, *expected.optional_claims)
        if (base := _claim_base(claim)) is not None
    ]
    candidates: dict[str, list[Fact]] = {}
    for fact in facts:
        if fact.kind != "number" or fact.value is None:
            continue
        if any(fact.span[0] < end and start < fact.span[1] for start, end in gold_spans):
            continue
        have = _base(fact.value, fact.unit)
        if have is None:
            continue
        dimension, value = have
        if any(d == dimension and abs(value - v) <= t for d, v, t in golden):
            continue
        candidates.setdefault(dimension, []).append(fact)
    spans = sentence_spans(answer)
    found: list[tuple[Fact, Claim]] = []
    taken: set[tuple[int, int]] = set()
    for claim, (dimension, _, _) in bound:
        words = content_words(claim.text)
        numbers = [
            fact
            for fact in candidates.get(dimension, [])
            if not words or words & content_words(_sentence(answer, spans, fact.span))
        ]
        missed_here = sum(1 for _, (d, _, _) in bound if d == dimension)
        # more values of the kind than claims missed: a quoted table or a comparison, not
        # the answer's value for the claim
        if len(numbers) > missed_here:
            continue
        for fact in numbers:
            if fact.span not in taken:
                taken.add(fact.span)
                found.append((fact, claim))
    found.sort(key=lambda pair: pair[0].span)
    return found
