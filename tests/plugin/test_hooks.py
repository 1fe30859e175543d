"""Gates and report sections of one's own, from a conftest: they decide the exit status and
appear in summary.json, summary.md, report.html and the terminal, serial and under xdist."""

from __future__ import annotations

import json
import textwrap
from typing import Any

import pytest

CONFTEST = textwrap.dedent(
    """\
    from pytest_ragv2.deciding.verdict import GateResult
    from pytest_ragv2.report.model import ReportSection

    MIN_CASES = {min_cases}


    def pytest_ragv2_gates(layer, results, settings):
        candidate = results.role_system("candidate")
        cases = results.systems[candidate].cases if candidate else 0
        return [
            GateResult(
                "team_min_cases",
                "the candidate ran at least MIN_CASES cases",
                cases,
                f">= {{MIN_CASES}}",
                "pass" if cases >= MIN_CASES else "fail",
                f"{{cases}} case(s) at layer {{layer}}",
            )
        ]


    def pytest_ragv2_summary(summary):
        rows = [[name, str(row.runs)] for name, row in summary.systems.items()]
        return [ReportSection("Team runs per system", ["system", "runs"], rows)]
    """
)


def _summary(pytester: pytest.Pytester, run_id: str) -> dict[str, Any]:
    path = pytester.path / "reports" / run_id / "summary.json"
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_a_conftest_gate_and_section_reach_every_report(
    project: pytest.Pytester, workers: list[str]
) -> None:
    project.makeconftest(CONFTEST.format(min_cases=1))
    result = project.runpytest("--ragv2-layer=A", "--ragv2-run-id=own", *workers)
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    summary = _summary(project, "own")
    gate = next(g for g in summary["gates"] if g["name"] == "team_min_cases")
    assert gate["decision"] == "pass"
    assert gate["reason"] == f"{gate['value']} case(s) at layer A"
    assert summary["sections"] == [
        {
            "title": "Team runs per system",
            "header": ["system", "runs"],
            "rows": [[name, str(row["runs"])] for name, row in summary["systems"].items()],
        }
    ]
    report = project.path / "reports" / "own"
    markdown = (report / "summary.md").read_text(encoding="utf-8")
    assert "team\\_min\\_cases" in markdown  # Markdown escapes the underscores
    assert "Team runs per system" in markdown
    page = (report / "report.html").read_text(encoding="utf-8")
    assert "team_min_cases" in page
    assert "Team runs per system" in page
    assert "Team runs per system" in result.stdout.str()


def test_a_conftest_gate_that_fails_fails_the_session(project: pytest.Pytester) -> None:
    project.makeconftest(CONFTEST.format(min_cases=1000))
    result = project.runpytest("--ragv2-layer=A", "--ragv2-run-id=strict")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    summary = _summary(project, "strict")
    assert summary["verdict"] == "fail"
    failed = [g["name"] for g in summary["gates"] if g["decision"] == "fail"]
    assert failed == ["team_min_cases"]


def test_a_hook_that_raises_is_a_failed_gate_not_a_crash(project: pytest.Pytester) -> None:
    project.makeconftest(
        "def pytest_ragv2_gates(layer, results, settings):\n"
        "    raise RuntimeError('the team gate is broken')\n"
    )
    result = project.runpytest("--ragv2-layer=A", "--ragv2-run-id=broken")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    gate = next(g for g in _summary(project, "broken")["gates"] if g["name"] == "plugin_gates")
    assert gate["decision"] == "fail"
    assert "RuntimeError: the team gate is broken" in gate["reason"]


def test_without_hooks_the_summary_has_no_sections(project: pytest.Pytester) -> None:
    result = project.runpytest("--ragv2-layer=A", "--ragv2-run-id=plain")
    assert result.ret == pytest.ExitCode.OK
    summary = _summary(project, "plain")
    assert "sections" not in summary
    assert all(g["name"] != "plugin_gates" for g in summary["gates"])


