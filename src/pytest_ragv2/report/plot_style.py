"""What every figure of the report shares: one look (sizes, margins, legends, colours per
role), the SVG it is written as, and the small readings of the plotted figures.
"""

from __future__ import annotations

import hashlib
import io
import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pytest_ragv2.report.safe_text import printable

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure as MplFigure

    from pytest_ragv2.report.plot_inputs import PlotInputs


# Okabe & Ito's colour-blind-safe palette; a system keeps its colour in every figure (its
# position in the summary's system order: baseline, candidate, reference, others)
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#000000")
GRADE_COLOURS = {"PASS": "#0072B2", "PARTIAL": "#E69F00", "FAIL": "#D55E00"}
WIN, LOSS, TIE, NEUTRAL = "#0072B2", "#D55E00", "#999999", "#555555"
WIDTH_IN = 7.2  # 518 pt: about 700 px wide on the page
LABEL_MAX = 40  # longer names are shortened (with an ellipsis) on the axes


@dataclass(frozen=True, slots=True)
class _Plot:
    title: str
    figure: MplFigure
    caption: str


# --- helpers -------------------------------------------------------------------------------


def _prefix(summary: PlotInputs, slug: str) -> str:
    digest = hashlib.sha256(f"{summary.run_id}\0{summary.layer}\0{slug}".encode()).hexdigest()
    return f"rg{digest[:8]}-{slug}-"


@dataclass(frozen=True, slots=True)
class _Margins:
    """Room around the axes, in inches: set from the labels' lengths instead of measured by
    a layout engine (constrained layout doubles the drawing time)."""

    left: float = 0.7
    bottom: float = 0.5
    top: float = 0.15
    right: float = 0.2
    between: float = 0.25  # between panels


def _text_width(texts: Iterable[str], size: float = 8.5) -> float:
    """An upper estimate of the widest of these one- or several-line texts, in inches
    (DejaVu Sans averages under 0.62 em a character)."""
    widest = max((len(line) for text in texts for line in text.split("\n")), default=0)
    return widest * size * 0.62 / 72.0


def _new_figure(
    axes_height_in: float, margins: _Margins, *, columns: int = 1
) -> tuple[MplFigure, list[Axes]]:
    from matplotlib.backends.backend_svg import FigureCanvasSVG
    from matplotlib.figure import Figure as MplFigure

    height = max(1.0, axes_height_in) + margins.bottom + margins.top
    figure = MplFigure(figsize=(WIDTH_IN, height))
    FigureCanvasSVG(figure)
    left = min(margins.left, WIDTH_IN * 0.45)
    panel = (WIDTH_IN - left - margins.right - margins.between * (columns - 1)) / columns
    figure.subplots_adjust(
        left=left / WIDTH_IN,
        right=1.0 - margins.right / WIDTH_IN,
        bottom=margins.bottom / height,
        top=1.0 - margins.top / height,
        wspace=margins.between / panel,
    )
    axes = figure.subplots(1, columns, squeeze=False, sharey=columns > 1)
    return figure, list(axes[0])


def _legend_columns(labels: Sequence[str]) -> int:
    """As many columns (up to three) as the widest label leaves room for."""
    entry = _text_width(labels) + 0.5  # the handle and the gap
    return max(1, min(3, len(labels), int(WIDTH_IN // entry)))


def _legend_height(labels: Sequence[str]) -> float:
    return 0.08 + 0.2 * math.ceil(len(labels) / _legend_columns(labels))


def _bottom_legend(figure: MplFigure, handles: Sequence[Any], labels: Sequence[str]) -> None:
    """A legend in the figure's bottom band (its margin reserves ``_legend_height``)."""
    figure.legend(
        handles,
        labels,
        loc="lower center",
        bbox_to_anchor=(0.5, 0.0),
        ncols=_legend_columns(labels),
        frameon=False,
    )


_TAG = re.compile(r"<[^>]*>")  # text content is escaped: a "<" always opens a real tag
_PROLOG = re.compile(r"\A.*?(?=<svg[\s>])", re.DOTALL)
_METADATA = re.compile(r"<metadata>.*?</metadata>\s*", re.DOTALL)
_COMMENT = re.compile(r"<!--.*?-->\s*", re.DOTALL)
_OWN_HREF = re.compile(r'href="#(?!case-)')


def _svg(figure: MplFigure, prefix: str) -> str:
    """The figure as an inline ``<svg>``: no prolog, metadata or comment, every id (and every
    reference to one) prefixed, the style sheet scoped to this figure, scalable width."""
    buffer = io.StringIO()
    figure.savefig(buffer, format="svg", metadata={"Date": None})
    text = _PROLOG.sub("", buffer.getvalue(), count=1)
    text = _METADATA.sub("", text, count=1)
    text = _COMMENT.sub("", text)

    def tag(match: re.Match[str]) -> str:
        element = match.group(0)
        element = element.replace(' id="', f' id="{prefix}')
        element = element.replace("url(#", f"url(#{prefix}")
        # a link to a case panel of the page (``#case-…``) is the page's, not the figure's,
        # and opens in the page (matplotlib writes every link with a new tab as its target)
        if element.startswith("<a ") and 'href="#case-' in element:
            return element.replace(' target="_blank"', "")
        return _OWN_HREF.sub(f'href="#{prefix}', element)

    text = _TAG.sub(tag, text)
    # matplotlib's style sheet selects "*": in an HTML page it would style every element
    text = text.replace('<style type="text/css">*{', f'<style type="text/css">#{prefix}svg *{{')
    return text.replace(
        "<svg ", f'<svg id="{prefix}svg" style="max-width:100%;height:auto" ', 1
    ).strip()


_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff]")  # not XML text


def _label(name: object) -> str:
    """A user's name (system, category, case) as the axes show it: on one line, without
    characters XML cannot hold, control and bidirectional characters shown as their
    escapes (``\\u202e``), shortened past ``LABEL_MAX``."""
    text = " ".join(_CONTROL.sub(" ", printable(str(name))).split())
    return text if len(text) <= LABEL_MAX else text[: LABEL_MAX - 1] + "…"


def _colours(summary: PlotInputs) -> dict[str, str]:
    return {name: PALETTE[index % len(PALETTE)] for index, name in enumerate(summary.systems)}


def _system_label(summary: PlotInputs, name: str) -> str:
    role = summary.systems[name].role if name in summary.systems else None
    return f"{_label(name)} ({role})" if role and role != "unknown" else _label(name)


def _number(value: Any) -> float | None:
    if value is None or isinstance(value, bool | str):
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def _gate(summary: PlotInputs, name: str) -> Any:
    """The gate of that name, when it was evaluated (a skipped gate has no numbers)."""
    return next((g for g in summary.gates if g.name == name and g.decision != "skip"), None)


def _seconds(values: Iterable[float]) -> tuple[float, str]:
    """The scale and unit that suit these durations (ms below a second)."""
    largest = max(values, default=0.0)
    return (1.0, "s") if largest >= 1.0 else (1000.0, "ms")


def _fmt_time(seconds: float) -> str:
    return f"{seconds:.2f} s" if seconds >= 1.0 else f"{seconds * 1000:.3g} ms"


def _tick_time(seconds: float) -> str:
    return f"{seconds:g} s" if seconds >= 1.0 else f"{seconds * 1000:g} ms"
