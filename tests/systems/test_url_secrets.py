"""One secret policy for every channel: a credential carried by a configured URL (its user
name and password, ``?code=``, ``?jwt=``, ``?pass=``), a header or query value read from the
environment, a value ``env_pass`` hands a command, and the forms each takes (percent-encoded,
JSON-escaped, base64, ``Authorization: Basic``) never reach an artifact, a log record or a
line on screen; short secrets are replaced only where they stand alone."""

from __future__ import annotations

import base64
import html
import json
import logging
import os
import re
import subprocess
import sys
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from filelock import FileLock

from pytest_ragv2.systems.secret_policy import (
    REDACTED,
    credential_name,
    redact_url,
    scrub,
    secret_values,
    url_secrets,
)
from tests.artifacts import artifact_text
from tests.conftest import pyproject
from tests.fault_server import Reply as FaultReply
from tests.fault_server import Request, serve

PASSWORD = "pw-Zq81x"
CODE = "c0de/Secret+value=="


def test_a_urls_credentials_are_found_and_redacted() -> None:
    url = f"https://svc:{PASSWORD}@rag.example/api?code={CODE.replace('+', '%2B')}&lang=en&k=5"
    # the user name, the password, the Basic token an HTTP client makes of them; the code
    # decoded and as written in the URL (a server may echo either)
    basic = base64.b64encode(f"svc:{PASSWORD}".encode()).decode()
    assert url_secrets(url) == ("svc", PASSWORD, basic, CODE, CODE.replace("+", "%2B"))
    shown = redact_url(url)
    assert shown == f"https://{REDACTED}:{REDACTED}@rag.example/api?code={REDACTED}&lang=en&k=5"
    assert redact_url("http://127.0.0.1:8000/query") == "http://127.0.0.1:8000/query"


@pytest.mark.parametrize(
    ("secret", "text", "expected"),
    [
        ("k3y9", "token k3y9 rejected", f"token {REDACTED} rejected"),  # a short one, a word
        ("k3y9", "ak3y99 is a part number", "ak3y99 is a part number"),  # inside a word: kept
        ("x1", "x1", REDACTED),  # under four characters: only the whole string
        ("x1", "x1 and 2031", "x1 and 2031"),
        ("a-long-secret-value", "echo:a-long-secret-value!", f"echo:{REDACTED}!"),
    ],
)
def test_secrets_of_every_length_are_scrubbed_without_destroying_the_record(
    secret: str, text: str, expected: str
) -> None:
    assert scrub(text, secret_values([secret])) == expected


def test_encoded_forms_of_a_secret_are_scrubbed() -> None:
    secret = 'p@ss w"rd/+1'
    secrets = secret_values([f"Bearer {secret}"])
    assert scrub("q=p%40ss%20w%22rd%2F%2B1", secrets) == f"q={REDACTED}"
    assert scrub('{"echo": "p@ss w\\"rd/+1"}', secrets) == f'{{"echo": "{REDACTED}"}}'


@pytest.mark.parametrize(
    ("name", "credential"),
    [
        ("pass", True),
        ("db_pass", True),
        ("passPhrase", True),
        ("passphrase", True),
        ("jwt", True),
        ("id_jwt", True),
        ("password", True),
        ("auth", True),
        ("session", True),
        ("key", True),
        ("api_key", True),
        ("apiKey", True),
        ("X-Amz-Signature", True),
        ("accessToken", True),
        ("LOCAL_LLM_KEY", True),
        ("passage", False),  # a word that starts like one is not one
        ("bypass", False),
        ("compass", False),
        ("keyword", False),
        ("monkey", False),
        ("authors", False),
        ("lang", False),
        ("k", False),
    ],
)
def test_a_parameter_is_a_credential_by_the_words_of_its_name(name: str, credential: bool) -> None:
    assert credential_name(name) is credential


