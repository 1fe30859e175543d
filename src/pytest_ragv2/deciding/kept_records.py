"""How a session keeps its records: their metrics compact, behind the controller's list.

A session keeps a record per run until the verdict (100,000 runs, in under 1 GiB), and a
dict of sixteen metrics is twice the bytes of the record around it. So the controller
keeps each record it takes through a :class:`RecordKeeper`, which stores the metrics as
:class:`CompactMetrics`: the values in a tuple, their names' positions in a dict every
record of the same shape shares, 1.0 and 0.0 as one float object each and an equal list
(the evidence hits, the leaked files) as one list. What every other module reads is the
record's plain ``Mapping`` of metrics; the sharing lives here, one keeper per session (no
process-wide cache), and a kept value is never changed.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterator, Mapping
from typing import Any

from pytest_ragv2.deciding.records import RunRecord, as_record

_SHAPES_KEPT = 256  # a session has a few shapes (one per layer and setting)
_LISTS_KEPT = 4096  # distinct list values kept once; more are kept as they are


class CompactMetrics(Mapping[str, Any]):
    """A record's metrics, read as a mapping (read-only: the values are shared)."""

    __slots__ = ("_index", "_values")

    def __init__(self, index: Mapping[str, int], values: tuple[Any, ...]) -> None:
        self._index = index
        self._values = values

    def __getitem__(self, name: str) -> Any:
        return self._values[self._index[name]]

    def get(self, name: str, default: Any = None) -> Any:
        position = self._index.get(name)
        return default if position is None else self._values[position]

    def __contains__(self, name: object) -> bool:
        return name in self._index

    def __iter__(self) -> Iterator[str]:
        return iter(self._index)

    def __len__(self) -> int:
        return len(self._values)

    def __repr__(self) -> str:
        return f"CompactMetrics({dict(self)!r})"

    def __reduce__(self) -> tuple[type[dict[str, Any]], tuple[dict[str, Any]]]:
        return dict, (dict(self),)  # pickled (and copied) as the plain dict it reads as


class RecordKeeper:
    """One session's records as it keeps them: :meth:`keep` a record or its JSON."""

    def __init__(self) -> None:
        self._shapes: dict[tuple[str, ...], dict[str, int]] = {}
        self._lists: dict[Any, list[Any]] = {}

    def keep(self, data: RunRecord | Mapping[str, Any]) -> RunRecord:
        """The record (read from its JSON when given that) with its metrics compact."""
        if not isinstance(data, RunRecord):
            return as_record(data, keep_metrics=self.metrics)
        if isinstance(data.metrics, CompactMetrics) or not data.metrics:
            return data
        return dataclasses.replace(data, metrics=self.metrics(data.metrics))

    def metrics(self, metrics: Mapping[str, Any]) -> CompactMetrics:
        names = tuple(metrics)
        index = self._shapes.get(names)
        if index is None:
            index = {name: position for position, name in enumerate(names)}
            if len(self._shapes) < _SHAPES_KEPT:
                self._shapes[names] = index
        return CompactMetrics(index, tuple([self._shared(value) for value in metrics.values()]))

    def _shared(self, value: Any) -> Any:
        """1.0 and 0.0 (most recalls, hits and rates) as one float object each; a list as
        the one list every record with an equal one holds; any other value as it is (-0.0
        keeps its sign)."""
        if type(value) is float:
            if value == 1.0:
                return 1.0
            if value == 0.0 and math.copysign(1.0, value) > 0.0:
                return 0.0
        elif type(value) is list:
            return self._shared_list(value)
        return value

    def _shared_list(self, value: list[Any]) -> list[Any]:
        try:
            key = _frozen(value)
            shared = self._lists.get(key)
        except TypeError:  # a value that cannot be a key: kept as it is
            return value
        if shared is None:
            shared = value
            if len(self._lists) < _LISTS_KEPT:
                self._lists[key] = value
        return shared


def _frozen(value: Any) -> Any:
    """A hashable key equal for equal JSON values (and only for them: the type is in it)."""
    kind = type(value)
    if kind is list:
        return (list, *[_frozen(item) for item in value])
    if kind is dict:
        return (dict, *[(name, _frozen(item)) for name, item in value.items()])
    if kind is float and value != value:
        raise TypeError("NaN is never equal to itself")
    hash(value)
    return (kind, value)
