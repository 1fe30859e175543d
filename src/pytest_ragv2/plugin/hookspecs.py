"""The hooks a conftest or an installed plugin implements to extend pytest-ragv2, as
pytest-benchmark's and pytest-xdist's ``hookspec`` modules declare theirs
(docs/extending.md has an example of each).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from pytest_ragv2.config.settings import Settings
    from pytest_ragv2.deciding.results import SessionResults
    from pytest_ragv2.deciding.verdict import GateResult
    from pytest_ragv2.report.model import ReportSection, Summary
    from pytest_ragv2.systems.registry import ChatAdapter, RetrievalAdapter


@pytest.hookspec
def pytest_ragv2_gates(
    layer: str, results: SessionResults, settings: Settings
) -> list[GateResult] | None:
    """Gates of your own for ``layer`` ("A", "B" or "C"), evaluated on its tables after the
    layer's own gates. They decide the verdict and the exit status as the layer's do (a
    failed gate fails the session), and appear in every report with theirs. A hook that
    raises is one failed gate, ``plugin_gates``, whose reason names the error.

    :param layer: the layer decided.
    :param results: its tables: ``results.systems`` (name -> row), ``by_category``,
        ``by_language``, ``by_case`` and the records.
    :param settings: the run's settings (your own keys are not read: use the environment or
        a file of your own).
    """


@pytest.hookspec
def pytest_ragv2_summary(summary: Summary) -> list[ReportSection] | None:
    """Report sections of your own for one layer's summary: each a title and a table
    (header, rows of text), shown in summary.md, report.html and the terminal after the
    layer's own tables, and kept in summary.json under ``sections``."""


@pytest.hookspec
def pytest_ragv2_adapters() -> list[RetrievalAdapter[Any] | ChatAdapter[Any]] | None:
    """Adapters of your own, each a row of the adapter table
    (:mod:`pytest_ragv2.systems.registry`): a name, a configuration model (a
    ``RetrievalAdapterConfig`` or ``ChatAdapterConfig`` whose ``adapter`` is
    ``Literal[name]``) and a factory. A system whose ``retrieval.adapter`` or ``chat.adapter``
    names one is validated against its model and run through it, serial and under xdist.
    Called once per process, before the configuration is read; a name a built-in adapter
    holds is refused (exit 4).
    """
