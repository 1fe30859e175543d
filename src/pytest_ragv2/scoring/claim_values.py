"""Claim-bound grounding: a value stated for a required claim must be the gold value.

Pure functions, no I/O. Grounding by value (:mod:`pytest_ragv2.scoring.grounding`) accepts
a value that occurs anywhere in the support, whatever it stands for there: an answer giving
another plan's availability target ("99,5 %" where the gold is "99,7 %") is grounded, since
the sources hold 99,5 % too. This module binds an answer's values to the claims they
answer, by the one reading of :mod:`pytest_ragv2.scoring.values`:

A value of the answer **contradicts** a required claim when

- the claim was **missed** (the answer does not state the gold value),
- the claim asks for a value (:func:`pytest_ragv2.scoring.claim_targets.claim_target`: a
  typed claim of any kind, or an untyped one with ``number`` and ``unit``), and the answer's
  value is of the same kind — a number of the same dimension (``%`` for ``%``; ``h``,
  ``min``, ``days`` for a duration; ``€``, ``k€`` for an amount; a count for a typed count
  claim), a date for a date claim, an identifier, phone number, e-mail address or URL for
  such a claim —,
- it differs from the gold value (a number beyond the claim's ``tolerance``; a date that is
  not the gold date nor a coarser period holding it: "novembre 2025" against "6 octobre
  2025", "Q2 2026" against "T1 2026", "5 March 2026" against "March 2026"), and is not the
  value of another required or optional claim of the turn (a second figure of the same
  kind the gold asks for), and
- it is not inside the span of a matched gold claim, nor denied in its own clause ("Non,
  ce n'est pas 30 jours : …"), nor a plain year given where a count is asked, and
- when the claim's text has content words (words of four letters or more that are no unit
  or stop word, compared by their first five letters, accents ignored: "réclamé sous 30
  jours" has "recla"), the value's sentence holds one of them: "un préavis de 90 jours" is
  another fact, not the claim period of "réclamé sous 30 jours"; a claim written as a bare
  value ("99,7 %", as a typed claim is by default) binds any value of its kind, and
- the answer states no more such values than it misses claims of that kind: an answer
  that quotes a whole table or compares several variants ("8 bar, 10 bar, 13 bar") gives
  context, not its value for the claim. The question's own value given back as the answer
  is bound like any other.

Such a value is unsupported for the claim even when the sources hold it elsewhere; it
counts as a fabrication, fails Accuracy, and trips ``unsupported_high_severity_number``
when the claim is high severity. An untyped claim without a unit ("33 nouveaux clients")
binds no number: a unitless count cannot be told from the other counts of an answer unless
the gold says it is a count (``kind: count``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from decimal import Decimal

from pytest_ragv2.gold.schema import Claim, ExpectedAnswer
from pytest_ragv2.scoring.answer_text import fold, sentence_of, sentence_spans
from pytest_ragv2.scoring.claim_bounds import same_value, unsigned_difference
from pytest_ragv2.scoring.claim_denials import denied_at
from pytest_ragv2.scoring.claim_targets import Target, claim_target
from pytest_ragv2.scoring.claims import ClaimMatch
from pytest_ragv2.scoring.grounding import Fact, date_keys
from pytest_ragv2.scoring.numbers import unit_scale
from pytest_ragv2.scoring.values import Value, identifier_spans, read_values

_STOPWORDS = frozenset(
    {"avec", "dans", "pour", "sous", "plus", "moins", "entre", "chaque", "mois", "jours"}
    | {"heures", "mit", "bei", "nach", "oder", "und", "eine", "einer", "einem", "einen"}
    | {"with", "from", "than", "that", "this", "each", "within", "über", "uber", "pro"}
    # words of an interval ("alle 2 000 Bh", "every 2,000 h", "tous les 2 000 h"): the form
    # of a value, not what it is about
    | {"alle", "jede", "jeden", "jedes", "every", "tous", "toutes"}
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


def _binds(target: Target) -> bool:
    """Whether a missed claim with ``target`` binds the answer's values of its kind: every
    typed claim, and an untyped one with a unit."""
    return target.key is not None or target.dimension is not None


def _year_for_a_count(value: Value, target: Target) -> bool:
    """A plain four-digit year ("CA 2025", "in 2019") is no count of what a count claim
    counts, unless the gold count is itself a year."""
    if value.kind != "count" or value.amount is None or not 1900 <= value.amount <= 2100:
        return False
    return target.amount is None or not 1900 <= target.amount <= 2100


def _alike(target: Target, other: Target) -> bool:
    """Whether two claims ask for values of one kind (two durations, two amounts, ...)."""
    if other.value is not None:
        return target.same_class(other.value)
    return other.of == target.of and other.dimension == target.dimension


def _is(target: Target, value: Value) -> bool:
    """Whether ``value`` is the target's value (or, for a date, consistent with it)."""
    if target.of == "number":
        if target.amount is None or value.amount is None:
            return False
        amount = value.amount
        if target.value is not None and unsigned_difference(target.value, value):
            amount = -amount  # a difference in points is a magnitude
        return abs(amount - target.amount) <= target.tolerance
    if target.of == "date" and target.value is not None and target.value.kind == "date":
        # the gold date, or a coarser period holding it (less said, nothing wrong); a finer
        # date inside the gold period says more than the sources do for the claim
        return value.key in date_keys(target.value)
    return value.key == target.key


