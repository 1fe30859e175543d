"""Inputs opened safely: a case, gold, allow-list or configuration file is read only when it
is a regular file within its size limit, and what a session is asked for that selects
nothing, or cannot be, stops it with a reason instead of passing silently."""

from __future__ import annotations

import json
import os
import socket
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pytest_ragv2.config.inputs import (
    CASE_FILE_MAX_BYTES,
    InputFileError,
    read_input_bytes,
    read_input_text,
)

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="FIFOs and /dev are POSIX")

RUN_ID = ["--ragv2-run-id=testrun"]
# a path that is no regular file must be refused at once: well within this
REFUSED_WITHIN_S = 5.0


def within(seconds: float, call: Callable[[], Any]) -> Any:
    """``call()``'s result; a failure (never a hang) when it takes longer than ``seconds``."""
    outcome: list[Any] = []

    def run() -> None:
        try:
            outcome.append(("value", call()))
        except BaseException as exc:  # handed to the test's thread
            outcome.append(("error", exc))

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(seconds)  # a net for a hang, never a speed: the refusal reads nothing
    assert not worker.is_alive(), f"still reading after {seconds} s"
    kind, value = outcome[0]
    if kind == "error":
        raise value
    return value


def make_fifo(path: Path) -> None:
    os.mkfifo(path)


def link_to(target: str) -> Callable[[Path], None]:
    def make(path: Path) -> None:
        path.symlink_to(target)

    return make


def make_folder(path: Path) -> None:
    path.mkdir()


def make_socket(path: Path) -> None:
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(path))
    server.close()  # the socket file stays


def make_larger(path: Path) -> None:
    with path.open("wb") as stream:  # sparse: takes no disk space
        stream.truncate(CASE_FILE_MAX_BYTES + 1)


# (kind, how to make it, what the message says)
NOT_READ = [
    ("fifo", make_fifo, "a FIFO (named pipe), not a regular file"),
    ("dev-zero", link_to("/dev/zero"), "a character device (a link to /dev/zero)"),
    ("dev-urandom", link_to("/dev/urandom"), "a character device (a link to /dev/urandom)"),
    ("dangling-link", link_to("nowhere.yaml"), "a symbolic link to nothing (nowhere.yaml)"),
    ("folder", make_folder, "a folder, not a regular file"),
    ("socket", make_socket, "a socket, not a regular file"),
    ("larger", make_larger, "larger than 32 MB, the limit of a case file"),
]
KINDS = [pytest.param(make, message, id=kind) for kind, make, message in NOT_READ]


