"""The rag-api adapter, the gold and the demo against what a REAL rag_api sends and stores.

tests/fixtures/rag_api/ holds responses recorded from rag_api's current source (Postgres +
pgvector, a real embedding model, the bundled corpus uploaded through /embed; README.md there
says how). These tests read them as the adapter reads a live answer, so a gap between the
real service and our demo cannot hide behind the demo.
"""

from __future__ import annotations

import dataclasses
import json
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from pytest_ragv2.gold.schema import Evidence
from pytest_ragv2.scoring.evidence import FULL_STEP, match_step
from pytest_ragv2.systems.outputs import RetrievedItem
from pytest_ragv2.systems.rag_api import document_to_item, parse_pairs
from pytest_ragv2.systems.upload_names import filename_from_source
from ragv2_demo.chunks import Chunk
from ragv2_demo.engine import DemoIndex
from ragv2_demo.server import DemoServer
from tests.gold.test_corpus_gold import all_gold_units

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "rag_api"


def fixture(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((FIXTURES / name).read_text(encoding="utf-8"))
    return data


@cache
def manifest_files() -> dict[str, dict[str, Any]]:
    """file name -> the manifest's entry (file_id on the service, corpus path, states)."""
    return {Path(entry["path"]).name: entry for entry in fixture("manifest.json")["files"]}


@cache
def stored_chunks(filename: str) -> tuple[RetrievedItem, ...]:
    recorded = fixture(f"chunks/{filename}.json")
    if recorded["status_code"] != 200:
        return ()
    documents = sorted(recorded["body"], key=lambda doc: doc["metadata"]["_rag_chunk_index"])
    return tuple(document_to_item(n, doc, 0.0) for n, doc in enumerate(documents, 1))


@pytest.mark.parametrize(
    ("source", "user_id", "expected"),
    [
        (
            "/app/uploads/user-ragv2-test/datenblatt-tvk-110_d19fe72c05ab4bc0a360d571b9243fcb.pdf",
            "user-ragv2-test",
            "datenblatt-tvk-110.pdf",
        ),
        (
            "/app/uploads/u1/my_file_v2_0123456789abcdef0123456789abcdef.docx",
            "u1",
            "my_file_v2.docx",
        ),
        ("/app/uploads/temp/u1-Preisliste 2026.xlsx", "u1", "Preisliste 2026.xlsx"),
        ("C:\\uploads\\u1\\notes_0123456789abcdef0123456789abcdef", "u1", "notes"),
        ("/srv/files/handbook.pdf", "u1", "handbook.pdf"),
        ("/srv/files/report_2025.pdf", None, "report_2025.pdf"),
        ("/tmp/tmpk7p2rk8b.csv", "u1", None),  # a re-encoded CSV: the name is lost
        ("/app/uploads/temp/7-Preisliste.xlsx", 7, "7-Preisliste.xlsx"),  # not a user id
        ("/app/uploads/temp/u1-Preisliste.xlsx", ["u1"], "u1-Preisliste.xlsx"),
    ],
)
def test_every_source_form_rag_api_has_written_maps_to_the_original_name(
    source: str, user_id: object, expected: str
) -> None:
    assert filename_from_source(source, user_id) == expected
    assert filename_from_source(source, user_id) == expected  # the second time, as kept


def test_real_query_answers_map_to_original_file_names_and_one_based_pages() -> None:
    checked = 0
    for path in sorted((FIXTURES / "queries").glob("*query*.json")):
        if path.name.startswith("csv-"):
            continue  # a file outside the corpus: test_a_real_csv_row_is_one_based below
        recorded = json.loads(path.read_text(encoding="utf-8"))
        if recorded["status_code"] != 200:
            continue
        for rank, (document, _) in enumerate(parse_pairs(recorded["body"], path.name), 1):
            item = document_to_item(rank, document, 0.0)
            entry = next(e for e in manifest_files().values() if e["file_id"] == item.file_id)
            assert item.filename == Path(entry["path"]).name, path.name
            metadata = document["metadata"]
            if entry["file_type"] == "pdf":
                assert item.page == metadata["page"] + 1 == int(metadata["page_label"])
            else:
                assert item.page is None
            assert (item.section, item.table, item.row) == (None, None, None)
            checked += 1
    assert checked >= 20


def test_a_real_csv_row_is_one_based_and_its_lost_name_is_not_guessed() -> None:
    """rag_api's CSV loader stores one chunk per row ("column: value" lines) with a 0-based
    ``row``; an ASCII CSV is re-encoded into a temporary copy whose path becomes ``source``,
    so the original name is gone and the file is known by its id alone."""
    recorded = fixture("queries/csv-query_multiple.json")
    items = [
        document_to_item(rank, document, distance)
        for rank, (document, distance) in enumerate(parse_pairs(recorded["body"], "csv"), 1)
    ]
    top = items[0]
    assert top.row == recorded["body"][0][0]["metadata"]["row"] + 1 == 2
    assert top.filename is None
    assert top.file_id == "csv--ersatzteile-auszug.csv"
    gold = Evidence(
        file_id="csv--ersatzteile-auszug.csv",
        table="ersatzteile-auszug",
        row=2,
        anchor="KV-4501-9 | Ventilplatte Saugseite | TVK 110 | 3 800",
    )
    assert match_step(top, gold) == FULL_STEP  # by its row metadata
    assert match_step(dataclasses.replace(top, row=None), gold) == FULL_STEP  # by the anchor
    assert match_step(items[1], gold) < FULL_STEP


def test_real_service_keeps_no_structure_beyond_pdf_pages() -> None:
    for name, entry in manifest_files().items():
        for item in stored_chunks(name):
            assert item.filename == name
            assert (item.page is not None) == (entry["file_type"] == "pdf")
            assert item.section is item.table is item.row is None


def _gold_entries() -> list[Evidence]:
    entries: dict[tuple[Any, ...], Evidence] = {}
    for unit in all_gold_units():
        for ev in unit.evidence:
            entries[(ev.filename, ev.page, ev.section, ev.table, ev.row, ev.anchor)] = ev
    return list(entries.values())


def test_every_gold_entry_is_attainable_in_what_the_real_service_stored() -> None:
    """Each entry of a file the real service indexed (PDF, DOCX, JSON) is met at full
    granularity by one of its real stored chunks: by page where the gold names one, by its
    anchor where the service keeps no section, table or row."""
    unattainable: list[str] = []
    checked = 0
    for ev in _gold_entries():
        chunks = stored_chunks(ev.filename or "")
        if not chunks:
            continue  # Markdown and XLSX: not indexed offline (tests/extractors.py reads them)
        checked += 1
        # the service has its own file ids; the gold is matched by file name here
        best = max(match_step(dataclasses.replace(c, file_id=ev.file_id), ev) for c in chunks)
        if best < FULL_STEP:
            unattainable.append(f"{ev.filename} {ev.anchor!r}: best step {best}")
    assert checked >= 70
    assert unattainable == []


def test_md_and_xlsx_uploads_fail_offline_as_the_real_service_answers() -> None:
    for name, entry in manifest_files().items():
        if entry["file_type"] in ("md", "xlsx"):
            embed = fixture(f"embed/{name}.json")
            assert embed["status_code"] == 400
            assert "punkt_tab" in embed["body"]["detail"]
            assert stored_chunks(name) == ()


# ---------------------------------------------------------------- the demo, shaped like it


@pytest.fixture(scope="module")
def demo() -> Any:
    chunks = [
        Chunk("sheet#0", "datenblatt", "datenblatt.pdf", "Datenblatt TVK 110", page=1),
        Chunk("manual#0", "anleitung", "anleitung.docx", "1. Sicherheit", section="1"),
        Chunk("twin#0", "twin", "twin.json", '"project_id": "TW-P-24-001"'),
    ]
    index = DemoIndex.from_chunks(chunks, chunks)
    info = {key: f"demo {key}" for key in ("title", "author", "creator", "producer")}
    info["creationdate"] = "2026-02-02T08:00:00+00:00"
    with DemoServer(dataclasses.replace(index, file_info={"datenblatt": info})) as server:
        yield server


def _real_document(file_type: str) -> dict[str, Any]:
    recorded = fixture(f"queries/{file_type}-query_multiple.json")
    document: dict[str, Any] = recorded["body"][0][0]
    return document


@pytest.mark.parametrize(
    ("file_type", "file_id"), [("pdf", "datenblatt"), ("docx", "anleitung"), ("json", "twin")]
)
def test_the_demos_rag_api_documents_have_the_real_shape(
    demo: DemoServer, file_type: str, file_id: str
) -> None:
    import httpx

    body = {"query": "TVK", "file_ids": [file_id], "k": 1}
    document = httpx.post(f"{demo.url}/v1/query_multiple", json=body).json()[0][0]
    real = _real_document(file_type)
    assert list(document) == list(real)  # id, metadata, page_content, type
    assert document["id"] is real["id"] is None
    # the same keys in the same order (Postgres' jsonb order), with values of the same types
    assert list(document["metadata"]) == list(real["metadata"])
    for key, value in document["metadata"].items():
        assert type(value) is type(real["metadata"][key]), key


def test_the_demos_listing_routes_have_the_real_shape(demo: DemoServer) -> None:
    import httpx

    ids = httpx.get(f"{demo.url}/v1/ids").json()
    assert isinstance(ids, list)
    assert all(isinstance(one, str) for one in ids)
    listed = httpx.get(f"{demo.url}/v1/documents", params={"ids": ["anleitung"]}).json()
    real = fixture("queries/documents-two-ids.json")["body"]
    assert [list(doc) for doc in listed] == [list(real[0])]
    missing = httpx.get(f"{demo.url}/v1/documents", params={"ids": ["nope"]})
    recorded = fixture("queries/documents-missing-id.json")
    assert (missing.status_code, missing.json()) == (recorded["status_code"], recorded["body"])


def test_the_demo_gives_a_pdf_the_information_the_real_service_stores() -> None:
    from ragv2_demo.parsers import parse_pdf

    compared = 0
    for name, entry in manifest_files().items():
        if entry["file_type"] != "pdf":
            continue
        real = fixture(f"chunks/{name}.json")["body"][0]["metadata"]
        info = dict(parse_pdf(Path(__file__).resolve().parents[2] / entry["path"]).info)
        assert info == {key: real[key] for key in info}, name
        assert {"title", "author", "creator", "producer", "creationdate"} <= set(info)
        compared += 1
    assert compared == 15