def test_a_token_given_as_a_urls_user_name_is_a_secret_with_its_basic_form() -> None:
    url = "http://ghp_T0ken5ecret@git.example/api?jwt=eyJ.x.y&pass=p%40ss&keyword=pump"
    basic = base64.b64encode(b"ghp_T0ken5ecret:").decode()
    assert url_secrets(url) == ("ghp_T0ken5ecret", basic, "eyJ.x.y", "p@ss", "p%40ss")
    assert redact_url(url) == (
        f"http://{REDACTED}@git.example/api?jwt={REDACTED}&pass={REDACTED}&keyword=pump"
    )
    # what httpx sends for it, echoed by a server, is scrubbed
    echoed = f"Authorization: Basic {basic}"
    assert scrub(echoed, secret_values(url_secrets(url))) == f"Authorization: Basic {REDACTED}"


def test_every_form_of_a_secret_is_scrubbed_and_short_ones_only_as_words() -> None:
    secret = 'k3y/"quoted"+9f'
    secrets = secret_values([secret, "Basic " + base64.b64encode(b"user:pw-Zq81x").decode()])
    for form in (
        secret,
        urllib.parse.quote(secret, safe=""),
        json.dumps(secret)[1:-1],
        base64.b64encode(secret.encode()).decode(),  # padded: the "=" stays behind
        "user:pw-Zq81x",  # a Basic header's decoded credential, and its password
    ):
        assert form not in str(scrub(f"echo {form} end", secrets))
    # a 5-character secret and its base64 form (7 characters without the padding) are
    # short: each replaced as a whole word only
    short = secret_values(["Zq7x9"])
    assert scrub("Zq7x9 and aZq7x9b", short) == f"{REDACTED} and aZq7x9b"
    assert scrub(base64.b64encode(b"Zq7x9").decode(), short) == f"{REDACTED}="


def test_a_log_record_loses_every_secret_before_any_handler_sees_it() -> None:
    from pytest_ragv2.plugin.log_secrets import install

    token = "ghp_T0ken5ecret"
    seen: list[str] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            seen.append(self.format(record))

    handler = Keep()
    handler.setFormatter(logging.Formatter("%(message)s"))
    logger = logging.getLogger("httpcore.http11")  # a child logger: no filter of its own
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    before = logging.getLogRecordFactory()
    uninstall = install(lambda: secret_values([token], remember=False))
    try:
        url = httpx.URL(f"http://{token}@h.example/x")
        logger.info("HTTP Request: %s %s", "GET", url)
        logger.debug("headers=%r", [(b"X-Echo", token.encode())])
        logger.info("plain %s", "no secret here")
        try:
            raise RuntimeError(f"refused {token}")
        except RuntimeError:
            logger.exception("failed")
    finally:
        uninstall()
        logger.removeHandler(handler)
        logger.setLevel(logging.NOTSET)
    assert seen[0] == f"HTTP Request: GET http://{REDACTED}@h.example/x"
    assert seen[1] == f"headers=[(b'X-Echo', b'{REDACTED}')]"
    assert seen[2] == "plain no secret here"
    assert token not in "\n".join(seen)
    assert f"RuntimeError: refused {REDACTED}" in seen[3]
    assert logging.getLogRecordFactory() is before  # the session's end puts it back


def test_a_credential_in_a_configured_url_reaches_no_artifact(project: pytest.Pytester) -> None:
    url = f"http://svc:{PASSWORD}@127.0.0.1:9/rag/?code={CODE.replace('+', '%2B')}"
    text = pyproject().replace(
        'retrieval = {adapter = "python", callable = "ragsystems:good"}',
        f'retrieval = {{adapter = "rag-api", url = "{url}", timeout_s = 2, '
        "retry = {attempts = 1}}",
    )
    (project.path / "pyproject.toml").write_text(text)
    result = project.runpytest("--ragv2-layer=A", "--ragv2-run-id=t", "--junitxml=junit.xml")
    assert result.ret == pytest.ExitCode.TESTS_FAILED  # the system is unreachable: errors
    written = [
        path
        for folder in ("raw-runs", "reports")
        for path in (project.path / folder).rglob("*")
        if path.is_file()
    ] + [project.path / "junit.xml"]
    assert any(path.name == "manifest.json" for path in written)
    for text_of in [
        result.stdout.str(),
        result.stderr.str(),
        *(artifact_text(Path(path)) for path in written),
    ]:
        assert PASSWORD not in text_of
        assert "c0de" not in text_of
    manifest = (project.path / "raw-runs" / "t" / "manifest.json").read_text(encoding="utf-8")
    assert f"{REDACTED}:{REDACTED}@127.0.0.1:9/rag/?code={REDACTED}" in manifest


