"""Citation correctness and completeness of one answer.

Pure functions, no I/O.

**Adjacent claim.** A citation marker belongs to the sentence holding it (sentences and lines
as split by :func:`pytest_ragv2.scoring.answer_text.sentence_spans`); a marker that opens a
sentence ("... 11.5 hours. [1]") belongs to the sentence before. A marker is located by its
literal text; a ``[n]`` marker cited inside a group ("[1, 3]") is found in the group. The
**facts** it cites are the answer's numbers and identifiers (:mod:`pytest_ragv2.scoring.
grounding`; the scorer leaves out those the prompt holds) and the required or optional gold
claims matched in what it cites: the whole sentence, or in a sentence citing several
sources the part since the previous marker ("... in March and October [1], and the ISO
27001 audit [2]": [1] cites March and October, not ISO 27001).

**Verdict per marker occurrence.**

- ``dangling`` (wrong): the marker names no source (no file id, filename or content);
- ``correct``: the cited source's text — the citation's ``content``, else the texts of the
  turn's evidence items from the same file (and page, when the citation gives one) — backs at
  least one fact of the sentence (a number as in the grounding rule, an identifier, or a
  gold claim found in the source text);
- ``wrong``: the source text backs none of them;
- ``unverifiable``: the sentence has no fact, or no source text is known; left out of
  citation correctness (= correct / (correct + wrong + dangling)).

**Completeness.** The sentences holding a matched required claim; a sentence is cited when a
marker belongs to it. Citation completeness = cited / such sentences.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Literal

from pytest_ragv2.scoring.answer_text import sentence_of, sentence_spans
from pytest_ragv2.scoring.claims import ClaimMatch, claim_found
from pytest_ragv2.scoring.evidence import normalise_filename
from pytest_ragv2.scoring.grounding import Fact, fact_supported, text_support
from pytest_ragv2.scoring.markers import CITATION_MARKER
from pytest_ragv2.systems.outputs import RetrievedItem
from pytest_ragv2.systems.transcripts import Citation

CitationVerdict = Literal["correct", "wrong", "dangling", "unverifiable"]

_NUMBERED = re.compile(r"\[(\d+)\]")


@dataclass(frozen=True, slots=True)
class CitationCheck:
    marker: str
    verdict: CitationVerdict
    sentence: str
    detail: str

    def to_json(self) -> dict[str, str]:
        return {
            "marker": self.marker,
            "verdict": self.verdict,
            "sentence": self.sentence,
            "detail": self.detail,
        }


@dataclass(frozen=True, slots=True)
class CitationResult:
    checks: tuple[CitationCheck, ...]
    claim_sentences: int
    claim_sentences_cited: int


def _positions(answer: str, marker: str) -> list[int]:
    found = []
    position = answer.find(marker)
    while position >= 0:
        found.append(position)
        position = answer.find(marker, position + 1)
    if found:
        return found
    numbered = _NUMBERED.fullmatch(marker)
    if numbered is None:
        return []
    wanted = numbered.group(1)
    return [
        group.start()
        for group in CITATION_MARKER.finditer(answer)
        if wanted in re.findall(r"\d+", group.group())
    ]


def _owner(answer: str, spans: Sequence[tuple[int, int]], position: int) -> int | None:
    index = sentence_of(spans, position)
    if index is None or index == 0:
        return index
    before = answer[spans[index][0] : position]
    if CITATION_MARKER.sub("", before).strip(" .;,") == "":
        return index - 1
    return index


def _source_text(citation: Citation, evidence: Sequence[RetrievedItem]) -> str | None:
    if citation.content:
        return citation.content
    texts = []
    for item in evidence:
        same = (citation.file_id is not None and item.file_id == citation.file_id) or (
            citation.filename is not None
            and item.filename is not None
            and normalise_filename(item.filename) == normalise_filename(citation.filename)
        )
        if same and (citation.page is None or item.page in (None, citation.page)):
            texts.append(item.text)
    return "\n".join(texts) if texts else None


def _backs(
    source: str, facts: Sequence[Fact], claims: Sequence[ClaimMatch], deadline: float | None
) -> bool:
    support = text_support(source)
    for fact in facts:
        if fact.kind != "filename" and fact_supported(fact, support):
            return True
    return any(claim_found(m.claim, source, None, deadline=deadline).matched for m in claims)


def _grouped(citations: Sequence[Citation], evidence: Sequence[RetrievedItem]) -> list[Citation]:
    """One citation per marker: a marker naming several sources (``[1, 3]``) holds the text
    of all of them, so it is correct when any one backs its sentence; a marker is dangling
    only when none of its sources is known."""
    by_marker: dict[str, list[Citation]] = {}
    for citation in citations:
        by_marker.setdefault(citation.marker, []).append(citation)
    grouped = []
    for marker, group in by_marker.items():
        known = [c for c in group if c.file_id is not None or c.filename is not None or c.content]
        if len(group) == 1 or not known:
            grouped.append(group[0])
            continue
        texts = [text for c in known if (text := _source_text(c, evidence))]
        first = known[0]
        grouped.append(
            Citation(
                marker=marker,
                file_id=first.file_id,
                filename=first.filename,
                page=first.page,
                content="\n".join(texts) or None,
            )
        )
    return grouped


def check_citations(
    answer: str,
    citations: Sequence[Citation],
    evidence: Sequence[RetrievedItem],
    facts: Sequence[Fact],
    required: Sequence[ClaimMatch],
    optional: Sequence[ClaimMatch] = (),
    deadline: float | None = None,
) -> CitationResult:
    """Judge every marker occurrence of ``citations`` and count cited claim sentences; a
    claim pattern still matching a source at ``deadline`` raises ``PatternTimedOut``."""
    spans = sentence_spans(answer)
    cited_sentences: set[int] = set()
    for marker in CITATION_MARKER.finditer(answer):
        owner = _owner(answer, spans, marker.start())
        if owner is not None:
            cited_sentences.add(owner)
    checks: list[CitationCheck] = []
    grouped = _grouped(citations, evidence)
    runs = _marker_runs(answer, grouped, evidence)
    for citation in grouped:
        positions = _positions(answer, citation.marker)
        for position in positions:
            owner = _owner(answer, spans, position)
            if owner is not None:
                cited_sentences.add(owner)
        owners: list[tuple[int | None, int | None]] = [
            (p, _owner(answer, spans, p)) for p in positions
        ] or [(None, None)]
        for at, owner in owners:
            cited = _cited_part(
                answer, spans, owner, runs.starts.get(at, at) if at is not None else at
            )
            joint = runs.joint.get(at) if at is not None else None
            if joint:  # "[1][2][3]": the markers of a run cite the part together
                own = _source_text(citation, evidence) or ""
                citation = replace(citation, content="\n".join((own, *joint)))
            checks.append(
                _check(answer, cited, citation, evidence, facts, required, optional, deadline)
            )
    claim_sentences: set[int] = set()
    for match in required:
        if match.span is not None:
            index = sentence_of(spans, match.span[0])
            if index is not None:
                claim_sentences.add(index)
    return CitationResult(
        tuple(checks), len(claim_sentences), len(claim_sentences & cited_sentences)
    )


_RUN_GAP = re.compile(r"\s*")


@dataclass(frozen=True)
class _Runs:
    """Runs of adjacent markers ("... 5 % [1][2][3]."): where each marker's run starts, and
    the source texts of the run's other markers (a run cites its part as one group does)."""

    starts: dict[int, int]
    joint: dict[int, list[str]]


