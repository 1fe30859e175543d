"""Configuration errors name the file and line of the key, with a did-you-mean."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from pytest_ragv2.config.errors import toml_key_lines, toml_line
from pytest_ragv2.config.file import SettingsError
from pytest_ragv2.config.settings import load_settings

PYPROJECT = """\
[project]
name = "demo"

[tool.ragv2]
layr = "A"
repetitions = "three"

[tool.ragv2.systems.v1]
role = "baseline"
retrieval = { adapter = "http-jsn", url = "http://127.0.0.1:1" }

[tool.ragv2.systems.v2]
role = "candidate"

[tool.ragv2.systems.v2.retrieval]
adapter = "http-json"
url = "http://127.0.0.1:1"

[tool.ragv2.systems.v2.retrieval.fields]
txt = "body"

[tool.ragv2.gatez]
recall_k = 5
"""


def _errors(root: Path, explicit: str | None = None) -> list[str]:
    with pytest.raises(SettingsError) as raised:
        load_settings(root, explicit)
    return str(raised.value).splitlines()


def test_toml_errors_name_line_and_suggest_the_key(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(PYPROJECT)
    where = tmp_path / "pyproject.toml"
    assert _errors(tmp_path) == [
        f"{where}:5: layr: unknown key (did you mean 'layer'?)",
        f"{where}:6: repetitions: Input should be a valid integer (got 'three')",
        f"{where}:10: systems.v1.retrieval.adapter: unknown adapter 'http-jsn' (did you mean "
        "'http-json'?)",
        f"{where}:20: systems.v2.retrieval.fields.txt: unknown key (did you mean 'text'?)",
        f"{where}:22: gatez: unknown key (did you mean 'gates'?)",
    ]


def test_yaml_errors_name_line_and_suggest_the_key(tmp_path: Path) -> None:
    text = """\
    ragv2:
      systems:
        v1:
          role: baseline
          retrieval:
            adapter: http-json
            url: http://127.0.0.1:1
            feilds:
              text: body
        v2:
          rol: candidate
          retrieval: {adapter: rag-api, url: "http://127.0.0.1:1", k: 0}
    """
    (tmp_path / "ragv2.yaml").write_text(textwrap.dedent(text))
    where = tmp_path / "ragv2.yaml"
    assert _errors(tmp_path) == [
        f"{where}:8: systems.v1.retrieval.feilds: unknown key (did you mean 'fields'?)",
        f"{where}:10: systems.v2.role: Field required",
        f"{where}:11: systems.v2.rol: unknown key (did you mean 'role'?)",
        f"{where}:12: systems.v2.retrieval.k: Input should be greater than or equal to 1 (got 0)",
    ]


def test_an_unknown_key_far_from_any_known_one_lists_the_known_keys(tmp_path: Path) -> None:
    (tmp_path / "ragv2.yaml").write_text("item_pass:\n  zzz: 1\n")
    (line,) = _errors(tmp_path)
    assert line.endswith("ragv2.yaml:2: item_pass.zzz: unknown key (known: recall_k)")


def test_a_yaml_key_written_twice_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "ragv2.yaml").write_text("seed: 1\nlayer: A\nseed: 2\n")
    (line,) = _errors(tmp_path)
    assert line.endswith("ragv2.yaml:3: seed: duplicate key (first given at line 1)")


def test_unreadable_files_are_located(tmp_path: Path) -> None:
    (tmp_path / "bad.toml").write_text("[tool.ragv2]\nlayer = \n")
    (line,) = _errors(tmp_path, "bad.toml")
    assert line.startswith(f"{tmp_path / 'bad.toml'}:2: cannot read configuration: ")
    (tmp_path / "bad.yaml").write_text("ragv2:\n  layer: A\n  seed: [1\n")
    (line,) = _errors(tmp_path, "bad.yaml")
    assert line.startswith(f"{tmp_path / 'bad.yaml'}:4: cannot read configuration: ")


def test_a_configuration_not_in_utf8_is_located_at_its_line(tmp_path: Path) -> None:
    """It was a UnicodeDecodeError traceback (INTERNALERROR, exit status 3)."""
    (tmp_path / "ragv2.yaml").write_bytes(b"layer: A\nseed: 1\n# \xff\xfe\n")
    (line,) = _errors(tmp_path)
    assert line == (
        f"{tmp_path / 'ragv2.yaml'}:3: cannot read configuration: not UTF-8 text: byte 0xff "
        "(invalid start byte); save the file as UTF-8"
    )
    (tmp_path / "other.toml").write_bytes(b"[tool.ragv2]\nlayer = 'A'\n# \xe9\n")
    (line,) = _errors(tmp_path, "other.toml")
    assert line.startswith(f"{tmp_path / 'other.toml'}:3: cannot read configuration: not UTF-8")


@pytest.mark.skipif(sys.platform == "win32", reason="FIFOs are POSIX")
def test_a_configuration_that_is_no_regular_file_is_refused_not_passed_over(
    tmp_path: Path,
) -> None:
    """A FIFO named ragv2.yaml is refused, never read (it blocked) and never passed over for
    pyproject.toml (which would run another configuration)."""
    (tmp_path / "pyproject.toml").write_text("[tool.ragv2]\nseed = 3\n")
    os.mkfifo(tmp_path / "ragv2.yaml")
    (line,) = _errors(tmp_path)
    assert line == (
        f"{tmp_path / 'ragv2.yaml'}: cannot read configuration: a FIFO (named pipe), not a "
        "regular file"
    )
    (tmp_path / "ragv2.yaml").unlink()
    (tmp_path / "ragv2.yaml").symlink_to("/dev/zero")
    (line,) = _errors(tmp_path)
    assert line == (
        f"{tmp_path / 'ragv2.yaml'}: cannot read configuration: a character device (a link to "
        "/dev/zero), not a regular file"
    )


def test_repetitions_are_a_whole_number_up_to_1000(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.ragv2]\nrepetitions = 1e9\n")
    assert _errors(tmp_path) == [
        f"{tmp_path / 'pyproject.toml'}:2: repetitions: Input should be a valid integer "
        "(got 1000000000.0)"
    ]
    (tmp_path / "pyproject.toml").write_text("[tool.ragv2]\nrepetitions = 1001\n")
    assert _errors(tmp_path) == [
        f"{tmp_path / 'pyproject.toml'}:2: repetitions: Input should be less than or equal to "
        "1000 (got 1001)"
    ]
    (tmp_path / "pyproject.toml").write_text("[tool.ragv2]\nrepetitions = 1000\n")
    assert load_settings(tmp_path, None).repetitions == 1000


def test_a_value_from_the_command_line_is_named_by_its_option(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.ragv2]\nseed = 3\n")
    with pytest.raises(SettingsError) as raised:
        load_settings(tmp_path, None, {"repetitions": 0})
    assert str(raised.value) == (
        "--ragv2-reps: repetitions: Input should be greater than or equal to 1 (got 0)"
    )


def test_toml_scan_reads_quoted_dotted_and_multiline_forms() -> None:
    text = textwrap.dedent(
        '''\
        [tool.ragv2]
        note = """
        [tool.ragv2.not_a_table]
        fake = 1
        """
        systems.v1.role = "baseline"
        [ tool.ragv2.systems."my system" ]  # a comment
        retrieval.adapter = 'python'
        '''
    )
    entries = toml_key_lines(text)
    assert (("tool", "ragv2", "not_a_table"), 3) not in entries
    assert toml_line(entries, ["tool", "ragv2", "systems", "v1", "role"]) == 6
    assert toml_line(entries, ["tool", "ragv2", "systems", "my system", "retrieval"]) == 8
    # a misspelt table is located at its header, below the unknown key
    assert toml_line(entries, ["tool", "ragv2", "systems", "my system"]) == 7


def test_a_session_stops_with_the_located_error(project: pytest.Pytester) -> None:
    pyproject = project.path / "pyproject.toml"
    text = pyproject.read_text().replace('role = "candidate"', 'role = "candidate"\nslto = "a"')
    pyproject.write_text(text)
    line = text.splitlines().index('slto = "a"') + 1
    result = project.runpytest("--ragv2-layer=A")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [f"*{pyproject}:{line}: systems.v2.slto: unknown key (did you mean 'slot'?)"]
    )


def test_validate_prints_every_located_error(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(PYPROJECT)
    completed = subprocess.run(
        [sys.executable, "-m", "pytest_ragv2.tools.cli", "validate"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        check=False,
    )
    assert completed.returncode == 2
    assert completed.stdout == ""
    assert "pyproject.toml:20: systems.v2.retrieval.fields.txt: unknown key" in completed.stderr
    assert "Traceback" not in completed.stderr
