"""Gold parts kept apart from the prompts: ``answers.yaml`` and ``evidence.yaml``.

``gold/answers.yaml`` maps a case id to its expected answer, ``gold/evidence.yaml`` maps a
case id to its list of required evidence. Each entry is validated on its own and located at
``file:line``; an invalid entry is kept with ``value`` None, so the case it belongs to fails
with a pointer to it (the merge into the cases happens in :mod:`pytest_ragv2.gold.cases`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, TypeVar

import yaml
from pydantic import BaseModel, TypeAdapter, ValidationError

from pytest_ragv2.config.inputs import present
from pytest_ragv2.config.located_yaml import (
    CaseError,
    SourceLocation,
    YamlProblem,
    duplicate_key_errors,
    node_line,
    parse_yaml,
    validation_errors,
)
from pytest_ragv2.gold.allowlist import Allowlist, evidence_allowlist_problem
from pytest_ragv2.gold.schema import Evidence, ExpectedAnswer

GOLD_ANSWERS_FILE = "answers.yaml"
GOLD_EVIDENCE_FILE = "evidence.yaml"

_EVIDENCE_LIST: TypeAdapter[list[Evidence]] = TypeAdapter(list[Evidence])
_T = TypeVar("_T")


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


def load_gold(gold_dir: Path | None, allowlist: Allowlist | None = None) -> Gold:
    """Read ``answers.yaml`` and ``evidence.yaml`` of ``gold_dir`` (each optional)."""
    gold = Gold()
    if gold_dir is None:
        return gold
    by_id = allowlist.filename_by_file_id() if allowlist is not None else None
    answers_path = gold_dir / GOLD_ANSWERS_FILE
    if present(answers_path):
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
    if present(evidence_path):
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
            item_locations = tuple(SourceLocation(evidence_path, node_line(n)) for n in node.value)
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
                validation_errors(
                    exc, node, path=path, case_id=case_id, prefix=(prefix,), model=model
                )
            )
        yield case_id, validated, node, location


def _gold_entries(
    path: Path, errors: list[CaseError]
) -> Iterator[tuple[str, Any, yaml.Node, SourceLocation]]:
    """(case id, raw value, value node, location) for each entry of a gold file."""
    try:
        document = parse_yaml(path, what="a gold file")
    except YamlProblem as problem:
        errors.append(CaseError(path, problem.line, None, None, problem.message))
        return
    data, root, duplicates = document.data, document.root, document.duplicates
    if root is None or data is None:
        return
    if not isinstance(root, yaml.MappingNode) or not isinstance(data, dict):
        errors.append(
            CaseError(path, node_line(root), None, None, "expected a mapping: case id → gold")
        )
        return
    first_line: dict[str, int] = {}
    for key_node, value_node in root.value:
        line = node_line(key_node)
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
        entry_errors = duplicate_key_errors(value_node, path, case_id, duplicates)
        if entry_errors:
            errors.extend(entry_errors)
            continue
        yield case_id, data[case_id], value_node, SourceLocation(path, line)
