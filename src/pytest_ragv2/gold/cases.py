"""The case catalog: case files loaded from YAML, with the gold merged in.

A case file is either a list of cases or a mapping ``{split: development|holdout, cases: [...]}``.
Gold parts may live apart from the prompts (:mod:`pytest_ragv2.gold.answers`); the file allow-list
is in :mod:`pytest_ragv2.gold.allowlist`, the YAML parse with line numbers and the located errors
in :mod:`pytest_ragv2.config.located_yaml`.

Every problem becomes a :class:`CaseError` naming the file, the 1-based line, the case and the
field, so an editor can jump to it. A case with any error is left out of the loaded cases; the
other cases of its file, and the other files, still load — except after an invalid ``split:``,
which leaves the whole file out (its cases are checked, never run: running them as
development could put holdout cases in the tuning data). A file that defines no case
(empty, only comments, ``[]``, ``cases: []``) loads as a located **warning**
(``CaseFile.warnings``): it fails nothing, and is printed by ``ragv2 validate`` and in the
session's warnings summary. Nothing here raises on bad case or
gold input: the caller decides what errors mean (``ragv2 validate`` exits 1, the collector
reports them).
"""

from __future__ import annotations

import dataclasses
import difflib
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from pytest_ragv2.config.inputs import present
from pytest_ragv2.config.located_yaml import (
    CaseError,
    Duplicate,
    SourceLocation,
    YamlProblem,
    child_node,
    duplicate_key_errors,
    locate,
    node_line,
    parse_yaml,
    validation_errors,
)
from pytest_ragv2.gold.adjudication import ADJUDICATIONS_FILE, Adjudications, load_adjudications
from pytest_ragv2.gold.allowlist import Allowlist, evidence_allowlist_problem
from pytest_ragv2.gold.answers import Gold, GoldEntry, load_gold
from pytest_ragv2.gold.schema import (
    KNOWN_CATEGORIES,
    Case,
    Evidence,
    Split,
    share_fields_sets,
)
from pytest_ragv2.report.safe_text import has_unsafe, printable

CASE_FILE_SUFFIXES = (".yaml", ".yml")
SPLITS: tuple[Split, ...] = ("development", "holdout")


# --------------------------------------------------------------------------- catalog types


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
    # Located notices that fail nothing (a file that defines no case).
    warnings: list[CaseError] = field(default_factory=list)
    excluded: bool = False  # an invalid ``split:``: the file's cases are checked, never run


@dataclass(slots=True)
class Catalog:
    files: list[CaseFile]
    gold_errors: list[CaseError]
    gold_files: list[Path]
    # Errors not tied to one file (missing cases directory, no case file found).
    catalog_errors: list[CaseError] = field(default_factory=list)
    # The reviewers' rulings of <gold>/adjudications.yaml (its errors are gold errors).
    adjudications: Adjudications | None = None
    _by_id: dict[str, LoadedCase] | None = field(default=None, repr=False, compare=False)

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

    @property
    def warnings(self) -> list[CaseError]:
        """Every located warning of the case files, in file order."""
        return [warning for case_file in self.files for warning in case_file.warnings]

    def find(self, case_id: str) -> LoadedCase | None:
        """The case of that id (the first, in file order), through an index built once:
        the reports and rescoring look up every run's case."""
        if self._by_id is None:
            self._by_id = {}
            for case_file in self.files:
                for loaded in case_file.cases:
                    self._by_id.setdefault(loaded.case.id, loaded)
        return self._by_id.get(case_id)

    def known_cases(self) -> dict[str, tuple[list[str], list[str]] | None]:
        """Case id → (languages, layers) of every case written; None for a case that failed
        to load (what an adjudication may name)."""
        known: dict[str, tuple[list[str], list[str]] | None] = {}
        for case_file in self.files:
            for case_id in case_file.case_ids:
                known.setdefault(case_id, None)
            for loaded in case_file.cases:
                known[loaded.case.id] = (loaded.case.languages(), list(loaded.case.layers))
        return known