def contradicted_values(
    answer: str,
    facts: Sequence[Fact],
    expected: ExpectedAnswer,
    missed: Sequence[Claim],
    gold_spans: Sequence[tuple[int, int]] = (),
    gold_lang: str | None = None,
    prompt: str = "",
) -> list[tuple[Fact, Claim]]:
    """Each value of ``facts`` that contradicts a missed required claim, with the claim
    (rules in the module docstring), paired in the order they are written. ``prompt``: the
    question, whose own figure given back as the answer is bound even when the claim's
    computation uses it ("il reste 8 jours" for 20 − 8 = 12)."""
    bound = [
        (claim, target)
        for claim in missed
        if (target := claim_target(claim, gold_lang)) is not None and _binds(target)
    ]
    if not bound:
        return []
    golden = [
        target
        for claim in (*expected.required_claims, *expected.optional_claims)
        if (target := claim_target(claim, gold_lang)) is not None
    ]
    candidates = [
        fact
        for fact in facts
        if fact.value is not None
        and fact.kind != "filename"
        and not any(fact.span[0] < end and start < fact.span[1] for start, end in gold_spans)
    ]
    spans = sentence_spans(answer)
    found: list[tuple[Fact, Claim]] = []
    taken: set[tuple[int, int]] = set()
    for claim, target in bound:
        # a typed claim named by its value alone ("6 octobre 2025", "5 000 requêtes") binds
        # by its kind: the value's own words are its writing, not the fact's subject
        words = frozenset() if claim.value == claim.text else content_words(claim.text)
        values = [
            fact
            for fact in candidates
            if fact.value is not None
            and target.same_class(fact.value)
            and not _year_for_a_count(fact.value, target)
            and not denied_at(answer, fact.span, claim.text)
            and not any(gold.same_class(fact.value) and _is(gold, fact.value) for gold in golden)
            # an input of the claim's own computation ("écart (412 − 268)"), unless it is the
            # question's figure given back alone as the result
            and not (_input_of(claim, fact.value) and not _given_back(answer, fact, prompt))
            and (not words or words & content_words(_sentence(answer, spans, fact.span)))
        ]
        missed_here = sum(1 for _, other in bound if _alike(target, other))
        # more values of the kind than claims missed: a quoted table or a comparison, not
        # the answer's value for the claim
        if len(values) > missed_here:
            continue
        for fact in values:
            if fact.span not in taken:
                taken.add(fact.span)
                found.append((fact, claim))
    found.sort(key=lambda pair: pair[0].span)
    return found


