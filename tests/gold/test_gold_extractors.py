"""Gold that any honest extractor can meet: every gold evidence entry is attainable at full
granularity in the chunks rag_api's own loaders store (tests/extractors.py), not only in the
demo's parsers (tests/gold/test_corpus_gold.py)."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import pytest

from pytest_ragv2.gold.schema import Evidence
from pytest_ragv2.scoring.evidence import FULL_STEP, match_step
from tests.extractors import RAG_API_EXTRACTORS, extract
from tests.gold.test_corpus_gold import CORPUS_ROOT, all_gold_units

pytest.importorskip("langchain_community")


def _corpus_files() -> dict[str, Path]:
    return {path.name: path for path in CORPUS_ROOT.rglob("*") if path.is_file()}


def _entries_by_file() -> dict[str, list[tuple[str, Evidence]]]:
    by_file: dict[str, list[tuple[str, Evidence]]] = defaultdict(list)
    for unit in all_gold_units():
        for ev in unit.evidence:
            by_file[ev.filename or ""].append((unit.label, ev))
    return dict(sorted(by_file.items()))


CASES = [
    (extractor, filename)
    for extractor, readers in RAG_API_EXTRACTORS.items()
    for filename in _entries_by_file()
    if Path(filename).suffix in readers
]


@pytest.mark.parametrize(("extractor", "filename"), CASES)
def test_every_gold_entry_is_attainable_in_what_the_extractor_stores(
    extractor: str, filename: str
) -> None:
    chunks = extract(extractor, _corpus_files()[filename])
    assert chunks, f"{extractor} stored nothing for {filename}"
    unattainable = []
    for label, ev in _entries_by_file()[filename]:
        best = max(match_step(chunk, ev) for chunk in chunks)
        if best < FULL_STEP:
            where = ev.page or ev.section or f"{ev.table} row {ev.row}"
            unattainable.append(f"{label}: {filename} {where} anchor {ev.anchor!r} (step {best})")
    assert unattainable == []


def test_the_check_covers_every_file_type_of_the_gold() -> None:
    types = {Path(filename).suffix for _, filename in CASES}
    assert types == {".pdf", ".docx", ".xlsx", ".json", ".md"}


def test_an_altered_anchor_is_unattainable() -> None:
    filename, entries = next(
        (name, found) for name, found in _entries_by_file().items() if name.endswith(".xlsx")
    )
    label, ev = next((label, ev) for label, ev in entries if ev.row is not None)
    chunks = extract("rag_api loaders", _corpus_files()[filename])
    assert max(match_step(chunk, ev) for chunk in chunks) == FULL_STEP
    altered = ev.model_copy(update={"anchor": (ev.anchor or "") + " | 999999"})
    assert max(match_step(chunk, altered) for chunk in chunks) < FULL_STEP, label
