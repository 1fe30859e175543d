"""Is every number, identifier and filename an answer states backed by something it was given?

Pure functions, no I/O. The **facts** of an answer are:

- its numbers, read by :func:`pytest_ragv2.scoring.numbers.parse_numbers` in the prompt's
  language (so "1 689 k€", "1.689 k€" in German and "1,689 k€" in English are one number),
  with their units — except unitless integers from 0 to 10 (counts: "les 3 plans", "2 x"),
  list markers ("1.") and the digits of citation markers, URLs, filenames and identifiers;
- its identifiers: tokens of letters and digits joined by ``- _ / .`` ("TVS-200", "NX-450B",
  "CE-2024-117", "SK-22OA", "DB-TVS75-DE-09"), at least three characters long, that are not a
  number with its unit ("48h", "m3/min", "h/24"), an ordinal ("1er", "4th") or a token with a
  single letter ("Q4", "T4/2025", "3x");
- the filenames it mentions ("datenblatt-tvs-75.pdf").

A fact is **supported** when the support — the turn's evidence texts and tool results, the
citations' contents, the prompts of the conversation up to this turn, and the earlier turns'
answers, evidence and tool results — holds it:

- a number: a support number of the same value where one side has no unit, or of the same
  dimension after conversion (``1 689 000 €`` = ``1 689 k€``; a unitless support "1 689"
  supports "1,689 M€" as it is 1 689 in k€, one of the dimension's units); an answer number
  with decimals also matches a support value that rounds to it ("1,7 M€" for "1 689 k€");
- an identifier: its letters and digits (separators and case ignored) equal those of one to
  five consecutive alphanumeric runs of the support joined by single separators, so
  "TVS75" is backed by "TVS 75-10", and "SK-220A" is not backed by "SK-22OA";
- a filename: the same basename (NFC, casefolded) in the support texts, or the filename of
  an evidence item or citation, or its name without extension is such an item's file id.

Facts inside the span of a matched required or optional gold claim are supported by the gold
(a computed total such as "5 763 k€" is in no document).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from decimal import ROUND_HALF_UP, Decimal
from functools import lru_cache
from typing import Literal

from pytest_ragv2.scoring.answer_text import (
    FILENAME,
    LIST_MARKER,
    URL,
    Coverage,
    marker_spans,
    mask,
    overlaps,
)
from pytest_ragv2.scoring.evidence import normalise_filename
from pytest_ragv2.scoring.identifiers import typed_identifiers, typed_keys
from pytest_ragv2.scoring.numbers import UNIT_DIMENSIONS as _UNIT_DIMENSIONS
from pytest_ragv2.scoring.numbers import parse_numbers, unit_scale

FactKind = Literal["number", "identifier", "filename"]

_RUN = re.compile(r"[^\W_]+")
_RUN_SPLIT = re.compile(r"([^\W_]+)")
_JOINERS = " -_/."
_TOKEN = re.compile(r"(?<![\w])[^\W_]+(?:[-_/.][^\W_]+)*")
_ORDINAL_SUFFIXES = frozenset(
    {"st", "nd", "rd", "th", "er", "re", "e", "eme", "ieme", "ème", "ième", "te", "ten", "ter"}
)
_UNITS_BY_DIMENSION: dict[str, tuple[tuple[str, Decimal], ...]] = {}
for _unit, (_dimension, _factor) in _UNIT_DIMENSIONS.items():
    _UNITS_BY_DIMENSION.setdefault(_dimension, ())
    _UNITS_BY_DIMENSION[_dimension] += ((_unit, _factor),)


@dataclass(frozen=True, slots=True)
class Fact:
    """One checkable fact of an answer and whether the support holds it."""

    kind: FactKind
    text: str
    span: tuple[int, int]
    supported: bool
    unit: str | None = None
    value: float | None = None
    decimals: int = 0
    type: str = ""  # a typed identifier's type: phone, email, url, iban, part
    keys: frozenset[str] = frozenset()  # a typed identifier's comparison keys


@dataclass(frozen=True, slots=True)
class Support:
    """What one text can back: numbers, identifier keys and filenames (:func:`text_support`),
    or several texts' together (:meth:`merge`)."""

    unitless: frozenset[Decimal]
    written: frozenset[Decimal]  # every number's value as written, whatever its unit
    dimensioned: frozenset[tuple[str, Decimal]]  # (dimension, value in its base unit)
    foreign: frozenset[tuple[str, Decimal]]  # (unit outside the table, value)
    values: tuple[tuple[str | None, Decimal], ...]  # (dimension or None, value), for rounding
    identifiers: frozenset[str]
    filenames: frozenset[str]
    typed: frozenset[str] = frozenset()  # keys of typed identifiers (phone, e-mail, URL, ...)

    @property
    def parts(self) -> tuple[Support, ...]:
        return (self,)

    def holds_filename(self, name: str) -> bool:
        return name in self.filenames

    @staticmethod
    def merge(parts: Iterable[Support | Supports], extra_filenames: Iterable[str] = ()) -> Supports:
        return Supports.of(parts, extra_filenames)


