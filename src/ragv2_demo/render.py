"""Render a planted-fact corpus (``facts.yaml``) into real documents: MD, DOCX, XLSX, PDF, JSON.

``facts.yaml`` holds every planted fact once under ``facts`` and the documents as lists of
blocks that refer to facts as ``{name}``. Rendering is deterministic: two renders give
byte-identical files (fixed PDF dates, fixed DOCX/XLSX core properties, fixed zip entry
timestamps), so the allow-list can pin each document's sha256.

PDFs use fpdf2's core Helvetica font with the cp1252 encoding, which covers French and German
text, "€", "°", "³" and the footnote marks "¹²³" without shipping a TTF; pypdf extracts the
text back unchanged. A PDF table is printed as an optional caption line, one line per row with
cells joined by " | " (header first) and its notes below, so the parser can rebuild the rows
from the extracted text.

Per-document options: ``locale: en`` writes numeric facts the English way ("1,689", "7.5")
instead of the default French/German way ("1 689", "7,5"); ``unit_prefix`` is the XLSX unit
line's label (default "Unité : "). A ``json`` document is written as ``{"title", **meta,
"records"}``.

Usage: ``python -m ragv2_demo.render corpus/nimbus-analytics`` (re)writes the files
next to ``facts.yaml``.
"""

from __future__ import annotations

import argparse
import io
import json
import re
import sys
import zipfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import yaml

from ragv2_demo.parsers import format_number

FACTS_FILENAME = "facts.yaml"
FACT_REF = re.compile(r"\{([A-Za-z0-9_]+)\}")
PDF_CELL_SEPARATOR = " | "
ZIP_TIMESTAMP = (2026, 1, 1, 0, 0, 0)
HEADING_KEYS = {"h1": 1, "h2": 2, "h3": 3}

FactValue = str | int | float


class RenderError(ValueError):
    """The facts file is inconsistent (unknown fact, unused fact, overflowing PDF page...)."""


@dataclass(frozen=True, slots=True)
class CorpusSpec:
    facts: dict[str, FactValue]
    documents: list[dict[str, Any]]
    timestamp: datetime
    author: str


def load_spec(path: Path) -> CorpusSpec:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict) or "facts" not in data or "documents" not in data:
        raise RenderError(f"{path}: expected a mapping with 'facts' and 'documents'")
    timestamp = datetime.fromisoformat(
        str(data.get("fixed_timestamp", "2026-01-01T00:00:00+00:00"))
    )
    return CorpusSpec(
        facts=dict(data["facts"]),
        documents=list(data["documents"]),
        timestamp=timestamp,
        author=str(data.get("author", "")),
    )


def format_number_en(value: int | float) -> str:
    """English rendering of a number: "1,689", "7.5"."""
    if isinstance(value, float) and not value.is_integer():
        return f"{value:,.6f}".rstrip("0").rstrip(".")
    return f"{int(value):,}"


class FactResolver:
    """Substitutes ``{fact}`` references and remembers which facts were used.

    ``locale`` ("fr" by default, "de" alike, or "en") picks how numeric facts are written; the
    driver sets it per document.
    """

    def __init__(self, facts: Mapping[str, FactValue]) -> None:
        self.facts = facts
        self.used: set[str] = set()
        self.locale = "fr"

    def number(self, value: int | float) -> str:
        return format_number_en(value) if self.locale == "en" else format_number(value)

    def _lookup(self, name: str) -> FactValue:
        if name not in self.facts:
            raise RenderError(f"unknown fact {{{name}}}")
        self.used.add(name)
        return self.facts[name]

    def text(self, template: object) -> str:
        if isinstance(template, int | float):
            return self.number(template)

        def replace(match: re.Match[str]) -> str:
            value = self._lookup(match.group(1))
            return self.number(value) if isinstance(value, int | float) else str(value)

        return FACT_REF.sub(replace, str(template))

    def cell(self, template: object) -> FactValue:
        """A table cell: a lone numeric fact stays a number (XLSX number cells)."""
        if isinstance(template, int | float):
            return template
        match = FACT_REF.fullmatch(str(template))
        if match:
            value = self._lookup(match.group(1))
            if isinstance(value, int | float):
                return value
        return self.text(template)

    def cell_text(self, template: object) -> str:
        value = self.cell(template)
        return self.number(value) if isinstance(value, int | float) else value


