"""Percentiles and bootstrap intervals (plain and clustered)."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_ragv2.deciding.stats import (
    Estimate,
    clustered_mean_ci,
    percentile,
    percentile_ci,
)

# --- percentile ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("values", "q", "expected"),
    [
        ([4.0, 1.0, 3.0, 2.0], 50, 2.5),  # between the 2nd and 3rd smallest
        ([1.0, 2.0, 3.0, 4.0], 95, 3.85),  # position 0.95·3 = 2.85 → 3 + 0.85·(4 − 3)
        ([1.0, 2.0, 3.0, 4.0], 0, 1.0),
        ([1.0, 2.0, 3.0, 4.0], 100, 4.0),
        ([0.2, 0.4, 1.0, 3.0, 0.3], 50, 0.4),
        ([0.2, 0.4, 1.0, 3.0, 0.3], 95, 2.6),  # position 3.8 → 1.0 + 0.8·(3.0 − 1.0)
        ([7.0], 95, 7.0),
    ],
)
def test_percentile_linear_interpolation(values: list[float], q: float, expected: float) -> None:
    assert percentile(values, q) == pytest.approx(expected)


def test_percentile_of_nothing_is_nan() -> None:
    assert math.isnan(percentile([], 50))


@pytest.mark.parametrize("q", [-1, 100.5])
def test_percentile_q_out_of_range(q: float) -> None:
    with pytest.raises(ValueError, match=r"\[0, 100\]"):
        percentile([1.0], q)


# --- percentile_ci -------------------------------------------------------------------------


def test_percentile_ci_degenerate_inputs() -> None:
    empty = percentile_ci([], 95)
    assert math.isnan(empty.value)
    assert math.isnan(empty.low)
    assert math.isnan(empty.high)
    assert empty.n == 0
    assert percentile_ci([0.8], 95) == Estimate(0.8, 0.8, 0.8, 1, "degenerate")
    assert percentile_ci([2.0, 2.0, 2.0], 50) == Estimate(2.0, 2.0, 2.0, 3, "degenerate")


def test_percentile_ci_brackets_the_median_of_a_uniform_grid() -> None:
    values = [float(v) for v in range(100)]
    estimate = percentile_ci(values, 50)
    assert estimate.value == 49.5
    assert estimate.method == "bootstrap-percentile"
    assert estimate.n == 100
    # The standard error of a median of 100 uniform values on 0..99 is about 5: a 95%
    # interval spans roughly ±10 around 49.5, and never leaves the data's range.
    assert 35.0 < estimate.low < 49.5 < estimate.high < 64.0


def test_percentile_ci_is_reproducible_and_seeded() -> None:
    values = [0.1, 0.5, 0.2, 0.9, 1.4, 0.3, 0.35, 2.2, 0.6, 0.7, 0.15, 0.45]
    first = percentile_ci(values, 95, seed=3)
    assert percentile_ci(values, 95, seed=3) == first
    assert first.low <= first.value <= first.high <= max(values)
    narrower = percentile_ci(values, 50, confidence=0.5, seed=3)
    wider = percentile_ci(values, 50, confidence=0.99, seed=3)
    assert wider.low <= narrower.low <= narrower.high <= wider.high


def test_confidence_must_be_a_proportion() -> None:
    with pytest.raises(ValueError, match="confidence"):
        percentile_ci([1.0, 2.0], 50, confidence=95)


# --- clustered_mean_ci ---------------------------------------------------------------------


def test_clustered_mean_is_the_mean_of_all_values() -> None:
    estimate = clustered_mean_ci({"a": [1.0, 1.0], "b": [0.0], "c": [0.0, 0.0, 0.0, 1.0]})
    assert estimate.value == pytest.approx(3 / 7)
    assert estimate.n == 3
    assert estimate.method == "cluster-bootstrap-percentile"
    assert 0.0 <= estimate.low <= estimate.value <= estimate.high <= 1.0


def test_clustered_two_clusters_hand_computed() -> None:
    """Clusters a = [1], b = [0]. A resample draws two clusters: mean 1 (a,a) with
    probability 1/4, 0.5 with 1/2, 0 (b,b) with 1/4. The central 95% of the resampled means
    therefore runs from 0 to 1; the central 40% (30th to 70th percentile) is 0.5 to 0.5."""
    clusters = {"a": [1.0], "b": [0.0]}
    assert clustered_mean_ci(clusters) == Estimate(0.5, 0.0, 1.0, 2, "cluster-bootstrap-percentile")
    narrow = clustered_mean_ci(clusters, confidence=0.4)
    assert (narrow.low, narrow.high) == (0.5, 0.5)


def test_clustered_nan_values_and_empty_clusters_are_left_out() -> None:
    estimate = clustered_mean_ci({"a": [1.0, math.nan], "b": [], "c": [math.nan]})
    assert estimate == Estimate(1.0, 1.0, 1.0, 1, "degenerate")
    nothing = clustered_mean_ci({"a": [math.nan]})
    assert math.isnan(nothing.value)
    assert nothing.n == 0
    assert math.isnan(clustered_mean_ci({}).value)


def test_clusters_with_equal_means_are_degenerate() -> None:
    estimate = clustered_mean_ci({"a": [0.0, 1.0], "b": [0.5], "c": [1.0, 0.0, 0.5]})
    assert estimate == Estimate(0.5, 0.5, 0.5, 3, "degenerate")


def test_clustering_widens_the_interval_of_repeated_runs() -> None:
    """Ten cases, each run ten times with the same outcome: the information is in ten
    cases, not a hundred runs, so the case-clustered interval is about √10 times wider
    than the interval that treats every run as independent."""
    by_case = {f"case{i}": [float(i % 2)] * 10 for i in range(10)}
    by_run = {f"case{i}/{j}": [float(i % 2)] for i in range(10) for j in range(10)}
    clustered = clustered_mean_ci(by_case, seed=1)
    naive = clustered_mean_ci(by_run, seed=1)
    assert clustered.value == naive.value == 0.5
    assert clustered.n == 10
    assert naive.n == 100
    assert (clustered.high - clustered.low) > 2 * (naive.high - naive.low)


def test_clustered_is_reproducible() -> None:
    clusters = {"a": [0.2, 0.4], "b": [0.9], "c": [0.1, 0.3, 0.8], "d": [0.5]}
    assert clustered_mean_ci(clusters, seed=7) == clustered_mean_ci(clusters, seed=7)


def test_estimate_to_json() -> None:
    assert Estimate(0.5, 0.25, 0.75, 4, "bootstrap-percentile").to_json() == {
        "value": 0.5,
        "low": 0.25,
        "high": 0.75,
        "n": 4,
        "method": "bootstrap-percentile",
    }


def test_percentile_ci_agrees_with_scipy_bootstrap() -> None:
    import numpy as np
    from scipy import stats as scipy_stats

    values = np.random.default_rng(11).lognormal(size=400)
    ours = percentile_ci(values.tolist(), 95, n_resamples=4000, seed=1)
    theirs = scipy_stats.bootstrap(
        (values,),
        lambda sample, axis: np.percentile(sample, 95, axis=axis),
        n_resamples=4000,
        vectorized=True,
        method="percentile",
        rng=np.random.default_rng(2),
    ).confidence_interval
    spread = ours.high - ours.low
    assert abs(ours.low - theirs.low) < 0.15 * spread
    assert abs(ours.high - theirs.high) < 0.15 * spread


_SMALL_VALUE = st.sampled_from([0.0, -0.0, 1.0, 0.5, 0.1, 0.2, 0.3, 1e16, -1e-300, math.nan])


@given(
    st.dictionaries(
        st.text("abc", min_size=1, max_size=2),
        st.lists(_SMALL_VALUE | st.floats(-1e6, 1e6), max_size=9),
        max_size=9,
    ),
    st.booleans(),
)
def test_a_small_degenerate_interval_is_numpys_to_the_bit(
    clusters: dict[str, list[float]], alike: bool
) -> None:
    """Without numpy for a few clusters of a few values with equal means, and the very
    bits numpy gives (numpy sums fewer than eight values one after the other)."""
    import pytest_ragv2.deciding.stats as stats

    if alike:  # every cluster the same values: the degenerate case
        first = next(iter(clusters.values()), [])
        clusters = {name: list(first) for name in clusters}
    fast = stats.clustered_mean_ci(clusters)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(stats, "_small_degenerate", lambda _: None)
        slow = stats.clustered_mean_ci(clusters)
    assert fast.method == slow.method
    assert fast.n == slow.n
    for mine, numpys in ((fast.value, slow.value), (fast.low, slow.low), (fast.high, slow.high)):
        assert (math.isnan(mine) and math.isnan(numpys)) or mine.hex() == numpys.hex()


def test_a_one_case_session_computes_its_intervals_without_importing_numpy() -> None:
    import subprocess
    import sys

    probe = (
        "import sys\n"
        "from pytest_ragv2.deciding.stats import clustered_mean_ci, percentile_ci\n"
        "one = clustered_mean_ci({'C01': [1.0, 1.0, 1.0]})\n"
        "alike = clustered_mean_ci({'C01': [0.5], 'C02': [0.5]})\n"
        "latency = percentile_ci([0.012], 95)\n"
        "print(one.method, alike.method, latency.method, 'numpy' in sys.modules)\n"
        "clustered_mean_ci({'C01': [1.0], 'C02': [0.0]})\n"
        "print('numpy' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert done.stdout.split() == ["degenerate"] * 3 + ["False", "True"], done.stderr
