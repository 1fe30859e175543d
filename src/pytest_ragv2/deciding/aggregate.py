"""Controller-side aggregation of item records into per-system, -category, -language tables.

Repetitions are nested in cases, so every rate below is a mean of per-case means (the case
is the unit), except latency percentiles and error rates, which are over runs. A run that
failed (timeout, transport, non-2xx, malformed body) is scored as an empty result list: an
error costs the system its recall, it is never dropped from the denominator.
"""

from __future__ import annotations

import functools
import math
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from pytest_ragv2.deciding.case_rows import CaseRows
from pytest_ragv2.deciding.records import ChatRecord, RunRecord
from pytest_ragv2.deciding.results import (
    Latency,
    RowFigures,
    SessionResults,
    SystemRow,
    _finite,
)
from pytest_ragv2.deciding.stats import clustered_mean_ci, order_statistic_ci, percentile
from pytest_ragv2.layers.protocol import load_layer
from pytest_ragv2.run.keys import RunKey
from pytest_ragv2.scoring.metrics import (
    ANSWER_METRICS,
    GRADES,
    RETRIEVAL_METRICS,
    RUBRIC_COLUMNS,
    case_metric_names,
)
from pytest_ragv2.systems.outputs import SCORING_ERROR_KINDS

# the per-run metrics of each layer, averaged per case then over cases (metrics.py)
CASE_MEAN_METRICS = case_metric_names(RETRIEVAL_METRICS)
ANSWER_CASE_MEAN_METRICS = case_metric_names(ANSWER_METRICS)


def case_metric_means(
    records: Iterable[RunRecord], metrics_named: Sequence[str] = CASE_MEAN_METRICS
) -> dict[str, dict[str, float]]:
    """Per case, the mean of every case-mean metric over that case's runs, in one pass
    (undefined values left out; a metric undefined in every run of a case is absent;
    skipped runs count for nothing)."""
    runs_of: dict[str, list[tuple[float | None, ...]]] = {}
    for record in records:
        if record.skipped:
            continue
        values = tuple(
            [
                (1.0 if record.met else 0.0) if metric == "met" else record.metric(metric)
                for metric in metrics_named
            ]
        )
        runs_of.setdefault(record.key.case, []).append(values)
    means: dict[str, dict[str, float]] = {}
    for case, runs in runs_of.items():
        if len(runs) == 1:  # run once: its own values (the record's floats, not copies)
            means[case] = {
                metric: value
                for metric, value in zip(metrics_named, runs[0], strict=True)
                if value is not None
            }
            continue
        of_case: dict[str, float] = {}
        for index, metric in enumerate(metrics_named):
            found = [value for run in runs if (value := run[index]) is not None]
            if found:
                of_case[metric] = sum(found) / len(found)
        means[case] = of_case
    return means


def summarize(
    records: Sequence[RunRecord],
    *,
    with_intervals: bool = False,
    layer: str = "A",
    case_means: Mapping[str, Mapping[str, float]] | None = None,
    recall_k: int = 5,
) -> SystemRow:
    """One table row: the metrics of a group of runs (intervals only where asked: they cost
    a bootstrap each). Skipped runs are counted, and left out of every figure.
    ``case_means``: the group's per-case means when the caller has them already
    (:func:`case_metric_means` of exactly these runs, or of runs with the same cases)."""
    skipped = sum(1 for record in records if record.skipped)
    if skipped:
        records = [record for record in records if not record.skipped]
    runs = len(records)
    # a run the scorer could not score within its bound is not the system's failure
    scoring_errors = sum(1 for record in records if _scoring_error(record))
    errors = sum(1 for record in records if not record.ok) - scoring_errors
    # A failed call's latency measures the failure (a refused connection, a 401), not the
    # system: percentiles are over the successful runs only.
    latencies = [record.latency_s for record in records if record.ok]
    implementation = load_layer(layer)
    metrics_named = implementation.case_metrics
    per_case = case_means if case_means is not None else case_metric_means(records, metrics_named)
    means: list[float | None] = []
    for metric in metrics_named:
        found = [case[metric] for case in per_case.values() if metric in case]
        # one case (a per-case row): its mean as it is, not a copy of the float
        means.append((found[0] if len(found) == 1 else sum(found) / len(found)) if found else None)
    kinds, example = error_kinds(records)
    row = SystemRow(
        runs=runs,
        cases=len(per_case),
        errors=errors,
        error_rate=errors / runs if runs else None,
        skipped=skipped,
        metrics=dict(zip(metrics_named, means, strict=True)),
        latency_p50=Latency(_percentile(latencies, 50)),
        latency_p95=Latency(_percentile(latencies, 95)),
        error_kinds=kinds,
        error_example=example,
        extras=implementation.row_extras(records),
        scoring_errors=scoring_errors,
    )
    if with_intervals:
        # distribution-free: an order-statistic interval reaches the observed tail
        row.latency_p50 = Latency.estimated(order_statistic_ci(latencies, 50))
        row.latency_p95 = Latency.estimated(order_statistic_ci(latencies, 95))
        # one value per case: the interval is the cluster bootstrap of the mean of case means
        headline = implementation.info.headline(recall_k)
        values = {name: [case[headline]] for name, case in per_case.items() if headline in case}
        row.headline_ci = (headline, clustered_mean_ci(values))
    return row


