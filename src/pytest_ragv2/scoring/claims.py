"""Deterministic claim matching for chat answers written in French, German or English.

Pure functions, no I/O. Everything is matched on a **normalised** copy of the answer
(:mod:`pytest_ragv2.scoring.normalisation`) and every span reported points back into the
**original** answer string, so a report can highlight exactly what was found. Numbers and
units are read as :mod:`pytest_ragv2.scoring.numbers` describes.

Claims (:func:`claim_found`)
----------------------------
A claim is found when any of its matchers finds it, tried in this order (``how`` names the
first that did): ``pattern`` (case-insensitive regex on the normalised answer; the pattern
itself gets NFKC and the typographic folding but no casefolding, which would break escapes
such as ``\\S``; matched with the ``regex`` package, stopped at the run's scoring
budget), ``number`` (a number in the answer equal to it in the claim's unit, see below),
``any_of`` then ``text`` (normalised substring). A substring that starts or ends with
a digit must not continue a number in the answer (``"100 €"`` is not found in
``"1 100 €"``, ``"33"`` not in ``"1 336"``), and an alternative or text that is itself one
number, with or without a unit (``"99,7 %"``, ``"1 689 k€"``, ``"16 bar"``, ``"33"``), is also
matched as a number, so every writing of it counts.

Number equality: the answer's value converted to the claim's unit (``1 689 000 €`` is
``1689 k€``, ``1,689 M€`` in French is too) equals the claim's number within ``tolerance``
(absolute, in the claim's unit) or, without a tolerance, after rounding the answer's value
half-up to the claim's decimals (claim ``99.7`` accepts ``99,72 %``; claim ``16`` does not
accept ``1,6`` or ``160``). A claim with a unit needs an answer number with a compatible unit
(a claim unit outside the table must appear literally after the number); a claim without a
unit accepts the number with any unit or none. Claim texts are read as written in
``gold_lang`` (``None``: inferred from the text, as for numbers).
"""

from __future__ import annotations

import functools
import itertools
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from decimal import ROUND_HALF_UP, Decimal
from typing import Literal

import regex

from pytest_ragv2.gold.schema import CLAIM_PATTERN_FLAGS, Claim, ExpectedAnswer
from pytest_ragv2.scoring.answer_text import fold, sentence_of, sentence_spans
from pytest_ragv2.scoring.claim_targets import claim_target
from pytest_ragv2.scoring.normalisation import Normalised, normalise, normalise_pattern
from pytest_ragv2.scoring.numbers import UNIT_DIMENSIONS, Num, normalise_unit, read_numbers
from pytest_ragv2.scoring.refusal_clauses import RefusalReading
from pytest_ragv2.scoring.values import Value, identifier_spans, read_values

MatchHow = Literal["", "text", "any_of", "pattern", "number", "value"]


@dataclass(frozen=True)
class ClaimMatch:
    """Whether one claim was found in an answer, by which matcher and where."""

    claim: Claim
    matched: bool
    how: MatchHow = ""
    span: tuple[int, int] | None = None
    found: str = ""


@dataclass(frozen=True)
class _Answer:
    source: str
    norm: Normalised
    numbers: tuple[Num, ...]
    lang: str | None = None
    # the content words of the question the answer answers: its subject, which a short
    # answer does not repeat ("Forty-eight volts" to "What voltage is the battery pack?")
    topic: frozenset[str] = frozenset()

    @classmethod
    def of(cls, answer: str, lang: str | None, prompt: str = "") -> _Answer:
        norm = normalise(answer)
        topic = frozenset(word[:5] for word in _WORDS.findall(fold(prompt)))
        return cls(answer, norm, tuple(read_numbers(norm.text, lang)), lang, topic)

    @functools.cached_property
    def sentences(self) -> list[tuple[int, int]]:
        return sentence_spans(self.source)

    @functools.cached_property
    def values(self) -> tuple[Value, ...]:
        """The answer's typed values, read once (only a typed claim asks for them)."""
        return read_values(self.source, self.lang)

    def hit(self, claim: Claim, how: MatchHow, start: int, end: int) -> ClaimMatch:
        span = self.norm.original_span(start, end)
        return ClaimMatch(claim, True, how, span, self.source[span[0] : span[1]])

    def hit_at(self, claim: Claim, span: tuple[int, int]) -> ClaimMatch:
        """A typed claim found at ``span`` of the original answer."""
        return ClaimMatch(claim, True, "value", span, self.source[span[0] : span[1]])


