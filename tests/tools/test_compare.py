"""``ragv2 compare RUN_A RUN_B``: two runs of the bundled benchmark rescored with one
configuration, compared per system and metric (paired b − a with its interval), per case
(changed outcomes) and per veto; refusals of what cannot be compared."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path
from typing import Any

import pytest

from pytest_ragv2.deciding.run_comparison import (
    MetricDelta,
    OutcomeChange,
    RunComparison,
    SystemCases,
    VetoChange,
)
from pytest_ragv2.deciding.stats import PairedComparison
from pytest_ragv2.report.comparison import comparison_html, comparison_lines, comparison_markdown
from pytest_ragv2.tools.cli import main

SYSTEMS = {"demo-v1", "demo-v2"}


def _run(bundled: pytest.Pytester, seed: int, run_id: str) -> Path:
    bundled.runpytest("--ragv2-layer=A", f"--ragv2-seed={seed}", f"--ragv2-run-id={run_id}")
    run_dir = bundled.path / "raw-runs" / run_id
    assert (run_dir / "manifest.json").is_file()
    return run_dir


def _compare(
    capsys: pytest.CaptureFixture[str], *args: str
) -> tuple[int, str, dict[str, Any] | None]:
    status = main(["compare", *args])
    out = capsys.readouterr().out
    data = None
    if status == 0:
        name = f"compare-{Path(args[0]).name}-vs-{Path(args[1]).name}"
        folder = Path(args[3]) if args[2:3] == ("--output",) else Path("reports") / name
        data = json.loads((folder / "comparison.json").read_text("utf-8"))
    return status, out, data


def _copy(run_dir: Path, run_id: str) -> Path:
    """A copy of a run under another id (its manifest says so)."""
    target = run_dir.parent / run_id
    shutil.copytree(run_dir, target)
    manifest_path = target / "manifest.json"
    manifest = json.loads(manifest_path.read_text("utf-8"))
    manifest["run_id"] = run_id
    manifest_path.write_text(json.dumps(manifest), encoding="utf-8")
    return target


def _edit_lines(run_dir: Path, edit: Any) -> None:
    for path in run_dir.glob("runs-*.jsonl"):
        lines = [json.loads(line) for line in path.read_text("utf-8").splitlines() if line]
        path.write_text("".join(json.dumps(edit(lines, line)) + "\n" for line in lines), "utf-8")


def test_two_bundled_runs_of_different_seeds_compare_per_metric_with_intervals(
    bundled: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    _run(bundled, 1, "a")
    _run(bundled, 2, "b")
    capsys.readouterr()

    status, out, data = _compare(capsys, "raw-runs/a", "raw-runs/b")

    assert status == 0, out
    assert data is not None
    assert (data["run_a"], data["run_b"], data["seed_a"], data["seed_b"]) == ("a", "b", 1, 2)
    rows = data["metrics"]
    assert {row["system"] for row in rows} == SYSTEMS
    # every per-case metric of layer A, for each system, with a difference and its interval
    for system in SYSTEMS:
        metrics = {row["metric"] for row in rows if row["system"] == system}
        assert {"recall@5", "mrr", "met", "hit@5"} <= metrics
    for row in rows:
        assert row["cases"] > 0
        assert row["low"] <= row["delta"] <= row["high"]
        assert math.isclose(row["delta"], row["mean_b"] - row["mean_a"], abs_tol=1e-9)
        assert row["interval"] in ("degenerate",) or row["interval"].startswith("BCa bootstrap")
    recall = next(r for r in rows if r["system"] == "demo-v2" and r["metric"] == "recall@5")
    assert recall["cases"] >= 30  # the bundled cases with required evidence, paired
    # the terminal shows the same rows: Δ and an interval per system and metric
    lines = out.splitlines()
    r5 = [line for line in lines if " R@5 " in line]
    assert len(r5) == 2
    assert all("[" in line and "]" in line for line in r5)
    assert any("Δ b−a" in line and "95% interval" in line for line in lines)
    folder = bundled.path / "reports" / "compare-a-vs-b"
    markdown = (folder / "summary.md").read_text("utf-8")
    assert "## Metrics: paired difference b − a" in markdown
    assert "| demo-v2 | R@5 |" in markdown
    page = (folder / "report.html").read_text("utf-8")
    assert page.startswith("<!DOCTYPE html>")
    assert "<td>R@5</td>" in page
    assert "<script" not in page
    assert "http" not in page
    assert f"comparison: {Path('reports') / 'compare-a-vs-b'}" in out


def test_a_run_compared_with_itself_changes_nothing(
    bundled: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    _run(bundled, 1, "a")
    capsys.readouterr()

    status, out, data = _compare(capsys, "raw-runs/a", "raw-runs/a", "--output", "same")

    assert status == 0, out
    assert data is not None
    assert (bundled.path / "same" / "report.html").is_file()
    assert data["metrics"]
    for row in data["metrics"]:
        assert row["delta"] == row["low"] == row["high"] == 0.0
        assert row["reading"] == "unchanged"
    assert data["outcome_changes"] == []
    assert data["veto_changes"] == []
    assert all(not c["only_a"] and not c["only_b"] for c in data["cases"])
    assert "Changed outcomes: no case changed outcome" in out


def test_a_hand_edited_run_shows_its_changed_outcomes_and_differences(
    bundled: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    run_a = _run(bundled, 1, "a")
    run_b = _copy(run_a, "edited")
    # in b: demo-v2 returns nothing for K01 (met in a), and demo-v1 returns for K20 (missed in
    # a) what demo-v2 returned; a case only in a is dropped from b
    items_of = {
        (line["key"]["case"], line["key"]["lang"]): line["items"]
        for line in (
            json.loads(text)
            for path in run_a.glob("runs-*.jsonl")
            for text in path.read_text("utf-8").splitlines()
        )
        if line["key"]["system"] == "demo-v2"
    }

    def edit(_: Any, line: dict[str, Any]) -> dict[str, Any]:
        key = line["key"]
        if key["case"] == "K01" and key["system"] == "demo-v2":
            line["items"] = []
        if key["case"] == "K20" and key["system"] == "demo-v1":
            line["items"] = items_of[("K20", key["lang"])]
        return line

    _edit_lines(run_b, edit)
    for path in run_b.glob("runs-*.jsonl"):  # K02 of demo-v1 only in a
        kept = [
            text
            for text in path.read_text("utf-8").splitlines()
            if not (
                json.loads(text)["key"]["case"] == "K02"
                and json.loads(text)["key"]["system"] == "demo-v1"
            )
        ]
        path.write_text("\n".join(kept) + "\n", encoding="utf-8")
    capsys.readouterr()

    status, out, data = _compare(capsys, "raw-runs/a", "raw-runs/edited")

    assert status == 0, out
    assert data is not None
    changes = {(c["system"], c["case"]): c for c in data["outcome_changes"]}
    assert set(changes) == {("demo-v2", "K01"), ("demo-v1", "K20")}
    assert changes[("demo-v2", "K01")]["change"] == "newly missed"
    assert changes[("demo-v2", "K01")]["met_b"][0] == 0
    assert changes[("demo-v1", "K20")]["change"] == "newly met"
    rows = {(r["system"], r["metric"]): r for r in data["metrics"]}
    missed, met = rows[("demo-v2", "recall@5")], rows[("demo-v1", "recall@5")]
    assert missed["delta"] == pytest.approx(-1.0 / missed["cases"])  # K01: 1.0 → 0.0
    assert met["delta"] > 0.0
    assert missed["low"] <= missed["delta"] <= missed["high"]
    assert missed["low"] < 0.0
    cases = {c["system"]: c for c in data["cases"]}
    assert cases["demo-v1"]["only_a"] == ["K02"]
    assert cases["demo-v1"]["only_b"] == []
    assert cases["demo-v2"]["only_a"] == []
    assert met["cases"] == missed["cases"] - 1  # K02 is not paired
    lines = out.splitlines()
    assert any("K01" in line and "newly missed" in line for line in lines)
    assert any("K20" in line and "newly met" in line for line in lines)
    assert any("demo-v1" in line and "1: K02" in line for line in lines)


def test_what_cannot_be_compared_is_refused(
    bundled: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    run_a = _run(bundled, 1, "a")
    capsys.readouterr()
    (bundled.path / "raw-runs" / "empty").mkdir()

    status, out, _ = _compare(capsys, "raw-runs/a", "raw-runs/empty")
    assert status == 2
    assert "raw-runs/empty: not a raw-runs/<run-id> directory (no manifest.json)" in out

    status, out, _ = _compare(capsys, "raw-runs/missing", "raw-runs/a")
    assert status == 2
    assert "no manifest.json" in out

    other = _copy(run_a, "other-layer")
    manifest = json.loads((other / "manifest.json").read_text("utf-8"))
    manifest["options"]["layer"] = "B"
    (other / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    status, out, _ = _compare(capsys, "raw-runs/a", "raw-runs/other-layer")
    assert status == 2
    assert "run a is of layer A and run other-layer of layer B" in out

    (other / "manifest.json").write_text("{not json", encoding="utf-8")
    status, out, _ = _compare(capsys, "raw-runs/a", "raw-runs/other-layer")
    assert status == 2
    assert "does not read" in out
    assert not list((bundled.path / "reports").glob("compare-*"))


def _delta(system: str, low: float, estimate: float, high: float) -> MetricDelta:
    paired = PairedComparison(estimate, low, high, 5, 0.5, 0.5, 0.04, "BCa", "sign-flip")
    return MetricDelta("B", system, "exact_answer", "exact", "higher", 0.5, 0.5 + estimate, paired)


def test_the_outputs_escape_every_name_from_a_run() -> None:
    hostile = "<img src=x onerror=alert(1)>\x1b[31m\u202e"
    comparison = RunComparison(
        run_a="a",
        run_b="b",
        seed_a=1,
        seed_b=2,
        layers=("B",),
        configuration="ragv2.yaml",
        confidence=0.95,
        cases=[SystemCases("B", hostile, ("K1",), (hostile,), ())],
        deltas=[_delta(hostile, 0.1, 0.2, 0.3), _delta("plain", -0.3, -0.2, -0.1)],
        outcomes=[OutcomeChange("B", hostile, hostile, (1, 1), (0, 1))],
        veto_counts={"B": {hostile: {"leak": (0, 2)}}},
        veto_changes=[VetoChange("B", hostile, "K1", "leak", "appeared")],
    )
    page = comparison_html(comparison)
    assert "<img" not in page
    assert "\x1b" not in page
    assert "\u202e" not in page
    assert "&lt;img src=x onerror=alert(1)&gt;\\x1b[31m\\u202e" in page
    lines = comparison_lines(comparison)
    assert not any("\x1b" in line or "\u202e" in line for line in lines)
    markdown = comparison_markdown(comparison)
    assert "<img" not in markdown
    assert "\x1b" not in markdown
    # the reading follows the metric's direction and the interval
    readings = [delta.reading for delta in comparison.deltas]
    assert readings == ["better", "worse"]
    assert any("leak" in line and "appeared" in line for line in lines)
    assert any(line.split()[-2:] == ["0", "2"] for line in lines if "leak" in line)


def test_a_session_compares_its_run_with_an_earlier_one(bundled: pytest.Pytester) -> None:
    first = bundled.runpytest("--ragv2-layer=A", "--ragv2-seed=1", "--ragv2-run-id=a")

    result = bundled.runpytest(
        "--ragv2-layer=A", "--ragv2-seed=2", "--ragv2-run-id=b", "--ragv2-compare=a"
    )

    assert result.ret == first.ret  # the comparison decides nothing
    out = " ".join(result.stdout.str().split())  # the terminal wraps long lines
    assert "comparison with run a: reports/compare-a-vs-b (summary.md" in out
    result.stdout.re_match_lines(
        [r"\s*demo-v2: R@5 Δ [+-]\d\.\d{3} \[[+-]\d\.\d{3}, [+-]\d\.\d{3}\]"]
    )
    data = json.loads(
        (bundled.path / "reports" / "compare-a-vs-b" / "comparison.json").read_text("utf-8")
    )
    assert (data["run_a"], data["run_b"]) == ("a", "b")
    assert {row["system"] for row in data["metrics"]} == SYSTEMS
    assert "this session's" in data["configuration"]

    missing = bundled.runpytest(
        "--ragv2-layer=A", "--ragv2-seed=2", "--ragv2-run-id=c", "--ragv2-compare=nope"
    )
    assert missing.ret == first.ret
    said = " ".join(missing.stdout.str().split())
    assert "comparison with nope: not made: nope: not a raw-runs/<run-id> directory" in said
    assert not (bundled.path / "reports" / "compare-nope-vs-c").exists()


def test_a_comparison_that_cannot_be_written_is_refused(
    bundled: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    _run(bundled, 1, "a")
    (bundled.path / "blocked").write_text("a file where the folder would be", encoding="utf-8")
    capsys.readouterr()

    status, out, _ = _compare(capsys, "raw-runs/a", "raw-runs/a", "--output", "blocked/here")

    assert status == 2
    assert "the comparison could not be written: blocked/here" in out
