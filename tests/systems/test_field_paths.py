"""A configured field path that never resolves on a system's first answer is said, once."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest

from pytest_ragv2.systems.http_json import HttpJsonFields, unresolved_paths
from tests.conftest import pyproject
from tests.scripted_server import Reply, Server, serve

ITEMS = [
    {"text": "max 16 bar", "file_id": "datasheet", "page_number": 2, "score": 0.9},
    {"text": "x", "file_id": "manual", "score": 0.5},
]
MESSAGE = (
    "system v2: fields.page 'pg' finds nothing in any item of the first answer "
    "(their keys: file_id, page_number, score, text); did you mean 'page_number'?"
)


def test_only_configured_paths_that_resolve_nowhere_are_named() -> None:
    fields = HttpJsonFields(page="pg", section="meta.section", score="score")
    assert unresolved_paths(ITEMS, fields) == [
        "fields.page 'pg' finds nothing in any item of the first answer (their keys: file_id, "
        "page_number, score, text); did you mean 'page_number'?",
        "fields.section 'meta.section' finds nothing in any item of the first answer (their "
        "keys: file_id, page_number, score, text)",
    ]
    # a path found in one item is fine; defaults nobody configured are not checked
    assert unresolved_paths(ITEMS, HttpJsonFields(page="page_number")) == []
    assert unresolved_paths([{"text": "t", "filename": "a.pdf"}], HttpJsonFields()) == []


def test_a_nested_field_absent_from_these_items_is_no_mistake_but_a_near_miss_is() -> None:
    nested = [
        {"content": "a", "doc": {"file_id": "manual", "section": "3 Safety"}},
        {"content": "b", "doc": {"file_id": "parts", "page_number": 4}},
    ]
    docx_only = nested[:1]  # one answer of sections: no item has a page, rightly
    assert unresolved_paths(docx_only, HttpJsonFields(page="doc.page")) == []
    assert unresolved_paths(nested, HttpJsonFields(page="doc.pg")) == [
        "fields.page 'doc.pg' finds nothing in any item of the first answer (keys under "
        "'doc': file_id, page_number, section); did you mean 'doc.page_number'?"
    ]
    assert unresolved_paths(nested, HttpJsonFields(section="meta.section")) == [
        "fields.section 'meta.section' finds nothing in any item of the first answer (their "
        "keys: content, doc)"
    ]


@pytest.fixture
def server() -> Iterator[Server]:
    with serve() as running:
        running.responder = lambda seen: Reply(body=ITEMS)
        yield running


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_a_session_warns_once_per_system(
    project: pytest.Pytester, server: Server, workers: list[str]
) -> None:
    text = pyproject().replace(
        'retrieval = {adapter = "python", callable = "ragsystems:good"}',
        f'retrieval = {{adapter = "http-json", url = "{server.url}/search", '
        'fields = {page = "pg"}}',
    )
    (project.path / "pyproject.toml").write_text(text)
    result = project.runpytest("--ragv2-layer=A", "--ragv2-run-id=f", *workers)
    assert result.ret in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED)
    assert len(server.seen) > 2  # several runs answered: the check still said it once
    output = result.stdout.str()
    assert output.count(MESSAGE) == 1, output
    assert "FieldPathWarning" in output
    # located at the configuration's line, not at the plugin's source
    assert re.search(r"pyproject\.toml:\d+: FieldPathWarning", output), output
    assert "http_json.py" not in output


def test_no_warning_when_the_paths_resolve(project: pytest.Pytester, server: Server) -> None:
    text = pyproject().replace(
        'retrieval = {adapter = "python", callable = "ragsystems:good"}',
        f'retrieval = {{adapter = "http-json", url = "{server.url}/search", '
        'fields = {page = "page_number"}}',
    )
    (project.path / "pyproject.toml").write_text(text)
    result = project.runpytest("--ragv2-layer=A", "--ragv2-run-id=f")
    assert result.ret in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED)
    assert "FieldPathWarning" not in result.stdout.str()


@pytest.mark.parametrize(
    ("value", "read"),
    [(7, 7), (7.0, 7), ("7", 7), (" 12 ", 12), ("-2", -2), (-2, -2), (True, None), (7.5, None),
     ("7a", None), ("", None), (None, None)],
)  # fmt: skip
def test_every_json_adapter_reads_an_integer_alike(value: object, read: int | None) -> None:
    """One reader for the retrieval and the chat adapter: a page written as a string, signed
    or not, is the same number in both."""
    from pytest_ragv2.systems.field_values import as_int, int_at
    from pytest_ragv2.systems.http_json import map_item
    from pytest_ragv2.systems.http_json_chat import HttpJsonCitationFields, map_citation

    assert as_int(value) == read
    assert int_at({"meta": {"page": value}}, "meta.page") == read
    item = map_item(
        1, {"text": "t", "file_id": "f", "page": value}, HttpJsonFields(page="page", page_base=1)
    )
    citation = map_citation(1, {"file_id": "f", "page": value}, HttpJsonCitationFields(page="page"))
    assert item.page == citation.page == read