@dataclass(frozen=True)
class _Target:
    value: Decimal
    unit: str | None
    decimals: int
    tolerance: Decimal | None


def _decimal(value: float) -> Decimal:
    return Decimal(repr(float(value)))


def _decimals_of(value: Decimal) -> int:
    exponent = value.normalize().as_tuple().exponent
    return max(0, -exponent) if isinstance(exponent, int) else 0


def _in_unit(number: Num, unit: str | None, norm: str) -> Decimal | None:
    """The number's value in ``unit`` (its own value when ``unit`` is None), None if foreign."""
    if unit is None:
        return number.value
    wanted = UNIT_DIMENSIONS.get(unit)
    if wanted is None:
        # a unit outside the table: the answer must spell it right after the number
        at = number.number_end + 1 if norm.startswith(" ", number.number_end) else number.number_end
        if norm.startswith(unit, at):
            tail = at + len(unit)
            if tail >= len(norm) or not (norm[tail].isalnum() and unit[-1].isalnum()):
                return number.value
        return None
    if number.unit is None:
        return None
    have = UNIT_DIMENSIONS.get(number.unit)
    if have is None or have[0] != wanted[0]:
        return None
    return number.value * have[1] / wanted[1]


def _equal(value: Decimal, target: _Target) -> bool:
    if target.tolerance is not None:
        return abs(value - target.value) <= target.tolerance
    quantum = Decimal(1).scaleb(-target.decimals)
    rounded = value.quantize(quantum, rounding=ROUND_HALF_UP)
    return rounded == target.value.quantize(quantum, rounding=ROUND_HALF_UP)


def _find_number(answer: _Answer, target: _Target) -> tuple[int, int] | None:
    for number in answer.numbers:
        value = _in_unit(number, target.unit, answer.norm.text)
        if value is not None and _equal(value, target):
            return number.start, number.end
    return None


@functools.lru_cache(maxsize=4096)
def _as_number(text: str, gold_lang: str | None) -> Num | None:
    """The single number (with or without unit) that a whole claim text consists of (a
    gold phrase: read once per process, not once per run scored against it)."""
    norm = normalise(text).text
    numbers = read_numbers(norm, gold_lang)
    if len(numbers) == 1 and numbers[0].start == 0 and numbers[0].end == len(norm):
        return numbers[0]
    return None


def _continues_number(text: str, start: int, end: int) -> bool:
    """Does a substring match at [start, end) begin or end inside a number of ``text``?"""
    if text[start].isdigit() and start > 0:
        before = text[start - 1]
        if before.isdigit() or before.isalpha():
            return True
        if before in ".,' " and start > 1 and text[start - 2].isdigit():
            return True
    if text[end - 1].isdigit() and end < len(text):
        after = text[end]
        if after.isdigit():
            return True
        if after in ".,'" and end + 1 < len(text) and text[end + 1].isdigit():
            return True
        lead = re.search(r"[0-9]+$", text[start:end])
        if (
            after == " "
            and lead is not None
            and len(lead.group()) <= 3
            and re.match(r" [0-9]{3}(?![0-9])", text[end:]) is not None
        ):
            return True
    return False


def _find_text(answer: _Answer, phrase: str, gold_lang: str | None) -> tuple[int, int] | None:
    needle = normalise(phrase).text
    if not needle:
        return None
    haystack = answer.norm.text
    position = haystack.find(needle)
    while position >= 0:
        if not _continues_number(haystack, position, position + len(needle)):
            return position, position + len(needle)
        position = haystack.find(needle, position + 1)
    # the same words with other punctuation between them ("Revision: C" for "revision C",
    # "H und L Gas" for "H- und L-Gas")
    words = re.findall(r"[^\W_]+", needle)
    if len(words) >= 2:
        loose = re.search(
            r"(?<![^\W_])" + r"[^\w.!?;]+".join(map(re.escape, words)) + r"(?![^\W_])", haystack
        )
        if loose is not None:
            return loose.span()
    written = _as_number(phrase, gold_lang)
    if written is None:
        return None
    target = _Target(written.value, written.unit, written.decimals, None)
    return _find_number(answer, target)


