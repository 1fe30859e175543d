"""The ``ragv2`` command: validate, schema, demo serve delegation."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap
import types
from pathlib import Path

import pytest

from pytest_ragv2.tools.cli import main, schema_text
from tests import conftest

REPO_ROOT = Path(__file__).resolve().parents[2]

CASES = """
split: development
cases:
  - id: B01
    category: exact_lookup
    prompt_en: "What is the SLA?"
  - id: B02
    category: safe_no_answer
    prompt_en: "Clients in Japan?"
    safe_refusal_expected: true
"""
HOLDOUT = """
- id: H01
  category: semantic
  prompt_en: "Which plan?"
  required_evidence: []
"""
EVIDENCE = """
B01:
  - file_id: contrat
    page: 2
"""
ALLOWLIST = """
files:
  - {file_id: contrat, filename: contrat.pdf}
"""


def write(relative: str, text: str) -> Path:
    path = Path(relative)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return path


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    write("cases/development.yaml", CASES)
    write("cases/holdout.yaml", HOLDOUT)
    write("gold/evidence.yaml", EVIDENCE)
    return tmp_path


def test_validate_clean_project_exits_0(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate"]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "cases/development.yaml: 2 cases (development), 0 errors",
        "cases/holdout.yaml: 1 case (holdout), 0 errors",
        "gold/evidence.yaml: 0 errors",
        "OK: 3 cases loaded, 0 errors",
    ]


def test_validate_prints_located_errors_and_exits_1(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write("cases/holdout.yaml", HOLDOUT + "  tgas: [x]\n")
    write("gold/evidence.yaml", EVIDENCE + "B77: []\n")
    assert main(["validate"]) == 1
    assert capsys.readouterr().out.splitlines() == [
        "cases/holdout.yaml:5: case H01: tgas: unknown field (did you mean 'tags'?)",
        "gold/evidence.yaml:4: case B77: required_evidence: gold for an unknown case:"
        " no case file defines B77",
        "",
        "cases/development.yaml: 2 cases (development), 0 errors",
        "cases/holdout.yaml: 0 cases (holdout), 1 error",
        "gold/evidence.yaml: 1 error",
        "FAILED: 2 cases loaded, 2 errors",
    ]


def test_validate_prints_warnings_that_fail_nothing(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write("cases/empty.yaml", "# cases to come\n")
    write("cases/none.yaml", "[]\n")
    assert main(["validate"]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "cases/empty.yaml:1: warning: no case: the file is empty or only comments",
        "cases/none.yaml:1: warning: no case: the list of cases is empty",
        "",
        "cases/development.yaml: 2 cases (development), 0 errors",
        "cases/empty.yaml: 0 cases (development), 0 errors, 1 warning",
        "cases/holdout.yaml: 1 case (holdout), 0 errors",
        "cases/none.yaml: 0 cases (development), 0 errors, 1 warning",
        "gold/evidence.yaml: 0 errors",
        "OK: 3 cases loaded, 0 errors, 2 warnings",
    ]


def test_validate_fails_an_invalid_claim_pattern_and_an_invalid_split(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write("gold/answers.yaml", "B01:\n  required_claims:\n    - {text: SLA, pattern: '99,9 (%'}\n")
    write("cases/holdout.yaml", "split: holdouts\ncases:\n" + textwrap.indent(HOLDOUT, "  "))
    assert main(["validate"]) == 1
    assert capsys.readouterr().out.splitlines() == [
        "cases/development.yaml:3: case B01: expected_answer: the gold entry at"
        " gold/answers.yaml:1 is invalid (see the error there)",
        "cases/holdout.yaml:1: split: expected one of development, holdout (got 'holdouts');"
        " the file's cases are not run",
        "gold/answers.yaml:3: case B01: expected_answer.required_claims[0].pattern:"
        " invalid regular expression: missing ), unterminated subpattern at position 5",
        "",
        "cases/development.yaml: 1 case (development), 1 error",
        "cases/holdout.yaml: 0 cases (excluded: invalid split), 1 error",
        "gold/answers.yaml: 1 error",
        "gold/evidence.yaml: 0 errors",
        "FAILED: 1 case loaded, 3 errors",
    ]


def test_validate_uses_pyproject_settings_and_options(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    write("suite/c/dev.yaml", HOLDOUT)
    write("pyproject.toml", '[tool.ragv2]\ncases = "suite/c"\ngold = "suite/g"\n')
    assert main(["validate"]) == 0
    assert (
        capsys.readouterr().out.splitlines()[0]
        == "suite/c/dev.yaml: 1 case (development), 0 errors"
    )
    assert main(["validate", "--cases", "elsewhere"]) == 1
    assert capsys.readouterr().out.splitlines()[0] == "elsewhere: cases directory not found"


def test_validate_checks_the_allowlist(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write("gold/allowlist.yaml", ALLOWLIST)
    assert main(["validate"]) == 0  # found beside the gold files
    assert "gold/allowlist.yaml: 1 file, 0 errors" in capsys.readouterr().out.splitlines()

    write("other-allowlist.yaml", "files:\n  - {file_id: other, filename: other.pdf}\n")
    assert main(["validate", "--allowlist", "other-allowlist.yaml"]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0] == (
        "cases/development.yaml:3: case B01: required_evidence: the gold entry at"
        " gold/evidence.yaml:1 is invalid (see the error there)"
    )
    assert out[1] == (
        "gold/evidence.yaml:2: case B01: required_evidence[0]: file_id 'contrat' is not in"
        " the allow-list"
    )
    assert "other-allowlist.yaml: 1 file, 0 errors" in out


def test_validate_reports_a_broken_allowlist(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write("gold/allowlist.yaml", "files:\n  - {file_id: contrat}\n")
    assert main(["validate"]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "gold/allowlist.yaml:2: files[0].filename: a non-empty string is required"
    assert "gold/allowlist.yaml: 1 error" in out
    assert out[-1] == "FAILED: 3 cases loaded, 1 error"


def test_validate_as_a_real_subprocess(project: Path) -> None:
    write("cases/holdout.yaml", "- id: H01\n  category: [\n")
    completed = subprocess.run(
        [sys.executable, "-m", "pytest_ragv2.tools.cli", "validate"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert completed.returncode == 1, completed.stderr
    lines = completed.stdout.splitlines()
    assert lines[0].startswith("cases/holdout.yaml:3: YAML syntax error:")
    assert "cases/development.yaml: 2 cases (development), 0 errors" in lines
    assert lines[-1] == "FAILED: 2 cases loaded, 1 error"


def test_schema_to_stdout_and_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["schema"]) == 0
    schema = json.loads(capsys.readouterr().out)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["title"] == "pytest-ragv2 case file"
    assert schema["anyOf"] == [
        {"items": {"$ref": "#/$defs/Case"}, "type": "array"},
        {"$ref": "#/$defs/CaseFileMapping"},
    ]
    mapping = schema["$defs"]["CaseFileMapping"]
    assert mapping["required"] == ["cases"]
    assert mapping["additionalProperties"] is False
    assert schema["$defs"]["Case"]["additionalProperties"] is False
    assert {"type": "string"} in schema["$defs"]["Claim"]["anyOf"]  # the string shorthand

    assert main(["schema", "--output", "out/case-file.schema.json"]) == 0
    assert Path("out/case-file.schema.json").read_text(encoding="utf-8") == schema_text()


@pytest.mark.parametrize("what", ["case", "config", "summary", "raw-run"])
def test_committed_schemas_are_up_to_date(what: str) -> None:
    from pytest_ragv2.tools.cli import SCHEMA_FILES, SCHEMAS

    committed = REPO_ROOT / "schemas" / SCHEMA_FILES[what]
    assert committed.read_text(encoding="utf-8") == SCHEMAS[what](), (
        f"regenerate it: ragv2 schema {what} --output schemas/{SCHEMA_FILES[what]}"
    )


def test_demo_serve_hands_the_remaining_arguments_to_the_server(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    received: list[list[str]] = []

    def serve(argv: list[str]) -> int:
        received.append(argv)
        return 7

    stand_in = types.ModuleType("ragv2_demo.server")
    stand_in.main = serve  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "ragv2_demo.server", stand_in)
    assert main(["demo", "serve", "--port", "0", "--corpus", "c"]) == 7
    assert received == [["--port", "0", "--corpus", "c"]]


def test_demo_serve_runs_the_real_server_entry_point(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["demo", "serve", "--corpus", "no-such-corpus", "--port", "0"]) == 2
    assert "no-such-corpus does not exist" in capsys.readouterr().err


def test_usage_errors_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as raised:
        main([])
    assert raised.value.code == 2
    with pytest.raises(SystemExit) as raised:
        main(["validate", "--bogus"])
    assert raised.value.code == 2
    assert "unrecognized arguments: --bogus" in capsys.readouterr().err


# --------------------------------------------------------------------------- configuration


def test_validate_reads_ragv2_yaml_before_pyproject(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write("yaml-cases/dev.yaml", "- id: H01\n  category: semantic\n  prompt_en: Which plan?\n")
    write("yaml-gold/evidence.yaml", "H01: []\n")
    write("ragv2.yaml", "cases: yaml-cases\ngold: yaml-gold\n")
    write("pyproject.toml", '[tool.ragv2]\ncases = "no-such-cases"\n')
    assert main(["validate"]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "yaml-cases/dev.yaml: 1 case (development), 0 errors",
        "yaml-gold/evidence.yaml: 0 errors",
        "configuration: ragv2.yaml",
        "OK: 1 case loaded, 0 errors",
    ]


def test_validate_config_option_paths_relative_to_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    write("suite/cases/dev.yaml", CASES)
    write("suite/gold/evidence.yaml", EVIDENCE)
    write("suite/files.yaml", ALLOWLIST)
    write(
        "conf/ragv2.yaml",
        "cases: ../suite/cases\ngold: ../suite/gold\nallowlist: ../suite/files.yaml\n",
    )
    write("ragv2.yaml", "cases: not-these\n")  # found by default, overridden by --config
    assert main(["validate", "--config", "conf/ragv2.yaml"]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "suite/cases/dev.yaml: 2 cases (development), 0 errors",
        "suite/gold/evidence.yaml: 0 errors",
        "suite/files.yaml: 1 file, 0 errors",
        "configuration: conf/ragv2.yaml",
        "OK: 2 cases loaded, 0 errors",
    ]
    # the command line still wins over the file
    assert main(["validate", "--config", "conf/ragv2.yaml", "--cases", "elsewhere"]) == 1
    assert capsys.readouterr().out.splitlines()[0] == "elsewhere: cases directory not found"


def test_validate_names_a_configured_allowlist_that_is_missing(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write("ragv2.yaml", "allowlist: lists/files.yaml\n")
    assert main(["validate"]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "lists/files.yaml: file not found"
    assert out[-1] == "FAILED: 3 cases loaded, 1 error"


def test_validate_with_an_unusable_configuration_exits_2(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write("ragv2.yaml", "repetitions: 0\n")
    assert main(["validate"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "ragv2.yaml" in captured.err
    assert "repetitions" in captured.err
    assert main(["validate", "--config", "missing.yaml"]) == 2
    assert "missing.yaml: configuration file not found" in capsys.readouterr().err


def test_validate_help_names_both_failing_exit_statuses(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The help says what the command does: 1 for an error in the files, 2 for a
    configuration error (which the test above shows it returns)."""
    with pytest.raises(SystemExit) as exited:
        main(["validate", "--help"])
    assert exited.value.code == 0
    shown = " ".join(capsys.readouterr().out.split())
    assert "1 on any error in them" in shown
    assert "2 on a configuration error" in shown
    with pytest.raises(SystemExit):
        main(["--help"])
    listed = " ".join(capsys.readouterr().out.split())
    assert "1 on any error in them, 2 on a configuration error" in listed


