"""From one system's retrieval configuration to a ready ``Retriever``."""

from __future__ import annotations

from collections.abc import Sequence

from pytest_ragv2.systems.base import Retriever
from pytest_ragv2.systems.config import (
    HttpJsonRetrieval,
    PythonRetrieval,
    RagApiRetrieval,
    RetrievalConfig,
)
from pytest_ragv2.systems.http_json import HttpJsonRetriever
from pytest_ragv2.systems.python_callable import PythonRetriever
from pytest_ragv2.systems.rag_api import RagApiRetriever


def build_retriever(name: str, config: RetrievalConfig, *, file_ids: Sequence[str]) -> Retriever:
    """The adapter for ``config``; ``file_ids`` is the run's allow-list (used when the
    configuration does not name its own). Nothing connects until the first ``retrieve``."""
    if isinstance(config, RagApiRetrieval):
        return RagApiRetriever(name, config, file_ids=file_ids)
    if isinstance(config, HttpJsonRetrieval):
        return HttpJsonRetriever(name, config, file_ids=file_ids)
    if isinstance(config, PythonRetrieval):
        return PythonRetriever(name, config)
    raise TypeError(f"no retrieval adapter for {type(config).__name__}")
