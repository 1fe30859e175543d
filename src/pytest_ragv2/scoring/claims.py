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
import re
import time
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from typing import Literal

import regex

from pytest_ragv2.gold.schema import CLAIM_PATTERN_FLAGS, Claim, ExpectedAnswer
from pytest_ragv2.scoring.answer_text import fold, sentence_spans
from pytest_ragv2.scoring.claim_bounds import (
    _FUNCTION_WORDS,
    _LOWER_BOUNDS,
    _UPPER_BOUNDS,
    _bound,
    same_value,
    typed_bound,
)
from pytest_ragv2.scoring.claim_denials import (
    _WORDS,
)
from pytest_ragv2.scoring.claim_targets import claim_target
from pytest_ragv2.scoring.normalisation import Normalised, normalise, normalise_pattern
from pytest_ragv2.scoring.numbers import UNIT_DIMENSIONS, Num, normalise_unit, read_numbers
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
