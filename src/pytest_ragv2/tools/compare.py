"""``ragv2 compare RUN_A RUN_B``: what changed from one run to another, with evidence.

Both runs are rescored (:func:`pytest_ragv2.tools.rescore.rescore_run`) with one
configuration — ``--config``, else the one the first run's manifest records — so today's
scorers and gold apply to both. Then, per layer and system:

- per metric, the paired difference b − a over the cases both runs hold, each case's value
  the mean over its runs (repetitions, languages) as the aggregate takes it
  (:func:`pytest_ragv2.deciding.aggregate.case_metric_means`), with the comparison gates'
  interval and test (:func:`pytest_ragv2.deciding.stats.paired_comparison`: BCa bootstrap
  over cases, paired sign-flip permutation);
- the cases whose outcome changed: met in a and not in b (newly missed), or the reverse
  (newly met); a case is met when every run of it met its case;
- the vetoes: runs per veto kind in a and in b, and the cases where a kind appeared or went.

Cases held by one run only are counted and named, never paired. The comparison decides
nothing: the command exits 0, or 2 when a run cannot be read or the runs are of different
layers.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from pytest_ragv2.deciding.aggregate import case_metric_means
from pytest_ragv2.deciding.records import ChatRecord, RunRecord
from pytest_ragv2.deciding.stats import PairedComparison, paired_comparison
from pytest_ragv2.layers.protocol import load_layer
from pytest_ragv2.run.rawruns import MANIFEST_NAME
from pytest_ragv2.scoring.metrics import (
    ANSWER_METRICS,
    EVIDENCE_RECALL,
    RETRIEVAL_METRICS,
    Direction,
)

if TYPE_CHECKING:
    from pytest_ragv2.config.settings import Settings
    from pytest_ragv2.tools.rescore import Rescored

_DECLARED = {
    metric.name: metric for metric in (*RETRIEVAL_METRICS, *ANSWER_METRICS, EVIDENCE_RECALL)
}


class CompareError(ValueError):
    """Two folders that cannot be compared: not runs, unreadable, or of different layers."""


@dataclass(frozen=True, slots=True)
class MetricDelta:
    """One metric of one system: b − a paired by case."""

    layer: str
    system: str
    metric: str
    label: str
    direction: Direction
    mean_a: float  # over the paired cases
    mean_b: float
    paired: PairedComparison

    @property
    def reading(self) -> str:
        """What the interval says, in the metric's direction: better, worse or unclear."""
        low, high = self.paired.low, self.paired.high
        if self.paired.n == 0 or math.isnan(low) or math.isnan(high):
            return "undefined"
        if low == high == self.paired.estimate == 0.0:
            return "unchanged"
        if low <= 0.0 <= high:
            return "no clear change"
        if self.direction == "neither":
            return "changed"
        return "better" if (low > 0.0) == (self.direction == "higher") else "worse"

    def to_json(self) -> dict[str, Any]:
        return {
            "layer": self.layer,
            "system": self.system,
            "metric": self.metric,
            "label": self.label,
            "direction": self.direction,
            "mean_a": _finite(self.mean_a),
            "mean_b": _finite(self.mean_b),
            "delta": _finite(self.paired.estimate),
            "low": _finite(self.paired.low),
            "high": _finite(self.paired.high),
            "cases": self.paired.n,
            "p_two_sided": _finite(self.paired.p_two_sided),
            "interval": self.paired.interval,
            "test": self.paired.test,
            "reading": self.reading,
        }


@dataclass(frozen=True, slots=True)
class OutcomeChange:
    """A case whose outcome changed for a system: runs met out of runs, in a and in b."""

    layer: str
    system: str
    case: str
    met_a: tuple[int, int]
    met_b: tuple[int, int]

    @property
    def change(self) -> str:
        return "newly missed" if self.met_a[0] == self.met_a[1] else "newly met"

    def to_json(self) -> dict[str, Any]:
        return {
            "layer": self.layer,
            "system": self.system,
            "case": self.case,
            "change": self.change,
            "met_a": list(self.met_a),
            "met_b": list(self.met_b),
        }


