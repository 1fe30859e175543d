"""Adapters to the systems under test: each owns one real interface's wire format.

Every adapter returns the project's own ``RetrievalResult`` and never raises out of
``retrieve``: failures are recorded on the result as ``RunError``.
"""

from __future__ import annotations

from pytest_ragv2.systems.base import Retriever
from pytest_ragv2.systems.config import (
    HttpJsonFields,
    HttpJsonRetrieval,
    PythonRetrieval,
    RagApiRetrieval,
    RetrievalConfig,
    RetryPolicy,
    parse_retrieval_config,
)
from pytest_ragv2.systems.http_json import HttpJsonRetriever
from pytest_ragv2.systems.python_callable import PythonRetriever
from pytest_ragv2.systems.rag_api import RagApiRetriever
from pytest_ragv2.systems.registry import build_retriever

__all__ = [
    "HttpJsonFields",
    "HttpJsonRetrieval",
    "HttpJsonRetriever",
    "PythonRetrieval",
    "PythonRetriever",
    "RagApiRetrieval",
    "RagApiRetriever",
    "RetrievalConfig",
    "Retriever",
    "RetryPolicy",
    "build_retriever",
    "parse_retrieval_config",
]
