"""Corpus loading and the two chunkers the demo retrieval paths index.

- :func:`chunk_fixed` (V1) cuts each document's plain text into fixed-size character
  windows, blind to structure. A window keeps only the page where it starts (PDF); it
  carries no section, table or row.
- :func:`chunk_structured` (V2) makes one chunk per section (long sections split at
  paragraph boundaries), tracks PDF pages, and one chunk per table row whose text carries
  the table name, the header cells with the row's values, the unit and the footnote, so a
  row can be read on its own ("Sheet CA 2025 | Trimestre: T4 | CA (k€): 1 689 | ...").

The demo is a system under test: nothing here reads cases/ or gold/.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ragv2_demo.parsers import (
    SECTION_SEPARATOR,
    SUPPORTED_SUFFIXES,
    Block,
    ParsedDocument,
    parse_document,
)

__all__ = [
    "Block",
    "Chunk",
    "ParsedDocument",
    "chunk_fixed",
    "chunk_structured",
    "document_text",
    "load_corpus",
]

IGNORED_FILENAMES = frozenset({"facts.yaml"})
MAX_SECTION_CHARS = 1000


@dataclass(frozen=True, slots=True)
class Chunk:
    chunk_id: str  # stable, e.g. f"{file_id}#{n}"
    file_id: str  # = the file name's stem, e.g. "politique-securite"
    filename: str  # e.g. "politique-securite.pdf"
    text: str
    page: int | None = None  # 1-based
    section: str | None = None  # heading path joined with " > " or numbered clause
    table: str | None = None  # table name / sheet name
    row: int | None = None  # 1-based data row inside the table
    row_key: str | None = None  # first cell of the row
    kind: str = "text"  # "text" | "table_row" | "record"
    header: tuple[str, ...] = ()  # table rows: the header cells
    unit: str | None = None  # table rows: the table's unit ("k€")
    footnote: str | None = None  # table rows: the footnote below the table


def load_corpus(corpus_dir: Path) -> list[ParsedDocument]:
    """Parse every supported file under ``corpus_dir`` (recursively), sorted by path.

    Skips ``facts.yaml``, files whose name starts with "_" or ".", and unsupported suffixes.
    """
    paths = sorted(
        (
            path
            for path in corpus_dir.rglob("*")
            if path.is_file()
            and path.suffix.lower() in SUPPORTED_SUFFIXES
            and not path.name.startswith(("_", "."))
            and path.name not in IGNORED_FILENAMES
        ),
        key=lambda p: p.relative_to(corpus_dir).as_posix(),
    )
    return [parse_document(path) for path in paths]


def document_text(doc: ParsedDocument) -> tuple[str, list[tuple[int, int | None]]]:
    """The document's plain text (blocks joined by blank lines) and each block's start offset
    with its page, as a structure-blind extractor would see it."""
    parts: list[str] = []
    starts: list[tuple[int, int | None]] = []
    offset = 0
    for block in doc.blocks:
        if parts:
            offset += 2
        starts.append((offset, block.page))
        parts.append(block.text)
        offset += len(block.text)
    return "\n\n".join(parts), starts


def chunk_fixed(docs: Sequence[ParsedDocument], size: int = 400, overlap: int = 50) -> list[Chunk]:
    if size <= 0 or not 0 <= overlap < size:
        raise ValueError("need size > 0 and 0 <= overlap < size")
    chunks: list[Chunk] = []
    step = size - overlap
    for doc in docs:
        text, starts = document_text(doc)
        number = 0
        start = 0
        while start < len(text):
            window = text[start : start + size].strip()
            if window:
                chunks.append(
                    Chunk(
                        chunk_id=f"{doc.file_id}#{number}",
                        file_id=doc.file_id,
                        filename=doc.filename,
                        text=window,
                        page=_page_at(starts, start),
                    )
                )
                number += 1
            if start + size >= len(text):
                break
            start += step
    return chunks


def _page_at(starts: list[tuple[int, int | None]], offset: int) -> int | None:
    page: int | None = None
    for start, block_page in starts:
        if start > offset:
            break
        page = block_page
    return page


def chunk_structured(docs: Sequence[ParsedDocument]) -> list[Chunk]:
    chunks: list[Chunk] = []
    for doc in docs:
        builder = _StructuredBuilder(doc)
        for block in doc.blocks:
            builder.add(block)
        builder.flush()
        chunks.extend(builder.chunks)
    return chunks


class _StructuredBuilder:
    """Groups consecutive paragraphs of one (page, section) into section chunks; emits
    table rows and records as chunks of their own, in document order."""

    def __init__(self, doc: ParsedDocument) -> None:
        self.doc = doc
        self.chunks: list[Chunk] = []
        self.key: tuple[int | None, str | None] | None = None
        self.paragraphs: list[str] = []

    def _next_id(self) -> str:
        return f"{self.doc.file_id}#{len(self.chunks)}"

    def _context(self, section: str | None) -> str:
        return SECTION_SEPARATOR.join(part for part in (self.doc.title, section) if part)

    def add(self, block: Block) -> None:
        if block.kind in {"heading", "table_text"}:
            return  # headings live in the section path; sheet titles/notes on their rows
        if block.kind == "table_row":
            self._add_row(block)
            return
        if block.kind == "record":
            self._add_record(block)
            return
        key = (block.page, block.section)
        if key != self.key:
            self.flush()
            self.key = key
        self.paragraphs.append(block.text)

    def flush(self) -> None:
        if self.key is None or not self.paragraphs:
            self.paragraphs = []
            return
        page, section = self.key
        context = self._context(section)
        for piece in _split_paragraphs(self.paragraphs, MAX_SECTION_CHARS):
            text = f"{context}\n{piece}" if context else piece
            self.chunks.append(
                Chunk(
                    chunk_id=self._next_id(),
                    file_id=self.doc.file_id,
                    filename=self.doc.filename,
                    text=text,
                    page=page,
                    section=section,
                )
            )
        self.paragraphs = []

    def _add_row(self, block: Block) -> None:
        label = "Sheet" if self.doc.format == "xlsx" else "Table"
        parts = [f"{label} {block.table}"]
        if block.caption:
            parts.append(block.caption)
        for name, value in zip(block.header, block.cells, strict=False):
            if value:
                parts.append(f"{name}: {value}" if name else value)
        if block.unit:
            parts.append(f"unité: {block.unit}")
        if block.footnote:
            parts.append(f"note: {block.footnote}")
        row_text = " | ".join(parts)
        context = self._context(block.section)
        self.chunks.append(
            Chunk(
                chunk_id=self._next_id(),
                file_id=self.doc.file_id,
                filename=self.doc.filename,
                text=f"{context}\n{row_text}" if context else row_text,
                page=block.page,
                section=block.section,
                table=block.table,
                row=block.row,
                row_key=block.row_key,
                kind="table_row",
                header=block.header,
                unit=block.unit,
                footnote=block.footnote,
            )
        )

    def _add_record(self, block: Block) -> None:
        # A record file's title (e.g. "synthetic demo data") travels with every record.
        context = self._context(None)
        self.chunks.append(
            Chunk(
                chunk_id=self._next_id(),
                file_id=self.doc.file_id,
                filename=self.doc.filename,
                text=f"{context}\n{block.text}" if context else block.text,
                table=block.table,
                row=block.row,
                row_key=block.row_key,
                kind="record",
            )
        )


def _split_paragraphs(paragraphs: list[str], limit: int) -> list[str]:
    """Join paragraphs into pieces of at most ``limit`` characters, cutting only between
    paragraphs (a single longer paragraph stays whole)."""
    pieces: list[str] = []
    current: list[str] = []
    length = 0
    for paragraph in paragraphs:
        added = len(paragraph) + (2 if current else 0)
        if current and length + added > limit:
            pieces.append("\n\n".join(current))
            current, length = [], 0
            added = len(paragraph)
        current.append(paragraph)
        length += added
    if current:
        pieces.append("\n\n".join(current))
    return pieces
