"""The two chunkers and the corpus loader the demo retrieval engine consumes."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from ragv2_demo.chunks import (
    Chunk,
    ParsedDocument,
    chunk_fixed,
    chunk_structured,
    document_text,
    load_corpus,
)
from ragv2_demo.parsers import Block

CORPUS = Path(__file__).resolve().parents[2] / "corpus" / "nimbus-analytics"


@pytest.fixture(scope="module")
def docs() -> list[ParsedDocument]:
    return load_corpus(CORPUS)


@pytest.fixture(scope="module")
def structured(docs: list[ParsedDocument]) -> list[Chunk]:
    return chunk_structured(docs)


def test_load_corpus_reads_the_six_documents_sorted(docs: list[ParsedDocument]) -> None:
    assert [d.filename for d in docs] == [
        "contrat-cadre-meridia.docx",
        "faq-support.md",
        "guide-produit-nimbus.md",
        "notes-comite-strategie.docx",
        "politique-securite.pdf",
        "resultats-financiers-2025.xlsx",
    ]


def test_load_corpus_recurses_and_skips_facts_private_and_unsupported(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    shutil.copy(CORPUS / "faq-support.md", tmp_path / "sub" / "faq-support.md")
    shutil.copy(CORPUS / "facts.yaml", tmp_path / "facts.yaml")
    (tmp_path / "_draft.md").write_text("# brouillon\n", encoding="utf-8")
    (tmp_path / "data.csv").write_text("a,b\n", encoding="utf-8")
    (tmp_path / "b-records.json").write_text(json.dumps([{"id": "R1"}]), encoding="utf-8")
    (tmp_path / "a-notes.txt").write_text("Bonjour.", encoding="utf-8")
    names = [d.filename for d in load_corpus(tmp_path)]
    assert names == ["a-notes.txt", "b-records.json", "faq-support.md"]


def test_fixed_windows_have_the_size_and_overlap_and_no_structure(
    docs: list[ParsedDocument],
) -> None:
    chunks = chunk_fixed(docs, size=200, overlap=40)
    for doc in docs:
        mine = [c for c in chunks if c.file_id == doc.file_id]
        assert [c.chunk_id for c in mine] == [f"{doc.file_id}#{n}" for n in range(len(mine))]
        text, _ = document_text(doc)
        assert len(mine) == len(range(0, len(text) - 40, 160))
        for n, chunk in enumerate(mine):
            assert chunk.text == text[n * 160 : n * 160 + 200].strip()
            assert len(chunk.text) <= 200
            assert (chunk.section, chunk.table, chunk.row, chunk.row_key) == (None,) * 4
            assert chunk.kind == "text"
            assert chunk.filename == doc.filename
            assert (chunk.page is not None) == (doc.format == "pdf")
    by_id = {c.chunk_id: c for c in chunks}
    first, second = by_id["faq-support#0"], by_id["faq-support#1"]
    assert first.text[-40:].strip() in second.text  # the overlap is repeated


def test_fixed_windows_keep_the_page_where_they_start(docs: list[ParsedDocument]) -> None:
    pdf = [d for d in docs if d.format == "pdf"]
    chunks = chunk_fixed(pdf, size=400, overlap=50)
    pages = [c.page or 0 for c in chunks]
    assert pages == sorted(pages)
    assert set(pages) == {1, 2, 3}
    _text, starts = document_text(pdf[0])
    page2_offset = next(offset for offset, page in starts if page == 2)
    straddling = next(c for n, c in enumerate(chunks) if n * 350 < page2_offset < n * 350 + 400)
    assert straddling.page == 1  # starts on page 1 even though it runs into page 2


def test_fixed_rejects_a_bad_window() -> None:
    with pytest.raises(ValueError, match="overlap"):
        chunk_fixed([], size=100, overlap=100)


def test_structured_ids_are_unique_and_stable(
    docs: list[ParsedDocument], structured: list[Chunk]
) -> None:
    ids = [c.chunk_id for c in structured]
    assert len(ids) == len(set(ids))
    assert structured == chunk_structured(load_corpus(CORPUS))
    assert len(structured) >= 30


def test_structured_table_row_carries_name_header_unit_and_note(structured: list[Chunk]) -> None:
    t4 = next(c for c in structured if c.table == "CA 2025" and c.row == 4)
    assert (t4.kind, t4.row_key, t4.unit, t4.file_id) == (
        "table_row",
        "T4",
        "k€",
        "resultats-financiers-2025",
    )
    assert t4.header[:3] == ("Trimestre", "CA (k€)", "Nouveaux clients")
    assert t4.text == (
        "Résultats financiers 2025\n"
        "Sheet CA 2025 | Chiffre d'affaires et nouveaux clients par trimestre — exercice 2025"
        " | Trimestre: T4 | CA (k€): 1 689 | Nouveaux clients: 33"
        " | Clients actifs fin de trimestre: 272 | CA 2024 (k€): 1 312"
        " | unité: k€ | note: Chiffres consolidés non audités au 15 janvier 2026."
    )
    fee = next(c for c in structured if c.row_key == "Total mensuel")
    assert fee.section == "6. Conditions financières"
    assert "Table Tableau 1 – Redevances mensuelles | Prestation: Total mensuel" in fee.text
    assert "Quantité" not in fee.text  # empty cells are left out
    assert "Montant mensuel (€ HT): 1 950" in fee.text


def test_structured_sections_keep_their_path_and_page(structured: list[Chunk]) -> None:
    sla = [
        c for c in structured if c.section == "4. Niveaux de service > 4.1 Disponibilité garantie"
    ]
    assert len(sla) == 1
    assert sla[0].kind == "text"
    assert sla[0].page is None
    assert sla[0].text.startswith(
        "Contrat-cadre de services SaaS — Nimbus Analytics / Meridia Distribution"
        " > 4. Niveaux de service > 4.1 Disponibilité garantie\n"
    )
    assert "99,7 %" in sla[0].text
    pdf = [c for c in structured if c.file_id == "politique-securite"]
    assert [(c.page, c.section) for c in pdf] == [
        (1, None),
        (1, "1. Objet et périmètre"),
        (1, "2. Hébergement des données"),
        (1, "3. Chiffrement"),
        (2, "4. Continuité d'activité"),
        (2, "5. Journalisation et traçabilité"),
        (3, "6. Certifications"),
        (3, "7. Gestion des incidents"),
        (3, "8. Revue de la politique"),
    ]
    # Headings and sheet title/note lines never become chunks of their own.
    assert all(c.kind in {"text", "table_row"} for c in structured)


def _doc(blocks: list[Block]) -> ParsedDocument:
    return ParsedDocument(Path("x.md"), "x", "x.md", "md", tuple(blocks), title="X")


def test_long_sections_split_at_paragraph_boundaries() -> None:
    paragraphs = [f"Paragraphe {n} " + "mot " * 100 for n in range(6)]  # ~415 chars each
    chunks = chunk_structured([_doc([Block(text=p, section="1. Long") for p in paragraphs])])
    assert [c.chunk_id for c in chunks] == ["x#0", "x#1", "x#2"]
    bodies = [c.text.split("\n", 1)[1] for c in chunks]
    assert bodies == ["\n\n".join(paragraphs[i : i + 2]) for i in (0, 2, 4)]
    assert all(c.section == "1. Long" and c.text.startswith("X > 1. Long\n") for c in chunks)


def test_a_single_oversized_paragraph_stays_whole() -> None:
    text = "x" * 3000
    chunks = chunk_structured([_doc([Block(text=text, section="A")])])
    assert len(chunks) == 1
    assert chunks[0].text == "X > A\n" + text


def test_records_become_record_chunks(tmp_path: Path) -> None:
    (tmp_path / "projects.json").write_text(
        json.dumps([{"id": "P-1", "medium": "vapeur"}, {"id": "P-2", "medium": "eau"}]),
        encoding="utf-8",
    )
    chunks = chunk_structured(load_corpus(tmp_path))
    assert [(c.chunk_id, c.kind, c.row, c.row_key, c.text) for c in chunks] == [
        ("projects#0", "record", 1, "P-1", "id: P-1 | medium: vapeur"),
        ("projects#1", "record", 2, "P-2", "id: P-2 | medium: eau"),
    ]