_QUARTER_LABEL = re.compile(r"(?:[tq]([1-4])|([1-4])q)")
_ORDINALS = {
    "1": r"first|premier|1er|erste[nsmr]?",
    "2": r"second|deuxieme|deuxième|second|2e|zweite[nsmr]?",
    "3": r"third|troisieme|troisième|3e|dritte[nsmr]?",
    "4": r"fourth|quatrieme|quatrième|4e|vierte[nsmr]?",
}


def _quarter_label(needle: str, haystack: str) -> tuple[int, int] | None:
    """A claim that is a quarter's label alone ("T2") found in any language's writing of
    that quarter: "Q2", "T2", "2Q", "2. Quartal", "deuxième trimestre", "second quarter"."""
    label = _QUARTER_LABEL.fullmatch(needle)
    if label is None:
        return None
    n = label.group(1) or label.group(2)
    writing = re.compile(
        rf"(?<![\w-])(?:[tq]{n}|{n}q|{n}\.? ?quartal|(?:{_ORDINALS[n]}) "
        rf"(?:quarter|trimestre|quartal))(?![\w-])"
    )
    found = writing.search(haystack)
    return found.span() if found else None


class PatternTimedOut(Exception):
    """A claim pattern was still matching when the run's scoring budget ran out (one that
    backtracks catastrophically on this answer)."""

    def __init__(self, pattern: str) -> None:
        super().__init__(f"claim pattern {pattern!r} still matching when the budget ran out")
        self.pattern = pattern


@functools.lru_cache(maxsize=512)
def _compiled(pattern: str) -> regex.Pattern[str]:
    return regex.compile(normalise_pattern(pattern), CLAIM_PATTERN_FLAGS)


def _pattern_match(pattern: str, text: str, deadline: float | None) -> regex.Match[str] | None:
    """``pattern`` searched in ``text``, stopped at ``deadline`` (``time.monotonic()``)."""
    timeout = None
    if deadline is not None:
        timeout = deadline - time.monotonic()
        if timeout <= 0:
            raise PatternTimedOut(pattern)
    try:
        return _compiled(pattern).search(text, timeout=timeout)
    except TimeoutError:
        raise PatternTimedOut(pattern) from None


def _typed_found(claim: Claim, answer: _Answer, gold_lang: str | None) -> ClaimMatch:
    """A typed claim: the answer holds its value in any writing (:func:`same_value`)."""
    target = claim_target(claim, gold_lang)
    if target is None or target.value is None:
        return ClaimMatch(claim, False)
    gold = target.value
    if gold.kind == "identifier" and gold.key.split(":", 1)[-1].isdigit():
        # an identifier of digits alone ("Revision 2") is a number token as the reader
        # reads it: not a citation marker "[2]", not a digit of a date or a longer number
        number = Decimal(gold.key.split(":", 1)[-1])
        for value in answer.values:
            if value.kind == "count" and value.amount == number:
                return answer.hit_at(claim, value.span)
        return ClaimMatch(claim, False)
    if gold.kind == "identifier":
        spans = identifier_spans(answer.source, gold.key)
        return answer.hit_at(claim, spans[0]) if spans else ClaimMatch(claim, False)
    bound = typed_bound(claim, gold_lang)
    for value in answer.values:
        if same_value(gold, value):
            written = _bound(answer.source, value.span[0]) if bound else None
            if written is not None and written != bound:
                continue  # "up to eight years" for "at least eight years": the other bound
            return answer.hit_at(claim, value.span)
    return ClaimMatch(claim, False)


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


@dataclass(frozen=True)
class _ValueClaim:
    """A text claim that states values: its values, the bound on each, its content words
    (their first five letters, value words left out) and its language when it tells."""

    values: tuple[Value, ...]
    bounds: tuple[str | None, ...]
    words: frozenset[str]
    lang: str | None


@functools.lru_cache(maxsize=2048)
def _value_claim(text: str, gold_lang: str | None) -> _ValueClaim | None:
    values = read_values(text, gold_lang)
    if not values:
        return None
    masked = list(text)
    for value in values:
        masked[value.span[0] : value.span[1]] = " " * (value.span[1] - value.span[0])
    words = frozenset(
        word[:5]
        for word in _WORDS.findall(fold("".join(masked)))
        if word not in _FUNCTION_WORDS and word not in _BOUND_WORDS
    )
    from pytest_ragv2.scoring.language import identify_language

    lang = gold_lang or identify_language(text, ("fr", "de", "en"), min_words=3).language
    return _ValueClaim(values, tuple(_bound(text, v.span[0]) for v in values), words, lang)


