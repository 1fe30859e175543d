"""Values an answer derives rather than copies — a sum, a difference, a product or a ratio of
stated figures, a yearly figure from a monthly one, an energy from a power and a time, a
date moved by a stated delay — found backed by the figures their terms come from
(pytest_ragv2.scoring.grounding asks when a value is not in the sources as written).
"""

from __future__ import annotations

import bisect
import itertools
import re
from collections.abc import Sequence
from decimal import Decimal

from pytest_ragv2.scoring.numbers import UNIT_DIMENSIONS
from pytest_ragv2.scoring.values import Value

# dimension -> the factors of its units (a plain number is the value in one of them)
_FACTORS: dict[str, tuple[Decimal, ...]] = {}
for _dimension, _factor in UNIT_DIMENSIONS.values():
    _FACTORS[_dimension] = (*_FACTORS.get(_dimension, ()), _factor)


_FACTORS_OF_MONEY = (Decimal(1), Decimal(10) ** 3, Decimal(10) ** 6, Decimal(10) ** 9)


def _factors(value: Value) -> tuple[Decimal, ...]:
    if value.kind == "count" or value.dimension is None:
        return (Decimal(1),)
    if value.kind == "money":
        return _FACTORS_OF_MONEY
    return _FACTORS.get(value.dimension, (Decimal(1),))


# an arithmetic operator right before or after a number: a term of a computation shown
_TERM_AROUND = re.compile(r"^[^\d]{0,3}?[×x*÷/+=\u2212-]\s*\d|\d\s*[×x*÷/+=\u2212-]")


def _written_amount(value: Value) -> Decimal | None:
    """The number a value writes, before its unit ("690" of "690 minutes")."""
    found = re.match(r"[^\d]*(\d+(?:[.,]\d+)?)", value.text)
    if found is None:
        return None
    try:
        return Decimal(found.group(1).replace(",", "."))
    except ArithmeticError:
        return None


def _around(bounds: Sequence[int], position: int) -> tuple[int, int]:
    """The paragraph (between two of the sorted ``bounds``) holding ``position``."""
    at = bisect.bisect_right(bounds, position) - 1
    return bounds[at], bounds[at + 1]


def _with_previous(bounds: Sequence[int], paragraph: tuple[int, int]) -> tuple[int, int]:
    """``paragraph`` widened to the start of the paragraph before it."""
    at = bisect.bisect_left(bounds, paragraph[0])
    return bounds[max(at - 1, 0)], paragraph[1]


def _close(value: Decimal, target: Value) -> bool:
    """Within half the last digit the target writes (a hundredth when it writes none)."""
    assert target.amount is not None
    step = target.precision or Decimal("0.01")
    return abs(value - target.amount) <= step / 2


def _sum_or_difference(target: Value, operands: Sequence[Value]) -> bool:
    """Is ``target`` (to its written precision) the sum of two or more ``operands``, or the
    difference of two? An operand without a unit may be written in one of the target's
    units ("T4 : 1 689" in a list of quarters summed to "5 763 k€")."""
    if len(operands) < 2 or target.amount is None:
        return False
    for factor in _factors(target):
        scaled = [
            operand.amount * factor if operand.dimension is None else operand.amount
            for operand in operands
            if operand.amount is not None
        ]
        for size in range(2, len(scaled) + 1):
            for chosen in itertools.combinations(scaled, size):
                if _close(sum(chosen, Decimal(0)), target):
                    return True
        for first, second in itertools.permutations(scaled, 2):
            if _close(first - second, target):
                return True
    return False


def _product_or_ratio(target: Value, operands: Sequence[Value]) -> bool:
    """Is ``target`` the product or the quotient of two ``operands`` of its sentence, or —
    a percentage — their ratio or relative change ("28.7 %" for 1 689 against 1 312), or an
    amount moved by a percentage operand ("€290 − 10 % = €261")? A duration multiplies as a
    count of its unit ("670 € par mois, 8 040 € sur un an")."""
    if target.amount is None or len(operands) < 2:
        return False
    for one, other in itertools.permutations(operands, 2):
        first, second = _as_factor(one), _as_factor(other)
        if second == 0:
            continue
        found = [first * second, first / second]
        if target.kind == "percent":
            # a relative change is written with its sign or without ("≈ 20 % d'erreur en
            # moins" for 14,2 % → 11,4 %)
            change = 100 * (first - second) / second
            found += [100 * first / second, change, abs(change)]
        if other.kind == "percent" and one.kind != "percent":
            # an amount moved by a percentage ("€290 − 10 % = €261/month")
            found += [first * (1 - second / 100), first * (1 + second / 100)]
        if any(_close(value, target) for value in found):
            return True
    return False


