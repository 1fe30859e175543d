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
import io
import math
import re
import threading
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pytest_ragv2.report.plot_inputs import PlotInputs, _role_system, plot_inputs
from pytest_ragv2.report.plot_style import (
    LOSS,
    NEUTRAL,
    TIE,
    WIN,
    _bottom_legend,
    _colours,
    _fmt_time,
    _gate,
    _label,
    _legend_height,
    _Margins,
    _new_figure,
    _number,
    _Plot,
    _prefix,
    _seconds,
    _svg,
    _system_label,
    _text_width,
    _tick_time,
)
from pytest_ragv2.report.plots_answers import _rubric, _vetoes

if TYPE_CHECKING:
    from pytest_ragv2.deciding.records import RunRecord
    from pytest_ragv2.report.model import Summary


@dataclass(frozen=True, slots=True)
class Figure:
    title: str
    svg: str  # an inline <svg>…</svg>, self-contained: no external refs, no XML prolog
    caption: str  # one sentence: what the plot shows and how to read it


TIE_EPSILON = 1e-9  # as the case_wins gate compares per-case means
CASES_LABELLED = 60  # up to this many cases, each is named under its bar
CASES_AS_BARS = 200  # beyond, the sorted differences are drawn in this many groups


def case_link(case: str) -> str:
    """The address of a case's panel on the page (``case_html.case_anchor``'s, not imported:
    the plot helper process imports this module alone)."""
    return f"#case-{case}"


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
            value = _number(row.latency_p50 if key == "latency_p50" else row.p95)
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
        bars = axes.bar(positions, values, width=0.8, color=colours, linewidth=0)
        for bar, (_, case) in zip(bars, deltas, strict=True):  # a bar opens its case's panel
            bar.set_url(case_link(case))
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
        names = axes.set_xticks(positions, [_label(case) for _, case in deltas], rotation=90)
        axes.tick_params(axis="x", labelsize=7)
        for name, (_, case) in zip(names, deltas, strict=True):  # so does its name
            name.label1.set_url(case_link(case))
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
        "vermilion ones it loses, grey ticks ties"
        + ("; a bar or a case's name opens its panel." if labelled else "."),
    )