def _scoring_error(record: RunRecord) -> bool:
    return record.error is not None and record.error.kind in SCORING_ERROR_KINDS


def error_kinds(records: Sequence[RunRecord]) -> tuple[dict[str, int], str]:
    """The failed runs by error kind, most frequent first, with one example message of the
    most frequent kind; empty when nothing failed. Scoring errors (``scoring_budget``) are
    not the system's and are left out (counted in ``SystemRow.scoring_errors``)."""
    kinds: Counter[str] = Counter()
    examples: dict[str, str] = {}
    for record in records:
        if record.ok or _scoring_error(record):
            continue
        error = record.error
        kind = error.kind if error is not None else "unknown"
        kinds[kind] += 1
        if kind not in examples and error is not None and error.message:
            examples[kind] = f"{record.key.case}: {error.message}"
    if not kinds:
        return {}, ""
    dominant = kinds.most_common(1)[0][0]
    return dict(kinds.most_common()), examples.get(dominant, "")


def _percentile(values: Sequence[float], q: float) -> float | None:
    if len(values) == 1:  # a per-case row of one run: every percentile is its value
        value = float(values[0])
        return value if math.isfinite(value) else None  # as percentile() gives (inf: NaN)
    return _finite(percentile(values, q))


def group(
    records: Iterable[RunRecord], by: Callable[[RunRecord], str]
) -> dict[str, list[RunRecord]]:
    groups: dict[str, list[RunRecord]] = defaultdict(list)
    for record in records:
        groups[by(record)].append(record)
    return dict(sorted(groups.items()))


def _system(record: RunRecord) -> str:
    return record.key.system


def _means_of_cases(
    case_means: Mapping[str, dict[str, float]], rows: Sequence[RunRecord]
) -> dict[str, Mapping[str, float]]:
    """The per-case means of the cases of ``rows``, in their order."""
    cases = dict.fromkeys(row.key.case for row in rows)
    return {case: case_means[case] for case in cases if case in case_means}


def aggregate(
    records: Iterable[RunRecord],
    *,
    roles: Mapping[str, str],
    expected_runs: int | None = None,
    layer: str = "A",
    recall_k: int = 5,
) -> SessionResults:
    """Deduplicate by run key (the last record wins) and build every table."""
    unique: dict[RunKey, RunRecord] = {}
    for record in records:
        unique[record.key] = record
    ordered = [unique[key] for key in sorted(unique, key=RunKey.sort_key)]
    results = SessionResults(
        records=ordered,
        roles=dict(roles),
        expected_runs=expected_runs,
        layer=layer,
        recall_k=recall_k,
    )
    rank = {"baseline": 0, "candidate": 1, "reference": 2}
    by_system = group(ordered, _system)
    # baseline, candidate, reference, then any other: every table reads in that order
    metrics_named = load_layer(layer).case_metrics
    for system in sorted(by_system, key=lambda name: (rank.get(roles.get(name, ""), 3), name)):
        system_records = by_system[system]
        # a case's means over all its runs serve its own row, the system's and its
        # category's (a case has one category); a language's rows need their own
        case_means = case_metric_means(system_records, metrics_named)
        means_of = functools.partial(_means_of_cases, case_means)
        results.systems[system] = summarize(
            system_records,
            with_intervals=True,
            layer=layer,
            case_means=case_means,
            recall_k=recall_k,
        )
        results.systems[system].role = roles.get(system, "unknown")
        results.by_category[system] = {
            name: summarize(rows, layer=layer, case_means=means_of(rows))
            for name, rows in group(system_records, lambda r: r.category).items()
        }
        # a case asked in one language only: its means over all its runs are its language's
        one_language = len({(r.key.case, r.key.lang) for r in system_records}) == len(
            {r.key.case for r in system_records}
        )
        results.by_language[system] = {
            name: summarize(rows, layer=layer, case_means=means_of(rows) if one_language else None)
            for name, rows in group(system_records, lambda r: r.key.lang).items()
        }
        # one row per case and system, kept compact until read (case_rows.py)
        case_rows = results.by_case[system] = CaseRows()
        for name, rows in group(system_records, lambda r: r.key.case).items():
            case_rows.add(name, summarize(rows, layer=layer, case_means=means_of(rows)))
    return results


