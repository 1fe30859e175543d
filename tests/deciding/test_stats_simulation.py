"""The statistics prove themselves: intervals cover a known truth at about their nominal
rate, the exact tests agree with scipy, and a gate with no true difference passes at most
alpha of the time. Simulated benchmarks: 40 cases × 5 repetitions, as the bundled one."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from pytest_ragv2.deciding.comparisons import improvement_gate, paired_values
from pytest_ragv2.deciding.stats import (
    _exact_sign_flip_p,
    _monte_carlo_sign_flip_p,
    clustered_mean_ci,
    order_statistic_ci,
    paired_comparison,
)

CASES, REPS = 40, 5


def _benchmark(rng: np.random.Generator, true_delta: float) -> tuple[np.ndarray, np.ndarray]:
    """Per-case means of a candidate and a baseline: each case has its own difficulty and
    its own true difference around ``true_delta``; runs add noise; values stay in [0, 1]."""
    difficulty = rng.uniform(0.2, 0.8, CASES)
    effect = rng.normal(true_delta, 0.15, CASES)
    base_runs = np.clip(difficulty[:, None] + rng.normal(0, 0.1, (CASES, REPS)), 0, 1)
    cand_runs = np.clip((difficulty + effect)[:, None] + rng.normal(0, 0.1, (CASES, REPS)), -10, 10)
    return cand_runs.mean(axis=1), base_runs.mean(axis=1)


def test_the_paired_interval_covers_the_true_difference_at_its_nominal_rate() -> None:
    rng = np.random.default_rng(20261201)
    covered = 0
    sims = 600
    for sim in range(sims):
        cand, base = _benchmark(rng, 0.05)
        truth = 0.05  # the effect's mean: the population difference the cases are drawn from
        found = paired_comparison(cand, base, seed=sim, with_tests=False)
        covered += found.low <= truth <= found.high
    assert 0.93 <= covered / sims <= 0.97


def test_the_case_clustered_interval_covers_its_mean() -> None:
    rng = np.random.default_rng(7)
    covered, sims = 0, 1000
    for sim in range(sims):
        case_means = rng.uniform(0, 1, CASES)
        values = {
            f"C{c}": list(np.clip(case_means[c] + rng.normal(0, 0.2, REPS), 0, 1))
            for c in range(CASES)
        }
        # the truth: the expected mean of the clipped runs of a case drawn like these
        truth = 0.5
        found = clustered_mean_ci(values, seed=sim)
        covered += found.low <= truth <= found.high
    # the percentile bootstrap runs a little under its nominal rate at 40 clusters
    assert 0.925 <= covered / sims <= 0.97


def test_the_order_statistic_interval_never_understates_the_tail() -> None:
    rng = np.random.default_rng(3)
    truth = float(stats.expon.ppf(0.95))
    covered, sims = 0, 2000
    for _ in range(sims):
        found = order_statistic_ci(list(rng.exponential(1.0, 200)), 95)
        covered += found.low <= truth <= found.high
    assert covered / sims >= 0.94  # distribution-free: at least the nominal rate


@pytest.mark.parametrize("n", [1, 4, 9, 13])
def test_the_exact_sign_flip_test_agrees_with_scipy(n: int) -> None:
    rng = np.random.default_rng(n)
    deltas = rng.normal(0.1, 0.3, n)
    for alternative in ("greater", "less", "two-sided"):
        ours = _exact_sign_flip_p(deltas, alternative)
        if n == 1:  # scipy needs two observations: the two sign patterns by hand
            positive = deltas[0] > 0
            expected = {
                "greater": 0.5 if positive else 1.0,
                "less": 1.0 if positive else 0.5,
                "two-sided": 1.0,
            }[alternative]
        else:
            expected = scipy_sign_flip_p(deltas, alternative)
        assert ours == pytest.approx(expected)


def scipy_sign_flip_p(deltas: np.ndarray, alternative: str, seed: int | None = None) -> float:
    """scipy's paired permutation test of the mean (exact when 2^n <= 100,000)."""
    return float(
        stats.permutation_test(
            (deltas, np.zeros(deltas.size)),
            lambda a, b, axis: np.mean(a - b, axis=axis),
            permutation_type="samples",
            vectorized=True,
            n_resamples=100_000,
            alternative=alternative,
            random_state=seed,
        ).pvalue
    )


@pytest.mark.parametrize(("n", "mean"), [(40, 0.05), (120, 0.0), (400, -0.02)])
def test_the_monte_carlo_sign_flip_test_agrees_with_scipy(n: int, mean: float) -> None:
    # ours draws the sign patterns in blocks (scipy's paired permutation took 66 s and its
    # vectorised form 7 GB at 10,000 cases); both are Monte Carlo estimates of the same
    # p-value: they agree within a few of their standard errors
    rng = np.random.default_rng(n)
    deltas = rng.normal(mean, 0.3, n)
    for alternative in ("greater", "less", "two-sided"):
        ours = _monte_carlo_sign_flip_p(deltas, alternative, seed=5)
        expected = scipy_sign_flip_p(deltas, alternative, seed=1)
        assert ours == pytest.approx(expected, abs=0.025)


def test_a_gate_with_no_true_difference_passes_at_most_alpha_of_the_time() -> None:
    rng = np.random.default_rng(11)
    sims = 100
    passed = {"interval": 0, "test": 0}
    for _ in range(sims):
        cand, base = _benchmark(rng, 0.0)
        paired = paired_values(
            [f"C{c}" for c in range(CASES)], ["semantic"] * CASES, list(cand), list(base)
        )
        for rule in ("interval", "test"):
            gate = improvement_gate(
                "g",
                "d",
                paired,
                margin=0.0,
                rule=rule,
                alpha=0.05,  # type: ignore[arg-type]
            )
            passed[rule] += gate.decision == "pass"
    # alpha 0.05 plus three standard errors of the simulations
    tolerance = 3 * (0.05 * 0.95 / sims) ** 0.5
    assert passed["interval"] / sims <= 0.05 + tolerance
    assert passed["test"] / sims <= 0.05 + tolerance
