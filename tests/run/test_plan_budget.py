"""--ragv2-plan (what a session would run, and for how long) and --ragv2-max-minutes (the
session's budget), in real pytest sessions."""

from __future__ import annotations

import fnmatch
import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO_ROOT, SYSTEMS_MODULE, pyproject

# each run takes 1 s, so ten runs overrun a 2.4 s budget even on two workers
SLOW_SYSTEMS = """

import time


def slow_good(query, k, **options):
    time.sleep(1.0)
    return good(query, k)


def slow_weak(query, k, **options):
    time.sleep(1.0)
    return weak(query, k)
"""


def summary_of(pytester: pytest.Pytester, run_id: str) -> dict[str, Any]:
    path = pytester.path / "reports" / run_id / "summary.json"
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def raw_lines(pytester: pytest.Pytester, run_id: str) -> list[dict[str, Any]]:
    from pytest_ragv2.run.rawruns import read_raw_runs

    return list(read_raw_runs(pytester.path / "raw-runs" / run_id))


def write_runs(folder: Path, runs: list[tuple[str, str, float]], mtime: float) -> None:
    """A raw-run folder holding runs of (system, layer, latency)."""
    folder.mkdir(parents=True)
    path = folder / "runs-main.jsonl"
    lines = [
        json.dumps(
            {
                "key": {"case": "X", "system": system, "rep": 1, "lang": "en", "layer": layer},
                "latency_s": latency,
            }
        )
        for system, layer, latency in runs
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    os.utime(path, (mtime, mtime))


# --ragv2-plan ------------------------------------------------------------------------------


def test_plan_without_earlier_runs_names_each_system_and_runs_nothing(
    project: pytest.Pytester,
) -> None:
    result = project.runpytest("--ragv2-layer=A", "--ragv2-plan", "--ragv2-run-id=planned")
    assert result.ret == 0
    result.stdout.fnmatch_lines(
        [
            "*pytest-ragv2 plan — layer A*",
            "layer A (retrieval only): 10 item(s)",
            "  v1 * 5 item(s)  no earlier runs of v1 at layer A",
            "  v2 * 5 item(s)  no earlier runs of v2 at layer A",
            "expected duration: unknown (no earlier runs to estimate it from)",
            "nothing was run (--ragv2-plan)",
        ]
    )
    assert not (project.path / "raw-runs" / "planned").exists()
    assert not (project.path / "reports" / "planned").exists()


def test_plan_estimates_from_an_earlier_runs_latencies(project: pytest.Pytester) -> None:
    first = project.runpytest("--ragv2-layer=A", "--ragv2-run-id=first")
    assert first.ret == 0
    result = project.runpytest("--ragv2-layer=A", "--ragv2-plan")
    assert result.ret == 0
    result.stdout.fnmatch_lines(
        [
            "  v1 * 5 item(s) × median * s = * s  (from 5 run(s) in raw-runs/first)",
            "  v2 * 5 item(s) × median * s = * s  (from 5 run(s) in raw-runs/first)",
            "  layer A: about * s",
            "expected duration: about * s",
        ]
    )
    assert sorted(path.name for path in (project.path / "raw-runs").iterdir()) == ["first"]


def test_plan_takes_each_system_from_the_newest_folder_holding_its_runs(
    project: pytest.Pytester,
) -> None:
    raw = project.path / "raw-runs"
    write_runs(raw / "old", [("v1", "A", 1.0), ("v1", "A", 3.0), ("v1", "A", 2.0)], 1000)
    write_runs(raw / "old2", [("v2", "A", 0.5), ("v1", "B", 99.0)], 2000)
    write_runs(raw / "new", [("v1", "A", 10.0)], 3000)
    result = project.runpytest("--ragv2-layer=A", "--ragv2-plan", "--ragv2-max-minutes=0.5")
    assert result.ret == 0
    result.stdout.fnmatch_lines(
        [
            "  v1 * 5 item(s) × median 10 s = 50 s  (from 1 run(s) in raw-runs/new)",
            "  v2 * 5 item(s) × median 0.5 s = 2.5 s  (from 1 run(s) in raw-runs/old2)",
            "  layer A: about 52 s",
            "expected duration: about 52 s",
            "budget: 0.5 min (--ragv2-max-minutes); the estimate exceeds it",
        ]
    )


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_plan_of_a_chat_layer_adds_up_each_inference_slot(
    bundled: pytest.Pytester, workers: list[str]
) -> None:
    runs = [(system, "B", 2.0) for system in ("demo-v1", "demo-v2", "demo-ref")]
    write_runs(bundled.path / "raw-runs" / "earlier", runs, 1000)
    result = bundled.runpytest("--ragv2-layer=A,B", "--ragv2-plan", *workers)
    assert result.ret == 0
    result.stdout.fnmatch_lines(
        [
            "layer A (retrieval only): * item(s)",
            "  demo-v1 * item(s)  no earlier runs of demo-v1 at layer A",
            "layer B (end to end): * item(s)",
            "  demo-ref * item(s) × median 2 s = * (from 1 run(s) in raw-runs/earlier)",
            "  inference slot demo-reference (demo-ref): *, its items one at a time",
            "  inference slot demo-model (demo-v1, demo-v2): *, its items one at a time",
        ]
    )
    if workers:
        result.stdout.fnmatch_lines(["  slots run in parallel on 2 xdist workers: *"])
    else:
        result.stdout.fnmatch_lines(["  slots run one after another: in parallel only under*"])
    assert not (bundled.path / "reports").exists()


@pytest.mark.parametrize("shard", [[], ["--ragv2-shard=2/3"]], ids=["whole", "shard"])
def test_a_plan_counts_from_the_catalog_what_collection_would_make(
    bundled: pytest.Pytester, shard: list[str]
) -> None:
    """Nothing narrowing the items: the plan reads the catalog and makes no item (it does
    not pay the collection); narrowed (-k), it counts the collected items: both agree."""
    args = ["--ragv2-layer=A,B", "--ragv2-plan", "--ragv2-lang=en,de", *shard]
    fast = bundled.inline_run(*args)
    assert fast.ret == 0
    assert fast.getreports("pytest_collectreport") == []  # no collector ran
    counted = bundled.runpytest(*args)
    collected = bundled.runpytest(*args, "-k", "not no-such-case")
    assert counted.ret == collected.ret == 0
    plan = [line for line in counted.outlines if "item(s)" in line]
    assert plan
    assert plan == [line for line in collected.outlines if "item(s)" in line]


# --ragv2-max-minutes -------------------------------------------------------------------------


@pytest.fixture
def slow_project(project: pytest.Pytester) -> pytest.Pytester:
    project.makepyfile(ragsystems=SYSTEMS_MODULE + SLOW_SYSTEMS)
    (project.path / "pyproject.toml").write_text(pyproject("slow_weak", "slow_good"))
    return project


def assert_incomplete(pytester: pytest.Pytester, result: pytest.RunResult, run_id: str) -> None:
    assert result.ret == 1
    summary = summary_of(pytester, run_id)
    assert summary["verdict"] == "incomplete"
    assert summary["exit_status"] == 1
    budget = summary["budget"]
    expected = summary["runs"]["expected"]
    recorded = summary["runs"]["recorded"]
    assert expected == 10
    assert budget["runs_not_started"] > 0
    assert recorded + budget["runs_not_started"] == expected
    # everything that ran is kept: one raw run per record
    assert len(raw_lines(pytester, run_id)) == recorded
    gate = next(g for g in summary["gates"] if g["name"] == "runs_complete")
    assert gate["decision"] == "fail"
    assert f"{budget['runs_not_started']} not started: the budget of" in gate["reason"]
    assert (pytester.path / "reports" / run_id / "summary.md").is_file()
    assert (pytester.path / "reports" / run_id / "report.html").is_file()
    # the terminal wraps long sentences at its width: read it as one line of words
    screen = " ".join(result.stdout.str().split())
    assert fnmatch.fnmatch(
        screen,
        f"*budget: *; spent: {budget['runs_not_started']} run(s) not started (layer A: *)"
        "*verdict: INCOMPLETE — the budget of * min was spent and * run(s) were not "
        "started: not a pass; gate(s) failed: *runs_complete* (exit status 1)*",
    )
    outcomes = result.parseoutcomes()
    assert outcomes.get("skipped", 0) == budget["runs_not_started"]


def test_spent_budget_stops_the_session_cleanly(slow_project: pytest.Pytester) -> None:
    result = slow_project.runpytest(
        "--ragv2-layer=A", "--ragv2-max-minutes=0.01", "--ragv2-run-id=budget", "-rs"
    )
    assert_incomplete(slow_project, result, "budget")
    result.stdout.fnmatch_lines(["*not started: the budget of 0.01 min (0.6 s) was spent*"])


def test_a_rescore_of_a_spent_budget_is_incomplete_as_the_session_was(
    slow_project: pytest.Pytester,
) -> None:
    from pytest_ragv2.config.settings import load_settings
    from pytest_ragv2.tools.rescore import rescore_run

    slow_project.runpytest("--ragv2-layer=A", "--ragv2-max-minutes=0.01", "--ragv2-run-id=budget")
    rescored = rescore_run(
        slow_project.path / "raw-runs" / "budget", load_settings(slow_project.path, None)
    )
    assert not rescored.passed
    assert rescored.summary.to_json() == summary_of(slow_project, "budget")


def test_spent_budget_under_xdist(slow_project: pytest.Pytester) -> None:
    result = slow_project.runpytest(
        "--ragv2-layer=A", "--ragv2-max-minutes=0.04", "--ragv2-run-id=budget", "-n", "2"
    )
    assert_incomplete(slow_project, result, "budget")


def test_budget_as_a_config_key(slow_project: pytest.Pytester) -> None:
    (slow_project.path / "pyproject.toml").write_text(
        pyproject("slow_weak", "slow_good", extra="max_minutes = 0.01")
    )
    result = slow_project.runpytest("--ragv2-layer=A", "--ragv2-run-id=budget")
    assert_incomplete(slow_project, result, "budget")


def test_budget_not_spent_leaves_the_verdict_alone(project: pytest.Pytester) -> None:
    result = project.runpytest("--ragv2-layer=A", "--ragv2-max-minutes=5", "--ragv2-run-id=ok")
    assert result.ret == 0
    summary = summary_of(project, "ok")
    assert summary["verdict"] == "pass"
    assert summary["budget"] == {"max_minutes": 5.0, "runs_not_started": 0, "not_started": []}
    result.stdout.fnmatch_lines(["budget: 5 min; every run started within it"])


def test_spent_budget_in_a_session_of_several_layers(bundled: pytest.Pytester) -> None:
    (bundled.path / "evidence").mkdir()
    shutil.copy(REPO_ROOT / "evidence" / "demo-v2.json", bundled.path / "evidence")
    (bundled.path / "pyproject.toml").write_text(
        '[tool.ragv2]\ncorpus = "corpus"\nevidence = "evidence/demo-v2.json"\n'
    )
    result = bundled.runpytest(
        "--ragv2-layer=A,B,C", "--ragv2-reps=1", "--ragv2-run-id=abc", "-k", "B06 or K01",
        "--ragv2-max-minutes=0.001",
    )  # fmt: skip
    assert result.ret == 1
    not_started = 0
    for layer in "ABC":
        path = bundled.path / "reports" / "abc" / layer / "summary.json"
        summary = json.loads(path.read_text(encoding="utf-8"))
        assert summary["session"]["verdict"] == "incomplete"
        missing = summary["runs"]["expected"] - summary["runs"]["recorded"]
        not_started = summary["budget"]["runs_not_started"]
        assert summary["verdict"] == ("incomplete" if missing else summary["verdict"])
    assert not_started > 0
    screen = " ".join(result.stdout.str().split())
    assert "verdict: INCOMPLETE — the budget of 0.001 min was spent" in screen
