"""The corpus allow-list: the files a gold evidence entry may name.

``files: [{file_id, filename, sha256}]`` (or the bare list). A run without a valid allow-list
cannot check leaks at all, so :func:`load_allowlist` raises :class:`CaseLoadError` with every
located problem, unlike the case and gold loaders, which collect errors and go on.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import yaml

from pytest_ragv2.config.located_yaml import (
    CaseError,
    CaseLoadError,
    YamlProblem,
    child_node,
    node_line,
    parse_yaml,
)

if TYPE_CHECKING:
    from pytest_ragv2.gold.schema import Evidence

_SHA256 = re.compile(r"^[0-9a-f]{64}$")


@dataclass(frozen=True, slots=True)
class AllowedFile:
    file_id: str
    filename: str
    sha256: str | None


@dataclass(frozen=True, slots=True)
class Allowlist:
    files: tuple[AllowedFile, ...]
    # built once: every conversation's allow-list checks read them
    file_ids: frozenset[str] = field(init=False, repr=False, compare=False)
    filenames: frozenset[str] = field(init=False, repr=False, compare=False)
    names: frozenset[str] = field(init=False, repr=False, compare=False)  # ids and filenames

    def __post_init__(self) -> None:
        file_ids = frozenset(f.file_id for f in self.files)
        filenames = frozenset(f.filename for f in self.files)
        object.__setattr__(self, "file_ids", file_ids)
        object.__setattr__(self, "filenames", filenames)
        object.__setattr__(self, "names", file_ids | filenames)

    def filename_by_file_id(self) -> dict[str, str]:
        return {f.file_id: f.filename for f in self.files}


def load_allowlist(path: Path) -> Allowlist:
    """``files: [{file_id, filename, sha256}]`` (or the bare list). Raises CaseLoadError."""
    try:
        document = parse_yaml(path, what="the allow-list")
    except YamlProblem as problem:
        raise CaseLoadError([CaseError(path, problem.line, None, None, problem.message)]) from None
    data, root = document.data, document.root
    errors: list[CaseError] = []
    entries_node: yaml.Node | None = root
    if isinstance(data, dict) and root is not None:
        unknown = sorted(str(k) for k in data if k != "files")
        for key in unknown:
            found = child_node(root, key)
            errors.append(CaseError(path, found[1] if found else 1, None, key, "unknown field"))
        found_files = child_node(root, "files")
        entries_node = found_files[0] if found_files else None
        data = data.get("files")
    if not isinstance(data, list) or entries_node is None:
        line = node_line(entries_node) if entries_node is not None else 1
        errors.append(
            CaseError(path, line, None, "files", "expected a list of {file_id, filename, sha256}")
        )
        raise CaseLoadError(errors)
    files: list[AllowedFile] = []
    first_id: dict[str, int] = {}
    first_name: dict[str, int] = {}
    for index, (entry, node) in enumerate(zip(data, entries_node.value, strict=True)):
        where = f"files[{index}]"
        line = node_line(node)
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
            found = child_node(node, key)
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
                found = child_node(node, key)
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
