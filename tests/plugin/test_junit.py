"""The gates and the verdict in pytest's JUnit XML: a CI test tab shows the decision."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from typing import Any

import pytest

from tests.conftest import pyproject


def _cases(project: pytest.Pytester, name: str) -> dict[tuple[str, str], ET.Element]:
    tree = ET.parse(project.path / name)
    return {
        (case.get("classname", ""), case.get("name", "")): case for case in tree.iter("testcase")
    }


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_a_session_whose_only_failure_is_a_gate_shows_it_as_a_failed_testcase(
    project: pytest.Pytester, workers: list[str]
) -> None:
    # both systems find everything: every run meets its case, and the candidate improves
    # nothing, so recall_improvement fails
    (project.path / "pyproject.toml").write_text(pyproject("good", "good"))
    result = project.runpytest("--ragv2-layer=A", "--junitxml=junit.xml", *workers)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.assert_outcomes(passed=10)  # no run failed: the gate alone fails the session
    cases = _cases(project, "junit.xml")
    gate = cases[("ragv2.gates.A", "recall_improvement")]
    failure = gate.find("failure")
    assert failure is not None
    assert "Δ +0.000" in failure.get("message", "")
    verdict = cases[("ragv2.gates.A", "verdict")].find("failure")
    assert verdict is not None
    assert verdict.get("message") == "verdict: FAIL (exit status 1)"
    holding = cases[("ragv2.gates.A", "no_leak")]
    assert holding.find("failure") is None
    assert holding.find("skipped") is None
    suite = ET.parse(project.path / "junit.xml").getroot().find("testsuite")
    assert suite is not None
    assert int(suite.get("failures", "0")) == 2  # the gate and the verdict
    # the terminal counts the items and the failed gate, not these testcases
    assert "1 gate failed" in result.stdout.lines[-1]


def test_a_passing_session_has_every_gate_and_its_verdict_passed(
    project: pytest.Pytester,
) -> None:
    result = project.runpytest("--ragv2-layer=A", "--junitxml=junit.xml")
    assert result.ret == pytest.ExitCode.OK
    cases = _cases(project, "junit.xml")
    gates = {name: case for (cls, name), case in cases.items() if cls == "ragv2.gates.A"}
    assert "verdict" in gates
    assert "recall_improvement" in gates
    assert all(case.find("failure") is None for case in gates.values())


def test_a_shards_gates_are_skipped_in_junit(project: pytest.Pytester) -> None:
    result = project.runpytest("--ragv2-layer=A", "--ragv2-shard=1/2", "--junitxml=junit.xml")
    assert result.ret == pytest.ExitCode.OK
    cases = _cases(project, "junit.xml")
    verdict = cases[("ragv2.gates.A", "verdict")]
    assert verdict.find("skipped") is not None
    assert all(
        case.find("failure") is None for (cls, _), case in cases.items() if cls == "ragv2.gates.A"
    )


# -- CI-shaped terminal output ------------------------------------------------------------


def test_a_ci_log_is_120_wide_and_splits_no_gate_name(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("COLUMNS", raising=False)
    result = project.runpytest_subprocess("--ragv2-layer=A", "--ragv2-run-id=log")
    lines = result.stdout.lines
    summary_start = next(i for i, line in enumerate(lines) if "pytest-ragv2 layer A" in line)
    ours = lines[summary_start:-1]  # pytest's own last line is pytest's
    assert max(len(line) for line in ours) <= 120
    assert max(len(line) for line in ours) > 80  # not pytest's 80 of a non-terminal
    gates = [line.split()[0] for line in ours if line.startswith("  ") and "(hard)" in line]
    assert "no_leak" in gates  # the name and its "(hard)" on one line, whole


def test_quiet_prints_the_gates_and_the_verdict_and_very_quiet_the_verdict(
    project: pytest.Pytester,
) -> None:
    quiet = project.runpytest("--ragv2-layer=A", "--ragv2-run-id=q", "-q").stdout.str()
    assert "gates:" in quiet
    assert "verdict: PASS" in quiet
    assert "pytest-ragv2 layer A" not in quiet  # no tables, no header
    assert "recall@5" not in quiet.split("gates:")[0]
    very = project.runpytest("--ragv2-layer=A", "--ragv2-run-id=qq", "-qq").stdout.str()
    assert "verdict: PASS" in very
    assert "gates:" not in very


def test_a_session_stopped_at_its_first_failure_counts_its_gates_and_says_not_started(
    project: pytest.Pytester,
) -> None:
    (project.path / "pyproject.toml").write_text(pyproject(baseline="good", candidate="weak"))
    result = project.runpytest("--ragv2-layer=A", "--ragv2-run-id=x", "-x", "-p", "no:randomly")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    out = result.stdout.str()
    assert "gates failed" in result.stdout.lines[-1]  # pytest's count line counts the gates
    gate = next(g for g in _summary_gates(project, "x") if g["name"] == "runs_complete")
    assert "not started: pytest stopping after 1 failures" in gate["reason"]
    assert " lost" not in gate["reason"]
    assert "the runs after it were not started" in " ".join(out.split())  # however wrapped
    # a rescore decides as the session did
    from pytest_ragv2.tools.cli import main

    main(["rescore", str(project.path / "raw-runs" / "x"), "--output", "rescored"])
    rescored = json.loads((project.path / "rescored" / "summary.json").read_text())
    again = next(g for g in rescored["gates"] if g["name"] == "runs_complete")
    assert again["reason"] == gate["reason"]


def _summary_gates(project: pytest.Pytester, run_id: str) -> list[dict[str, Any]]:
    data = json.loads((project.path / "reports" / run_id / "summary.json").read_text())
    gates: list[dict[str, Any]] = data["gates"]
    return gates


# -- pytest-html's page ----------------------------------------------------------------------


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_pytest_html_colours_the_gates_links_each_run_and_spaces_its_gold_level(
    project: pytest.Pytester, workers: list[str]
) -> None:
    (project.path / "pyproject.toml").write_text(pyproject(baseline="good", candidate="weak"))
    project.runpytest("--ragv2-layer=A", "--ragv2-run-id=h", "--html=out/h.html", *workers)
    page = (project.path / "out" / "h.html").read_text(encoding="utf-8")
    assert "<div class='ragv2-gates'>" in page
    assert '<td class="FAIL">FAIL</td>' in page
    assert ".ragv2-gates td.FAIL{" in page
    # the Links column: each run's case panel in report.html, relative to this page
    assert "../reports/h/report.html#case-C01" in page
    # "row NX-450B gold: …", not "row NX-450Bgold: …" (pytest-html keeps its rows escaped)
    assert "&lt;/span&gt; &lt;span class=&#39;level&#39;&gt;gold: " in page
