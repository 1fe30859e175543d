"""Extractor-independent anchors: one gold anchor, every way a real loader writes the text."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_ragv2.gold.schema import Evidence, TableCells
from pytest_ragv2.scoring.evidence import (
    ANCHOR_CELL_GAP,
    FULL_STEP,
    anchor_found,
    canonical_text,
    match_step,
    table_integrity,
)
from pytest_ragv2.systems.outputs import RetrievedItem

ROW = "T4 | 1 689 | 33 | 272 | 1 312"


@pytest.mark.parametrize(
    "text",
    [
        "T4 | 1 689 | 33 | 272 | 1 312",  # the demo's parser
        "Trimestre CA 2025\nT3 1456 21 246 1160\nT4 1689 33 272 1312\nTotal",  # unstructured XLSX
        "T4\n\n1 689\n\n33\n\n272\n\n1 312\n\n",  # docx2txt: one cell per line
        "T4\t1.689\t33\t272\t1.312",  # German grouping, tab separated
        "| T4 | 1,689 | 33 | 272 | 1,312 |",  # a Markdown table with English grouping
        "T4: 1\u202f689; 33; 272; 1\u00a0312",  # narrow and plain no-break spaces
    ],
)
def test_a_row_anchor_is_found_however_a_loader_writes_the_row(text: str) -> None:
    assert anchor_found(ROW, text)


@pytest.mark.parametrize(
    "text",
    [
        "T4 1689 33 271 1312",  # one cell differs
        "T4 1689 33 1312 272",  # cells out of order
        "T41 1689 33 272 1312",  # the first cell is part of a longer word
        "T4 1689 33 272 13120",  # the last cell is part of a longer number
        "T3 1456 21 246 1160",
    ],
)
def test_a_row_anchor_is_not_found_where_a_cell_differs(text: str) -> None:
    assert not anchor_found(ROW, text)


def test_a_json_record_meets_its_anchor_whole_ids_only() -> None:
    raw = '{"records": [{"project_id": "TW-P-24-0031", "kunde": "A"},\n'
    raw += ' {"project_id": "TW-P-24-003", "kunde": "B"}]}'
    assert anchor_found("project_id: TW-P-24-003", raw)
    assert not anchor_found("project_id: TW-P-24-00", raw)
    assert not anchor_found("project_id: TW-P-24-004", raw)


def test_column_names_between_cells_are_allowed_up_to_the_gap() -> None:
    # rag_api's CSV loader writes "column: value" lines.
    csv_row = "Quartal: T4\nCA (k€): 1689\nSaaS: 33\nServices: 272\nRecurring: 1312"
    assert anchor_found(ROW, csv_row)
    far = "T4 " + "x" * (ANCHOR_CELL_GAP + 1) + " 1689 33 272 1312"
    assert not anchor_found(ROW, far)


def test_a_prose_anchor_survives_line_breaks_hyphenation_and_decimal_separators() -> None:
    anchor = "disponibilité mensuelle de la plateforme de 99,7 %"
    pdf_text = "une disponibi-\nlité mensuelle de la\nplateforme de 99.7% (hors maintenance)"
    assert anchor_found(anchor, pdf_text)
    assert not anchor_found(anchor, "une disponibilité mensuelle de la plateforme de 99,5 %")


def test_canonical_text_keeps_letters_digits_and_symbols_only() -> None:
    canonical = canonical_text('{"Preis": "1.250,00 €", "Temp": "40 °C", "Anteil": "12 %"}')
    assert canonical.chars == "preis125000€temp40°canteil12%"


@given(
    st.lists(st.integers(min_value=0, max_value=10_000_000), min_size=1, max_size=6),
    st.sampled_from([" | ", "\n", "\t", " ", "\n\n", ": "]),
    st.sampled_from(["", " ", "\u00a0", "\u202f", ".", ","]),
)
def test_any_grouping_and_separator_meets_the_plain_row(
    cells: list[int], separator: str, grouping: str
) -> None:
    def grouped(number: int) -> str:
        return f"{number:,}".replace(",", grouping)

    anchor = " | ".join(str(cell) for cell in cells)
    text = "row " + separator.join(grouped(cell) for cell in cells) + " end"
    assert anchor_found(anchor, text)


def test_an_anchor_locates_a_row_the_item_has_no_metadata_for() -> None:
    gold = Evidence(file_id="f", table="CA 2025", row=4, anchor=ROW)
    xlsx_chunk = RetrievedItem(rank=1, text="T4 1689 33 272 1312", file_id="f")
    assert match_step(xlsx_chunk, gold) == FULL_STEP
    assert match_step(xlsx_chunk, gold, anchors=False) < FULL_STEP


def test_table_integrity_reads_cells_the_same_way() -> None:
    cells = TableCells(header="CA (k€)", row="T4", unit="k€", footnote="non audités au 15 janvier")
    chunk = "Trimestre\nCA (k€)\nT4\n1689\nChiffres consolidés non\naudités au 15 janvier 2026."
    assert table_integrity(RetrievedItem(rank=1, text=chunk), cells)
    assert not table_integrity(RetrievedItem(rank=1, text=chunk.replace("T4", "T3")), cells)
