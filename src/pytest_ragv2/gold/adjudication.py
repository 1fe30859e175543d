"""Human adjudication: a reviewer's overrides of the machine's verdicts, kept beside the gold.

``<gold>/adjudications.yaml`` is a list of entries. Each names its reviewer, date, case and
scope — one run (``system`` + ``lang`` + ``rep``, optionally ``layer``), every run of one
system of the case (``system`` alone), or every run of the case (no system) — and one kind
of ruling, with a ``note`` saying why:

- ``met: true|false`` overrides the item verdict (the run met its case, or not);
- ``override: {dimension: value}`` overrides a per-run metric (``recall@5: 1.0``,
  ``exact_answer: 1``), a rubric grade (``rubric.accuracy: PASS``) or lifts a veto the
  reviewer found wrong (``veto.fabricated_identifier: false``); ``met`` and ``override`` may
  go together;
- ``disputed: true`` marks the case's gold as disputed (case-wide only): its runs are left
  out of every figure and comparison, counted and named as skipped; a leak outside the
  allow-list still counts (it does not depend on the gold).

Entries are validated like cases (pydantic, errors located at ``file:line``): an unknown
case, language, layer or dimension, a bad date, a missing note or a duplicate is an error,
the entry is not applied, and the error fails the ``gold_valid`` gate like any gold error.
Every error of an entry is reported, each at its own line (:func:`entry_problems` checks the
fields that are valid on their own together, even when another field is not).
Systems are checked where they are known (:meth:`Adjudications.check_systems`).

:func:`apply` is pure: records in, new records out (``dataclasses.replace``), each changed
record carrying who ruled, when and why (``adjudication`` and a first ``reasons`` line).
:func:`pytest_ragv2.deciding.decision.decide` applies them — live and in ``ragv2 rescore`` alike —
and decides once without them as well, so every report shows the verdict before and after.
"""

from __future__ import annotations

import dataclasses
import datetime
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import Field, ValidationError, ValidationInfo, field_validator, model_validator

from pytest_ragv2.config.inputs import present
from pytest_ragv2.config.located_yaml import (
    CaseError,
    SourceLocation,
    YamlProblem,
    child_node,
    duplicate_key_errors,
    node_line,
    parse_yaml,
    validation_errors,
)
from pytest_ragv2.deciding.records import RunRecord
from pytest_ragv2.gold.schema import VETO_KINDS, StrictModel
from pytest_ragv2.layers.registry import LAYERS
from pytest_ragv2.scoring.metrics import GRADES, RUBRIC_COLUMNS, layer_case_metrics

ADJUDICATIONS_FILE = "adjudications.yaml"
LINE_WIDTH = 120
TERMINAL_LINES = 10  # entries (and errors) the terminal lists; the reports list them all
RUNS_LISTED = 100  # per entry in summary.json; the count is always complete

# the per-run metrics a reviewer may override, per layer ("met" has its own field)
METRICS_BY_LAYER: dict[str, tuple[str, ...]] = {
    name: tuple(metric for metric in layer_case_metrics(info) if metric != "met")
    for name, info in LAYERS.items()
}
ALL_METRICS = frozenset(name for names in METRICS_BY_LAYER.values() for name in names)
COUNT_METRICS = frozenset({"fabrications", "tool_calls", "output_tokens"})  # not shares
KEPT_VETOES = frozenset({"outside_allowlist"})  # a disputed gold does not excuse a leak

Value = float | bool | str | None


# --------------------------------------------------------------------------- the file


