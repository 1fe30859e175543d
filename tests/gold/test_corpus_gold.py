"""Gold self-check: every gold location exists in the parsed corpus and holds its answer.

The gold comes in units: a case of gold/evidence.yaml (with its answer from gold/answers.yaml),
a case with inline ``required_evidence``, and each turn of a multi-turn case (labelled
"T01 turn 5", turns counted from 1). For each unit the named location (file + page / section
/ table row) must exist among the structure-aware chunks of the corpus folder holding the
file, and every required claim must be found there. A typed claim (``kind`` and ``value``) is
found as the answer scorer finds it (:func:`pytest_ragv2.scoring.claims.claim_found`: its
value in any writing, "11 June 2027" for "11.06.2027"), or — a number whose unit a table
row names in its header ("CA (k€): 1 689") — by the number its value writes, in French or
English ("1 689" / "1,689", "11,5" / "11.5") as a whole token; an untyped claim with a
``number`` by that number the same way, any other claim by its text (or one of its
``any_of``). A case tagged ``computed`` (the annual total), or a turn whose case is tagged
``computed-turn-N``, instead needs its optional claims found and summing to the required
value. A unit with no evidence (a safe refusal, a memory turn, a chit-chat or web case) has
no location to hold its claims and is not checked. A unit whose entries carry ``lang`` (a
fact printed in a German and an English document) is scored per prompt language against the
untagged entries and those of that language, so each language's entries must hold every
value claim on their own (a value reads the same in every language's writing of it); a
worded claim is written in one language and must be found in the evidence as a whole.

Every gold location also carries an ``anchor``: a short verbatim passage of the location's
parsed text (the blocks a plain-text extractor joins, so a table row reads "T4 | 1 689 | ...")
that occurs nowhere else in its file, by which an item without section/table/row metadata
(demo V1, LibreChat rag_api) can still be located. Each anchor must also fit whole in one of
V1's fixed-size windows of its file, or no V1 item could ever contain it.
"""

from __future__ import annotations

import hashlib
import json
import re
import unicodedata
from collections import Counter
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from pytest_ragv2.gold.schema import Case, Claim, Evidence, ExpectedAnswer
from pytest_ragv2.scoring.claim_targets import claim_target
from pytest_ragv2.scoring.claims import claim_found
from pytest_ragv2.scoring.normalisation import normalise
from pytest_ragv2.scoring.numbers import read_numbers
from ragv2_demo.chunks import (
    Block,
    Chunk,
    ParsedDocument,
    chunk_fixed,
    chunk_structured,
    load_corpus,
)
from ragv2_demo.parsers import format_number
from ragv2_demo.render import format_number_en

REPO = Path(__file__).resolve().parents[2]
CORPUS_ROOT = REPO / "corpus"
ANALYTICS = CORPUS_ROOT / "nimbus-analytics"
ROBOTICS = CORPUS_ROOT / "nimbus-robotics"
# The retrieval sets (layers A-C: Nimbus Analytics B/H cases, Tarnwald K/KH cases), whose gold
# lives in gold/*.yaml.
RETRIEVAL_CASE_FILES = ("development.yaml", "holdout.yaml")
CONVERSATIONS = "conversations.yaml"
CATEGORIES = {
    "exact_lookup",
    "document_lookup",
    "technical_table",
    "semantic",
    "cross_document",
    "safe_no_answer",
}
ANCHOR_LENGTH = range(10, 81)
TARNWALD = CORPUS_ROOT / "tarnwald-verdichter"
# The Tarnwald cases (K01.., KH01..) carry these categories, at least three cases each.
TARNWALD_CATEGORIES = {
    *CATEGORIES,
    "similar_projects",
    "project_comparison",
    "combined_evidence",
    "language_pair",
}
# Footnote markers ("350¹ | bar", "16²"): NFKC would turn them into digits of the number.
FOOTNOTE_MARKERS = re.compile("[\u00b9\u00b2\u00b3\u2070\u2074-\u2079]")


@dataclass(frozen=True, slots=True)
class Corpus:
    docs: tuple[ParsedDocument, ...]
    chunks: tuple[Chunk, ...]  # structure-aware (V2) chunks


@dataclass(frozen=True, slots=True)
class GoldUnit:
    """One checkable piece of gold: where an answer must be found and what it says."""

    label: str  # "B06", "W08", or "T01 turn 5" for a turn of a multi-turn case
    evidence: tuple[Evidence, ...]
    answer: ExpectedAnswer
    computed: bool


def normalize(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).replace("\u202f", " ").replace("\xa0", " ")
    return re.sub(r"\s+", " ", text).strip().casefold()


def read_yaml(text: str) -> Any:
    # libyaml when present: the gold files are read again for every altered-gold check.
    return yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))


