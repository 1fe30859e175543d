"""Loading gold cases from YAML with errors located at ``file:line``, and the file allow-list.

A case file is either a list of cases or a mapping ``{split: development|holdout, cases: [...]}``.
Gold parts may live apart from the prompts: ``gold/answers.yaml`` maps a case id to its
expected answer, ``gold/evidence.yaml`` maps a case id to its list of required evidence.

Every problem becomes a :class:`CaseError` naming the file, the 1-based line, the case and the
field, so an editor can jump to it. A case with any error is left out of the loaded cases; the
other cases of its file, and the other files, still load. Nothing here raises on bad case or
gold input: the caller decides what errors mean (``ragv2 validate`` exits 1, the collector
reports them). Only :func:`load_allowlist` raises, because a run without a valid allow-list
cannot check leaks at all.

Line numbers come from the YAML node tree (each node keeps its start mark), kept beside the
constructed data and walked only when an error has to be located, so a clean load stays cheap.
"""

from __future__ import annotations

import difflib
import gc
import re
from collections.abc import Callable, Collection, Hashable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Generic, TypeVar, get_args

import yaml
from pydantic import BaseModel, RootModel, TypeAdapter, ValidationError

from pytest_ragv2.schema import Case, Evidence, ExpectedAnswer, Split, StrictModel

try:  # libyaml makes composing ~10x faster; the pure-Python loader behaves the same
    from yaml import CSafeLoader as _Loader
except ImportError:  # pragma: no cover - depends on how PyYAML was built
    from yaml import SafeLoader as _Loader  # type: ignore[assignment]

CASE_FILE_SUFFIXES = (".yaml", ".yml")
GOLD_ANSWERS_FILE = "answers.yaml"
GOLD_EVIDENCE_FILE = "evidence.yaml"
SPLITS: tuple[Split, ...] = ("development", "holdout")
JSON_SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"

_EVIDENCE_LIST: TypeAdapter[list[Evidence]] = TypeAdapter(list[Evidence])
_SHA256 = re.compile(r"^[0-9a-f]{64}$")
_T = TypeVar("_T")


# --------------------------------------------------------------------------- public types


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


@dataclass(frozen=True, slots=True)
class LoadedCase:
    case: Case  # gold answers/evidence merged in, ``prompts`` holding every language
    split: Split
    location: SourceLocation
    # Where each evidence entry was written ("required_evidence[0]",
    # "turns[1].required_evidence[0]"): in the case file, or in the gold file it came from.
    evidence_locations: Mapping[str, SourceLocation] = field(
        default_factory=dict, compare=False, hash=False
    )

    @property
    def case_id(self) -> str:
        return self.case.id


@dataclass(slots=True)
class CaseFile:
    """The result of loading one case file."""

    path: Path
    split: Split
    cases: list[LoadedCase]
    errors: list[CaseError]
    # Every case id written in the file (also of cases that failed), with its location.
    case_ids: dict[str, SourceLocation] = field(default_factory=dict)
    readable: bool = True  # False when the file could not be read or parsed at all


@dataclass(slots=True)
class Catalog:
    files: list[CaseFile]
    gold_errors: list[CaseError]
    gold_files: list[Path]
    # Errors not tied to one file (missing cases directory, no case file found).
    catalog_errors: list[CaseError] = field(default_factory=list)

    def cases(self, splits: Collection[str] = SPLITS) -> list[LoadedCase]:
        return [c for f in self.files if f.split in splits for c in f.cases]

    @property
    def errors(self) -> list[CaseError]:
        """All errors, in file order: case files (sorted), then gold files."""
        found = list(self.catalog_errors)
        for case_file in self.files:
            found.extend(case_file.errors)
        found.extend(self.gold_errors)
        return found

    def find(self, case_id: str) -> LoadedCase | None:
        for case_file in self.files:
            for loaded in case_file.cases:
                if loaded.case.id == case_id:
                    return loaded
        return None


class CaseLoadError(ValueError):
    """An input that cannot be used at all; ``str()`` gives every located problem."""

    def __init__(self, errors: Sequence[CaseError]) -> None:
        self.errors = list(errors)
        super().__init__("\n".join(str(e) for e in self.errors))


@dataclass(frozen=True, slots=True)
class AllowedFile:
    file_id: str
    filename: str
    sha256: str | None


