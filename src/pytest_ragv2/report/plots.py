"""The plots of report.html: inline, self-contained SVG figures built from the summary.

:func:`figures` returns the figures that the run's data supports, each a :class:`Figure`
with a title, an inline ``<svg>`` and a one-sentence caption; a plot whose data is absent
(no baseline, no candidate, no record, a layer without rubric) is left out, and a plot that
cannot be drawn is left out too: the report never fails for a figure.

The numbers are the summary's: the percentiles are the system table's, the per-category
intervals are the ``category_regression`` gate's (and the all-cases row the
``recall_improvement`` gate's evidence), the win/tie/loss counts at the chat layers the
``case_wins`` gate's. Only the latency distributions and the per-case differences are read
from the records and the per-case rows, and nothing is re-estimated here.

matplotlib is imported inside :func:`figures` (the plugin's start-up never pays for it) and
used through its object API (``matplotlib.figure.Figure`` with the SVG canvas): no pyplot,
no backend switch, no global figure state. The few rcParams the SVG writer reads at save
time (``svg.fonttype``, ``svg.hashsalt``) are set in an ``rc_context`` held under a lock, so
concurrent calls do not see each other's settings. Every figure's ids are prefixed with a
digest of the run, layer and figure, so several inline SVGs on one page never collide; the
XML prolog, DOCTYPE, metadata block and comments are stripped. Text stays text
(``svg.fonttype = "none"``), XML-escaped by the SVG writer, with mathtext off: a system
named ``$x$`` or ``<script>`` is shown as written.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import io
import math
import re
import threading
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pytest_ragv2.report.safe_text import printable

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure as MplFigure

    from pytest_ragv2.deciding.records import RunRecord
    from pytest_ragv2.deciding.results import SystemRow
    from pytest_ragv2.report.model import Summary


@dataclass(frozen=True, slots=True)
class Figure:
    title: str
    svg: str  # an inline <svg>…</svg>, self-contained: no external refs, no XML prolog
    caption: str  # one sentence: what the plot shows and how to read it


# Okabe & Ito's colour-blind-safe palette; a system keeps its colour in every figure (its
# position in the summary's system order: baseline, candidate, reference, others)
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#000000")
GRADE_COLOURS = {"PASS": "#0072B2", "PARTIAL": "#E69F00", "FAIL": "#D55E00"}
WIN, LOSS, TIE, NEUTRAL = "#0072B2", "#D55E00", "#999999", "#555555"
WIDTH_IN = 7.2  # 518 pt: about 700 px wide on the page
LABEL_MAX = 40  # longer names are shortened (with an ellipsis) on the axes
TIE_EPSILON = 1e-9  # as the case_wins gate compares per-case means
CASES_LABELLED = 40  # up to this many cases, each is named under its bar
CASES_AS_BARS = 200  # beyond, the sorted differences are drawn in this many groups

_RC: dict[str, Any] = {
    "svg.fonttype": "none",
    "text.parse_math": False,
    "font.size": 9.0,
    "axes.titlesize": 10.0,
    "axes.labelsize": 9.0,
    "legend.fontsize": 8.5,
    "xtick.labelsize": 8.5,
    "ytick.labelsize": 8.5,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": False,
    "figure.dpi": 72.0,
    "savefig.dpi": 72.0,
    "savefig.bbox": "standard",
}
_LOCK = threading.Lock()  # rcParams are global: one rendering at a time


def warm() -> None:
    """Import matplotlib and draw a throwaway figure (its fonts and SVG writer load on the
    first drawing): what the first real figure would otherwise pay (``plot_worker``)."""
    with contextlib.suppress(Exception):
        import matplotlib

        settings: Any = dict(_RC)  # matplotlib types rcParams keys literally
        with _LOCK, matplotlib.rc_context(settings):
            figure, (axes,) = _new_figure(1.0, _Margins())
            axes.plot([0, 1], [0, 1])
            axes.set_title("warm")
            figure.savefig(io.StringIO(), format="svg")


def figures(summary: Summary, records: Sequence[RunRecord]) -> list[Figure]:
    """The report's figures for one layer's summary and its records, in reading order
    (never raises: a figure whose data is absent, or that fails, is left out)."""
    return draw(plot_inputs(summary), run_latencies(summary, records))


def draw(summary: PlotInputs, latencies: Mapping[str, Sequence[float]]) -> list[Figure]:
    """:func:`figures` from what they read of the summary (:func:`plot_inputs`) and of the
    records (:func:`run_latencies`)."""
    try:
        import matplotlib
    except ImportError:  # pragma: no cover - matplotlib is a dependency
        return []
    builders: list[tuple[str, Callable[[], _Plot | None]]] = [
        ("recall", lambda: _recall_at_k(summary)),
        ("latency", lambda: _latency(summary, latencies)),
        ("categories", lambda: _category_deltas(summary)),
        ("cases", lambda: _case_deltas(summary)),
        ("rubric", lambda: _rubric(summary)),
        ("vetoes", lambda: _vetoes(summary)),
    ]
    made: list[Figure] = []
    with _LOCK, warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a glyph missing from the font is not an error
        for slug, build in builders:
            prefix = _prefix(summary, slug)
            settings: Any = {**_RC, "svg.hashsalt": prefix}  # matplotlib types keys literally
            try:
                with matplotlib.rc_context(settings):
                    plot = build()
                    if plot is None:
                        continue
                    made.append(Figure(plot.title, _svg(plot.figure, prefix), plot.caption))
            except Exception:  # a figure never fails the report
                continue
    return made


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
        return element.replace('href="#', f'href="#{prefix}')

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


PLOTTED_EXTRAS = ("rubric", "vetoes_by_system")


@dataclass(frozen=True, slots=True)
class PlotRow:
    """What a figure reads of a summary's row (a system's, a category's or a case's)."""

    role: str | None
    metrics: dict[str, Any]
    runs: int
    cases: int
    latency_p50: dict[str, Any]
    p95: float | None


@dataclass(frozen=True, slots=True)
class PlotGate:
    """What a figure reads of a gate."""

    name: str
    description: str
    threshold: str
    decision: str
    reason: str
    details: tuple[str, ...]
    evidence: dict[str, Any] | None


@dataclass(frozen=True, slots=True)
class PlotInputs:
    """What the figures read of a layer's summary, in plain types: a helper process drawing
    them unpickles it with this module alone (not the summary's, which import pytest,
    pydantic and httpx), and is sent no more than the figures read."""

    run_id: str
    layer: str
    systems: dict[str, PlotRow]
    by_category: dict[str, dict[str, PlotRow]]
    gates: tuple[PlotGate, ...]
    extras: dict[str, Any]  # the plotted ones only (PLOTTED_EXTRAS)
    # the compared metric (case_metric) of each case, the candidate's and the baseline's
    # only: what the per-case figure reads of a row (a float per case, not a row per case)
    case_values: dict[str, dict[str, Any]] = field(default_factory=dict)
    case_metric: str = ""
    headline: str = "met"  # the layer's headline metric (recall@k at a retrieval layer)


def _plot_row(row: SystemRow) -> PlotRow:
    return PlotRow(row.role, dict(row.metrics), row.runs, row.cases, dict(row.latency_p50), row.p95)


def plot_inputs(summary: Summary) -> PlotInputs:
    """What :func:`draw` reads of a summary (what a helper process drawing the figures is
    sent): of the per-case rows only the compared metric, and only a candidate's and its
    baseline's; of the extras only the plotted ones."""

    def rows(table: Mapping[str, SystemRow]) -> dict[str, PlotRow]:
        return {name: _plot_row(row) for name, row in table.items()}

    inputs = PlotInputs(
        run_id=summary.run_id,
        layer=summary.layer,
        systems=rows(summary.systems),
        by_category={name: rows(table) for name, table in summary.by_category.items()},
        gates=tuple(
            PlotGate(
                gate.name,
                gate.description,
                gate.threshold,
                gate.decision,
                gate.reason,
                tuple(str(line) for line in gate.details),
                dict(gate.evidence) if gate.evidence is not None else None,
            )
            for gate in summary.gates
        ),
        extras={name: summary.extras[name] for name in PLOTTED_EXTRAS if name in summary.extras},
        headline=summary.headline_metric,
    )
    compared = [_role_system(inputs, "candidate"), _role_system(inputs, "baseline")]
    if None in compared:
        return inputs
    metric = inputs.headline
    values = {
        str(name): {case: row.metrics.get(metric) for case, row in summary.by_case[name].items()}
        for name in compared
        if name in summary.by_case
    }
    return dataclasses.replace(inputs, case_values=values, case_metric=metric)