def load_cases(names: Collection[str] | None = None) -> dict[str, tuple[Case, str]]:
    """Every case of cases/*.yaml (or of the files named), by id, with its split."""
    cases: dict[str, tuple[Case, str]] = {}
    for path in sorted((REPO / "cases").glob("*.yaml")):
        if names is not None and path.name not in names:
            continue
        data = read_yaml(path.read_text(encoding="utf-8"))
        for raw in data["cases"]:
            case = Case.model_validate(raw)
            assert case.id not in cases, f"duplicate case id {case.id}"
            cases[case.id] = (case, data["split"])
    return cases


def load_evidence() -> dict[str, list[Evidence]]:
    raw = read_yaml((REPO / "gold" / "evidence.yaml").read_text(encoding="utf-8"))
    return {key: [Evidence.model_validate(e) for e in entries] for key, entries in raw.items()}


def load_answers() -> dict[str, ExpectedAnswer]:
    raw = read_yaml((REPO / "gold" / "answers.yaml").read_text(encoding="utf-8"))
    return {key: ExpectedAnswer.model_validate(value) for key, value in raw.items()}


def gold_units(
    evidence: dict[str, list[Evidence]],
    answers: dict[str, ExpectedAnswer],
    cases: dict[str, tuple[Case, str]],
) -> list[GoldUnit]:
    """The gold of gold/*.yaml first (in file order), then the inline gold of the cases."""
    units = [
        GoldUnit(
            label=case_id,
            evidence=tuple(entries),
            answer=answers.get(case_id, ExpectedAnswer()),
            computed=case_id in cases and "computed" in cases[case_id][0].tags,
        )
        for case_id, entries in evidence.items()
    ]
    for case, _ in cases.values():
        if case.id not in evidence and case.required_evidence:
            units.append(
                GoldUnit(
                    label=case.id,
                    evidence=tuple(case.required_evidence),
                    answer=case.expected_answer or ExpectedAnswer(),
                    computed="computed" in case.tags,
                )
            )
        for number, turn in enumerate(case.turns, start=1):
            units.append(
                GoldUnit(
                    label=f"{case.id} turn {number}",
                    evidence=tuple(turn.required_evidence),
                    answer=turn.expected_answer or ExpectedAnswer(),
                    computed=f"computed-turn-{number}" in case.tags,
                )
            )
    return units


def all_gold_units() -> list[GoldUnit]:
    return gold_units(load_evidence(), load_answers(), load_cases())


def corpus_folders(units: Iterable[GoldUnit]) -> list[Path]:
    """The corpus folders (direct children of corpus/) holding a file some evidence names."""
    names = {name for unit in units for ev in unit.evidence for name in (ev.filename, ev.file_id)}
    folders = {
        CORPUS_ROOT / path.relative_to(CORPUS_ROOT).parts[0]
        for path in CORPUS_ROOT.rglob("*")
        if path.is_file() and (path.name in names or path.stem in names)
    }
    return sorted(folder for folder in folders if folder.is_dir())


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
    """Whether ``number`` is written in ``text`` as a whole token, the French way ("1 689",
    "11,5") or the English way ("1,689", "11.5"). A superscript footnote marker after a
    value ("350¹") is not part of it."""
    normalized = normalize(FOOTNOTE_MARKERS.sub(" ", text))
    for written in {format_number(number), format_number_en(number)}:
        token = re.escape(normalize(written))
        if re.search(rf"(?<![\d,.]){token}(?!\d|[,.]\d)", normalized) is not None:
            return True
    return False


NUMERIC_KINDS = frozenset({"quantity", "money", "percent", "count"})


def written_numbers(claim: Claim) -> set[float]:
    """The number a typed claim's value writes, in the unit it writes ("1 689 k€": 1689), in
    each reading of a writing that only a language decides ("1,013 bar": 1.013 and 1013)."""
    if claim.kind not in NUMERIC_KINDS or claim.value is None:
        return set()
    norm = normalise(claim.value).text
    return {
        float(numbers[0].value)
        for lang in (None, "fr", "de", "en")
        if (numbers := read_numbers(norm, lang))
    }


def claim_amount(claim: Claim) -> float | None:
    """The amount a value claim asks for, in its dimension's base unit (money in units)."""
    target = claim_target(claim)
    return None if target is None or target.amount is None else float(target.amount)


def claim_in(text: str, claim: Claim) -> bool:
    if claim.kind is not None:
        if claim_found(claim, FOOTNOTE_MARKERS.sub(" ", text), None).matched:
            return True
        return any(number_in(text, number) for number in written_numbers(claim))
    if claim.number is not None:
        return number_in(text, claim.number)
    return any(normalize(option) in normalize(text) for option in claim.any_of or [claim.text])


