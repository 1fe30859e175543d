"""An in-process retrieval function ``"pkg.mod:func"``, called ``func(query, k, **options)``.

The function returns a list of ``RetrievedItem`` or of dicts with ``RetrievedItem``'s field
names (``rank`` optional: the list position by default). Whatever it raises is recorded as
an ``adapter`` error on the run.
"""

from __future__ import annotations

import dataclasses
import importlib
import time
from collections.abc import Callable
from typing import Any, Literal

from pydantic import Field

from pytest_ragv2.systems.base import timed_retrieval
from pytest_ragv2.systems.config import RetrievalAdapterConfig
from pytest_ragv2.systems.failure import AdapterFailure
from pytest_ragv2.systems.outputs import Exchange, RetrievalResult, RetrievedItem

RetrieveFunction = Callable[..., Any]

_ITEM_FIELDS = frozenset(field.name for field in dataclasses.fields(RetrievedItem))


class PythonRetrieval(RetrievalAdapterConfig):
    """An in-process function ``func(query, k, **options)``, named ``"pkg.mod:func"``."""

    adapter: Literal["python"]
    callable: str = Field(pattern=r"^[\w.]+:[\w.]+$", description='"pkg.mod:func"')
    options: dict[str, Any] = Field(default_factory=dict)


class PythonRetriever:
    higher_score_is_better = True

    def __init__(self, name: str, config: PythonRetrieval) -> None:
        self.name = name
        self.config = config
        self._function: RetrieveFunction | None = None
        self._import_error: str | None = None

    def retrieve(self, query: str, k: int) -> RetrievalResult:
        return timed_retrieval(lambda exchanges: self._retrieve(query, k, exchanges))

    def close(self) -> None:
        pass

    def _retrieve(self, query: str, k: int, exchanges: list[Exchange]) -> list[RetrievedItem]:
        function = self._load()
        request = {
            "callable": self.config.callable,
            "query": query,
            "k": k,
            "options": self.config.options,
        }
        exchange = Exchange(request=request, status_code=None, response_body=None, latency_s=0.0)
        exchanges.append(exchange)
        started = time.perf_counter()
        try:
            returned = function(query, k, **self.config.options)
        except Exception as exc:
            raise AdapterFailure(
                "adapter", f"{self.config.callable} raised {type(exc).__name__}: {exc}"
            ) from None
        finally:
            exchange.latency_s = time.perf_counter() - started
        items = to_items(returned, self.config.callable)[:k]
        exchange.response_body = [item.to_json() for item in items]
        return items

    def _load(self) -> RetrieveFunction:
        """Import the function on first use; an import failure is remembered, not retried."""
        if self._function is not None:
            return self._function
        if self._import_error is None:
            try:
                self._function = import_callable(self.config.callable)
                return self._function
            except Exception as exc:
                self._import_error = (
                    f"cannot load {self.config.callable}: {type(exc).__name__}: {exc}"
                )
        raise AdapterFailure("adapter", self._import_error)


def import_callable(spec: str) -> RetrieveFunction:
    """``"pkg.mod:attr.attr"`` -> the object it names, which must be callable."""
    module_name, _, attribute_path = spec.partition(":")
    target: Any = importlib.import_module(module_name)
    for attribute in attribute_path.split("."):
        target = getattr(target, attribute)
    if not callable(target):
        raise TypeError(f"{spec} is a {type(target).__name__}, not a callable")
    function: RetrieveFunction = target
    return function


def callable_problem(spec: str) -> str | None:
    """Why ``spec`` names no callable this process can import, or None."""
    try:
        import_callable(spec)
    except Exception as exc:  # whatever the import raises: the module is the user's
        if isinstance(exc, ImportError):
            return f"{spec} cannot be imported: {type(exc).__name__}: {exc}"
        if isinstance(exc, AttributeError):
            module, _, path = spec.partition(":")
            return f"{spec} cannot be imported: {module} has no attribute {path}"
        return f"{spec} cannot be loaded: {type(exc).__name__}: {exc}"
    return None


def to_items(returned: Any, spec: str) -> list[RetrievedItem]:
    """The function's answer as items; anything else is a malformed answer."""
    if not isinstance(returned, list | tuple):
        raise AdapterFailure(
            "malformed", f"{spec} returned {type(returned).__name__}, not a list of items"
        )
    items: list[RetrievedItem] = []
    for position, entry in enumerate(returned, start=1):
        if isinstance(entry, RetrievedItem):
            items.append(entry)
        elif isinstance(entry, dict):
            items.append(_item_from_dict(entry, position, spec))
        else:
            raise AdapterFailure(
                "malformed", f"{spec}: item {position} is a {type(entry).__name__}"
            )
    return items


def _item_from_dict(entry: dict[str, Any], position: int, spec: str) -> RetrievedItem:
    unknown = sorted(set(entry) - _ITEM_FIELDS)
    if unknown:
        raise AdapterFailure("malformed", f"{spec}: item {position} has unknown keys {unknown}")
    if not isinstance(entry.get("text"), str):
        raise AdapterFailure("malformed", f"{spec}: item {position} has no text string")
    return RetrievedItem(**{"rank": position, **entry})
