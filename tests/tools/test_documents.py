"""summary.json and the raw-run lines as typed documents: every summary and every line a
real session writes, at every layer, reads as its model (whose undeclared keys are errors,
so a writer that changes the format without the model fails here), and a line that does
not read costs a rescore that run alone, named."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pydantic
import pytest

from pytest_ragv2.report.summary_document import read_summary
from pytest_ragv2.run.raw_models import (
    ChatRawRun,
    JudgeRawRun,
    RetrievalRawRun,
    SkippedRawRun,
    read_raw_run,
)
from pytest_ragv2.tools.cli import main


def _lines(run_dir: Path) -> list[dict[str, Any]]:
    lines = []
    for path in sorted(run_dir.glob("runs-*.jsonl*")):
        data = path.read_bytes()
        text = gzip.decompress(data) if path.suffix == ".gz" else data
        lines += [json.loads(line) for line in text.decode("utf-8").splitlines() if line.strip()]
    return lines


@pytest.fixture(scope="module")
def abc_session(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One session of layers A, B and C on three cases of the bundled benchmark."""
    pytester_root = tmp_path_factory.mktemp("abc")
    import shutil

    from tests.conftest import REPO_ROOT

    for name in ("cases", "gold", "corpus", "evidence"):
        shutil.copytree(REPO_ROOT / name, pytester_root / name)
    (pytester_root / "pyproject.toml").write_text(
        '[tool.ragv2]\ncorpus = "corpus"\nevidence = "evidence/demo-v2.json"\n'
    )
    import subprocess
    import sys

    command = [
        sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly",
        "--ragv2-layer=A,B,C", "--ragv2-reps=1", "--ragv2-run-id=docs", "--ragv2-seed=5",
        "-k", "B06 or K01 or W09 or T01",
    ]  # fmt: skip
    done = subprocess.run(command, cwd=pytester_root, capture_output=True, text=True, check=False)
    assert done.returncode in (0, 1), done.stdout + done.stderr
    return pytester_root


def test_every_summary_of_a_session_reads_as_the_document(abc_session: Path) -> None:
    for layer in ("A", "B", "C"):
        path = abc_session / "reports" / "docs" / layer / "summary.json"
        document = read_summary(json.loads(path.read_text(encoding="utf-8")))
        assert document.layer == layer
        assert document.session is not None
        assert document.session.layers == ["A", "B", "C"]
        assert document.protocol is not None
        assert document.quality_score is not None
        assert document.diagnosis is not None
        # the reference runner answers at layer B only (it has no retrieval of its own to
        # measure, and layer C gives answer models alone the frozen evidence)
        reference = {"demo-ref"} if layer == "B" else set()
        assert set(document.systems) == {"demo-v1", "demo-v2"} | reference
        if layer == "A":
            assert document.recall_k == 5
            assert document.attainable is not None
        else:
            assert document.vetoes_by_system is not None
            assert document.rubric is not None


def test_every_raw_run_line_of_a_session_reads_as_its_kind(abc_session: Path) -> None:
    lines = _lines(abc_session / "raw-runs" / "docs")
    kinds = [type(read_raw_run(line)) for line in lines]
    assert RetrievalRawRun in kinds
    assert ChatRawRun in kinds
    assert SkippedRawRun in kinds  # W09 asks for a setup no demo system has
    layers = {
        line.key.layer: line.evidence_package is not None
        for line in map(read_raw_run, lines)
        if isinstance(line, ChatRawRun)
    }
    assert layers == {"B": False, "C": True}  # C names the evidence package it answered


def test_an_undeclared_key_is_an_error_in_both_documents(abc_session: Path) -> None:
    summary = json.loads(
        (abc_session / "reports" / "docs" / "A" / "summary.json").read_text(encoding="utf-8")
    )
    with pytest.raises(pydantic.ValidationError, match="surprise"):
        read_summary({**summary, "surprise": 1})
    line = _lines(abc_session / "raw-runs" / "docs")[0]
    with pytest.raises(pydantic.ValidationError, match="surprise"):
        read_raw_run({**line, "surprise": 1})


def test_lines_of_the_first_format_still_read() -> None:
    # no layer in the key, no optional turn fields: what the first releases wrote
    key = {"case": "K01", "system": "v1", "rep": 1, "lang": "de"}
    retrieval = read_raw_run(
        {
            "key": key, "role": "baseline", "adapter": "python", "query": "q",
            "finished_at": "2026-11-01T00:00:00+00:00", "latency_s": 0.1, "error": None,
            "items": [{"rank": 1, "file_id": "f"}], "exchanges": [],
        }
    )  # fmt: skip
    assert isinstance(retrieval, RetrievalRawRun)
    assert retrieval.key.layer is None
    turn = {
        "prompt": "p", "answer": "a", "tool_calls": [], "citations": [], "latency_s": 0.1,
        "usage": {}, "error": None, "exchanges": [],
    }  # fmt: skip
    chat = read_raw_run(
        {
            "key": key, "role": "candidate", "adapter": "openai-chat", "prompts": ["p"],
            "finished_at": "2026-11-01T00:00:00+00:00", "latency_s": 0.1, "error": None,
            "transcript": {"turns": [turn], "latency_s": 0.1},
        }
    )  # fmt: skip
    assert isinstance(chat, ChatRawRun)
    assert chat.transcript.turns[0].ran
    judged = read_raw_run({"key": key, "judge": {"grade": "PASS"}})
    assert isinstance(judged, JudgeRawRun)


def test_a_line_that_does_not_read_is_named_and_costs_that_run_alone(
    abc_session: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import shutil

    run_dir = tmp_path / "raw-runs" / "docs"
    shutil.copytree(abc_session / "raw-runs" / "docs", run_dir)
    lines = _lines(run_dir)
    broken = next(line for line in lines if "items" in line)
    broken["latency_s"] = "slow"
    for path in run_dir.glob("runs-*.jsonl*"):
        path.unlink()
    (run_dir / "runs-main.jsonl").write_text(
        "".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8"
    )
    status = main(["rescore", str(run_dir), "--output", str(tmp_path / "out")])
    assert status == 1
    summary = json.loads((tmp_path / "out" / "A" / "summary.json").read_text(encoding="utf-8"))
    assert (
        summary["runs"]["recorded"]
        == sum(1 for line in lines if "items" in line and line["key"].get("layer") == "A") - 1
    )
    gate = next(g for g in summary["gates"] if g["name"] == "gold_valid")
    assert any(
        "does not read" in detail and "latency_s" in detail and broken["key"]["case"] in detail
        for detail in gate["details"]
    ), gate