_BOUND_WORDS = frozenset(
    word for bound in (*_LOWER_BOUNDS, *_UPPER_BOUNDS) for word in bound.split()
)


# a claim text that denies a value ("non, pas 30 jours") names the wrong value, not its own
_DENYING_TEXT = re.compile(r"\b(?:non|pas|not|nicht|kein\w*|never|jamais|nie)\b", re.IGNORECASE)


def _read_by_values(claim: Claim) -> bool:
    """Whether a text claim's values may stand for it: always for a bare text claim; for
    one with ``any_of`` (the author's wordings), only when its text does not deny a value."""
    return not claim.any_of or _DENYING_TEXT.search(claim.text) is None


def _by_values(claim: Claim, answer: _Answer, gold_lang: str | None) -> tuple[int, int] | None:
    """A text claim that states values ("les jours ouvrés de 9 h à 18 h", "tacite
    reconduction pour des périodes successives de 12 mois") found in other words: one
    sentence of the answer holds each of its values in any writing, under no opposite
    bound ("up to 50" is not "more than 50"), with two thirds of its content words — or,
    in an answer of another language than the claim's, by the values alone (all a
    deterministic reader can compare across languages)."""
    read = _value_claim(claim.text, gold_lang)
    if read is None:
        return None
    for start, end in answer.sentences:
        inside = [value for value in answer.values if start <= value.span[0] < end]
        spans = []
        for gold, bound in zip(read.values, read.bounds, strict=True):
            hit = next((value for value in inside if same_value(gold, value)), None)
            if hit is None:
                break
            written = _bound(answer.source, hit.span[0])
            if bound is not None and written is not None and written != bound:
                break
            spans.append(hit.span)
        else:
            have = _words_of(answer.source, start, end) | answer.topic
            shared = len(read.words & have)
            other_language = (
                read.lang is not None
                and answer.lang is not None
                and _primary_lang(answer.lang) != read.lang
            )
            if 3 * shared >= 2 * len(read.words) or other_language:
                return min(span[0] for span in spans), max(span[1] for span in spans)
    return None


# a table row, or a list item ("- Anlauf serienmäßig: Stern/Dreieck")
_ROW = re.compile(r"^[ \t]*(?:\|.*\||[-*•][ \t].*)[ \t]*$", re.MULTILINE)


def _in_a_row(claim: Claim, answer: _Answer) -> tuple[int, int] | None:
    """A required text claim of a few words said in a table row or a list item, its words in
    another order ("| Benutzer | unbegrenzt |" for "unbegrenzte Benutzer"): the row holds
    every content word (first five letters) of the text or of one of its wordings."""
    if claim.kind is not None or claim.pattern or claim.number is not None:
        return None
    if "|" not in answer.source and not _ROW.search(answer.source):
        return None
    phrases = [
        stems
        for phrase in (claim.text, *claim.any_of)
        if 2 <= len(stems := {word[:5] for word in _WORDS.findall(fold(phrase))}) <= 4
    ]
    if not phrases:
        return None
    for row in _ROW.finditer(answer.source):
        have = {word[:5] for word in _WORDS.findall(fold(row.group()))}
        if any(stems <= have for stems in phrases):
            return row.span()
    return None


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


_TABLE_SEPARATOR = re.compile(r"^\s*\|?\s*:?-{3,}")


def _words_of(text: str, start: int, end: int) -> set[str]:
    """The content-word stems of ``text[start:end]``; for a row of a markdown table, with
    its table's header row, which says what each cell is ("| Starter | 89 € | 3 | 5 |"
    under "| Plan | Prix | Utilisateurs inclus | Sources de données |")."""
    words = {word[:5] for word in _WORDS.findall(fold(text[start:end]))}
    if not text[start:end].lstrip().startswith("|"):
        return words
    lines = text[:start].splitlines()
    for index in range(len(lines) - 1, 0, -1):
        if _TABLE_SEPARATOR.match(lines[index]) and lines[index - 1].lstrip().startswith("|"):
            words |= {word[:5] for word in _WORDS.findall(fold(lines[index - 1]))}
            break
        if not lines[index].lstrip().startswith("|"):
            break
    return words