@dataclass(frozen=True, slots=True)
class VetoChange:
    """A veto kind that appeared in (or went from) a case's runs of a system."""

    layer: str
    system: str
    case: str
    veto: str
    change: str  # "appeared" or "went"

    def to_json(self) -> dict[str, Any]:
        return {
            "layer": self.layer,
            "system": self.system,
            "case": self.case,
            "veto": self.veto,
            "change": self.change,
        }


@dataclass(slots=True)
class SystemCases:
    """The cases of one system in a and in b: paired, and those of one run only."""

    layer: str
    system: str
    paired: tuple[str, ...]
    only_a: tuple[str, ...]
    only_b: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "layer": self.layer,
            "system": self.system,
            "paired": len(self.paired),
            "only_a": list(self.only_a),
            "only_b": list(self.only_b),
        }


@dataclass(slots=True)
class RunComparison:
    run_a: str
    run_b: str
    seed_a: int
    seed_b: int
    layers: tuple[str, ...]
    configuration: str
    confidence: float
    cases: list[SystemCases] = field(default_factory=list)
    deltas: list[MetricDelta] = field(default_factory=list)
    outcomes: list[OutcomeChange] = field(default_factory=list)
    # layer -> system -> veto kind -> (runs in a, runs in b)
    veto_counts: dict[str, dict[str, dict[str, tuple[int, int]]]] = field(default_factory=dict)
    veto_changes: list[VetoChange] = field(default_factory=list)
    systems_only_a: list[str] = field(default_factory=list)
    systems_only_b: list[str] = field(default_factory=list)

    @property
    def name(self) -> str:
        return f"compare-{self.run_a}-vs-{self.run_b}"

    def to_json(self) -> dict[str, Any]:
        return {
            "run_a": self.run_a,
            "run_b": self.run_b,
            "seed_a": self.seed_a,
            "seed_b": self.seed_b,
            "layers": list(self.layers),
            "configuration": self.configuration,
            "confidence": self.confidence,
            "difference": "b - a, paired by case",
            "systems_only_a": self.systems_only_a,
            "systems_only_b": self.systems_only_b,
            "cases": [cases.to_json() for cases in self.cases],
            "metrics": [delta.to_json() for delta in self.deltas],
            "outcome_changes": [change.to_json() for change in self.outcomes],
            "vetoes": {
                layer: {
                    system: {kind: {"a": a, "b": b} for kind, (a, b) in kinds.items()}
                    for system, kinds in systems.items()
                }
                for layer, systems in self.veto_counts.items()
            },
            "veto_changes": [change.to_json() for change in self.veto_changes],
        }


def _finite(value: float) -> float | None:
    return value if math.isfinite(value) else None


def read_manifest(run_dir: Path) -> dict[str, Any]:
    """A run folder's manifest; :class:`CompareError` when the folder is not a run."""
    path = run_dir / MANIFEST_NAME
    if not path.is_file():
        raise CompareError(f"{run_dir}: not a raw-runs/<run-id> directory (no {MANIFEST_NAME})")
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise CompareError(f"{path}: does not read: {exc}") from None
    if not isinstance(manifest, dict) or "run_id" not in manifest:
        raise CompareError(f"{path}: not a run's manifest (no run_id)")
    return manifest


def run_layers(manifest: Mapping[str, Any]) -> tuple[str, ...]:
    """The layers a run ran, as its manifest records them (``A`` when it names none)."""
    return tuple(str(manifest.get("options", {}).get("layer") or "A").split(","))


def check_comparable(manifest_a: Mapping[str, Any], manifest_b: Mapping[str, Any]) -> None:
    layers_a, layers_b = run_layers(manifest_a), run_layers(manifest_b)
    if layers_a != layers_b:
        raise CompareError(
            f"run {manifest_a['run_id']} is of layer {','.join(layers_a)} and run "
            f"{manifest_b['run_id']} of layer {','.join(layers_b)}: only runs of the same "
            "layers compare"
        )


