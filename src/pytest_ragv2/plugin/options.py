"""Command-line and ini options, declared once; settings.py and the CLI read the same names."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class Option:
    flag: str
    dest: str
    help: str
    metavar: str | None = None
    choices: tuple[str, ...] | None = None
    type: Any = str
    flag_only: bool = False  # a switch (store_true) rather than an option with a value


OPTIONS: tuple[Option, ...] = (
    Option(
        "--ragv2-layer",
        "ragv2_layer",
        "run the gold cases at this layer: A retrieval only, B end to end, C frozen evidence; "
        "several in one session as A,B,C, each with its own gates, one verdict (the plugin is "
        "inert without it)",
        metavar="LAYERS",
    ),
    Option(
        "--ragv2-config",
        "ragv2_config",
        "run configuration: a ragv2.yaml or a pyproject.toml with [tool.ragv2] "
        "(default: ragv2.yaml, else pyproject.toml, in the rootdir)",
        metavar="PATH",
    ),
    Option(
        "--ragv2-systems",
        "ragv2_systems",
        "comma-separated names of the configured systems to run (default: all)",
        metavar="NAMES",
    ),
    Option(
        "--ragv2-reps",
        "ragv2_reps",
        "repetitions of every case per system and language",
        metavar="N",
        type=int,
    ),
    Option(
        "--ragv2-split",
        "ragv2_split",
        "case splits to collect: development, holdout or development,holdout "
        "(holdout cases are never collected unless named here or in the config)",
        metavar="SPLITS",
    ),
    Option(
        "--ragv2-lang",
        "ragv2_lang",
        "comma-separated prompt languages to run (default: every language a case has)",
        metavar="LANGS",
    ),
    Option(
        "--ragv2-seed",
        "ragv2_seed",
        "seed of the item order (printed and stored; default: a new one per run)",
        metavar="N",
        type=int,
    ),
    Option(
        "--ragv2-run-id",
        "ragv2_run_id",
        "name of this run's folders under raw-runs/ and reports/ (default: UTC time + seed)",
        metavar="ID",
    ),
    Option(
        "--ragv2-resume",
        "ragv2_resume",
        "go on with an earlier run (its id, or last): same seed and items, only the runs "
        "not yet on disk are made, one report for the whole run; refused if its "
        "configuration, cases, gold or options changed",
        metavar="RUN",
    ),
    Option(
        "--ragv2-retry-errors",
        "ragv2_retry_errors",
        "with --ragv2-resume: also run again every run that ended in an error (the new raw "
        "run replaces the old one)",
        flag_only=True,
    ),
    Option(
        "--ragv2-evidence",
        "ragv2_evidence",
        "layer C: the frozen evidence package every answer model receives (ragv2 freeze)",
        metavar="PATH",
    ),
    Option(
        "--ragv2-no-preflight",
        "ragv2_no_preflight",
        "skip the checks made before the first item (secrets set, credentials taken, "
        "queried file ids indexed)",
        flag_only=True,
    ),
    Option(
        "--ragv2-formal",
        "ragv2_formal",
        "a formal run: refuse to start unless every case is adjudicated, the gates are frozen "
        "(ragv2 freeze-gates) and the full case set runs at the locked repetitions",
        flag_only=True,
    ),
    Option(
        "--ragv2-plan",
        "ragv2_plan",
        "print the items per layer and system and the expected duration (from the latest "
        "raw runs' latencies) without running anything",
        flag_only=True,
    ),
    Option(
        "--ragv2-max-minutes",
        "ragv2_max_minutes",
        "the session's budget: once spent, no new run starts, what ran is kept and reported, "
        "and the verdict is incomplete (exit status 1)",
        metavar="N",
        type=float,
    ),
    Option(
        "--ragv2-shard",
        "ragv2_shard",
        "run one share of the cases, I of N (a CI matrix job): every run of a case in one "
        "shard, the shares stratified by category; the shard's verdict is partial, and "
        "`ragv2 merge` of every shard's raw runs decides",
        metavar="I/N",
    ),
    Option(
        "--ragv2-compare",
        "ragv2_compare",
        "after the verdict, compare this run with an earlier one (its id under raw-runs/, or "
        "its folder), rescored with this session's configuration: paired differences per "
        "system and metric, changed outcomes, vetoes, in reports/compare-<it>-vs-<this>; "
        "decides nothing (ragv2 compare does the same for two finished runs)",
        metavar="RUN",
    ),
    Option(
        "--ragv2-progress",
        "ragv2_progress",
        "a progress line (runs done, errors, ETA, latest run) every 15 s: auto (default: on "
        "an interactive terminal, not under -q or in CI), on, off, or the seconds between lines",
        metavar="WHEN",
    ),
)

INI_LAYER = "ragv2_layer"


def split_list(value: str | None) -> list[str] | None:
    """'a, b,,c' -> ['a', 'b', 'c']; None and '' -> None."""
    if not value:
        return None
    parts = [part.strip() for part in value.split(",")]
    return [part for part in parts if part] or None