@dataclass(frozen=True, slots=True)
class Allowlist:
    files: tuple[AllowedFile, ...]

    @property
    def file_ids(self) -> frozenset[str]:
        return frozenset(f.file_id for f in self.files)

    @property
    def filenames(self) -> frozenset[str]:
        return frozenset(f.filename for f in self.files)

    def filename_by_file_id(self) -> dict[str, str]:
        return {f.file_id: f.filename for f in self.files}


@dataclass(frozen=True, slots=True)
class GoldEntry(Generic[_T]):
    """One gold part of one case; ``value`` is None when the entry is invalid."""

    case_id: str
    value: _T | None
    location: SourceLocation
    item_locations: tuple[SourceLocation, ...] = ()


@dataclass(slots=True)
class Gold:
    answers: dict[str, GoldEntry[ExpectedAnswer]] = field(default_factory=dict)
    evidence: dict[str, GoldEntry[list[Evidence]]] = field(default_factory=dict)
    errors: list[CaseError] = field(default_factory=list)
    files: list[Path] = field(default_factory=list)


# --------------------------------------------------------------------------- YAML with lines


class _YamlProblem(Exception):
    def __init__(self, line: int | None, message: str) -> None:
        super().__init__(message)
        self.line = line
        self.message = message


_Duplicate = tuple[yaml.Node, yaml.Node, yaml.Node]  # (mapping, first key, repeated key)


@dataclass(slots=True)
class _Document:
    data: Any
    root: yaml.Node | None  # None for an empty document
    duplicates: list[_Duplicate]


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


