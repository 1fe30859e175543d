"""A table as aligned text: the terminal's and the CLI's tables, wrapped to the terminal's
width (long text columns onto continuation lines, a table still too wide split into column
groups that each repeat the naming column).
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence

Table = tuple[list[str], list[list[str]]]


def render_text(table: Table, indent: str = "  ", width: int | None = None) -> list[str]:
    """A table as aligned text lines; with ``width``, no line is wider: long text columns
    wrap onto continuation lines, and a table still too wide is split into column groups
    that each repeat the first (naming) column."""
    header, rows = table
    natural = [max(len(cell) for cell in column) for column in zip(header, *rows, strict=True)]
    if width is None or _line_width(natural, indent) <= width:
        return _render(header, rows, natural, indent)
    widths = _wrapped_widths(header, rows, natural, width - len(indent))
    if _line_width(widths, indent) <= width:
        return _render(header, rows, widths, indent)
    lines: list[str] = []
    for group in _column_groups(widths, width - len(indent)):
        part_header = [header[index] for index in group]
        part_rows = [[row[index] for index in group] for row in rows]
        part_widths = [widths[index] for index in group]
        if lines:
            lines.append("")
        lines.extend(_render(part_header, part_rows, part_widths, indent))
    return lines


COLUMN_GAP = 2
MIN_WRAPPED = 24  # a text column is never wrapped narrower than this


def _line_width(widths: Sequence[int], indent: str) -> int:
    return len(indent) + sum(widths) + COLUMN_GAP * (len(widths) - 1)


def _wrapped_widths(
    header: Sequence[str], rows: Sequence[Sequence[str]], natural: list[int], room: int
) -> list[int]:
    """Narrow the widest columns holding words (reasons, thresholds) until the table fits
    or they reach MIN_WRAPPED; numbers and names keep their width."""
    widths = list(natural)
    wrappable = [
        index
        for index in range(len(header))
        if natural[index] > MIN_WRAPPED and any(" " in row[index] for row in rows)
    ]
    # a column never narrower than its longest word: a name is never split
    floors = [
        max(MIN_WRAPPED, *(len(word) for row in (header, *rows) for word in row[index].split()))
        for index in range(len(header))
    ]
    # water-filling: the widest wrappable column gives way first, down to the next widest
    while _line_width(widths, "") > room and wrappable:
        ordered = sorted(wrappable, key=lambda index: widths[index], reverse=True)
        widest = ordered[0]
        if widths[widest] <= floors[widest]:
            wrappable.remove(widest)  # as narrow as its longest word
            continue
        floor = max(floors[widest], widths[ordered[1]] if len(ordered) > 1 else 0)
        excess = _line_width(widths, "") - room
        if widths[widest] > floor:
            widths[widest] = max(floor, widths[widest] - excess)
        else:  # every wrappable column is as narrow as the widest: narrow them together
            for index in ordered:
                if widths[index] == widths[widest] and widths[index] > floors[index]:
                    widths[index] -= 1
    return widths


def _column_groups(widths: Sequence[int], room: int) -> list[list[int]]:
    """Column indexes in groups that fit ``room``, each starting with column 0."""
    groups: list[list[int]] = []
    current = [0]
    for index in range(1, len(widths)):
        if _line_width([widths[i] for i in [*current, index]], "") > room and len(current) > 1:
            groups.append(current)
            current = [0]
        current.append(index)
    groups.append(current)
    return groups


def _render(
    header: Sequence[str], rows: Sequence[Sequence[str]], widths: Sequence[int], indent: str
) -> list[str]:
    lines = _render_row(header, widths, indent)
    lines.append(indent + "  ".join("-" * width for width in widths))
    for row in rows:
        lines.extend(_render_row(row, widths, indent))
    return [line.rstrip() for line in lines]


def _render_row(cells: Sequence[str], widths: Sequence[int], indent: str) -> list[str]:
    """One row; a cell longer than its column wraps at words onto continuation lines,
    never inside a word (a column is never narrower than its longest word)."""

    wrapped = [
        [cell]
        if len(cell) <= width
        else textwrap.wrap(cell, width, break_long_words=False, break_on_hyphens=False) or [""]
        for cell, width in zip(cells, widths, strict=True)
    ]
    height = max(len(lines) for lines in wrapped)
    return [
        indent
        + "  ".join(
            (lines[line] if line < len(lines) else "").ljust(width)
            for lines, width in zip(wrapped, widths, strict=True)
        )
        for line in range(height)
    ]
