"""Several layers in one session: each with its own items, gates and summary, one verdict."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO_ROOT


@pytest.fixture
def layered(bundled: pytest.Pytester) -> pytest.Pytester:
    (bundled.path / "evidence").mkdir()
    shutil.copy(REPO_ROOT / "evidence" / "demo-v2.json", bundled.path / "evidence")
    (bundled.path / "pyproject.toml").write_text(
        '[tool.ragv2]\ncorpus = "corpus"\nevidence = "evidence/demo-v2.json"\n'
    )
    return bundled


def _summary(root: Path, run_id: str, layer: str) -> dict[str, Any]:
    path = root / "reports" / run_id / layer / "summary.json"
    data: dict[str, Any] = json.loads(path.read_text())
    return data


def _run(pytester: pytest.Pytester, run_id: str, *extra: str) -> pytest.RunResult:
    return pytester.runpytest(
        "--ragv2-layer=A,B,C", "--ragv2-reps=1", f"--ragv2-run-id={run_id}",
        "-k", "B06 or K01 or W01", "--ragv2-seed=5", *extra,
    )  # fmt: skip


def test_each_layer_runs_its_systems_and_decides_apart(layered: pytest.Pytester) -> None:
    result = _run(layered, "abc")
    summaries = {layer: _summary(layered.path, "abc", layer) for layer in "ABC"}
    # layer A: retrieval paths only; B: every chat path and the reference runner; C: the
    # answer models (openai-chat) only
    assert set(summaries["A"]["systems"]) == {"demo-v1", "demo-v2"}
    assert set(summaries["B"]["systems"]) == {"demo-v1", "demo-v2", "demo-ref"}
    assert set(summaries["C"]["systems"]) == {"demo-v1", "demo-v2"}
    from pytest_ragv2.deciding.gate_specs import gates_of
    from pytest_ragv2.layers.registry import layer_info

    for layer, summary in summaries.items():
        assert summary["layer"] == layer
        assert summary["runs"]["recorded"] == summary["runs"]["expected"] > 0
        assert summary["session"]["layers"] == ["A", "B", "C"]
        # each layer decides the gates it declares, in their order, hard where declared so
        declared = [(gate.name, gate.hard) for gate in gates_of(layer_info(layer))]
        assert [(gate["name"], gate["hard"]) for gate in summary["gates"]] == declared
    # W01 is a behaviour-matrix case of layer B only
    assert "W01" not in summaries["A"]["by_case"]["demo-v2"]
    assert "W01" in summaries["B"]["by_case"]["demo-v2"]
    verdicts = {summary["verdict"] for summary in summaries.values()}
    assert result.ret == (0 if verdicts == {"pass"} else 1)
    assert summaries["A"]["session"]["verdict"] == ("pass" if result.ret == 0 else "fail")
    out = result.stdout.str()
    assert "gates of layer A:" in out
    assert "gates of layer C:" in out
    # the candidate's misses, named by layer and case; the others' counted as xfailed
    result.stdout.fnmatch_lines(["  B:K01  demo-v2 ×2 (de, en) — required claim(s) missing: *"])
    outcomes = result.parseoutcomes()
    assert outcomes["unmet"] == 4
    assert f"{outcomes['xfailed']} baseline/reference run(s)" in " ".join(out.split())


def test_one_layer_gives_the_same_figures_alone_and_with_others(
    layered: pytest.Pytester,
) -> None:
    _run(layered, "together")
    alone = layered.runpytest(
        "--ragv2-layer=A", "--ragv2-reps=1", "--ragv2-run-id=alone",
        "-k", "B06 or K01 or W01", "--ragv2-seed=5",
    )  # fmt: skip
    assert alone.ret in (0, 1)
    single = json.loads((layered.path / "reports" / "alone" / "summary.json").read_text())
    together = _summary(layered.path, "together", "A")
    for system in ("demo-v1", "demo-v2"):
        assert together["systems"][system]["recall@5"] == single["systems"][system]["recall@5"]
        assert together["systems"][system]["mrr"] == single["systems"][system]["mrr"]


def test_several_layers_under_xdist_keep_slots_and_counts(layered: pytest.Pytester) -> None:
    result = _run(layered, "par", "-n", "2")
    assert result.ret in (0, 1)
    for layer in "ABC":
        summary = _summary(layered.path, "par", layer)
        assert summary["runs"]["recorded"] == summary["runs"]["expected"] > 0


def test_ragv2_rescore_reproduces_each_layers_live_summary(layered: pytest.Pytester) -> None:
    """One pipeline decides live and rescored: the same summary, the diagnosis that reads the
    layers together, the ceilings and the session's verdict included."""
    from pytest_ragv2.config.settings import load_settings
    from pytest_ragv2.tools.rescore import rescore_run

    _run(layered, "again")
    settings = load_settings(layered.path, None)
    rescored = rescore_run(layered.path / "raw-runs" / "again", settings)
    assert list(rescored.summaries) == ["A", "B", "C"]
    for layer in "ABC":
        live = _summary(layered.path, "again", layer)
        assert rescored.summaries[layer].to_json() == live
        assert live["diagnosis"]["layers"] == ["A", "B", "C"]
        assert live["session"]["layers"] == ["A", "B", "C"]
    assert _summary(layered.path, "again", "A")["systems"]["demo-v2"]["ceiling"] is not None


def test_a_rescore_without_the_session_end_decides_from_the_raw_runs_alone(
    layered: pytest.Pytester,
) -> None:
    """A run whose session never reached its end (killed) kept no listing of the stored
    chunks: the rescore decides without ceilings and says nothing it cannot know."""
    from pytest_ragv2.config.settings import load_settings
    from pytest_ragv2.tools.rescore import rescore_run

    _run(layered, "killed")
    run_dir = layered.path / "raw-runs" / "killed"
    (run_dir / "session-end.json").unlink()
    (run_dir / "stored-chunks.json.gz").unlink()
    rescored = rescore_run(run_dir, load_settings(layered.path, None))
    live = _summary(layered.path, "killed", "A")
    again = rescored.summaries["A"].to_json()
    assert "attainable" in live
    assert "attainable" not in again
    assert "ceiling" not in again["systems"]["demo-v2"]
    assert again["gates"] == live["gates"]


def test_an_unknown_layer_is_a_usage_error(bundled: pytest.Pytester) -> None:
    result = bundled.runpytest("--ragv2-layer=A,D")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "unknown layer 'A,D'" in result.stderr.str()