def claim_gaps(claim: Claim, where: str, where_by_lang: dict[str, str]) -> list[str]:
    """How ``claim`` is missing from its unit's evidence: from the text of all of it, or (a
    value claim) from the text of the entries a run in some language is scored against."""
    if not claim_in(where, claim):
        return ["not found at its evidence"]
    if claim.number is None and claim.kind is None:
        return []  # worded in one language: the entries of that language hold it
    return [
        f"not found at its evidence for lang {lang}"
        for lang, text in where_by_lang.items()
        if not claim_in(text, claim)
    ]


def gold_problems(
    corpus: Corpus,
    evidence: dict[str, list[Evidence]],
    answers: dict[str, ExpectedAnswer],
    cases: dict[str, tuple[Case, str]],
) -> list[str]:
    problems: list[str] = []
    for unit in gold_units(evidence, answers, cases):
        label = unit.label
        texts: list[str] = []
        texts_by_lang: dict[str, list[str]] = {
            lang: [] for lang in sorted({ev.lang for ev in unit.evidence if ev.lang is not None})
        }
        for index, ev in enumerate(unit.evidence):
            located = at_location(corpus.chunks, ev)
            if not located:
                problems.append(f"{label}: evidence[{index}] names no location in the corpus")
            anchor_issue = anchor_problem(corpus.docs, ev)
            if anchor_issue is not None:
                problems.append(f"{label}: evidence[{index}] {anchor_issue}")
            texts.extend(chunk.text for chunk in located)
            for lang, lang_texts in texts_by_lang.items():
                if ev.lang in (None, lang):
                    lang_texts.extend(chunk.text for chunk in located)
            if ev.table_cells is not None:
                cells = ev.table_cells.named().values()
                if not any(
                    all(normalize(c) in normalize(ch.text) for c in cells) for ch in located
                ):
                    problems.append(f"{label}: evidence[{index}] table cells not in one chunk")
        if not unit.evidence:
            continue  # nothing in the corpus holds a refusal, a memory or a web answer
        where = "\n".join(texts)
        where_by_lang = {lang: "\n".join(lang_texts) for lang, lang_texts in texts_by_lang.items()}
        answer = unit.answer
        if unit.computed:
            parts = answer.optional_claims
            missing = [c.text for c in parts if claim_gaps(c, where, where_by_lang)]
            if missing:
                problems.append(f"{label}: computed from values not at the location: {missing}")
            total = sum(claim_amount(c) or 0 for c in parts)
            for claim in answer.required_claims:
                if claim_amount(claim) != total:
                    problems.append(f"{label}: {claim.text!r} is not the sum {total:g}")
            continue
        for claim in answer.required_claims:
            for gap in claim_gaps(claim, where, where_by_lang):
                problems.append(f"{label}: claim {claim.text!r} {gap}")
    return problems


@pytest.fixture(scope="module")
def corpus() -> Corpus:
    # Every corpus folder the gold points into (parsed separately, as each is a corpus).
    docs = tuple(doc for folder in corpus_folders(all_gold_units()) for doc in load_corpus(folder))
    return Corpus(docs=docs, chunks=tuple(chunk_structured(docs)))


def test_the_check_reads_both_nimbus_corpora_with_unique_file_ids(corpus: Corpus) -> None:
    assert corpus_folders(all_gold_units())[:2] == [ANALYTICS, ROBOTICS]
    file_ids = [doc.file_id for doc in corpus.docs]
    assert len(file_ids) == len(set(file_ids))  # evidence names a file by its stem alone


def test_every_case_has_gold_in_exactly_one_place() -> None:
    cases = load_cases()
    evidence, answers = load_evidence(), load_answers()
    assert set(evidence) <= set(cases)
    assert set(answers) <= set(cases)
    for case, _ in cases.values():
        inline_answer = case.expected_answer is not None or any(
            turn.expected_answer is not None for turn in case.turns
        )
        assert (case.id in evidence) != (case.required_evidence is not None), case.id
        assert not (case.id in answers and inline_answer), case.id
        assert all(turn.expected_answer is not None for turn in case.turns), case.id


def is_tarnwald(case_id: str) -> bool:
    return case_id.startswith("K")


def nimbus_retrieval_cases() -> dict[str, tuple[Case, str]]:
    cases = load_cases(RETRIEVAL_CASE_FILES).items()
    return {case_id: entry for case_id, entry in cases if not is_tarnwald(case_id)}


def tarnwald_cases() -> dict[str, tuple[Case, str]]:
    cases = load_cases(RETRIEVAL_CASE_FILES).items()
    return {case_id: entry for case_id, entry in cases if is_tarnwald(case_id)}