@dataclass(frozen=True, slots=True)
class Supports:
    """Several texts' support, read part by part: a turn's few facts are looked up in each
    text's sets, instead of every set being copied into one (a tool result's identifier keys
    alone run to thousands, and each conversation's evidence is another combination)."""

    parts: tuple[Support, ...]
    extra_filenames: frozenset[str] = frozenset()

    @classmethod
    def of(
        cls, parts: Iterable[Support | Supports], extra_filenames: Iterable[str] = ()
    ) -> Supports:
        given = list(parts)
        names = frozenset(normalise_filename(name) for name in extra_filenames if name)
        return cls(
            tuple(single for part in given for single in part.parts),
            names.union(*(part.extra_filenames for part in given if isinstance(part, Supports))),
        )

    def holds_filename(self, name: str) -> bool:
        return name in self.extra_filenames or any(name in part.filenames for part in self.parts)


def _decimal(value: float) -> Decimal:
    return Decimal(repr(float(value)))


def identifier_key(token: str) -> str:
    """Letters and digits only, NFKC, casefolded: the form identifiers are compared in."""
    return "".join(_RUN.findall(unicodedata.normalize("NFKC", token).casefold()))


@lru_cache(maxsize=4096)
def text_support(text: str) -> Support:
    """The support one text gives (cached: the same evidence is scored over many runs)."""
    unitless: set[Decimal] = set()
    written: set[Decimal] = set()
    dimensioned: set[tuple[str, Decimal]] = set()
    foreign: set[tuple[str, Decimal]] = set()
    values: list[tuple[str | None, Decimal]] = []
    for number in parse_numbers(text, None):
        value = _decimal(number.value)
        written.add(value)
        scale = unit_scale(number.unit) if number.unit else None
        if number.unit is None:
            unitless.add(value)
            values.append((None, value))
        elif scale is None:
            foreign.add((number.unit, value))
        else:
            dimensioned.add((scale[0], value * scale[1]))
            values.append((scale[0], value * scale[1]))
    norm = unicodedata.normalize("NFKC", text).casefold()
    # [gap, run, gap, run, ..., gap]: a run and up to four following ones, joined by single
    # separators, are one key each
    pieces = _RUN_SPLIT.split(norm)
    runs = pieces[1::2]
    joined = [len(gap) == 1 and gap in _JOINERS for gap in pieces[2:-1:2]]
    identifiers = set(runs)
    for index, run in enumerate(runs):
        key = run
        for gap in range(index, min(index + 4, len(joined))):
            if not joined[gap]:
                break
            key += runs[gap + 1]
            identifiers.add(key)
    filenames = frozenset(normalise_filename(m.group()) for m in FILENAME.finditer(text))
    return Support(
        frozenset(unitless),
        frozenset(written),
        frozenset(dimensioned),
        frozenset(foreign),
        tuple(values),
        frozenset(identifiers),
        filenames,
        typed_keys(text),
    )


