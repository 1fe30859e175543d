"""Is every value, identifier and filename an answer states backed by something it was given?

Pure functions, no I/O. The **facts** of an answer are its typed values, read once by
:func:`pytest_ragv2.scoring.values.read_values` in the prompt's language — the same reading
the claim scorer and the claim-bound grounding compare — and the filenames it mentions:

- numbers as quantity, money, percent or count (except a count from 0 to 10 without
  decimals: "les 3 plans", "2 x", and a negative count, which is a label: "variantes -08,
  -10 et -14"); dates; phone numbers, e-mail addresses, URLs; and
  identifiers (a word joined to a number by a hyphen is an identifier only where the
  reading finds one: "Dynamics-365-Connector" is no identifier, "ISO-27001-Zertifizierung"
  holds ISO 27001);
- the filenames it mentions ("datenblatt-tvs-75.pdf").

A fact is **supported** when the support — the turn's evidence texts and tool results, the
citations' contents, the prompts of the conversation up to this turn, and the earlier turns'
answers, evidence and tool results, each read the same way (without a language: an
ambiguous writing such as "1,689" supports both its readings) — holds it:

- the same canonical value (its key), or the other reading of an ambiguous one;
- a number: a number of the support written without a unit that is the answer's value in
  one of the units of its dimension (a table cell "1 689" under "CA (k€)" backs "1 689 000 €"
  and "1,689 M€"); a rounded writing ("1,7 M€" for "1 689 k€") whose last digit the support's
  value rounds to;
- a date: a support date it contains at a finer granularity ("octobre 2025" is backed by
  "6 octobre 2025"), or a year written as a plain number;
- an identifier: also its letters and digits (separators and case ignored) equal to those of
  one to five consecutive alphanumeric runs of the support joined by single separators, so
  "TVS75" is backed by "TVS 75-10", and "SK-220A" is not backed by "SK-22OA";
- a filename: the same basename (NFC, casefolded) in the support texts, or the filename of
  an evidence item or citation, or its name without extension is such an item's file id.

A number the answer **derives** from values it states and the support backs, and shows how —
the sum or the difference of two or more of them in the same paragraph ("1 240 + 1 378 +
1 456 + 1 689 = 5 763 k€", "Total 2025 : 5 763 k€" after the four quarters) — is supported.
Facts inside the span of a matched required or optional gold claim are supported by the gold
(a computed total such as "5 763 k€" is in no document).
"""

from __future__ import annotations

import bisect
import itertools
import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from decimal import Decimal
from functools import lru_cache
from typing import Literal

from pytest_ragv2.scoring.answer_text import Coverage, marker_spans, mask, overlaps, sentence_spans
from pytest_ragv2.scoring.evidence import normalise_filename
from pytest_ragv2.scoring.grounding_derived import (
    _CONVERSION_FACTORS,
    _PER_YEAR,
    _TERM_AROUND,
    _around,
    _close,
    _energy_power_time,
    _factors,
    _moved_date,
    _product_or_ratio,
    _spelled_out,
    _sum_or_difference,
    _with_previous,
    _written_amount,
)
from pytest_ragv2.scoring.markers import FILENAME
from pytest_ragv2.scoring.numbers import parse_numbers
from pytest_ragv2.scoring.values import Value, read_values

FactKind = Literal["number", "date", "identifier", "filename"]

_RUN = re.compile(r"[^\W_]+")
_RUN_SPLIT = re.compile(r"([^\W_]+)")
_JOINERS = " -_/."
_NUMERIC_KINDS = frozenset({"quantity", "money", "percent", "count"})
_TYPED_IDENTIFIERS = frozenset({"phone", "email", "url"})
_SMALL_COUNT = Decimal(10)
_DERIVED_OPERANDS = 12  # at most this many values of one paragraph are tried as operands
_PARAGRAPH = re.compile(r"\n\s*\n")


@dataclass(frozen=True, slots=True)
class Fact:
    """One checkable fact of an answer and whether the support holds it.

    ``value`` is the typed value read (None for a filename); ``kind`` groups it for the
    scorers: "number" (quantity, money, percent, count), "date", "identifier" (phone,
    e-mail, URL and identifiers; ``type`` says which) or "filename"."""

    kind: FactKind
    text: str
    span: tuple[int, int]
    supported: bool
    value: Value | None = None
    type: str = ""  # phone, email, url, or "" (an identifier of letters and digits)

    @property
    def dimension(self) -> str | None:
        """A number's dimension ("s", "EUR", "%", ...; None for a count), a date's granularity."""
        return self.value.dimension if self.value is not None else None

    @property
    def amount(self) -> Decimal | None:
        """A number's value in its dimension's base unit."""
        return self.value.amount if self.value is not None else None