ADAPTER_CONFTEST = textwrap.dedent(
    """\
    from typing import Literal

    from pytest_ragv2.systems.base import timed_retrieval
    from pytest_ragv2.systems.config import RetrievalAdapterConfig
    from pytest_ragv2.systems.outputs import RetrievedItem
    from pytest_ragv2.systems.registry import RetrievalAdapter

    import ragsystems


    class TeamIndexConfig(RetrievalAdapterConfig):
        adapter: Literal["team-index"]
        index: str


    class TeamIndex:
        def __init__(self, name, config):
            self.name = name
            self.index = config.index

        def retrieve(self, query, k):
            def found(exchanges):
                items = ragsystems.good(query, k)
                return [RetrievedItem(rank=n, **item) for n, item in enumerate(items, 1)]

            return timed_retrieval(found)

        def close(self):
            pass


    def pytest_ragv2_adapters():
        return [
            RetrievalAdapter(
                "team-index", TeamIndexConfig, lambda name, config, ids: TeamIndex(name, config)
            )
        ]
    """
)


def _team_index_project(project: pytest.Pytester) -> None:
    pyproject = (project.path / "pyproject.toml").read_text(encoding="utf-8")
    team = 'retrieval = {adapter = "team-index", index = "products-2026"}'
    pyproject = pyproject.replace(
        'retrieval = {adapter = "python", callable = "ragsystems:good"}', team
    )
    assert team in pyproject
    (project.path / "pyproject.toml").write_text(pyproject, encoding="utf-8")


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_a_conftest_adapter_runs_a_system_into_every_report(
    project: pytest.Pytester, workers: list[str]
) -> None:
    project.makeconftest(ADAPTER_CONFTEST + "\n" + CONFTEST.format(min_cases=1))
    _team_index_project(project)
    result = project.runpytest("--ragv2-layer=A", "--ragv2-run-id=team", *workers)
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    summary = _summary(project, "team")
    candidate = summary["systems"]["v2"]
    assert candidate["errors"] == 0
    assert candidate["runs"] == summary["runs"]["recorded"] // 2
    # the adapter's system is the python "good" system behind another door: same figures
    assert candidate["recall@5"] == 1.0
    gate = next(g for g in summary["gates"] if g["name"] == "team_min_cases")
    assert gate["decision"] == "pass"
    assert summary["sections"][0]["title"] == "Team runs per system"
    manifest = json.loads(
        (project.path / "raw-runs" / "team" / "manifest.json").read_text(encoding="utf-8")
    )
    assert manifest["systems"]["v2"]["retrieval"]["adapter"] == "team-index"
    assert manifest["systems"]["v2"]["retrieval"]["index"] == "products-2026"
    report = project.path / "reports" / "team"
    for page in ("summary.md", "report.html"):
        text = (report / page).read_text(encoding="utf-8")
        assert "team_min_cases" in text.replace("\\_", "_")
        assert "Team runs per system" in text


def test_an_added_adapters_configuration_is_checked_with_its_model(
    project: pytest.Pytester,
) -> None:
    project.makeconftest(ADAPTER_CONFTEST)
    _team_index_project(project)
    pyproject = (project.path / "pyproject.toml").read_text(encoding="utf-8")
    (project.path / "pyproject.toml").write_text(
        pyproject.replace('index = "products-2026"', 'indx = "products-2026"'), encoding="utf-8"
    )
    result = project.runpytest("--ragv2-layer=A", "--ragv2-run-id=typo")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    errors = result.stderr.str()
    assert "systems.v2.retrieval.index" in errors or "retrieval.index" in errors, errors
    assert "indx" in errors


def test_an_adapter_may_not_take_a_built_in_name(project: pytest.Pytester) -> None:
    project.makeconftest(
        ADAPTER_CONFTEST.replace('"team-index"', '"python"').replace("'team-index'", "'python'")
    )
    result = project.runpytest("--ragv2-layer=A", "--ragv2-run-id=clash")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "the adapter name 'python' is taken" in result.stderr.str()