def offered_in_place(
    facts: Sequence[Fact],
    offered: Sequence[ClaimMatch],
    missed: Sequence[Claim],
    gold_lang: str | None = None,
) -> list[tuple[Fact, Claim]]:
    """Each value the answer gives where a missed required claim asks for one, that is a
    forbidden (tempting) value of the same kind: the tempting wrong answer, bound to the
    claim it replaces (so a high-severity claim's veto holds it, even when the value is
    another row's, another plan's or another document's). An untyped forbidden claim
    ("8 jours ouvrés restants (le nombre de la question)", a pattern) offers the values of
    the missed claims' kinds that its match holds."""
    wanted = [
        (claim, target)
        for claim in missed
        if (target := claim_target(claim, gold_lang)) is not None and _binds(target)
    ]
    if not wanted:
        return []
    found: list[tuple[Fact, Claim]] = []
    for match in offered:
        span = match.span
        if span is None:
            continue
        inside = [
            f for f in facts if f.value is not None and f.span[0] < span[1] and span[0] < f.span[1]
        ]
        tempting = claim_target(match.claim, gold_lang) if match.claim.kind else None
        if tempting is not None and tempting.value is not None:
            claim = _replaced(wanted, tempting.value)
            if claim is not None and inside:
                found.append((inside[0], claim))
            continue
        if match.claim.kind is not None:
            continue
        for fact in inside:
            assert fact.value is not None
            claim = _replaced(wanted, fact.value)
            if claim is not None:
                found.append((fact, claim))
    return found


def _replaced(wanted: Sequence[tuple[Claim, Target]], tempting: Value) -> Claim | None:
    """The missed claim a tempting value stands in for: of those of its kind, a high-severity
    one first (a gold author's tempting values are near misses of the key facts), and among
    them the one whose gold amount is nearest to it ("1 035 €" for the total of 1 070 €, not
    for the 420 € of one allowance); else the first."""
    alike = [(claim, target) for claim, target in wanted if target.same_class(tempting)]
    if not alike:
        return None
    amount = tempting.amount

    def rank(pair: tuple[Claim, Target]) -> tuple[bool, Decimal]:
        claim, target = pair
        gold = target.amount
        if gold is None or amount is None:
            return (claim.severity != "high", Decimal(0))
        return (
            claim.severity != "high",
            abs(gold - amount) / max(abs(gold), abs(amount), Decimal(1)),
        )

    return min(alike, key=rank)[0]


# a clause: a sentence (a table row is one) cut at commas, semicolons and dashes ("Business:
# 5 000 Anfragen/Minute, Enterprise: 1 000 Anfragen/Minute" has two)
_CLAUSE_CUT = re.compile(r"[,;]|\s[-\u2013\u2014]\s")


def named_identifiers(text: str) -> frozenset[str]:
    """The identifiers ``text`` names, as subject words ("TVK 110-08" of "TVK 110-08:
    Liefermenge 1,45 m³/min"): a model, part or project a value is about."""
    return frozenset(value.key for value in read_values(text, None) if value.kind == "identifier")


def _clause(answer: str, span: tuple[int, int], fences: Sequence[tuple[int, int]] = ()) -> str:
    """The clause of ``answer`` holding ``span``: its sentence (a table row is one) cut at
    commas, semicolons and dashes, and at the values of ``fences`` around it (the other
    values of its kind: "6.9 hours under full load and 4.6 hours below it (60 % of an
    11.5-hour charge)" gives 11.5 hours only "below it (60 % of an ... charge)")."""
    low, high = next(
        ((a, b) for a, b in sentence_spans(answer) if a <= span[0] < b), (0, len(answer))
    )
    start = max((m.end() for m in _CLAUSE_CUT.finditer(answer, low, span[0])), default=low)
    after = _CLAUSE_CUT.search(answer, span[1], high)
    end = after.start() if after else high
    start = max([start, *(b for a, b in fences if b <= span[0])])
    end = min([end, *(a for a, b in fences if a >= span[1])])
    return answer[start:end]