@dataclass(frozen=True, slots=True)
class Support:
    """What one text can back (:func:`text_support`), or several texts' (:meth:`merge`)."""

    keys: frozenset[str]  # every value's key, an ambiguous one's other reading too
    plain: frozenset[Decimal]  # every number as written, whatever its unit
    amounts: tuple[tuple[str | None, Decimal], ...]  # (dimension, amount) for rounding
    identifiers: frozenset[str]  # letters and digits of 1-5 joined alphanumeric runs
    filenames: frozenset[str]

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


def identifier_key(token: str) -> str:
    """Letters and digits only, NFKC, casefolded: the form identifiers are compared in."""
    return "".join(_RUN.findall(unicodedata.normalize("NFKC", token).casefold()))


_COARSER = {"day": ("month", "quarter", "half", "year"), "month": ("quarter", "half", "year")}
_COARSER["quarter"] = ("half", "year")
_COARSER["half"] = ("year",)


def date_keys(value: Value) -> tuple[str, ...]:
    """A date's key and the keys of every coarser period holding it ("2025-10-06" is in
    2025-10, 2025-Q4, 2025-H2 and 2025)."""
    key = value.key
    parts = key.split(":", 2)
    if len(parts) != 3 or value.dimension not in _COARSER:
        return (key,)
    found = re.match(r"(\d{4})-(?:Q(\d)|H(\d)|(\d{2}))", parts[2])
    if found is None:
        return (key,)
    year = found.group(1)
    if found.group(4):
        month = int(found.group(4))
        quarter, half = (month - 1) // 3 + 1, 1 if month <= 6 else 2
    elif found.group(2):
        quarter = int(found.group(2))
        half = 1 if quarter <= 2 else 2
        month = 0
    else:
        quarter, half, month = 0, int(found.group(3)), 0
    coarser = {
        "month": f"date:month:{year}-{month:02d}" if month else None,
        "quarter": f"date:quarter:{year}-Q{quarter}" if quarter else None,
        "half": f"date:half:{year}-H{half}",
        "year": f"date:year:{year}",
    }
    return (key, *(k for name in _COARSER[value.dimension] if (k := coarser[name])))


@lru_cache(maxsize=4096)
def text_support(text: str) -> Support:
    """The support one text gives (cached: the same evidence is scored over many runs)."""
    keys: set[str] = set()
    amounts: list[tuple[str | None, Decimal]] = []
    for value in read_values(text, None):
        keys.update(date_keys(value) if value.kind == "date" else (value.key,))
        if value.alternative is not None:
            keys.add(value.alternative)
        if value.kind in _NUMERIC_KINDS and value.amount is not None:
            amounts.append((value.dimension, value.amount))
    # every number as written, a bare decimal ("0,92") and a table cell under a unit too
    plain = frozenset(Decimal(repr(number.value)) for number in parse_numbers(text, None))
    filenames = frozenset(normalise_filename(m.group()) for m in FILENAME.finditer(text))
    return Support(frozenset(keys), plain, tuple(amounts), _joined_runs(text), filenames)


def _joined_runs(text: str) -> frozenset[str]:
    """The letters and digits of every alphanumeric run of ``text`` and of each run with up
    to four following ones joined by single separators (NFKC, casefolded)."""
    norm = unicodedata.normalize("NFKC", text).casefold()
    # [gap, run, gap, run, ..., gap]
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
    return frozenset(identifiers)


