"""The formal protocol in real sessions: a development run says so, the holdout needs a
gate lock and records its look, a gate edited after that look is refused for the holdout
and flagged in every report, and a formal run refuses provisional gold and a narrowed
case set."""

from __future__ import annotations

import io
import json
from typing import Any

import pytest

from pytest_ragv2.deciding.formal import LOCK_FILE
from pytest_ragv2.tools.cli import _freeze_gates_command

USAGE_ERROR = pytest.ExitCode.USAGE_ERROR


def summary_of(pytester: pytest.Pytester, run_id: str) -> dict[str, Any]:
    path = pytester.path / "reports" / run_id / "summary.json"
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def freeze(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> tuple[int, str]:
    monkeypatch.chdir(pytester.path)
    out = io.StringIO()
    status = _freeze_gates_command(None, out)
    return status, out.getvalue()


def lock_of(pytester: pytest.Pytester) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((pytester.path / LOCK_FILE).read_text(encoding="utf-8"))
    return data


def edit_gates(pytester: pytest.Pytester) -> None:
    path = pytester.path / "pyproject.toml"
    path.write_text(
        path.read_text(encoding="utf-8") + "\n[tool.ragv2.gates]\nrecall_improvement_min = 0.2\n",
        encoding="utf-8",
    )


def adjudicate(pytester: pytest.Pytester) -> None:
    for path in (pytester.path / "cases").glob("*.yaml"):
        text = path.read_text(encoding="utf-8")
        path.write_text(
            text.replace("  category:", "  gold_status: adjudicated\n  category:"),
            encoding="utf-8",
        )


def test_a_run_with_provisional_gold_is_labelled_a_development_run(
    project: pytest.Pytester,
) -> None:
    result = project.runpytest("--ragv2-layer=A", "--ragv2-run-id=dev")
    protocol = summary_of(project, "dev")["protocol"]
    assert protocol["kind"] == "development"
    assert protocol["provisional_cases"] == protocol["cases"] == 3
    assert protocol["flags"] == []
    result.stdout.fnmatch_lines(["protocol: development run: 3 of 3 case(s) have provisional*"])
    report = project.path / "reports" / "dev"
    assert "Protocol: development run: 3 of 3" in (report / "summary.md").read_text("utf-8")
    assert "Protocol: development run: 3 of 3" in (report / "report.html").read_text("utf-8")


def test_holdout_prompts_never_reach_a_development_runs_artifacts(
    project: pytest.Pytester,
) -> None:
    project.runpytest("--ragv2-layer=A", "--ragv2-run-id=dev", "-n", "2")
    written = [
        path
        for folder in ("raw-runs", "reports")
        for path in (project.path / folder).rglob("*")
        if path.is_file()
    ]
    assert written
    for path in written:
        text = path.read_text(encoding="utf-8", errors="replace")
        assert "Holdout pressure question" not in text, path
        assert "H01" not in text, path


def test_a_holdout_run_without_a_lock_is_a_usage_error(project: pytest.Pytester) -> None:
    result = project.runpytest("--ragv2-layer=A", "--ragv2-split=holdout", "--ragv2-run-id=h")
    assert result.ret == USAGE_ERROR
    result.stderr.fnmatch_lines(["*a holdout run needs a gate lock*ragv2 freeze-gates*"])
    assert not (project.path / "raw-runs" / "h").exists()


def test_the_holdout_look_is_recorded_and_the_gates_are_final_after_it(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    status, said = freeze(project, monkeypatch)
    assert status == 0, said
    lock = lock_of(project)
    assert lock["holdout_seen"] == []
    assert len(lock["gates"]) == len(lock["cases"]) == len(lock["gold"]) == 64

    first = project.runpytest("--ragv2-layer=A", "--ragv2-split=holdout", "--ragv2-run-id=h1")
    assert first.ret in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED)
    assert [look["run_id"] for look in lock_of(project)["holdout_seen"]] == ["h1"]

    edit_gates(project)
    again = project.runpytest("--ragv2-layer=A", "--ragv2-split=holdout", "--ragv2-run-id=h2")
    assert again.ret == USAGE_ERROR
    again.stderr.fnmatch_lines(["*the gates changed after the holdout was seen (run h1)*"])
    assert not (project.path / "raw-runs" / "h2").exists()

    status, said = freeze(project, monkeypatch)
    assert status == 2
    assert "the holdout was seen (run h1" in said

    development = project.runpytest("--ragv2-layer=A", "--ragv2-run-id=d1")
    flags = summary_of(project, "d1")["protocol"]["flags"]
    assert len(flags) == 1
    assert "changed after the holdout was seen" in flags[0]
    development.stdout.fnmatch_lines(["protocol flag: the gates differ from those frozen*"])
    report = project.path / "reports" / "d1"
    assert "Protocol flag:" in (report / "summary.md").read_text("utf-8")
    assert "Protocol flag:" in (report / "report.html").read_text("utf-8")


def test_a_lock_frozen_from_another_folder_matches_the_session(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The lock names the case and gold files from the configuration's folder, wherever
    ``ragv2 freeze-gates --config`` runs, and records the commit of the project's repo."""
    import subprocess

    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"]
    subprocess.run(["git", "init", "-q"], cwd=project.path, check=True)
    subprocess.run([*git, "add", "-A"], cwd=project.path, check=True)
    subprocess.run([*git, "commit", "-qm", "cases"], cwd=project.path, check=True)
    head = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=project.path, capture_output=True, text=True, check=True
    ).stdout.strip()
    elsewhere = project.path.parent / f"{project.path.name}-elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    out = io.StringIO()
    assert _freeze_gates_command(str(project.path / "pyproject.toml"), out) == 0, out.getvalue()
    lock = lock_of(project)
    assert lock["commit"] == head
    assert f"(commit {head})" in out.getvalue()

    monkeypatch.chdir(project.path)
    holdout = project.runpytest("--ragv2-layer=A", "--ragv2-split=holdout", "--ragv2-run-id=h")
    assert holdout.ret in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED), holdout.stderr
    assert [look["run_id"] for look in lock_of(project)["holdout_seen"]] == ["h"]


