"""docs/own-evaluation.md stays true: the files it shows are the example project's, and the
example project runs as the guide says it does, against the demo serving its corpus."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pytest_ragv2.systems.http_json import fill_template
from pytest_ragv2.tools.cli import main
from tests.conftest import REPO_ROOT

GUIDE = REPO_ROOT / "docs" / "own-evaluation.md"
EXAMPLE = REPO_ROOT / "docs" / "examples" / "own-evaluation"
SERVED_AT = "http://127.0.0.1:8411"  # the port the guide starts `ragv2 demo serve` on
# a marker comment, then the fenced block it names
BLOCK = re.compile(r"<!-- example(-append)?: (\S+) -->\n```[a-z]*\n(.*?)```", re.S)

demo_server = pytest.importorskip("ragv2_demo.server")
demo_engine = pytest.importorskip("ragv2_demo.engine")


def _blocks() -> list[tuple[bool, str, str]]:
    guide = GUIDE.read_text(encoding="utf-8")
    return [(bool(append), path, text) for append, path, text in BLOCK.findall(guide)]


def _shown(path: str) -> str:
    return next(text for append, name, text in _blocks() if name == path and not append)


def _appended(path: str) -> str:
    return next(text for append, name, text in _blocks() if name == path and append)


def test_every_file_the_guide_shows_is_the_example_projects() -> None:
    shown = {path: text for append, path, text in _blocks() if not append}
    assert set(shown) == {
        "corpus/service-handbook.md",
        "gold/allowlist.yaml",
        "cases/development.yaml",
        "gold/evidence.yaml",
        "gold/answers.yaml",
        "ragv2.yaml",
    }
    for path, text in shown.items():
        assert (EXAMPLE / path).read_text(encoding="utf-8") == text, path
    assert [path for append, path, _ in _blocks() if append] == ["ragv2.yaml"]


def test_the_example_corpus_is_what_its_facts_render(tmp_path: Path) -> None:
    """The committed documents are reproducible: rendering facts.yaml gives the same bytes."""
    from ragv2_demo.render import render_corpus

    written = render_corpus(EXAMPLE / "corpus" / "facts.yaml", tmp_path)
    assert sorted(path.name for path in written) == [
        "price-list-2026.xlsx",
        "service-handbook.md",
        "warranty-terms.pdf",
    ]
    for path in written:
        assert path.read_bytes() == (EXAMPLE / "corpus" / path.name).read_bytes(), path.name


@pytest.fixture
def served(pytester: pytest.Pytester) -> Iterator[pytest.Pytester]:
    """The example project copied into pytester's folder, its corpus served by the demo on a
    free port, and ragv2.yaml pointed at that port instead of the guide's 8411."""
    shutil.copytree(EXAMPLE, pytester.path, dirs_exist_ok=True)
    index = demo_engine.DemoIndex.from_corpus(pytester.path / "corpus")
    with demo_server.DemoServer(index) as server:
        config = pytester.path / "ragv2.yaml"
        text = config.read_text(encoding="utf-8")
        assert SERVED_AT in text
        config.write_text(text.replace(SERVED_AT, server.url), encoding="utf-8")
        yield pytester


def _summary(pytester: pytest.Pytester, run_id: str) -> dict[str, Any]:
    path = pytester.path / "reports" / run_id / "summary.json"
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def _gate(summary: dict[str, Any], name: str) -> dict[str, Any]:
    return next(gate for gate in summary["gates"] if gate["name"] == name)