# ----------------------------------------------------------------- planted, every channel
#
# One project plants every form a credential takes in a configured system, and three real
# sessions (log_cli at INFO; at DEBUG; -n 2 with DEBUG logs captured) with -l tracebacks,
# JUnit XML (logs included), pytest-html and a DEBUG log file run it against a loopback
# server that echoes every header and the query string (in the body, in response headers,
# in error bodies), and a command system that prints the value env_pass hands it. A
# conftest makes one case's HTTP call and command raise while the credentials are in the
# frames' locals. Every file written and every line printed is then searched for every
# form of every planted value.

USER_TOKEN = "ghpUsr5e1f9a3c7b2d4068"  # a token given as a URL's user name
SVC_USER = "svcAcct0d2b4f6e8a"  # a URL's user name beside a password
URL_PASSWORD = "pw/Plt+9c2b:7e41"  # percent-encoded in the URL
QUERY_A = {  # the http-json system's URL
    "api_key": "akQ5f0e2d9a7c3b",
    "jwt": "eyJpbGFudGVk.jwtB7c3b1a9.sigZ8d6e",
    "pass": 'p"ss/Pl4nt+e1d0',  # a quote: its JSON-escaped form differs
    "sig": "sgW8b6a4c2e0f1",
    "passphrase": "phrV3a9f5d7b1c",
}
QUERY_B = {  # the http-json-chat system's URL, beside the user name and password
    "session": "ssnM2e7c5a1b9d",
    "auth": "authN6d4f8e0c2a",
    "key": "keyJ1b9d3f7a5e",
    "password": "qpwR0f8a6c4e2b",
}
PUBLIC_QUERY = "lang=en&keyword=pump&bypass=1"  # named like no credential: kept
HEADER_KEY = "hkT9e7c5a3b1d0f"  # headers_env, long
HEADER_SHORT = "Zq7x9"  # headers_env, 5 characters: matched as a word
JWT_SIGNING = "jwsK4c2a0e8d6b1f"  # rag-api's jwt_secret_env
LLM_KEY = 'llmP"7f5d"/3b+1c9e'  # env_pass, printed by the command system
LLM_SHORT = "Kx4w2"  # env_pass, 5 characters
PLANTED_ENV = {
    "PLANT_HEADER_KEY": HEADER_KEY,
    "PLANT_HEADER_SHORT": HEADER_SHORT,
    "PLANT_JWT_SIGNING": JWT_SIGNING,
    "PLANT_LLM_KEY": LLM_KEY,
    "PLANT_LLM_SHORT": LLM_SHORT,
}
WINDOW = 12  # a piece this long of a secret counts (a shortened repr's fragment)


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode().rstrip("=")


def planted_values() -> list[str]:
    """Every value planted: the configured ones, each query value, the user names."""
    return [
        USER_TOKEN,
        SVC_USER,
        URL_PASSWORD,
        *QUERY_A.values(),
        *QUERY_B.values(),
        *PLANTED_ENV.values(),
    ]


def forms_of(value: str) -> list[str]:
    """What a value may be written as: raw, percent-encoded, JSON-escaped, base64."""
    return list(dict.fromkeys(forms_of_all(value)))