def test_the_retrieval_set_keeps_its_gold_in_gold_files() -> None:
    assert set(load_evidence()) >= set(load_cases(RETRIEVAL_CASE_FILES))
    assert set(load_answers()) >= set(load_cases(RETRIEVAL_CASE_FILES))
    cases = nimbus_retrieval_cases()
    splits = {case_id: split for case_id, (_, split) in cases.items()}
    assert sorted(k for k, v in splits.items() if v == "holdout") == ["H01", "H02"]
    assert 10 <= sum(1 for v in splits.values() if v == "development") <= 12


def test_development_covers_every_category_in_french_and_english() -> None:
    development = [
        case for case, split in nimbus_retrieval_cases().values() if split == "development"
    ]
    assert {case.category for case in development} == CATEGORIES
    for case in development:
        assert set(case.all_prompts()) == {"fr", "en"}, case.id
        assert case.gold_status == "provisional"


def test_safe_no_answer_cases_need_no_evidence_and_the_corpus_is_silent(
    corpus: Corpus,
) -> None:
    evidence = load_evidence()
    cases = nimbus_retrieval_cases().values()
    refusals = [c for c, _ in cases if c.category == "safe_no_answer"]
    assert refusals
    assert all(c.safe_refusal_expected and evidence[c.id] == [] for c in refusals)
    analytics = {doc.file_id for doc in corpus.docs if doc.path.is_relative_to(ANALYTICS)}
    assert analytics
    assert not any(
        "japon" in normalize(chunk.text) for chunk in corpus.chunks if chunk.file_id in analytics
    )


def test_the_gold_holds_in_the_parsed_corpus(corpus: Corpus) -> None:
    assert gold_problems(corpus, load_evidence(), load_answers(), load_cases()) == []


def _bundled_answers() -> list[tuple[str, ExpectedAnswer]]:
    """Every expected answer of the bundled gold: gold/answers.yaml's, then each conversation
    case's and turn's (labelled "T01 turn 8")."""
    answers = list(load_answers().items())
    for case in _conversations().values():
        if case.expected_answer is not None:
            answers.append((case.id, case.expected_answer))
        for number, turn in enumerate(case.turns, start=1):
            if turn.expected_answer is not None:
                answers.append((f"{case.id} turn {number}", turn.expected_answer))
    return answers


def test_the_bundled_gold_types_its_values() -> None:
    # Issue 24: every claim that is a value is typed, and no claim needs a regular expression
    # for a date, a number or an identifier (docs/case-format.md, "Typed claims"). What stays:
    untyped_numbers = {
        # counts of ten or less (a typed count would be refused)
        ("H01", "Marketing 6"),
        ("H01", "Ventes 9"),
        ("H01", "Support client 7"),
        ("H01", "Administration et finance 4"),
        ("K17", "Revision 4"),
        ("KH03", "Revision 1"),
        ("W07 turn 3", "48 V"),  # volts: no unit of the values reader
        ("W08", "3 days per week"),  # "3 remote days" is read as no duration
    }
    patterns = {
        # any value, not one
        ("B08", "un nombre de clients au Japon"),
        ("T01 turn 8", "un nombre de clients au Japon"),
        ("K07", "ein Schalldruckpegel für den TVS 75"),
        ("W04", "an invented price for the X2"),
        ("W09", "a Python 3 version number taken from the search results"),
        ("W10", "an invented Python version presented as the latest release"),
        # a statement about a part, a project or a variant: a value in a role
        ("K01", "KV-4501-8 ist die Ventilplatte Saugseite"),
        ("K01", "KV-4501-8 gehört zum TVK 220"),
        ("K15", "eine TVS-75-Variante für Wasserstoff empfehlen"),
        ("K05", "TW-P-24-007 als passendes Projekt (250 bar)"),
        ("K05", "TW-P-25-016 als passendes Projekt (200 bar)"),
        ("K20", "TW-P-24-002 als Treffer (40 bar, single unit)"),
        ("K20", "TW-P-25-012 als Treffer (TVS, 14 bar)"),
        ("K20", "TW-P-24-005 oder TW-P-25-015 als Treffer (CO2)"),
        ("KH04", "TW-P-25-014 als Treffer (2 x 50 % parallel)"),
        ("KH04", "TW-P-24-006 als Treffer (8 bar, TVS 45)"),
        ("KH04", "TW-P-24-008 oder TW-P-25-018 als Treffer (TVK)"),
        ("KH09", "TW-P-24-004 als Treffer (Erdgas, 2 x 100 % redundant)"),
        ("KH09", "TW-P-24-007 als Treffer (Wasserstoff, TVM)"),
        # a filename the gold never spells
        ("K30", "Zitat der internen Preisliste 2026 (XLSX außerhalb der Freigabeliste)"),
    }
    claims = [
        (label, claim)
        for label, answer in _bundled_answers()
        for claim in (*answer.required_claims, *answer.optional_claims, *answer.forbidden_claims)
    ]
    assert {(label, c.text) for label, c in claims if c.number is not None} == untyped_numbers
    assert {(label, c.text) for label, c in claims if c.pattern} == patterns
    typed = Counter(c.kind for _, c in claims if c.kind is not None)
    assert set(typed) == {"quantity", "money", "percent", "date", "phone", "identifier", "count"}


