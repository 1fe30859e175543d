"""YAML with line numbers, and errors located at ``file:line``.

The loaders of case files, gold files and the allow-list share this: a parse that keeps the
YAML node tree beside the constructed data (each node keeps its start mark) and notes keys
written twice, and the translation of pydantic validation errors into :class:`CaseError`
entries naming the file, the 1-based line, the case and the field, so an editor can jump to
it. The node tree is walked only when an error has to be located, so a clean load stays
cheap.
"""

from __future__ import annotations

import difflib
import gc
import re
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, get_args

import yaml
from pydantic import BaseModel, ValidationError
from yaml.composer import Composer

from pytest_ragv2.config.inputs import CASE_FILE_MAX_BYTES, InputFileError, read_input_text

try:  # libyaml makes composing ~10x faster; the pure-Python loader behaves the same
    from yaml import CSafeLoader as _Loader
except ImportError:  # pragma: no cover - depends on how PyYAML was built
    from yaml import SafeLoader as _Loader  # type: ignore[assignment]


# --------------------------------------------------------------------------- located errors


@dataclass(frozen=True, slots=True)
class SourceLocation:
    path: Path
    line: int | None  # 1-based

    def __str__(self) -> str:
        return f"{self.path}:{self.line}" if self.line is not None else str(self.path)


@dataclass(frozen=True, slots=True)
class CaseError:
    path: Path
    line: int | None
    case_id: str | None
    field: str | None
    message: str

    def __str__(self) -> str:
        parts = [str(SourceLocation(self.path, self.line))]
        if self.case_id is not None:
            parts.append(f"case {self.case_id}")
        if self.field:
            parts.append(self.field)
        parts.append(self.message)
        return ": ".join(parts)


class CaseLoadError(ValueError):
    """An input that cannot be used at all; ``str()`` gives every located problem."""

    def __init__(self, errors: Sequence[CaseError]) -> None:
        self.errors = list(errors)
        super().__init__("\n".join(str(e) for e in self.errors))


# --------------------------------------------------------------------------- YAML with lines


class YamlProblem(Exception):
    def __init__(self, line: int | None, message: str) -> None:
        super().__init__(message)
        self.line = line
        self.message = message


Duplicate = tuple[yaml.Node, yaml.Node, yaml.Node]  # (mapping, first key, repeated key)


@dataclass(slots=True)
class YamlDocument:
    data: Any
    root: yaml.Node | None  # None for an empty document
    duplicates: list[Duplicate]
    # entries handed to ``parse_yaml``'s ``on_entry`` one by one (None: nothing streamed);
    # their list is empty in ``data`` and in the node tree
    streamed: int | None = None


# one entry of a streamed list: its data, its node, the keys written twice inside it
EntryHandler = Callable[[Any, yaml.Node, list[Duplicate]], None]


_STR_TAG = "tag:yaml.org,2002:str"
_SEQ_TAG = "tag:yaml.org,2002:seq"
_MAP_TAG = "tag:yaml.org,2002:map"
_MERGE_TAG = "tag:yaml.org,2002:merge"


class _LineLoader(_Loader):
    """The safe loader with a leaner implicit-tag resolver (it runs once per scalar)."""

    _by_first_char: ClassVar[dict[str | None, list[tuple[str, re.Pattern[str]]]]] = dict(
        _Loader.yaml_implicit_resolvers
    )
    _wildcard: ClassVar[list[tuple[str, re.Pattern[str]]]] = _by_first_char.get(None, [])

    def descend_resolver(self, current_node: Any, current_index: Any) -> None:
        pass  # no path resolvers are registered: skip their bookkeeping

    def ascend_resolver(self) -> None:
        pass

    def resolve(self, kind: type[yaml.Node], value: Any, implicit: Any) -> str:
        if kind is yaml.ScalarNode:
            if implicit[0]:
                for tag, regexp in self._by_first_char.get(value[:1], ()):
                    if regexp.match(value):
                        return tag
                for tag, regexp in self._wildcard:
                    if regexp.match(value):
                        return tag
            return _STR_TAG
        return _SEQ_TAG if kind is yaml.SequenceNode else _MAP_TAG


class _StreamingLoader(_LineLoader, Composer):
    """PyYAML's own composer methods over the C parser's events: a list can be composed
    one entry at a time (the C loader composes a whole document in one call)."""