def basic_forms() -> list[str]:
    """The Authorization: Basic credentials httpx builds from the URLs' user info."""
    return [_b64(f"{USER_TOKEN}:"), _b64(f"{SVC_USER}:{URL_PASSWORD}")]


def planted_labels(minted: list[str]) -> dict[str, str]:
    """Each planted form -> what it is ("?jwt= base64"), for a reader of the findings."""
    named = {
        USER_TOKEN: "URL user token",
        SVC_USER: "URL user name",
        URL_PASSWORD: "URL password",
        **{value: f"?{name}=" for name, value in {**QUERY_A, **QUERY_B}.items()},
        HEADER_KEY: "headers_env",
        HEADER_SHORT: "headers_env (short)",
        JWT_SIGNING: "jwt_secret_env",
        LLM_KEY: "env_pass",
        LLM_SHORT: "env_pass (short)",
    }
    kinds = ("raw", "percent", "percent", "percent", "JSON", "base64")
    labels: dict[str, str] = {}
    for value, label in named.items():
        for kind, form in zip(kinds, forms_of_all(value), strict=True):
            labels.setdefault(form, f"{label} {kind}")
    labels.update(dict.fromkeys(basic_forms(), "Basic token"))
    labels.update(dict.fromkeys(minted, "signed JWT"))
    return labels


def forms_of_all(value: str) -> list[str]:
    """``forms_of`` without merging equal forms: one per kind, in ``planted_labels``' order."""
    return [
        value,
        urllib.parse.quote(value, safe=""),
        urllib.parse.quote(value),
        urllib.parse.quote_plus(value),
        json.dumps(value)[1:-1],
        _b64(value),
    ]


def planted_leaks(text: str, minted: list[str]) -> list[str]:
    """Every planted form found in ``text`` (and in its HTML-unescaped reading): a long
    form by any ``WINDOW`` characters of it, a short value as a whole word."""
    found: list[str] = []
    readings = {text, html.unescape(text)}
    long_forms = [form for value in planted_values() if len(value) >= 8 for form in forms_of(value)]
    long_forms += basic_forms() + minted
    for form in dict.fromkeys(long_forms):
        windows = {form[start : start + WINDOW] for start in range(max(1, len(form) - WINDOW + 1))}
        if any(window in reading for window in windows for reading in readings):
            found.append(form)
    for value in (HEADER_SHORT, LLM_SHORT):
        word = re.compile(rf"(?<![0-9A-Za-z]){re.escape(value)}(?![0-9A-Za-z])")
        if any(word.search(reading) for reading in readings):
            found.append(value)
    return found


def _query(values: dict[str, str]) -> str:
    return "&".join(
        f"{name}={urllib.parse.quote(value, safe='')}" for name, value in values.items()
    )


def _echo(request: Request) -> str:
    """What the planted server sends back: every header, the query string as sent and as
    decoded, and the API key base64-encoded."""
    headers = " ; ".join(f"{name}={value}" for name, value in request.headers.items())
    decoded = urllib.parse.unquote_plus(request.query)
    key = _b64(request.headers.get("x-api-key", ""))
    return f"echo {headers} | query {request.query} | decoded {decoded} | key64 {key}"


def planted_route(request: Request) -> FaultReply:
    tag = request.path.split("/")[1]
    if request.path.endswith("/ids"):
        return FaultReply(body=b'["datasheet"]')
    if request.path.endswith("/documents"):
        return FaultReply(body=b"[]")
    echo = _echo(request)
    echoed = {
        "X-Echo-Auth": request.headers.get("authorization", ""),
        "X-Echo-Key": request.headers.get("x-api-key", ""),
        "X-Echo-Query": request.query,
    }
    answer = f"The maximum pressure is 16 bar. {echo}"
    if request.carries("FAIL503"):
        return FaultReply(status=503, body=json.dumps({"detail": echo}).encode(), headers=echoed)
    body: Any
    if tag == "ra":
        metadata = {"file_id": "datasheet", "source": "datasheet.pdf", "page": 1}
        body = [[{"page_content": answer, "metadata": metadata}, 0.1]]
    elif tag == "hj":
        body = {"results": [{"text": answer, "file_id": "datasheet", "filename": "datasheet.pdf"}]}
    else:
        body = {"answer": answer}
    return FaultReply(body=json.dumps(body).encode(), headers=echoed)