class AdjudicationEntry(StrictModel):
    """One ruling as written in ``adjudications.yaml``."""

    reviewer: str = Field(min_length=1, description="who ruled")
    date: datetime.date = Field(description="when (YYYY-MM-DD)")
    case: str = Field(min_length=1, description="the case id")
    system: str | None = Field(None, description="one system (omit: every system)")
    lang: str | None = Field(None, description="with system and rep: one run")
    rep: int | None = Field(None, ge=1, description="with system and lang: one run")
    layer: Literal["A", "B", "C"] | None = Field(None, description="one layer (omit: every)")
    met: bool | None = Field(None, description="the item verdict: the run met its case or not")
    override: dict[str, float | bool | str | None] = Field(
        default_factory=dict,
        description="per-run dimension → value: a metric (recall@5: 1.0), a rubric grade "
        "(rubric.accuracy: PASS) or a veto lifted (veto.fabricated_identifier: false)",
    )
    disputed: bool = Field(False, description="the case's gold is disputed (case-wide only)")
    note: str = Field(description="why: required")

    @field_validator("reviewer", "note")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must not be blank: say who ruled and why")
        return value.strip()

    @field_validator("date")
    @classmethod
    def _not_future(cls, value: datetime.date) -> datetime.date:
        if value > datetime.date.today():
            raise ValueError(f"{value} is in the future")
        return value

    @model_validator(mode="after")
    def _scope_and_kind(self, info: ValidationInfo) -> AdjudicationEntry:
        if isinstance(info.context, dict) and info.context.get(FIELDS_ONLY):
            return self  # the loader checks these itself, every problem located
        problems = entry_problems(self.model_dump())
        if problems:
            raise ValueError(
                "; ".join(_problem_text(where, message) for where, message in problems)
            )
        return self

    @property
    def scope(self) -> str:
        """``all runs``, ``all runs of v2``, or the run ``v2-en-r1``; with the layer."""
        if self.rep is not None:
            where = f"{self.system}-{self.lang}-r{self.rep}"
        else:
            where = f"all runs of {self.system}" if self.system else "all runs"
        return where + (f" (layer {self.layer})" if self.layer else "")

    @property
    def specificity(self) -> int:
        return 2 if self.rep is not None else (1 if self.system else 0)

    @property
    def kind(self) -> str:
        if self.disputed:
            return "disputed gold"
        parts = [] if self.met is None else [f"met: {str(self.met).lower()}"]
        parts += [f"{name}: {_shown(value)}" for name, value in self.override.items()]
        return ", ".join(parts)

    def covers(self, record: RunRecord) -> bool:
        key = record.key
        return (
            key.case == self.case
            and (self.system is None or key.system == self.system)
            and (self.lang is None or key.lang == self.lang)
            and (self.rep is None or key.rep == self.rep)
            and (self.layer is None or key.layer == self.layer)
        )


FIELDS_ONLY = "fields_only"  # validation context: leave the rules across fields to the loader
# where a problem is: () the entry, ("override", name) one dimension
Where = tuple[str, ...]


def entry_problems(values: Mapping[str, Any]) -> list[tuple[Where, str]]:
    """Every problem of an entry's fields taken together (each field valid on its own): its
    dimensions, its kind of ruling and its scope. ``values`` holds the fields that validated;
    a field left out counts as not given."""
    problems: list[tuple[Where, str]] = []
    override = values.get("override") or {}
    met, layer = values.get("met"), values.get("layer")
    system, lang, rep = values.get("system"), values.get("lang"), values.get("rep")
    for name, given in override.items():
        problem = _dimension_problem(name, given)
        layer_metrics = METRICS_BY_LAYER.get(str(layer), ()) if layer is not None else None
        off_layer = layer_metrics is not None and name not in layer_metrics
        if problem is None and off_layer and name in ALL_METRICS:
            problem = f"not a layer-{layer} metric"
        if problem is not None:
            problems.append((("override", name), problem.removeprefix(f"{name}: ")))
    if values.get("disputed"):
        if met is not None or override:
            problems.append(((), "a disputed-gold entry overrides nothing: give it alone"))
        if system or lang or rep is not None:
            problems.append(((), "disputed gold is case-wide: no system, lang or rep"))
    elif met is None and not override:
        problems.append(((), "give met: true|false, override: {dimension: value} or disputed"))
    run_fields = (lang is not None, rep is not None)
    if any(run_fields) and not (all(run_fields) and system):
        message = "one run needs system, lang and rep together (or none of lang, rep)"
        problems.append(((), message))
    return problems


def _problem_text(where: Where, message: str) -> str:
    return f"{'.'.join(where)}: {message}" if where else message


def _dimension_problem(name: str, value: Value) -> str | None:
    if name == "met":
        return "met is the item verdict: write met: true|false beside override"
    if name.startswith("rubric."):
        dimension = name.removeprefix("rubric.")
        if dimension not in RUBRIC_COLUMNS:
            return f"unknown rubric dimension {dimension!r} (one of {', '.join(RUBRIC_COLUMNS)})"
        if value not in GRADES:
            return f"{name}: a grade, one of {', '.join(GRADES)} (got {value!r})"
        return None
    if name.startswith("veto."):
        kind = name.removeprefix("veto.")
        if kind not in VETO_KINDS:
            return f"unknown veto {kind!r} (one of {', '.join(VETO_KINDS)})"
        if value is not False:
            return f"{name}: only false (lift the veto) can be adjudicated"
        return None
    if name not in ALL_METRICS:
        known = ", ".join(sorted(ALL_METRICS))
        return f"unknown dimension {name!r}: a metric ({known}), rubric.<dim> or veto.<kind>"
    if isinstance(value, str) or (isinstance(value, float | int) and value < 0):
        return f"{name}: a number >= 0, true/false or null (got {value!r})"
    share = isinstance(value, float | int) and not isinstance(value, bool)
    if share and name not in COUNT_METRICS and value is not None and value > 1:
        return f"{name}: a share, from 0 to 1 (got {value!r})"
    return None


