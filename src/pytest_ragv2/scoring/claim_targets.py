"""What value a gold claim asks for, read as the answers are read.

Pure functions, no I/O. A typed claim (``kind`` and ``value``) is read by
:func:`pytest_ragv2.scoring.values.read_value`; an untyped claim with ``number`` and ``unit``
is a number of the unit's dimension. Both become a :class:`Target`: the value's class
("number", "date" or "identifier", as :class:`pytest_ragv2.scoring.grounding.Fact` groups
an answer's values), its dimension (a number's, "date" for a date), its amount in the
dimension's base unit and the canonical key. The claim scorer, the claim-bound grounding and
the vetoes compare an answer's values with it, so one reading decides them all.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from functools import lru_cache
from typing import Literal

from pytest_ragv2.gold.schema import Claim
from pytest_ragv2.scoring.numbers import normalise_unit, unit_scale
from pytest_ragv2.scoring.values import Value, ValueKind, read_value

TargetClass = Literal["number", "date", "identifier"]
_NUMERIC = frozenset({"quantity", "money", "percent", "count"})
DATE_DIMENSION = "date"


@dataclass(frozen=True, slots=True)
class Target:
    """The value a claim asks for."""

    of: TargetClass
    dimension: str | None  # a number's ("s", "EUR", "%"; None: a count), "date" for a date
    amount: Decimal | None  # a number's value in its dimension's base unit
    tolerance: Decimal  # how far an answer's amount may be, in the base unit
    key: str | None  # the canonical key of a typed claim's value
    value: Value | None  # the gold value as read (typed claims)

    def same_class(self, value: Value) -> bool:
        """Whether an answer's ``value`` is of this target's kind and dimension."""
        if self.of == "number":
            if value.kind not in _NUMERIC:
                return False
            return _family(value.dimension) == _family(self.dimension)
        if self.of == "date":  # a date for a date, a time of day for a time of day
            return value.kind == (self.value.kind if self.value is not None else "date")
        if self.value is None or value.kind != self.value.kind:
            return False
        if value.kind != "identifier":
            return True  # a phone number for a phone number, a URL for a URL
        # an identifier of the same make: as many groups, the same first one ("CC-MER-2024-018"
        # for "CC-MER-2024-017"; not "ISO-27001")
        have, want = value.key.split(":", 1)[-1], self.value.key.split(":", 1)[-1]
        return len(have.split("-")) == len(want.split("-")) and (
            have.split("-")[0] == want.split("-")[0]
        )


# durations in seconds and in calendar months are one kind of value for a claim: "36 mois"
# given for "90 jours" is a wrong duration, though the two units do not convert exactly
_FAMILIES = {"s": "duration", "months": "duration", "workdays": "duration"}


def _family(dimension: str | None) -> str | None:
    return _FAMILIES.get(dimension, dimension) if dimension is not None else None


@lru_cache(maxsize=4096)
def gold_value(text: str, kind: ValueKind, lang: str | None) -> Value | None:
    """A typed claim's value, read once per process: in the prompt's language, else with no
    language (a value written as its source writes it, "three hours" in a French case)."""
    value = read_value(text, kind, lang)
    if value is None and lang is not None:
        value = read_value(text, kind, None)
    return value


def claim_target(claim: Claim, gold_lang: str | None = None) -> Target | None:
    """The value ``claim`` asks for, None for a claim that is no value (text, pattern)."""
    if claim.kind is not None and claim.value is not None:
        value = gold_value(claim.value, claim.kind, gold_lang)
        if value is None:
            return None
        if value.kind in _NUMERIC:
            return Target("number", value.dimension, value.amount, Decimal(0), value.key, value)
        if value.kind in ("date", "time"):
            dimension = DATE_DIMENSION if value.kind == "date" else "time"
            return Target("date", dimension, None, Decimal(0), value.key, value)
        return Target("identifier", None, None, Decimal(0), value.key, value)
    if claim.number is None:
        return None
    number = Decimal(repr(float(claim.number)))
    tolerance = Decimal(repr(float(claim.tolerance or 0)))
    if not claim.unit:
        return Target("number", None, number, tolerance, None, None)
    scale = unit_scale(claim.unit)
    if scale is None:  # a unit outside the table: its own dimension, no conversion
        return Target("number", normalise_unit(claim.unit), number, tolerance, None, None)
    return Target("number", scale[0], number * scale[1], tolerance * scale[1], None, None)