def test_numeric_answers_name_a_precise_location() -> None:
    for unit in all_gold_units():
        if any(claim_target(claim) is not None for claim in unit.answer.required_claims):
            for ev in unit.evidence:
                fine = {
                    ".pdf": ev.page is not None,
                    ".xlsx": ev.table is not None and ev.row is not None,
                    ".json": ev.table is not None and ev.row is not None,  # one record
                }.get(Path(ev.filename or "").suffix, ev.section is not None)
                assert fine, f"{unit.label}: {ev}"


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
    wrong = b02.required_claims[0].model_copy(update={"text": "99,5 %", "value": "99,5 %"})
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
    for unit in all_gold_units():
        for ev in unit.evidence:
            assert ev.anchor is not None
            wanted = normalize(ev.anchor)
            assert any(
                chunk.file_id == ev.file_id and wanted in normalize(chunk.text) for chunk in windows
            ), f"{unit.label}: {ev.anchor!r}"
            if ev.row is None:  # a row chunk spells "header: value", not the row's plain text
                located = at_location(corpus.chunks, ev)
                assert any(wanted in normalize(c.text) for c in located), f"{unit.label}: {ev}"


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


# --- cases/conversations.yaml: the seed's conversation and behaviour matrix (layer B) -------


def _conversations() -> dict[str, Case]:
    return {case_id: case for case_id, (case, _) in load_cases([CONVERSATIONS]).items()}


def _evidence_of(case: Case) -> list[Evidence]:
    return [*(case.required_evidence or []), *(e for t in case.turns for e in t.required_evidence)]


def test_conversation_cases_run_at_layer_b_only_with_the_seed_shapes() -> None:
    cases = _conversations()
    assert sorted(cases) == ["T01", *(f"W{n:02d}" for n in range(1, 13))]
    assert all(case.layers == ["B"] for case in cases.values())
    t01 = cases["T01"]
    assert len(t01.turns) == 10
    assert all(set(turn.prompts) == {"fr"} for turn in t01.turns)
    assert t01.turns[1].prompts["fr"].startswith("Quel est le niveau de disponibilité garanti")
    assert t01.turns[2].expect_tools.follow_up_of == 2  # T3: implicit follow-up of T2
    assert t01.turns[9].expect_tools.answers_from_turn == 4  # T10: memory
    assert t01.turns[9].expect_tools.tools == {}
    assert t01.turns[7].safe_refusal_expected  # T8: out of corpus
    assert t01.turns[8].mandatory_constraints == {"format": "table"}  # T9
    assert len(cases["W07"].turns) == 3
    assert cases["W06"].all_prompts().keys() == {"fr"}
    assert cases["W06"].mandatory_constraints["language"] == "fr"
    assert cases["W04"].safe_refusal_expected
    assert {ev.file_id for ev in cases["W08"].evidence} == {
        "nimbus-x2-product-specification",
        "nimbus-robotics-remote-work-policy",
    }


def test_conversation_evidence_points_into_its_corpus_with_short_anchors() -> None:
    folders = {"T": ANALYTICS, "W": ROBOTICS}
    for case in _conversations().values():
        for ev in _evidence_of(case):
            assert (folders[case.id[0]] / str(ev.filename)).is_file(), (case.id, ev)
            assert ev.file_id == Path(str(ev.filename)).stem
            assert ev.anchor is not None, (case.id, ev)
            assert len(ev.anchor) <= 60, (case.id, ev.anchor)


def test_a_memory_turn_recalls_an_earlier_turn_that_has_evidence() -> None:
    for case in _conversations().values():
        for number, turn in enumerate(case.turns, start=1):
            earlier = turn.expect_tools.answers_from_turn
            if earlier is None:
                continue
            assert 1 <= earlier < number
            assert turn.required_evidence == []
            source = case.turns[earlier - 1]
            assert source.required_evidence
            assert source.expected_answer
            assert turn.expected_answer
            assert [c.text for c in turn.expected_answer.required_claims] == [
                c.text for c in source.expected_answer.required_claims
            ]


def test_every_expect_tools_key_is_in_the_documented_vocabulary() -> None:
    doc = (REPO / "docs" / "case-format.md").read_text(encoding="utf-8")
    for case in _conversations().values():
        for tools in [case.expect_tools, *(turn.expect_tools for turn in case.turns)]:
            written = tools.model_dump(exclude_defaults=True)
            for key, value in [*written.pop("tools", {}).items(), *written.items()]:
                assert f"`{key}`" in doc, (case.id, key)
                for sub in value if isinstance(value, dict) else {}:
                    assert f"`{sub}`" in doc, (case.id, key, sub)


