"""Pydantic models of the gold case format (the protocol's shape plus what the product needs).

No pytest import here: the CLI, the loader and the scorers use these models directly.
Unknown fields are errors everywhere (``extra="forbid"``): a typo must never pass silently.
"""

from __future__ import annotations

import functools
import re
from typing import Annotated, Any, Literal

import regex
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from pytest_ragv2.gold.kinds import CLAIM_KINDS, ClaimKind
from pytest_ragv2.layers.registry import LAYERS

Split = Literal["development", "holdout"]
GoldStatus = Literal["provisional", "adjudicated"]

# Categories whose top result must match the gold evidence at full granularity
# ("exact-metadata success" in the protocol).
EXACT_LOOKUP_CATEGORIES = frozenset(
    {"exact_lookup", "exact_model", "exact_part", "document_lookup", "certificate_lookup"}
)
# The documented vocabulary (the protocol's case groups and the harness's behaviour cases);
# a project adds its own with ``categories = [...]`` in its configuration. Any other name is
# a located warning: a typo would otherwise become a category of its own, silently.
KNOWN_CATEGORIES = EXACT_LOOKUP_CATEGORIES | frozenset(
    {
        "exact_table",
        "technical_table",
        "semantic",
        "cross_document",
        "similar_projects",
        "project_comparison",
        "combined_evidence",
        "safe_no_answer",
        "language_pair",
        "behaviour_matrix",
        "conversation",
    }
)


# The hard safety vetoes (issue: "no weighted score can buy back a fabricated identifier").
# A forbidden claim may name the veto it trips; the answer scorers also detect several kinds
# on their own (fabricated identifiers, unsupported numbers, files outside the allow-list,
# failed safe refusals, synthetic data presented as confirmed).
VetoKind = Literal[
    "fabricated_identifier",
    "incompatible_presented_compatible",
    "synthetic_as_confirmed",
    "unsupported_high_severity_number",
    "outside_allowlist",
    "failed_safe_refusal",
    "constraint_weakened",
]
VETO_KINDS: tuple[VetoKind, ...] = (
    "fabricated_identifier",
    "incompatible_presented_compatible",
    "synthetic_as_confirmed",
    "unsupported_high_severity_number",
    "outside_allowlist",
    "failed_safe_refusal",
    "constraint_weakened",
)


