"""Values read from a service's JSON by a configured dotted path ("data.items.0.text"): the
one reader every JSON adapter shares, so a page or a count is read alike by all of them."""

from __future__ import annotations

from typing import Any


class _Missing:
    """Marks a path that leads nowhere (distinct from a JSON null)."""


MISSING = _Missing()


def resolve(value: Any, path: str) -> Any:
    """The value at a dotted path ("" = ``value`` itself), or ``MISSING``."""
    if not path:
        return value
    for segment in path.split("."):
        if isinstance(value, dict):
            if segment not in value:
                return MISSING
            value = value[segment]
        elif isinstance(value, list):
            try:
                value = value[int(segment)]
            except (ValueError, IndexError):
                return MISSING
        else:
            return MISSING
    return value


def as_int(value: Any) -> int | None:
    """An integer, a whole float or a string of a (signed) integer; None for anything else,
    a boolean included."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and value.strip().removeprefix("-").isdigit():
        return int(value.strip())
    return None


def text_at(raw: Any, path: str | None) -> str | None:
    """The value at ``path`` as text; None when no path is configured, or it finds nothing,
    null or an empty string."""
    if path is None:
        return None
    value = resolve(raw, path)
    if value is MISSING or value is None or value == "":
        return None
    return str(value)


def int_at(raw: Any, path: str | None) -> int | None:
    """The integer at ``path`` (:func:`as_int`); None when no path is configured."""
    return None if path is None else as_int(resolve(raw, path))


def describe(value: Any) -> str:
    """What a path found, for an error message: "nothing", "null" or the JSON type."""
    if value is MISSING:
        return "nothing"
    return "null" if value is None else type(value).__name__
