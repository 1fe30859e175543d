"""A value of an answer that contradicts a claim: of the claim's kind, in the clause that
states it, and not the claim's own value (pytest_ragv2.scoring.claim_values and the vetoes
ask).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from pytest_ragv2.gold.schema import Claim
from pytest_ragv2.scoring.answer_text import fold
from pytest_ragv2.scoring.claim_bounds import (
    _bound,
    same_value,
)
from pytest_ragv2.scoring.claims import (
    _Answer,
    _primary_lang,
    _read_by_values,
    _value_claim,
    _words_of,
)
from pytest_ragv2.scoring.values import Value


def _comparable(gold: Value, value: Value) -> bool:
    """Whether ``value`` is of the kind (and a number's dimension) of ``gold``."""
    return value.kind == gold.kind and (
        value.kind not in ("quantity", "money", "percent") or value.dimension == gold.dimension
    )


def contradicting_value(
    claim: Claim,
    answer: str,
    lang: str | None,
    gold_lang: str | None = None,
    *,
    taken: Sequence[tuple[int, int]] = (),
) -> tuple[int, int] | None:
    """Where ``answer`` states a missed text claim with another value: a sentence that is
    about the claim — two thirds of its content words in the claim's language, or in
    another language one of its values — and holds a value of the kind of a claim value it
    lacks ("les jours ouvrés de 8 h à 20 h" for "... de 9 h à 18 h"; "from 9:00 to 15:00"
    for "10:00 to 15:00"), or a claim value under the opposite bound ("up to 50" for "more
    than 50"). A sentence is about the claim when it holds one of the claim's values or, in
    the claim's language, two thirds of its content words: a bare value ("1 240") is bound
    by a typed claim's rules, not here. The span of that value, None when no sentence says
    the claim otherwise. A value under the opposite bound inside ``taken`` (the span of a
    claim the answer states: "jusqu'à 14 bar : vis" beside the missed "au-delà de 14 bar :
    piston") is that claim's, not this one's contradiction."""
    if claim.kind is not None or claim.pattern or claim.number is not None:
        return None
    if not _read_by_values(claim):
        return None
    read = _value_claim(claim.text, gold_lang)
    if read is None:
        return None
    parsed = _Answer.of(answer, lang)
    for start, end in parsed.sentences:
        inside = [value for value in parsed.values if start <= value.span[0] < end]
        if not inside:
            continue
        have = _words_of(answer, start, end)
        same_language = read.lang is None or lang is None or _primary_lang(lang) == read.lang
        held = [
            next((value for value in inside if same_value(gold, value)), None)
            for gold in read.values
        ]
        # about the claim: one of its values is there, or (in its language) most of its words
        about = any(held) or (
            same_language and bool(read.words) and 3 * len(read.words & have) >= 2 * len(read.words)
        )
        if not about:
            continue
        for gold_bound, hit in zip(read.bounds, held, strict=True):
            written = _bound(answer, hit.span[0]) if hit is not None else None
            if hit is not None and gold_bound is not None and written not in (None, gold_bound):
                if any(a < hit.span[1] and hit.span[0] < b for a, b in taken):
                    continue  # the other bound is another claim's, stated ("jusqu'à 14 bar")
                return hit.span
        stated = {hit.span for hit in held if hit is not None}
        for gold, hit in zip(read.values, held, strict=True):
            if hit is not None or gold.kind not in _CONTRADICTABLE:
                continue
            counts = _counted(claim.text, gold) if gold.kind == "count" else None
            other = next(
                (
                    value
                    for value in inside
                    if value.span not in stated
                    and _comparable(gold, value)
                    and not any(same_value(mine, value) for mine in read.values)
                    # a count of another thing ("seize caractères" beside "deux facteurs")
                    and (counts is None or _counted(answer, value) in (None, counts))
                ),
                None,
            )
            if other is not None:
                return other.span
    return None


_NEXT_WORD = re.compile(r"[\s-]*([^\W\d_]{3,})")


def _counted(text: str, value: Value) -> str | None:
    """What a count counts: the first letters of the word right after it, None without."""
    after = _NEXT_WORD.match(text, value.span[1])
    return fold(after.group(1))[:5] if after else None


# values a claim's text states that another value of the kind contradicts (an identifier
# beside another names two things)
_CONTRADICTABLE = frozenset({"quantity", "money", "percent", "count", "date", "time"})
