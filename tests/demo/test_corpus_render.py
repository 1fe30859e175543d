"""The Nimbus Analytics corpus generator: deterministic, complete, and in sync with the repo."""

from __future__ import annotations

import hashlib
import io
import zipfile
from pathlib import Path

import pytest
import yaml

from ragv2_demo.parsers import parse_document
from ragv2_demo.render import RenderError, main, render_corpus

REPO = Path(__file__).resolve().parents[2]
CORPUS = REPO / "corpus" / "nimbus-analytics"
FACTS = CORPUS / "facts.yaml"
DOCUMENTS = [
    "guide-produit-nimbus.md",
    "contrat-cadre-meridia.docx",
    "resultats-financiers-2025.xlsx",
    "politique-securite.pdf",
    "faq-support.md",
    "notes-comite-strategie.docx",
]


@pytest.fixture(scope="module")
def rendered(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("render-a")
    render_corpus(FACTS, out)
    return out


def test_renders_the_six_documents_of_the_seed(rendered: Path) -> None:
    assert sorted(p.name for p in rendered.iterdir()) == sorted(DOCUMENTS)


def test_rendering_twice_gives_identical_bytes(rendered: Path, tmp_path: Path) -> None:
    render_corpus(FACTS, tmp_path)
    for name in DOCUMENTS:
        assert (tmp_path / name).read_bytes() == (rendered / name).read_bytes(), name


def test_zip_entries_have_fixed_timestamps(rendered: Path) -> None:
    for name in DOCUMENTS:
        if name.endswith((".docx", ".xlsx")):
            with zipfile.ZipFile(rendered / name) as archive:
                assert {info.date_time for info in archive.infolist()} == {(2026, 1, 1, 0, 0, 0)}
                core = archive.read("docProps/core.xml").decode()
                assert "2026-01-15T09:00:00Z" in core


def test_committed_documents_match_a_fresh_render(rendered: Path) -> None:
    # Markdown must be byte-identical; binary formats are compared by what they contain, so a
    # newer fpdf2/openpyxl writing different bytes does not hide a stale fact.
    for name in DOCUMENTS:
        committed, fresh = CORPUS / name, rendered / name
        if name.endswith(".md"):
            assert committed.read_bytes() == fresh.read_bytes(), name
        else:
            assert parse_document(committed).blocks == parse_document(fresh).blocks, name


def test_allowlist_pins_the_committed_bytes() -> None:
    allowlist = yaml.safe_load((REPO / "gold" / "allowlist.yaml").read_text(encoding="utf-8"))
    entries = {entry["filename"]: entry for entry in allowlist["files"]}
    # Other corpus folders share the allow-list; this corpus's six documents must all be in it.
    assert set(DOCUMENTS) <= set(entries)
    for name, entry in ((name, entries[name]) for name in DOCUMENTS):
        assert entry["file_id"] == Path(name).stem
        digest = hashlib.sha256((CORPUS / name).read_bytes()).hexdigest()
        assert entry["sha256"] == digest, f"{name}: re-render and update gold/allowlist.yaml"


def test_pdf_has_three_pages_fixed_dates_and_extractable_euro_sign(rendered: Path) -> None:
    from pypdf import PdfReader

    reader = PdfReader(io.BytesIO((rendered / "politique-securite.pdf").read_bytes()))
    assert len(reader.pages) == 3
    assert reader.metadata is not None
    assert str(reader.metadata["/CreationDate"]) == "D:20260115090000Z"
    # "€" travels through the cp1252 core font and comes back from pypdf.
    contract = parse_document(rendered / "contrat-cadre-meridia.docx")
    assert any("150 000 €" in block.text for block in contract.blocks)
    page_texts = [page.extract_text() for page in reader.pages]
    assert "RPO) est de 15 minutes" in page_texts[1]
    assert "RPO" not in page_texts[0] + page_texts[2]


def test_euro_sign_survives_the_pdf_core_font(tmp_path: Path) -> None:
    facts = tmp_path / "facts.yaml"
    facts.write_text(
        yaml.safe_dump(
            {
                "facts": {"price": "1 689 k€"},
                "documents": [
                    {
                        "filename": "x.pdf",
                        "format": "pdf",
                        "title": "Prix œuvre",
                        "pages": [[{"h1": "1. Tarif"}, {"p": "Le total est de {price} « HT »."}]],
                    }
                ],
            },
            allow_unicode=True,
        ),
        encoding="utf-8",
    )
    render_corpus(facts, tmp_path)
    doc = parse_document(tmp_path / "x.pdf")
    assert doc.title == "Prix œuvre"
    assert [(b.kind, b.section, b.text) for b in doc.blocks[1:]] == [
        ("heading", "1. Tarif", "1. Tarif"),
        ("text", "1. Tarif", "Le total est de 1 689 k€ « HT »."),
    ]


def _write_spec(path: Path, facts: dict[str, object], text: str) -> Path:
    spec = {
        "facts": facts,
        "documents": [{"filename": "a.md", "format": "md", "title": "A", "blocks": [{"p": text}]}],
    }
    path.write_text(yaml.safe_dump(spec, allow_unicode=True), encoding="utf-8")
    return path


def test_an_unknown_fact_reference_is_an_error(tmp_path: Path) -> None:
    spec = _write_spec(tmp_path / "facts.yaml", {"a": "1"}, "{a} and {b}")
    with pytest.raises(RenderError, match=r"unknown fact \{b\}"):
        render_corpus(spec, tmp_path / "out")


def test_a_fact_never_planted_is_an_error(tmp_path: Path) -> None:
    spec = _write_spec(tmp_path / "facts.yaml", {"a": "1", "orphan": "2"}, "{a}")
    with pytest.raises(RenderError, match="never planted: orphan"):
        render_corpus(spec, tmp_path / "out")
    assert not (tmp_path / "out" / "a.md").exists()


def test_numeric_facts_are_written_the_french_way(tmp_path: Path) -> None:
    spec = _write_spec(tmp_path / "facts.yaml", {"ca": 1689, "sla": 99.7}, "{ca} k€, {sla} %")
    render_corpus(spec, tmp_path)
    assert (tmp_path / "a.md").read_text(encoding="utf-8") == "# A\n\n1 689 k€, 99,7 %\n"


def test_command_line_writes_beside_facts_and_reports_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _write_spec(tmp_path / "facts.yaml", {"a": "x"}, "{a}")
    assert main([str(tmp_path)]) == 0
    assert (tmp_path / "a.md").read_text(encoding="utf-8") == "# A\n\nx\n"
    assert capsys.readouterr().out.strip() == str(tmp_path / "a.md")
    _write_spec(tmp_path / "facts.yaml", {"a": "x"}, "{zz}")
    assert main([str(tmp_path)]) == 1
    assert "unknown fact {zz}" in capsys.readouterr().err