def parse_yaml(
    path: Path,
    *,
    entries_of: str | None = None,
    on_entry: EntryHandler | None = None,
    limit: int = CASE_FILE_MAX_BYTES,
    what: str = "a case or gold file",
) -> YamlDocument:
    """The constructed data, the node tree it came from, and the keys written twice.

    With ``on_entry``, the entries of the document's list (a root list, or the list under
    the root mapping's key ``entries_of``) are composed, constructed and handed over one at
    a time, and dropped after: a file of 50,000 cases never holds its whole node tree
    (about 5.6 KB a case). A syntax error is raised as :class:`YamlProblem` whenever it is
    met, after the entries before it were handed over.

    The file is read only when it is a regular file of at most ``limit`` bytes, in UTF-8
    (:mod:`pytest_ragv2.config.inputs`); anything else is a :class:`YamlProblem` saying what it is
    (``what`` names the kind of file in the message of a larger one).
    """
    try:
        text = read_input_text(path, limit, what)
    except InputFileError as refused:
        plain = refused.missing or refused.line is not None  # "file not found", "not UTF-8…"
        message = refused.message if plain else f"not read: {refused.message}"
        raise YamlProblem(refused.line, message) from None
    loader = _StreamingLoader(text) if on_entry is not None else _LineLoader(text)
    # A load builds many small objects and frees none: cyclic GC passes only cost time here.
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        duplicates: list[Duplicate] = []
        if isinstance(loader, _StreamingLoader) and on_entry is not None:
            streamed = _Streamed(loader, entries_of, on_entry)
            node = streamed.single_node()
            if node is None:
                return YamlDocument(None, None, [])
            data = _construct(node, loader, {}, duplicates)
            return YamlDocument(data, node, duplicates, streamed.count)
        node = loader.get_single_node()
        if node is None:
            return YamlDocument(None, None, [])
        data = _construct(node, loader, {}, duplicates)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        problem = exc.problem or exc.context or "invalid YAML"
        if mark is None:
            raise YamlProblem(None, f"YAML syntax error: {problem}") from None
        raise YamlProblem(
            mark.line + 1, f"YAML syntax error: {problem} (column {mark.column + 1})"
        ) from None
    except yaml.YAMLError as exc:
        raise YamlProblem(None, f"YAML error: {exc}") from None
    finally:
        if gc_was_enabled:
            gc.enable()
        loader.dispose()
    return YamlDocument(data, node, duplicates)


class _Streamed:
    """One document composed as PyYAML's ``get_single_node`` does, but for the entries of
    its list, handed to ``on_entry`` as they are composed and kept nowhere."""

    def __init__(
        self, loader: _StreamingLoader, entries_of: str | None, on_entry: EntryHandler
    ) -> None:
        self._loader = loader
        self._entries_of = entries_of
        self._on_entry = on_entry
        self.count: int | None = None
        loader.anchors = {}

    def single_node(self) -> yaml.Node | None:
        loader: Any = self._loader  # PyYAML's stubs type events and nodes loosely
        loader.get_event()  # the stream's start
        node: yaml.Node | None = None
        if not loader.check_event(yaml.StreamEndEvent):
            loader.get_event()  # the document's start
            node = self._root()
            loader.get_event()  # the document's end
            loader.anchors = {}
        if not loader.check_event(yaml.StreamEndEvent):
            event = loader.get_event()
            raise yaml.composer.ComposerError(
                "expected a single document in the stream",
                node.start_mark if node is not None else None,
                "but found another document",
                event.start_mark,
            )
        loader.get_event()
        return node

    def _root(self) -> yaml.Node:
        loader: Any = self._loader  # PyYAML's stubs type events and nodes loosely
        if self._plain(yaml.SequenceStartEvent):
            return self._entries()
        if self._entries_of is None or not self._plain(yaml.MappingStartEvent):
            whole: yaml.Node = loader.compose_node(None, None)
            return whole
        start = loader.get_event()
        node = yaml.MappingNode(_MAP_TAG, [], start.start_mark, None, flow_style=start.flow_style)
        while not loader.check_event(yaml.MappingEndEvent):
            key = loader.compose_node(node, None)
            streams = (
                self.count is None
                and isinstance(key, yaml.ScalarNode)
                and key.tag == _STR_TAG
                and key.value == self._entries_of
                and self._plain(yaml.SequenceStartEvent)
            )
            node.value.append((key, self._entries() if streams else loader.compose_node(node, key)))
        node.end_mark = loader.get_event().end_mark
        return node

    def _plain(self, kind: type[yaml.Event]) -> bool:
        """The next event starts a collection of that kind, untagged and unanchored."""
        if not self._loader.check_event(kind):
            return False
        event: Any = self._loader.peek_event()
        return event.tag is None and event.anchor is None

    def _entries(self) -> yaml.SequenceNode:
        loader: Any = self._loader  # PyYAML's stubs type events and nodes loosely
        start = loader.get_event()
        node = yaml.SequenceNode(_SEQ_TAG, [], start.start_mark, None, flow_style=start.flow_style)
        built: dict[int, Any] = {}
        count = 0
        while not loader.check_event(yaml.SequenceEndEvent):
            entry = loader.compose_node(node, count)
            duplicates: list[Duplicate] = []
            self._on_entry(_construct(entry, loader, built, duplicates), entry, duplicates)
            count += 1
            # an alias may name an anchor of an earlier entry: its data is kept, nothing
            # else (a later node could reuse a dropped one's id)
            anchored = {id(anchor) for anchor in loader.anchors.values()}
            for built_id in [key for key in built if key not in anchored]:
                del built[built_id]
        node.end_mark = loader.get_event().end_mark
        self.count = count
        return node


