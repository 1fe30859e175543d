"""Corpus 2 (Tarnwald Verdichtertechnik, German/English) through the demo's parsers and
chunkers: every format parses with its structure, table rows keep header, unit and footnote,
near-miss part numbers stay apart, contradictions are where the gold will look for them,
project records are labelled synthetic, and the non-allow-listed price list is ingested."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest
import yaml

from ragv2_demo.chunks import Chunk, chunk_fixed, chunk_structured, load_corpus
from ragv2_demo.parsers import Block, ParsedDocument, parse_document
from ragv2_demo.render import render_corpus

REPO = Path(__file__).resolve().parents[2]
CORPUS = REPO / "corpus" / "tarnwald-verdichter"


@pytest.fixture(scope="module")
def docs() -> dict[str, ParsedDocument]:
    return {doc.filename: doc for doc in load_corpus(CORPUS)}


@pytest.fixture(scope="module")
def structured(docs: dict[str, ParsedDocument]) -> list[Chunk]:
    return chunk_structured(list(docs.values()))


def rows(doc: ParsedDocument, table: str | None = None) -> list[Block]:
    return [b for b in doc.blocks if b.kind == "table_row" and table in (None, b.table)]


def row(doc: ParsedDocument, key: str) -> Block:
    (found,) = [b for b in rows(doc) if b.row_key == key]
    return found


def text_of(doc: ParsedDocument, section: str) -> str:
    return " ".join(b.text for b in doc.blocks if b.kind == "text" and b.section == section)


def test_at_least_25_documents_in_five_formats(docs: dict[str, ParsedDocument]) -> None:
    assert len(docs) == 27
    assert Counter(d.format for d in docs.values()) == {
        "pdf": 13,
        "docx": 6,
        "md": 4,
        "xlsx": 2,
        "json": 2,
    }
    assert all(doc.title and len(doc.blocks) > 3 for doc in docs.values())


def test_chunk_counts_for_both_chunkers(
    docs: dict[str, ParsedDocument], structured: list[Chunk]
) -> None:
    assert len(structured) >= 150
    assert Counter(c.kind for c in structured) == {"text": 129, "table_row": 115, "record": 16}
    assert len({c.chunk_id for c in structured}) == len(structured)
    fixed = chunk_fixed(list(docs.values()))
    assert len(fixed) >= 90
    assert all(c.kind == "text" and c.table is None for c in fixed)


def test_pdf_datasheet_row_has_page_table_header_unit_and_footnote(
    docs: dict[str, ParsedDocument],
) -> None:
    doc = docs["datenblatt-tvk-110.pdf"]
    assert doc.page_count == 2
    top = row(doc, "TVK 110-16")
    assert (top.page, top.section, top.table, top.row) == (
        1,
        "2. Technische Daten",
        "Tabelle 1 – Betriebsdruck und Liefermenge TVK 110",
        4,
    )
    assert top.header == (
        "Variante",
        "max. Betriebsdruck (bar)",
        "Liefermenge (m³/min)¹",
        "Leistung (kW)",
        "Schalldruck (dBA)",
    )
    assert top.cells == ("TVK 110-16", "16²", "0,92", "11", "74")
    assert top.unit == "bar, m³/min, kW, dBA"
    assert top.footnote == (
        "¹ Liefermenge nach ISO 1217, Anhang C, bei 20 °C Ansaugtemperatur "
        "² max. Betriebsdruck 16 bar nur bei Ansaugtemperatur bis 35 °C"
    )
    weight = row(doc, "Behälter 270 l")
    assert (weight.page, weight.table, weight.cells[-1], weight.unit) == (
        2,
        "Tabelle 2 – Abmessungen TVK 110",
        "412",
        "mm, kg",
    )


def test_pdf_table_notes_end_at_the_first_ordinary_line(tmp_path: Path) -> None:
    table = {
        "caption": "Tabelle 1 – Druck",
        "header": ["Variante", "Druck (bar)¹"],
        "rows": [["A-1", 10], ["A-2", "16²"]],
        "notes": ["¹ bei 20 °C", "² nur bis 35 °C"],
    }
    page = [{"h1": "2. Daten"}, {"table": table}, {"p": "Weitere Angaben im Handbuch."}]
    document = {"filename": "t.pdf", "format": "pdf", "title": "T", "pages": [page]}
    spec = {"facts": {}, "documents": [document]}
    (tmp_path / "facts.yaml").write_text(yaml.safe_dump(spec, allow_unicode=True), "utf-8")
    render_corpus(tmp_path / "facts.yaml", tmp_path)
    blocks = parse_document(tmp_path / "t.pdf").blocks
    assert [(b.kind, b.text, b.footnote) for b in blocks[2:]] == [
        ("text", "Tabelle 1 – Druck", None),
        ("table_row", "A-1 | 10", "¹ bei 20 °C ² nur bis 35 °C"),
        ("table_row", "A-2 | 16²", "¹ bei 20 °C ² nur bis 35 °C"),
        ("text", "¹ bei 20 °C ² nur bis 35 °C", None),
        ("text", "Weitere Angaben im Handbuch.", None),
    ]
    assert {b.unit for b in blocks if b.kind == "table_row"} == {"bar"}


def test_structured_chunk_of_a_datasheet_row_reads_on_its_own(structured: list[Chunk]) -> None:
    (chunk,) = [
        c for c in structured if c.file_id == "datasheet-tvs-75-en" and c.row_key == "TVS 75-14"
    ]
    assert (chunk.kind, chunk.page, chunk.row, chunk.unit) == ("table_row", 1, 3, "bar, m³/min, kW")
    assert chunk.text == (
        "Datasheet screw compressor TVS 75 > 2. Technical data\n"
        "Table Table 1 – Operating pressure and free air delivery TVS 75 | Variant: TVS 75-14"
        " | Max. operating pressure (bar): 14² | Free air delivery (m³/min)¹: 9.8"
        " | Motor power (kW): 75 | unité: bar, m³/min, kW"
        " | note: ¹ to ISO 1217, Annex C, at 20 °C intake temperature"
        " ² from design revision D; up to revision C max. 13 bar"
    )


def _numbers(cells: tuple[str, ...], english: bool) -> list[str]:
    """Every number in the cells, written one way: "1 689,5" / "1,689.5" -> "1689.5"."""
    text = " ; ".join(cells)
    if english:
        text = re.sub(r"(\d),(\d{3})", r"\1\2", text)
    else:
        text = re.sub(r"(\d),(\d)", r"\1.\2", re.sub(r"(\d) (\d{3})", r"\1\2", text))
    return re.findall(r"\d+(?:\.\d+)?", text)


@pytest.mark.parametrize(
    ("german", "english"),
    [
        ("datenblatt-tvk-110.pdf", "datasheet-tvk-110-en.pdf"),
        ("datenblatt-tvk-220.pdf", "datasheet-tvk-220-en.pdf"),
        ("datenblatt-tvs-75.pdf", "datasheet-tvs-75-en.pdf"),
        ("datenblatt-tvm-30-h2.pdf", "datasheet-tvm-30-h2-en.pdf"),
        ("zertifikat-dgr-tvk-baureihe.pdf", "certificate-ped-tvk-series-en.pdf"),
        ("zertifikat-iso-9001.docx", "certificate-iso-9001-en.docx"),
        ("betriebsanleitung-tvs-75.docx", "operating-manual-tvs-75-en.docx"),
        ("produktuebersicht-verdichter.md", "product-family-overview-en.md"),
    ],
)
def test_german_and_english_versions_carry_the_same_table_values(
    docs: dict[str, ParsedDocument], german: str, english: str
) -> None:
    de, en = rows(docs[german]), rows(docs[english])
    assert len(de) == len(en) > 0
    assert [(b.page, b.row) for b in de] == [(b.page, b.row) for b in en]
    # Same figures in the same cells once the decimal comma is normalised (dates excepted).
    for de_row, en_row in zip(de, en, strict=True):
        if not re.search(r"\d{4}$", de_row.cells[-1]):
            assert _numbers(de_row.cells, False) == _numbers(en_row.cells, True), de_row.text


def test_part_numbers_one_character_apart_are_distinct_rows(
    docs: dict[str, ParsedDocument], structured: list[Chunk]
) -> None:
    doc = docs["ersatzteilliste-2025.xlsx"]
    assert doc.tables() == ["TVK", "TVS", "TVM", "Wartungssätze"]
    pairs = [("KV-4501-B", "KV-4501-8"), ("SK-220A", "SK-22OA"), ("TS-7508-S", "TS-7508-5")]
    for left, right in pairs:
        a, b = row(doc, left), row(doc, right)
        assert a.row != b.row
        assert a.cells[1] != b.cells[1]
    assert (row(doc, "KV-4501-B").table, row(doc, "KV-4501-B").row) == ("TVK", 1)
    assert row(doc, "KV-4501-8").cells == (
        "KV-4501-8",
        "Ventilplatte Druckseite",
        "TVK 110",
        "4 000",
        "2",
    )
    assert (row(doc, "SK-22OA").row, row(doc, "SK-22OA").cells[1]) == (
        6,
        "Kolbenringsatz Hochdruckstufe",
    )
    sk = row(doc, "SK-220A")
    assert (sk.row, sk.unit) == (5, "Wartungsintervall in Betriebsstunden (Bh)")
    assert sk.footnote is not None
    assert "Buchstabe O und Ziffer 0" in sk.footnote
    keys = [c.row_key for c in structured if c.file_id == "ersatzteilliste-2025"]
    assert len(keys) == len(set(keys)) == 27


def test_certificates_carry_numbers_and_revisions(docs: dict[str, ParsedDocument]) -> None:
    ped = docs["zertifikat-dgr-tvk-baureihe.pdf"]
    assert row(ped, "Bescheinigungs-Nr.").cells == ("Bescheinigungs-Nr.", "EPZ-DGR-B-2024-0417")
    assert (row(ped, "Revision").cells[1], row(ped, "Revision").page) == ("2", 1)
    atex = docs["zertifikat-atex-tvk-350.docx"]
    assert row(atex, "Bescheinigungs-Nr.").cells[1] == "EPZ 24 ATEX 3108 X"
    assert row(atex, "Kennzeichnung").table == "Tabelle 1 – Daten der Bescheinigung"
    assert (row(atex, "Revision").footnote or "").startswith("Anmerkung: Das Zeichen X")
    iso = docs["certificate-iso-9001-en.docx"]
    assert row(iso, "Certificate no.").cells[1] == "EPZ-QM-44817"
    assert row(iso, "Revision").cells[1] == "4"


def test_manual_has_numbered_sections_and_a_maintenance_table(
    docs: dict[str, ParsedDocument],
) -> None:
    doc = docs["betriebsanleitung-tvs-75.docx"]
    sections = doc.sections()
    for expected in (
        "1. Sicherheit > 1.1 Bestimmungsgemäße Verwendung",
        "2. Aufstellung > 2.3 Elektrischer Anschluss",
        "4. Wartung > 4.1 Wartungsplan",
        "5. Störungen > 5.2 Sicherheitsventil bläst ab",
    ):
        assert expected in sections
    assert "15,5 bar" in text_of(doc, "1. Sicherheit > 1.2 Sicherheitseinrichtungen")
    separator = row(doc, "Ölabscheider wechseln")
    assert (separator.table, separator.row, separator.cells[1:], separator.unit) == (
        "Tabelle 1 – Wartungsintervalle TVS 75",
        4,
        ("8 000", "TS-7508-S"),
        "Bh",
    )
    assert separator.section == "4. Wartung > 4.1 Wartungsplan"
    assert (separator.footnote or "").startswith("Anmerkung: Intervalle")


def test_contradicting_revision_and_pressure_sit_in_their_documents(
    docs: dict[str, ParsedDocument],
) -> None:
    brochure = docs["broschuere-schraubenverdichter-2023.pdf"]
    overview = text_of(brochure, "2. Die Baureihe im Überblick")
    assert "Revision C" in overview
    assert "13 bar" in overview
    assert {b.page for b in brochure.blocks if b.section == "2. Die Baureihe im Überblick"} == {1}
    datasheet = docs["datenblatt-tvs-75.pdf"]
    assert "Revision D" in text_of(datasheet, "1. Produktbeschreibung")
    assert row(datasheet, "TVS 75-14").cells[1] == "14²"


def test_contradicting_launch_years_sit_in_their_documents(
    docs: dict[str, ParsedDocument],
) -> None:
    tvm = row(docs["produktuebersicht-verdichter.md"], "TVM")
    assert (tvm.table, tvm.header[-1], tvm.cells[-1]) == (
        "Tabelle 1 – Familien und Einsatzbereiche",
        "Markteinführung",
        "2019",
    )
    assert row(docs["product-family-overview-en.md"], "TVM").cells[-1] == "2019"
    assert "Im Jahr 2018" in text_of(docs["firmenchronik.md"], "Wasserstoff")


def test_project_records_are_labelled_synthetic(
    docs: dict[str, ParsedDocument], structured: list[Chunk]
) -> None:
    for name in ("digital-twin-projekte-2024.json", "digital-twin-projekte-2025.json"):
        raw = json.loads((CORPUS / name).read_text(encoding="utf-8"))
        assert raw["synthetic"] is True
        assert raw["note"].startswith("SYNTHETIC DEMO DATA")
        assert len(raw["records"]) == 8
        assert all(record["synthetic"] is True for record in raw["records"])
        assert "synthetische Demodaten" in (docs[name].title or "")
    records = [c for c in structured if c.kind == "record"]
    assert len(records) == 16
    assert all("synthetic: true" in c.text and "synthetische Demodaten" in c.text for c in records)
    (h2,) = [c for c in records if c.row_key == "TW-P-25-011"]
    assert (h2.file_id, h2.table, h2.row) == (
        "digital-twin-projekte-2025",
        "digital-twin-projekte-2025",
        1,
    )
    assert "medium: hydrogen | pressure_bar: 350" in h2.text
    assert "topology: 3 x 33 % parallel" in h2.text
    notes = [c for c in structured if c.file_id.startswith("digital-twin") and c.kind == "text"]
    assert len(notes) == 2
    assert all("SYNTHETIC DEMO DATA" in c.text for c in notes)


def test_the_internal_price_list_is_ingested_but_not_allow_listed(
    docs: dict[str, ParsedDocument], structured: list[Chunk]
) -> None:
    doc = docs["internal-preisliste-2026.xlsx"]
    assert doc.tables() == ["Verdichter", "Ersatzteile"]
    assert row(doc, "TVS 75-10").cells == ("TVS 75-10", "48 900", "20")
    assert row(doc, "TVS 75-10").unit == "EUR netto"
    assert sum(1 for c in structured if c.file_id == "internal-preisliste-2026") == 7
    for path in (REPO / "gold").glob("*.yaml"):
        assert "internal-preisliste" not in path.read_text(encoding="utf-8"), path.name
