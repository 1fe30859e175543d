"""The typed value and what every reader of values shares: the kinds, the collector that keeps
found values apart, and the small helpers of amounts and languages.
(:mod:`pytest_ragv2.scoring.values` reads an answer with them.)
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import TYPE_CHECKING, Any, Literal

from pytest_ragv2.gold.kinds import CLAIM_KINDS, ClaimKind

if TYPE_CHECKING:
    pass


# the kinds of value are the gold's claim kinds: one list for the schema and the reader
ValueKind = ClaimKind
VALUE_KINDS: tuple[ValueKind, ...] = CLAIM_KINDS
Granularity = Literal["day", "month", "quarter", "half", "year"]


@dataclass(frozen=True, slots=True)
class Value:
    """One typed value of a text (rules in the module docstring)."""

    kind: ValueKind
    key: str
    """The canonical form: equal values have equal keys, different values different keys."""
    span: tuple[int, int]
    """Where the value is written, in the original text."""
    text: str
    """The original text of the span."""
    amount: Decimal | None = None
    """Numeric kinds: the value in the dimension's base unit."""
    dimension: str | None = None
    """Numeric kinds: the dimension ("s", "months", "EUR", "%", ...); dates: the
    granularity ("day", "month", "quarter", "half", "year")."""
    precision: Decimal | None = None
    """Numeric kinds: the step of the last digit written, in the base unit ("5,76 M€":
    10000; "99,7 %": 0.1; "1,5 an": 1.2 months)."""
    ambiguous: bool = False
    """The reading rests on a guess: "1,689" or a numeric date with no language to decide."""
    alternative: str | None = None
    """The key of the other reading of an ambiguous value."""
    implicit: bool = False
    """Said with no number ("every hour", "jeden Monat"): a value a claim may ask for, but no
    figure the answer states for grounding to check."""


def _alternatives(text: str) -> tuple[str, ...]:
    """The spellings of a table written as one string, separated by ``|``."""
    return tuple(text.split("|"))


def _tidy(amount: Decimal) -> Decimal:
    """``amount`` without trailing zeros, an integer without exponent (1000, not 1E+3)."""
    integral = amount.to_integral_value()
    if amount != integral:
        return amount.normalize()
    try:
        return integral.quantize(Decimal(1))
    except InvalidOperation:  # more digits than the context's precision
        return integral


def _plain(amount: Decimal) -> str:
    """``amount`` in plain decimal notation, without exponent or trailing zeros."""
    text = format(amount.normalize(), "f")
    return "0" if text in ("-0", "0") else text


def _primary(lang: str | None) -> str:
    return re.split(r"[-_]", lang.strip().lower(), maxsplit=1)[0] if lang else ""


def _region(lang: str | None) -> str:
    parts = re.split(r"[-_]", lang.strip().lower()) if lang else []
    return parts[1] if len(parts) > 1 else ""


class _Collector:
    """The values found so far and the original characters they (or blocked text) cover."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.covered = bytearray(len(text))
        self.values: list[Value] = []

    def free(self, span: tuple[int, int]) -> bool:
        start, end = span
        return end > start and self.covered.find(1, start, end) < 0

    def block(self, span: tuple[int, int]) -> None:
        start, end = span
        if end > start:
            self.covered[start:end] = b"\x01" * (end - start)

    def add(self, kind: ValueKind, key: str, span: tuple[int, int], **fields: Any) -> bool:
        if not self.free(span):
            return False
        self.block(span)
        self.values.append(Value(kind, key, span, self.text[span[0] : span[1]], **fields))
        return True