def _primary_lang(lang: str) -> str:
    return re.split(r"[-_]", lang.strip().lower(), maxsplit=1)[0]


def _claim_found(
    claim: Claim,
    answer: _Answer,
    gold_lang: str | None,
    deadline: float | None,
    *,
    by_values: bool = False,
) -> ClaimMatch:
    if claim.kind is not None:
        return _typed_found(claim, answer, gold_lang)
    if claim.pattern:
        match = _pattern_match(claim.pattern, answer.norm.text, deadline)
        if match is not None:
            return answer.hit(claim, "pattern", match.start(), match.end())
    if claim.number is not None:
        value = _decimal(claim.number)
        target = _Target(
            value=value,
            unit=normalise_unit(claim.unit) if claim.unit else None,
            decimals=_decimals_of(value),
            tolerance=_decimal(claim.tolerance) if claim.tolerance is not None else None,
        )
        span = _find_number(answer, target)
        if span is not None:
            return answer.hit(claim, "number", *span)
    for alternative in claim.any_of:
        span = _find_text(answer, alternative, gold_lang)
        if span is not None:
            return answer.hit(claim, "any_of", *span)
    span = _find_text(answer, claim.text, gold_lang)
    if span is not None:
        return answer.hit(claim, "text", *span)
    if by_values and _read_by_values(claim) and (found := _by_values(claim, answer, gold_lang)):
        return answer.hit_at(claim, found)
    if by_values and (found := _in_a_row(claim, answer)):
        return answer.hit_at(claim, found)
    # a forbidden claim is made only as written: a quarter's other label is the answer's
    # writing of a required one ("Q2" for "T2"), not the making of a forbidden one
    needle = normalise(claim.text).text
    if by_values and (quarter := _quarter_label(needle, answer.norm.text)) is not None:
        return answer.hit(claim, "text", *quarter)
    return ClaimMatch(claim, False)


def claim_found(
    claim: Claim,
    answer: str,
    lang: str | None,
    *,
    gold_lang: str | None = None,
    deadline: float | None = None,
) -> ClaimMatch:
    """Is ``claim`` in ``answer`` (written in ``lang``)? Rules in the module docstring (a
    text claim that states values may be found by them, as a required claim is); a pattern
    still matching at ``deadline`` raises :class:`PatternTimedOut`."""
    return _claim_found(claim, _Answer.of(answer, lang), gold_lang, deadline, by_values=True)


@dataclass(frozen=True)
class ClaimsScore:
    """Claim-level outcome of one answer against one expected answer."""

    required_matched: tuple[ClaimMatch, ...]
    required_missed: tuple[Claim, ...]
    optional_matched: tuple[ClaimMatch, ...]
    forbidden_found: tuple[ClaimMatch, ...]

    @property
    def exact_answer(self) -> bool:
        """Every required claim present and no forbidden claim found."""
        return not self.required_missed and not self.forbidden_found

    @property
    def claim_correctness(self) -> float | None:
        """Matched required / (required + forbidden found); None when both are zero."""
        denominator = len(self.required_matched) + len(self.required_missed)
        denominator += len(self.forbidden_found)
        return len(self.required_matched) / denominator if denominator else None

    @property
    def completeness(self) -> float | None:
        """Matched required / required; None without required claims."""
        required = len(self.required_matched) + len(self.required_missed)
        return len(self.required_matched) / required if required else None

    @property
    def high_severity_forbidden(self) -> tuple[ClaimMatch, ...]:
        return tuple(m for m in self.forbidden_found if m.claim.severity == "high")


def score_claims(
    expected: ExpectedAnswer,
    answer: str,
    lang: str | None,
    *,
    gold_lang: str | None = None,
    deadline: float | None = None,
    prompt: str = "",
) -> ClaimsScore:
    """Required, optional and forbidden claims of ``expected`` looked up in ``answer``
    (to ``prompt``, whose subject a sentence of the answer need not repeat).

    A claim pattern still matching at ``deadline`` (``time.monotonic()``; the run's scoring
    budget) raises :class:`PatternTimedOut`."""
    parsed = _Answer.of(answer, lang, prompt)

    def found(claims: list[Claim], by_values: bool) -> list[ClaimMatch]:
        return [
            _claim_found(claim, parsed, gold_lang, deadline, by_values=by_values)
            for claim in claims
        ]

    # a forbidden claim is made only as written: its values alone in a sentence would
    # find it wherever the value is rightly given for something else
    required = found(expected.required_claims, True)
    optional = found(expected.optional_claims, True)
    forbidden = found(expected.forbidden_claims, False)
    return ClaimsScore(
        required_matched=tuple(m for m in required if m.matched),
        required_missed=tuple(m.claim for m in required if not m.matched),
        optional_matched=tuple(m for m in optional if m.matched),
        forbidden_found=tuple(m for m in forbidden if m.matched),
    )


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


