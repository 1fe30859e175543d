"""Credentials carried by a configured URL (userinfo, ``?code=``) and short secrets never
reach an artifact or a line on screen."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_ragv2.systems.base import REDACTED, redact_url, scrub, secret_values, url_secrets
from tests.conftest import pyproject

PASSWORD = "pw-Zq81x"
CODE = "c0de/Secret+value=="


def test_a_urls_credentials_are_found_and_redacted() -> None:
    url = f"https://svc:{PASSWORD}@rag.example/api?code={CODE.replace('+', '%2B')}&lang=en&k=5"
    # decoded, and as written in the URL (a server may echo either)
    assert url_secrets(url) == (PASSWORD, CODE, CODE.replace("+", "%2B"))
    shown = redact_url(url)
    assert PASSWORD not in shown
    assert "c0de" not in shown
    assert "lang=en&k=5" in shown  # other parameters are no secret
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
        *(Path(path).read_text(encoding="utf-8") for path in written),
    ]:
        assert PASSWORD not in text_of
        assert "c0de" not in text_of
    manifest = (project.path / "raw-runs" / "t" / "manifest.json").read_text(encoding="utf-8")
    assert f"svc:{REDACTED}@127.0.0.1:9/rag/?code=" in manifest