@dataclass(frozen=True, slots=True)
class CorpusNames:
    """The identifiers and filenames of the documents the systems index.

    An answer may name a real reference its passages do not hold ("policy HR-07" from the
    policy's preamble when the passage is its section 4): that is no invention, and the
    rubric's Grounding asks that nothing be asserted beyond the corpus, not beyond the
    passages. Only identifiers and filenames are looked up here — a number or a date found
    somewhere in the corpus says nothing of whether it answers this question."""

    identifiers: frozenset[str] = frozenset()  # letters and digits, holding a digit
    filenames: frozenset[str] = frozenset()  # normalised names, and names without extension

    @classmethod
    def of(cls, documents: Iterable[tuple[str, str]]) -> CorpusNames:
        """The names of ``documents``, each a (filename, text) pair."""
        identifiers: set[str] = set()
        filenames: set[str] = set()
        for filename, text in documents:
            for name in (filename, *(m.group() for m in FILENAME.finditer(text))):
                normal = normalise_filename(name)
                filenames.update((normal, normal.rsplit(".", 1)[0]))
            identifiers.update(
                key
                for key in _joined_runs(f"{filename}\n{text}")
                if any(char.isdigit() for char in key)
            )
        return cls(frozenset(identifiers), frozenset(filenames))

    def holds(self, fact: Fact) -> bool:
        """Whether ``fact`` is an identifier or a filename the corpus holds."""
        if fact.kind == "filename":
            name = normalise_filename(fact.text)
            return name in self.filenames or name.rsplit(".", 1)[0] in self.filenames
        if fact.kind == "identifier" and not fact.type and fact.value is not None:
            return identifier_key(fact.value.text) in self.identifiers
        return False


def _number_supported(value: Value, parts: Sequence[Support]) -> bool:
    amount = value.amount
    if amount is None:
        return False
    in_units = [amount / factor for factor in _factors(value)]
    if any(written in part.plain for part in parts for written in in_units):
        return True
    step = value.precision
    if step is None or step <= 0:
        return False
    # a rounded writing: the support's value rounds to the answer's last digit
    half = step / 2
    for part in parts:
        for dimension, have in part.amounts:
            if dimension == value.dimension and abs(have - amount) <= half:
                return True
        for written in part.plain:
            for factor in _factors(value):
                if abs(written * factor - amount) <= half and written * factor != amount:
                    return True
    return False


def fact_supported(fact: Fact, support: Support | Supports) -> bool:
    """Whether ``support`` backs ``fact`` (the rules of the module docstring)."""
    parts = support.parts
    if fact.kind == "filename":
        name = normalise_filename(fact.text)
        return support.holds_filename(name) or support.holds_filename(name.rsplit(".", 1)[0])
    value = fact.value
    if value is None:
        return False
    keys: tuple[str, ...] = (
        (value.key,) if value.alternative is None else (value.key, value.alternative)
    )
    keys += _workdays_key(value)
    if any(key in part.keys for part in parts for key in keys):
        return True
    if value.kind in _NUMERIC_KINDS:
        return _number_supported(value, parts)
    if value.kind == "date":
        return _period_supported(value, parts)
    if value.kind == "identifier":
        key = identifier_key(value.text)
        return any(key in part.identifiers for part in parts)
    return False


def _workdays_key(value: Value) -> tuple[str, ...]:
    """Whole days said without their kind ("vos huit jours") are backed by as many working
    days ("huit jours ouvrés"): the answer shortens the source's writing."""
    day = Decimal(86400)
    if value.dimension != "s" or value.amount is None or value.amount % day:
        return ()
    return (f"quantity:workdays:{_plain_number(value.amount / day)}",)


def _plain_number(amount: Decimal) -> str:
    return format(amount.normalize(), "f")


_PERIOD = re.compile(r"date:(year|half|quarter|month):(\d{4})(?:-(?:H|Q)?(\d+))?")


def _period_supported(value: Value, parts: Sequence[Support]) -> bool:
    """A year, half-year, quarter or month whose parts the support writes apart: the year
    as a number, and the quarter's ("T4", "Q4"), the half-year's ("H2", "S2") or the
    month's label ("octobre", "10") — a sheet "CA 2025" with a row "T4" backs "T4 2025"."""
    found = _PERIOD.fullmatch(value.key)
    if found is None:
        return False
    granularity, year, number = found.group(1), Decimal(found.group(2)), found.group(3)
    if not any(year in part.plain for part in parts):
        return False
    if granularity == "year":
        return True
    labels = _period_labels(granularity, int(number))
    return any(label in part.identifiers for part in parts for label in labels)


@lru_cache(maxsize=64)
def _period_labels(granularity: str, number: int) -> frozenset[str]:
    if granularity == "quarter":
        return frozenset({f"t{number}", f"q{number}", f"{number}q"})
    if granularity == "half":
        return frozenset({f"h{number}", f"s{number}"})
    from pytest_ragv2.scoring.values import month_names

    return frozenset(name for name, month in month_names().items() if month == number)