def _role_system(summary: PlotInputs, role: str) -> str | None:
    return next((name for name, row in summary.systems.items() if row.role == role), None)


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


# --- recall@k ------------------------------------------------------------------------------

_RECALL = re.compile(r"^recall@(\d+)$")


def _recall_at_k(summary: PlotInputs) -> _Plot | None:
    ks = sorted(
        {
            int(match.group(1))
            for row in summary.systems.values()
            for name, value in row.metrics.items()
            if (match := _RECALL.match(name)) and _number(value) is not None
        }
    )
    if not ks:
        return None
    colours = _colours(summary)
    figure, (axes,) = _new_figure(2.8, _Margins(left=0.75, bottom=0.5))
    handles, labels = [], []
    for name, row in summary.systems.items():
        points = [(k, _number(row.metrics.get(f"recall@{k}"))) for k in ks]
        shown = [(k, value) for k, value in points if value is not None]
        if not shown:
            continue
        (line,) = axes.plot(
            [k for k, _ in shown],
            [value for _, value in shown],
            marker="o",
            color=colours[name],
            linewidth=1.8,
        )
        handles.append(line)
        labels.append(_system_label(summary, name))
    if not handles:
        return None
    axes.set_xscale("log")
    axes.set_xticks(ks, [str(k) for k in ks])
    axes.minorticks_off()
    axes.set_ylim(0.0, 1.02)
    axes.set_xlabel("k (results read)")
    axes.set_ylabel("recall@k (mean of case means)")
    axes.grid(True, axis="y", color="#e5e5e5", linewidth=0.6)
    axes.legend(handles, labels, loc="lower right", frameon=False)
    return _Plot(
        "Recall@k by system",
        figure,
        "The share of a case's gold evidence found in the first k results, averaged over "
        "cases, for each k the run measured: a higher curve finds more, a steeper start "
        "ranks the evidence earlier.",
    )


