"""Statistics for the session: percentiles and bootstrap confidence intervals.

Repetitions are nested in cases, so interval estimates of per-case metrics treat the case as
the cluster (:func:`clustered_mean_ci`). Latency percentiles are over runs
(:func:`percentile_ci`). Every function is pure and seeded: the same input gives the same
interval on every machine and every rerun.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

# numpy is imported inside the functions that resample: the controller imports this module
# at start-up, and warms numpy in the background while the runs wait on the network.


@dataclass(frozen=True, slots=True)
class Estimate:
    """A point estimate with its confidence interval; ``n`` is the number of units behind it
    (values or clusters) and ``method`` says how the interval was obtained."""

    value: float
    low: float
    high: float
    n: int
    method: str

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def _check_confidence(confidence: float) -> None:
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be strictly between 0 and 1, got {confidence}")


def _check_q(q: float) -> None:
    if not 0.0 <= q <= 100.0:
        raise ValueError(f"percentile q must be within [0, 100], got {q}")


def percentile(values: Sequence[float], q: float) -> float:
    """The q-th percentile (q in [0, 100]) by linear interpolation between closest ranks
    (numpy's default); NaN for no values; a NaN among the values gives NaN."""
    _check_q(q)
    if len(values) == 0:
        return math.nan
    # plain Python: called once per table row, where numpy's call overhead dominated
    ordered = sorted(float(value) for value in values)
    if any(math.isnan(value) for value in ordered):
        return math.nan
    position = (len(ordered) - 1) * q / 100.0
    lower = math.floor(position)
    upper = min(lower + 1, len(ordered) - 1)
    return ordered[lower] + (ordered[upper] - ordered[lower]) * (position - lower)


BOOTSTRAP_BLOCK_VALUES = 1 << 18


def percentile_ci(
    values: Sequence[float],
    q: float,
    *,
    confidence: float = 0.95,
    n_resamples: int = 2000,
    seed: int = 0,
) -> Estimate:
    """The q-th percentile with a bootstrap percentile-method interval.

    Degenerate inputs need no resampling: fewer than two values, or all values equal, give
    ``low = high = value``; no values give NaN everywhere.
    """
    import numpy as np

    _check_q(q)
    _check_confidence(confidence)
    data = np.asarray(values, dtype=float)
    value = percentile(values, q)
    if data.size == 0 or math.isnan(value):
        return Estimate(math.nan, math.nan, math.nan, int(data.size), "undefined")
    if data.size < 2 or bool(np.all(data == data[0])):
        return Estimate(value, value, value, int(data.size), "degenerate")

    # The percentile bootstrap, as scipy.stats.bootstrap(method="percentile") computes it,
    # in plain numpy: scipy.stats costs about a second to import, paid at every session's end
    # (tests/test_stats.py checks the two agree).
    rng = np.random.default_rng(seed)
    # in blocks, so memory stays bounded (n_resamples x n values at once is 32 MB at 1,000)
    block = max(1, BOOTSTRAP_BLOCK_VALUES // data.size)
    estimates = np.concatenate(
        [
            np.percentile(
                data[rng.integers(0, data.size, size=(min(block, n_resamples - start), data.size))],
                q,
                axis=1,
            )
            for start in range(0, n_resamples, block)
        ]
    )
    tail = (1.0 - confidence) / 2.0 * 100.0
    low, high = np.percentile(estimates, [tail, 100.0 - tail])
    return Estimate(value, float(low), float(high), int(data.size), "bootstrap-percentile")


def clustered_mean_ci(
    values_by_cluster: Mapping[str, Sequence[float]],
    *,
    confidence: float = 0.95,
    n_resamples: int = 2000,
    seed: int = 0,
) -> Estimate:
    """The mean of all values with a cluster-bootstrap percentile interval.

    A cluster is a case (its values are the case's runs). Each resample draws as many
    clusters as there are, with replacement, and takes the mean of all values of the drawn
    clusters; the interval is the central ``confidence`` part of those means. NaN values are
    left out, and a cluster left with no value is left out; ``n`` counts the clusters used.
    Degenerate inputs (one cluster, or every cluster with the same mean, so every resample
    has the same mean) give ``low = high = value`` without resampling.
    """
    import numpy as np

    _check_confidence(confidence)
    sums: list[float] = []
    counts: list[int] = []
    for values in values_by_cluster.values():
        data = np.asarray(values, dtype=float)
        data = data[~np.isnan(data)]
        if data.size:
            sums.append(float(data.sum()))
            counts.append(int(data.size))
    n_clusters = len(sums)
    if n_clusters == 0:
        return Estimate(math.nan, math.nan, math.nan, 0, "undefined")
    cluster_sums = np.asarray(sums)
    cluster_counts = np.asarray(counts, dtype=float)
    value = float(cluster_sums.sum() / cluster_counts.sum())
    cluster_means = cluster_sums / cluster_counts
    if n_clusters < 2 or bool(np.all(cluster_means == cluster_means[0])):
        return Estimate(value, value, value, n_clusters, "degenerate")
    rng = np.random.default_rng(seed)
    drawn = rng.integers(0, n_clusters, size=(n_resamples, n_clusters))
    means = cluster_sums[drawn].sum(axis=1) / cluster_counts[drawn].sum(axis=1)
    tail = (1.0 - confidence) / 2.0 * 100.0
    low, high = np.percentile(means, [tail, 100.0 - tail])
    return Estimate(value, float(low), float(high), n_clusters, "cluster-bootstrap-percentile")