def _marker_runs(
    answer: str, citations: Sequence[Citation], evidence: Sequence[RetrievedItem]
) -> _Runs:
    texts = {c.marker: _source_text(c, evidence) for c in citations}
    runs: list[list[re.Match[str]]] = []
    for marker in CITATION_MARKER.finditer(answer):
        if runs and _RUN_GAP.fullmatch(answer, runs[-1][-1].end(), marker.start()):
            runs[-1].append(marker)
        else:
            runs.append([marker])
    starts: dict[int, int] = {}
    joint: dict[int, list[str]] = {}
    for run in runs:
        distinct = {m.group() for m in run}
        for marker in run:
            starts[marker.start()] = run[0].start()
            if len(distinct) > 1:
                others = (texts.get(name) for name in distinct if name != marker.group())
                joint[marker.start()] = [text for text in others if text]
    return _Runs(starts, joint)


def _cited_part(
    answer: str, spans: Sequence[tuple[int, int]], owner: int | None, position: int | None
) -> tuple[int, int]:
    """What a marker cites: its sentence, or in a sentence citing several sources ("... en
    mars et en octobre [1], et l'audit ... ISO 27001 [2]") the text since the previous
    marker. ``position`` is where the marker's run of adjacent markers starts ("[1][2]"
    cite the part before "[1]")."""
    sentence = spans[owner] if owner is not None else (0, len(answer))
    if position is None or not sentence[0] <= position < sentence[1]:
        return sentence
    markers = list(CITATION_MARKER.finditer(answer, *sentence))
    if len({marker.group() for marker in markers}) < 2:
        return sentence
    start = sentence[0]
    for other in markers:
        if other.end() <= position:
            start = other.end()
    return start, position


def _check(
    answer: str,
    cited: tuple[int, int],
    citation: Citation,
    evidence: Sequence[RetrievedItem],
    facts: Sequence[Fact],
    required: Sequence[ClaimMatch],
    optional: Sequence[ClaimMatch],
    deadline: float | None,
) -> CitationCheck:
    start, end = cited
    sentence = answer[start:end][:200]
    if citation.file_id is None and citation.filename is None and not citation.content:
        return CitationCheck(citation.marker, "dangling", sentence, "the marker names no source")

    inside = [f for f in facts if f.kind != "filename" and start <= f.span[0] < end]
    claims = [m for m in (*required, *optional) if m.span is not None and start <= m.span[0] < end]
    if not inside and not claims:
        return CitationCheck(citation.marker, "unverifiable", sentence, "no fact in the sentence")
    source = _source_text(citation, evidence)
    if source is None:
        return CitationCheck(citation.marker, "unverifiable", sentence, "no source text known")
    if _backs(source, inside, claims, deadline):
        return CitationCheck(citation.marker, "correct", sentence, "the source backs the sentence")
    named = ", ".join([f.text for f in inside] + [m.found for m in claims])[:150]
    return CitationCheck(
        citation.marker, "wrong", sentence, f"the cited source does not hold: {named}"
    )