# --- latency -------------------------------------------------------------------------------


def run_latencies(summary: Summary, records: Sequence[RunRecord]) -> dict[str, list[float]]:
    """What the figures read of the records: per system of the summary, the latencies of
    its successful runs at the summary's layer (a helper process is sent these alone)."""
    by_system: dict[str, list[float]] = {name: [] for name in summary.systems}
    for record in records:
        if (
            record.key.layer == summary.layer
            and record.ok
            and not record.skipped
            and record.key.system in by_system
            and math.isfinite(record.latency_s)
            and record.latency_s >= 0
        ):
            by_system[record.key.system].append(record.latency_s)
    return by_system


def _latency(summary: PlotInputs, latencies: Mapping[str, Sequence[float]]) -> _Plot | None:
    import numpy as np

    by_system = {name: list(latencies.get(name, ())) for name in summary.systems}
    if not any(by_system.values()):
        return None
    names = list(by_system)
    everything = [value for values in by_system.values() for value in values]
    scale, unit = _seconds(everything)
    positive = [value * scale for value in everything if value > 0]
    low = min(positive, default=1.0)
    high = max(positive, default=1.0)
    logarithmic = high / low > 20
    if logarithmic:
        edges = np.geomspace(low, high * 1.0001, 41)
    else:
        edges = np.linspace(0.0, high * 1.05 if high > 0 else 1.0, 41)
    colours = _colours(summary)
    ticks = [f"{_system_label(summary, name)}\n{len(by_system[name])} runs" for name in names]
    figure, (axes,) = _new_figure(
        0.75 * len(names), _Margins(left=_text_width(ticks) + 0.2, bottom=0.5)
    )
    for index, name in enumerate(names):
        base = float(len(names) - 1 - index)  # the first system on top
        values = np.asarray(by_system[name]) * scale
        if logarithmic:
            values = np.clip(values, low, None)
        if not values.size:
            axes.text(edges[0], base + 0.3, "no successful run", color=NEUTRAL, fontsize=8)
            continue
        counts, _ = np.histogram(values, bins=edges)
        heights = counts / counts.max() * 0.8 if counts.max() else counts.astype(float)
        axes.stairs(
            heights + base,
            edges,
            baseline=base,
            fill=True,
            color=colours[name],
            alpha=0.55,
            linewidth=0,
        )
        row = summary.systems[name]
        for key, style, align, offset in (
            ("latency_p50", "-", "right", -1),
            ("latency_p95", "--", "left", 1),
        ):
            value = _number(row.latency_p50.get("value") if key == "latency_p50" else row.p95)
            if value is None:
                continue
            x = max(value * scale, low) if logarithmic else value * scale
            axes.vlines(
                x,
                base,
                base + 0.9,
                colors="#000000",
                linestyles="dashed" if style == "--" else "solid",
                linewidth=1.2,
            )
            axes.annotate(
                f"{key[-3:]} {_fmt_time(value)}",
                (x, base + 0.9),
                xytext=(3 * offset, 0),
                textcoords="offset points",
                ha=align,
                va="top",
                fontsize=8,
            )
    if logarithmic:
        from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

        axes.set_xscale("log")
        axes.xaxis.set_major_locator(LogLocator(base=10.0))
        axes.xaxis.set_major_formatter(FuncFormatter(lambda x, _: _tick_time(x / scale)))
        axes.xaxis.set_minor_formatter(NullFormatter())
    axes.set_yticks(
        [float(len(names) - 1 - index) + 0.4 for index in range(len(names))],
        ticks,
    )
    axes.tick_params(axis="y", length=0)
    axes.set_ylim(-0.1, len(names) + 0.05)
    axes.set_xlabel("latency per run (log scale)" if logarithmic else f"latency per run ({unit})")
    axes.spines["left"].set_visible(False)
    return _Plot(
        "Latency distribution by system",
        figure,
        "The distribution of each system's latency over its successful runs (failed and "
        "skipped runs left out, as in the tables), with the median (p50, solid line) and the "
        "95th percentile (p95, dashed) the system table reports.",
    )


