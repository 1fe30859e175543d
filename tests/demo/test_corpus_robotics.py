"""The Nimbus Robotics trio (behaviour matrix W1–W12): deterministic, committed, allow-listed,
and planted so that the matrix's traps and its missing subject hold."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
import yaml

from ragv2_demo.chunks import ParsedDocument, load_corpus
from ragv2_demo.parsers import parse_document
from ragv2_demo.render import render_corpus

REPO = Path(__file__).resolve().parents[2]
CORPUS = REPO / "corpus" / "nimbus-robotics"
FACTS = CORPUS / "facts.yaml"
DOCUMENTS = [
    "nimbus-x2-product-specification.pdf",
    "nimbus-robotics-remote-work-policy.docx",
    "nimbus-robotics-roadmap-notes.md",
]


@pytest.fixture(scope="module")
def rendered(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("robotics")
    render_corpus(FACTS, out)
    return out


@pytest.fixture(scope="module")
def docs() -> dict[str, ParsedDocument]:
    return {doc.filename: doc for doc in load_corpus(CORPUS)}


def test_renders_the_three_documents_twice_identically(rendered: Path, tmp_path: Path) -> None:
    assert sorted(p.name for p in rendered.iterdir()) == sorted(DOCUMENTS)
    render_corpus(FACTS, tmp_path)
    for name in DOCUMENTS:
        assert (tmp_path / name).read_bytes() == (rendered / name).read_bytes(), name


def test_committed_documents_match_a_fresh_render(rendered: Path) -> None:
    for name in DOCUMENTS:
        committed, fresh = CORPUS / name, rendered / name
        if name.endswith(".md"):
            assert committed.read_bytes() == fresh.read_bytes(), name
        else:
            assert parse_document(committed).blocks == parse_document(fresh).blocks, name


def test_allowlist_pins_the_committed_bytes() -> None:
    allowlist = yaml.safe_load((REPO / "gold" / "allowlist.yaml").read_text(encoding="utf-8"))
    entries = {entry["filename"]: entry for entry in allowlist["files"]}
    for name in DOCUMENTS:
        assert entries[name]["file_id"] == Path(name).stem
        digest = hashlib.sha256((CORPUS / name).read_bytes()).hexdigest()
        assert entries[name]["sha256"] == digest, f"{name}: re-render and update the allow-list"


def test_the_specification_is_a_two_page_pdf_with_its_table_on_page_1(
    docs: dict[str, ParsedDocument],
) -> None:
    spec = docs["nimbus-x2-product-specification.pdf"]
    assert spec.page_count == 2
    rows = {b.row_key: (b.page, b.row, b.text) for b in spec.blocks if b.kind == "table_row"}
    assert rows["Payload capacity"] == (1, 1, "Payload capacity | 340 kg")
    assert rows["Runtime per charge"] == (1, 3, "Runtime per charge | 11.5 hours")
    assert spec.tables() == ["Table 1 - Key performance figures"]


def _text(docs: dict[str, ParsedDocument]) -> str:
    return "\n".join(block.text for doc in docs.values() for block in doc.blocks).casefold()


def test_the_traps_generic_answers_are_not_in_the_corpus(docs: dict[str, ParsedDocument]) -> None:
    text = _text(docs)
    assert "warranty of 30 months" in text
    assert "sodium-ion" in text
    for generic in ("12 months", "24 months", "one year", "two years", "lithium", "li-ion"):
        assert generic not in text, generic


def test_the_x2_price_is_in_no_document_only_the_x3_target_price(
    docs: dict[str, ParsedDocument],
) -> None:
    priced = [b.text for doc in docs.values() for b in doc.blocks if "price" in b.text.casefold()]
    assert priced == [
        "Target list price of the X3: €48,000 per unit, to be confirmed by finance once the"
        " supplier quotes for the lifting deck are in."
    ]