def _construct(
    node: yaml.Node, loader: _LineLoader, built: dict[int, Any], duplicates: list[Duplicate]
) -> Any:
    """Python data of a node, as the safe constructor builds it, noting duplicate keys.

    PyYAML's constructor is generic and slow; plain strings, lists and mappings (nearly all
    of a case file) are built here directly, anything else is handed to it.
    """
    tag = node.tag
    if isinstance(node, yaml.ScalarNode):
        if tag == _STR_TAG:
            return node.value
        try:
            return loader.construct_object(node, deep=True)
        except ValueError as exc:  # a timestamp that is no date (2026-13-01), located
            raise yaml.constructor.ConstructorError(
                None, None, f"invalid value {node.value!r}: {exc}", node.start_mark
            ) from None
    if id(node) in built:  # an alias
        return built[id(node)]
    if isinstance(node, yaml.SequenceNode) and tag == _SEQ_TAG:
        items: list[Any] = []
        built[id(node)] = items
        items.extend(_construct(child, loader, built, duplicates) for child in node.value)
        return items
    if isinstance(node, yaml.MappingNode) and tag == _MAP_TAG:
        mapping: dict[Any, Any] = {}
        built[id(node)] = mapping
        merged: dict[Any, Any] = {}
        key_nodes: dict[Any, yaml.Node] = {}
        for key_node, value_node in node.value:
            if key_node.tag == _MERGE_TAG:
                merged = {**_merge_sources(value_node, loader, built, duplicates), **merged}
                continue
            key = _construct(key_node, loader, built, duplicates)
            if not isinstance(key, Hashable):
                raise yaml.constructor.ConstructorError(
                    "while constructing a mapping",
                    node.start_mark,
                    "found an unhashable key",
                    key_node.start_mark,
                )
            if key in key_nodes:
                duplicates.append((node, key_nodes[key], key_node))
            key_nodes[key] = key_node
            mapping[key] = _construct(value_node, loader, built, duplicates)
        if merged:
            mapping.update({k: v for k, v in merged.items() if k not in key_nodes})
        return mapping
    return loader.construct_object(node, deep=True)


def _merge_sources(
    node: yaml.Node, loader: _LineLoader, built: dict[int, Any], duplicates: list[Duplicate]
) -> dict[Any, Any]:
    """The mapping a ``<<`` key merges in (the first of a list of mappings wins)."""
    sources = node.value if isinstance(node, yaml.SequenceNode) else [node]
    merged: dict[Any, Any] = {}
    for source in reversed(sources):
        value = _construct(source, loader, built, duplicates)
        if not isinstance(value, dict):
            raise yaml.constructor.ConstructorError(
                "while constructing a mapping",
                node.start_mark,
                "expected a mapping or a list of mappings to merge",
                source.start_mark,
            )
        merged.update(value)
    return merged


def node_line(node: yaml.Node) -> int:
    return int(node.start_mark.line) + 1


def child_node(node: yaml.Node, key: str | int) -> tuple[yaml.Node, int] | None:
    """The child node at ``key`` and the line that names it (a mapping key's own line)."""
    if isinstance(node, yaml.MappingNode) and isinstance(key, str):
        found: tuple[yaml.Node, int] | None = None
        for key_node, value in node.value:  # the last one wins, as in the constructed data
            if isinstance(key_node, yaml.ScalarNode) and key_node.value == key:
                found = (value, node_line(key_node))
        return found
    if isinstance(node, yaml.SequenceNode) and isinstance(key, int) and 0 <= key < len(node.value):
        item = node.value[key]
        return item, node_line(item)
    return None


