"""The README's main job: the bundled benchmark against the embedded demo systems.

These sessions start the real demo service (rag_api's wire format on a loopback port) and
evaluate it through the real rag-api adapter, as a production deployment would be.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO_ROOT


def _summary(pytester: pytest.Pytester, run_id: str) -> dict[str, Any]:
    path = pytester.path / "reports" / run_id / "summary.json"
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def _without_latency(summary: dict[str, Any]) -> dict[str, Any]:
    def strip(row: dict[str, Any]) -> dict[str, Any]:
        return {key: value for key, value in row.items() if not key.startswith("latency")}

    return {
        "systems": {name: strip(row) for name, row in summary["systems"].items()},
        "by_case": {
            system: {case: strip(row) for case, row in rows.items()}
            for system, rows in summary["by_case"].items()
        },
    }


def test_demo_session_serial_and_parallel_agree(bundled: pytest.Pytester) -> None:
    serial = bundled.runpytest("--ragv2-layer=A", "--ragv2-run-id=serial", "--ragv2-seed=3")
    parallel = bundled.runpytest(
        "--ragv2-layer=A", "--ragv2-run-id=parallel", "--ragv2-seed=3", "-n", "2"
    )
    first, second = _summary(bundled, "serial"), _summary(bundled, "parallel")
    assert set(first["systems"]) == {"demo-v1", "demo-v2"}
    assert first["runs"]["recorded"] == first["runs"]["expected"] > 0
    assert first["systems"]["demo-v2"]["errors"] == 0
    # both demo services list what they store: every gold entry is attainable in it
    assert {name: found["ceiling"] for name, found in first["attainable"].items()} == {
        "demo-v1": 1.0,
        "demo-v2": 1.0,
    }
    assert 0.0 < first["systems"]["demo-v1"]["recall@5"] <= 1.0
    assert (
        first["systems"]["demo-v2"]["exact_metadata"]
        > first["systems"]["demo-v1"]["exact_metadata"]
    ), "structure-aware chunks carry the metadata that fixed-size chunks lack"
    assert _without_latency(first) == _without_latency(second)
    assert serial.ret == parallel.ret
    assert serial.ret == (0 if first["verdict"] == "pass" else 1)
    out = serial.stdout.str()
    assert "gates:" in out
    assert "verdict:" in out
    raw = (bundled.path / "raw-runs" / "serial" / "runs-main.jsonl").read_text().splitlines()
    assert len(raw) == first["runs"]["recorded"]
    exchanges = {run["key"]["system"]: run["exchanges"][0] for run in map(json.loads, raw)}
    # demo V1 speaks rag_api's wire; demo V2 is a new service with its own search route
    assert exchanges["demo-v1"]["request"]["url"].endswith("/v1/query_multiple")
    assert isinstance(exchanges["demo-v1"]["response_body"], list)
    assert exchanges["demo-v2"]["request"]["url"].endswith("/v2/search")
    assert isinstance(exchanges["demo-v2"]["response_body"]["results"], list)


def test_html_reports_carry_the_verdict(bundled: pytest.Pytester) -> None:
    bundled.runpytest(
        "--ragv2-layer=A", "--ragv2-run-id=html", "--ragv2-lang=fr", "--html=pytest-html.html"
    )
    verdict = _summary(bundled, "html")["verdict"].upper()
    page = (bundled.path / "reports" / "html" / "report.html").read_text(encoding="utf-8")
    assert f"Verdict: {verdict}" in page
    assert "recall_improvement" in page
    assert "<td>B07</td>" in page  # the per-case table
    pytest_html = (bundled.path / "pytest-html.html").read_text(encoding="utf-8")
    assert f"pytest-ragv2 layer A: verdict {verdict}" in pytest_html
    assert "recall_improvement" in pytest_html


def test_demo_is_refused_without_its_corpus(pytester: pytest.Pytester) -> None:
    pytester.mkdir("cases")
    (pytester.path / "cases" / "development.yaml").write_text(
        "- id: X1\n  category: semantic\n  prompt_en: q\n  required_evidence: []\n"
    )
    result = pytester.runpytest("--ragv2-layer=A")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "corpus directory" in result.stderr.str()


def test_demo_that_cannot_start_records_errors(bundled: pytest.Pytester) -> None:
    # a corpus file that no parser can read stops the demo's index build
    (bundled.path / "corpus" / "nimbus-analytics" / "broken.pdf").write_bytes(b"not a pdf")
    result = bundled.runpytest("--ragv2-layer=A", "--ragv2-run-id=broken", "-n", "2")
    assert "Traceback" not in result.stdout.str()
    summary = _summary(bundled, "broken")
    assert summary["systems"]["demo-v2"]["errors"] == summary["systems"]["demo-v2"]["runs"] > 0
    assert result.ret == pytest.ExitCode.TESTS_FAILED


def test_rag_api_adapter_against_the_demo_server() -> None:
    from pytest_ragv2.systems.rag_api import RagApiRetrieval, RagApiRetriever
    from ragv2_demo.engine import DemoIndex
    from ragv2_demo.server import DemoServer

    corpus = REPO_ROOT / "corpus"
    with DemoServer(DemoIndex.from_corpus(corpus)) as server:
        retriever = RagApiRetriever(
            "demo-v2",
            RagApiRetrieval(adapter="rag-api", url=f"{server.url}/v2"),
            file_ids=["politique-securite", "contrat-cadre-meridia"],
        )
        try:
            result = retriever.retrieve("Quels sont nos objectifs de RPO et de RTO ?", 5)
            empty = RagApiRetriever(
                "none",
                RagApiRetrieval(adapter="rag-api", url=f"{server.url}/v2"),
                file_ids=["no-such-file"],
            ).retrieve("RPO", 5)
        finally:
            retriever.close()
    assert result.ok, result.error
    assert 0 < len(result.items) <= 5
    assert {item.file_id for item in result.items} <= {
        "politique-securite",
        "contrat-cadre-meridia",
    }
    pages = [item.page for item in result.items if item.file_id == "politique-securite"]
    assert pages
    assert all(page is not None and page >= 1 for page in pages)
    assert Path(result.items[0].filename or "").suffix in {".pdf", ".docx"}
    assert empty.ok
    assert empty.items == []
