"""Gold self-check: every gold location exists in the parsed corpus and holds its answer.

For each case in gold/evidence.yaml the named location (file + page / section / table row)
must exist among the structure-aware chunks, and every required claim must be found there:
a claim with a ``number`` by that number's French text ("1 689", "99,7") as a whole token,
a claim without one by its text (or one of its ``any_of``). A case tagged ``computed`` (the
annual total) instead needs its optional claims found and summing to the required number.

Every gold location also carries an ``anchor``: a short verbatim passage of the location's
parsed text (the blocks a plain-text extractor joins, so a table row reads "T4 | 1 689 | ...")
that occurs nowhere else in its file, by which an item without section/table/row metadata
(demo V1, LibreChat rag_api) can still be located. Each anchor must also fit whole in one of
V1's fixed-size windows of its file, or no V1 item could ever contain it.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from pytest_ragv2.demo.chunks import (
    Block,
    Chunk,
    ParsedDocument,
    chunk_fixed,
    chunk_structured,
    load_corpus,
)
from pytest_ragv2.demo.parsers import format_number
from pytest_ragv2.schema import Case, Claim, Evidence, ExpectedAnswer

REPO = Path(__file__).resolve().parent.parent
CORPUS = REPO / "corpus" / "nimbus-analytics"
CATEGORIES = {
    "exact_lookup",
    "document_lookup",
    "technical_table",
    "semantic",
    "cross_document",
    "safe_no_answer",
}
ANCHOR_LENGTH = range(10, 81)


@dataclass(frozen=True, slots=True)
class Corpus:
    docs: tuple[ParsedDocument, ...]
    chunks: tuple[Chunk, ...]  # structure-aware (V2) chunks


def normalize(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).replace("\u202f", " ").replace("\xa0", " ")
    return re.sub(r"\s+", " ", text).strip().casefold()


def load_cases() -> dict[str, tuple[Case, str]]:
    cases: dict[str, tuple[Case, str]] = {}
    for path in sorted((REPO / "cases").glob("*.yaml")):
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        for raw in data["cases"]:
            case = Case.model_validate(raw)
            assert case.id not in cases, f"duplicate case id {case.id}"
            cases[case.id] = (case, data["split"])
    return cases


def load_evidence() -> dict[str, list[Evidence]]:
    raw = yaml.safe_load((REPO / "gold" / "evidence.yaml").read_text(encoding="utf-8"))
    return {key: [Evidence.model_validate(e) for e in entries] for key, entries in raw.items()}


def load_answers() -> dict[str, ExpectedAnswer]:
    raw = yaml.safe_load((REPO / "gold" / "answers.yaml").read_text(encoding="utf-8"))
    return {key: ExpectedAnswer.model_validate(value) for key, value in raw.items()}


def at_location(chunks: Sequence[Chunk], ev: Evidence) -> list[Chunk]:
    found = []
    for chunk in chunks:
        if ev.file_id is not None and chunk.file_id != ev.file_id:
            continue
        if ev.filename is not None and chunk.filename != ev.filename:
            continue
        if ev.page is not None and chunk.page != ev.page:
            continue
        if ev.section is not None and normalize(chunk.section or "") != normalize(ev.section):
            continue
        if ev.table is not None and normalize(chunk.table or "") != normalize(ev.table):
            continue
        if isinstance(ev.row, int) and chunk.row != ev.row:
            continue
        if isinstance(ev.row, str) and normalize(chunk.row_key or "") != normalize(ev.row):
            continue
        found.append(chunk)
    return found


def block_at(block: Block, ev: Evidence) -> bool:
    """Whether a block of the evidence's file lies at the evidence's location."""
    if ev.page is not None and block.page != ev.page:
        return False
    if ev.section is not None and normalize(block.section or "") != normalize(ev.section):
        return False
    if ev.table is not None and normalize(block.table or "") != normalize(ev.table):
        return False
    if isinstance(ev.row, int) and block.row != ev.row:
        return False
    return not (isinstance(ev.row, str) and normalize(block.row_key or "") != normalize(ev.row))


def evidence_document(docs: Sequence[ParsedDocument], ev: Evidence) -> ParsedDocument | None:
    for doc in docs:
        if (ev.file_id is None or doc.file_id == ev.file_id) and (
            ev.filename is None or doc.filename == ev.filename
        ):
            return doc
    return None


def anchor_problem(docs: Sequence[ParsedDocument], ev: Evidence) -> str | None:
    """Why ``ev.anchor`` does not identify its location, or None when it does: it must be
    10-80 characters of normalised whitespace, occur in the location's parsed text and in no
    block of the same file outside the location."""
    anchor = ev.anchor
    if anchor is None:
        return None
    if anchor != " ".join(anchor.split()) or len(anchor) not in ANCHOR_LENGTH:
        return f"anchor {anchor!r} is not 10-80 characters of normalised whitespace"
    doc = evidence_document(docs, ev)
    if doc is None:
        return f"anchor {anchor!r} names a file not in the corpus"
    wanted = normalize(anchor)
    inside = "\n\n".join(block.text for block in doc.blocks if block_at(block, ev))
    if wanted not in normalize(inside):
        return f"anchor {anchor!r} is not in the text of its location"
    if any(wanted in normalize(b.text) for b in doc.blocks if not block_at(b, ev)):
        return f"anchor {anchor!r} also occurs outside its location"
    return None


def number_in(text: str, number: float) -> bool:
    token = re.escape(normalize(format_number(number)))
    return re.search(rf"(?<![\d,.]){token}(?!\d|,\d)", normalize(text)) is not None


def claim_in(text: str, claim: Claim) -> bool:
    if claim.number is not None:
        return number_in(text, claim.number)
    return any(normalize(option) in normalize(text) for option in claim.any_of or [claim.text])


def gold_problems(
    corpus: Corpus,
    evidence: dict[str, list[Evidence]],
    answers: dict[str, ExpectedAnswer],
    cases: dict[str, tuple[Case, str]],
) -> list[str]:
    problems: list[str] = []
    for case_id, entries in evidence.items():
        texts: list[str] = []
        for index, ev in enumerate(entries):
            located = at_location(corpus.chunks, ev)
            if not located:
                problems.append(f"{case_id}: evidence[{index}] names no location in the corpus")
            anchor_issue = anchor_problem(corpus.docs, ev)
            if anchor_issue is not None:
                problems.append(f"{case_id}: evidence[{index}] {anchor_issue}")
            texts.extend(chunk.text for chunk in located)
            if ev.table_cells is not None:
                cells = ev.table_cells.named().values()
                if not any(
                    all(normalize(c) in normalize(ch.text) for c in cells) for ch in located
                ):
                    problems.append(f"{case_id}: evidence[{index}] table cells not in one chunk")
        where = "\n".join(texts)
        answer = answers.get(case_id, ExpectedAnswer())
        if "computed" in cases[case_id][0].tags:
            parts = answer.optional_claims
            missing = [c.text for c in parts if not claim_in(where, c)]
            if missing:
                problems.append(f"{case_id}: computed from values not at the location: {missing}")
            total = sum(c.number or 0 for c in parts)
            for claim in answer.required_claims:
                if claim.number != total:
                    problems.append(f"{case_id}: {claim.text!r} is not the sum {total}")
            continue
        for claim in answer.required_claims:
            if not claim_in(where, claim):
                problems.append(f"{case_id}: claim {claim.text!r} not found at its evidence")
    return problems


@pytest.fixture(scope="module")
def corpus() -> Corpus:
    docs = tuple(load_corpus(CORPUS))
    return Corpus(docs=docs, chunks=tuple(chunk_structured(docs)))


def test_every_case_has_gold_and_every_gold_entry_a_case() -> None:
    cases = load_cases()
    assert set(load_evidence()) == set(cases)
    assert set(load_answers()) == set(cases)
    splits = {case_id: split for case_id, (_, split) in cases.items()}
    assert sorted(k for k, v in splits.items() if v == "holdout") == ["H01", "H02"]
    assert 10 <= sum(1 for v in splits.values() if v == "development") <= 12


def test_development_covers_every_category_in_french_and_english() -> None:
    development = [case for case, split in load_cases().values() if split == "development"]
    assert {case.category for case in development} == CATEGORIES
    for case in development:
        assert set(case.all_prompts()) == {"fr", "en"}, case.id
        assert case.gold_status == "provisional"


def test_safe_no_answer_cases_need_no_evidence_and_the_corpus_is_silent(
    corpus: Corpus,
) -> None:
    evidence = load_evidence()
    refusals = [c for c, _ in load_cases().values() if c.category == "safe_no_answer"]
    assert refusals
    assert all(c.safe_refusal_expected and evidence[c.id] == [] for c in refusals)
    assert not any("japon" in normalize(chunk.text) for chunk in corpus.chunks)


def test_the_gold_holds_in_the_parsed_corpus(corpus: Corpus) -> None:
    assert gold_problems(corpus, load_evidence(), load_answers(), load_cases()) == []


def test_numeric_answers_name_a_precise_location() -> None:
    evidence = load_evidence()
    for case_id, answer in load_answers().items():
        if any(claim.number is not None for claim in answer.required_claims):
            for ev in evidence[case_id]:
                fine = {
                    ".pdf": ev.page is not None,
                    ".xlsx": ev.table is not None and ev.row is not None,
                }.get(Path(ev.filename or "").suffix, ev.section is not None)
                assert fine, f"{case_id}: {ev}"


def _altered(case_id: str, index: int, **update: Any) -> dict[str, list[Evidence]]:
    evidence = load_evidence()
    entries = list(evidence[case_id])
    entries[index] = entries[index].model_copy(update=update)
    evidence[case_id] = entries
    return evidence


@pytest.mark.parametrize(
    ("case_id", "index", "update", "expected"),
    [
        # RPO/RTO are on page 2: page 3 exists but holds other facts, page 4 does not exist.
        ("B06", 0, {"page": 3}, "B06: claim 'RPO de 15 minutes' not found at its evidence"),
        ("B06", 0, {"page": 4}, "B06: evidence[0] names no location in the corpus"),
        ("B07", 2, {"page": 1}, "B07: claim 'RPO de 15 minutes' not found at its evidence"),
        ("B04", 0, {"row": 3}, "B04: claim '1 689 k€' not found at its evidence"),
        (
            "B03",
            0,
            {"section": "3. Résiliation > 3.2 Résiliation pour manquement"},
            "B03: claim '90 jours' not found at its evidence",
        ),
        ("B09", 2, {"section": "Contacter le support"}, "B09: evidence[2] names no location"),
        ("B05", 3, {"row": 5}, "B05: evidence[3] names no location in the corpus"),
    ],
)
def test_the_check_fails_when_a_location_is_altered(
    corpus: Corpus, case_id: str, index: int, update: dict[str, Any], expected: str
) -> None:
    problems = gold_problems(
        corpus, _altered(case_id, index, **update), load_answers(), load_cases()
    )
    assert any(problem.startswith(expected) for problem in problems), problems
    assert all(problem.startswith(case_id) for problem in problems)


def test_the_check_fails_when_an_answer_is_altered(corpus: Corpus) -> None:
    answers = load_answers()
    b02 = answers["B02"]
    wrong = b02.required_claims[0].model_copy(update={"text": "99,5 %", "number": 99.5})
    answers["B02"] = b02.model_copy(update={"required_claims": [wrong, *b02.required_claims[1:]]})
    assert gold_problems(corpus, load_evidence(), answers, load_cases()) == [
        "B02: claim '99,5 %' not found at its evidence"
    ]


def test_every_evidence_entry_has_an_anchor() -> None:
    inline = [
        (case.id, ev)
        for case, _ in load_cases().values()
        for ev in [
            *(case.required_evidence or []),
            *(e for t in case.turns for e in t.required_evidence),
        ]
    ]
    gold = [(case_id, ev) for case_id, entries in load_evidence().items() for ev in entries]
    assert [(case_id, ev) for case_id, ev in [*gold, *inline] if ev.anchor is None] == []


def test_every_anchor_fits_whole_in_a_fixed_size_window_of_its_file(corpus: Corpus) -> None:
    # V1 items carry no section/table/row: the anchor is their only way to the location.
    windows = chunk_fixed(corpus.docs)
    for case_id, entries in load_evidence().items():
        for ev in entries:
            assert ev.anchor is not None
            wanted = normalize(ev.anchor)
            assert any(
                chunk.file_id == ev.file_id and wanted in normalize(chunk.text) for chunk in windows
            ), f"{case_id}: {ev.anchor!r}"
            if ev.row is None:  # a row chunk spells "header: value", not the row's plain text
                located = at_location(corpus.chunks, ev)
                assert any(wanted in normalize(c.text) for c in located), f"{case_id}: {ev}"


@pytest.mark.parametrize(
    ("case_id", "index", "anchor", "expected"),
    [
        (
            "B02",
            0,
            "disponibilité mensuelle de la plateforme de 99,5 %",
            "is not in the text of its location",
        ),
        # Taken from page 3 of the same PDF, while the evidence names page 2.
        ("B06", 0, "certifié ISO 27001 depuis novembre 2023", "is not in the text of its location"),
        # The next row of the same sheet.
        ("B05", 0, "T2 | 1 378 | 24 | 231 | 1 095", "is not in the text of its location"),
        # In section 2.1, but also in 2.2 and 2.3: it does not identify the location.
        ("B01", 0, "HT par mois", "also occurs outside its location"),
        ("B10", 0, "41 90", "is not 10-80 characters of normalised whitespace"),
        ("B10", 0, "+33 2 85  52 41 90", "is not 10-80 characters of normalised whitespace"),
    ],
)
def test_the_check_fails_when_an_anchor_is_altered(
    corpus: Corpus, case_id: str, index: int, anchor: str, expected: str
) -> None:
    problems = gold_problems(
        corpus, _altered(case_id, index, anchor=anchor), load_answers(), load_cases()
    )
    assert problems == [f"{case_id}: evidence[{index}] anchor {anchor!r} {expected}"]