def _render_path(parts: Iterable[str | int]) -> str:
    rendered = ""
    for part in parts:
        if isinstance(part, int):
            rendered += f"[{part}]"
        else:
            rendered += f".{part}" if rendered else part
    return rendered


def locate(root: yaml.Node, loc: Sequence[str | int], line: int) -> tuple[list[str | int], int]:
    """The field path of a pydantic ``loc`` and the line of its deepest node found in the YAML.

    pydantic adds union member tags ("int", "str") to ``loc``; they are recognised as a
    string key met below a node that is not a mapping, and dropped from the field path.
    """
    node: yaml.Node | None = root
    parts: list[str | int] = []
    for key in loc:
        found = child_node(node, key) if node is not None else None
        if found is None:
            if isinstance(key, str) and node is not None and not isinstance(node, yaml.MappingNode):
                continue
            parts.append(key)
            node = None
            continue
        parts.append(key)
        node, line = found
    return parts, line


# --------------------------------------------------------------------------- pydantic errors


def _model_in(annotation: Any) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in get_args(annotation):
        model = _model_in(arg)
        if model is not None:
            return model
    return None


def _fields_at(model: type[BaseModel] | None, loc: Sequence[str | int]) -> list[str]:
    """The field names of the model found at ``loc`` below ``model`` (for typo hints)."""
    current = model
    for key in loc:
        if current is None:
            return []
        if isinstance(key, int):
            continue
        info = current.model_fields.get(key)
        if info is None:
            return []
        current = _model_in(info.annotation)
    return list(current.model_fields) if current is not None else []


def _describe(error: Mapping[str, Any], model: type[BaseModel] | None) -> tuple[str, str]:
    """The message of one pydantic error, and what the input was (empty when not useful)."""
    kind = error["type"]
    loc = tuple(error["loc"])
    if kind == "extra_forbidden":
        name = str(loc[-1]) if loc else ""
        close = difflib.get_close_matches(name, _fields_at(model, loc[:-1]), n=1, cutoff=0.7)
        hint = f" (did you mean '{close[0]}'?)" if close else ""
        return f"unknown field{hint}", ""
    message = str(error["msg"])
    if kind == "value_error" and message.startswith("Value error, "):
        return message[len("Value error, ") :], ""
    if kind == "missing":
        return message, ""
    value = error.get("input")
    if isinstance(value, str | int | float | bool) or value is None:
        shown = repr(value)
        return message, shown if len(shown) <= 60 else shown[:57] + "..."
    return message, f"a {type(value).__name__}"


def validation_errors(
    exc: ValidationError,
    root: yaml.Node,
    *,
    path: Path,
    case_id: str | None,
    prefix: Sequence[str | int] = (),
    model: type[BaseModel] | None = None,
) -> list[CaseError]:
    """One CaseError per distinct field path (union branches of one field are joined)."""
    merged: dict[str, tuple[int, list[str], str]] = {}
    for error in exc.errors():
        parts, line = locate(root, error["loc"], node_line(root))
        field_path = _render_path([*prefix, *parts])
        message, got = _describe(error, model)
        if field_path in merged:
            if message not in merged[field_path][1]:
                merged[field_path][1].append(message)
        else:
            merged[field_path] = (line, [message], got)
    return [
        CaseError(
            path,
            line,
            case_id,
            field_path or None,
            " or ".join(messages) + (f" (got {got})" if got else ""),
        )
        for field_path, (line, messages, got) in merged.items()
    ]


def duplicate_key_errors(
    root: yaml.Node, path: Path, case_id: str | None, duplicates: Sequence[Duplicate]
) -> list[CaseError]:
    if not duplicates:
        return []
    errors = []
    inside = _node_ids(root)
    for mapping, first, repeated in duplicates:
        if id(mapping) in inside:
            errors.append(
                CaseError(
                    path,
                    node_line(repeated),
                    case_id,
                    str(repeated.value),
                    f"duplicate key (first given at line {node_line(first)})",
                )
            )
    return errors


def _node_ids(root: yaml.Node) -> set[int]:
    ids: set[int] = set()
    stack = [root]
    while stack:
        node = stack.pop()
        if id(node) in ids:
            continue
        ids.add(id(node))
        if isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                stack.append(key)
                stack.append(value)
        elif isinstance(node, yaml.SequenceNode):
            stack.extend(node.value)
    return ids