# --- Markdown -----------------------------------------------------------------------------


def render_markdown(doc: Mapping[str, Any], facts: FactResolver) -> bytes:
    out: list[str] = [f"# {facts.text(doc['title'])}"]
    for block in doc["blocks"]:
        kind, value = _block_kind(block)
        if kind in HEADING_KEYS:
            out.append("#" * (HEADING_KEYS[kind] + 1) + " " + facts.text(value))
        elif kind == "p":
            out.append(facts.text(value))
        elif kind == "list":
            out.append("\n".join(f"- {facts.text(item)}" for item in value))
        elif kind == "table":
            if value.get("caption"):
                out.append(facts.text(value["caption"]))
            header = [facts.text(h) for h in value["header"]]
            lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
            for row in value["rows"]:
                lines.append("| " + " | ".join(facts.cell_text(c) for c in row) + " |")
            out.append("\n".join(lines))
            if value.get("note"):
                out.append(facts.text(value["note"]))
    return ("\n\n".join(out) + "\n").encode("utf-8")


def _block_kind(block: Mapping[str, Any]) -> tuple[str, Any]:
    if len(block) != 1:
        raise RenderError(f"a block has exactly one key, got {sorted(block)}")
    ((kind, value),) = block.items()
    if kind not in {*HEADING_KEYS, "p", "list", "table"}:
        raise RenderError(f"unknown block kind {kind!r}")
    return kind, value


# --- Zip-based formats (DOCX, XLSX) --------------------------------------------------------

_CORE_DATE = re.compile(r"(<dcterms:(?:created|modified)[^>]*>)[^<]*(</dcterms:)")


def normalize_zip(data: bytes, timestamp: datetime) -> bytes:
    """Rewrite an OOXML zip with fixed entry timestamps and fixed core-property dates."""
    iso = timestamp.strftime("%Y-%m-%dT%H:%M:%SZ")
    out = io.BytesIO()
    with (
        zipfile.ZipFile(io.BytesIO(data)) as source,
        zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as target,
    ):
        for entry in source.infolist():
            content = source.read(entry.filename)
            if entry.filename == "docProps/core.xml":
                text = _CORE_DATE.sub(lambda m: m.group(1) + iso + m.group(2), content.decode())
                content = text.encode("utf-8")
            info = zipfile.ZipInfo(entry.filename, date_time=ZIP_TIMESTAMP)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.create_system = 0
            info.external_attr = 0o644 << 16
            target.writestr(info, content)
    return out.getvalue()


def render_docx(doc: Mapping[str, Any], facts: FactResolver, spec: CorpusSpec) -> bytes:
    import docx
    from docx.shared import Pt

    document = docx.Document()
    core = document.core_properties
    core.title = facts.text(doc["title"])
    core.author = spec.author
    core.last_modified_by = spec.author
    core.created = spec.timestamp.replace(tzinfo=None)
    core.modified = spec.timestamp.replace(tzinfo=None)
    core.revision = 1
    document.styles["Normal"].font.size = Pt(11)

    document.add_paragraph(facts.text(doc["title"]), style="Title")
    for block in doc["blocks"]:
        kind, value = _block_kind(block)
        if kind in HEADING_KEYS:
            document.add_heading(facts.text(value), level=HEADING_KEYS[kind])
        elif kind == "p":
            document.add_paragraph(facts.text(value))
        elif kind == "list":
            for item in value:
                document.add_paragraph(facts.text(item), style="List Bullet")
        elif kind == "table":
            if value.get("caption"):
                document.add_paragraph(facts.text(value["caption"]), style="Caption")
            header = [facts.text(h) for h in value["header"]]
            table = document.add_table(rows=1 + len(value["rows"]), cols=len(header))
            table.style = "Table Grid"
            for col, text in enumerate(header):
                cell = table.cell(0, col)
                cell.text = text
                for run in cell.paragraphs[0].runs:
                    run.bold = True
            for r, row in enumerate(value["rows"], start=1):
                for col, raw in enumerate(row):
                    table.cell(r, col).text = facts.cell_text(raw)
            if value.get("note"):
                document.add_paragraph(facts.text(value["note"]))
    buffer = io.BytesIO()
    document.save(buffer)
    return normalize_zip(buffer.getvalue(), spec.timestamp)