@dataclass(frozen=True, slots=True)
class Adjudication:
    """A valid entry and where it was written."""

    entry: AdjudicationEntry
    location: SourceLocation
    field_lines: Mapping[str, int] = field(default_factory=dict)  # a field's own line

    def line_of(self, name: str) -> int | None:
        return self.field_lines.get(name, self.location.line)

    def to_json(self) -> dict[str, Any]:
        entry = self.entry
        data: dict[str, Any] = {
            "case": entry.case,
            "scope": entry.scope,
            "ruling": entry.kind,
            "reviewer": entry.reviewer,
            "date": entry.date.isoformat(),
            "note": entry.note,
            "line": self.location.line,
        }
        if entry.met is not None:
            data["met"] = entry.met
        if entry.override:
            data["override"] = dict(entry.override)
        if entry.disputed:
            data["disputed"] = True
        return data


@dataclass(frozen=True, slots=True)
class Adjudications:
    """The valid entries of one file (invalid ones are errors, never applied)."""

    path: Path | None = None
    entries: tuple[Adjudication, ...] = ()
    invalid: int = 0  # entries left out for their errors
    errors: tuple[CaseError, ...] = ()  # why (they fail the gold_valid gate)

    def __bool__(self) -> bool:
        return bool(self.entries) or bool(self.errors)

    @property
    def shown_path(self) -> str:
        return "" if self.path is None else f"{self.path.parent.name}/{self.path.name}"

    def check_systems(self, systems: Collection[str]) -> tuple[Adjudications, list[CaseError]]:
        """The entries naming a known system (or none), and an error for each other one."""
        kept: list[Adjudication] = []
        errors: list[CaseError] = []
        for adjudication in self.entries:
            system = adjudication.entry.system
            if system is None or system in systems:
                kept.append(adjudication)
                continue
            errors.append(
                CaseError(
                    adjudication.location.path,
                    adjudication.line_of("system"),
                    adjudication.entry.case,
                    "system",
                    f"unknown system {system!r} (configured: {', '.join(sorted(systems))})",
                )
            )
        checked = dataclasses.replace(
            self,
            entries=tuple(kept),
            invalid=self.invalid + len(errors),
            errors=(*self.errors, *errors),
        )
        return checked, errors


KnownCases = Mapping[str, tuple[list[str], list[str]] | None]


def load_adjudications(
    path: Path, known: KnownCases | None = None, *, systems: Collection[str] | None = None
) -> tuple[Adjudications, list[CaseError]]:
    """The valid entries of ``path`` and a located error for every problem. Cases, languages
    and layers are checked against ``known`` (case id → its languages and layers, None for a
    case that failed to load: :meth:`~pytest_ragv2.gold.cases.Catalog.known_cases`), systems
    against ``systems`` when given."""
    errors: list[CaseError] = []
    if not present(path):
        return Adjudications(), errors
    try:
        document = parse_yaml(path, what="an adjudications file")
    except YamlProblem as problem:
        errors.append(CaseError(path, problem.line, None, None, problem.message))
        return Adjudications(path, errors=tuple(errors)), errors
    root, data = document.root, document.data
    if root is None or data is None:
        return Adjudications(path), errors
    if not isinstance(root, yaml.SequenceNode) or not isinstance(data, list):
        message = "expected a list of adjudications (- reviewer: ..., case: ..., note: ...)"
        errors.append(CaseError(path, node_line(root), None, None, message))
        return Adjudications(path, errors=tuple(errors)), errors
    kept: list[Adjudication] = []
    seen: dict[tuple[Any, ...], int] = {}
    invalid = 0
    for node, raw in zip(root.value, data, strict=True):
        line = node_line(node)
        case_id = raw.get("case") if isinstance(raw, dict) else None
        case_id = case_id if isinstance(case_id, str) else None
        found = duplicate_key_errors(node, path, case_id, document.duplicates)
        if not isinstance(raw, dict):
            found.append(CaseError(path, line, None, None, "an adjudication is a mapping"))
        else:
            entry, entry_errors = _entry_errors(raw, node, path, case_id, known, systems)
            found.extend(entry_errors)
            if entry is not None and not found:
                duplicate = _duplicate(entry, seen)
                if duplicate is not None:
                    found.append(CaseError(path, line, entry.case, None, duplicate))
                else:
                    for claim in _claims(entry):
                        seen[claim] = line
                    kept.append(Adjudication(entry, SourceLocation(path, line), _field_lines(node)))
        if found:
            invalid += 1
            errors.extend(found)
    return Adjudications(path, tuple(kept), invalid, tuple(errors)), errors