def rubric_counts(results: SessionResults) -> dict[str, dict[str, dict[str, int]]]:
    """Per system and rubric dimension, how many runs were graded PASS, PARTIAL and FAIL
    (skipped runs and runs without a rubric are left out)."""
    table: dict[str, dict[str, dict[str, int]]] = {}
    for system in results.systems:
        counts = {dimension: dict.fromkeys(GRADES, 0) for dimension in RUBRIC_COLUMNS}
        for record in results.records_of(system):
            rubric = record.rubric if isinstance(record, ChatRecord) else None
            if not rubric or record.skipped:
                continue
            for dimension in RUBRIC_COLUMNS:
                grade = rubric.get(dimension)
                if grade in counts[dimension]:
                    counts[dimension][grade] += 1
        table[system] = counts
    return table


def judge_counts(results: SessionResults) -> dict[str, dict[str, int]]:
    """Per system: the advisory judge's grades, unreadable replies, and how many graded runs
    the judge and the rubric's overall grade agree on (empty without a judge)."""
    table: dict[str, dict[str, int]] = {}
    for system in results.systems:
        counts = {"PASS": 0, "PARTIAL": 0, "FAIL": 0, "no grade": 0, "agrees with rubric": 0}
        judged = False
        for record in results.records_of(system):
            judge = record.judge
            if not judge:
                continue
            judged = True
            grade = judge.grade
            if grade in GRADES:
                counts[grade] += 1
                rubric = record.rubric if isinstance(record, ChatRecord) else {}
                if grade == rubric.get("overall"):
                    counts["agrees with rubric"] += 1
            else:
                counts["no grade"] += 1
        if judged:
            table[system] = counts
    return table


def _modal_share(groups: Mapping[Any, list[Any]]) -> float | None:
    """Mean over groups (a case in one language) of the share of runs equal to the group's
    most frequent value; groups of one run say nothing and are left out."""
    shares = []
    for values in groups.values():
        if len(values) > 1:
            shares.append(max(values.count(value) for value in values) / len(values))
    return sum(shares) / len(shares) if shares else None


def _tokens(usage: Mapping[str, int], *names: str) -> int | None:
    for name in names:
        if name in usage:
            return int(usage[name])
    return None


def consistency_and_cost(records: Sequence[RunRecord]) -> RowFigures:
    """The protocol's per-system and per-case extras of layer B: answer and retrieved-document
    consistency over repetitions, timeouts and tool errors, repeated searches, and the
    input, evidence and output sizes (characters; tokens where the system reports them)."""
    answers: dict[tuple[str, str], list[Any]] = defaultdict(list)
    documents: dict[tuple[str, str], list[Any]] = defaultdict(list)
    sizes: dict[str, list[float]] = defaultdict(list)
    timeouts = 0
    for record in records:
        if not isinstance(record, ChatRecord):
            continue
        group = (record.key.case, record.key.lang)
        if record.answer_digest is not None:
            answers[group].append(record.answer_digest)
            documents[group].append(record.evidence_files)
        timeouts += bool(record.error and record.error.kind == "timeout")
        for name, value in record.sizes.items():
            sizes[name].append(float(value))
        usage = record.usage
        tokens_in = _tokens(usage, "prompt_tokens", "input_tokens")
        tokens_out = _tokens(usage, "completion_tokens", "output_tokens")
        if tokens_in is not None:
            sizes["input_tokens"].append(float(tokens_in))
        if tokens_out is not None:
            sizes["output_tokens"].append(float(tokens_out))
    row: RowFigures = {
        "answer_consistency": _modal_share(answers),
        "evidence_consistency": _modal_share(documents),
        "timeouts": timeouts,
        "tool_errors": int(sum(sizes.get("tool_errors", []))),
    }
    for name in (
        "tool_calls",
        "repeated_searches",
        "input_chars",
        "evidence_chars",
        "output_chars",
        "input_tokens",
        "output_tokens",
    ):
        values = sizes.get(name)
        row[f"{name}_per_run"] = sum(values) / len(values) if values else None
    return row
