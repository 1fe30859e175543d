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
    _check_q(q)
    _check_confidence(confidence)
    value = percentile(values, q)
    if len(values) == 0 or math.isnan(value):
        return Estimate(math.nan, math.nan, math.nan, len(values), "undefined")
    first = float(values[0])
    if all(float(item) == first for item in values):  # one value, or all equal: no numpy
        return Estimate(value, value, value, len(values), "degenerate")
    import numpy as np

    data = np.asarray(values, dtype=float)

    # The percentile bootstrap, as scipy.stats.bootstrap(method="percentile") computes it,
    # in plain numpy: scipy.stats costs about a second to import, paid at every session's end
    # (tests/deciding/test_stats.py checks the two agree).
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


RESAMPLE_BLOCK_VALUES = 250_000  # cluster draws held at once by clustered_mean_ci


def clustered_mean_ci(
    values_by_cluster: Mapping[str, Sequence[float]],
    *,
    confidence: float = 0.95,
    n_resamples: int = 10_000,
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
    _check_confidence(confidence)
    small = _small_degenerate(values_by_cluster)
    if small is not None:
        return small
    import numpy as np

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
    # in blocks of resamples: the same draws as one (n_resamples, n_clusters) array, without
    # its memory (80 MB at 1,000 cases), whose page faults cost more than the arithmetic
    block = max(1, RESAMPLE_BLOCK_VALUES // n_clusters)
    means = np.empty(n_resamples)
    for start in range(0, n_resamples, block):
        stop = min(start + block, n_resamples)
        drawn = rng.integers(0, n_clusters, size=(stop - start, n_clusters))
        means[start:stop] = cluster_sums[drawn].sum(axis=1) / cluster_counts[drawn].sum(axis=1)
    tail = (1.0 - confidence) / 2.0 * 100.0
    low, high = np.percentile(means, [tail, 100.0 - tail])
    return Estimate(value, float(low), float(high), n_clusters, "cluster-bootstrap-percentile")


# numpy sums fewer than this many values one after the other from 0.0, as Python does;
# past it, in eight interleaved partial sums (pairwise summation): another last digit
_SEQUENTIAL_SUM_BELOW = 8


def _small_degenerate(values_by_cluster: Mapping[str, Sequence[float]]) -> Estimate | None:
    """:func:`clustered_mean_ci` of a few clusters of a few values whose means are all
    equal (one case, or every case alike: a small session), computed without numpy, to the
    same bits as numpy computes it; None for any other input. numpy's import costs a
    session that needs no interval about 0.15 s."""
    sums: list[float] = []
    counts: list[int] = []
    for values in values_by_cluster.values():
        kept = [float(value) for value in values]
        kept = [value for value in kept if not math.isnan(value)]
        if len(kept) >= _SEQUENTIAL_SUM_BELOW:
            return None
        if kept:
            sums.append(sum(kept, 0.0))
            counts.append(len(kept))
    if not sums or len(sums) >= _SEQUENTIAL_SUM_BELOW:
        return None
    means = [total / count for total, count in zip(sums, counts, strict=True)]
    if any(mean != means[0] for mean in means):
        return None
    value = sum(sums, 0.0) / sum(counts, 0.0)
    return Estimate(value, value, value, len(sums), "degenerate")


COMPARISON_RESAMPLES = 10_000
EXACT_SIGN_FLIPS = 13  # 2^13 = 8,192 sign patterns, each enumerated


def _exact_sign_flip_p(centred: Any, alternative: str) -> float:
    """The sign-flip permutation p-value of the mean, every one of the 2^n patterns."""
    import numpy as np

    n = int(centred.size)
    patterns = ((np.arange(1 << n)[:, None] >> np.arange(n)) & 1) * 2 - 1
    means = (patterns * centred).mean(axis=1)
    observed = float(centred.mean())
    tolerance = 1e-12 * max(1.0, abs(observed))
    if alternative == "greater":
        return float(np.mean(means >= observed - tolerance))
    if alternative == "less":
        return float(np.mean(means <= observed + tolerance))
    return float(np.mean(np.abs(means) >= abs(observed) - tolerance))


@dataclass(frozen=True, slots=True)
class PairedComparison:
    """Candidate minus baseline, paired by case: the mean of the per-case differences, its
    interval, and a paired test against a margin.

    The interval is the BCa bootstrap over cases (10,000 resamples), or — when a
    bootstrap cannot move (fewer than three cases, or every difference equal) — the point.
    The test is the paired sign-flip permutation test of the mean difference (exact, by
    enumerating every sign pattern, whenever 2^n is at most the resamples); ``p_greater``
    tests "the difference exceeds the margin", ``p_less`` "it is below minus the margin",
    ``p_two_sided`` "it is not zero"."""

    estimate: float
    low: float
    high: float
    n: int
    p_greater: float
    p_less: float
    p_two_sided: float
    interval: str
    test: str

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def _sign_flip_p(deltas: Any, shift: float, alternative: str, seed: int) -> float:
    import numpy as np

    centred = deltas - shift
    if not np.any(centred):
        return 1.0
    if centred.size <= EXACT_SIGN_FLIPS:
        return _exact_sign_flip_p(centred, alternative)
    return _monte_carlo_sign_flip_p(centred, alternative, seed)


def _monte_carlo_sign_flip_p(centred: Any, alternative: str, seed: int) -> float:
    """The sign-flip permutation p-value of the mean over ``COMPARISON_RESAMPLES`` random
    sign patterns, drawn in blocks, with scipy's ``permutation_test`` conventions: the
    observed pattern counted (+1 above and below the fraction), a relative tolerance of
    1e-14 on ties, two-sided as twice the smaller one-sided p-value, at most 1. (scipy's
    own paired permutation moves the samples one by one in Python: 66 s for 10,000 cases.)
    """
    import numpy as np

    n = int(centred.size)
    observed = float(centred.mean())
    tolerance = abs(observed) * 1e-14
    rng = np.random.default_rng(seed)
    block = max(1, RESAMPLE_BLOCK_VALUES // n)
    at_least = at_most = 0
    for start in range(0, COMPARISON_RESAMPLES, block):
        size = min(block, COMPARISON_RESAMPLES - start)
        signs = rng.integers(0, 2, size=(size, n), dtype=np.int8) * 2 - 1
        means = (signs * centred).mean(axis=1)
        at_least += int(np.count_nonzero(means >= observed - tolerance))
        at_most += int(np.count_nonzero(means <= observed + tolerance))
    greater = (at_least + 1) / (COMPARISON_RESAMPLES + 1)
    less = (at_most + 1) / (COMPARISON_RESAMPLES + 1)
    if alternative == "greater":
        return greater
    if alternative == "less":
        return less
    return min(1.0, 2.0 * min(greater, less))


def _batch(n: int) -> int:
    """Resamples per vectorised call: scipy's default is all of them at once, an array of
    10,000 × n values (7 GB for one comparison of 10,000 cases)."""
    return max(1, min(COMPARISON_RESAMPLES, RESAMPLE_BLOCK_VALUES // max(n, 1)))


def paired_comparison(
    candidate: Sequence[float],
    baseline: Sequence[float],
    *,
    margin: float = 0.0,
    confidence: float = 0.95,
    seed: int = 0,
    with_tests: bool = True,
) -> PairedComparison:
    """Compare two systems over the same cases (the sequences are per-case means, aligned);
    ``with_tests=False`` leaves the p-values NaN (the interval alone, for simulations)."""
    import numpy as np

    _check_confidence(confidence)
    if len(candidate) != len(baseline):
        raise ValueError("candidate and baseline must hold one value per common case")
    deltas = np.asarray(candidate, dtype=float) - np.asarray(baseline, dtype=float)
    n = int(deltas.size)
    exact = n <= EXACT_SIGN_FLIPS
    test = f"paired sign-flip permutation ({'exact' if exact else 'Monte Carlo, 10,000'})"
    if n == 0:
        nan = math.nan
        return PairedComparison(nan, nan, nan, 0, nan, nan, nan, "undefined", test)
    estimate = float(deltas.mean())
    if n < 3 or bool(np.all(deltas == deltas[0])):
        low = high = estimate
        interval = "degenerate"
    else:
        from scipy import stats

        for method in ("BCa", "percentile"):  # BCa undefined (NaN): fall back to percentile
            result = stats.bootstrap(
                (deltas,),
                np.mean,
                confidence_level=confidence,
                n_resamples=COMPARISON_RESAMPLES,
                method=method,
                vectorized=True,
                random_state=seed,
                batch=_batch(n),
            )
            low, high = (float(bound) for bound in result.confidence_interval)
            if not (math.isnan(low) or math.isnan(high)):
                break
        interval = f"BCa bootstrap over {n} cases, 10,000 resamples"
    untested = math.nan
    return PairedComparison(
        estimate=estimate,
        low=low,
        high=high,
        n=n,
        p_greater=_sign_flip_p(deltas, margin, "greater", seed) if with_tests else untested,
        p_less=_sign_flip_p(deltas, -margin, "less", seed) if with_tests else untested,
        p_two_sided=_sign_flip_p(deltas, 0.0, "two-sided", seed) if with_tests else untested,
        interval=interval,
        test=test,
    )


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjustment of ``p_values`` (same order), capped at 1."""
    order = sorted(range(len(p_values)), key=lambda index: p_values[index])
    adjusted = [1.0] * len(p_values)
    running = 0.0
    m = len(p_values)
    for rank, index in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p_values[index]))
        adjusted[index] = running
    return adjusted


def order_statistic_ci(values: Sequence[float], q: float, *, confidence: float = 0.95) -> Estimate:
    """The q-th percentile with a distribution-free interval from order statistics: the
    ranks l < u with P(X_(l) <= true quantile <= X_(u)) >= confidence under Binomial(n, q);
    where the sample is too small for that coverage the interval reaches the smallest or
    largest observation (it never understates the tail)."""
    _check_q(q)
    _check_confidence(confidence)
    ordered = sorted(float(value) for value in values)
    n = len(ordered)
    value = percentile(ordered, q)
    if n == 0 or math.isnan(value):
        return Estimate(math.nan, math.nan, math.nan, n, "undefined")
    if n == 1 or ordered[0] == ordered[-1]:
        return Estimate(value, value, value, n, "degenerate")
    p = q / 100.0
    tail = (1.0 - confidence) / 2.0
    # 1-based ranks: X_(l) with P(B < l) <= tail, X_(u) with P(B >= u) <= tail, B ~ Bin(n, p)
    lower_rank = _binomial_ppf(tail, n, p)  # B <= lower_rank - 1 with prob <= tail
    upper_rank = _binomial_ppf(1.0 - tail, n, p) + 1
    low = ordered[max(lower_rank, 1) - 1]
    high = ordered[min(upper_rank, n) - 1]
    return Estimate(value, min(low, value), max(high, value), n, "order-statistic")


def _binomial_ppf(level: float, n: int, p: float) -> int:
    """The smallest k with P(B <= k) >= level for B ~ Binomial(n, p), as scipy's
    ``binom.ppf`` (pmf in log space: no underflow at large n; plain Python, since importing
    scipy.stats costs about a second at a session's end)."""
    if p <= 0.0:
        return 0
    if p >= 1.0:
        return n
    log_p, log_q = math.log(p), math.log1p(-p)
    log_n_fact = math.lgamma(n + 1)
    total = 0.0
    for k in range(n + 1):
        log_pmf = log_n_fact - math.lgamma(k + 1) - math.lgamma(n - k + 1) + k * log_p
        total += math.exp(log_pmf + (n - k) * log_q)
        if total >= level - 1e-12:
            return k
    return n