# --- per-category differences --------------------------------------------------------------

_DETAIL = re.compile(
    r"^(?P<category>.+): Δ (?P<estimate>[+-]\d+\.\d+) \[(?P<low>[+-]\d+\.\d+), "
    r"(?P<high>[+-]\d+\.\d+)\] \((?P<confidence>[\d.]+)% [^)]*\), (?P<n>\d+) cases"
)
_SIGNED = re.compile(r"[+-]\d+\.\d+")


@dataclass(frozen=True, slots=True)
class _Interval:
    name: str
    estimate: float
    low: float | None
    high: float | None
    n: int | None = None
    confidence: float | None = None
    decisive: bool = True


def _regression_intervals(summary: PlotInputs) -> list[_Interval]:
    """The category_regression gate's per-category intervals, as its details state them."""
    gate = _gate(summary, "category_regression")
    if gate is None:
        return []
    found = []
    for line in gate.details:
        match = _DETAIL.match(str(line))
        if match is None:
            continue
        found.append(
            _Interval(
                match["category"],
                float(match["estimate"]),
                float(match["low"]),
                float(match["high"]),
                int(match["n"]),
                float(match["confidence"]),
                decisive="not decisive" not in line,
            )
        )
    return found


def _overall_interval(summary: PlotInputs) -> _Interval | None:
    """All cases: the recall_improvement gate's evidence (layer A) or the interval the
    case_wins gate states (chat layers)."""
    improvement = _gate(summary, "recall_improvement")
    if improvement is not None and improvement.evidence:
        evidence = improvement.evidence
        estimate = _number(evidence.get("estimate"))
        if estimate is not None:
            return _Interval(
                "all cases",
                estimate,
                _number(evidence.get("low")),
                _number(evidence.get("high")),
                int(evidence["n"]) if isinstance(evidence.get("n"), int) else None,
            )
    wins = _gate(summary, "case_wins")
    if wins is not None:
        match = re.search(
            r"([+-]\d+\.\d+) \[([+-]\d+\.\d+), ([+-]\d+\.\d+)\] \(paired by case", wins.reason
        )
        if match:
            cases = re.search(r"over (\d+) cases", wins.reason)
            return _Interval(
                "all cases",
                float(match[1]),
                float(match[2]),
                float(match[3]),
                int(cases[1]) if cases else None,
            )
    return None


def _margin(gate: Any) -> float | None:
    match = _SIGNED.search(str(gate.threshold)) if gate is not None else None
    return float(match.group(0)) if match else None