def number_supported(
    value: float, unit: str | None, decimals: int, support: Support | Supports
) -> bool:
    """The number rule of the module docstring."""
    parts = support.parts
    number = _decimal(value)
    if unit is None:
        return any(number in part.written for part in parts)
    scale = unit_scale(unit)
    if scale is None:
        return any((unit, number) in part.foreign or number in part.unitless for part in parts)
    dimension, factor = scale
    base = number * factor
    if any((dimension, base) in part.dimensioned for part in parts):
        return True
    siblings = _UNITS_BY_DIMENSION.get(dimension, ())
    in_siblings = [base / other for _, other in siblings]
    if any(candidate in part.unitless for part in parts for candidate in in_siblings):
        return True
    if decimals <= 0:
        return False
    quantum = Decimal(1).scaleb(-decimals)
    for part in parts:
        for have_dimension, have in part.values:
            if have_dimension == dimension:
                if (have / factor).quantize(quantum, rounding=ROUND_HALF_UP) == number:
                    return True
            elif have_dimension is None:
                for _, other in siblings:
                    rounded = (have * other / factor).quantize(quantum, rounding=ROUND_HALF_UP)
                    if rounded == number:
                        return True
    return False


def identifier_supported(fact: Fact, support: Support | Supports) -> bool:
    """A typed identifier by its keys (a part number also by its letters and digits, as
    any other identifier), an identifier by its letters and digits."""
    parts = support.parts
    if fact.keys and any(fact.keys & part.typed for part in parts):
        return True
    if fact.type and fact.type != "part":
        return False
    key = identifier_key(fact.text)
    return any(key in part.identifiers for part in parts)


def _exempt_identifier(token: str) -> bool:
    folded = unicodedata.normalize("NFKC", token).casefold()
    letters = sum(1 for char in folded if char.isalpha())
    if len(folded) < 3 or letters <= 1:
        return True
    runs = re.findall(r"[^\W\d_]+", folded)
    return all(
        run in _ORDINAL_SUFFIXES or run == "x" or unit_scale(run) is not None for run in runs
    )


def identifier_spans(text: str) -> list[tuple[int, int]]:
    """Spans of identifier-shaped tokens (see the module docstring)."""
    spans = []
    for match in _TOKEN.finditer(text):
        token = match.group()
        has_both = any(c.isdigit() for c in token) and any(c.isalpha() for c in token)
        if has_both and not _exempt_identifier(token):
            spans.append(match.span())
    return spans


def answer_facts(
    answer: str,
    lang: str | None,
    support: Support | Supports,
    *,
    markers: Sequence[str] = (),
    gold_spans: Sequence[tuple[int, int]] = (),
) -> list[Fact]:
    """Every fact of ``answer`` with whether ``support`` (or a gold claim span) backs it."""
    hidden = marker_spans(answer, markers)
    facts: list[Fact] = []
    for typed in typed_identifiers(mask(answer, hidden)):
        fact = Fact("identifier", typed.text, typed.span, False, type=typed.type, keys=typed.keys)
        if identifier_supported(fact, support) or overlaps(typed.span, gold_spans):
            fact = replace(fact, supported=True)
        facts.append(fact)
        hidden.append(typed.span)
    hidden += [m.span() for m in URL.finditer(answer)]
    covered = Coverage(len(answer), hidden)
    for match in FILENAME.finditer(answer):
        if covered.overlaps(match.span()):
            continue
        name = match.group()
        stem = normalise_filename(name).rsplit(".", 1)[0]
        supported = (
            support.holds_filename(normalise_filename(name))
            or support.holds_filename(stem)
            or overlaps(match.span(), gold_spans)
        )
        facts.append(Fact("filename", name, match.span(), supported))
        hidden.append(match.span())
    hidden += [(m.start(), m.end()) for m in LIST_MARKER.finditer(answer)]
    masked = mask(answer, hidden)
    for start, end in identifier_spans(masked):
        token = answer[start:end]
        key = identifier_key(token)
        supported = any(key in part.identifiers for part in support.parts) or overlaps(
            (start, end), gold_spans
        )
        facts.append(Fact("identifier", token, (start, end), supported))
    for number in parse_numbers(masked, lang):
        if number.unit is None and number.decimals == 0 and 0 <= number.value <= 10:
            continue
        supported = overlaps(number.span, gold_spans) or number_supported(
            number.value, number.unit, number.decimals, support
        )
        facts.append(
            Fact(
                "number",
                answer[number.span[0] : number.span[1]],
                number.span,
                supported,
                number.unit,
                number.value,
                number.decimals,
            )
        )
    facts.sort(key=lambda fact: fact.span)
    return facts
