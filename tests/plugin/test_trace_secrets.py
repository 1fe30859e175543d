"""No configured secret in anything pytest itself prints or writes, whatever ``-l`` and
``--full-trace`` show: failures, Ctrl-C, internal errors, collection errors — serial and
under xdist, on screen, in JUnit XML, in pytest-html, in raw runs and reports."""

from __future__ import annotations

import base64
import os
import re
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator

import pytest

from pytest_ragv2.plugin.trace_secrets import (
    TraceScrubber,
    configured_secrets,
    scrub_representation,
    trace_forms,
)
from pytest_ragv2.systems.secret_policy import REDACTED, scrub_text, secret_values
from tests.artifacts import artifact_text
from tests.conftest import pyproject
from tests.scripted_server import Reply, Seen, Server, serve

LONG = "tok-9f1c2e7d4b8a6035e1d7c9b2a4f60e8d3c5b7a91"  # a bearer token of 44 characters
SHORT = "k3y9x"  # shorter than the scrubber's "anywhere" length: matched as a word
ITEMS = [{"file_id": "datasheet", "filename": "datasheet.pdf", "page": 2, "text": "16 bar"}]
SEEN_EXIT = """
import httpx

_send = httpx.HTTPTransport.handle_request


def _exiting(self, request):
    # an exception no adapter catches, raised while the token is in the frames' locals
    raise SystemExit("transport gone")


httpx.HTTPTransport.handle_request = _exiting
"""


def leaks(text: str, token: str) -> bool:
    """Whether ``text`` shows ``token``: a long one by any 8 characters of it (a fragment
    pytest's shortened repr left), a short one as a word."""
    if len(token) < 8:
        return re.search(rf"(?<![0-9A-Za-z]){re.escape(token)}(?![0-9A-Za-z])", text) is not None
    return any(token[start : start + 8] in text for start in range(len(token) - 7))


# --------------------------------------------------------------------------- unit


def test_configured_secrets_are_every_env_value_and_url_credential() -> None:
    systems = {
        "v1": {
            "retrieval": {"url": "https://u:pw-Zq81x@rag.example/q", "jwt_secret_env": "JWT"},
            "chat": {
                "headers_env": {"Authorization": "AUTH", "X-Unset": "UNSET"},
                "env_pass": ["OPENAI_API_KEY", "CODEX_HOME", "HOME", "PATH", "DEBUG", "PORT"],
                "argv": ["fetch", "--from", "https://tok3n-in-argv@mirror.example/x"],
            },
        }
    }
    environ = {
        "JWT": "jwt-secret",
        "AUTH": "Bearer x",
        "OPENAI_API_KEY": "sk-1",
        "CODEX_HOME": "/srv/codex-home",
        "HOME": "/home/me",
        "PATH": "/usr/bin",
        "DEBUG": "true",
        "PORT": "8080",
    }
    found = configured_secrets(systems, environ)
    basic = base64.b64encode(b"u:pw-Zq81x").decode()
    token_basic = base64.b64encode(b"tok3n-in-argv:").decode()
    # every env_pass value but PATH, HOME, LANG and plain settings (a switch, a small
    # number); a URL's user name and password, and the Basic token made of them, wherever
    # the URL is written
    assert sorted(found) == sorted(
        [
            "jwt-secret",
            "Bearer x",
            "sk-1",
            "/srv/codex-home",
            "u",
            "pw-Zq81x",
            basic,
            "tok3n-in-argv",
            token_basic,
        ]
    )


def test_a_secret_an_adapter_used_is_scrubbed_though_no_configuration_names_it(
    pytestconfig: pytest.Config,
) -> None:
    minted = "eyJhbGciOiJIUzI1NiJ9.signed-at-run-time.c2lnbmF0dXJl"  # a JWT made per session
    scrubber = TraceScrubber(pytestconfig, configured=[])
    report = pytest.TestReport(
        "case.yaml::C01", ("case.yaml", 0, "C01"), {}, "failed", f"sent Bearer {minted}", "call"
    )
    report.sections.append(("Captured log call", f"token {minted} refused"))
    secret_values([f"Bearer {minted}"])  # what every HTTP call of an adapter does
    scrubber.scrub_report(report)
    assert report.longrepr == f"sent {REDACTED}"
    assert report.sections == [("Captured log call", f"token {REDACTED} refused")]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            f"headers = {{'Authorization': 'Bearer {LONG}'}}",
            f"headers = {{'Authorization': {REDACTED}}}",
        ),
        # pytest's saferepr keeps a long repr's start and end around "..."
        (
            f"secrets = ['Bearer {LONG[:20]}...{LONG[-9:]}']",
            f"secrets = [{REDACTED}...{REDACTED}]",
        ),
        (f"token = '{SHORT}'", f"token = {REDACTED}"),
        (f"{SHORT}x and a{SHORT} stay", f"{SHORT}x and a{SHORT} stay"),
        ("an innocent ... line", "an innocent ... line"),
    ],
)
def test_a_traceback_line_loses_every_form_of_a_secret(text: str, expected: str) -> None:
    assert scrub_text(text, trace_forms([f"Bearer {LONG}", SHORT])) == expected