def _category_deltas(summary: PlotInputs) -> _Plot | None:
    candidate = _role_system(summary, "candidate")
    baseline = _role_system(summary, "baseline")
    if candidate is None or baseline is None:
        return None
    metric = summary.headline
    intervals = _regression_intervals(summary)
    with_intervals = bool(intervals)
    if not intervals:
        # no per-category comparison among the gates (the chat layers): the difference of
        # the summary's category means, shown as points without an interval
        cand_rows = summary.by_category.get(candidate, {})
        base_rows = summary.by_category.get(baseline, {})
        for category in sorted(set(cand_rows) & set(base_rows)):
            cand = _number(cand_rows[category].metrics.get(metric))
            base = _number(base_rows[category].metrics.get(metric))
            if cand is not None and base is not None:
                intervals.append(
                    _Interval(category, cand - base, None, None, cand_rows[category].cases)
                )
    if not intervals:
        return None
    intervals.sort(key=lambda item: (item.estimate, item.name), reverse=True)
    overall = _overall_interval(summary)
    rows = ([overall] if overall is not None else []) + intervals
    labels = []
    for item in rows:
        label = _label(item.name)
        if item.n is not None:
            label += f" (n={item.n})"
        if not item.decisive:
            label += " *"
        labels.append(label)
    regression = _gate(summary, "category_regression")
    lower = _margin(regression)
    upper = _margin(_gate(summary, "recall_improvement"))
    margin_texts = [
        f"{text} {value:+.3f}"
        for value, text in ((lower, "regression margin"), (upper, "improvement margin"))
        if value is not None
    ]
    figure, (axes,) = _new_figure(
        0.28 * len(rows) + 0.2,
        _Margins(
            left=_text_width(labels) + 0.2,
            bottom=0.5 + (_legend_height(margin_texts) if margin_texts else 0.0),
        ),
    )
    colour = _colours(summary)[candidate]
    for index, item in enumerate(rows):
        y = float(len(rows) - 1 - index)
        is_overall = item is overall
        tone = "#000000" if is_overall else (colour if item.decisive else NEUTRAL)
        if item.low is not None and item.high is not None:
            axes.hlines(y, item.low, item.high, colors=tone, linewidth=2.0 if is_overall else 1.4)
        axes.plot(
            [item.estimate],
            [y],
            marker="D" if is_overall else "o",
            markersize=6,
            color=tone,
            markerfacecolor=tone if item.decisive else "#ffffff",
            linestyle="none",
        )
    axes.axvline(0.0, color="#777777", linewidth=0.8)
    margins, margin_labels = [], []
    for value, text in ((lower, "regression margin"), (upper, "improvement margin")):
        if value is not None:
            margins.append(
                axes.axvline(value, color=LOSS if value < 0 else WIN, linewidth=1.0, linestyle=":")
            )
            margin_labels.append(f"{text} {value:+.3f}")
    if margins:
        _bottom_legend(figure, margins, margin_labels)
    axes.set_yticks([float(len(rows) - 1 - index) for index in range(len(rows))], labels)
    axes.set_ylim(-0.6, len(rows) - 0.4)
    axes.set_xlabel(
        f"Δ {metric}: {_label(candidate)} − {_label(baseline)} (paired by case)"
        if with_intervals
        else f"Δ {metric}: {_label(candidate)} − {_label(baseline)} (category means)"
    )
    axes.grid(True, axis="x", color="#eeeeee", linewidth=0.6)
    if with_intervals:
        caption = (
            f"The candidate's {metric} minus the baseline's per category with the "
            "category_regression gate's intervals (simultaneous where decisive; hollow "
            "markers and * mark categories with too few cases to decide) and, on top, the "
            "all-case difference: an interval wholly left of the regression margin is "
            "materially worse."
        )
    else:
        caption = (
            f"The candidate's {metric} minus the baseline's per category (difference of the "
            "category means: no per-category interval is computed for this comparison), "
            "with the all-case paired difference and its interval on top: left of zero the "
            "candidate does worse."
        )
    return _Plot(f"Candidate − baseline by category ({metric})", figure, caption)


# --- per-case differences ------------------------------------------------------------------