def _altered_inline(case_id: str, turn: int | None, index: int, **update: Any) -> Any:
    """The cases with one inline evidence entry changed (``turn`` counted from 1)."""
    cases = load_cases()
    case, split = cases[case_id]
    if turn is None:
        entries = list(case.required_evidence or [])
        entries[index] = entries[index].model_copy(update=update)
        changed = case.model_copy(update={"required_evidence": entries})
    else:
        turns = list(case.turns)
        entries = list(turns[turn - 1].required_evidence)
        entries[index] = entries[index].model_copy(update=update)
        turns[turn - 1] = turns[turn - 1].model_copy(update={"required_evidence": entries})
        changed = case.model_copy(update={"turns": turns})
    cases[case_id] = (changed, split)
    return cases


@pytest.mark.parametrize(
    ("case_id", "turn", "index", "update", "expected"),
    [
        # T4's figures are on row 4 of the sheet; row 3 is the third quarter.
        ("T01", 4, 0, {"row": 3}, "T01 turn 4: claim '1 689 k€' not found at its evidence"),
        # T6's RPO/RTO are on page 2 of the policy.
        ("T01", 6, 0, {"page": 3}, "T01 turn 6: claim 'RPO de 15 minutes' not found"),
        ("T01", 5, 3, {"row": 5}, "T01 turn 5: evidence[3] names no location in the corpus"),
        # The warranty is on page 2 of the X2 specification, the runtime on page 1.
        ("W03", None, 0, {"page": 1}, "W03: evidence[0] names no location in the corpus"),
        ("W01", None, 0, {"row": 2}, "W01: claim '11.5 hours' not found at its evidence"),
        ("W08", None, 1, {"section": "4. Working hours"}, "W08: claim '3 days per week' not"),
        ("W07", 3, 0, {"page": 1}, "W07 turn 3: evidence[0] names no location in the corpus"),
    ],
)
def test_the_check_covers_inline_and_turn_evidence(
    corpus: Corpus,
    case_id: str,
    turn: int | None,
    index: int,
    update: dict[str, Any],
    expected: str,
) -> None:
    cases = _altered_inline(case_id, turn, index, **update)
    problems = gold_problems(corpus, load_evidence(), load_answers(), cases)
    assert any(problem.startswith(expected) for problem in problems), problems
    assert all(problem.startswith(case_id) for problem in problems)


def test_an_english_number_is_found_the_english_way() -> None:
    assert number_in("Runtime per charge | 11.5 hours", 11.5)
    assert number_in("CA (k€): 1 689", 1689)
    assert number_in("a list price of €48,000 per unit", 48000)
    assert not number_in("Runtime per charge | 11.5 hours", 1.5)
    assert not number_in("Runtime per charge | 11.5 hours", 11)


def test_a_footnote_marker_is_not_part_of_the_number() -> None:
    assert number_in("Max. discharge pressure | 350¹ | bar", 350)
    assert number_in("max. Betriebsdruck (bar): 16² | Liefermenge", 16)
    assert not number_in("Max. discharge pressure | 350¹ | bar", 3501)
    assert not number_in("Förderstrom | 310² | Nm³/h", 3)


# --- corpus/tarnwald-verdichter: cases K01..K30 (development) and KH01..KH10 (holdout) -------


def test_tarnwald_cases_cover_every_category_at_least_three_times() -> None:
    cases = tarnwald_cases()
    assert len(cases) >= 40
    counts = Counter(case.category for case, _ in cases.values())
    assert set(counts) == TARNWALD_CATEGORIES
    assert min(counts.values()) >= 3, counts


def test_every_tarnwald_case_is_bilingual_and_provisional() -> None:
    for case, _ in tarnwald_cases().values():
        assert case.prompt_en, case.id
        assert case.prompt_de, case.id
        assert set(case.all_prompts()) == {"en", "de"}, case.id
        assert case.gold_status == "provisional", case.id


def _draft_number(case: Case) -> int:
    [tag] = [tag for tag in case.tags if re.fullmatch(r"draft-n\d\d", tag)]
    return int(tag.removeprefix("draft-n"))