def _raise_with_secrets_in_locals() -> None:
    headers = {"Content-Type": "application/json", "Authorization": f"Bearer {LONG}"}
    secrets = [f"Bearer {LONG}", LONG, f"Bearer%20{LONG}"] * 3
    token = SHORT

    def send(headers: dict[str, str], token: str) -> None:
        raise RuntimeError(f"refused {token}")

    try:
        send(headers, token)
    except RuntimeError as exc:
        raise ValueError(f"{len(secrets)} tries") from exc


@pytest.mark.parametrize("truncate", [True, False], ids=["-l", "-l -vv"])
def test_a_representation_with_locals_and_arguments_is_scrubbed(truncate: bool) -> None:
    with pytest.raises(ValueError, match="9 tries") as raised:
        _raise_with_secrets_in_locals()
    representation = raised.getrepr(
        showlocals=True, funcargs=True, style="long", truncate_locals=truncate
    )
    assert leaks(str(representation), LONG)
    assert leaks(str(representation), SHORT)
    scrubbed = scrub_representation(representation, trace_forms([f"Bearer {LONG}", SHORT]))
    shown = str(scrubbed)
    assert not leaks(shown, LONG)
    assert not leaks(shown, SHORT)
    assert "ValueError: 9 tries" in shown
    assert "RuntimeError: refused <redacted>" in shown
    assert scrubbed.reprcrash is not None  # the short summary still names the crash


# --------------------------------------------------------------------------- sessions


@pytest.fixture
def server() -> Iterator[Server]:
    with serve() as running:
        running.answer_path("/search", Reply(body=ITEMS))
        yield running


def _secret_project(project: pytest.Pytester, server: Server, token: str) -> dict[str, str]:
    """v2 becomes an http-json system on ``server`` whose Authorization header comes from
    RAG_TOKEN; returns the environment a session needs."""
    system = (
        f'retrieval = {{adapter = "http-json", url = "{server.url}/search", '
        'headers_env = {Authorization = "RAG_TOKEN"}, retry = {attempts = 1}}'
    )
    text = pyproject().replace(
        'retrieval = {adapter = "python", callable = "ragsystems:good"}', system
    )
    (project.path / "pyproject.toml").write_text(text)
    return {**os.environ, "RAG_TOKEN": f"Bearer {token}"}


def _everything_written(project: pytest.Pytester, out: str, err: str) -> list[tuple[str, str]]:
    texts = [("stdout", out), ("stderr", err)]
    for folder in ("raw-runs", "reports", "out"):
        for path in sorted((project.path / folder).rglob("*")):
            text_file = path.suffix in {".json", ".jsonl", ".gz", ".md", ".html", ".xml", ""}
            if path.is_file() and text_file:
                texts.append((str(path.relative_to(project.path)), artifact_text(path)))
    return texts


def _assert_no_leak(texts: list[tuple[str, str]], token: str) -> None:
    for where, text in texts:
        assert not leaks(text, token), f"{token!r} in {where}"


def _run(project: pytest.Pytester, env: dict[str, str], *args: str) -> tuple[int, str, str]:
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--ragv2-layer=A", "--ragv2-run-id=t", *args],
        cwd=project.path,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    return done.returncode, done.stdout, done.stderr


# pytest in a process that obeys Ctrl-C whatever it inherited: a test run started in the
# background by a shell without job control (``cmd &`` in a script, ``nohup``) ignores
# SIGINT, and so would every process it starts
PYTEST_OBEYING_CTRL_C = (
    "import signal, sys; signal.signal(signal.SIGINT, signal.default_int_handler); "
    "import pytest; sys.exit(pytest.console_main())"
)
WORKERS = pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["serial", "xdist"])
TOKENS = pytest.mark.parametrize("token", [LONG, SHORT], ids=["long", "short"])
OUTPUTS = ("-l", "--full-trace", "--junitxml=out/junit.xml", "--html=out/pytest-html.html")


@WORKERS
@TOKENS
def test_a_failure_with_the_token_in_its_frames_shows_no_token(
    project: pytest.Pytester, server: Server, workers: list[str], token: str
) -> None:
    env = _secret_project(project, server, token)
    project.makeconftest(SEEN_EXIT)
    code, out, err = _run(project, env, *workers, *OUTPUTS)
    assert code == pytest.ExitCode.TESTS_FAILED, out + err
    assert "SystemExit: transport gone" in out  # the failures are shown, locals and all
    assert "headers = " in out or "headers=" in out
    assert REDACTED in out
    junit = (project.path / "out" / "junit.xml").read_text("utf-8")
    assert "transport gone" in junit
    _assert_no_leak(_everything_written(project, out, err), token)