def _parse_yaml(path: Path) -> _Document:
    """The constructed data, the node tree it came from, and the keys written twice."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise _YamlProblem(None, "file not found") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise _YamlProblem(None, f"cannot read file: {exc}") from None
    loader = _LineLoader(text)
    # A load builds many small objects and frees none: cyclic GC passes only cost time here.
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        node = loader.get_single_node()
        if node is None:
            return _Document(None, None, [])
        duplicates: list[_Duplicate] = []
        data = _construct(node, loader, {}, duplicates)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        problem = exc.problem or exc.context or "invalid YAML"
        if mark is None:
            raise _YamlProblem(None, f"YAML syntax error: {problem}") from None
        raise _YamlProblem(
            mark.line + 1, f"YAML syntax error: {problem} (column {mark.column + 1})"
        ) from None
    except yaml.YAMLError as exc:
        raise _YamlProblem(None, f"YAML error: {exc}") from None
    finally:
        if gc_was_enabled:
            gc.enable()
        loader.dispose()
    return _Document(data, node, duplicates)


def _construct(
    node: yaml.Node, loader: _LineLoader, built: dict[int, Any], duplicates: list[_Duplicate]
) -> Any:
    """Python data of a node, as the safe constructor builds it, noting duplicate keys.

    PyYAML's constructor is generic and slow; plain strings, lists and mappings (nearly all
    of a case file) are built here directly, anything else is handed to it.
    """
    tag = node.tag
    if isinstance(node, yaml.ScalarNode):
        return node.value if tag == _STR_TAG else loader.construct_object(node, deep=True)
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
    node: yaml.Node, loader: _LineLoader, built: dict[int, Any], duplicates: list[_Duplicate]
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


def _line(node: yaml.Node) -> int:
    return int(node.start_mark.line) + 1


def _child(node: yaml.Node, key: str | int) -> tuple[yaml.Node, int] | None:
    """The child node at ``key`` and the line that names it (a mapping key's own line)."""
    if isinstance(node, yaml.MappingNode) and isinstance(key, str):
        found: tuple[yaml.Node, int] | None = None
        for key_node, value in node.value:  # the last one wins, as in the constructed data
            if isinstance(key_node, yaml.ScalarNode) and key_node.value == key:
                found = (value, _line(key_node))
        return found
    if isinstance(node, yaml.SequenceNode) and isinstance(key, int) and 0 <= key < len(node.value):
        item = node.value[key]
        return item, _line(item)
    return None


def _render_path(parts: Iterable[str | int]) -> str:
    rendered = ""
    for part in parts:
        if isinstance(part, int):
            rendered += f"[{part}]"
        else:
            rendered += f".{part}" if rendered else part
    return rendered


def _locate(root: yaml.Node, loc: Sequence[str | int], line: int) -> tuple[list[str | int], int]:
    """The field path of a pydantic ``loc`` and the line of its deepest node found in the YAML.

    pydantic adds union member tags ("int", "str") to ``loc``; they are recognised as a
    string key met below a node that is not a mapping, and dropped from the field path.
    """
    node: yaml.Node | None = root
    parts: list[str | int] = []
    for key in loc:
        found = _child(node, key) if node is not None else None
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


def _validation_errors(
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
        parts, line = _locate(root, error["loc"], _line(root))
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


def _duplicate_key_errors(
    root: yaml.Node, path: Path, case_id: str | None, duplicates: Sequence[_Duplicate]
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
                    _line(repeated),
                    case_id,
                    str(repeated.value),
                    f"duplicate key (first given at line {_line(first)})",
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


# --------------------------------------------------------------------------- allow-list


def load_allowlist(path: Path) -> Allowlist:
    """``files: [{file_id, filename, sha256}]`` (or the bare list). Raises CaseLoadError."""
    try:
        document = _parse_yaml(path)
    except _YamlProblem as problem:
        raise CaseLoadError([CaseError(path, problem.line, None, None, problem.message)]) from None
    data, root = document.data, document.root
    errors: list[CaseError] = []
    entries_node: yaml.Node | None = root
    if isinstance(data, dict) and root is not None:
        unknown = sorted(str(k) for k in data if k != "files")
        for key in unknown:
            found = _child(root, key)
            errors.append(CaseError(path, found[1] if found else 1, None, key, "unknown field"))
        found_files = _child(root, "files")
        entries_node = found_files[0] if found_files else None
        data = data.get("files")
    if not isinstance(data, list) or entries_node is None:
        line = _line(entries_node) if entries_node is not None else 1
        errors.append(
            CaseError(path, line, None, "files", "expected a list of {file_id, filename, sha256}")
        )
        raise CaseLoadError(errors)
    files: list[AllowedFile] = []
    first_id: dict[str, int] = {}
    first_name: dict[str, int] = {}
    for index, (entry, node) in enumerate(zip(data, entries_node.value, strict=True)):
        where = f"files[{index}]"
        line = _line(node)
        if not isinstance(entry, dict):
            errors.append(CaseError(path, line, None, where, "expected a mapping"))
            continue
        problems: list[tuple[str, str]] = []
        for key in entry:
            if key not in ("file_id", "filename", "sha256"):
                problems.append((str(key), "unknown field"))
        file_id, filename, sha256 = entry.get("file_id"), entry.get("filename"), entry.get("sha256")
        if not isinstance(file_id, str) or not file_id:
            problems.append(("file_id", "a non-empty string is required"))
        if not isinstance(filename, str) or not filename:
            problems.append(("filename", "a non-empty string is required"))
        if sha256 is not None and not (isinstance(sha256, str) and _SHA256.match(sha256)):
            problems.append(("sha256", "expected 64 lowercase hex digits"))
        for key, message in problems:
            found = _child(node, key)
            errors.append(
                CaseError(path, found[1] if found else line, None, f"{where}.{key}", message)
            )
        for key, value, first in (
            ("file_id", file_id, first_id),
            ("filename", filename, first_name),
        ):
            if not isinstance(value, str):
                continue
            if value in first:
                problems.append((key, f"{value!r} already listed at line {first[value]}"))
                found = _child(node, key)
                errors.append(
                    CaseError(
                        path,
                        found[1] if found else line,
                        None,
                        f"{where}.{key}",
                        f"{value!r} already listed at line {first[value]}",
                    )
                )
            else:
                first[value] = line
        if not problems and isinstance(file_id, str) and isinstance(filename, str):
            files.append(AllowedFile(file_id, filename, sha256))
    if errors:
        raise CaseLoadError(sorted(errors, key=lambda e: e.line or 0))
    return Allowlist(tuple(files))


def evidence_allowlist_problem(
    evidence: Evidence, allowed: Allowlist, filename_by_id: Mapping[str, str] | None = None
) -> str | None:
    """Why this evidence entry names a file outside the allow-list, or None when it is fine."""
    by_id = filename_by_id if filename_by_id is not None else allowed.filename_by_file_id()
    if evidence.file_id is not None:
        listed = by_id.get(evidence.file_id)
        if listed is None:
            return f"file_id {evidence.file_id!r} is not in the allow-list"
        if evidence.filename is not None and evidence.filename != listed:
            return (
                f"file_id {evidence.file_id!r} is allow-listed as {listed!r}, "
                f"not {evidence.filename!r}"
            )
        return None
    if evidence.filename is not None and evidence.filename not in set(by_id.values()):
        return f"filename {evidence.filename!r} is not in the allow-list"
    return None


# --------------------------------------------------------------------------- gold


def load_gold(gold_dir: Path | None, allowlist: Allowlist | None = None) -> Gold:
    """Read ``answers.yaml`` and ``evidence.yaml`` of ``gold_dir`` (each optional)."""
    gold = Gold()
    if gold_dir is None:
        return gold
    by_id = allowlist.filename_by_file_id() if allowlist is not None else None
    answers_path = gold_dir / GOLD_ANSWERS_FILE
    if answers_path.is_file():
        gold.files.append(answers_path)
        for case_id, answer, _, location in _validated_gold_entries(
            answers_path,
            gold.errors,
            ExpectedAnswer.model_validate,
            "expected_answer",
            ExpectedAnswer,
        ):
            gold.answers[case_id] = GoldEntry(case_id, answer, location)
    evidence_path = gold_dir / GOLD_EVIDENCE_FILE
    if evidence_path.is_file():
        gold.files.append(evidence_path)
        for case_id, evidence, node, location in _validated_gold_entries(
            evidence_path,
            gold.errors,
            _EVIDENCE_LIST.validate_python,
            "required_evidence",
            Evidence,
        ):
            if evidence is None:
                gold.evidence[case_id] = GoldEntry(case_id, None, location)
                continue
            assert isinstance(node, yaml.SequenceNode)
            item_locations = tuple(SourceLocation(evidence_path, _line(n)) for n in node.value)
            problems = []
            if by_id is not None and allowlist is not None:
                for index, item in enumerate(evidence):
                    problem = evidence_allowlist_problem(item, allowlist, by_id)
                    if problem is not None:
                        problems.append(
                            CaseError(
                                evidence_path,
                                item_locations[index].line,
                                case_id,
                                f"required_evidence[{index}]",
                                problem,
                            )
                        )
            gold.errors.extend(problems)
            gold.evidence[case_id] = GoldEntry(
                case_id, None if problems else evidence, location, item_locations
            )
    return gold


def _validated_gold_entries(
    path: Path,
    errors: list[CaseError],
    validate: Callable[[Any], _T],
    prefix: str,
    model: type[BaseModel],
) -> Iterator[tuple[str, _T | None, yaml.Node, SourceLocation]]:
    """Each entry of a gold file, validated; None (and located errors) when it is invalid."""
    for case_id, value, node, location in _gold_entries(path, errors):
        validated: _T | None = None
        try:
            validated = validate(value)
        except ValidationError as exc:
            errors.extend(
                _validation_errors(
                    exc, node, path=path, case_id=case_id, prefix=(prefix,), model=model
                )
            )
        yield case_id, validated, node, location


def _gold_entries(
    path: Path, errors: list[CaseError]
) -> Iterator[tuple[str, Any, yaml.Node, SourceLocation]]:
    """(case id, raw value, value node, location) for each entry of a gold file."""
    try:
        document = _parse_yaml(path)
    except _YamlProblem as problem:
        errors.append(CaseError(path, problem.line, None, None, problem.message))
        return
    data, root, duplicates = document.data, document.root, document.duplicates
    if root is None or data is None:
        return
    if not isinstance(root, yaml.MappingNode) or not isinstance(data, dict):
        errors.append(
            CaseError(path, _line(root), None, None, "expected a mapping: case id → gold")
        )
        return
    first_line: dict[str, int] = {}
    for key_node, value_node in root.value:
        line = _line(key_node)
        case_id = key_node.value if isinstance(key_node, yaml.ScalarNode) else None
        if not isinstance(case_id, str) or not case_id or case_id not in data:
            errors.append(
                CaseError(path, line, None, None, "a gold entry needs a case id (a string) as key")
            )
            continue
        if case_id in first_line:
            errors.append(
                CaseError(
                    path,
                    line,
                    case_id,
                    None,
                    f"{case_id} already has a gold entry at {path}:{first_line[case_id]}",
                )
            )
            continue
        first_line[case_id] = line
        entry_errors = _duplicate_key_errors(value_node, path, case_id, duplicates)
        if entry_errors:
            errors.extend(entry_errors)
            continue
        yield case_id, data[case_id], value_node, SourceLocation(path, line)


# --------------------------------------------------------------------------- case files


def split_from_name(path: Path) -> Split:
    return "holdout" if "holdout" in path.stem.lower() else "development"


def load_case_file(
    path: Path,
    gold: Gold | None = None,
    *,
    known_ids: dict[str, SourceLocation] | None = None,
    allowlist: Allowlist | None = None,
) -> CaseFile:
    """Load one case file, merging ``gold`` in.

    ``known_ids`` holds the ids defined by earlier files (id → location); it is read to
    report duplicates across files and extended with this file's ids.
    """
    result = _load_case_file(path, gold, known_ids, allowlist)
    result.errors.sort(key=lambda e: e.line or 0)
    return result


def _load_case_file(
    path: Path,
    gold: Gold | None,
    known_ids: dict[str, SourceLocation] | None,
    allowlist: Allowlist | None,
) -> CaseFile:
    gold = gold if gold is not None else Gold()
    known_ids = known_ids if known_ids is not None else {}
    result = CaseFile(path, split_from_name(path), [], [])
    try:
        document = _parse_yaml(path)
    except _YamlProblem as problem:
        result.errors.append(CaseError(path, problem.line, None, None, problem.message))
        result.readable = False
        return result
    data, root, duplicates = document.data, document.root, document.duplicates
    if root is None or data is None:
        return result
    cases_node: yaml.Node | None = root
    if isinstance(data, dict):
        data, cases_node = _unwrap_mapping_form(path, data, root, result)
        if cases_node is None:
            return result
    if not isinstance(data, list) or not isinstance(cases_node, yaml.SequenceNode):
        result.errors.append(
            CaseError(path, _line(root), None, None, "expected a list of cases or {split, cases}")
        )
        return result
    by_id = allowlist.filename_by_file_id() if allowlist is not None else None
    for raw, node in zip(data, cases_node.value, strict=True):
        loaded = _load_case(path, raw, node, result, gold, known_ids, duplicates, allowlist, by_id)
        if loaded is not None:
            result.cases.append(loaded)
    return result


def _unwrap_mapping_form(
    path: Path, data: dict[Any, Any], root: yaml.Node, result: CaseFile
) -> tuple[Any, yaml.Node | None]:
    for key in data:
        if key not in ("split", "cases"):
            found = _child(root, str(key))
            line = found[1] if found else _line(root)
            result.errors.append(
                CaseError(path, line, None, str(key), "unknown field (expected split and cases)")
            )
    if "split" in data:
        split = data["split"]
        if split in SPLITS:
            result.split = split
        else:
            found = _child(root, "split")
            result.errors.append(
                CaseError(
                    path,
                    found[1] if found else _line(root),
                    None,
                    "split",
                    f"expected one of {', '.join(SPLITS)} (got {split!r})",
                )
            )
    found_cases = _child(root, "cases")
    if found_cases is None:
        result.errors.append(CaseError(path, _line(root), None, "cases", "Field required"))
        return None, None
    return data["cases"], found_cases[0]


def _load_case(
    path: Path,
    raw: Any,
    node: yaml.Node,
    result: CaseFile,
    gold: Gold,
    known_ids: dict[str, SourceLocation],
    duplicates: Sequence[_Duplicate],
    allowlist: Allowlist | None,
    filename_by_id: Mapping[str, str] | None,
) -> LoadedCase | None:
    line = _line(node)
    location = SourceLocation(path, line)
    if not isinstance(raw, dict):
        result.errors.append(
            CaseError(
                path, line, None, None, f"a case must be a mapping (got {type(raw).__name__})"
            )
        )
        return None
    raw_id = raw.get("id")
    case_id = raw_id if isinstance(raw_id, str) and raw_id else None
    errors = _duplicate_key_errors(node, path, case_id, duplicates)

    if case_id is not None:
        earlier = known_ids.get(case_id)
        if earlier is not None:
            errors.append(
                CaseError(path, line, case_id, "id", f"{case_id} already defined at {earlier}")
            )
        else:
            known_ids[case_id] = location
            result.case_ids[case_id] = location

    for short, lang in (("prompt_en", "en"), ("prompt_de", "de")):
        prompts = raw.get("prompts")
        if (
            isinstance(prompts, dict)
            and raw.get(short) is not None
            and prompts.get(lang) is not None
            and prompts[lang] != raw[short]
        ):
            found = _child(node, short)
            errors.append(
                CaseError(
                    path,
                    found[1] if found else line,
                    case_id,
                    short,
                    f"{short} and prompts.{lang} differ: give the prompt once",
                )
            )

    try:
        case: Case | None = Case.model_validate(raw)
    except ValidationError as exc:
        errors.extend(_validation_errors(exc, node, path=path, case_id=case_id, model=Case))
        case = None

    if case is None or errors:
        result.errors.extend(errors)
        return None

    inline_locations = _inline_evidence_locations(node, case, path)
    evidence_locations = dict(inline_locations)
    update: dict[str, Any] = {}
    answer_entry = gold.answers.get(case.id)
    if answer_entry is not None:
        if "expected_answer" in raw:
            errors.append(_ambiguous(path, node, case.id, "expected_answer", answer_entry))
        elif answer_entry.value is None:
            errors.append(_invalid_gold(location, case.id, "expected_answer", answer_entry))
        else:
            update["expected_answer"] = answer_entry.value
    evidence_entry = gold.evidence.get(case.id)
    if evidence_entry is not None:
        if "required_evidence" in raw:
            errors.append(_ambiguous(path, node, case.id, "required_evidence", evidence_entry))
        elif evidence_entry.value is None:
            errors.append(_invalid_gold(location, case.id, "required_evidence", evidence_entry))
        else:
            update["required_evidence"] = evidence_entry.value
            evidence_locations.update(
                (f"required_evidence[{i}]", loc)
                for i, loc in enumerate(evidence_entry.item_locations)
            )
    elif case.required_evidence is None and not case.safe_refusal_expected:
        errors.append(
            CaseError(
                path,
                line,
                case.id,
                "required_evidence",
                "no required_evidence: give [] if none is expected",
            )
        )

    if allowlist is not None and filename_by_id is not None:
        errors.extend(_inline_leaks(case, inline_locations, allowlist, filename_by_id))

    if errors:
        result.errors.extend(errors)
        return None
    prompts = case.all_prompts()
    if prompts != case.prompts:
        update["prompts"] = prompts
    merged = case.model_copy(update=update) if update else case
    return LoadedCase(merged, result.split, location, evidence_locations)


def _inline_evidence_locations(
    node: yaml.Node, case: Case, path: Path
) -> dict[str, SourceLocation]:
    locations: dict[str, SourceLocation] = {}
    groups: list[tuple[str, Sequence[Evidence], tuple[str | int, ...]]] = []
    if case.required_evidence:
        groups.append(("required_evidence", case.required_evidence, ("required_evidence",)))
    for t, turn in enumerate(case.turns):
        if turn.required_evidence:
            name = f"turns[{t}].required_evidence"
            groups.append((name, turn.required_evidence, ("turns", t, "required_evidence")))
    for name, items, loc in groups:
        for i in range(len(items)):
            _, line = _locate(node, (*loc, i), _line(node))
            locations[f"{name}[{i}]"] = SourceLocation(path, line)
    return locations


def _inline_leaks(
    case: Case,
    locations: Mapping[str, SourceLocation],
    allowlist: Allowlist,
    filename_by_id: Mapping[str, str],
) -> list[CaseError]:
    errors = []
    named: list[tuple[str, Evidence]] = [
        (f"required_evidence[{i}]", e) for i, e in enumerate(case.required_evidence or [])
    ]
    for t, turn in enumerate(case.turns):
        named.extend(
            (f"turns[{t}].required_evidence[{i}]", e) for i, e in enumerate(turn.required_evidence)
        )
    for name, evidence in named:
        problem = evidence_allowlist_problem(evidence, allowlist, filename_by_id)
        where = locations.get(name)
        if problem is not None and where is not None:  # None: from gold, checked there
            errors.append(CaseError(where.path, where.line, case.id, name, problem))
    return errors


def _ambiguous(
    path: Path, node: yaml.Node, case_id: str, part: str, entry: GoldEntry[Any]
) -> CaseError:
    found = _child(node, part)
    return CaseError(
        path,
        found[1] if found else _line(node),
        case_id,
        part,
        f"defined inline and in {entry.location} (ambiguous gold: keep one)",
    )


def _invalid_gold(
    location: SourceLocation, case_id: str, part: str, entry: GoldEntry[Any]
) -> CaseError:
    return CaseError(
        location.path,
        location.line,
        case_id,
        part,
        f"the gold entry at {entry.location} is invalid (see the error there)",
    )


def _case_file_paths(cases_dir: Path, exclude: Path | None) -> list[Path]:
    found = [
        p for p in cases_dir.rglob("*") if p.suffix.lower() in CASE_FILE_SUFFIXES and p.is_file()
    ]
    if exclude is not None and exclude.is_dir():
        excluded = exclude.resolve()
        found = [p for p in found if not p.resolve().is_relative_to(excluded)]
    return sorted(found)


def load_catalog(
    cases_dir: Path, gold_dir: Path | None, *, allowlist: Allowlist | None = None
) -> Catalog:
    """Every case file under ``cases_dir`` (recursively, sorted) with the gold merged in."""
    gold = load_gold(gold_dir, allowlist)
    catalog = Catalog([], [], list(gold.files))
    if not cases_dir.is_dir():
        catalog.catalog_errors.append(
            CaseError(cases_dir, None, None, None, "cases directory not found")
        )
        paths: list[Path] = []
    else:
        paths = _case_file_paths(cases_dir, gold_dir)
        if not paths:
            catalog.catalog_errors.append(
                CaseError(cases_dir, None, None, None, "no case file (*.yaml, *.yml) found")
            )
    known_ids: dict[str, SourceLocation] = {}
    for path in paths:
        catalog.files.append(load_case_file(path, gold, known_ids=known_ids, allowlist=allowlist))
    unreadable = [str(f.path) for f in catalog.files if not f.readable]
    note = f" ({', '.join(unreadable)} could not be read)" if unreadable else ""
    gold_errors = list(gold.errors)
    for part, entries in (
        ("expected_answer", gold.answers),
        ("required_evidence", gold.evidence),
    ):
        for case_id, entry in entries.items():
            if case_id not in known_ids:
                gold_errors.append(
                    CaseError(
                        entry.location.path,
                        entry.location.line,
                        case_id,
                        part,
                        f"gold for an unknown case: no case file defines {case_id}{note}",
                    )
                )
    order = {p: i for i, p in enumerate(gold.files)}
    gold_errors.sort(key=lambda e: (order.get(e.path, len(order)), e.line or 0))
    catalog.gold_errors = gold_errors
    return catalog


# --------------------------------------------------------------------------- JSON Schema


class _CaseFileMapping(StrictModel):
    split: Split | None = None
    cases: list[Case]


class _CaseFileDocument(RootModel[list[Case] | _CaseFileMapping]):
    pass


def case_file_json_schema() -> dict[str, Any]:
    """JSON Schema of a case file, for editors (YAML language servers read JSON Schema)."""
    schema = _CaseFileDocument.model_json_schema()
    defs = schema.get("$defs", {})
    claim = defs.get("Claim")
    if claim is not None:  # a plain string is shorthand for {text: ...}
        defs["Claim"] = {
            "anyOf": [{"type": "string"}, {k: v for k, v in claim.items() if k != "title"}],
            "title": claim.get("title", "Claim"),
            "description": claim.get("description", ""),
        }
    evidence = defs.get("Evidence")
    if evidence is not None:
        evidence["anyOf"] = [{"required": ["file_id"]}, {"required": ["filename"]}]
    mapping = defs.get("_CaseFileMapping")
    if mapping is not None:
        defs["CaseFileMapping"] = mapping
        mapping["title"] = "CaseFileMapping"
        del defs["_CaseFileMapping"]
    text = _replace_refs(schema, "#/$defs/_CaseFileMapping", "#/$defs/CaseFileMapping")
    return {
        "$schema": JSON_SCHEMA_DIALECT,
        "title": "pytest-ragv2 case file",
        "description": (
            "A list of gold cases, or {split: development|holdout, cases: [...]}. Without"
            " split, a file whose name contains 'holdout' is holdout, any other development."
        ),
        **{k: v for k, v in text.items() if k != "title"},
    }


def _replace_refs(value: Any, old: str, new: str) -> Any:
    if isinstance(value, dict):
        return {
            k: (new if k == "$ref" and v == old else _replace_refs(v, old, new))
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [_replace_refs(v, old, new) for v in value]
    return value
