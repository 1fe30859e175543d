"""Configuration errors located at ``file:line``, with a did-you-mean for unknown keys.

pydantic names the dotted field of a bad value; this module finds the line that wrote it.
A YAML file keeps its node tree (``located_yaml``); ``tomllib`` keeps no positions, so a
TOML file is scanned for its table headers and keys (inline tables and multi-line arrays
are located at the key that opens them). The model is walked along the error's location
to drop pydantic's union tags (``http-json``) from the shown path and to name the keys an
unknown one was probably meant to be.
"""

from __future__ import annotations

import difflib
import re
import types
import typing
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ValidationError

Loc = tuple[str | int, ...]

_TOML_KEY_PART = r"""[A-Za-z0-9_-]+|"(?:[^"\\]|\\.)*"|'[^']*'"""
_TOML_DOTTED = rf"(?:{_TOML_KEY_PART})(?:\s*\.\s*(?:{_TOML_KEY_PART}))*"
_TOML_HEADER = re.compile(rf"^\s*\[\[?\s*({_TOML_DOTTED})\s*\]\]?\s*(?:#.*)?$")
_TOML_ASSIGN = re.compile(rf"^\s*({_TOML_DOTTED})\s*=")


def _toml_parts(dotted: str) -> tuple[str, ...]:
    return tuple(part.strip("\"'") for part in re.findall(_TOML_KEY_PART, dotted))


def toml_key_lines(text: str) -> list[tuple[tuple[str, ...], int]]:
    """Every table header and key of a TOML text as (full key path, 1-based line)."""
    found: list[tuple[tuple[str, ...], int]] = []
    table: tuple[str, ...] = ()
    in_string: str | None = None  # the delimiter of the multi-line string being read
    for number, line in enumerate(text.splitlines(), start=1):
        if in_string is not None:
            if line.count(in_string) % 2 == 1:
                in_string = None
            continue
        header = _TOML_HEADER.match(line)
        if header:
            table = _toml_parts(header.group(1))
            found.append((table, number))
            continue
        key = _TOML_ASSIGN.match(line)
        if key:
            found.append(((*table, *_toml_parts(key.group(1))), number))
            rest = line[key.end() :]
            for delimiter in ('"""', "'''"):
                if rest.count(delimiter) % 2 == 1:
                    in_string = delimiter
    return found


def toml_line(entries: Sequence[tuple[tuple[str, ...], int]], target: Sequence[str]) -> int | None:
    """The line of the key or table closest to ``target``: the deepest one on its path, or
    the first below it (a misspelt table is located at its header)."""
    best: tuple[int, int] | None = None  # (score, line)
    target = tuple(target)
    for path, line in entries:
        if target[: len(path)] == path:
            score = len(path)
        elif path[: len(target)] == target:
            score = len(target)
        else:
            continue
        if best is None or score > best[0]:
            best = (score, line)
    return best[1] if best else None


def yaml_line(path: Path, target: Sequence[str]) -> int | None:
    """The line of the deepest node on ``target`` in a YAML configuration (top level, or
    below a ``ragv2:`` key)."""
    from pytest_ragv2.config.located_yaml import YamlProblem, child_node, node_line, parse_yaml

    try:
        root = parse_yaml(path).root
    except YamlProblem:
        return None
    if root is None:
        return None
    below = child_node(root, "ragv2")
    node, line = (below[0], below[1]) if below else (root, node_line(root))
    for key in target:
        found = child_node(node, key)
        if found is None:
            break
        node, line = found
    return line


def config_location(path: Path | None, keys: Sequence[str]) -> str:
    """``file:line`` of the key at ``keys`` in a configuration file (the file alone when the
    key is not written there; "configuration" with no file)."""
    if path is None:
        return "configuration"
    line: int | None
    if path.suffix == ".toml":
        try:
            entries = toml_key_lines(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError):
            return str(path)
        line = toml_line(entries, ["tool", "ragv2", *keys])
    else:
        line = yaml_line(path, keys)
    return f"{path}:{line}" if line is not None else str(path)


@dataclass(frozen=True, slots=True)
class _Walked:
    shown: list[str | int]  # the field path without pydantic's union tags
    siblings: list[str]  # the keys the mapping holding the last part knows (for hints)


def _members(annotation: Any) -> list[Any]:
    """The alternatives of an annotation, Optional, unions and Annotated unwrapped."""
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _members(typing.get_args(annotation)[0])
    if origin is typing.Union or origin is types.UnionType:
        return [member for arg in typing.get_args(annotation) for member in _members(arg)]
    return [] if annotation is type(None) else [annotation]


