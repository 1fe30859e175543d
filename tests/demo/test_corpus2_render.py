"""The Tarnwald Verdichtertechnik corpus (corpus 2) generator: deterministic and in sync."""

from __future__ import annotations

import json
import zipfile
from collections.abc import Mapping
from pathlib import Path

import pytest
import yaml

from ragv2_demo.parsers import parse_document
from ragv2_demo.render import RenderError, format_number_en, render_corpus

CORPUS = Path(__file__).resolve().parents[2] / "corpus" / "tarnwald-verdichter"
FACTS = CORPUS / "facts.yaml"


def committed_documents() -> list[str]:
    return sorted(p.name for p in CORPUS.iterdir() if p.is_file() and p.name != "facts.yaml")


@pytest.fixture(scope="module")
def rendered(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("corpus2-a")
    render_corpus(FACTS, out)
    return out


def test_renders_exactly_the_committed_documents(rendered: Path) -> None:
    names = sorted(p.name for p in rendered.iterdir())
    assert names == committed_documents()
    assert len(names) == 27


def test_rendering_twice_gives_identical_bytes(rendered: Path, tmp_path: Path) -> None:
    render_corpus(FACTS, tmp_path)
    for name in committed_documents():
        assert (tmp_path / name).read_bytes() == (rendered / name).read_bytes(), name


def test_committed_documents_match_a_fresh_render(rendered: Path) -> None:
    # Text formats byte for byte; binary formats by what they contain (as for Nimbus).
    for name in committed_documents():
        committed, fresh = CORPUS / name, rendered / name
        if name.endswith((".md", ".json")):
            assert committed.read_bytes() == fresh.read_bytes(), name
        else:
            assert parse_document(committed).blocks == parse_document(fresh).blocks, name


def test_fixed_dates_in_zip_entries_and_pdf_metadata(rendered: Path) -> None:
    from pypdf import PdfReader

    for name in committed_documents():
        if name.endswith((".docx", ".xlsx")):
            with zipfile.ZipFile(rendered / name) as archive:
                assert {info.date_time for info in archive.infolist()} == {(2026, 1, 1, 0, 0, 0)}
                assert "2026-02-02T08:00:00Z" in archive.read("docProps/core.xml").decode()
        elif name.endswith(".pdf"):
            metadata = PdfReader(rendered / name).metadata
            assert metadata is not None
            assert str(metadata["/CreationDate"]) == "D:20260202080000Z", name


def test_contradicting_facts_are_two_separate_facts() -> None:
    facts = yaml.safe_load(FACTS.read_text(encoding="utf-8"))["facts"]
    assert (facts["tvs75_revision_brochure"], facts["tvs75_revision_datasheet"]) == ("C", "D")
    assert (facts["tvs75_max_pressure_brochure"], facts["tvs75_max_pressure_datasheet"]) == (13, 14)
    assert (facts["tvm_launch_overview"], facts["tvm_launch_chronicle"]) == ("2019", "2018")
    assert FACTS.read_text(encoding="utf-8").count("CONTRADICTION") >= 2


def _spec(tmp_path: Path, facts: Mapping[str, object], document: Mapping[str, object]) -> Path:
    path = tmp_path / "facts.yaml"
    path.write_text(
        yaml.safe_dump({"facts": facts, "documents": [document]}, allow_unicode=True),
        encoding="utf-8",
    )
    return path


def test_english_locale_writes_numbers_the_english_way(tmp_path: Path) -> None:
    assert [format_number_en(v) for v in (1689, 1.32, 16.0, 0.92)] == [
        "1,689",
        "1.32",
        "16",
        "0.92",
    ]
    facts = {"n": 1689, "q": 1.32}
    blocks = [{"p": "{n} Nm³/h, {q} m³/min"}]
    doc: dict[str, object] = {"filename": "a.md", "format": "md", "title": "A", "locale": "en"}
    doc["blocks"] = blocks
    render_corpus(_spec(tmp_path, facts, doc), tmp_path)
    assert (tmp_path / "a.md").read_text(encoding="utf-8") == "# A\n\n1,689 Nm³/h, 1.32 m³/min\n"
    doc["locale"] = "de"
    render_corpus(_spec(tmp_path, facts, doc), tmp_path)
    assert (tmp_path / "a.md").read_text(encoding="utf-8") == "# A\n\n1 689 Nm³/h, 1,32 m³/min\n"


def test_json_documents_keep_types_and_resolve_lone_facts(tmp_path: Path) -> None:
    doc = {
        "filename": "p.json",
        "format": "json",
        "title": "Projekte {year}",
        "meta": {"note": "synthetic demo data", "synthetic": True},
        "records": [{"project_id": "P-1", "synthetic": True, "bar": "{bar}", "x": None}],
    }
    render_corpus(_spec(tmp_path, {"bar": 350, "year": "2025"}, doc), tmp_path)
    assert json.loads((tmp_path / "p.json").read_text(encoding="utf-8")) == {
        "title": "Projekte 2025",
        "note": "synthetic demo data",
        "synthetic": True,
        "records": [{"project_id": "P-1", "synthetic": True, "bar": 350, "x": None}],
    }


def _pdf_table_doc(header: list[str]) -> dict[str, object]:
    table = {"header": header, "rows": [["a", "1"]]}
    return {"filename": "t.pdf", "format": "pdf", "title": "T", "pages": [[{"table": table}]]}


def test_a_pdf_table_row_wider_than_the_page_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(RenderError, match="wider than the page"):
        render_corpus(_spec(tmp_path, {}, _pdf_table_doc(["x" * 200, "y"])), tmp_path / "o")


def test_a_pdf_table_cell_may_not_contain_the_separator(tmp_path: Path) -> None:
    with pytest.raises(RenderError, match="separator"):
        render_corpus(_spec(tmp_path, {}, _pdf_table_doc(["a | b", "c"])), tmp_path / "o")
