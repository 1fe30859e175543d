"""When a value is a claim's value: the same value however written or rounded, an unsigned
difference, and the bound a claim puts on its value ("at least 16 bar", "höchstens 30 Tage")
with the opposite bound that contradicts it.
"""

from __future__ import annotations

import re
from dataclasses import replace
from decimal import ROUND_HALF_UP, Decimal

from pytest_ragv2.gold.schema import Claim
from pytest_ragv2.scoring.answer_text import fold
from pytest_ragv2.scoring.claim_targets import claim_target
from pytest_ragv2.scoring.values import Value, read_values


def typed_bound(claim: Claim, gold_lang: str | None = None) -> str | None:
    """The bound a typed claim's value is written under ("at least eight years": "lower"),
    None without one."""
    if claim.kind is None or not claim.value:
        return None
    read = read_values(claim.value, gold_lang)
    return _bound(claim.value, read[0].span[0]) if read else None


def opposite_bound(
    claim: Claim, answer: str, lang: str | None, gold_lang: str | None = None
) -> tuple[int, int] | None:
    """Where ``answer`` states a bounded typed claim's value under the opposite bound ("up
    to eight years" for "at least eight years"), None where it does not."""
    bound = typed_bound(claim, gold_lang)
    target = claim_target(claim, gold_lang) if bound else None
    if target is None or target.value is None:
        return None
    for value in read_values(answer, lang):
        written = _bound(answer, value.span[0])
        if written is not None and written != bound and same_value(target.value, value):
            return value.span
    return None


def same_value(gold: Value, value: Value) -> bool:
    """Whether the answer's ``value`` states the ``gold`` value: the same key (or the other
    reading of an ambiguous writing); a year written as a plain number for a year; an amount
    written with a scale but no currency for a money value ("8,5 millions" for "8,5 M€"); a
    rounded writing that keeps the value to 2 % and whose last written digit the gold value
    rounds to ("5,76 M€" for "5 763 k€", not "6 M€"); or a finer writing that rounds to the
    gold value at the gold's precision ("99,72 %" for "99,7 %"). A date is the gold date only
    at its granularity: "6 octobre 2025" says more than "octobre 2025", "2025" less."""
    keys = {gold.key, *((gold.alternative,) if gold.alternative else ())}
    if value.key in keys or (value.alternative is not None and value.alternative in keys):
        return True
    if unsigned_difference(gold, value):
        # a difference in points is a magnitude; its direction is in the words ("-2,8 pts"
        # of MAPE is the "amélioration de 2,8 points")
        assert value.amount is not None
        return same_value(
            gold, replace(value, key=value.key.replace(":-", ":"), amount=-value.amount)
        )
    if gold.kind == "date":
        return value.kind == "count" and gold.key == f"date:year:{value.key.split(':')[-1]}"
    if gold.kind == "money" and value.kind == "count" and value.amount is not None:
        return value.amount == gold.amount and value.amount >= 1000
    if value.kind != gold.kind or value.dimension != gold.dimension:
        return False
    if gold.ambiguous and gold.alternative is not None and _rounds_to(gold, value):
        # a gold value read with no language ("25,517 %"): its other reading, rounded
        return True
    return _near(gold, value)


def unsigned_difference(gold: Value, value: Value) -> bool:
    """Whether ``value`` is a negative difference in percentage points and ``gold`` one
    written without a sign."""
    return (
        gold.dimension == "pp"
        and value.dimension == "pp"
        and gold.amount is not None
        and gold.amount > 0
        and value.amount is not None
        and value.amount < 0
    )


def _rounds_to(gold: Value, value: Value) -> bool:
    """Whether ``value`` is a rounded or finer writing of the other reading of an
    ambiguous gold value."""
    assert gold.alternative is not None
    written = gold.alternative.rsplit(":", 1)[-1]
    try:
        amount = Decimal(written)
    except ArithmeticError:
        return False
    precision = Decimal(1).scaleb(amount.as_tuple().exponent)  # type: ignore[arg-type]
    other = replace(
        gold, key=gold.alternative, amount=amount, precision=precision, alternative=None
    )
    return _near(other, value)


def _near(gold: Value, value: Value) -> bool:
    if gold.amount is None or value.amount is None or value.precision is None:
        return False
    if gold.precision is not None and value.precision < gold.precision:
        step = gold.precision
        rounded = (value.amount / step).quantize(Decimal(1), rounding=ROUND_HALF_UP) * step
        return rounded == gold.amount
    coarser = gold.precision is None or value.precision > gold.precision
    close = abs(gold.amount - value.amount) <= value.precision / 2
    return coarser and close and value.precision <= abs(gold.amount) / 50


# words of four letters and more that carry no content of a claim (a bound's "than" is
# read with the bound)
_FUNCTION_WORDS = frozenset(
    {"pour", "dans", "avec", "sans", "sous", "vers", "chez", "entre", "leur", "leurs"}
    | {"cette", "elle", "sont", "etre", "avoir", "dont", "fur", "oder", "eine", "einen"}
    | {"einem", "einer", "dass", "sind", "wird", "werden", "durch", "nach", "beim", "with"}
    | {"from", "into", "that", "this", "their", "than", "have", "been", "were", "will"}
)


# a bound a claim puts on its value, and the opposite bound that contradicts it
_LOWER_BOUNDS = (
    "more than",
    "over",
    "above",
    "at least",
    "minimum",
    "plus de",
    "au moins",
    "au-dela de",
    "mehr als",
    "uber",
    "mindestens",
    "ab",
)


_UPPER_BOUNDS = (
    "up to",
    "at most",
    "less than",
    "under",
    "below",
    "maximum",
    "jusqu'a",
    "au plus",
    "moins de",
    "au maximum",
    "bis zu",
    "hochstens",
    "weniger als",
    "unter",
    "maximal",
)


_BOUND_BEFORE = re.compile(
    r"(?<![^\W\d_])(?P<bound>"
    + "|".join(re.escape(b) for b in sorted((*_LOWER_BOUNDS, *_UPPER_BOUNDS), key=len)[::-1])
    + r")$"
)


def _bound(text: str, start: int) -> str | None:
    """The bound written right before the value at ``start`` ("more than 50"): "lower",
    "upper" or None."""
    found = _BOUND_BEFORE.search(fold(text[max(0, start - 16) : start]))  # fold strips
    if found is None:
        return None
    return "lower" if found.group("bound") in _LOWER_BOUNDS else "upper"