def test_layer_a_on_the_example_runs_as_the_guide_shows(
    served: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    guide = GUIDE.read_text(encoding="utf-8")
    monkeypatch.chdir(served.path)
    assert main(["validate"]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "OK: 5 cases loaded, 0 errors"

    first = served.runpytest("--ragv2-layer=A", "--ragv2-seed=7", "--ragv2-run-id=first")
    first.assert_outcomes(passed=10)
    assert first.ret == 1
    summary = _summary(served, "first")
    # both systems find every required entry: v1 by the anchors (rag_api names no section,
    # table or row), v2 by its metadata
    assert {name: row["recall@5"] for name, row in summary["systems"].items()} == {
        "v1": 1.0,
        "v2": 1.0,
    }
    assert summary["attainable"]["v2"]["ceiling"] == 1.0
    failed = [gate["name"] for gate in summary["gates"] if gate["decision"] == "fail"]
    assert failed == ["recall_improvement"], "two perfect systems cannot show an improvement"
    verdict = "verdict: FAIL — 1 gate(s) failed: recall_improvement (exit status 1)"
    assert verdict in first.stdout.str()
    assert verdict in guide

    # "{k}" exactly is sent with its JSON type: the recorded request carries the number
    lines = (served.path / "raw-runs" / "first" / "runs-main.jsonl").read_text(encoding="utf-8")
    records = [json.loads(line) for line in lines.splitlines()]
    v2_request = next(r for r in records if r["key"]["system"] == "v2")["exchanges"][0]["request"]
    assert v2_request["json"]["k"] == 10
    assert v2_request["json"]["file_ids"] == [
        "price-list-2026",
        "service-handbook",
        "warranty-terms",
    ]
    v1_first = next(r for r in records if r["key"] == {**r["key"], "case": "K03", "system": "v1"})
    assert set(v1_first) == {
        "key",
        "role",
        "adapter",
        "query",
        "finished_at",
        "latency_s",
        "error",
        "items",
        "exchanges",
    }
    assert v1_first["items"][0]["table"] is None  # the anchor, not the metadata, locates it

    # the guide's non-inferiority margin: the same runs pass
    config = served.path / "ragv2.yaml"
    config.write_text(
        config.read_text(encoding="utf-8") + _appended("ragv2.yaml"), encoding="utf-8"
    )
    second = served.runpytest("--ragv2-layer=A", "--ragv2-seed=7", "--ragv2-run-id=second")
    second.assert_outcomes(passed=10)
    assert second.ret == 0
    gate = _gate(_summary(served, "second"), "recall_improvement")
    assert gate["decision"] == "pass"
    assert "verdict: PASS — every promotion gate holds (exit status 0)" in second.stdout.str()


def test_layer_b_on_the_example_runs_as_the_guide_shows(served: pytest.Pytester) -> None:
    """The demo's chat paths on the example: v2's toy answer model refuses K03 although its
    search found the row, which is the unmet line and the failed gate the guide explains."""
    guide = GUIDE.read_text(encoding="utf-8")
    result = served.runpytest("--ragv2-layer=B", "--ragv2-seed=7", "--ragv2-run-id=answers")
    assert result.ret == 1
    counts = result.parseoutcomes()
    assert (counts["passed"], counts["xfailed"], counts["unmet"]) == (25, 20, 5)
    summary = _summary(served, "answers")
    failed = [gate["name"] for gate in summary["gates"] if gate["decision"] == "fail"]
    assert failed == ["exact_answer"]
    out = result.stdout.str()
    unmet = "K03  v2 ×5 (en) — required claim(s) missing: Saturday 10:00 to 14:00"
    verdict = "verdict: FAIL — 1 gate(s) failed: exact_answer (exit status 1)"
    for line in (unmet, verdict):
        assert line in out
        assert line in guide


def test_a_refusal_case_needs_no_evidence_and_any_other_case_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    shutil.copytree(EXAMPLE, tmp_path, dirs_exist_ok=True)
    monkeypatch.chdir(tmp_path)
    cases = tmp_path / "cases" / "development.yaml"
    text = cases.read_text(encoding="utf-8")
    assert "safe_refusal_expected: true" in text
    cases.write_text(re.sub(r"\n *safe_refusal_expected: true[^\n]*", "", text), encoding="utf-8")
    assert main(["validate"]) == 1
    error = capsys.readouterr().out.splitlines()[0]
    assert error == (
        "cases/development.yaml:24: case K05: required_evidence: no required_evidence: "
        "give [] if none is expected"
    )
    assert error in GUIDE.read_text(encoding="utf-8")


DEPLOYMENT = re.compile(r"<!-- deployment -->\n```yaml\n(.*?)```", re.S)


def test_the_deployment_blocks_make_a_configuration_the_preflight_checks(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Section 10's three blocks, put together as the guide says, validate; and with no
    secret set the preflight stops the run naming each variable, as shown."""
    guide = GUIDE.read_text(encoding="utf-8")
    blocks = DEPLOYMENT.findall(guide)
    assert len(blocks) == 3
    shutil.copytree(EXAMPLE, pytester.path, dirs_exist_ok=True)
    example = (EXAMPLE / "ragv2.yaml").read_text(encoding="utf-8")
    paths = example.split("systems:\n", 1)[0]
    (pytester.path / "ragv2.yaml").write_text(paths + "".join(blocks), encoding="utf-8")
    for name in ("RAG_JWT_SECRET", "LLM_API_KEY", "LIBRECHAT_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(pytester.path)
    assert main(["validate"]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "OK: 5 cases loaded, 0 errors"
    result = pytester.runpytest("--ragv2-layer=A")
    assert result.ret == 4
    shown = [line for line in guide.splitlines() if "is not set" in line]
    assert len(shown) == 3
    for line in shown:
        assert line in result.stdout.str() + result.stderr.str()


def test_k_is_sent_as_a_number_only_when_it_stands_alone() -> None:
    """The guide's answer on http-json templates."""
    filled = fill_template(
        {"k": "{k}", "label": "top {k}", "ids": "{file_ids}", "csv": "ids={file_ids}"},
        {"query": "q", "k": 10, "file_ids": ["a", "b"]},
    )
    assert filled == {"k": 10, "label": "top 10", "ids": ["a", "b"], "csv": "ids=a,b"}