def _fact_of(value: Value) -> Fact | None:
    if value.implicit:
        return None  # "jeden Monat": no figure stated
    if value.kind in _NUMERIC_KINDS:
        small = (
            value.kind == "count"
            and value.amount is not None
            and Decimal(0) <= value.amount <= _SMALL_COUNT
            and value.amount == value.amount.to_integral_value()
            and not any(char in value.text for char in ".,")
        )
        # a count is never negative: "-08, -10 et -14" after a model name are its variants'
        # suffixes, a label, not figures
        label = value.kind == "count" and value.amount is not None and value.amount < 0
        return None if small or label else Fact("number", value.text, value.span, False, value)
    if value.kind in ("date", "time"):  # a time of day is checked as a date is
        return Fact("date", value.text, value.span, False, value)
    if value.kind in _TYPED_IDENTIFIERS:
        return Fact("identifier", value.text, value.span, False, value, type=value.kind)
    return Fact("identifier", value.text, value.span, False, value)


def answer_facts(
    answer: str,
    lang: str | None,
    support: Support | Supports,
    *,
    markers: Sequence[str] = (),
    gold_spans: Sequence[tuple[int, int]] = (),
    prompt: str = "",
) -> list[Fact]:
    """Every fact of ``answer`` with whether ``support`` (or a gold claim span) backs it;
    the numbers of ``prompt`` (the question) are terms a derived value may use too."""
    hidden = marker_spans(answer, markers)
    masked = mask(answer, hidden)
    facts: list[Fact] = []
    names: list[tuple[int, int]] = []
    covered = Coverage(len(answer), hidden)
    for match in FILENAME.finditer(masked):
        if covered.overlaps(match.span()):
            continue
        fact = Fact("filename", match.group(), match.span(), False)
        supported = fact_supported(fact, support) or overlaps(match.span(), gold_spans)
        facts.append(replace(fact, supported=supported))
        names.append(match.span())
    for value in read_values(masked, lang):
        if any(value.span[0] < end and start < value.span[1] for start, end in names):
            continue
        found = _fact_of(value)
        if found is None:
            continue
        if fact_supported(found, support) or overlaps(found.span, gold_spans):
            found = replace(found, supported=True)
        facts.append(found)
    facts.sort(key=lambda fact: fact.span)
    asked = [
        value
        for value in read_values(prompt, lang)[: 4 * _DERIVED_OPERANDS]
        if value.kind in _NUMERIC_KINDS and value.amount is not None
    ]
    return _derived(answer, facts, asked)


_FACTOR_SIGN = re.compile(r"[×x*] ?$")  # "× 12"
_FACTOR_SIGN_AFTER = re.compile(r" ?[×x*]")  # "12 ×"