def _case_deltas(summary: PlotInputs) -> _Plot | None:
    candidate = _role_system(summary, "candidate")
    baseline = _role_system(summary, "baseline")
    if candidate is None or baseline is None:
        return None
    metric = summary.case_metric
    cand_values = summary.case_values.get(candidate, {})
    base_values = summary.case_values.get(baseline, {})
    deltas: list[tuple[float, str]] = []
    for case in sorted(set(cand_values) & set(base_values)):
        cand = _number(cand_values[case])
        base = _number(base_values[case])
        if cand is not None and base is not None:
            deltas.append((cand - base, case))
    if not deltas:
        return None
    deltas.sort()
    wins = sum(1 for delta, _ in deltas if delta > TIE_EPSILON)
    losses = sum(1 for delta, _ in deltas if delta < -TIE_EPSILON)
    ties = len(deltas) - wins - losses
    counted = f"{wins} wins, {ties} ties, {losses} losses"
    gate = _gate(summary, "case_wins")
    match = (
        re.match(r"(\d+) wins, (\d+) ties, (\d+) ties where both fail, (\d+) losses", gate.reason)
        if gate is not None
        else None
    )
    if match:  # the gate's own counts, with its rule for ties
        counted = f"{match[1]} wins, {match[2]} ties, {match[3]} where both fail, {match[4]} losses"
    values = [delta for delta, _ in deltas]
    positions = list(range(len(values)))
    labelled = len(values) <= CASES_LABELLED
    bottom = _text_width([_label(case) for _, case in deltas], 7.0) + 0.15 if labelled else 0.5
    figure, (axes,) = _new_figure(2.6, _Margins(left=0.75, bottom=bottom, top=0.35))
    if len(values) <= CASES_AS_BARS:
        colours = [WIN if v > TIE_EPSILON else LOSS if v < -TIE_EPSILON else TIE for v in values]
        axes.bar(positions, values, width=0.8, color=colours, linewidth=0)
        tied = [position for position, value in enumerate(values) if abs(value) <= TIE_EPSILON]
        if tied:  # a tie is a bar of height zero: a tick marks it
            axes.plot(tied, [0.0] * len(tied), marker="|", color=TIE, linestyle="none")
    else:  # many cases: the sorted differences in CASES_AS_BARS equal groups, two paths
        import numpy as np

        heights = np.asarray(values)
        groups = np.array_split(heights, CASES_AS_BARS)
        means = np.array([group.mean() for group in groups])
        edges = np.concatenate(([0], np.cumsum([len(group) for group in groups]))) - 0.5
        axes.stairs(np.where(means > 0, means, 0.0), edges, fill=True, color=WIN, linewidth=0)
        axes.stairs(np.where(means < 0, means, 0.0), edges, fill=True, color=LOSS, linewidth=0)
        axes.set_xlim(edges[0], edges[-1])
    if labelled:
        axes.set_xticks(positions, [_label(case) for _, case in deltas], rotation=90)
        axes.tick_params(axis="x", labelsize=7)
    else:
        axes.set_xticks([])
        axes.set_xlabel(f"{len(values)} cases, sorted by difference")
    axes.axhline(0.0, color="#777777", linewidth=0.8)
    axes.set_ylabel(f"Δ {metric} per case")
    axes.set_title(f"{_label(candidate)} − {_label(baseline)}: {counted}", fontsize=9, loc="left")
    return _Plot(
        f"Candidate − baseline per case ({metric})",
        figure,
        f"Each bar is one case: {_label(candidate)}'s {metric} minus {_label(baseline)}'s "
        "(means over the case's runs), sorted; blue bars are cases the candidate wins, "
        "vermilion ones it loses, grey ticks ties.",
    )


# --- layer B: rubric and vetoes ------------------------------------------------------------


