"""The text rag_api's own loaders store for a corpus file, for the gold self-check.

rag_api (``app/utils/document_loader.py``) loads an upload with langchain-community's loaders
and splits it with ``RecursiveCharacterTextSplitter(chunk_size=1500, chunk_overlap=100)``:

- PDF: ``PyPDFLoader`` (pypdf), one document per page, ``metadata.page`` 0-based;
- DOCX: ``Docx2txtLoader`` (docx2txt: paragraphs and every table cell on its own line);
- XLSX: ``UnstructuredExcelLoader``; JSON and unknown text: ``TextLoader`` (raw text);
- Markdown: ``UnstructuredMarkdownLoader``.

Unstructured needs NLTK data (``punkt_tab``) that its Docker image downloads at build time
and that cannot be fetched here. So the check uses the modes that need none and says so:

- XLSX: ``UnstructuredExcelLoader(find_subtable=False)`` — the same sheet text rag_api
  stores (one row as ``T4 1689 33 272 1312``) without the sub-table detection, which is the
  step that calls the sentence tokenizer;
- Markdown: unstructured's Markdown partitioning calls the tokenizer for every text block in
  every mode, so Markdown is read as rag_api's ``TextLoader`` reads text files (raw), and
  also as rendered text (Markdown rendered to HTML by markdown-it-py, tags dropped), which
  is the text unstructured keeps of a Markdown file.

Each extractor yields ``RetrievedItem``s as the rag-api adapter would make them from the
stored chunks (1-based page for PDFs, no section/table/row for anything).
"""

from __future__ import annotations

import html
import os
import re
import warnings
from collections.abc import Callable
from functools import cache
from pathlib import Path

from pytest_ragv2.systems.outputs import RetrievedItem

CHUNK_SIZE = 1500
CHUNK_OVERLAP = 100

Extractor = Callable[[Path], list[RetrievedItem]]


def _split(pages: list[tuple[str, int | None]], path: Path) -> list[RetrievedItem]:
    from langchain_text_splitters import RecursiveCharacterTextSplitter

    splitter = RecursiveCharacterTextSplitter(chunk_size=CHUNK_SIZE, chunk_overlap=CHUNK_OVERLAP)
    items: list[RetrievedItem] = []
    for text, page in pages:
        for chunk in splitter.split_text(text):
            items.append(
                RetrievedItem(
                    rank=len(items) + 1,
                    text=chunk,
                    file_id=path.stem,
                    filename=path.name,
                    page=None if page is None else page + 1,
                )
            )
    return items


def _langchain(loader: object) -> list[tuple[str, int | None]]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # langchain-community announces its sunset on import
        documents = loader.load()  # type: ignore[attr-defined]
    return [(doc.page_content, doc.metadata.get("page")) for doc in documents]


def rag_api_pdf(path: Path) -> list[RetrievedItem]:
    from langchain_community.document_loaders import PyPDFLoader

    return _split(_langchain(PyPDFLoader(str(path))), path)


def rag_api_docx(path: Path) -> list[RetrievedItem]:
    from langchain_community.document_loaders import Docx2txtLoader

    return _split(_langchain(Docx2txtLoader(str(path))), path)


def rag_api_xlsx(path: Path) -> list[RetrievedItem]:
    os.environ.setdefault("AUTO_DOWNLOAD_NLTK", "false")
    from langchain_community.document_loaders import UnstructuredExcelLoader

    return _split(_langchain(UnstructuredExcelLoader(str(path), find_subtable=False)), path)


def rag_api_text(path: Path) -> list[RetrievedItem]:
    from langchain_community.document_loaders import TextLoader

    return _split(_langchain(TextLoader(str(path), encoding="utf-8")), path)


_TAG = re.compile(r"<[^>]+>")


def rendered_markdown(path: Path) -> list[RetrievedItem]:
    from markdown_it import MarkdownIt

    rendered = MarkdownIt("commonmark").enable("table").render(path.read_text(encoding="utf-8"))
    text = html.unescape(_TAG.sub("\n", rendered))
    text = re.sub(r"\n{2,}", "\n\n", text).strip()
    return _split([(text, None)], path)


# extractor name -> file suffix -> extractor
RAG_API_EXTRACTORS: dict[str, dict[str, Extractor]] = {
    "rag_api loaders": {
        ".pdf": rag_api_pdf,
        ".docx": rag_api_docx,
        ".xlsx": rag_api_xlsx,
        ".json": rag_api_text,
        ".md": rag_api_text,
    },
    "rendered markdown": {".md": rendered_markdown},
}


@cache
def extract(extractor: str, path: Path) -> tuple[RetrievedItem, ...]:
    """The chunks ``extractor`` stores for ``path`` (empty when it does not read the type)."""
    read = RAG_API_EXTRACTORS[extractor].get(path.suffix.lower())
    return tuple(read(path)) if read is not None else ()