PLANTED_COMMAND = r'''
"""A chat system printing Codex JSON lines and the key its environment holds, every way."""
import base64, json, os, sys, urllib.parse

prompt = sys.argv[1]
key, short = os.environ["PLANT_LLM_KEY"], os.environ["PLANT_LLM_SHORT"]
shown = (f"key {key} short {short} quoted {urllib.parse.quote(key, safe='')} "
         f"b64 {base64.b64encode(key.encode()).decode()}")
print(f"starting with {shown}", file=sys.stderr, flush=True)
if "FAIL503" in prompt:
    print(f"Error: the model refused {shown}", file=sys.stderr, flush=True)
    sys.exit(1)


def emit(event):
    print(json.dumps(event), flush=True)


emit({"type": "thread.started", "thread_id": "t-1"})
emit({"type": "item.completed", "item": {"id": "i0", "type": "command_execution",
      "command": "env", "aggregated_output": shown, "exit_code": 0, "status": "completed"}})
print(f"not json: {shown}", flush=True)
emit({"type": "item.completed", "item": {"id": "i1", "type": "agent_message",
      "text": f"The maximum pressure is 16 bar. {shown}"}})
emit({"type": "turn.completed", "usage": {"input_tokens": 1, "output_tokens": 2}})
'''

# an exception no adapter catches while the credentials are in the frames' locals
PLANTED_CONFTEST = """
import httpx
import pytest_ragv2.systems.command as command

_send = httpx.HTTPTransport.handle_request
_run = command._run


def _exploding_send(self, request):
    if b"EXPLODE" in request.content:
        raise SystemExit("transport gone")
    return _send(self, request)


def _exploding_run(argv, cwd, env, bounds):
    if any("EXPLODE" in part for part in argv):
        raise SystemExit("command gone")
    return _run(argv, cwd, env, bounds)


httpx.HTTPTransport.handle_request = _exploding_send
command._run = _exploding_run
"""


def planted_config(base: str) -> str:
    host = base.removeprefix("http://")
    hj = f"http://{USER_TOKEN}@{host}/hj/search?{_query(QUERY_A)}&{PUBLIC_QUERY}"
    userinfo = f"{SVC_USER}:{urllib.parse.quote(URL_PASSWORD, safe='')}"
    hjc = f"http://{userinfo}@{host}/hjc/chat?{_query(QUERY_B)}&{PUBLIC_QUERY}"
    headers = '{"X-Api-Key" = "PLANT_HEADER_KEY", "X-Short" = "PLANT_HEADER_SHORT"}'
    bounds = "timeout_s = 10, retry = {attempts = 1}"
    fields = 'fields = {text = "text", file_id = "file_id", filename = "filename"}'
    argv = json.dumps([sys.executable, "planted_command.py", "{prompt}"])
    return f"""\
[tool.ragv2]
repetitions = 1

[tool.ragv2.systems.v1]
role = "baseline"
retrieval = {{adapter = "http-json", url = "{hj}", items_path = "results", {fields}, \
headers_env = {headers}, {bounds}}}
chat = {{adapter = "http-json-chat", url = "{hjc}", answer_path = "answer", \
body = {{messages = "{{messages}}"}}, headers_env = {headers}, {bounds}}}

[tool.ragv2.systems.v2]
role = "candidate"
retrieval = {{adapter = "rag-api", url = "{base}/ra", jwt_secret_env = "PLANT_JWT_SIGNING", \
headers_env = {headers}, {bounds}}}
chat = {{adapter = "command", argv = {argv}, env_pass = ["PLANT_LLM_KEY", "PLANT_LLM_SHORT"], \
timeout_s = 30}}
"""


