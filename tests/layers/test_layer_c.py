"""Layer C — frozen evidence: one package, the same evidence for every answer model."""

from __future__ import annotations

import json
import shutil
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pytest_ragv2.layers.frozen.package import (
    PackageError,
    freeze,
    freeze_run_dir,
    load_package,
    write_package,
)
from pytest_ragv2.layers.frozen.prompt import messages, parse_user
from pytest_ragv2.run.rawruns import read_raw_runs
from tests.conftest import REPO_ROOT
from tests.scripted_server import Reply, Seen, serve

PACKAGE = REPO_ROOT / "evidence" / "demo-v2.json"


def raw(case: str, rep: int, items: list[dict[str, Any]], system: str = "v2") -> dict[str, Any]:
    return {
        "key": {"case": case, "system": system, "rep": rep, "lang": "en", "layer": "A"},
        "query": f"question of {case}",
        "items": items,
    }


def item(rank: int, text: str, **fields: Any) -> dict[str, Any]:
    return {"rank": rank, "text": text, "file_id": "datasheet", "filename": "datasheet.pdf",
            "page": 2, **fields}  # fmt: skip


# ------------------------------------------------------------------------ the package


def test_freeze_keeps_the_first_repetitions_top_k_of_one_system(tmp_path: Path) -> None:
    runs = [
        raw("C1", 2, [item(1, "second repetition")]),
        raw("C1", 1, [item(n, f"item {n}") for n in range(1, 8)]),
        raw("C1", 1, [item(1, "the baseline's")], system="v1"),
        raw("C2", 1, []),  # a failed or empty run is frozen with no evidence
    ]
    package = freeze(runs, source_run_id="run-a", system="v2", k=3, created_at="2026-12-01")
    assert [(entry.case, [i.text for i in entry.items]) for entry in package.entries] == [
        ("C1", ["item 1", "item 2", "item 3"]),
        ("C2", []),
    ]
    path = tmp_path / "package.json"
    write_package(package, path)
    assert load_package(path) == package


def _written(tmp_path: Path) -> tuple[Path, str]:
    runs = [raw("C1", 1, [item(1, "max 16 bar at 20 °C"), item(2, "seal kit NX-450B")])]
    path = tmp_path / "package.json"
    write_package(freeze(runs, source_run_id="run-a", system="v2"), path)
    return path, path.read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("old", "new", "located"),
    [
        ("16 bar", "18 bar", "case C1 (en) item 1 (datasheet.pdf) does not match its sha256"),
        ("NX-450B", "NX-450C", "case C1 (en) item 2 (datasheet.pdf) does not match its sha256"),
        ('"k": 5', '"k": 6', "its checksum does not match its content"),
        ('"system": "v2"', '"system": "v1"', "its checksum does not match its content"),
        ('\n "k"', '\n  "k"', "its bytes are not the ones `ragv2 freeze` wrote"),
    ],
)
def test_one_changed_byte_is_refused_and_located(
    tmp_path: Path, old: str, new: str, located: str
) -> None:
    path, text = _written(tmp_path)
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")
    with pytest.raises(PackageError, match=r"package\.json") as refused:
        load_package(path)
    assert located in str(refused.value)


def test_a_package_that_is_not_json_names_its_line(tmp_path: Path) -> None:
    path, text = _written(tmp_path)
    lines = text.splitlines()
    lines[3] = lines[3].rstrip(",")  # a comma lost on line 4
    path.write_text("\n".join(lines), encoding="utf-8")
    with pytest.raises(PackageError, match=r"package\.json:5: not JSON"):
        load_package(path)


@pytest.mark.skipif(sys.platform == "win32", reason="/dev/zero is POSIX")
def test_a_package_that_is_no_regular_file_or_not_utf8_is_refused_unread(
    tmp_path: Path,
) -> None:
    link = tmp_path / "zero.json"
    link.symlink_to("/dev/zero")
    with pytest.raises(PackageError, match=r"zero\.json: a character device \(a link to /dev"):
        load_package(link)
    path, text = _written(tmp_path)
    path.write_bytes(text.encode().replace(b'"k"', b'"\xe9"', 1))
    with pytest.raises(PackageError, match=r"package\.json:\d+: not UTF-8 text: byte 0xe9"):
        load_package(path)