def _derived(answer: str, facts: list[Fact], asked: Sequence[Value] = ()) -> list[Fact]:
    """Each unsupported number or date the answer derives from supported values it states
    and shows how, marked supported: a sum or difference of numbers of its paragraph; a
    product, quotient or percentage change of two numbers of its sentence; a power from an
    energy and a time of its paragraph (or an energy from a power and a time); a date that
    is a supported date moved by a supported duration of its sentence (an end date)."""
    if not any(f.kind in ("number", "date") and not f.supported for f in facts):
        return facts
    paragraphs = [0, *(m.end() for m in _PARAGRAPH.finditer(answer)), len(answer) + 1]
    # sentences as the answer's reader splits them: not after "i.e." or "z. B."
    sentences = sentence_spans(answer)
    # the sentences that speak of a yearly figure, read once (a sentence may hold thousands
    # of numbers: each looking it up again would cost the square of its length)
    yearly = {(low, high) for low, high in sentences if _PER_YEAR.search(answer, low, high)}
    result = list(facts)
    multipliers = [
        fact.value
        for fact in facts
        if not fact.supported
        and fact.value is not None
        and fact.value.kind == "count"
        and (
            _FACTOR_SIGN.search(answer, max(0, fact.span[0] - 3), fact.span[0])
            or _FACTOR_SIGN_AFTER.match(answer, fact.span[1])
        )
    ][: 4 * _DERIVED_OPERANDS]
    # what the answer states that is backed, sorted by place: each unsupported fact looks
    # only at those of its sentence or paragraph, found by halving (an answer of thousands
    # of numbers stays linear)
    supported = sorted(
        (f.value for f in facts if f.supported and f.value is not None),
        key=lambda value: value.span,
    )
    numbers = [v for v in supported if v.kind in _NUMERIC_KINDS and v.amount is not None]
    number_starts = [v.span[0] for v in numbers]
    supported_starts = [v.span[0] for v in supported]
    sentence_starts = [low for low, _ in sentences]
    # a yearly figure is twelve times one of the first amounts the answer gives
    monthly = numbers[: 4 * _DERIVED_OPERANDS]
    for index, fact in enumerate(facts):
        if fact.supported or fact.value is None or fact.kind not in ("number", "date"):
            continue
        if fact.value in multipliers and fact.value.amount in _CONVERSION_FACTORS:
            # "× 12" months, "× 52" weeks: a factor of the calendar, known without a source
            result[index] = replace(fact, supported=True)
            continue
        paragraph = _around(paragraphs, fact.span[0])
        at = bisect.bisect_right(sentence_starts, fact.span[0]) - 1
        sentence = (
            sentences[at]
            if at >= 0 and fact.span[0] < sentences[at][1]
            else (fact.span[0], fact.span[1])
        )

        def within(value: Value, bounds: tuple[int, int]) -> bool:
            return bounds[0] <= value.span[0] < bounds[1]

        if fact.kind == "date":
            dates = [v for v in _among(supported, supported_starts, sentence) if v.kind == "date"]
            derived = _moved_date(
                fact.value,
                dates,
                [
                    v
                    for v in _among(numbers, number_starts, sentence)
                    if v.dimension in ("s", "months")
                ],
            ) or _spelled_out(answer, fact.value, dates)
        else:
            derived = (
                _sum_or_difference(
                    fact.value,
                    list(
                        itertools.islice(
                            (
                                v
                                # its paragraph and the one before ("- Q1: 96 k€ …\n- Q4:
                                # 115 k€ …\n\nSo hosting rose by 19 k€")
                                for v in _among(
                                    numbers, number_starts, _with_previous(paragraphs, paragraph)
                                )
                                if v.dimension in (fact.dimension, None)
                            ),
                            _DERIVED_OPERANDS,
                        )
                    )
                    # the question's own figures ("three working days' notice": two too few)
                    + [v for v in asked if v.dimension == fact.dimension][:_DERIVED_OPERANDS],
                )
                or _product_or_ratio(
                    fact.value,
                    # a percentage may relate numbers of its paragraph (a table's rows: "| ARR
                    # 2025 | 6,2 Mio. € |" ... "| Zuwachs | 2,3 Mio. € (≈ 37 %) |")
                    list(
                        _among(
                            numbers,
                            number_starts,
                            paragraph if fact.value.kind == "percent" else sentence,
                        )[: 2 * _DERIVED_OPERANDS]
                    )
                    # a count written as a factor multiplies whether or not a source writes it
                    # ("12 × 290 €"); a few at most, so an answer of numbers stays linear
                    + [v for v in multipliers if v is not fact.value and within(v, sentence)][
                        :_DERIVED_OPERANDS
                    ],
                )
            )
        if not derived and fact.kind == "number" and sentence in yearly:
            # a yearly figure from a monthly one the answer gives anywhere ("290 € ... it
            # would be 3,480 € per year")
            derived = any(
                v.dimension == fact.dimension and _close(v.amount * 12, fact.value)
                for v in monthly
                if v.amount is not None
            )
        if not derived and fact.kind == "number":
            derived = _energy_power_time(
                fact.value, _among(numbers, number_starts, paragraph)[: 2 * _DERIVED_OPERANDS]
            )
        if (
            not derived
            and fact.value.kind == "count"
            and fact.value.amount is not None
            and _TERM_AROUND.search(answer[max(0, fact.span[0] - 3) : fact.span[1] + 3])
        ):
            # the answer's own figure said again without its unit, as a term of its
            # computation ("11.5 hours = 690 minutes → 690 ÷ 5 = 138")
            derived = any(
                _written_amount(other) == fact.value.amount
                for other in _among(numbers, number_starts, paragraph)[: 4 * _DERIVED_OPERANDS]
                if other.dimension is not None
            )
        if derived:
            result[index] = replace(fact, supported=True)
    return result


def _among(
    values: Sequence[Value], starts: Sequence[int], bounds: tuple[int, int]
) -> Sequence[Value]:
    """The values (sorted by place, ``starts`` their first characters) that begin within
    ``bounds``, found by halving."""
    return values[bisect.bisect_left(starts, bounds[0]) : bisect.bisect_left(starts, bounds[1])]
