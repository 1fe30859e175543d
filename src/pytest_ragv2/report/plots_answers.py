"""The answer layers' figures: the rubric's grades and the vetoes, per system."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from pytest_ragv2.report.plot_style import (
    GRADE_COLOURS,
    NEUTRAL,
    _bottom_legend,
    _colours,
    _label,
    _legend_height,
    _Margins,
    _new_figure,
    _number,
    _Plot,
    _system_label,
    _text_width,
)

if TYPE_CHECKING:
    from pytest_ragv2.report.plot_inputs import PlotInputs


# --- layer B: rubric and vetoes ------------------------------------------------------------


def _rubric(summary: PlotInputs) -> _Plot | None:
    from pytest_ragv2.scoring.metrics import GRADES

    table: object = summary.rubric
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
    table: object = summary.vetoes_by_system
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