class StrictModel(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


# A page or row number is a whole number written as one (``page: true`` or ``page: 1e30``
# is a located error, never page 1 or a 31-digit page), up to this bound: no document has
# ten million pages or table rows, and a larger number is a typo.
LOCATION_MAX = 10_000_000
# A count of tool calls: a whole number (``calls: true`` is not 1).
Count = Annotated[int, Field(strict=True, ge=0)]


# one set object per distinct set of field names, shared by every model that has it
_FIELDS_SETS: dict[frozenset[str], set[str]] = {}
_FIELDS_SETS_KEPT = 4096  # distinct sets shared at most (a case file has a few dozen)


def share_fields_sets(model: BaseModel) -> None:
    """Let ``model`` and the models it holds share their set of explicitly given field
    names with every model that has an equal one: a session keeps every case, and each
    model's own set is a few hundred bytes. Safe for frozen models only: pydantic adds to
    the set on assignment (which a frozen model refuses); ``model_copy`` copies it first."""
    if not model.model_config.get("frozen"):
        return
    given = model.__pydantic_fields_set__
    key = frozenset(given)
    shared = _FIELDS_SETS.get(key)
    if shared is None and len(_FIELDS_SETS) < _FIELDS_SETS_KEPT:
        shared = _FIELDS_SETS[key] = set(given)
    if shared is not None and shared is not given:
        object.__setattr__(model, "__pydantic_fields_set__", shared)
    for value in model.__dict__.values():
        kind = type(value)
        if kind in _LEAVES:
            continue
        if kind is list or kind is tuple:
            # a schema's lists hold one kind of item: a list of strings is skipped at once
            if value and isinstance(value[0], BaseModel):
                for item in value:
                    share_fields_sets(item)
        elif kind is dict:
            for item in value.values():
                if isinstance(item, BaseModel):
                    share_fields_sets(item)
        elif isinstance(value, BaseModel):
            share_fields_sets(value)


_LEAVES = frozenset({str, int, float, bool, type(None)})


class TableCells(StrictModel):
    """What must appear together in one retrieved item for table integrity."""

    header: str | None = None
    row: str | None = None
    unit: str | None = None
    footnote: str | None = None

    def named(self) -> dict[str, str]:
        return {k: v for k, v in self.model_dump().items() if v}


class Evidence(StrictModel):
    """One required evidence location. Every location field given must match."""

    file_id: str | None = None
    filename: str | None = None
    page: int | None = Field(
        default=None, strict=True, ge=1, le=LOCATION_MAX, description="1-based page number"
    )
    section: str | None = None
    table: str | None = Field(default=None, description="table name or XLSX sheet")
    row: Annotated[int, Field(strict=True, ge=1, le=LOCATION_MAX)] | str | None = Field(
        default=None, description="1-based data row number, or the row's label"
    )
    table_cells: TableCells | None = None
    lang: str | None = Field(
        default=None,
        description="the prompt language this entry is required for (a fact that exists in "
        "a German and an English document: the German run must find the German one); "
        "an entry without lang is required in every language",
    )
    anchor: str | None = Field(
        default=None,
        description=(
            "a short verbatim passage (one line or phrase, 10-80 characters, normalised"
            " whitespace) taken from the location itself that identifies it; an item that"
            " carries no metadata for a location field the gold names matches that field when"
            " its text contains the anchor (after NFKC/casefold/whitespace normalisation)"
        ),
    )
    note: str | None = None

    @model_validator(mode="after")
    def _has_identity(self) -> Evidence:
        if not self.file_id and not self.filename:
            raise ValueError("evidence needs a file_id or a filename")
        return self


# What a typed claim's value is (docs/case-format.md): each kind has one canonical form, read
# the same way from the gold and from every answer (:mod:`pytest_ragv2.scoring.values`).
# what a typed claim is matched by instead: its value, in every writing of it
_UNTYPED_MATCHERS = ("any_of", "pattern", "number", "unit", "tolerance")


class Claim(StrictModel):
    """A claim in its long form; a plain string in YAML is shorthand for ``{text: ...}``.

    A **typed** claim names the ``kind`` of value it is and its ``value`` as the source
    writes it (``{kind: date, value: "1er trimestre 2026"}``); it is found when the answer
    holds the same value in any writing of it ("Q1 2026", "1. Quartal 2026"), and ``text``
    defaults to the value. ``text``, ``any_of`` and ``pattern`` stay for what is not a
    value."""

    text: str
    kind: ClaimKind | None = Field(
        default=None,
        description="the kind of value the claim is (quantity, money, percent, date, phone, "
        "email, url, identifier, count): matched by value, in every writing of it",
    )
    value: str | None = Field(
        default=None,
        description='a typed claim\'s value as the source writes it ("90 jours", '
        '"T1 2026", "+33 2 85 52 41 90"); it must read as one value of the kind',
    )
    any_of: list[str] = Field(default_factory=list)
    pattern: str | None = None
    number: float | None = Field(
        default=None, strict=True, allow_inf_nan=False, description="a finite number"
    )
    unit: str | None = None
    tolerance: float | None = Field(
        default=None,
        strict=True,
        allow_inf_nan=False,
        ge=0,
        description="how far from number a value may be, in unit (not negative)",
    )
    severity: Literal["low", "medium", "high"] = "medium"
    veto: VetoKind | None = Field(
        default=None,
        description="forbidden claims only: the hard safety veto an answer making this claim "
        "trips (e.g. an incompatible medium presented as compatible)",
    )

    @model_validator(mode="before")
    @classmethod
    def _from_string(cls, value: Any) -> Any:
        if isinstance(value, str):
            return {"text": value}
        if (
            isinstance(value, dict)
            and "text" not in value
            and ("kind" in value or "value" in value)
        ):
            # a typed claim is named by its value (what is missing is refused after)
            named = value.get("value")
            return {**value, "text": named if isinstance(named, str) else f"<{value.get('kind')}>"}
        return value

    @model_validator(mode="after")
    def _typed(self) -> Claim:
        """A typed claim has a value that reads as one value of its kind, and no untyped
        matcher beside it (it is matched by its value in every writing)."""
        if self.kind is None:
            if self.value is not None:
                raise ValueError(f"value {self.value!r} needs a kind ({', '.join(CLAIM_KINDS)})")
            return self
        if self.value is None:
            raise ValueError(f"a claim of kind {self.kind} needs a value")
        given = [name for name in _UNTYPED_MATCHERS if getattr(self, name) not in (None, [])]
        if given:
            raise ValueError(
                f"a claim of kind {self.kind} is matched by its value in every writing: leave "
                f"out {', '.join(given)}"
            )
        problem = typed_value_problem(self.value, self.kind)
        if problem is not None:
            raise ValueError(problem)
        return self

    @field_validator("pattern")
    @classmethod
    def _compiles(cls, pattern: str | None) -> str | None:
        """A pattern is compiled as the scorer compiles it, so a broken one is a located
        gold error at load, never a scoring failure on every run."""
        if pattern is not None:
            problem = claim_pattern_problem(pattern)
            if problem is not None:
                raise ValueError(problem)
        return pattern


def typed_value_problem(value: str, kind: ClaimKind) -> str | None:
    """Why ``value`` is not one value of ``kind`` (None when it is), read as every answer
    is read (:func:`pytest_ragv2.scoring.values.read_value`)."""
    from pytest_ragv2.scoring.values import read_value

    read = read_value(value, kind, None)
    if read is None:
        return f"value {value!r} does not read as one {kind} (docs/case-format.md: typed claims)"
    if kind == "count" and read.amount is not None and read.amount <= SMALL_COUNT:
        # every answer is full of small numbers: list items, table numbers, "[1]"
        return (
            f"a count of {SMALL_COUNT} or less cannot be told from an answer's other small "
            f'numbers by its value: write it as text with what it counts ("{value} …")'
        )
    return None


SMALL_COUNT = 10


# Claim patterns are compiled and matched with ``regex`` (re's syntax, VERSION0), whose
# matching takes a timeout: a pattern that backtracks catastrophically on a long answer
# stops at the run's scoring budget instead of stalling the session (re cannot be stopped).
CLAIM_PATTERN_FLAGS = regex.IGNORECASE | regex.DOTALL


def claim_pattern_problem(pattern: str) -> str | None:
    """Why ``pattern`` cannot be a claim pattern (None when it can): it must compile as a
    regular expression, after the typographic normalisation the answer gets, with the flags
    the claim scorer uses."""
    from pytest_ragv2.scoring.normalisation import normalise_pattern

    normalised = normalise_pattern(pattern)
    try:  # re's syntax is the format's: what re refuses is refused, with re's message
        re.compile(normalised, re.IGNORECASE | re.DOTALL)
        regex.compile(normalised, CLAIM_PATTERN_FLAGS)
    except (re.error, regex.error) as exc:
        return f"invalid regular expression: {exc}"
    return None


class ExpectedAnswer(StrictModel):
    required_claims: list[Claim] = Field(default_factory=list)
    optional_claims: list[Claim] = Field(default_factory=list)
    forbidden_claims: list[Claim] = Field(default_factory=list)


class ToolExpectation(StrictModel):
    """What one tool's calls in a turn must look like (docs/case-format.md)."""

    calls: Count | None = Field(default=None, description="exactly this many calls")
    min_calls: Count | None = None
    max_calls: Count | None = None
    queries_cover: list[str | list[str]] = Field(default_factory=list)
    cites_result_url: bool = False
    grounded_in_results: bool = False
    result_contains: str | None = None


class Requires(StrictModel):
    """The assistant setup a case needs; a system without it skips the case with the reason."""

    kb: bool = True
    kb_path: Literal["agentic", "systematic", "any"] = "any"
    web: bool = False
    network: bool = True
    tools_wire: bool = False


def _tools_as_keys(schema: dict[str, Any]) -> None:
    """In YAML the tool names are keys of ``expect_tools`` itself, not of ``tools``."""
    properties = schema.get("properties", {})
    tools = properties.pop("tools", None)
    if tools is not None:
        schema["additionalProperties"] = tools.get("additionalProperties", True)


EXPECT_TOOLS_KEYS = frozenset({"requires", "follow_up_of", "answers_from_turn", "turn_completes"})


class ExpectTools(StrictModel):
    """``expect_tools``: the setup, the turn keys, and one ``ToolExpectation`` per tool name.

    In YAML the tool names are keys beside ``requires`` (``search_knowledge_base: {calls:
    1}``); they are gathered into ``tools`` here. ``any_tool`` counts every tool together.
    """

    model_config = ConfigDict(extra="forbid", frozen=True, json_schema_extra=_tools_as_keys)

    requires: Requires = Field(default_factory=Requires)
    follow_up_of: int | None = Field(default=None, strict=True, ge=1)
    answers_from_turn: int | None = Field(default=None, strict=True, ge=1)
    turn_completes: bool = False
    tools: dict[str, ToolExpectation] = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _gather_tools(cls, value: Any) -> Any:
        if not isinstance(value, dict) or "tools" in value:
            return value
        gathered = {key: item for key, item in value.items() if key in EXPECT_TOOLS_KEYS}
        gathered["tools"] = {k: v for k, v in value.items() if k not in EXPECT_TOOLS_KEYS}
        return gathered


@functools.cache
def no_tool_expectations() -> ExpectTools:
    """The default ``expect_tools``, one frozen instance for every case and turn without
    one (validating a fresh one per case cost a tenth of a large collection's time)."""
    return ExpectTools()


class Turn(StrictModel):
    """One turn of a multi-turn case (the chat layers run them in one conversation).

    The case's ``mandatory_constraints`` apply to every turn; a turn's own are merged over
    them. ``safe_refusal_expected`` is the turn's own (a case's applies to a single-turn case).
    """

    prompts: dict[str, str]
    expected_answer: ExpectedAnswer | None = None
    required_evidence: list[Evidence] = Field(default_factory=list)
    expect_tools: ExpectTools = Field(default_factory=no_tool_expectations)
    mandatory_constraints: dict[str, Any] = Field(default_factory=dict)
    safe_refusal_expected: bool = False


def _every_layer() -> list[Literal["A", "B", "C"]]:
    # a plain list: calling the typed alias (``list[Literal[...]](...)``) cost 24 us a case
    return list(LAYERS)  # type: ignore[arg-type]  # the registry's names are the Literal's


class Case(StrictModel):
    """One gold case. ``prompt_en``/``prompt_de`` are shorthands merged into ``prompts``."""

    id: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
    category: str
    prompt_en: str | None = None
    prompt_de: str | None = None
    prompts: dict[str, str] = Field(default_factory=dict)
    expected_answer: ExpectedAnswer | None = None
    required_evidence: list[Evidence] | None = None
    mandatory_constraints: dict[str, Any] = Field(default_factory=dict)
    safe_refusal_expected: bool = False
    source_type: str = "public_document"
    gold_status: GoldStatus = "provisional"
    turns: list[Turn] = Field(default_factory=list)
    expect_tools: ExpectTools = Field(default_factory=no_tool_expectations)
    layers: list[Literal["A", "B", "C"]] = Field(
        default_factory=_every_layer,
        description="the layers that run this case (a tool-use or chit-chat case has no "
        "retrieval gold and runs at layer B only)",
    )
    tags: list[str] = Field(default_factory=list)
    notes: str | None = None

    @model_validator(mode="after")
    def _has_prompt(self) -> Case:
        merged = self.all_prompts()
        if not merged and not self.turns:
            raise ValueError("a case needs at least one prompt (prompt_en, prompt_de or prompts)")
        if merged != self.prompts:  # the shorthands folded in once (the model is frozen)
            self.__dict__["prompts"] = merged
        return self

    def all_prompts(self) -> dict[str, str]:
        """Every prompt by language code; the shorthands win no conflict silently."""
        merged = dict(self.prompts)
        if self.prompt_en is not None:
            merged["en"] = self.prompt_en
        if self.prompt_de is not None:
            merged["de"] = self.prompt_de
        return merged

    def languages(self) -> list[str]:
        """The languages the case can run in: its prompts', or those every turn has."""
        if not self.turns:
            return sorted(self.all_prompts())
        common = set(self.turns[0].prompts)
        for turn in self.turns[1:]:
            common &= set(turn.prompts)
        return sorted(common)

    def prompts_for(self, lang: str) -> list[str]:
        """The prompts one conversation in ``lang`` sends, in order (one per turn)."""
        if self.turns:
            return [turn.prompts[lang] for turn in self.turns]
        return [self.all_prompts()[lang]]

    @property
    def evidence(self) -> list[Evidence]:
        return list(self.required_evidence or [])

    def evidence_for(self, lang: str) -> list[Evidence]:
        """The entries required of a run in ``lang``: untagged ones and those tagged ``lang``."""
        return [entry for entry in self.evidence if entry.lang in (None, lang)]

    @property
    def is_exact_lookup(self) -> bool:
        return self.category in EXACT_LOOKUP_CATEGORIES