def planted_case(name: str, word: str) -> dict[str, Any]:
    return {
        "id": f"P_{name}",
        "category": "technical_table",
        "prompt_en": f"What is the maximum pressure? {word}".strip(),
        "expected_answer": {"required_claims": [{"text": "16 bar", "number": 16, "unit": "bar"}]},
        "required_evidence": [{"file_id": "datasheet", "filename": "datasheet.pdf", "page": 2}],
    }


LOG_CLI = ["-o", "log_cli=true", "-o", "log_cli_level=INFO"]
PLANTED_SESSIONS: dict[str, list[str]] = {
    "log-cli-info": LOG_CLI,
    "log-cli-debug": [*LOG_CLI[:-1], "log_cli_level=DEBUG", "--log-level=DEBUG"],
    "xdist-debug": ["-n", "2", "--log-level=DEBUG", *LOG_CLI[:-1], "log_cli_level=DEBUG"],
}
PLANTED_OUTPUTS = [
    "-l",
    "-rA",
    "--junitxml=out/junit.xml",
    "-o",
    "junit_logging=all",
    "--html=out/pytest-html.html",
    "--self-contained-html",
    "--log-file=out/pytest.log",
    "--log-file-level=DEBUG",
]


@dataclass
class PlantedSession:
    folder: Path
    exit_status: int
    stdout: str
    stderr: str
    authorizations: list[str]  # every Authorization header the server received
    minted: list[str]  # the bearer tokens made at run time (rag-api's JWT)

    def written(self) -> dict[str, str]:
        texts = {"<stdout>": self.stdout, "<stderr>": self.stderr}
        for path in sorted(self.folder.rglob("*")):
            relative = path.relative_to(self.folder).as_posix()
            if path.is_file() and relative.split("/")[0] in ("raw-runs", "reports", "out"):
                texts[relative] = artifact_text(path)
        return texts


def run_planted_session(folder: Path, options: list[str]) -> PlantedSession:
    folder.mkdir(parents=True)
    (folder / "cases").mkdir()
    (folder / "gold").mkdir()
    (folder / "out").mkdir()
    (folder / "gold" / "allowlist.yaml").write_text(
        "files:\n  - {file_id: datasheet, filename: datasheet.pdf}\n"
    )
    cases = [planted_case("ok", ""), planted_case("fail", "FAIL503")]
    cases.append(planted_case("explode", "EXPLODE"))
    (folder / "cases" / "planted.yaml").write_text(json.dumps(cases, indent=1))
    (folder / "planted_command.py").write_text(PLANTED_COMMAND)
    (folder / "conftest.py").write_text(PLANTED_CONFTEST)
    env = {key: value for key, value in os.environ.items() if not key.startswith("PYTEST_")}
    env.update(PLANTED_ENV, COLUMNS="160")
    with serve(planted_route) as server:
        (folder / "pyproject.toml").write_text(planted_config(server.url))
        argv = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:randomly"]
        argv += ["--ragv2-layer=A,B", "--ragv2-run-id=planted", *options, *PLANTED_OUTPUTS]
        done = subprocess.run(
            argv, cwd=folder, env=env, capture_output=True, text=True, timeout=300
        )
        authorizations = [
            request.headers["authorization"]
            for request in server.seen(lambda request: "authorization" in request.headers)
        ]
    minted = sorted(
        {value.removeprefix("Bearer ") for value in authorizations if value.startswith("Bearer ")}
    )
    return PlantedSession(
        folder, done.returncode, done.stdout, done.stderr, sorted(set(authorizations)), minted
    )


