"""The parsers read the committed Nimbus Analytics documents with their real structure."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragv2_demo.parsers import Block, ParsedDocument, format_number, parse_document

CORPUS = Path(__file__).resolve().parents[2] / "corpus" / "nimbus-analytics"


@pytest.fixture(scope="module")
def docs() -> dict[str, ParsedDocument]:
    return {
        path.name: parse_document(path)
        for path in sorted(CORPUS.glob("*.*"))
        if path.suffix != ".yaml"
    }


def rows_of(doc: ParsedDocument, table: str) -> list[Block]:
    return [b for b in doc.blocks if b.kind == "table_row" and b.table == table]


def text_of(doc: ParsedDocument, section: str) -> str:
    return " ".join(b.text for b in doc.blocks if b.kind == "text" and b.section == section)


def test_identity_fields(docs: dict[str, ParsedDocument]) -> None:
    doc = docs["politique-securite.pdf"]
    assert (doc.file_id, doc.filename, doc.format) == (
        "politique-securite",
        "politique-securite.pdf",
        "pdf",
    )
    assert doc.title == "Politique de sécurité des systèmes d'information"


def test_pdf_pages_are_one_based_and_facts_sit_on_different_pages(
    docs: dict[str, ParsedDocument],
) -> None:
    doc = docs["politique-securite.pdf"]
    assert doc.page_count == 3
    assert {b.page for b in doc.blocks} == {1, 2, 3}
    sections_by_page = {
        page: [b.section for b in doc.blocks if b.kind == "heading" and b.level and b.page == page]
        for page in (1, 2, 3)
    }
    assert sections_by_page == {
        1: ["1. Objet et périmètre", "2. Hébergement des données", "3. Chiffrement"],
        2: ["4. Continuité d'activité", "5. Journalisation et traçabilité"],
        3: ["6. Certifications", "7. Gestion des incidents", "8. Revue de la politique"],
    }
    page_text = {p: " ".join(b.text for b in doc.blocks if b.page == p) for p in (1, 2, 3)}
    assert "OVHcloud à Gravelines" in page_text[1]
    assert "TLS 1.3" in page_text[1]
    assert "15 minutes" in page_text[2]
    assert "4 heures" in page_text[2]
    assert "18 mois" in page_text[2]
    assert "novembre 2023" in page_text[3]
    assert "72 heures" in page_text[3]
    assert "(RTO) est de 4 heures" in text_of(doc, "4. Continuité d'activité")


def test_markdown_heading_paths_exclude_the_document_title(docs: dict[str, ParsedDocument]) -> None:
    doc = docs["guide-produit-nimbus.md"]
    assert doc.title == "Guide produit Nimbus Analytics"
    assert doc.sections()[:5] == [
        "1. Présentation de la plateforme",
        "2. Offres et tarifs",
        "2. Offres et tarifs > 2.1 Starter",
        "2. Offres et tarifs > 2.2 Business",
        "2. Offres et tarifs > 2.3 Enterprise",
    ]
    assert "facturé 89 € HT par mois" in text_of(doc, "2. Offres et tarifs > 2.1 Starter")
    assert "11,4 %" in text_of(doc, "5. Module NimbusPredict > 5.3 Précision des prévisions")


def test_markdown_pipe_table_rows_with_header_and_footnote(docs: dict[str, ParsedDocument]) -> None:
    doc = docs["faq-support.md"]
    rows = rows_of(doc, "Délais de réponse du support")
    assert [(r.row, r.row_key, r.cells[1]) for r in rows] == [
        (1, "Starter", "48 h ouvrées"),
        (2, "Business", "8 h ouvrées"),
        (3, "Enterprise", "1 h"),
    ]
    assert rows[0].header == ("Plan", "Délai de première réponse", "Disponibilité du support")
    assert rows[0].section == "Délais de réponse du support"
    assert rows[0].footnote is not None
    assert rows[0].footnote.startswith("Note : le délai")
    assert "+33 2 85 52 41 90" in text_of(doc, "Astreinte technique")


def test_docx_clauses_are_heading_paths(docs: dict[str, ParsedDocument]) -> None:
    doc = docs["contrat-cadre-meridia.docx"]
    assert doc.title == "Contrat-cadre de services SaaS — Nimbus Analytics / Meridia Distribution"
    assert "4. Niveaux de service > 4.1 Disponibilité garantie" in doc.sections()
    assert "99,7 %" in text_of(doc, "4. Niveaux de service > 4.1 Disponibilité garantie")
    assert "6 heures par mois" in text_of(doc, "4. Niveaux de service > 4.2 Maintenance programmée")
    assert "préavis de 90 jours" in text_of(doc, "3. Résiliation > 3.1 Résiliation à l'échéance")


def test_docx_table_named_by_its_caption_with_unit_and_note(
    docs: dict[str, ParsedDocument],
) -> None:
    doc = docs["contrat-cadre-meridia.docx"]
    assert doc.tables() == ["Tableau 1 – Redevances mensuelles"]
    rows = rows_of(doc, "Tableau 1 – Redevances mensuelles")
    assert [r.row_key for r in rows] == [
        "Licence plateforme Business",
        "Module NimbusPredict",
        "Connecteurs ERP dédiés",
        "Support Premium",
        "Total mensuel",
    ]
    total = rows[4]
    assert (total.row, total.cells, total.unit) == (5, ("Total mensuel", "", "1 950"), "€ HT")
    assert total.section == "6. Conditions financières"
    assert total.footnote is not None
    assert "indice Syntec" in total.footnote


def test_docx_notes_sections_and_lists(docs: dict[str, ParsedDocument]) -> None:
    doc = docs["notes-comite-strategie.docx"]
    assert "3. Feuille de route produit > 3.3 Projet « Cumulus »" in doc.sections()
    decisions = [b.text for b in doc.blocks if b.section == "6. Décisions" and b.kind == "text"]
    assert len(decisions) == 3
    assert all(d.startswith("- ") for d in decisions)


def test_xlsx_sheets_rows_units_and_footnotes(docs: dict[str, ParsedDocument]) -> None:
    doc = docs["resultats-financiers-2025.xlsx"]
    assert doc.tables() == ["CA 2025", "Charges", "Effectifs"]
    revenue = rows_of(doc, "CA 2025")
    t4 = revenue[3]
    assert (t4.row, t4.row_key, t4.unit, t4.section, t4.page) == (4, "T4", "k€", None, None)
    assert t4.header[:3] == ("Trimestre", "CA (k€)", "Nouveaux clients")
    assert t4.cells[:3] == ("T4", "1 689", "33")
    assert t4.caption == "Chiffre d'affaires et nouveaux clients par trimestre — exercice 2025"
    assert t4.footnote == "Chiffres consolidés non audités au 15 janvier 2026."
    assert [r.cells[1] for r in revenue] == ["1 240", "1 378", "1 456", "1 689"]
    headcount = rows_of(doc, "Effectifs")
    assert [(r.row_key, r.cells[1]) for r in headcount] == [
        ("R&D", "21"),
        ("Marketing", "6"),
        ("Ventes", "9"),
        ("Support client", "7"),
        ("Administration et finance", "4"),
        ("Total", "47"),
    ]
    assert headcount[0].unit == "ETP"
    assert len(rows_of(doc, "Charges")) == 5


def test_json_records_and_plain_text(tmp_path: Path) -> None:
    records = [{"id": "P-001", "name": "Projet A", "pressure": 16}, {"id": "P-002", "name": "B"}]
    (tmp_path / "projects.json").write_text(json.dumps(records), encoding="utf-8")
    doc = parse_document(tmp_path / "projects.json")
    assert [(b.kind, b.row, b.row_key, b.table) for b in doc.blocks] == [
        ("record", 1, "P-001", "projects"),
        ("record", 2, "P-002", "projects"),
    ]
    assert doc.blocks[0].text == "id: P-001 | name: Projet A | pressure: 16"
    (tmp_path / "notes.txt").write_text("Premier.\n\n\nSecond\nparagraphe.\n", encoding="utf-8")
    assert [b.text for b in parse_document(tmp_path / "notes.txt").blocks] == [
        "Premier.",
        "Second\nparagraphe.",
    ]


def test_unsupported_suffix_is_refused(tmp_path: Path) -> None:
    (tmp_path / "a.csv").write_text("a,b\n", encoding="utf-8")
    with pytest.raises(ValueError, match="unsupported"):
        parse_document(tmp_path / "a.csv")


@pytest.mark.parametrize(
    ("value", "text"),
    [(1689, "1 689"), (1689.0, "1 689"), (99.7, "99,7"), (5763000, "5 763 000"), (12, "12")],
)
def test_format_number(value: float, text: str) -> None:
    assert format_number(value) == text
