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
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from pytest_ragv2.deciding.run_comparison import (
    RunComparison,
    by_system,
    compare_system,
    veto_counts,
)
from pytest_ragv2.deciding.verdict import fmt_delta
from pytest_ragv2.layers.protocol import load_layer
from pytest_ragv2.report.safe_text import printable
from pytest_ragv2.run.rawruns import MANIFEST_NAME

if TYPE_CHECKING:
    from pytest_ragv2.config.settings import Settings
    from pytest_ragv2.tools.rescore import Rescored


class CompareError(ValueError):
    """Two folders that cannot be compared: not runs, unreadable, or of different layers."""


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
        systems_a, systems_b = by_system(a.records, layer), by_system(b.records, layer)
        result.systems_only_a += [s for s in systems_a if s not in systems_b]
        result.systems_only_b += [s for s in systems_b if s not in systems_a]
        for system in (name for name in systems_a if name in systems_b):
            compare_system(result, layer, system, systems_a[system], systems_b[system], metrics)
        result.veto_counts[layer] = veto_counts(
            a.summaries[layer].vetoes_by_system, b.summaries[layer].vetoes_by_system
        )
    return result


def compare_runs(
    run_a: Path, run_b: Path, config: str | None, cwd: Path
) -> tuple[RunComparison, Settings]:
    """Rescore both runs with one configuration and compare them; :class:`CompareError`
    when they cannot be compared."""
    from pytest_ragv2.tools.settings import rescore_settings

    manifest_a, manifest_b = read_manifest(run_a), read_manifest(run_b)
    check_comparable(manifest_a, manifest_b)
    try:
        settings, which = rescore_settings(run_a, manifest_a, config, cwd)
    except (OSError, ValueError) as exc:  # SettingsError is a ValueError
        raise CompareError(str(exc)) from None
    try:
        rescored_a, rescored_b = _rescored(run_a, settings), _rescored(run_b, settings)
    except (KeyError, OSError, ValueError) as exc:  # a manifest without a field it needs
        raise CompareError(f"a run does not read: {exc!r}") from None
    comparison = compare_rescored(
        rescored_a, rescored_b, configuration=which, confidence=1.0 - settings.gates.alpha
    )
    return comparison, settings


def _rescored(run_dir: Path, settings: Settings) -> Rescored:
    from pytest_ragv2.tools.rescore import rescore_run

    return rescore_run(run_dir, settings)


def earlier_run_dir(name: str, raw_runs: Path) -> Path:
    """``--ragv2-compare=RUN``: a run id under the raw runs, else a folder (relative to the
    current folder)."""
    by_id = raw_runs / name
    if "/" not in name and "\\" not in name and by_id.is_dir():
        return by_id
    return Path(name)


def session_comparison(
    earlier: Path, this_run: Rescored, settings: Settings, cwd: Path
) -> list[str]:
    """``--ragv2-compare``: this session's run (as decided, not read again) compared with an
    earlier one rescored with the session's configuration; the comparison is written under
    the reports, and the lines returned say where and, per system, what changed in the
    headline metric. It decides nothing: a comparison that cannot be made is one line."""
    assert this_run.run_dir is not None
    try:
        check_comparable(read_manifest(earlier), read_manifest(this_run.run_dir))
        try:
            rescored = _rescored(earlier, settings)
        except (KeyError, OSError, ValueError) as exc:
            raise CompareError(f"a run does not read: {exc!r}") from None
        comparison = compare_rescored(
            rescored,
            this_run,
            configuration=f"{settings.source or 'defaults'} (this session's)",
            confidence=1.0 - settings.gates.alpha,
        )
        folder = write_comparison(comparison, settings.reports / comparison.name)
    except (CompareError, OSError) as exc:
        return [f"comparison with {earlier}: not made: {exc}"]
    shown = folder.relative_to(cwd) if folder.is_relative_to(cwd) else folder
    lines = [
        f"comparison with run {comparison.run_a}: {shown} (summary.md, report.html, "
        "comparison.json)"
    ]
    recall_k = settings.gates.recall_k
    for held in comparison.cases:
        headline = load_layer(held.layer).info.headline(recall_k)
        rows = [d for d in comparison.deltas if (d.layer, d.system) == (held.layer, held.system)]
        main = next((d for d in rows if d.metric == headline), None)
        changed = [
            c for c in comparison.outcomes if (c.layer, c.system) == (held.layer, held.system)
        ]
        missed = sum(1 for change in changed if change.change == "newly missed")
        figure = (
            f"{main.label} Δ {fmt_delta(main.paired.estimate)} [{fmt_delta(main.paired.low)}, "
            f"{fmt_delta(main.paired.high)}] over {main.paired.n} cases ({main.reading})"
            if main is not None and main.paired.n
            else f"{headline} not paired"
        )
        layer = f"layer {held.layer} " if len(comparison.layers) > 1 else ""
        lines.append(
            f"  {layer}{printable(held.system)}: {figure}; {missed} case(s) newly missed, "
            f"{len(changed) - missed} newly met; "
            f"{sum(d.reading == 'better' for d in rows)} metric(s) better, "
            f"{sum(d.reading == 'worse' for d in rows)} worse"
        )
    return lines


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
    cannot be compared or the comparison cannot be written."""
    from pytest_ragv2.report.comparison import comparison_lines

    try:
        comparison, settings = compare_runs(run_a, run_b, config, Path.cwd().resolve())
    except CompareError as exc:
        out.write(f"ragv2 compare: {exc}\n")
        return 2
    target = output or settings.reports / comparison.name
    try:
        folder = write_comparison(comparison, target)
    except OSError as exc:
        out.write(f"ragv2 compare: the comparison could not be written: {target}: {exc}\n")
        return 2
    for line in comparison_lines(comparison):
        out.write(line + "\n")
    cwd = Path.cwd().resolve()
    shown = folder.relative_to(cwd) if folder.is_relative_to(cwd) else folder
    out.write(f"comparison: {shown} (summary.md, report.html, comparison.json)\n")
    return 0