def test_validate_as_a_subprocess_reads_ragv2_yaml(project: Path) -> None:
    write("suite/dev.yaml", "- id: S01\n  category: semantic\n  prompt_en: Which?\n")
    write("ragv2.yaml", "ragv2:\n  cases: suite\n  gold: suite-gold\n")
    completed = subprocess.run(
        [sys.executable, "-m", "pytest_ragv2.tools.cli", "validate"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert completed.returncode == 1, completed.stderr
    assert completed.stdout.splitlines() == [
        "suite/dev.yaml:1: case S01: required_evidence: no required_evidence: give [] if none"
        " is expected",
        "",
        "suite/dev.yaml: 0 cases (development), 1 error",
        "configuration: ragv2.yaml",
        "FAILED: 0 cases loaded, 1 error",
    ]


@pytest.fixture
def project_files(pytester: pytest.Pytester) -> None:
    """conftest's evaluation project (two case files, allow-list, two python systems)."""
    pytester.makepyfile(ragsystems=conftest.SYSTEMS_MODULE)
    write_to = pytester.path
    (write_to / "cases").mkdir()
    (write_to / "gold").mkdir()
    (write_to / "cases" / "development.yaml").write_text(conftest.DEVELOPMENT_CASES)
    (write_to / "cases" / "holdout.yaml").write_text(conftest.HOLDOUT_CASES)
    (write_to / "gold" / "allowlist.yaml").write_text(conftest.ALLOWLIST)
    (write_to / "pyproject.toml").write_text(conftest.pyproject())


def _layer_a_run(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, then: Path) -> Path:
    """A real layer-A run of the project, then the current folder moved to ``then``."""
    result = pytester.runpytest("--ragv2-layer=A", "--ragv2-run-id=testrun")
    assert result.ret == pytest.ExitCode.OK
    monkeypatch.chdir(then)
    return pytester.path / "raw-runs" / "testrun"


@pytest.fixture
def elsewhere(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Another project folder, whose configuration a rescore must not pick up."""
    folder = tmp_path_factory.mktemp("elsewhere")
    (folder / "pyproject.toml").write_text(
        '[tool.ragv2]\ncases = "no-cases"\nreports = "other-reports"\n', encoding="utf-8"
    )
    return folder


def test_rescore_from_another_folder_uses_the_runs_configuration(
    pytester: pytest.Pytester,
    project_files: None,
    elsewhere: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    run_dir = _layer_a_run(pytester, monkeypatch, elsewhere)
    completed = subprocess.run(
        [sys.executable, "-m", "pytest_ragv2.tools.cli", "rescore", str(run_dir)],
        cwd=elsewhere,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr
    config = (pytester.path / "pyproject.toml").resolve()
    assert completed.stdout.splitlines()[0] == (
        f"configuration: {config} (recorded in the run's manifest)"
    )
    assert (pytester.path / "reports" / "testrun" / "rescored" / "summary.json").is_file()
    assert not (elsewhere / "other-reports").exists()


def test_rescore_config_option_overrides_the_manifest(
    pytester: pytest.Pytester,
    project_files: None,
    elsewhere: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    run_dir = _layer_a_run(pytester, monkeypatch, elsewhere)
    capsys.readouterr()
    assert main(["rescore", str(run_dir), "--config", "pyproject.toml"]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0] == f"configuration: {elsewhere / 'pyproject.toml'} (--config)"
    summary = json.loads(
        (elsewhere / "other-reports" / "testrun" / "rescored" / "summary.json").read_text()
    )
    gold_valid = next(g for g in summary["gates"] if g["name"] == "gold_valid")
    assert gold_valid["decision"] == "fail"
    assert "cases directory not found" in json.dumps(gold_valid)


def test_rescore_of_an_older_manifest_finds_its_configuration_by_hash(
    pytester: pytest.Pytester,
    project_files: None,
    elsewhere: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    run_dir = _layer_a_run(pytester, monkeypatch, elsewhere)
    manifest_path = run_dir / "manifest.json"
    manifest = json.loads(manifest_path.read_text())
    del manifest["config_path"], manifest["rootdir"]  # as written before they were recorded
    manifest_path.write_text(json.dumps(manifest))
    capsys.readouterr()

    assert main(["rescore", str(run_dir)]) == 0
    config = (pytester.path / "pyproject.toml").resolve()
    assert capsys.readouterr().out.splitlines()[0] == (
        f"configuration: {config} (the run's manifest does not record its configuration's"
        " path (an older run); found by the hash the manifest recorded)"
    )

    # the file changed since the run: taken beside raw-runs/, and the line says so
    with config.open("a") as stream:
        stream.write("# edited\n")
    assert main(["rescore", str(run_dir)]) == 0
    assert capsys.readouterr().out.splitlines()[0] == (
        f"configuration: {config} (the run's manifest does not record its configuration's"
        " path (an older run); pyproject.toml beside raw-runs/ has changed since the run)"
    )

    # the run moved out of its project: nothing tells, so the current folder's is used
    moved = shutil.copytree(run_dir, elsewhere / "archive" / "testrun")
    assert main(["rescore", str(moved)]) == 1
    assert capsys.readouterr().out.splitlines()[0] == (
        f"configuration: {elsewhere / 'pyproject.toml'}, of the current folder: the run's"
        " manifest does not record its configuration's path (an older run), and no"
        " pyproject.toml with its hash lies above"
    )


def test_rescore_of_a_missing_run_exits_2(
    elsewhere: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(elsewhere)
    assert main(["rescore", "raw-runs/none"]) == 2
    assert "not a raw-runs/<run-id> directory" in capsys.readouterr().out


def test_validate_explains_a_malformed_typed_claim_with_its_line_and_field(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(
        "gold/answers.yaml",
        """\
        B01:
          required_claims:
            - {kind: percent, value: "99,7 %", severity: high}
            - {kind: date, value: "la semaine prochaine"}
            - {kind: phone}
            - {kind: money, value: "1 100 €", number: 1100}
            - {value: "T1 2026"}
            - {kind: weight, value: "3 kg"}
            - {kind: quantity, value: "16 bar", tolerance: 0.5}
        """,
    )
    assert main(["validate"]) == 1
    out = capsys.readouterr().out
    prefix = "gold/answers.yaml:{}: case B01: expected_answer.required_claims[{}]"
    assert prefix.format(4, 1) + ": value 'la semaine prochaine' does not read as one date" in out
    assert prefix.format(5, 2) + ": a claim of kind phone needs a value" in out
    assert (
        prefix.format(6, 3)
        + ": a claim of kind money is matched by its value in every writing: leave out number"
    ) in out
    assert prefix.format(7, 4) + ": value 'T1 2026' needs a kind" in out
    assert prefix.format(8, 5) + ".kind: " in out
    # the typed matcher has no tolerance: one given would be ignored, so it is refused
    assert (
        prefix.format(9, 6)
        + ": a claim of kind quantity is matched by its value in every writing: leave out tolerance"
    ) in out
    assert "99,7" not in out  # the valid typed claim is no error