RULED_FIELDS = ("case", "system", "lang", "rep", "layer", "met", "override", "disputed")


def _entry_errors(
    raw: Mapping[str, Any],
    node: yaml.Node,
    path: Path,
    case_id: str | None,
    known: KnownCases | None,
    systems: Collection[str] | None,
) -> tuple[AdjudicationEntry | None, list[CaseError]]:
    """The entry (None when it has an error) and **every** error of it, each located: the
    fields' own errors, then the problems of the fields that are valid on their own taken
    together (dimensions, kind, scope), the catalog's and the systems'. One entry with a
    future date, an unknown dimension and an unknown system shows all three."""
    lines = _field_lines(node)
    line = node_line(node)
    errors: list[CaseError] = []
    bad: set[str] = set()
    entry: AdjudicationEntry | None = None
    try:
        entry = AdjudicationEntry.model_validate(raw, context={FIELDS_ONLY: True})
    except ValidationError as exc:
        errors.extend(
            validation_errors(exc, node, path=path, case_id=case_id, model=AdjudicationEntry)
        )
        bad = {str(error["loc"][0]) for error in exc.errors() if error["loc"]}
    values = (
        entry.model_dump()
        if entry is not None
        else {name: raw[name] for name in RULED_FIELDS if name in raw and name not in bad}
    )
    for where, message in entry_problems(values):
        if where:
            field_name = ".".join(where)
            errors.append(
                CaseError(path, _line_at(node, where, line), case_id, field_name, message)
            )
        else:
            errors.append(CaseError(path, line, case_id, None, message))
    case = values.get("case")
    if isinstance(case, str):
        errors.extend(_catalog_errors(values, known, path, line, lines))
    system = values.get("system")
    if systems is not None and isinstance(system, str) and system not in systems:
        message = f"unknown system {system!r} (configured: {', '.join(sorted(systems))})"
        errors.append(CaseError(path, lines.get("system", line), case_id, "system", message))
    return (entry if not errors else None), errors


def _line_at(node: yaml.Node, where: Where, line: int) -> int:
    """The line of the key at ``where`` inside the entry's node (its parent's, else the
    entry's, when the key is not found: a flow mapping keeps every key on its line)."""
    current = node
    for key in where:
        child = child_node(current, key)
        if child is None:
            return line
        current, line = child
    return line


def _duplicate(entry: AdjudicationEntry, seen: Mapping[tuple[Any, ...], int]) -> str | None:
    for claim in _claims(entry):
        if claim in seen:
            return (
                f"duplicate adjudication: the entry at line {seen[claim]} "
                f"already rules on {claim[-1]} for {entry.scope}"
            )
    return None


def _field_lines(node: yaml.Node) -> dict[str, int]:
    """The line of each field of one entry, for errors found after validation."""
    if not isinstance(node, yaml.MappingNode):
        return {}
    return {key.value: node_line(key) for key, _ in node.value if isinstance(key, yaml.ScalarNode)}


def _claims(entry: AdjudicationEntry) -> list[tuple[Any, ...]]:
    """What an entry rules on, per scope: two entries ruling on one of them are duplicates."""
    scope = (entry.case, entry.system, entry.lang, entry.rep, entry.layer)
    names = (["disputed"] if entry.disputed else []) + (["met"] if entry.met is not None else [])
    return [(*scope, name) for name in [*names, *entry.override]]


def _catalog_errors(
    values: Mapping[str, Any],
    known: KnownCases | None,
    path: Path,
    line: int,
    lines: Mapping[str, int],
) -> list[CaseError]:
    case, lang, layer = values.get("case"), values.get("lang"), values.get("layer")
    if known is None or not isinstance(case, str):
        return []
    if case not in known:
        message = "unknown case: no case file defines it"
        return [CaseError(path, lines.get("case", line), case, "case", message)]
    found = known[case]
    if found is None:  # the case has errors of its own, which fail gold_valid
        return []
    languages, layers = found
    errors = []
    if lang is not None and lang not in languages:
        errors.append(
            CaseError(
                path,
                lines.get("lang", line),
                case,
                "lang",
                f"unknown language {lang!r} for this case ({', '.join(languages)})",
            )
        )
    if layer is not None and layer not in layers:
        errors.append(
            CaseError(
                path,
                lines.get("layer", line),
                case,
                "layer",
                f"the case does not run at layer {layer} ({', '.join(layers)})",
            )
        )
    return errors


def _shown(value: Any) -> str:
    if value is None:
        return "n/a"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float):
        return f"{value:.3f}".rstrip("0").rstrip(".") if value != int(value) else f"{value:.0f}"
    if isinstance(value, list):
        return ", ".join(str(item) for item in value) or "none"
    return str(value)


# --------------------------------------------------------------------------- the report