def _by_system(records: Iterable[RunRecord], layer: str) -> dict[str, list[RunRecord]]:
    systems: dict[str, list[RunRecord]] = {}
    for record in records:
        if record.key.layer == layer and not record.skipped:
            systems.setdefault(record.key.system, []).append(record)
    return systems


def _met_counts(records: Sequence[RunRecord]) -> dict[str, tuple[int, int]]:
    """Per case: runs that met it, and runs."""
    counts: dict[str, tuple[int, int]] = {}
    for record in records:
        met, runs = counts.get(record.key.case, (0, 0))
        counts[record.key.case] = (met + record.met, runs + 1)
    return counts


def _veto_kinds(records: Sequence[RunRecord]) -> dict[str, set[str]]:
    kinds: dict[str, set[str]] = {}
    for record in records:
        found = kinds.setdefault(record.key.case, set())
        if isinstance(record, ChatRecord):
            found.update(str(veto.kind) for veto in record.vetoes)
    return kinds


def compare_rescored(
    a: Rescored, b: Rescored, *, configuration: str, confidence: float
) -> RunComparison:
    """The comparison of two rescored runs of the same layers."""
    summary_a, summary_b = a.summary, b.summary
    layers = tuple(a.summaries)
    result = RunComparison(
        run_a=str(summary_a.run_id),
        run_b=str(summary_b.run_id),
        seed_a=int(summary_a.seed),
        seed_b=int(summary_b.seed),
        layers=layers,
        configuration=configuration,
        confidence=confidence,
    )
    for layer in layers:
        metrics = load_layer(layer).case_metrics
        systems_a, systems_b = _by_system(a.records, layer), _by_system(b.records, layer)
        result.systems_only_a += [s for s in systems_a if s not in systems_b]
        result.systems_only_b += [s for s in systems_b if s not in systems_a]
        for system in (name for name in systems_a if name in systems_b):
            _compare_system(result, layer, system, systems_a[system], systems_b[system], metrics)
        result.veto_counts[layer] = _veto_counts(
            a.summaries[layer].vetoes_by_system, b.summaries[layer].vetoes_by_system
        )
    return result


def _compare_system(
    result: RunComparison,
    layer: str,
    system: str,
    records_a: Sequence[RunRecord],
    records_b: Sequence[RunRecord],
    metrics: Sequence[str],
) -> None:
    means_a = case_metric_means(records_a, metrics)
    means_b = case_metric_means(records_b, metrics)
    paired = tuple(sorted(case for case in means_a if case in means_b))
    result.cases.append(
        SystemCases(
            layer,
            system,
            paired,
            tuple(sorted(case for case in means_a if case not in means_b)),
            tuple(sorted(case for case in means_b if case not in means_a)),
        )
    )
    for metric in metrics:
        common = [case for case in paired if metric in means_a[case] and metric in means_b[case]]
        values_a = [means_a[case][metric] for case in common]
        values_b = [means_b[case][metric] for case in common]
        declared = _DECLARED.get(metric)
        result.deltas.append(
            MetricDelta(
                layer=layer,
                system=system,
                metric=metric,
                label=declared.label if declared else metric,
                direction=declared.direction if declared else "neither",
                mean_a=sum(values_a) / len(values_a) if values_a else math.nan,
                mean_b=sum(values_b) / len(values_b) if values_b else math.nan,
                paired=paired_comparison(values_b, values_a, confidence=result.confidence),
            )
        )
    met_a, met_b = _met_counts(records_a), _met_counts(records_b)
    for case in paired:
        all_a = met_a[case][0] == met_a[case][1]
        all_b = met_b[case][0] == met_b[case][1]
        if all_a != all_b:
            result.outcomes.append(OutcomeChange(layer, system, case, met_a[case], met_b[case]))
    vetoes_a, vetoes_b = _veto_kinds(records_a), _veto_kinds(records_b)
    for case in paired:
        before, after = vetoes_a.get(case, set()), vetoes_b.get(case, set())
        for kind in sorted(after - before):
            result.veto_changes.append(VetoChange(layer, system, case, kind, "appeared"))
        for kind in sorted(before - after):
            result.veto_changes.append(VetoChange(layer, system, case, kind, "went"))