_WORDS = re.compile(r"[^\W\d_]{4,}")
_TABLE_ROW = re.compile(r"^[ \t]*\|.*$", re.MULTILINE)
# a role's words: four letters or more, or a short label of letters and digits ("Q4", "T1")
_ROLE_WORDS = re.compile(r"[^\W\d_]{4,}|\b[^\W\d_]\d\b")
_NOTE = re.compile(r"\(([^()]*)\)")


def _row_names_role(
    answer: str, span: tuple[int, int], claim: Claim, asked: frozenset[str]
) -> bool:
    """Whether a forbidden value stands in a table row whose other cells name the role the
    gold gives it ("| Starter | toutes les 24 h |" for "toutes les 24 h (fréquence du plan
    Starter)"): the row states it for that role, not as the answer. The note's words that
    the required claims use too (``asked``: "Liefermenge") name what is asked, no role."""
    row = next((m for m in _TABLE_ROW.finditer(answer) if m.start() <= span[0] < m.end()), None)
    notes = _NOTE.findall(claim.text)
    if row is None or not notes:
        return False
    role = {word[:5] for note in notes for word in _ROLE_WORDS.findall(fold(note))} - asked
    rest = answer[row.start() : span[0]] + answer[span[1] : row.end()]
    return not role.isdisjoint(word[:5] for word in _ROLE_WORDS.findall(fold(rest)))


# words of a note that say what a value is not ("nicht die Zentrale"): no role
_NOT_ROLE = frozenset({"nicht", "keine", "kein", "pas", "non", "sans", "ohne", "without"})


def _sentence_names_role(
    answer: str, span: tuple[int, int], claim: Claim, asked: frozenset[str]
) -> bool:
    """Whether a forbidden value stands in a sentence that gives it the role the gold's
    note says it has ("+33 2 85 52 41 90 ist dagegen die Bereitschaft für P1-Vorfälle von
    Enterprise-Kunden" for "+33 2 85 52 41 90 (Bereitschaftsnummer für P1-Vorfälle von
    Enterprise-Kunden)"): told apart, not offered. In running text, where more is said than
    in a table row, half the note's role words at least, and two."""
    notes = _NOTE.findall(claim.text)
    if not notes:
        return False
    role = {
        word[:5]
        for note in notes
        for word in _ROLE_WORDS.findall(fold(note))
        if word not in _NOT_ROLE
    } - asked
    if len(role) < 2:
        return False
    spans = sentence_spans(answer)
    index = sentence_of(spans, span[0])
    if index is None:
        return False
    start, end = spans[index]
    rest = answer[start : span[0]] + answer[span[1] : end]
    have = {word[:5] for word in _ROLE_WORDS.findall(fold(rest))}
    return 2 * len(role & have) >= len(role)


_DIGIT_TOKENS = re.compile(r"\d+(?:[.,:]\d+)*")


def said_otherwise(claim: Claim, answer: str) -> bool:
    """Whether a missed **text** claim may be in ``answer`` in other words: every number it
    writes is in one sentence of the answer, with at least half of its words (their first
    five letters, accents ignored). A deterministic scorer cannot tell a paraphrase
    ("Statuscode 429" for "HTTP 429", "nur in Zone 1 oder 2" for "nur in Zone 1 oder Zone 2
    zulässig") from a near miss: such a run waits for a reviewer rather than a guess."""
    if claim.kind is not None or claim.pattern or claim.number is not None:
        return False
    text = fold(claim.text)
    digits = set(_DIGIT_TOKENS.findall(text))
    words = {word[:5] for word in _WORDS.findall(text)}
    if not digits and len(words) < 2:
        return False  # one word, missed: nothing else to go by
    for start, end in sentence_spans(answer):
        sentence = fold(answer[start:end])
        if not digits <= set(_DIGIT_TOKENS.findall(sentence)):
            continue
        have = {word[:5] for word in _WORDS.findall(sentence)}
        if not words or 2 * len(words & have) >= len(words):
            return True
    return False