def warning_text(warning: CaseError) -> str:
    """A located warning as it is printed: ``file:line: warning: message``."""
    return str(dataclasses.replace(warning, message=f"warning: {warning.message}"))


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
    by_id = allowlist.filename_by_file_id() if allowlist is not None else None

    def load_one(raw: Any, node: yaml.Node, duplicates: list[Duplicate]) -> None:
        loaded = _load_case(path, raw, node, result, gold, known_ids, duplicates, allowlist, by_id)
        if loaded is not None:
            result.cases.append(loaded)

    try:  # the cases are loaded as the file is read, one at a time (located_yaml)
        document = parse_yaml(path, entries_of="cases", on_entry=load_one, what="a case file")
    except YamlProblem as problem:
        for case_id in result.case_ids:  # what the cases before the problem defined
            known_ids.pop(case_id, None)
        result.cases, result.errors, result.case_ids = [], [], {}
        result.errors.append(CaseError(path, problem.line, None, None, problem.message))
        result.readable = False
        return result
    data, root = document.data, document.root
    if root is None or data is None:
        result.warnings.append(
            CaseError(path, 1, None, None, "no case: the file is empty or only comments")
        )
        return result
    cases_node: yaml.Node | None = root
    if isinstance(data, dict):
        result.errors.extend(_root_duplicates(path, root, document.duplicates))
        data, cases_node = _unwrap_mapping_form(path, data, root, result)
        if cases_node is None:
            return result
    if document.streamed is None and (
        not isinstance(data, list) or not isinstance(cases_node, yaml.SequenceNode)
    ):
        result.errors.append(
            CaseError(
                path, node_line(root), None, None, "expected a list of cases or {split, cases}"
            )
        )
        return result
    streamed = document.streamed
    if streamed is None and isinstance(data, list) and isinstance(cases_node, yaml.SequenceNode):
        for raw, node in zip(data, cases_node.value, strict=True):  # a tagged or anchored
            load_one(raw, node, document.duplicates)  # list, composed whole
    entries = len(data) if streamed is None else streamed
    if entries == 0 and cases_node is not None:
        result.warnings.append(
            CaseError(
                path, node_line(cases_node), None, None, "no case: the list of cases is empty"
            )
        )
    if result.excluded:
        result.cases = []  # checked above, never run
    elif any(loaded.split != result.split for loaded in result.cases):
        # the split key came after the cases it applies to
        result.cases = [dataclasses.replace(c, split=result.split) for c in result.cases]
    return result


def _root_duplicates(
    path: Path, root: yaml.Node, duplicates: Sequence[Duplicate]
) -> list[CaseError]:
    """A key of the file's mapping written twice."""
    return [
        CaseError(
            path,
            node_line(repeated),
            None,
            str(repeated.value),
            f"duplicate key (first given at line {node_line(first)})",
        )
        for mapping, first, repeated in duplicates
        if mapping is root
    ]


def _unwrap_mapping_form(
    path: Path, data: dict[Any, Any], root: yaml.Node, result: CaseFile
) -> tuple[Any, yaml.Node | None]:
    for key in data:
        if key not in ("split", "cases"):
            found = child_node(root, str(key))
            line = found[1] if found else node_line(root)
            result.errors.append(
                CaseError(path, line, None, str(key), "unknown field (expected split and cases)")
            )
    if "split" in data:
        split = data["split"]
        if split in SPLITS:
            result.split = split
        else:
            found = child_node(root, "split")
            result.excluded = True
            result.errors.append(
                CaseError(
                    path,
                    found[1] if found else node_line(root),
                    None,
                    "split",
                    f"expected one of {', '.join(SPLITS)} (got {split!r}); "
                    "the file's cases are not run",
                )
            )
    found_cases = child_node(root, "cases")
    if found_cases is None:
        result.errors.append(CaseError(path, node_line(root), None, "cases", "Field required"))
        return None, None
    return data["cases"], found_cases[0]


