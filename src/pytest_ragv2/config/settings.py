"""The run configuration: systems, gates, paths (pydantic), from ragv2.yaml or [tool.ragv2].

Command-line options override the file; paths are relative to the file that names them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from pytest_ragv2.config.file import SettingsError, find_config, read_config
from pytest_ragv2.gold.schema import Split
from pytest_ragv2.systems.config import CALL_TIMEOUT_MAX_S
from pytest_ragv2.systems.openai_chat import OpenAIChatConfig
from pytest_ragv2.systems.registry import ChatConfig, RetrievalConfig

Role = Literal["baseline", "candidate", "reference"]
# every repetition is an item of every case, system and language: beyond this, a typo
# (1e9) would build items until memory runs out, before the first run
REPETITIONS_MAX = 1000
# the embedded demo server's fault modes (docs/demo.md)
DEMO_FAULT = re.compile(r"latency-\d+(?:\.\d+)?|hang-\d+(?:\.\d+)?|5xx|5xx-once|malformed|truncate")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ChatCapabilities(_Strict):
    """The assistant setup a system provides; a case whose ``expect_tools.requires`` asks
    for another setup is skipped on this system with the reason (docs/case-format.md)."""

    kb: bool = Field(default=True, description="a knowledge base is attached")
    kb_path: Literal["agentic", "systematic"] = Field(
        default="agentic",
        description="agentic: the model searches through a tool; systematic: excerpts are "
        "retrieved and injected before the model answers",
    )
    web: bool = Field(default=False, description="the web-search tool is on")
    network: bool = Field(default=True, description="the system is online")
    tools_wire: bool = Field(default=True, description="the model's tool calls parse")


class SystemSettings(_Strict):
    role: Role
    retrieval: RetrievalConfig | None = None
    chat: ChatConfig | None = Field(
        default=None, description="the chat path the end-to-end layer (B) runs"
    )
    capabilities: ChatCapabilities = Field(default_factory=ChatCapabilities)
    slot: str = Field(
        default="default",
        description="inference slot; chat-layer runs of one slot never overlap",
    )
    descriptors: dict[str, str] = Field(
        default_factory=dict,
        description="fair-run record: deployment_id, agent_id, index_version, "
        "embedding_model, reranker, prompt_version, ...",
    )


class GateSettings(_Strict):
    """Thresholds of the layer-A promotion gates (README: 'Gates')."""

    recall_k: Literal[1, 3, 5, 10] = 5
    exact_lookup_min: float = Field(default=0.95, ge=0, le=1)
    recall_improvement_min: float = Field(
        default=0.05,
        description="candidate recall@k minus baseline recall@k must be at least this",
    )
    category_regression_max: float = Field(
        default=0.05,
        ge=0,
        description="no category's recall@k may fall below the baseline's by more than this",
    )
    retrieval_p95_max_s: float = Field(default=2.0, gt=0)
    error_rate_max: float = Field(default=0.01, ge=0, le=1)
    decision_rule: Literal["interval", "test"] = Field(
        default="interval",
        description='"interval": a comparison holds when its interval clears the margin '
        '(improves: lower bound >= +margin; materially worse: upper bound < -margin); "test": '
        "when the one-sided paired test against the margin is significant at alpha",
    )
    alpha: float = Field(
        default=0.05,
        gt=0,
        lt=1,
        description="the tests' significance level; the intervals' confidence is 1 - alpha",
    )
    category_min_cases: int = Field(
        default=5,
        ge=1,
        description="a category with fewer paired cases is reported but cannot fail "
        "category_regression on its own",
    )


class AnswerGateSettings(_Strict):
    """Thresholds of the layer-B gates (the protocol's recommended starting gates)."""

    exact_answer_min: float = Field(default=0.90, ge=0, le=1)
    citation_correctness_min: float = Field(default=0.95, ge=0, le=1)
    case_wins_min: float = Field(
        default=0.80,
        ge=0,
        le=1,
        description="share of cases where the candidate wins or ties the baseline "
        "(correct runs out of the repetitions)",
    )
    e2e_p95_max_s: float = Field(default=45.0, gt=0)
    error_rate_max: float = Field(default=0.01, ge=0, le=1)
    case_wins_ties: Literal["both_met", "any"] = Field(
        default="both_met",
        description='"both_met": a tie counts for the candidate only when both systems met '
        'the case at least once (two systems that both always fail do not tie); "any": '
        "every tie counts",
    )


class ScoreWeightSettings(_Strict):
    """The weighted quality score's area weights (the protocol's by default; any
    non-negative numbers, normalised by their sum). The score is shown behind the hard
    vetoes and decides no gate; see docs/quality-score.md."""

    answer_correctness: float = Field(default=0.30, ge=0)
    retrieval_quality: float = Field(default=0.25, ge=0)
    citation_grounding: float = Field(default=0.20, ge=0)
    completeness: float = Field(default=0.10, ge=0)
    refusal_constraints: float = Field(default=0.10, ge=0)
    latency_reliability: float = Field(default=0.05, ge=0)

    @model_validator(mode="after")
    def _some_weight(self) -> ScoreWeightSettings:
        if sum(self.model_dump().values()) <= 0:
            raise ValueError("at least one weight must be positive")
        return self


class ItemPassSettings(_Strict):
    """When one run 'meets its case' (the item's own pass/fail)."""

    recall_k: Literal[1, 3, 5, 10] = 5


class Settings(_Strict):
    cases: Path = Path("cases")
    gold: Path = Path("gold")
    corpus: Path = Path("corpus")
    allowlist: Path | None = Path("gold/allowlist.yaml")
    raw_runs: Path = Path("raw-runs")
    reports: Path = Path("reports")
    evidence: Path | None = Field(
        default=None,
        description="layer C: the frozen evidence package (`ragv2 freeze`) every answer "
        "model receives",
    )
    layer: str | None = Field(
        default=None,
        description='the layer to run ("A", "B" or "C"), or several in one session ("A,B,C")',
    )
    repetitions: int | None = Field(
        default=None,
        strict=True,
        ge=1,
        le=REPETITIONS_MAX,
        description="default: 1 at layer A, 5 at layers B and C; at most 1000",
    )
    splits: list[Split] = Field(default_factory=lambda: list[Split](["development"]), min_length=1)
    languages: list[str] | None = Field(
        default=None,
        min_length=1,
        description="the prompt languages to run (default: every language a case has); each "
        "must be one some case has a prompt in",
    )
    categories: list[str] = Field(
        default_factory=list,
        description="the project's own case categories, beside the documented ones; any "
        "other category in a case is a located warning (a typo never makes a new category)",
    )
    seed: int | None = None
    systems: dict[str, SystemSettings] = Field(default_factory=dict)
    gates: GateSettings = Field(default_factory=GateSettings)
    answer_gates: AnswerGateSettings = Field(default_factory=AnswerGateSettings)
    score_weights: ScoreWeightSettings = Field(
        default_factory=ScoreWeightSettings,
        description="the weighted quality score's area weights (a summary figure behind "
        "the vetoes; decides no gate)",
    )
    judge: OpenAIChatConfig | None = Field(
        default=None,
        description="an optional OpenAI-compatible judge model at layer B: its grade is "
        "recorded and reported beside the rubric, and never decides an item or a gate",
    )
    demo_faults: dict[str, str] = Field(
        default_factory=dict,
        description="embedded demo only: system name -> fault spec of the demo server "
        '("5xx", "5xx-once", "malformed", "truncate", "latency-<ms>", "hang-<s>", '
        "comma-separated), for testing how a session records a failing system",
    )
    demo_timeout_s: float = Field(
        default=30.0,
        gt=0,
        le=CALL_TIMEOUT_MAX_S,
        allow_inf_nan=False,
        description="embedded demo only: the chat and command timeout",
    )
    max_minutes: float | None = Field(
        default=None,
        gt=0,
        description="the session's budget in minutes: once spent, no new run starts and the "
        "verdict is incomplete",
    )
    answer_scoring: dict[str, Any] = Field(
        default_factory=dict,
        description="options of the answer scorers (refusal phrases, synthetic labels, "
        "languages); see docs/answer-scoring.md",
    )
    item_pass: ItemPassSettings = Field(default_factory=ItemPassSettings)
    source: Path | None = Field(default=None, exclude=True)

    @field_validator("systems")
    @classmethod
    def _one_candidate_at_most(cls, value: dict[str, SystemSettings]) -> dict[str, SystemSettings]:
        for role in ("baseline", "candidate"):
            named = [name for name, system in value.items() if system.role == role]
            if len(named) > 1:
                raise ValueError(f"more than one {role}: {', '.join(named)}")
        return value

    @field_validator("layer")
    @classmethod
    def _known_layers(cls, value: str | None) -> str | None:
        """ "a, B,a" -> "A,B": the layers in the order given, each once."""
        if value is None:
            return None
        from pytest_ragv2.layers.registry import LAYERS

        layers = list(dict.fromkeys(part.strip().upper() for part in value.split(",")))
        unknown = [layer for layer in layers if layer not in LAYERS]
        if unknown or not layers or "" in layers:
            known = list(LAYERS)
            names = ", ".join(known[:-1]) + f" and {known[-1]}" if len(known) > 1 else known[0]
            raise ValueError(f"unknown layer {value!r}: the layers are {names}")
        return ",".join(layers)

    @property
    def layers(self) -> tuple[str, ...]:
        """The layers this session runs, in the order given (none: the plugin is inert)."""
        return tuple(self.layer.split(",")) if self.layer else ()

    def repetitions_for(self, layer: str) -> int:
        if self.repetitions is not None:
            return self.repetitions
        from pytest_ragv2.layers.registry import LAYERS

        info = LAYERS.get(layer)
        return info.default_repetitions if info is not None else 1

    @property
    def repetitions_per_run(self) -> int:
        """The repetitions of the first layer (of the only one, in a one-layer session)."""
        return self.repetitions_for(self.layers[0] if self.layers else "A")

    @field_validator("demo_faults")
    @classmethod
    def _known_faults(cls, value: dict[str, str]) -> dict[str, str]:
        for system, spec in value.items():
            bad = [part for part in spec.split(",") if not DEMO_FAULT.fullmatch(part.strip())]
            if bad:
                raise ValueError(
                    f"{system}: unknown fault {', '.join(map(repr, bad))} (known: 5xx, "
                    "5xx-once, malformed, truncate, latency-<ms>, hang-<s>)"
                )
        return value

    def where(self, *keys: str) -> str:
        """``file:line`` of a configured key, for an error about it found after loading."""
        from pytest_ragv2.config.errors import config_location

        return config_location(self.source, keys)

    def system_names(self, role: Role) -> list[str]:
        return [name for name, system in self.systems.items() if system.role == role]


# settings a command-line option can override, named as the user typed them
OPTION_OF = {
    "layer": "--ragv2-layer",
    "repetitions": "--ragv2-reps",
    "splits": "--ragv2-split",
    "languages": "--ragv2-lang",
    "seed": "--ragv2-seed",
    "evidence": "--ragv2-evidence",
    "max_minutes": "--ragv2-max-minutes",
}

PATH_FIELDS = ("cases", "gold", "corpus", "allowlist", "raw_runs", "reports", "evidence")


__all__ = ["Settings", "SettingsError", "SystemSettings", "load_settings"]


def load_settings(
    rootdir: Path,
    explicit: str | None,
    overrides: Mapping[str, Any] | None = None,
    *,
    path: Path | None = None,
    raw: Mapping[str, Any] | None = None,
    invocation_dir: Path | None = None,
) -> Settings:
    """Settings from the configuration file, with command-line overrides applied on top
    (``path`` and ``raw`` skip finding and reading the file when the caller already did)."""
    if raw is None:
        path = find_config(rootdir, explicit, invocation_dir)
        raw = read_config(path) if path else {}
    raw = dict(raw)
    given = {key: value for key, value in (overrides or {}).items() if value is not None}
    raw.update(given)
    base = path.parent if path else rootdir
    try:
        settings = Settings.model_validate(raw)
    except ValidationError as exc:
        from pytest_ragv2.config.errors import settings_errors

        named = {key: OPTION_OF.get(key, key) for key in given}
        lines = settings_errors(exc, Settings, path, named)
        raise SettingsError("\n".join(lines)) from None
    if path is not None and path.suffix != ".toml":
        _refuse_duplicate_keys(path)
    resolved: dict[str, Any] = {"source": path}
    for name in PATH_FIELDS:
        value = getattr(settings, name)
        if value is not None and not value.is_absolute():
            from_option = name in given and invocation_dir is not None
            full = (invocation_dir if from_option else base) / value
            # the allow-list keeps its own name: an error about a link names the link
            keep = name == "allowlist"
            resolved[name] = full.parent.resolve() / full.name if keep else full.resolve()
    return settings.model_copy(update=resolved)


def _refuse_duplicate_keys(path: Path) -> None:
    """A key written twice in a YAML configuration is an error (YAML keeps the last one
    silently; TOML refuses it when read)."""
    from pytest_ragv2.config.located_yaml import YamlProblem, duplicate_key_errors, parse_yaml

    try:
        document = parse_yaml(path)
    except YamlProblem:
        return  # read_config already read it: nothing new to say
    if document.root is None:
        return
    errors = duplicate_key_errors(document.root, path, None, document.duplicates)
    if errors:
        raise SettingsError("\n".join(str(error) for error in errors))