def test_a_regular_file_and_a_link_to_one_are_read(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text("- id: C01\n", encoding="utf-8")
    (tmp_path / "b.yaml").symlink_to(tmp_path / "a.yaml")
    for name in ("a.yaml", "b.yaml"):
        assert read_input_text(tmp_path / name, 100, "a case file") == "- id: C01\n"


@pytest.mark.parametrize(("make", "message"), KINDS)
def test_what_is_no_regular_file_is_refused_at_once_saying_what_it_is(
    tmp_path: Path, make: Callable[[Path], None], message: str
) -> None:
    path = tmp_path / "cases.yaml"
    make(path)
    with pytest.raises(InputFileError) as refused:
        within(REFUSED_WITHIN_S, lambda: read_input_bytes(path, CASE_FILE_MAX_BYTES, "a case file"))
    assert message in refused.value.message


def test_a_file_read_past_its_limit_is_refused_even_when_it_says_it_is_empty() -> None:
    # a /proc file says it is empty (size 0) and reads on: the limit is counted as it is read
    maps = Path("/proc/self/maps")
    if not maps.is_file():
        pytest.skip("no /proc")
    with pytest.raises(InputFileError, match="larger than"):
        read_input_bytes(maps, 64, "a case file")


def test_text_that_is_not_utf8_is_refused_naming_its_line(tmp_path: Path) -> None:
    path = tmp_path / "ragv2.yaml"
    path.write_bytes(b"layer: A\nseed: 1\n# caf\xe9\n")
    with pytest.raises(InputFileError) as refused:
        read_input_text(path, 1000, "a configuration file")
    assert refused.value.line == 3
    assert refused.value.message.startswith("not UTF-8 text: byte 0xe9")


# --- case and gold files in a session ---------------------------------------------------


@pytest.mark.parametrize(
    ("make", "message"),
    [pytest.param(make, message, id=kind) for kind, make, message in NOT_READ[:2]],
)
def test_a_case_file_that_is_no_regular_file_is_a_located_error_and_the_others_run(
    project: pytest.Pytester, make: Callable[[Path], None], message: str
) -> None:
    """A pull request can carry a FIFO or a link to /dev/zero as a case file: it is one
    failing invalid-cases item (gate gold_valid) naming it, and every other case runs."""
    make(project.path / "cases" / "pulled.yaml")
    result = project.runpytest_subprocess("--ragv2-layer=A", "-rf", *RUN_ID, timeout=60)
    assert result.ret == pytest.ExitCode.TESTS_FAILED, result.stdout.str()
    out = result.stdout.str()
    assert f"cases/pulled.yaml: not read: {message}" in out
    assert "Traceback" not in out + result.stderr.str()
    result.assert_outcomes(passed=6, xfailed=4, failed=1)  # the development cases all ran


def test_a_gold_file_that_links_to_dev_zero_is_a_located_gold_error(
    project: pytest.Pytester,
) -> None:
    (project.path / "gold" / "answers.yaml").symlink_to("/dev/zero")
    result = project.runpytest_subprocess("--ragv2-layer=A", *RUN_ID, timeout=60)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    summary = json.loads((project.path / "reports" / "testrun" / "summary.json").read_text())
    [gold_valid] = [gate for gate in summary["gates"] if gate["name"] == "gold_valid"]
    assert gold_valid["decision"] == "fail"
    assert gold_valid["details"] == [
        f"{project.path}/gold/answers.yaml: not read: a character device (a link to "
        "/dev/zero), not a regular file"
    ]


def test_a_folder_named_like_a_case_file_holds_case_files(project: pytest.Pytester) -> None:
    """A folder named ``x.yaml`` is a folder: the case files in it load, and the manifest
    hashes files only (it was hashed as a file: "raw runs could not be written")."""
    folder = project.path / "cases" / "x.yaml"
    folder.mkdir()
    (folder / "more.yaml").write_text(
        '- {id: M01, category: semantic, prompt_en: "Pressure?", required_evidence: []}\n'
    )
    result = project.runpytest("--ragv2-layer=A", *RUN_ID)
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    result.assert_outcomes(passed=8, xfailed=4)
    manifest = (project.path / "raw-runs" / "testrun" / "manifest.json").read_text()
    assert "cases/x.yaml/more.yaml" in manifest


# --- the allow-list and the configuration: usage errors ----------------------------------


@pytest.mark.parametrize(
    ("make", "message"),
    [pytest.param(make, message, id=kind) for kind, make, message in NOT_READ[:2]],
)
def test_an_allowlist_that_is_no_regular_file_stops_the_session_in_one_line(
    project: pytest.Pytester, make: Callable[[Path], None], message: str
) -> None:
    allowlist = project.path / "gold" / "allowlist.yaml"
    allowlist.unlink()
    make(allowlist)
    result = project.runpytest_subprocess("--ragv2-layer=A", *RUN_ID, timeout=60)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    [line] = [line for line in result.stderr.lines if line.strip()]
    assert line == (
        f"ERROR: {allowlist}: not read: {message}"
        + (", not a regular file" if "device" in message else "")
        + " (no leak can be checked without a valid allow-list)"
    )
    assert not (project.path / "raw-runs").exists()  # stopped before anything was written


def test_an_invalid_allowlist_stops_the_session_as_a_usage_error(
    project: pytest.Pytester,
) -> None:
    """Documented: a session without a valid allow-list cannot check leaks, so it stops
    (it used to run, and fail gold_valid and no_leak)."""
    allowlist = project.path / "gold" / "allowlist.yaml"
    allowlist.write_text("files:\n  - {file_id: x}\n")
    result = project.runpytest("--ragv2-layer=A", *RUN_ID)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert (
        f"{allowlist}:2: files[0].filename: a non-empty string is required (no leak can be "
        "checked without a valid allow-list)"
    ) in result.stderr.str()
    assert not (project.path / "raw-runs").exists()


@pytest.mark.parametrize(
    ("setup", "message"),
    [
        pytest.param(
            lambda root: os.mkfifo(root / "ragv2.yaml"),
            "ragv2.yaml: cannot read configuration: a FIFO (named pipe), not a regular file",
            id="fifo",
        ),
        pytest.param(
            lambda root: (root / "ragv2.yaml").symlink_to("/dev/zero"),
            "ragv2.yaml: cannot read configuration: a character device (a link to /dev/zero)",
            id="dev-zero",
        ),
        pytest.param(
            lambda root: (root / "ragv2.yaml").write_bytes(b"layer: A\n# caf\xe9\n"),
            "ragv2.yaml:2: cannot read configuration: not UTF-8 text: byte 0xe9 (invalid "
            "continuation byte); save the file as UTF-8",
            id="not-utf8",
        ),
    ],
)
def test_a_configuration_that_cannot_be_read_is_one_usage_error_line(
    project: pytest.Pytester, setup: Callable[[Path], None], message: str
) -> None:
    setup(project.path)
    result = project.runpytest_subprocess("--ragv2-layer=A", *RUN_ID, timeout=60)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    errors = result.stderr.str()
    assert "Traceback" not in errors + result.stdout.str()
    [line] = [line for line in result.stderr.lines if line.strip()]
    assert line.startswith("ERROR: ")
    assert message in line


# --- what selects nothing is said, not run: usage errors ---------------------------------


@pytest.mark.parametrize(
    ("args", "extra", "message"),
    [
        (
            ["--ragv2-lang=zz"],
            "",
            "--ragv2-lang=zz: no case has a prompt in 'zz' (the cases' languages: de, en)",
        ),
        (
            ["--ragv2-lang=EN"],
            "",
            "--ragv2-lang=EN: no case has a prompt in 'EN' (did you mean 'en'?)",
        ),
        (
            ["--ragv2-lang="],
            "",
            "--ragv2-lang=: names nothing; name at least one, or leave the option out",
        ),
        (
            ["--ragv2-systems=,"],
            "",
            "--ragv2-systems=,: names nothing; name at least one, or leave the option out",
        ),
        (
            ["--ragv2-split="],
            "",
            "--ragv2-split=: names nothing; name at least one, or leave the option out",
        ),
        (
            [],
            'languages = ["en", "zz"]',
            "pyproject.toml:5: languages: no case has a prompt in 'zz' (the cases' languages: "
            "de, en)",
        ),
        ([], "languages = []", "pyproject.toml:5: languages: List should have at least 1 item"),
        (
            [],
            'cases = "cases/development.yaml"',
            "pyproject.toml:5: cases: {root}/cases/development.yaml is a regular file, not a "
            "folder",
        ),
        (
            [],
            'cases = "nowhere"',
            "pyproject.toml:5: cases: {root}/nowhere: no such folder (the folder of the case "
            "files)",
        ),
        (
            [],
            "repetitions = 1e9",
            "pyproject.toml:5: repetitions: Input should be a valid integer (got 1000000000.0)",
        ),
        (
            ["--ragv2-reps=1001"],
            "",
            "--ragv2-reps: repetitions: Input should be less than or equal to 1000 (got 1001)",
        ),
    ],
    ids=[
        "lang-zz",
        "lang-EN",
        "lang-empty",
        "systems-empty",
        "split-empty",
        "languages-zz",
        "languages-empty",
        "cases-a-file",
        "cases-nothing",
        "repetitions-1e9",
        "reps-1001",
    ],
)
def test_a_selection_that_selects_nothing_or_too_much_is_a_usage_error(
    project: pytest.Pytester, args: list[str], extra: str, message: str
) -> None:
    """Each of these used to end in "no tests ran" (exit status 5) with no reason, run
    every language, or build items until memory ran out."""
    from tests.conftest import pyproject

    (project.path / "pyproject.toml").write_text(pyproject(extra=extra))
    result = project.runpytest("--ragv2-layer=A", *args, *RUN_ID)
    assert result.ret == pytest.ExitCode.USAGE_ERROR, result.stdout.str()
    assert message.format(root=project.path) in result.stderr.str()
    assert not (project.path / "raw-runs").exists()


def test_a_language_some_case_has_is_selected(project: pytest.Pytester) -> None:
    result = project.runpytest("--ragv2-layer=A", "--ragv2-lang=de", "--collect-only", "-q")
    names = [line for line in result.outlines if "::" in line]
    assert names
    assert all("-de-" in name for name in names)


def test_a_layer_option_naming_nothing_is_a_usage_error(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--ragv2-layer=")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "--ragv2-layer=: names nothing" in result.stderr.str()