def _veto_counts(
    counts_a: Mapping[str, Mapping[str, int]] | None,
    counts_b: Mapping[str, Mapping[str, int]] | None,
) -> dict[str, dict[str, tuple[int, int]]]:
    """Per system in either run, runs per veto kind in a and in b (empty at a layer that
    records no vetoes)."""
    counts_a, counts_b = counts_a or {}, counts_b or {}
    table: dict[str, dict[str, tuple[int, int]]] = {}
    for system in dict.fromkeys([*counts_a, *counts_b]):
        of_a, of_b = counts_a.get(system, {}), counts_b.get(system, {})
        table[system] = {
            kind: (int(of_a.get(kind, 0)), int(of_b.get(kind, 0)))
            for kind in sorted({*of_a, *of_b})
        }
    return table


def compare_runs(
    run_a: Path, run_b: Path, config: str | None, cwd: Path
) -> tuple[RunComparison, Settings]:
    """Rescore both runs with one configuration and compare them; :class:`CompareError`
    when they cannot be compared."""
    from pytest_ragv2.tools.rescore import rescore_run
    from pytest_ragv2.tools.settings import rescore_settings

    manifest_a, manifest_b = read_manifest(run_a), read_manifest(run_b)
    check_comparable(manifest_a, manifest_b)
    try:
        settings, which = rescore_settings(run_a, manifest_a, config, cwd)
    except (OSError, ValueError) as exc:  # SettingsError is a ValueError
        raise CompareError(str(exc)) from None
    try:
        rescored_a, rescored_b = rescore_run(run_a, settings), rescore_run(run_b, settings)
    except (KeyError, OSError, ValueError) as exc:  # a manifest without a field it needs
        raise CompareError(f"a run does not read: {exc!r}") from None
    comparison = compare_rescored(
        rescored_a, rescored_b, configuration=which, confidence=1.0 - settings.gates.alpha
    )
    return comparison, settings


def write_comparison(comparison: RunComparison, folder: Path) -> Path:
    """summary.md, report.html and comparison.json in ``folder``; the folder."""
    from pytest_ragv2.report.comparison import comparison_html, comparison_markdown
    from pytest_ragv2.report.safe_text import json_dumps

    folder.mkdir(parents=True, exist_ok=True)
    (folder / "summary.md").write_text(comparison_markdown(comparison), encoding="utf-8")
    (folder / "report.html").write_text(comparison_html(comparison), encoding="utf-8")
    (folder / "comparison.json").write_text(
        json_dumps(comparison.to_json(), indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    return folder


def compare_command(
    run_a: Path, run_b: Path, config: str | None, output: Path | None, out: TextIO
) -> int:
    """Compare two runs, print the comparison, write its files; 0, or 2 when the runs
    cannot be compared."""
    from pytest_ragv2.report.comparison import comparison_lines

    try:
        comparison, settings = compare_runs(run_a, run_b, config, Path.cwd().resolve())
    except CompareError as exc:
        out.write(f"ragv2 compare: {exc}\n")
        return 2
    folder = write_comparison(comparison, output or settings.reports / comparison.name)
    for line in comparison_lines(comparison):
        out.write(line + "\n")
    cwd = Path.cwd().resolve()
    shown = folder.relative_to(cwd) if folder.is_relative_to(cwd) else folder
    out.write(f"comparison: {shown} (summary.md, report.html, comparison.json)\n")
    return 0