# what announces the result of a computation: "=", or its words ("adds up to", "ergibt";
# not "soit", which restates as often: "soit 290 € par entité"), read in a short window
# before the value
_RESULT_BEFORE = re.compile(
    r"(?:=|\b(?:adds? up to|comes? to|amounts? to|sums? to|in total|totals?|au total"
    r"|ce qui fait|ergibt|ergeben|insgesamt))\s*\**\s*$"
)


_OPERATOR_NEAR = re.compile(r"[-+=×x*/\u2212\u2013]")


def _combines(gold: Value, others: Sequence[Value]) -> bool:
    """Whether ``gold`` is the sum or the difference of two of ``others`` of its kind ("4,4
    m³/min de plus" beside 9,8 and 5,4 m³/min)."""
    if gold.amount is None:
        return False
    amounts = [
        v.amount
        for v in others[:_COMBINED_MAX]
        if v.amount is not None and v.kind == gold.kind and v.dimension == gold.dimension
    ]
    return any(
        abs(a + b) == abs(gold.amount) or abs(a - b) == abs(gold.amount)
        for i, a in enumerate(amounts)
        for b in amounts[i + 1 :]
    )


_COMBINED_MAX = 24  # the gold values tried as terms: a few claims' worth, so it stays cheap
# what a claim that is a difference or a total says ("4,4 m³/min de plus que", "in total")
_COMBINATION_WORDS = re.compile(
    r"\b(?:de plus|de moins|plus que|moins que|ecart|difference|more than|less than|in total"
    r"|total|sum|gap|mehr als|weniger als|unterschied|differenz|insgesamt|summe|gesamt|au total)\b"
)


def _stated_in(claim: Claim, value: Value) -> list[Value]:
    """The values of ``claim``'s text that are ``value``, by value or by the digits written
    ("412" in "(412 − 268)" for "412 kg")."""
    digits = re.sub(r"\D", "", value.text)
    return [
        mine
        for mine in read_values(claim.text, None)
        if same_value(value, mine) or (digits and re.sub(r"\D", "", mine.text) == digits)
    ]


def _input_of(claim: Claim, value: Value) -> bool:
    """Whether ``claim``'s text uses ``value`` as a term of a computation it shows ("écart
    de poids (412 − 268)", "1 950 € × 1,03"), not as a premise it denies ("la prémisse de
    30 jours est fausse")."""
    text = claim.text
    return any(
        _OPERATOR_NEAR.search(text[max(0, mine.span[0] - 3) : mine.span[0]])
        or _OPERATOR_NEAR.search(text[mine.span[1] : mine.span[1] + 3])
        for mine in _stated_in(claim, value)
    )


def _given_back(answer: str, fact: Fact, prompt: str) -> bool:
    """Whether ``fact`` is the question's own figure, stated alone: no operator beside it in
    the answer (where it is a term of a computation shown, it is an input)."""
    if not prompt or fact.value is None:
        return False
    if _OPERATOR_NEAR.search(answer[max(0, fact.span[0] - 3) : fact.span[0]]) or (
        _OPERATOR_NEAR.search(answer[fact.span[1] : fact.span[1] + 3])
    ):
        return False
    return any(same_value(fact.value, asked) for asked in read_values(prompt, None))


def _relates(claim: Claim, value: Value) -> bool:
    """Whether ``claim``'s text states ``value`` too: a claim relating two values."""
    return bool(_stated_in(claim, value))