def _load_case(
    path: Path,
    raw: Any,
    node: yaml.Node,
    result: CaseFile,
    gold: Gold,
    known_ids: dict[str, SourceLocation],
    duplicates: Sequence[Duplicate],
    allowlist: Allowlist | None,
    filename_by_id: Mapping[str, str] | None,
) -> LoadedCase | None:
    line = node_line(node)
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
    errors = duplicate_key_errors(node, path, case_id, duplicates)

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
            found = child_node(node, short)
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
        errors.extend(validation_errors(exc, node, path=path, case_id=case_id, model=Case))
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
    merged = case.model_copy(update=update) if update else case
    share_fields_sets(merged)
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
            _, line = locate(node, (*loc, i), node_line(node))
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
    found = child_node(node, part)
    return CaseError(
        path,
        found[1] if found else node_line(node),
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
    """Every path with a case file's suffix but the folders: a FIFO, a device or a
    symbolic link to nothing is listed too, to be refused by name (never read), rather
    than left out silently."""
    found = [
        p for p in cases_dir.rglob("*") if p.suffix.lower() in CASE_FILE_SUFFIXES and not p.is_dir()
    ]
    if exclude is not None and exclude.is_dir():
        excluded = exclude.resolve()
        found = [p for p in found if not p.resolve().is_relative_to(excluded)]
    return sorted(found)


def _refuse_unsafe_names(cases_dir: Path, paths: list[Path], errors: list[CaseError]) -> list[Path]:
    """The case files whose name is safe to print; an error for each other one. pytest
    prints a file's name raw in lines the plugin does not write (progress, warnings,
    JUnit's classname): a name holding a control, bidirectional or invisible character (an
    escape sequence, U+202E, U+200B) is refused, named by its escapes, and nothing of it runs."""
    kept = []
    for path in paths:
        name = path.relative_to(cases_dir).as_posix()
        if has_unsafe(name):
            errors.append(
                CaseError(
                    cases_dir,
                    None,
                    None,
                    None,
                    f"case file {printable(name)} not loaded: a control, bidirectional or "
                    "invisible character in its name; rename it",
                )
            )
        else:
            kept.append(path)
    return kept


def category_warnings(case_file: CaseFile, extra: Collection[str] = ()) -> list[CaseError]:
    """A located warning for each case whose category is neither documented
    (``KNOWN_CATEGORIES``) nor declared in the configuration, with the closest known name."""
    known = sorted(KNOWN_CATEGORIES | set(extra))
    found = []
    for loaded in case_file.cases:
        category = loaded.case.category
        if category in known:
            continue
        close = difflib.get_close_matches(category, known, n=1, cutoff=0.8)
        hint = f" (did you mean {close[0]}?)" if close else ""
        found.append(
            CaseError(
                loaded.location.path,
                loaded.location.line,
                loaded.case.id,
                "category",
                f"unknown category {category!r}{hint}; declare it in the configuration's "
                "categories to use a category of your own",
            )
        )
    return found


def load_catalog(
    cases_dir: Path,
    gold_dir: Path | None,
    *,
    allowlist: Allowlist | None = None,
    categories: Collection[str] = (),
) -> Catalog:
    """Every case file under ``cases_dir`` (recursively, sorted) with the gold merged in;
    ``categories`` are the project's own, beside the documented ones."""
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
    paths = _refuse_unsafe_names(cases_dir, paths, catalog.catalog_errors)
    known_ids: dict[str, SourceLocation] = {}
    for path in paths:
        case_file = load_case_file(path, gold, known_ids=known_ids, allowlist=allowlist)
        case_file.warnings.extend(category_warnings(case_file, categories))
        catalog.files.append(case_file)
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
    rulings = gold_dir / ADJUDICATIONS_FILE if gold_dir is not None else None
    if rulings is not None and present(rulings):
        catalog.gold_files.append(rulings)
        catalog.adjudications, found = load_adjudications(rulings, catalog.known_cases())
        gold_errors.extend(found)
    order = {p: i for i, p in enumerate(catalog.gold_files)}
    gold_errors.sort(key=lambda e: (order.get(e.path, len(order)), e.line or 0))
    catalog.gold_errors = gold_errors
    return catalog