@pytest.fixture(scope="session")
def planted(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], PlantedSession]:
    """Each planted session run once for the whole outer run, whichever xdist worker asks
    first (a lock file in the shared base temp folder)."""
    shared = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        shared = shared.parent

    def get(key: str) -> PlantedSession:
        record = shared / f"planted-session-{key}.json"
        with FileLock(str(record) + ".lock"):
            if record.exists():
                data = json.loads(record.read_text(encoding="utf-8"))
                return PlantedSession(**{**data, "folder": Path(data["folder"])})
            session = run_planted_session(shared / f"planted-{key}", PLANTED_SESSIONS[key])
            data = {**session.__dict__, "folder": str(session.folder)}
            record.write_text(json.dumps(data), encoding="utf-8")
            return session

    return get


PLANTED_CHANNELS: dict[str, Callable[[str], bool]] = {
    "terminal": lambda name: name in ("<stdout>", "<stderr>"),
    "manifest.json": lambda name: name.startswith("raw-runs/") and name.endswith("manifest.json"),
    "raw runs": lambda name: name.startswith("raw-runs/") and not name.endswith("manifest.json"),
    "summary.json": lambda name: name.endswith("summary.json"),
    "summary.md": lambda name: name.endswith("summary.md"),
    "report.html": lambda name: name.startswith("reports/") and name.endswith("report.html"),
    "junit": lambda name: name == "out/junit.xml",
    "pytest-html": lambda name: name == "out/pytest-html.html",
    "log file": lambda name: name == "out/pytest.log",
}


@pytest.mark.parametrize("channel", PLANTED_CHANNELS)
@pytest.mark.parametrize("key", PLANTED_SESSIONS)
def test_no_planted_secret_in_any_form_reaches_a_channel(
    planted: Callable[[str], PlantedSession], key: str, channel: str
) -> None:
    session = planted(key)
    texts = {
        name: text for name, text in session.written().items() if PLANTED_CHANNELS[channel](name)
    }
    assert texts, f"the session wrote no {channel}: {session.stdout[-3000:]}"
    found = {name: planted_leaks(text, session.minted) for name, text in texts.items()}
    assert {name: hits for name, hits in found.items() if hits} == {}


@pytest.mark.parametrize("key", PLANTED_SESSIONS)
def test_the_planted_sessions_show_what_the_leak_search_looks_for(
    planted: Callable[[str], PlantedSession], key: str
) -> None:
    """Each channel searched above did carry the material: the searches prove something."""
    session = planted(key)
    assert session.exit_status == pytest.ExitCode.TESTS_FAILED, session.stderr[-3000:]
    shown = session.stdout + session.stderr
    assert "verdict: FAIL" in shown
    assert "SystemExit: transport gone" in shown
    assert "SystemExit: command gone" in shown
    assert re.search(r"\bheaders +=", shown)
    assert re.search(r"\benv +=", shown)
    # the server was sent the URLs' user names as Basic credentials, and a signed JWT
    assert {f"Basic {form}" for form in basic_forms()} <= {
        value.rstrip("=") for value in session.authorizations
    }
    assert session.minted
    written = session.written()
    assert "receive_response_headers.complete" in written["out/pytest.log"]
    if key == "log-cli-info":
        assert "HTTP Request: POST" in session.stdout  # httpx's INFO lines, live
    elif key == "log-cli-debug":
        assert "receive_response_headers.complete" in session.stdout  # httpcore, live
    else:  # the workers' DEBUG records, in the reports' captured logs
        assert "receive_response_headers.complete" in written["out/pytest-html.html"]
        assert "receive_response_headers.complete" in written["out/junit.xml"]
    [manifest] = [text for name, text in written.items() if name.endswith("manifest.json")]
    assert f"{REDACTED}@127.0.0.1" in manifest
    assert PUBLIC_QUERY in manifest
    raw = " ".join(text for name, text in written.items() if name.startswith("raw-runs/"))
    assert "not json: key" in raw
    assert "key64" in raw
    assert REDACTED in raw
    summaries = " ".join(text for name, text in written.items() if name.endswith("summary.json"))
    assert "HTTP 503" in summaries
    assert "exit status 1" in summaries