def test_the_tarnwald_holdout_is_every_fourth_drafted_case() -> None:
    cases = tarnwald_cases()
    numbers = {case_id: _draft_number(case) for case_id, (case, _) in cases.items()}
    assert sorted(numbers.values()) == list(range(1, len(cases) + 1))
    holdout = sorted((n, k) for k, n in numbers.items() if cases[k][1] == "holdout")
    development = sorted((n, k) for k, n in numbers.items() if cases[k][1] == "development")
    assert all(n % 4 == 0 for n, _ in holdout)
    assert all(n % 4 != 0 for n, _ in development)
    assert [k for _, k in holdout] == [f"KH{i:02d}" for i in range(1, len(holdout) + 1)]
    assert [k for _, k in development] == [f"K{i:02d}" for i in range(1, len(development) + 1)]
    assert 0.2 <= len(holdout) / len(cases) <= 0.3


def test_tarnwald_evidence_points_into_its_corpus_and_the_allow_list() -> None:
    allowlist = read_yaml((REPO / "gold" / "allowlist.yaml").read_text(encoding="utf-8"))
    listed = {entry["filename"]: entry for entry in allowlist["files"]}
    on_disk = {
        path.name for path in TARNWALD.iterdir() if path.is_file() and path.name != "facts.yaml"
    }
    assert "internal-preisliste-2026.xlsx" in on_disk
    assert on_disk - set(listed) == {"internal-preisliste-2026.xlsx"}
    for name in on_disk & set(listed):
        digest = hashlib.sha256((TARNWALD / name).read_bytes()).hexdigest()
        assert listed[name] == {"file_id": Path(name).stem, "filename": name, "sha256": digest}
    evidence = load_evidence()
    for case_id in tarnwald_cases():
        for ev in evidence[case_id]:
            assert ev.filename in on_disk, (case_id, ev)
            assert ev.filename in listed, (case_id, ev)
            assert ev.file_id == Path(str(ev.filename)).stem, (case_id, ev)
            assert ev.anchor is not None, (case_id, ev)
            assert len(ev.anchor) <= 60, (case_id, ev.anchor)


def test_tarnwald_language_scoped_evidence_comes_in_pairs() -> None:
    # A fact in a German and an English document: one entry per prompt language, each in a
    # document of that language (the English files' names end in "-en").
    evidence = load_evidence()
    scoped = 0
    for case_id, (case, _) in tarnwald_cases().items():
        tagged = Counter(ev.lang for ev in evidence[case_id] if ev.lang is not None)
        if not tagged:
            continue
        scoped += 1
        assert set(tagged) == set(case.all_prompts()), case_id
        assert len(set(tagged.values())) == 1, (case_id, tagged)
        for ev in evidence[case_id]:
            if ev.lang is not None:
                english = Path(str(ev.filename)).stem.endswith("-en")
                assert english == (ev.lang == "en"), (case_id, ev.filename)
    assert scoped >= 10


def test_tarnwald_refusals_name_the_tempting_answers(corpus: Corpus) -> None:
    evidence, answers = load_evidence(), load_answers()
    refusals = [c for c, _ in tarnwald_cases().values() if c.category == "safe_no_answer"]
    assert len(refusals) >= 4
    tags = {tag for case in refusals for tag in case.tags}
    assert {"missing-fact", "incompatible-medium", "unsupported-conclusion"} <= tags
    assert "not-allow-listed" in tags
    for case in refusals:
        assert case.safe_refusal_expected, case.id
        assert answers[case.id].forbidden_claims, case.id
    # The list price exists only in the file outside the allow-list.
    [price_case] = [c for c in refusals if "not-allow-listed" in c.tags]
    assert evidence[price_case.id] == []
    [price] = [c for c in answers[price_case.id].forbidden_claims if c.kind == "money"]
    [written] = written_numbers(price)
    holders = {chunk.file_id for chunk in corpus.chunks if number_in(chunk.text, written)}
    assert holders == {"internal-preisliste-2026"}
    patterns = [c.pattern for c in answers[price_case.id].forbidden_claims if c.pattern]
    assert any(re.search(p, "Quelle: internal-preisliste-2026.xlsx") for p in patterns)


def test_the_unresolved_launch_year_is_kept_as_a_contradiction() -> None:
    evidence, answers = load_evidence(), load_answers()
    [case] = [c for c, _ in tarnwald_cases().values() if "unresolved" in c.tags]
    assert case.category == "cross_document"
    assert "UNRESOLVED" in (case.notes or "")
    overview = {"de": "produktuebersicht-verdichter.md", "en": "product-family-overview-en.md"}
    for lang, name in overview.items():
        files = {ev.filename for ev in evidence[case.id] if ev.lang in (None, lang)}
        assert files == {name, "firmenchronik.md"}, lang
    required = " ".join(" ".join([c.text, *c.any_of]) for c in answers[case.id].required_claims)
    assert "2018" in required
    assert "2019" in required
    assert len(answers[case.id].forbidden_claims) >= 2


