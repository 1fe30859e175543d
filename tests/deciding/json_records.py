"""The deciding functions over records written as their JSON (as the tests here build them),
each record read once as the controller reads a report's (``as_record``)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from pytest_ragv2.deciding import aggregate as _aggregate
from pytest_ragv2.deciding import decision as _decision
from pytest_ragv2.deciding.records import RunRecord, as_record
from pytest_ragv2.deciding.results import SessionResults, SystemRow


def read(records: Iterable[RunRecord | Mapping[str, Any]]) -> list[RunRecord]:
    return [as_record(record) for record in records]


def aggregate(records: Iterable[RunRecord | Mapping[str, Any]], **options: Any) -> SessionResults:
    return _aggregate.aggregate(read(records), **options)


def summarize(records: Iterable[RunRecord | Mapping[str, Any]], **options: Any) -> SystemRow:
    return _aggregate.summarize(read(records), **options)


def decide(records: Iterable[RunRecord | Mapping[str, Any]], **options: Any) -> _decision.Decision:
    return _decision.decide(read(records), **options)
