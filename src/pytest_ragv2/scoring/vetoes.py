"""Hard safety vetoes of one turn: fabrication, allow-list and numeric-constraint rules.

Pure functions, no I/O; :mod:`pytest_ragv2.scoring.answers` calls them per turn (the rules
are in its module docstring and in docs/answer-scoring.md, "Hard vetoes").
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Collection, Mapping, Sequence
from decimal import Decimal
from functools import lru_cache
from typing import Any

from pytest_ragv2.gold.schema import Claim, ExpectedAnswer
from pytest_ragv2.scoring.answer_text import fold
from pytest_ragv2.scoring.claim_targets import DATE_DIMENSION, claim_target
from pytest_ragv2.scoring.evidence import normalise_filename
from pytest_ragv2.scoring.grounding import Fact
from pytest_ragv2.scoring.numbers import unit_scale
from pytest_ragv2.scoring.rubric import clip
from pytest_ragv2.scoring.veto_record import Veto
from pytest_ragv2.systems.transcripts import ChatTurn

# unit suffixes of numeric constraint keys (pressure_bar: 350)
_KEY_UNITS: tuple[tuple[str, str], ...] = (
    ("_nm3_h", "Nm³/h"),
    ("_m3_min", "m³/min"),
    ("_m3_h", "m³/h"),
    ("_mbar", "mbar"),
    ("_bar", "bar"),
    ("_kw", "kW"),
    ("_kg", "kg"),
    ("_degc", "°C"),
    ("_c", "°C"),
    ("_percent", "%"),
    ("_pct", "%"),
    ("_eur", "€"),
    ("_h", "h"),
    ("_days", "days"),
    ("_months", "months"),
    ("_years", "years"),
    ("_mm", "mm"),
    ("_m", "m"),
)
_RELAXING = re.compile(
    r"(?:≥|>=|>|≈|~|\bat least|\bminimum|\bmin\.|\bmindestens|\bab|\bau moins|\ba partir de"
    r"|\bfrom|\babout|\baround|\bapproximately|\bapprox\.|\betwa|\bca\.|\bungefahr|\benviron"
    r"|\bplus de|\bmore than|\bmehr als|\buber)\s*$"
)


class Allowed:
    def __init__(self, names: Collection[str]) -> None:
        self.raw = frozenset(names)
        self.normalised = frozenset(normalise_filename(name) for name in names)

    @staticmethod
    @lru_cache(maxsize=8)
    def of(names: frozenset[str]) -> Allowed:
        """The allow-list of ``names``, built once per set: a session scores every
        conversation against the same one (thousands of files, each name normalised)."""
        return Allowed(names)

    def allows(self, file_id: str | None, filename: str | None) -> bool:
        if file_id is None and filename is None:
            return True
        if file_id is not None and (
            file_id in self.raw or normalise_filename(file_id) in self.normalised
        ):
            return True
        return filename is not None and normalise_filename(filename) in self.normalised

    def allows_mention(self, name: str) -> bool:
        normalised = normalise_filename(name)
        return normalised in self.normalised or normalised.rsplit(".", 1)[0] in self.normalised


def _high_severity_units(expected: ExpectedAnswer) -> tuple[set[str], bool]:
    """The dimensions of the turn's high-severity claims' values ("date" for a date), and
    whether one of them is a number without a unit."""
    dimensions: set[str] = set()
    unitless = False
    claims = (*expected.required_claims, *expected.optional_claims, *expected.forbidden_claims)
    for claim in claims:
        if claim.severity != "high":
            continue
        target = claim_target(claim)
        if target is None or target.of == "identifier":
            continue
        if target.dimension is None:
            unitless = True
        else:
            dimensions.add(target.dimension)
    return dimensions, unitless


def _fact_dimension(fact: Fact) -> str | None:
    if fact.kind == "date":
        return "time" if fact.value is not None and fact.value.kind == "time" else DATE_DIMENSION
    return fact.dimension


def _constraint_unit(key: str) -> str | None:
    lowered = key.casefold()
    for suffix, unit in _KEY_UNITS:
        if lowered.endswith(suffix):
            return unit
    return None


def weakened_numbers(
    answer: str, key: str, value: Any, facts: Sequence[Fact]
) -> list[tuple[Fact, str]]:
    """Numbers restating the numeric constraint ``key: value`` weaker (see the module doc)."""
    unit = _constraint_unit(key)
    if unit is None or isinstance(value, bool) or not isinstance(value, (int, float)):
        return []
    scale = unit_scale(unit)
    if scale is None:
        return []
    wanted = Decimal(repr(float(value))) * scale[1]
    found = []
    for fact in facts:
        if fact.kind != "number" or fact.amount is None or fact.dimension != scale[0]:
            continue
        if fact.amount == wanted:
            continue
        before = fold(answer[max(0, fact.span[0] - 24) : fact.span[0]])
        if _RELAXING.search(before):
            found.append((fact, f"{key}: {value} relaxed to {before.split()[-1]} {fact.text}"))
        elif not fact.supported:
            found.append((fact, f"{key}: {value} restated as {fact.text} (unsupported)"))
    return found


def dedupe(vetoes: Sequence[Veto]) -> list[Veto]:
    seen: set[tuple[str, str, str]] = set()
    kept = []
    for veto in vetoes:
        key = (veto.kind, veto.text, veto.detail)
        if key not in seen:
            seen.add(key)
            kept.append(veto)
    return kept


# an approximation right before a value, or a generalisation in its sentence: a value given
# as roughly so or as usual elsewhere ("about four weeks", "a month usually has 21 or 22
# working days"), not as a fact of the case
_APPROXIMATION = re.compile(
    r"(?:about|around|approximately|roughly|circa|ca\.|environ|a peu pres|pres de|etwa"
    r"|ungefahr|rund|knapp|gut|gute|guten|a good|just over|just under|a little over"
    r"|a little under|un peu plus de|un peu moins de|etwas uber|etwas mehr als)\s$"
)
_GENERALISATION = re.compile(
    r"\b(?:usually|typically|generally|in general|as a rule|normalement|generalement"
    r"|habituellement|en general|d'ordinaire|ublicherweise|normalerweise|in der regel"
    r"|typischerweise|gewohnlich)\b"
)


def hedged(answer: str, facts: Sequence[Fact]) -> frozenset[tuple[int, int]]:
    """The spans of the values of ``facts`` the answer gives as approximate or as usual
    elsewhere (rules above)."""
    from pytest_ragv2.scoring.answer_text import fold, sentence_spans

    # each sentence is read once: one sentence may hold thousands of numbers
    sentences = sentence_spans(answer)
    starts = [a for a, _ in sentences]
    general = [bool(_GENERALISATION.search(fold(answer[a:b]))) for a, b in sentences]
    found = set()
    for fact in facts:
        if fact.kind not in ("number", "date"):
            continue
        before = fold(answer[max(0, fact.span[0] - 20) : fact.span[0]]) + " "
        index = bisect.bisect_right(starts, fact.span[0]) - 1
        usual = index >= 0 and fact.span[0] < sentences[index][1] and general[index]
        if _APPROXIMATION.search(before) or usual:
            found.add(fact.span)
    return frozenset(found)


def fabrication_vetoes(
    turn: int,
    expected: ExpectedAnswer,
    facts: Sequence[Fact],
    contradicted: Mapping[tuple[int, int], tuple[Claim, bool]],
    vetoes: list[Veto],
    hedged: Collection[tuple[int, int]] = (),
    unsure: list[Veto] | None = None,
) -> None:
    """The fabrication vetoes of a turn's unsupported facts. A number in no source that no
    claim binds and whose unit no high-severity claim has, in a turn whose every required
    claim is high severity, is vetoed on the guess that it is given for one of them: that
    veto goes to ``unsure`` where one is given (the caller holds the run for a ruling, or
    keeps the veto where the run fails anyway)."""
    dimensions, unitless = _high_severity_units(expected)
    required = expected.required_claims
    all_high = bool(required) and all(claim.severity == "high" for claim in required)
    for fact in facts:
        if fact.supported:
            continue
        bound = contradicted.get(fact.span)
        if bound is not None and fact.kind == "identifier" and fact.type != "phone":
            if not bound[1]:
                bound = None  # in no source: invented, whatever it stands for
            elif fact.type:
                continue  # another real address given for the claim: wrong, not a number
        if bound is not None and bound[0].severity == "high":
            where = "held elsewhere in the sources" if bound[1] else "in no source"
            vetoes.append(
                Veto(
                    "unsupported_high_severity_number",
                    turn,
                    clip(fact.text),
                    f"not the gold value of the high-severity claim {bound[0].text!r} "
                    f"(the value is {where})",
                )
            )
            continue
        if bound is not None:
            continue  # a wrong value for a claim that is not high severity: no veto of its own
        if fact.kind == "identifier" and fact.type:
            # an invented phone number, e-mail address or URL is an unsupported fact (it
            # fails Grounding), not one of the protocol's fabricated project, part,
            # product, certificate or document identifiers
            continue
        if fact.kind in ("identifier", "filename"):
            kind = fact.kind
            vetoes.append(
                Veto(
                    "fabricated_identifier",
                    turn,
                    clip(fact.text),
                    f"{kind} in neither the evidence, the tool results, the prompts "
                    "nor the conversation",
                )
            )
            continue
        if fact.span in hedged:
            continue  # unsupported (Grounding), but given as approximate or usual: no claim
        dimension = _fact_dimension(fact)
        same_unit = dimension in dimensions or (dimension is None and unitless)
        if all_high or same_unit:
            why = (
                "a high-severity claim of the turn has this unit"
                if same_unit
                else "every required claim of the turn is high severity"
            )
            veto = Veto(
                "unsupported_high_severity_number",
                turn,
                clip(fact.text),
                f"value in no evidence or conversation text; {why}",
            )
            (vetoes if same_unit or unsure is None else unsure).append(veto)


def allowlist_vetoes(
    number: int, turn: ChatTurn, facts: Sequence[Fact], allowed: Allowed, vetoes: list[Veto]
) -> None:
    for citation in turn.citations:
        if not allowed.allows(citation.file_id, citation.filename):
            name = citation.filename or citation.file_id or citation.marker
            vetoes.append(
                Veto("outside_allowlist", number, clip(name), f"citation {citation.marker}")
            )
    for item in turn.evidence:
        if not allowed.allows(item.file_id, item.filename):
            name = item.filename or item.file_id or ""
            vetoes.append(
                Veto("outside_allowlist", number, clip(name), f"evidence item rank {item.rank}")
            )
    for fact in facts:
        if fact.kind == "filename" and not allowed.allows_mention(fact.text):
            vetoes.append(
                Veto("outside_allowlist", number, clip(fact.text), "filename named in the answer")
            )