def test_freezing_needs_a_layer_a_run_of_that_system(tmp_path: Path) -> None:
    run = tmp_path / "run-b"
    run.mkdir()
    (run / "manifest.json").write_text(
        json.dumps({"run_id": "run-b", "options": {"layer": "B"}, "systems": {"v2": {}}})
    )
    with pytest.raises(PackageError, match="a layer-B run"):
        freeze_run_dir(run, "v2")
    (run / "manifest.json").write_text(
        json.dumps({"run_id": "run-b", "options": {"layer": "A"}, "systems": {"v2": {}}})
    )
    with pytest.raises(PackageError, match="no system 'v9' in this run"):
        freeze_run_dir(run, "v9")


def test_the_prompt_reads_back_and_the_bundled_package_verifies() -> None:
    sources = json.dumps({"sources": [{"n": 1, "text": "RPO 15 min"}]})
    (system, user) = messages(sources, "Quel est le RPO ?")
    assert system["role"] == "system"
    assert parse_user(user["content"]) == ("Quel est le RPO ?", [{"n": 1, "text": "RPO 15 min"}])
    assert parse_user("Quel est le RPO ?") is None
    package = load_package(PACKAGE)
    assert package.system == "demo-v2"
    assert len(package.entries) > 40


# ------------------------------------------------------------------------ sessions


@pytest.fixture
def frozen(bundled: pytest.Pytester) -> pytest.Pytester:
    (bundled.path / "evidence").mkdir()
    shutil.copy(PACKAGE, bundled.path / "evidence" / "demo-v2.json")
    (bundled.path / "pyproject.toml").write_text(
        '[tool.ragv2]\ncorpus = "corpus"\nevidence = "evidence/demo-v2.json"\n'
    )
    return bundled


