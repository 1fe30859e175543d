"""The in-process Python adapter, the adapter configuration and the registry."""

from __future__ import annotations

from typing import Any

import pydantic
import pytest

from pytest_ragv2.systems.config import RetryPolicy
from pytest_ragv2.systems.http_json import HttpJsonRetriever
from pytest_ragv2.systems.outputs import RetrievedItem
from pytest_ragv2.systems.python_callable import PythonRetrieval, PythonRetriever
from pytest_ragv2.systems.rag_api import RagApiRetrieval, RagApiRetriever
from pytest_ragv2.systems.registry import build_retriever, parse_retrieval_config

CALLS: list[tuple[str, int, dict[str, Any]]] = []


def fake_search(query: str, k: int, **options: Any) -> list[Any]:
    CALLS.append((query, k, options))
    return [
        {"text": f"{query} one", "file_id": "f1", "page": 2, "score": 0.9},
        RetrievedItem(rank=2, text="two", filename="b.pdf"),
        {"text": "three", "rank": 3, "row": 4, "table": "Prix"},
    ]


def failing_search(query: str, k: int) -> list[Any]:
    raise RuntimeError(f"index offline for {query!r}")


def not_a_list(query: str, k: int) -> dict[str, str]:
    return {"text": query}


def unknown_keys(query: str, k: int) -> list[dict[str, Any]]:
    return [{"text": "x", "page_number": 3}]


class Searcher:
    @staticmethod
    def search(query: str, k: int) -> list[dict[str, Any]]:
        return [{"text": query}]


def python_retriever(function: str, **options: Any) -> PythonRetriever:
    config = parse_retrieval_config(
        {"adapter": "python", "callable": f"{__name__}:{function}", "options": options}
    )
    assert isinstance(config, PythonRetrieval)
    return PythonRetriever("embedded", config)


def test_python_adapter_calls_the_function_and_maps_dicts_and_items() -> None:
    CALLS.clear()
    retriever = python_retriever("fake_search", index="v2", fuse=True)

    result = retriever.retrieve("prix Pro", 10)

    assert result.ok, result.error
    assert CALLS == [("prix Pro", 10, {"index": "v2", "fuse": True})]
    assert result.items == [
        RetrievedItem(rank=1, text="prix Pro one", file_id="f1", page=2, score=0.9),
        RetrievedItem(rank=2, text="two", filename="b.pdf"),
        RetrievedItem(rank=3, text="three", table="Prix", row=4),
    ]
    (exchange,) = result.exchanges
    assert exchange.request == {
        "callable": f"{__name__}:fake_search",
        "query": "prix Pro",
        "k": 10,
        "options": {"index": "v2", "fuse": True},
    }
    assert exchange.response_body == [item.to_json() for item in result.items]
    assert result.latency_s >= exchange.latency_s >= 0


def test_python_adapter_cuts_to_k() -> None:
    result = python_retriever("fake_search").retrieve("q", 2)

    assert [item.rank for item in result.items] == [1, 2]


def test_python_adapter_records_exceptions_as_adapter_errors() -> None:
    result = python_retriever("failing_search").retrieve("prix", 3)

    assert result.error is not None
    assert result.error.kind == "adapter"
    assert "RuntimeError" in result.error.message
    assert "index offline for 'prix'" in result.error.message
    assert result.items == []


def test_python_adapter_reaches_nested_attributes() -> None:
    result = python_retriever("Searcher.search").retrieve("q", 1)

    assert result.items == [RetrievedItem(rank=1, text="q")]


@pytest.mark.parametrize(
    ("function", "expected"),
    [("not_a_list", "returned dict, not a list"), ("unknown_keys", "unknown keys ['page_number']")],
)
def test_python_adapter_wrong_answers_are_malformed(function: str, expected: str) -> None:
    result = python_retriever(function).retrieve("q", 3)

    assert result.error is not None
    assert result.error.kind == "malformed"
    assert expected in result.error.message


def test_python_adapter_unloadable_callable_is_an_adapter_error_every_time() -> None:
    retriever = python_retriever("no_such_function")

    first, second = retriever.retrieve("q", 3), retriever.retrieve("q", 3)

    for result in (first, second):
        assert result.error is not None
        assert result.error.kind == "adapter"
        assert "no_such_function" in result.error.message
        assert "AttributeError" in result.error.message


def test_python_adapter_module_that_does_not_import() -> None:
    config = parse_retrieval_config(
        {"adapter": "python", "callable": "ragv2_no_such_module.sub:search"}
    )
    result = build_retriever("x", config, file_ids=[]).retrieve("q", 3)

    assert result.error is not None
    assert result.error.kind == "adapter"
    assert "ModuleNotFoundError" in result.error.message


# --- configuration ---------------------------------------------------------------------


def test_config_is_discriminated_on_adapter_with_documented_defaults() -> None:
    config = parse_retrieval_config({"adapter": "rag-api", "url": "http://rag:8000"})

    assert isinstance(config, RagApiRetrieval)
    assert (config.endpoint, config.k, config.file_ids, config.jwt_user_id) == (
        "query_multiple",
        10,
        None,
        "ragv2-eval",
    )
    assert config.retry == RetryPolicy(
        attempts=2, backoff_s=0.25, retry_on=["timeout", "transport", "5xx", "429"]
    )


def test_retry_backoff_is_exponential() -> None:
    policy = RetryPolicy(backoff_s=0.25)

    assert [policy.delay_after(attempt) for attempt in (1, 2, 3)] == [0.25, 0.5, 1.0]


@pytest.mark.parametrize(
    "settings",
    [
        {"adapter": "rag-api", "url": "http://x", "jwt_secret": "inline secrets are refused"},
        {"adapter": "rag-api", "url": "http://x", "retry": {"attempts": 0}},
        {"adapter": "rag-api", "url": "http://x", "retry": {"retry_on": ["404"]}},
        {"adapter": "http-json", "url": "http://x", "fields": {"text": "t", "page_base": 2}},
        {"adapter": "python", "callable": "no colon"},
        {"adapter": "grpc", "url": "http://x"},
    ],
)
def test_config_rejects_unknown_or_invalid_settings(settings: dict[str, Any]) -> None:
    with pytest.raises(pydantic.ValidationError):
        parse_retrieval_config(settings)


def test_registry_builds_the_adapter_for_each_config() -> None:
    rag = parse_retrieval_config({"adapter": "rag-api", "url": "http://x"})
    http = parse_retrieval_config({"adapter": "http-json", "url": "http://x"})
    python = parse_retrieval_config({"adapter": "python", "callable": f"{__name__}:fake_search"})

    built = [
        build_retriever(name, config, file_ids=["f"])
        for name, config in [("v1", rag), ("v2", http), ("ref", python)]
    ]

    assert [type(retriever) for retriever in built] == [
        RagApiRetriever,
        HttpJsonRetriever,
        PythonRetriever,
    ]
    assert [retriever.name for retriever in built] == ["v1", "v2", "ref"]
    for retriever in built:
        retriever.close()  # nothing was opened: closing is still safe
