"""The harness rubric: five dimensions per turn, worst turn per run, worst dimension overall.

Pure functions over a filled :class:`~pytest_ragv2.scoring.answer_records.TurnScore`. The
dimensions follow the harness's definitions ("PASS means"):

- **Accuracy** — every stated fact matches the source. FAIL: a forbidden claim, a value
  stated for a required claim that differs from its gold value (``contradicted``), a phone
  number, e-mail address or URL in no source (``invented``), or a veto
  of kind fabricated identifier, high-severity number, incompatible-as-compatible or
  constraint weakened; PARTIAL: another unsupported fact. A *missing* claim is not an
  Accuracy fault: nothing stated is wrong (it is Completeness).
- **Grounding** — nothing asserted beyond the corpus. FAIL: a veto of kind failed safe
  refusal, outside allow-list, synthetic as confirmed or fabricated identifier; an invented
  contact; a failed tool expectation; most of the answer's facts unsupported (a sole
  unsupported fact included). PARTIAL: some unsupported fact, a wrong or dangling citation, or
  (``cites_source``) no source named / a required claim sentence without citation.
- **Completeness** — every part answered. FAIL: the turn did not complete, an
  over-refusal, or none of the required claims found; PARTIAL: a required claim missed.
- **Language** — FAIL: identified as another language than expected; PARTIAL: one part
  (a sentence, or part of one at a semicolon or a dash, of four words or more) in the
  expected language and another in another configured language.
- **Format** — FAIL: the requested format is not met.
"""

from __future__ import annotations

from collections.abc import Sequence

from pytest_ragv2.scoring.answer_records import _RANK, Grade, TurnScore
from pytest_ragv2.scoring.metrics import RUBRIC_DIMENSIONS

ACCURACY_VETOES = frozenset(
    {
        "fabricated_identifier",
        "unsupported_high_severity_number",
        "incompatible_presented_compatible",
        "constraint_weakened",
    }
)
GROUNDING_VETOES = frozenset(
    {"failed_safe_refusal", "outside_allowlist", "synthetic_as_confirmed", "fabricated_identifier"}
)


def clip(text: str, limit: int = 200) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _accuracy(score: TurnScore, kinds: set[str]) -> Grade:
    vetoes = sorted(kinds & ACCURACY_VETOES)
    if score.forbidden_found:
        return Grade("FAIL", "forbidden claim: " + "; ".join(score.forbidden_found))
    if score.contradicted:
        return Grade("FAIL", "wrong value: " + "; ".join(score.contradicted))
    if score.invented:
        return Grade("FAIL", "invented contact: " + "; ".join(score.invented))
    if vetoes:
        return Grade("FAIL", "veto: " + ", ".join(vetoes))
    if score.unsupported:
        return Grade("PARTIAL", "unsupported: " + ", ".join(score.unsupported))
    return Grade("PASS", "every stated fact matches the gold and the sources")


def _grounding(score: TurnScore, kinds: set[str]) -> Grade:
    vetoes = sorted(kinds & GROUNDING_VETOES)
    failed_tools = [c for c in score.tool_checks if c.passed is False]
    bad_citations = [c for c in score.citation_checks if c.verdict in ("wrong", "dangling")]
    uncited = score.claim_sentences - score.claim_sentences_cited
    cites_missing = any(v.startswith("cites_source") for v in score.constraint_violations)
    unsupported = len(score.unsupported)
    if vetoes:
        return Grade("FAIL", "veto: " + ", ".join(vetoes))
    if score.invented:
        return Grade("FAIL", "invented contact: " + "; ".join(score.invented))
    if failed_tools:
        return Grade("FAIL", "; ".join(f"{c.tool}.{c.key}: {c.detail}" for c in failed_tools))
    if unsupported and 2 * unsupported > score.facts:
        return Grade(
            "FAIL",
            f"{unsupported}/{score.facts} facts unsupported: " + ", ".join(score.unsupported),
        )
    if unsupported:
        return Grade("PARTIAL", "unsupported: " + ", ".join(score.unsupported))
    if bad_citations:
        return Grade(
            "PARTIAL", "; ".join(f"{c.marker} {c.verdict}: {c.detail}" for c in bad_citations)
        )
    if cites_missing:
        return Grade("PARTIAL", "no source cited or named")
    if "cites_source" in score.constraints and uncited > 0:
        return Grade("PARTIAL", f"{uncited} claim sentence(s) without citation")
    return Grade("PASS", "nothing asserted beyond the sources")


def _completeness(score: TurnScore) -> Grade:
    share = score.required_found / score.required if score.required else 1.0
    if not score.completed:
        return Grade("FAIL", "the turn was not sent" if not score.ran else "no final answer")
    if score.over_refusal:
        return Grade("FAIL", f"refused ({score.refusal_phrase!r}) an answerable turn")
    if score.required and share == 0:
        missing = "; ".join(score.required_missed)
        return Grade("FAIL", f"{score.required_found}/{score.required} required claims: {missing}")
    if score.required_missed:
        return Grade("PARTIAL", "missing: " + "; ".join(score.required_missed))
    return Grade("PASS", "every part answered")


def _language(score: TurnScore) -> Grade:
    if score.language_mixed is not None:
        return Grade(
            "PARTIAL",
            f"{score.language_expected} expected, partly in {score.language_mixed}",
        )
    if score.language_detected is None:
        return Grade("PASS", f"not judged: {score.language_note}")
    if score.language_detected != score.language_expected:
        return Grade("FAIL", f"{score.language_expected} expected, {score.language_note}")
    return Grade("PASS", score.language_note)


def _format(score: TurnScore) -> Grade:
    if score.format_ok is False:
        return Grade("FAIL", f"not a {score.format_expected}")
    if score.format_ok:
        return Grade("PASS", f"{score.format_expected} as requested")
    return Grade("PASS", "no format requested")


def turn_rubric(score: TurnScore) -> dict[str, Grade]:
    """The five dimensions of one scored turn (rules in the module docstring)."""
    kinds = {str(veto.kind) for veto in score.vetoes}
    return {
        "Accuracy": _accuracy(score, kinds),
        "Grounding": _grounding(score, kinds),
        "Completeness": _completeness(score),
        "Language": _language(score),
        "Format": _format(score),
    }


def run_rubric(turns: Sequence[TurnScore]) -> dict[str, Grade]:
    """Per dimension the worst turn's grade (the reason names the turn in a conversation)."""
    rubric: dict[str, Grade] = {}
    for dimension in RUBRIC_DIMENSIONS:
        graded = [(turn.turn, turn.rubric[dimension]) for turn in turns if dimension in turn.rubric]
        if not graded:
            rubric[dimension] = Grade("PASS", "nothing to judge")
            continue
        number, grade = max(graded, key=lambda pair: _RANK[pair[1].verdict])
        if len(turns) > 1:
            grade = Grade(grade.verdict, f"turn {number}: {grade.reason}")
        rubric[dimension] = Grade(grade.verdict, clip(grade.reason, 500))
    return rubric