def _interrupting(pid: Callable[[], int], group: bool) -> Callable[[Seen], Reply]:
    """The first request interrupts the session (Ctrl-C: to its process group under xdist)
    while the request waits for its answer."""
    calls: list[Seen] = []

    def respond(seen: Seen) -> Reply:
        calls.append(seen)
        if len(calls) == 1:
            if group:
                os.killpg(pid(), signal.SIGINT)
            else:
                os.kill(pid(), signal.SIGINT)
            return Reply(body=ITEMS, delay_s=3.0)
        return Reply(body=ITEMS)

    return respond


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
@WORKERS
def test_ctrl_c_while_the_token_is_in_the_frames_shows_no_token(
    project: pytest.Pytester, server: Server, workers: list[str]
) -> None:
    env = _secret_project(project, server, LONG)
    session: list[subprocess.Popen[str]] = []
    server.respond_path("/search", _interrupting(lambda: session[0].pid, bool(workers)))
    session.append(
        subprocess.Popen(
            [
                *(sys.executable, "-c", PYTEST_OBEYING_CTRL_C, "--ragv2-layer=A"),
                "--ragv2-run-id=t",
                *workers,
                *OUTPUTS,
            ],
            cwd=project.path,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
    )
    out, err = session[0].communicate(timeout=120)
    assert session[0].returncode == pytest.ExitCode.INTERRUPTED, out + err
    assert "KeyboardInterrupt" in out + err
    _assert_no_leak(_everything_written(project, out, err), LONG)


def test_an_internal_error_with_the_token_in_its_frames_shows_no_token(
    project: pytest.Pytester, server: Server
) -> None:
    env = _secret_project(project, server, LONG)
    project.makeconftest(
        """
        import os


        def pytest_collection_finish(session):
            token = os.environ["RAG_TOKEN"]
            raise RuntimeError("hook broke")
        """
    )
    code, out, err = _run(project, env, "-l", "--full-trace")
    assert code == pytest.ExitCode.INTERNAL_ERROR, out + err
    assert "INTERNALERROR" in out + err
    assert re.search(r"token +=", out + err)  # the locals are shown
    _assert_no_leak(_everything_written(project, out, err), LONG)


def test_a_collection_error_with_the_token_in_its_frames_shows_no_token(
    project: pytest.Pytester, server: Server
) -> None:
    env = _secret_project(project, server, LONG)
    project.makepyfile(
        test_broken="""
        import os


        def _configure():
            token = os.environ["RAG_TOKEN"]
            raise RuntimeError("module broke")


        _configure()
        """
    )
    code, out, err = _run(
        project, env, "-l", "--tb=long", "cases", "test_broken.py", "--junitxml=out/j.xml"
    )
    assert code == pytest.ExitCode.INTERRUPTED, out + err  # "1 error during collection"
    assert "module broke" in out
    assert re.search(r"token +=", out)  # the locals are shown
    _assert_no_leak(_everything_written(project, out, err), LONG)


def test_the_secret_is_really_in_an_unscrubbed_traceback(
    project: pytest.Pytester, server: Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The sessions above would show the token without the scrubber (they prove something)."""
    env = _secret_project(project, server, LONG)
    project.makeconftest(SEEN_EXIT)
    (project.path / "unscrubbed.py").write_text(
        "import pytest_ragv2.plugin.trace_secrets as t\nt.register = lambda config, systems: None\n"
    )
    code, out, err = _run(project, env, "-p", "unscrubbed", "-l")
    assert code == pytest.ExitCode.TESTS_FAILED, out + err
    assert leaks(out, LONG)


def test_raw_runs_record_the_header_name_not_its_value(
    project: pytest.Pytester, server: Server
) -> None:
    env = _secret_project(project, server, LONG)
    code, out, err = _run(project, env)
    assert code in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED), out + err
    assert server.seen
    assert server.seen[0].headers["authorization"] == f"Bearer {LONG}"
    raw = "".join(text for where, text in _everything_written(project, out, err))
    assert "Authorization" in raw
    _assert_no_leak(_everything_written(project, out, err), LONG)


def test_remembered_secrets_stay_the_configured_values_however_often_scrubbed() -> None:
    from pytest_ragv2.systems import secrets as secret_registry
    from pytest_ragv2.systems.secret_policy import redact_url, url_secrets

    secret_values(["tok/en+with=signs"])  # percent-encodes to a different form
    before = secret_registry.remembered()
    for _ in range(30):  # every report of a session scrubs with what is remembered
        trace_forms(secret_registry.remembered())
    assert secret_registry.remembered() == before
    assert not any("%25" in value for value in before)  # no encoding of an encoding
    redacted = redact_url("https://u:hunter2hunter2@host/x?code=c0de1234")
    assert url_secrets(redacted) == ()  # the marker is no secret
    assert redact_url(redacted) == redacted