def _summary(root: Path, run_id: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((root / "reports" / run_id / "summary.json").read_text())
    return data


def test_layer_c_runs_the_bundled_package_through_two_answer_models(
    frozen: pytest.Pytester,
) -> None:
    result = frozen.runpytest(
        "--ragv2-layer=C", "--ragv2-reps=1", "--ragv2-run-id=c", "-k", "B0 or K01"
    )
    summary = _summary(frozen.path, "c")
    assert result.ret == (0 if summary["verdict"] == "pass" else 1)
    assert summary["layer"] == "C"
    assert set(summary["systems"]) == {"demo-v1", "demo-v2"}  # answer models, no runner
    assert summary["runs"]["recorded"] == summary["runs"]["expected"] > 0
    manifest = json.loads((frozen.path / "raw-runs" / "c" / "manifest.json").read_text())
    assert manifest["frozen_evidence"]["checksum"] == load_package(PACKAGE).checksum
    assert manifest["prompt_template"]["version"] == "ragv2-frozen-prompt/1"
    raws = list(read_raw_runs(frozen.path / "raw-runs" / "c"))  # compressed: a chat layer
    request = raws[0]["transcript"]["turns"][0]["exchanges"][0]["request"]["json"]
    assert "tools" not in request  # no tool on offer
    assert request["messages"][1]["content"].startswith("Sources:\n")
    # the same evidence for both models, and its recall reported beside the answers
    evidence = {
        run["key"]["system"]: run["transcript"]["turns"][0]["evidence"]
        for run in raws
        if run["key"]["case"] == "B06" and run["key"]["lang"] == "fr"
    }
    assert evidence["demo-v1"] == evidence["demo-v2"]
    assert summary["by_case"]["demo-v2"]["B06"]["evidence_recall"] == 1.0
    assert "Retrieval found it" in (frozen.path / "reports" / "c" / "summary.md").read_text()


def test_a_changed_package_stops_the_session_with_a_located_message(
    frozen: pytest.Pytester,
) -> None:
    path = frozen.path / "evidence" / "demo-v2.json"
    text = path.read_text(encoding="utf-8")
    start = text.index('"text": "') + len('"text": "')
    path.write_text(text[:start] + "X" + text[start + 1 :], encoding="utf-8")
    result = frozen.runpytest("--ragv2-layer=C", "--ragv2-run-id=changed")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*demo-v2.json: case * item 1 * does not match its sha256*"])
    assert not (frozen.path / "raw-runs" / "changed").exists()


def test_without_a_package_layer_c_is_a_usage_error(bundled: pytest.Pytester) -> None:
    result = bundled.runpytest("--ragv2-layer=C")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*layer C gives every answer model the same frozen evidence*"])


@pytest.fixture
def models() -> Iterator[tuple[str, str]]:
    """Two OpenAI-compatible answer models: one answers from source [1], one asks for a
    tool although none is offered."""

    def good(seen: Seen) -> Reply:
        return Reply(body=_completion({"role": "assistant", "content": "Max 16 bar [1]."}))

    def asks(seen: Seen) -> Reply:
        function = {"name": "search_knowledge_base", "arguments": '{"query": "p"}'}
        call = {"id": "c1", "type": "function", "function": function}
        message = {"role": "assistant", "content": None, "tool_calls": [call]}
        return Reply(body=_completion(message, "tool_calls"))

    with serve("/v1") as answering, serve("/v1") as asking:
        answering.responder = good
        asking.responder = asks
        yield answering.url, asking.url


def _completion(message: dict[str, Any], finish: str = "stop") -> dict[str, Any]:
    return {
        "id": "x",
        "object": "chat.completion",
        "created": 1,
        "model": "m",
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
    }


def test_an_answer_model_that_asks_for_a_tool_fails_its_item(
    project: pytest.Pytester, models: tuple[str, str]
) -> None:
    answering, asking = models
    runs = [raw("C01", 1, [item(1, "max 16 bar")], system="v2")]
    write_package(
        freeze(runs, source_run_id="a", system="v2"), project.path / "evidence" / "p.json"
    )
    project.makefile(
        ".toml",
        pyproject=textwrap.dedent(
            f"""\
            [tool.pytest.ini_options]
            pythonpath = ["."]

            [tool.ragv2]
            evidence = "evidence/p.json"

            [tool.ragv2.systems.v1]
            role = "baseline"
            chat = {{adapter = "openai-chat", url = "{asking}", model = "m", stream = false}}

            [tool.ragv2.systems.v2]
            role = "candidate"
            chat = {{adapter = "openai-chat", url = "{answering}", model = "m", stream = false}}
            """
        ),
    )
    result = project.runpytest(
        "--ragv2-layer=C", "--ragv2-reps=1", "--ragv2-run-id=t", "--ragv2-lang=en"
    )
    summary = _summary(project.path, "t")
    # the baseline's miss is an expected failure; its reasons are in the summary
    assert result.parseoutcomes()["xfailed"] == 1
    (missed,) = [run for run in summary["unmet_runs"] if run["run"] == "C01[v1-en-r1]"]
    assert any("asked for a tool (search_knowledge_base)" in r for r in missed["reasons"])
    assert summary["systems"]["v1"]["met"] == 0.0
    assert summary["systems"]["v2"]["errors"] == 0
    assert summary["by_case"]["v2"]["C01"]["evidence_recall"] == 1.0
    # cases the package holds no evidence for are skipped on every model, with the reason
    assert summary["systems"]["v2"]["skipped"] > 0


def test_ragv2_freeze_writes_a_package_a_layer_c_session_accepts(
    project: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    from pytest_ragv2.tools.cli import main

    project.runpytest("--ragv2-layer=A", "--ragv2-run-id=retrieval")
    run_dir = project.path / "raw-runs" / "retrieval"
    output = project.path / "evidence" / "v2.json"
    status = main(["freeze", str(run_dir), "--system", "v2", "--k", "2", "--output", str(output)])
    assert status == 0
    package = load_package(output)
    assert (package.system, package.k, package.source_run_id) == ("v2", 2, "retrieval")
    entry = package.entry("C01", "en")
    assert entry is not None
    assert [item.filename for item in entry.items] == ["datasheet.pdf", "manual.docx"]
    assert f"into {output}" in capsys.readouterr().out
    assert main(["freeze", str(run_dir), "--system", "v9"]) == 2
    assert "no system 'v9' in this run" in capsys.readouterr().err