def _rubric(summary: PlotInputs) -> _Plot | None:
    from pytest_ragv2.scoring.metrics import GRADES

    table = summary.extras.get("rubric")
    if not isinstance(table, Mapping):
        return None
    graded: dict[str, dict[str, dict[str, int]]] = {}
    for system, dimensions in table.items():
        if not isinstance(dimensions, Mapping):
            continue
        rows = {
            str(dimension): {grade: int(counts.get(grade, 0) or 0) for grade in GRADES}
            for dimension, counts in dimensions.items()
            if isinstance(counts, Mapping)
        }
        if any(sum(counts.values()) for counts in rows.values()):
            graded[str(system)] = rows
    if not graded:
        return None
    systems = list(graded)
    dimensions = list(next(iter(graded.values())))
    colours = _colours(summary)
    figure, axes_list = _new_figure(
        0.3 * len(dimensions),
        _Margins(
            left=_text_width(dimensions) + 0.15,
            bottom=0.3 + _legend_height(GRADES),
            top=0.3,
            between=0.15,
        ),
        columns=len(systems),
    )
    for axes, system in zip(axes_list, systems, strict=True):
        for index, dimension in enumerate(dimensions):
            y = float(len(dimensions) - 1 - index)
            counts = graded[system].get(dimension, dict.fromkeys(GRADES, 0))
            total = sum(counts.values())
            left = 0.0
            for grade in GRADES:
                share = counts[grade] / total if total else 0.0
                if share:
                    axes.barh(y, share, left=left, height=0.7, color=GRADE_COLOURS[grade])
                    if share >= 0.12:
                        axes.text(
                            left + share / 2,
                            y,
                            f"{counts[grade]}",
                            ha="center",
                            va="center",
                            fontsize=7,
                            color="#ffffff" if grade != "PARTIAL" else "#000000",
                        )
                left += share
        axes.set_xlim(0.0, 1.0)
        axes.set_xticks([0.0, 0.5, 1.0], ["0", "½", "1"])
        axes.set_title(_label(system), fontsize=9, color=colours.get(system, NEUTRAL))
        axes.tick_params(axis="y", length=0)
        axes.spines["left"].set_visible(False)
    axes_list[0].set_yticks(
        [float(len(dimensions) - 1 - index) for index in range(len(dimensions))], dimensions
    )
    from matplotlib.patches import Patch

    _bottom_legend(figure, [Patch(color=GRADE_COLOURS[grade]) for grade in GRADES], GRADES)
    return _Plot(
        "Rubric grades by dimension and system",
        figure,
        "For each system (one panel each) and rubric dimension, the share of graded runs "
        "graded PASS, PARTIAL and FAIL, run counts inside the bars: the longer the blue, the "
        "more runs pass that dimension.",
    )


def _vetoes(summary: PlotInputs) -> _Plot | None:
    table = summary.extras.get("vetoes_by_system")
    if not isinstance(table, Mapping) or not table:
        return None
    systems = [str(name) for name, kinds in table.items() if isinstance(kinds, Mapping)]
    kinds: list[str] = []
    for name in systems:
        for kind, count in table[name].items():
            if (_number(count) or 0) > 0 and str(kind) not in kinds:
                kinds.append(str(kind))
    if not kinds:
        return None  # no veto tripped: the gate table says so, a plot of zeros would not
    from matplotlib.patches import Patch

    colours = _colours(summary)
    labels = []
    for name in systems:
        runs = summary.systems[name].runs if name in summary.systems else None
        labels.append(_system_label(summary, name) + (f", {runs} runs" if runs is not None else ""))
    figure, (axes,) = _new_figure(
        0.22 * len(kinds) * len(systems) + 0.1,
        _Margins(left=_text_width(kinds) + 0.15, bottom=0.5 + _legend_height(labels)),
    )
    height = 0.8 / len(systems)
    handles: list[Patch] = []
    for position, name in enumerate(systems):
        ys = [
            float(len(kinds) - 1 - index) + 0.4 - height * (position + 0.5)
            for index in range(len(kinds))
        ]
        counts = [int(_number(table[name].get(kind)) or 0) for kind in kinds]
        axes.barh(ys, counts, height=height * 0.9, color=colours.get(name, NEUTRAL))
        for y, count in zip(ys, counts, strict=True):
            axes.text(count, y, f" {count}", va="center", fontsize=7)
        handles.append(Patch(color=colours.get(name, NEUTRAL)))
    axes.set_yticks([float(len(kinds) - 1 - index) for index in range(len(kinds))], kinds)
    axes.tick_params(axis="y", length=0)
    axes.set_xlabel("runs that tripped the veto")
    axes.margins(x=0.12)
    _bottom_legend(figure, handles, labels)
    return _Plot(
        "Vetoes by kind and system",
        figure,
        "For each hard veto some system tripped, how many of each system's runs tripped it "
        "(a candidate's veto fails the run whatever its other figures); kinds no system "
        "tripped are left out.",
    )