def render_xlsx(doc: Mapping[str, Any], facts: FactResolver, spec: CorpusSpec) -> bytes:
    from openpyxl import Workbook
    from openpyxl.styles import Font

    workbook = Workbook()
    workbook.remove(workbook.active)
    workbook.properties.creator = spec.author
    workbook.properties.title = facts.text(doc["title"])
    workbook.properties.created = spec.timestamp.replace(tzinfo=None)
    bold = Font(bold=True)
    for sheet in doc["sheets"]:
        ws = workbook.create_sheet(title=str(sheet["name"]))
        ws.append([facts.text(sheet["title"])])
        ws.cell(row=1, column=1).font = bold
        if sheet.get("unit"):
            ws.append([f"{doc.get('unit_prefix', 'Unité : ')}{facts.text(sheet['unit'])}"])
        ws.append([])
        ws.append([facts.text(h) for h in sheet["header"]])
        for cell in ws[ws.max_row]:
            cell.font = bold
        for row in sheet["rows"]:
            ws.append([facts.cell(c) for c in row])
            for cell in ws[ws.max_row]:
                if isinstance(cell.value, float) and not cell.value.is_integer():
                    cell.number_format = "#,##0.0#"
                elif isinstance(cell.value, int | float):
                    cell.number_format = "#,##0"
        if sheet.get("footnotes"):
            ws.append([])
            for note in sheet["footnotes"]:
                ws.append([facts.text(note)])
        ws.column_dimensions["A"].width = 34
        for letter in "BCDEF":
            ws.column_dimensions[letter].width = 18
    buffer = io.BytesIO()
    workbook.save(buffer)
    return normalize_zip(buffer.getvalue(), spec.timestamp)


# --- PDF ------------------------------------------------------------------------------------


def render_pdf(doc: Mapping[str, Any], facts: FactResolver, spec: CorpusSpec) -> bytes:
    from fpdf import FPDF

    pdf = FPDF(format="A4")
    pdf.core_fonts_encoding = "windows-1252"
    pdf.set_creation_date(spec.timestamp)
    title = facts.text(doc["title"])
    pdf.set_title(title)
    pdf.set_author(spec.author)
    pdf.set_margins(20, 20, 20)
    pdf.set_auto_page_break(True, margin=20)
    pages = doc["pages"]
    for number, blocks in enumerate(pages, start=1):
        pdf.add_page()
        if number == 1:
            pdf.set_font("Helvetica", "B", 16)
            pdf.multi_cell(0, 8, _cp1252(title), new_x="LMARGIN", new_y="NEXT")
            pdf.ln(4)
        for block in blocks:
            kind, value = _block_kind(block)
            if kind in HEADING_KEYS:
                pdf.ln(3)
                pdf.set_font("Helvetica", "B", 14 - HEADING_KEYS[kind])
                pdf.multi_cell(0, 7, _cp1252(facts.text(value)), new_x="LMARGIN", new_y="NEXT")
                pdf.ln(1)
            elif kind == "p":
                pdf.set_font("Helvetica", "", 10.5)
                pdf.multi_cell(0, 5.5, _cp1252(facts.text(value)), new_x="LMARGIN", new_y="NEXT")
                pdf.ln(2)
            elif kind == "table":
                _pdf_table(pdf, value, facts)
            else:
                raise RenderError(f"PDF pages support headings, paragraphs and tables, not {kind}")
        if pdf.page != number:
            raise RenderError(f"{doc['filename']}: page {number} overflows onto a new page")
    return bytes(pdf.output())