def _models(candidates: Sequence[Any]) -> list[type[BaseModel]]:
    return [c for c in candidates if isinstance(c, type) and issubclass(c, BaseModel)]


def _tag_of(model: type[BaseModel]) -> tuple[str, ...]:
    field = model.model_fields.get("adapter")
    if field is None or typing.get_origin(field.annotation) is not Literal:
        return ()
    return tuple(str(arg) for arg in typing.get_args(field.annotation))


def walk(model: type[BaseModel], loc: Loc) -> _Walked:
    """Follow ``loc`` through ``model``: the shown path and the keys known at its end."""
    candidates: list[Any] = [model]
    shown: list[str | int] = []
    siblings: list[str] = list(model.model_fields)
    for key in loc:
        models = _models(candidates)
        siblings = sorted({name for m in models for name in m.model_fields})
        if isinstance(key, str):
            owner = next((m for m in models if key in m.model_fields), None)
            if owner is not None:
                shown.append(key)
                candidates = _members(owner.model_fields[key].annotation)
                continue
            tagged = [m for m in models if key in _tag_of(m)]
            if tagged:  # a discriminated union's tag: narrows, is not a key of the file
                candidates = tagged
                siblings = list(tagged[0].model_fields)
                continue
            mappings = [c for c in candidates if typing.get_origin(c) in (dict, Mapping)]
            if mappings:
                shown.append(key)
                candidates = _members(typing.get_args(mappings[0])[1])
                continue
            if not models and candidates and key in {_type_name(c) for c in candidates}:
                continue  # a plain union's member tag ("str", "int")
            shown.append(key)
            candidates = []
        else:
            shown.append(key)
            sequences = [c for c in candidates if typing.get_origin(c) in (list, tuple)]
            candidates = _members(typing.get_args(sequences[0])[0]) if sequences else []
    return _Walked(shown, siblings)


def _type_name(annotation: Any) -> str:
    origin = typing.get_origin(annotation) or annotation
    return getattr(origin, "__name__", str(origin))


def render(parts: Sequence[str | int]) -> str:
    rendered = ""
    for part in parts:
        rendered += f"[{part}]" if isinstance(part, int) else (f".{part}" if rendered else part)
    return rendered


def did_you_mean(name: str, known: Sequence[str]) -> str:
    close = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
    if close:
        return f" (did you mean '{close[0]}'?)"
    if known and len(known) <= 12:
        return f" (known: {', '.join(known)})"
    return ""


def _message(error: Mapping[str, Any], walked: _Walked) -> str:
    kind = error["type"]
    if kind == "extra_forbidden":
        return "unknown key" + did_you_mean(str(walked.shown[-1]), walked.siblings)
    message = str(error["msg"])
    if kind in ("union_tag_invalid", "union_tag_not_found"):
        context = error.get("ctx") or {}
        tags = [tag.strip(" '") for tag in str(context.get("expected_tags", "")).split(",")]
        if kind == "union_tag_not_found":
            return f"no adapter given (adapters: {', '.join(tags)})"
        hint = did_you_mean(str(context.get("tag", "")), tags)
        return f"unknown adapter {context.get('tag')!r}{hint}"
    if kind == "value_error" and message.startswith("Value error, "):
        return message[len("Value error, ") :]
    value = error.get("input")
    if kind != "missing" and (isinstance(value, str | int | float | bool) or value is None):
        shown = repr(value)
        return f"{message} (got {shown if len(shown) <= 60 else shown[:57] + '...'})"
    return message


def settings_errors(
    exc: ValidationError,
    model: type[BaseModel],
    path: Path | None,
    from_option: Mapping[str, str],
) -> list[str]:
    """One located line per error: ``file:line: field.path: message``; a value given on the
    command line is named by its option (``from_option``: top-level key -> option)."""
    lines: list[tuple[int, str]] = []
    for error in exc.errors():
        loc: Loc = tuple(error["loc"])
        walked = walk(model, loc)
        shown = [*walked.shown, *(["adapter"] if error["type"] == "union_tag_invalid" else [])]
        target = [str(part) for part in shown]
        field = render(shown)
        top = str(loc[0]) if loc else ""
        where = from_option[top] if top in from_option else config_location(path, target)
        line = int(where.rpartition(":")[2]) if where.rpartition(":")[2].isdigit() else 0
        message = _message(error, walked)
        lines.append((line, f"{where}: {field}: {message}" if field else f"{where}: {message}"))
    return list(dict.fromkeys(text for _, text in sorted(lines, key=lambda pair: pair[0])))