def swapped_values(
    answer: str,
    matched: Sequence[ClaimMatch],
    gold_lang: str | None = None,
    missed: Sequence[Claim] = (),
    lang: str | None = None,
) -> list[tuple[ClaimMatch, Claim]]:
    """Each matched typed claim whose value the answer gives for what another claim of its
    kind is about: the value's clause names the other claim's subject and not its own
    ("Business: 5 000 Anfragen/Minute, Enterprise: 1 000" for Business 1 000 and Enterprise
    5 000; "up to 15 working days a year, approved 20 working days in advance"; "the valve
    is set to 14 bar" where 14 bar is the maximum pressure and the valve's setting, missed,
    is 15.5 bar). A claim's subject is the content words of its text that are not its
    value's nor the other claim's; a claim whose text is its bare value has none and is
    never paired. A value the answer also gives, elsewhere, in a clause naming its own
    subject ("soit 290 € par entité … au prix catalogue (290 €)"), or gives as the result
    of a computation ("790 + 115 + … = 1 260 k€": the sum of the terms its clause names), is
    not swapped. Returned with the claim (matched or ``missed``) the value was given for."""

    def subject(claim: Claim, target: Target) -> frozenset[str]:
        assert target.value is not None
        own = named_identifiers(target.value.text)
        return (content_words(claim.text) - content_words(target.value.text)) | (
            named_identifiers(claim.text) - own
        )

    typed = [
        (match, target, subject(match.claim, target))
        for match in matched
        if match.claim.kind is not None
        and match.span is not None
        and (target := claim_target(match.claim, gold_lang)) is not None
        and target.value is not None
    ]
    candidates = [(match.claim, target, words) for match, target, words in typed] + [
        (claim, target, subject(claim, target))
        for claim in missed
        if claim.kind is not None
        and (target := claim_target(claim, gold_lang)) is not None
        and target.value is not None
    ]
    found = []
    written = read_values(answer, lang) if typed else ()
    for match, target, words in typed:
        assert match.span is not None
        assert target.value is not None
        before = max(0, match.span[0] - 16)  # a window: each value looks only just behind it
        if _RESULT_BEFORE.search(answer, before, match.span[0]) or _OPERATOR_NEAR.match(
            answer[match.span[1] : match.span[1] + 3].strip()
        ):
            continue  # the result of a computation shown, or a term of one ("€290 − 10 %")
        gold = target.value
        elsewhere = [v.span for v in written if v.span != match.span and same_value(gold, v)]
        if any(words & content_words(_clause(answer, span)) for span in elsewhere):
            continue
        if _COMBINATION_WORDS.search(fold(match.claim.text)) and _combines(
            gold, [t.value for m, t, _ in typed if m is not match and t.value]
        ):
            # a claim that is a difference or a total, whose value is the difference or sum
            # of two stated gold values: a result, not a swap
            continue
        fences = [v.span for v in written if v.span != match.span and target.same_class(v)]
        clause = _clause(answer, match.span, fences)
        # an identifier of a subject is found in the clause whatever its separators ("WS 75 4")
        have = content_words(clause) | {
            key
            for _, _, subject_words in candidates
            for key in subject_words
            if key.startswith("identifier:") and identifier_spans(clause, key)
        }
        for other, other_target, other_words in candidates:
            if other is match.claim or other_target.value is None:
                continue
            if not target.same_class(other_target.value):
                continue
            if _relates(match.claim, other_target.value) or _relates(other, gold):
                continue  # "rated 30 Nm³/h, so 90 Nm³/h is three times that": one fact of both
            if _COMBINATION_WORDS.search(fold(other.text)) and _combines(
                other_target.value, [t.value for _, t, _ in typed if t.value]
            ):
                continue  # a term is not given for the difference or total it makes
            own, theirs = words - other_words, other_words - words
            if own and theirs and not (own & have) and (theirs & have):
                found.append((match, other))
                break
            # a count names what it counts right after it ("20 utilisateurs et 25 sources"
            # for 25 users and 20 sources): there the other claim's subject, not its own
            counted = _counted_after(answer, match.span) if gold.kind == "count" else None
            if counted is not None and counted in theirs and counted not in own:
                found.append((match, other))
                break
    return found


_COUNTED = re.compile(r"[\s\u00a0]*([^\W\d_]{4,})")


def _counted_after(answer: str, span: tuple[int, int]) -> str | None:
    """The stem (first five letters, folded) of the word right after a count, if any."""
    after = _COUNTED.match(answer, span[1])
    return fold(after.group(1))[:5] if after else None