def _pdf_table(pdf: Any, table: Mapping[str, Any], facts: FactResolver) -> None:
    """Caption, header and rows one line each (cells joined by " | "), then the notes."""
    pdf.ln(1)
    if table.get("caption"):
        pdf.set_font("Helvetica", "B", 10.5)
        pdf.multi_cell(0, 6, _cp1252(facts.text(table["caption"])), new_x="LMARGIN", new_y="NEXT")
    lines = [(True, [facts.text(h) for h in table["header"]])]
    lines += [(False, [facts.cell_text(c) for c in row]) for row in table["rows"]]
    for is_header, cells in lines:
        if any(PDF_CELL_SEPARATOR.strip() in cell for cell in cells):
            raise RenderError(f"a PDF table cell contains the separator: {cells}")
        line = _cp1252(PDF_CELL_SEPARATOR.join(cells))
        pdf.set_font("Helvetica", "B" if is_header else "", 9.5)
        if pdf.get_string_width(line) > pdf.epw:
            raise RenderError(f"PDF table row wider than the page: {line!r}")
        pdf.cell(0, 5.5, line, new_x="LMARGIN", new_y="NEXT")
    notes = table.get("notes") or ([table["note"]] if table.get("note") else [])
    if notes:
        pdf.ln(1)
        pdf.set_font("Helvetica", "", 8.5)
        for note in notes:
            # One line each: the parser reads the note lines after a table as its footnote.
            text = _cp1252(facts.text(note))
            if pdf.get_string_width(text) > pdf.epw:
                raise RenderError(f"PDF table note wider than the page: {text!r}")
            pdf.cell(0, 4.5, text, new_x="LMARGIN", new_y="NEXT")
    pdf.ln(2)


def _cp1252(text: str) -> str:
    try:
        text.encode("cp1252")
    except UnicodeEncodeError as exc:
        raise RenderError(f"character not in cp1252 (PDF core font): {text[exc.start]!r}") from exc
    return text


# --- JSON records ---------------------------------------------------------------------------


def render_json(doc: Mapping[str, Any], facts: FactResolver) -> bytes:
    """``{"title", **meta, "records": [...]}``: strings and lone facts resolved, other JSON
    values (numbers, booleans, lists) kept as they are."""

    def value(raw: object) -> object:
        if isinstance(raw, str):
            return facts.cell(raw)
        if isinstance(raw, list):
            return [value(item) for item in raw]
        if isinstance(raw, dict):
            return {str(k): value(v) for k, v in raw.items()}
        return raw

    data: dict[str, object] = {"title": facts.text(doc["title"])}
    data.update({str(k): value(v) for k, v in (doc.get("meta") or {}).items()})
    data["records"] = [value(record) for record in doc["records"]]
    return (json.dumps(data, ensure_ascii=False, indent=2) + "\n").encode("utf-8")


# --- Driver ---------------------------------------------------------------------------------


def render_document(doc: Mapping[str, Any], facts: FactResolver, spec: CorpusSpec) -> bytes:
    fmt = doc["format"]
    facts.locale = str(doc.get("locale", "fr"))
    if fmt == "json":
        return render_json(doc, facts)
    if fmt == "md":
        return render_markdown(doc, facts)
    if fmt == "docx":
        return render_docx(doc, facts, spec)
    if fmt == "xlsx":
        return render_xlsx(doc, facts, spec)
    if fmt == "pdf":
        return render_pdf(doc, facts, spec)
    raise RenderError(f"unknown format {fmt!r}")


def render_corpus(facts_path: Path, out_dir: Path | None = None) -> list[Path]:
    """Render every document of ``facts_path`` into ``out_dir`` (default: beside it)."""
    spec = load_spec(facts_path)
    target = out_dir if out_dir is not None else facts_path.parent
    target.mkdir(parents=True, exist_ok=True)
    resolver = FactResolver(spec.facts)
    rendered = [(doc["filename"], render_document(doc, resolver, spec)) for doc in spec.documents]
    unused = sorted(set(spec.facts) - resolver.used)
    if unused:
        raise RenderError(f"facts defined but never planted: {', '.join(unused)}")
    written: list[Path] = []
    for filename, data in rendered:
        path = target / filename
        path.write_bytes(data)
        written.append(path)
    return written


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m ragv2_demo.render",
        description="Render facts.yaml into the corpus documents beside it.",
    )
    parser.add_argument("corpus_dir", type=Path, help="directory holding facts.yaml")
    parser.add_argument("--output", type=Path, default=None, help="write elsewhere")
    args = parser.parse_args(argv)
    try:
        written = render_corpus(args.corpus_dir / FACTS_FILENAME, args.output)
    except (RenderError, OSError) as exc:
        print(f"render: {exc}", file=sys.stderr)
        return 1
    for path in written:
        print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