def test_a_lock_can_be_refrozen_before_the_holdout_is_seen(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert freeze(project, monkeypatch)[0] == 0
    edit_gates(project)
    result = project.runpytest("--ragv2-layer=A", "--ragv2-split=holdout", "--ragv2-run-id=h")
    assert result.ret == USAGE_ERROR
    result.stderr.fnmatch_lines(["*does not match: the gates changed; freeze them again*"])
    assert freeze(project, monkeypatch)[0] == 0
    result = project.runpytest("--ragv2-layer=A", "--ragv2-split=holdout", "--ragv2-run-id=h")
    assert result.ret != USAGE_ERROR


def test_a_formal_run_refuses_provisional_gold_and_unfrozen_gates(
    project: pytest.Pytester,
) -> None:
    result = project.runpytest("--ragv2-layer=A", "--ragv2-formal", "--ragv2-run-id=f")
    assert result.ret == USAGE_ERROR
    result.stderr.fnmatch_lines(
        [
            "*--ragv2-formal: a formal run refuses to start:*",
            "*3 case(s) have provisional gold (C01, C02, C03)*",
            f"*the gates are not frozen ({LOCK_FILE} not found*",
        ]
    )


def test_a_formal_run_needs_the_full_case_set(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    adjudicate(project)
    assert freeze(project, monkeypatch)[0] == 0
    narrowed = project.runpytest("--ragv2-layer=A", "--ragv2-formal", "-k", "C01")
    assert narrowed.ret == USAGE_ERROR
    narrowed.stderr.fnmatch_lines(["*the case set is narrowed by -k*"])
    reps = project.runpytest("--ragv2-layer=A", "--ragv2-formal", "--ragv2-reps=3")
    assert reps.ret == USAGE_ERROR
    reps.stderr.fnmatch_lines(["*the repetitions (None locked, 3 now) changed*"])

    formal = project.runpytest("--ragv2-layer=A", "--ragv2-formal", "--ragv2-run-id=f")
    assert formal.ret != USAGE_ERROR
    protocol = summary_of(project, "f")["protocol"]
    assert protocol["kind"] == "formal"
    assert protocol["provisional_cases"] == 0
    formal.stdout.fnmatch_lines(["protocol: formal run"])


def test_a_formal_run_names_only_the_provisional_cases_it_collects(
    project: pytest.Pytester,
) -> None:
    # C04 runs at layer B only: a layer-A formal run does not collect it, so does not name it
    path = project.path / "cases" / "development.yaml"
    path.write_text(
        path.read_text(encoding="utf-8")
        + "- id: C04\n  category: safe_no_answer\n  layers: [B]\n  prompt_en: 'Who in Japan?'\n"
        "  required_evidence: []\n  safe_refusal_expected: true\n",
        encoding="utf-8",
    )
    result = project.runpytest("--ragv2-layer=A", "--ragv2-formal", "--ragv2-run-id=f")
    assert result.ret == USAGE_ERROR
    result.stderr.fnmatch_lines(["*3 case(s) have provisional gold (C01, C02, C03)*"])
    assert "C04" not in result.stderr.str()
