"""Real document parsers: Markdown, DOCX, XLSX, PDF (plus JSON records and plain text).

Each parser turns one file into a :class:`ParsedDocument`: an ordered tuple of
:class:`Block` s that keep the structure a person cites — the 1-based PDF page, the heading
path of a section ("4. Niveaux de service > 4.1 Disponibilité garantie"), and for table rows
the table name, the 1-based data row, its first cell, the header cells, the unit and the
footnote.

Block kinds:

- ``heading`` — a heading line (the document title has ``section=None``);
- ``text`` — a paragraph (or a list item, prefixed "- ");
- ``table_row`` — one data row of a table or sheet;
- ``table_text`` — a sheet's title, unit or footnote line (carried on its rows as well);
- ``record`` — one element of a JSON list (or of the ``records`` list of a JSON object,
  whose other top-level keys — title, note, synthetic flag — become the document's title and
  one ``text`` block).

Markdown and DOCX share one assembly step: a single top-level title (Markdown ``#``, DOCX
"Title" style) is the document title and not part of section paths. A table is named by
the caption paragraph just before it ("Tableau 1 – ...") or else by its section's heading;
a paragraph just after a table that starts with "Note", "Source" or "*" is its footnote.
The unit comes from an explicit "Unité : ..." / "Einheit: ..." line (XLSX) or else from the
header cells ending in "(...)" (distinct units joined by ", ", footnote marks after the
bracket allowed). XLSX numbers are shown in French form ("1 689", "99,7").

PDF text comes without table structure, so the renderer prints a table as one line per row
with cells joined by " | " (header line first, optional "Tabelle 1 – ..." caption line
before, notes starting with "¹", "*" or "Note" after); the PDF parser turns such a run of lines
back into a table.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, replace
from datetime import date, datetime
from pathlib import Path
from typing import Any

SUPPORTED_SUFFIXES = frozenset({".md", ".pdf", ".docx", ".xlsx", ".json", ".txt"})
SECTION_SEPARATOR = " > "

_CAPTION = re.compile(r"^(Tableau|Tabelle|Table|Figure|Abbildung)\s+\d+", re.IGNORECASE)
_FOOTNOTE = re.compile(r"^(Notes?\b|Sources?\b|Anmerkung\b|\*|\(\d+\)|[¹²³])", re.IGNORECASE)
_UNIT_LINE = re.compile(r"^(?:Unit[ée]s?|Einheit(?:en)?)\s*:\s*(.+)$", re.IGNORECASE)
_HEADER_UNIT = re.compile(r"\(([^()]+)\)\s*[¹²³*]*\s*$")
PDF_CELL_SEPARATOR = " | "
_PDF_NOTE_LINE = re.compile(r"^[¹²³*]")
# A numbered heading line in extracted PDF text: "4. Continuité" or "4.1 Sauvegardes".
_PDF_HEADING = re.compile(r"^\d+(?:\.\s|(?:\.\d+)+\.?\s)\s*[A-ZÀ-ÖØ-Þ]")


@dataclass(frozen=True, slots=True)
class Block:
    text: str
    kind: str = "text"
    page: int | None = None
    section: str | None = None
    table: str | None = None
    row: int | None = None
    row_key: str | None = None
    header: tuple[str, ...] = ()
    cells: tuple[str, ...] = ()
    unit: str | None = None
    footnote: str | None = None
    caption: str | None = None
    level: int | None = None


@dataclass(frozen=True, slots=True)
class ParsedDocument:
    path: Path
    file_id: str
    filename: str
    format: str
    blocks: tuple[Block, ...]
    title: str | None = None
    page_count: int | None = None
    # a PDF's information dictionary as langchain's PyPDFLoader names it (title, author,
    # creator, producer, creationdate): rag_api puts it on every chunk of the file
    info: tuple[tuple[str, str], ...] = ()

    def sections(self) -> list[str]:
        """Every distinct section path, in document order."""
        seen: dict[str, None] = {}
        for block in self.blocks:
            if block.section is not None:
                seen.setdefault(block.section, None)
        return list(seen)

    def tables(self) -> list[str]:
        seen: dict[str, None] = {}
        for block in self.blocks:
            if block.kind == "table_row" and block.table is not None:
                seen.setdefault(block.table, None)
        return list(seen)


def format_number(value: int | float) -> str:
    """French rendering of a number: "1 689", "99,7" (plain space as thousands separator)."""
    if isinstance(value, float) and not value.is_integer():
        text = f"{value:,.6f}".rstrip("0").rstrip(".")
    else:
        text = f"{int(value):,}"
    return text.replace(",", "\0").replace(".", ",").replace("\0", " ")


def parse_document(path: Path) -> ParsedDocument:
    suffix = path.suffix.lower()
    if suffix == ".md":
        return parse_markdown(path)
    if suffix == ".docx":
        return parse_docx(path)
    if suffix == ".xlsx":
        return parse_xlsx(path)
    if suffix == ".pdf":
        return parse_pdf(path)
    if suffix == ".json":
        return parse_json(path)
    if suffix == ".txt":
        return parse_text(path)
    raise ValueError(f"unsupported document type: {path.name}")


# --- Shared assembly of a heading/paragraph/table stream ----------------------------------


@dataclass(frozen=True, slots=True)
class _Heading:
    level: int
    text: str
    page: int | None = None


@dataclass(frozen=True, slots=True)
class _Para:
    text: str
    page: int | None = None


@dataclass(frozen=True, slots=True)
class _Table:
    header: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    page: int | None = None


_Item = _Heading | _Para | _Table


def _unit_from_header(header: tuple[str, ...]) -> str | None:
    units: dict[str, None] = {}
    for cell in header:
        match = _HEADER_UNIT.search(cell)
        if match:
            units.setdefault(match.group(1).strip(), None)
    return ", ".join(units) or None


def _assemble(items: list[_Item], title: str | None, title_page: int | None = None) -> list[Block]:
    blocks: list[Block] = []
    if title:
        blocks.append(Block(text=title, kind="heading", page=title_page, level=0))
    stack: list[tuple[int, str]] = []
    last_table_rows: list[int] = []
    previous: _Item | None = None
    for item in items:
        section = SECTION_SEPARATOR.join(text for _, text in stack) or None
        if isinstance(item, _Heading):
            while stack and stack[-1][0] >= item.level:
                stack.pop()
            stack.append((item.level, item.text))
            path = SECTION_SEPARATOR.join(text for _, text in stack)
            blocks.append(
                Block(
                    text=item.text, kind="heading", page=item.page, section=path, level=item.level
                )
            )
        elif isinstance(item, _Para):
            if isinstance(previous, _Table) and _FOOTNOTE.match(item.text):
                for index in last_table_rows:
                    blocks[index] = replace(blocks[index], footnote=item.text)
            blocks.append(Block(text=item.text, page=item.page, section=section))
        else:
            caption = (
                previous.text
                if isinstance(previous, _Para) and _CAPTION.match(previous.text)
                else None
            )
            name = caption or (stack[-1][1] if stack else title) or "Tableau"
            unit = _unit_from_header(item.header)
            last_table_rows = []
            for number, cells in enumerate(item.rows, start=1):
                last_table_rows.append(len(blocks))
                blocks.append(
                    Block(
                        text=" | ".join(cells),
                        kind="table_row",
                        page=item.page,
                        section=section,
                        table=name,
                        row=number,
                        row_key=cells[0] if cells else None,
                        header=item.header,
                        cells=cells,
                        unit=unit,
                    )
                )
        previous = item
    return blocks


def _document(path: Path, fmt: str, blocks: list[Block], **extra: Any) -> ParsedDocument:
    return ParsedDocument(
        path=path,
        file_id=path.stem,
        filename=path.name,
        format=fmt,
        blocks=tuple(blocks),
        **extra,
    )


# --- Markdown (markdown-it-py) ----------------------------------------------------------------


def _inline_text(token: Any) -> str:
    parts: list[str] = []
    for child in token.children or []:
        if child.type in {"text", "code_inline"}:
            parts.append(child.content)
        elif child.type in {"softbreak", "hardbreak"}:
            parts.append(" ")
    return "".join(parts).strip()


def parse_markdown(path: Path) -> ParsedDocument:
    from markdown_it import MarkdownIt

    tokens = MarkdownIt("commonmark").enable("table").parse(path.read_text(encoding="utf-8"))
    h1_count = sum(1 for t in tokens if t.type == "heading_open" and t.tag == "h1")
    title: str | None = None
    items: list[_Item] = []
    list_depth = 0
    i = 0
    while i < len(tokens):
        token = tokens[i]
        if token.type == "heading_open":
            text = _inline_text(tokens[i + 1])
            level = int(token.tag[1:])
            if level == 1 and h1_count == 1 and title is None and not items:
                title = text
            else:
                items.append(_Heading(level, text))
            i += 3
            continue
        if token.type in {"bullet_list_open", "ordered_list_open"}:
            list_depth += 1
        elif token.type in {"bullet_list_close", "ordered_list_close"}:
            list_depth -= 1
        elif token.type == "paragraph_open":
            text = _inline_text(tokens[i + 1])
            if text:
                items.append(_Para(f"- {text}" if list_depth else text))
            i += 3
            continue
        elif token.type == "table_open":
            rows: list[tuple[str, ...]] = []
            current: list[str] = []
            while tokens[i].type != "table_close":
                kind = tokens[i].type
                if kind == "tr_open":
                    current = []
                elif kind in {"th_open", "td_open"}:
                    current.append(_inline_text(tokens[i + 1]))
                elif kind == "tr_close":
                    rows.append(tuple(current))
                i += 1
            if rows:
                items.append(_Table(header=rows[0], rows=tuple(rows[1:])))
        i += 1
    return _document(path, "md", _assemble(items, title), title=title)


# --- DOCX (python-docx) -------------------------------------------------------------------


def parse_docx(path: Path) -> ParsedDocument:
    import docx
    from docx.table import Table
    from docx.text.paragraph import Paragraph

    document = docx.Document(str(path))
    title: str | None = None
    items: list[_Item] = []
    for element in document.element.body.iterchildren():
        tag = element.tag.rsplit("}", 1)[-1]
        if tag == "p":
            paragraph = Paragraph(element, document)
            text = paragraph.text.strip()
            if not text:
                continue
            style = paragraph.style.name if paragraph.style is not None else ""
            if style == "Title" and title is None and not items:
                title = text
            elif style.startswith("Heading ") and style[8:].isdigit():
                items.append(_Heading(int(style[8:]), text))
            elif style.startswith("List"):
                items.append(_Para(f"- {text}"))
            else:
                items.append(_Para(text))
        elif tag == "tbl":
            table = Table(element, document)
            rows = [tuple(cell.text.strip() for cell in row.cells) for row in table.rows]
            if rows:
                items.append(_Table(header=rows[0], rows=tuple(rows[1:])))
    if title is None and document.core_properties.title:
        title = document.core_properties.title
    return _document(path, "docx", _assemble(items, title), title=title)


# --- PDF (pypdf) ------------------------------------------------------------------------------


def parse_pdf(path: Path) -> ParsedDocument:
    from pypdf import PdfReader

    reader = PdfReader(str(path))
    metadata_title = reader.metadata.title if reader.metadata is not None else None
    title = str(metadata_title).strip() if metadata_title else None
    items: list[_Item] = []
    for number, page in enumerate(reader.pages, start=1):
        lines = [line.strip() for line in (page.extract_text() or "").splitlines()]
        if number == 1 and lines and lines[0] == title:
            lines = lines[1:]  # the title line printed at the top of page 1
        items.extend(_pdf_page_items(lines, number))
    blocks = _assemble(items, title, title_page=1 if reader.pages else None)
    return _document(
        path, "pdf", blocks, title=title, page_count=len(reader.pages), info=_pdf_info(reader)
    )


def _pdf_info(reader: Any) -> tuple[tuple[str, str], ...]:
    """The information dictionary as langchain's PyPDFLoader (and so rag_api) stores it on
    every page: "PyPDF" as producer and creator unless the file names its own, keys
    lower-cased without "/", dates in ISO form."""
    info: dict[str, str] = {"producer": "PyPDF", "creator": "PyPDF", "creationdate": ""}
    for key, value in (reader.metadata or {}).items():
        name = str(key).lstrip("/").lower()
        text = str(value)
        if name in ("creationdate", "moddate"):
            try:
                stamp = datetime.strptime(text.replace("'", ""), "D:%Y%m%d%H%M%S%z")
                text = stamp.isoformat("T")
            except ValueError:
                pass
        info[name] = text.strip()
    return tuple(info.items())


def _pdf_page_items(lines: list[str], page: int) -> list[_Item]:
    """Numbered heading lines start sections; a caption line stands alone; a run of lines
    with " | " separators is a table (header first) and the note lines right after it
    ("¹ ...", "* ...", one line each) form its footnote paragraph; the other lines between
    them form one paragraph."""
    items: list[_Item] = []
    paragraph: list[str] = []
    table: list[tuple[str, ...]] = []
    in_notes = False

    def flush() -> None:
        if paragraph:
            items.append(_Para(" ".join(paragraph), page=page))
            paragraph.clear()
        if table:
            items.append(_Table(header=table[0], rows=tuple(table[1:]), page=page))
            table.clear()

    for line in lines:
        if not line:
            continue
        if PDF_CELL_SEPARATOR in line:
            if not table:
                flush()  # the paragraph (or notes) before the table
                in_notes = False
            table.append(tuple(cell.strip() for cell in line.split(PDF_CELL_SEPARATOR)))
            continue
        if _PDF_NOTE_LINE.match(line) and (table or in_notes):
            if table:
                flush()
            paragraph.append(line)
            in_notes = True
            continue
        if in_notes:
            flush()
            in_notes = False
        if _PDF_HEADING.match(line) and len(line) <= 80 and not line.endswith((".", ",", ";")):
            flush()
            level = line.split()[0].rstrip(".").count(".") + 1
            items.append(_Heading(level, line, page=page))
        elif _CAPTION.match(line):
            flush()
            items.append(_Para(line, page=page))
        else:
            if table:
                flush()
            paragraph.append(line)
    flush()
    return items


# --- XLSX (openpyxl) --------------------------------------------------------------------------


def _cell_text(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "oui" if value else "non"
    if isinstance(value, int | float):
        return format_number(value)
    if isinstance(value, datetime | date):
        return value.isoformat()
    return str(value).strip()


def parse_xlsx(path: Path) -> ParsedDocument:
    from openpyxl import load_workbook

    workbook = load_workbook(str(path), read_only=True, data_only=True)
    title = workbook.properties.title or None
    blocks: list[Block] = []
    if title:
        blocks.append(Block(text=title, kind="heading", level=0))
    try:
        for sheet in workbook.worksheets:
            rows = [tuple(_cell_text(v) for v in row) for row in sheet.iter_rows(values_only=True)]
            blocks.extend(_sheet_blocks(str(sheet.title), rows))
    finally:
        workbook.close()
    return _document(path, "xlsx", blocks, title=title)


def _sheet_blocks(name: str, rows: list[tuple[str, ...]]) -> list[Block]:
    """Title/unit lines above the header, data rows until an empty row, footnotes below."""
    filled = rows
    header_index = next((i for i, row in enumerate(filled) if sum(1 for c in row if c) >= 2), None)
    if header_index is None:
        return [
            Block(text=" ".join(c for c in row if c), kind="table_text", table=name)
            for row in filled
            if any(row)
        ]
    caption: str | None = None
    unit: str | None = None
    above: list[Block] = []
    for row in filled[:header_index]:
        line = " ".join(c for c in row if c)
        if not line:
            continue
        unit_match = _UNIT_LINE.match(line)
        if unit_match:
            unit = unit_match.group(1).strip()
        elif caption is None:
            caption = line
        above.append(Block(text=line, kind="table_text", table=name))
    header = _trim(filled[header_index])
    width = len(header)
    data: list[tuple[str, ...]] = []
    index = header_index + 1
    while index < len(filled) and any(filled[index]):
        data.append(_pad(filled[index], width))
        index += 1
    notes = [" ".join(c for c in row if c) for row in filled[index:] if any(row)]
    footnote = " ".join(notes) or None
    unit = unit or _unit_from_header(header)
    blocks = above
    for number, cells in enumerate(data, start=1):
        blocks.append(
            Block(
                text=" | ".join(cells),
                kind="table_row",
                table=name,
                row=number,
                row_key=cells[0] or None,
                header=header,
                cells=cells,
                unit=unit,
                footnote=footnote,
                caption=caption,
            )
        )
    blocks.extend(Block(text=note, kind="table_text", table=name) for note in notes)
    return blocks


def _trim(row: tuple[str, ...]) -> tuple[str, ...]:
    cells = list(row)
    while cells and not cells[-1]:
        cells.pop()
    return tuple(cells)


def _pad(row: tuple[str, ...], width: int) -> tuple[str, ...]:
    return tuple(row[:width]) + ("",) * max(0, width - len(row))


# --- JSON records and plain text ------------------------------------------------------------


def _record_text(record: object) -> str:
    if isinstance(record, dict):
        parts = []
        for key, value in record.items():
            shown = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
            parts.append(f"{key}: {shown}")
        return " | ".join(parts)
    return record if isinstance(record, str) else json.dumps(record, ensure_ascii=False)


def parse_json(path: Path) -> ParsedDocument:
    data = json.loads(path.read_text(encoding="utf-8"))
    title: str | None = None
    blocks: list[Block] = []
    if isinstance(data, dict) and isinstance(data.get("records"), list):
        title = str(data["title"]) if data.get("title") else None
        if title:
            blocks.append(Block(text=title, kind="heading", level=0))
        meta = {k: v for k, v in data.items() if k not in {"title", "records"}}
        if meta:
            blocks.append(Block(text=_record_text(meta)))
        records = data["records"]
    else:
        records = data if isinstance(data, list) else [data]
    for number, record in enumerate(records, start=1):
        key: str | None = None
        if isinstance(record, dict) and record:
            key_value = record.get("id", next(iter(record.values())))
            key = str(key_value)
        blocks.append(
            Block(
                text=_record_text(record),
                kind="record",
                table=path.stem,
                row=number,
                row_key=key,
            )
        )
    return _document(path, "json", blocks, title=title)


def parse_text(path: Path) -> ParsedDocument:
    text = path.read_text(encoding="utf-8")
    paragraphs = [p.strip() for p in re.split(r"\n\s*\n", text) if p.strip()]
    return _document(path, "txt", [Block(text=p) for p in paragraphs])