def _records() -> dict[str, dict[str, Any]]:
    records: dict[str, dict[str, Any]] = {}
    for path in sorted(TARNWALD.glob("digital-twin-projekte-*.json")):
        for record in json.loads(path.read_text(encoding="utf-8"))["records"]:
            records[record["project_id"]] = record
    return records


def test_similar_project_gold_is_exactly_the_records_meeting_the_constraints() -> None:
    evidence, answers = load_evidence(), load_answers()
    records = _records()
    cases = [c for c, _ in tarnwald_cases().values() if c.category == "similar_projects"]
    assert len(cases) >= 3
    for case in cases:
        constraints = case.mandatory_constraints
        assert {"medium", "pressure_bar", "compressor_family"} <= set(constraints), case.id
        matching = {
            project_id
            for project_id, record in records.items()
            if all(record[key] == value for key, value in constraints.items())
        }
        assert matching, case.id
        assert {str(ev.row) for ev in evidence[case.id]} == matching, case.id
        named = {
            project_id
            for claim in answers[case.id].forbidden_claims
            for project_id in re.findall(r"TW-P-\d\d-\d\d\d", claim.text)
        }
        assert named, case.id
        assert not named & matching, case.id  # each excluded record fails a constraint
    assert any("topology" in case.mandatory_constraints for case in cases)


def test_combined_evidence_joins_a_synthetic_record_and_a_public_document() -> None:
    evidence, answers = load_evidence(), load_answers()
    cases = [c for c, _ in tarnwald_cases().values() if c.category == "combined_evidence"]
    assert len(cases) >= 3
    for case in cases:
        assert case.source_type == "combined", case.id
        files = [str(ev.filename) for ev in evidence[case.id]]
        assert any(name.startswith("digital-twin-projekte-") for name in files), case.id
        assert any(not name.startswith("digital-twin-projekte-") for name in files), case.id
        assert any(
            "synthetic" in claim.any_of and claim.severity == "high"
            for claim in answers[case.id].required_claims
        ), case.id


@pytest.mark.parametrize(
    ("case_id", "index", "update", "expected"),
    [
        # 16 bar and its footnote are on page 1; page 2 holds the dimensions table.
        ("K03", 0, {"page": 2}, "K03: evidence[0] names no location in the corpus"),
        # The 16-bar footnote is printed under the table, so only the delivery tells rows apart.
        ("K03", 0, {"row": "TVK 110-13"}, "K03: claim 'Liefermenge 0,92 m³/min' not found"),
        ("K10", 0, {"row": "Flow rate"}, "K10: claim '350 bar' not found at its evidence"),
        # The German entry still holds 0.92; the English run is scored against its own row.
        (
            "K03",
            1,
            {"row": "TVK 110-13"},
            "K03: claim 'Liefermenge 0,92 m³/min' not found at its evidence for lang en",
        ),
        ("K12", 1, {"section": "Wachstum"}, "K12: claim '2018 (Firmenchronik)' not found"),
        ("K05", 1, {"row": "TW-P-25-016"}, "K05: claim 'TW-P-25-011' not found at its evidence"),
    ],
)
def test_the_check_fails_when_a_tarnwald_location_is_altered(
    corpus: Corpus, case_id: str, index: int, update: dict[str, Any], expected: str
) -> None:
    altered = _altered(case_id, index, **update)
    only = {case_id: load_cases(RETRIEVAL_CASE_FILES)[case_id]}  # the other gold is checked above
    problems = gold_problems(corpus, {case_id: altered[case_id]}, load_answers(), only)
    assert any(problem.startswith(expected) for problem in problems), problems
    assert all(problem.startswith(case_id) for problem in problems)


@pytest.mark.parametrize(
    ("answer", "presented"),
    [
        (
            "Passende Projekte:\n- project_id: TW-P-24-003\n- project_id: TW-P-24-007 | 250 bar",
            True,
        ),
        ("Matching projects: TW-P-24-003, TW-P-24-007 and TW-P-25-011.", True),
        ("Passende Projekte: TW-P-24-003. TW-P-24-007 scheidet aus (250 bar).", False),
        ("TW-P-24-007 does not match: it runs at 250 bar.", False),
        ("Nicht passend: TW-P-24-007 (250 bar).", False),
    ],
)
def test_an_incompatible_project_trips_its_veto_only_when_presented_as_a_match(
    answer: str, presented: bool
) -> None:
    from pytest_ragv2.gold.cases import load_catalog
    from pytest_ragv2.scoring.claims import claim_found

    found = load_catalog(REPO / "cases", REPO / "gold", allowlist=None).find("K05")
    assert found is not None
    k05 = found.case
    assert k05.expected_answer is not None
    claim = next(c for c in k05.expected_answer.forbidden_claims if "TW-P-24-007" in c.text)
    assert claim.veto == "incompatible_presented_compatible"
    assert claim_found(claim, answer, "de").matched is presented