# factors of the calendar a computation may use without a source: months, weeks and days
# of a year, hours of a day, minutes of an hour
_CONVERSION_FACTORS = frozenset(Decimal(n) for n in (12, 52, 365, 24, 60))


_PER_YEAR = re.compile(
    r"\b(?:per year|a year|each year|annual(?:ly)?|yearly|par an|l'an|annuel(?:le)?(?:s)?"
    r"|pro jahr|im jahr|j(?:ä|ae)hrlich\w*)\b",
    re.IGNORECASE,
)


def _energy_power_time(target: Value, operands: Sequence[Value]) -> bool:
    """Is ``target`` a power from an energy and a time of its paragraph, or an energy from
    a power and a time ("2,6 kWh ... 11,5 Stunden ... ≈ 0,23 kW", "1,5 kW × 2 h = 3 kWh")?
    Their units say how they relate, so the paragraph may hold them apart."""
    if target.dimension not in ("W", "Wh"):
        return False
    times = [v for v in operands if v.dimension == "s" and v.amount]
    source = "Wh" if target.dimension == "W" else "W"
    for one in (v for v in operands if v.dimension == source and v.amount is not None):
        assert one.amount is not None
        for time in times:
            assert time.amount is not None
            hours = time.amount / 3600
            value = one.amount / hours if source == "Wh" else one.amount * hours
            if _close(value, target):
                return True
    return False


def _as_factor(value: Value) -> Decimal:
    """A value as a multiplier: a duration in months as its number of months, in seconds as
    its number of days; anything else its amount."""
    assert value.amount is not None
    if value.dimension == "s":
        return value.amount / 86400
    return value.amount


_DAY = re.compile(r"date:day:(\d{4})-(\d{2})-(\d{2})")


_MONTH_KEY = re.compile(r"date:month:(\d{4})-(\d\d)")


_PERIOD_KEY = re.compile(r"date:(quarter|half):(\d{4})-[QH](\d)")


def _spelled_out(answer: str, target: Value, dates: Sequence[Value]) -> bool:
    """Is the month ``target`` a supported quarter or half-year spelled out in brackets
    after it ("au deuxième trimestre 2027 (avril à juin 2027)", "H1 2026 (January to
    June 2026)")?"""
    month = _MONTH_KEY.fullmatch(target.key)
    if month is None:
        return False
    year, number = month.group(1), int(month.group(2))
    for date in dates:
        period = _PERIOD_KEY.fullmatch(date.key)
        if period is None or period.group(2) != year or date.span[1] > target.span[0]:
            continue
        size = 3 if period.group(1) == "quarter" else 6
        first = (int(period.group(3)) - 1) * size + 1
        between = answer[date.span[1] : target.span[0]]
        if first <= number < first + size and "(" in between and ")" not in between:
            return True
    return False


def _moved_date(target: Value, dates: Sequence[Value], durations: Sequence[Value]) -> bool:
    """Is the day ``target`` a supported day moved by a supported duration, to the day or the
    day before (a term of 36 months from 1 October 2024 runs until 30 September 2027)?"""
    import datetime

    def day(value: Value) -> datetime.date | None:
        found = _DAY.fullmatch(value.key)
        if found is None:
            return None
        try:
            return datetime.date(*(int(part) for part in found.groups()))
        except ValueError:
            return None

    of_month = _MONTH_KEY.fullmatch(target.key)
    if of_month is not None:  # "30 Monate ab dem 15. März 2026: Mitte September 2028"
        wanted_month = (int(of_month.group(1)), int(of_month.group(2)))
        for first in filter(None, (day(value) for value in dates)):
            for duration in durations:
                if duration.dimension != "months" or duration.amount is None:
                    continue
                years, index = divmod(first.month - 1 + int(duration.amount), 12)
                if (first.year + years, index + 1) == wanted_month:
                    return True
        return False
    wanted = day(target)
    if wanted is None:
        return False
    for start in filter(None, (day(value) for value in dates)):
        for duration in durations:
            assert duration.amount is not None
            if duration.dimension == "months":
                months = int(duration.amount)
                if months != duration.amount:
                    continue
                year, month = divmod(start.month - 1 + months, 12)
                try:
                    moved = start.replace(year=start.year + year, month=month + 1)
                except ValueError:
                    continue
            else:
                moved = start + datetime.timedelta(seconds=float(duration.amount))
            if wanted in (moved, moved - datetime.timedelta(days=1)):
                return True
    return False