# words that exclude what they stand beside, besides every lexicon's negations
_EXCLUSIONS = frozenset(
    {"ausgeschlossen", "ausgenommen", "ausser", "excluded", "except", "exclu", "exclue"}
    | {"exclus", "exclues", "sauf", "hormis", "interdit", "interdite", "verboten", "forbidden"}
    | {"prohibited", "untersagt", "unzulassig", "unzulaessig", "scheidet", "entfallt"}
    | {"ungeeignet", "unpassend", "unsuitable", "unsuited", "ruled", "inadapte", "inadaptee"}
    # "weder … noch" denies by its first member: "noch" alone is "still" ("noch 8 Tage")
    | {"neither", "nor", "weder"}
    # what is named as superseded ("den alten Abscheider TS-7508-5"); not "replace", which
    # is maintenance as often ("se remplace toutes les 6 000 heures")
    | {"alten", "alte", "alter", "altes", "old", "older", "ancien", "ancienne", "former"}
    | {"formerly", "superseded", "supersedes", "veraltet", "obsolete"}
)
# a clause ends at a sentence's end, a semicolon, a bracket, a comma or a dash; not at a
# colon, which introduces what it qualifies ("Nicht passend: TW-P-24-007 (250 bar)")
_CLAUSE_EDGE = re.compile(r"[.;!?\n(),\u2013\u2014]|\s-\s")


@functools.lru_cache(maxsize=1)
def _denials() -> frozenset[str]:
    from pytest_ragv2.scoring.refusal_lexicon import LEXICONS

    return _EXCLUSIONS.union(*(lexicon.negations for lexicon in LEXICONS.values()))


def denied_at(answer: str, span: tuple[int, int], claim_text: str) -> bool:
    """Whether the clause of ``answer`` holding ``span`` denies what stands there (a
    negation or an exclusion word of any language), for a claim that is no denial itself."""
    denials = _denials()
    if set(_WORDS_ANY.findall(fold(claim_text))) & denials:
        return False
    # within its sentence: a hard-wrapped line goes on with it ("nicht zu verwechseln mit
    # dem Keilriemensatz\nKR 1100 V")
    low, high = next(
        ((a, b) for a, b in sentence_spans(answer) if a <= span[0] < b), (0, len(answer))
    )
    before = [m.end() for m in _CLAUSE_EDGE.finditer(answer, low, span[0]) if m.group() != "\n"]
    start = before[-1] if before else low
    after = next(
        (m for m in _CLAUSE_EDGE.finditer(answer, span[1], high) if m.group() != "\n"), None
    )
    end = after.start() if after else high
    clause = answer[start:end]
    opening = answer.rfind("(", 0, span[0])
    if opening >= 0 and answer.find(")", opening, span[0]) < 0:
        # inside parentheses, which qualify what stands before them: "nicht mit SK-350A
        # (Ziffer 0, Stufe 1-2, 6 000 Bh) verwechseln" denies what the brackets hold too
        outer = [m.end() for m in _CLAUSE_EDGE.finditer(answer, 0, opening)]
        closing = answer.find(")", span[1])
        tail = _CLAUSE_EDGE.search(answer, closing + 1) if closing >= 0 else None
        clause += " " + answer[outer[-1] if outer else 0 : opening]
        if closing >= 0:
            clause += " " + answer[closing + 1 : tail.start() if tail else len(answer)]
    words = set(_WORDS_ANY.findall(_NOT.sub(" not", fold(clause))))
    if any(word.startswith(_LIMIT_VERBS) for word in words):
        return False  # "darf 45 °C nicht überschreiten": a negated limit states a maximum
    return bool(words & denials)


_WORDS_ANY = re.compile(r"[^\W\d_]+")
_NOT = re.compile(r"n't\b")
# verbs whose negation sets a limit at the value rather than denying it
_LIMIT_VERBS = (
    "exceed",
    "surpass",
    "go beyond",
    "depass",
    "exced",
    "uberschreit",
    "ubersteig",
    "uberschritt",
    "ueberschreit",
)
