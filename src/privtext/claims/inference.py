"""Intervals for a quantity measured on several training seeds and one shared test set.

A claims-study measurement (a test accuracy, an attacker's accuracy, a fairness gap, or a difference of two
of them) varies for two reasons: the training seed, and which examples happen to be in the test set. The test
set is the same for every seed, so its sampling error does not average out over seeds; an interval from the
seeds alone (what privtext used before) is too narrow. The model behind this module is the two-way crossed
random-effects model of a measurement on seed ``s``::

    D_s = δ + u_s + e_T + w_{s,T}

with ``δ`` the effect claimed, ``u_s`` the seed effect (variance τ²), ``e_T`` the test-set error shared by every
seed (variance σ_e²/n) and ``w_{s,T}`` the seed × example interaction (variance σ_w²/n). The mean over S seeds
has variance ``τ²/S + σ_e²/n + σ_w²/(S·n)``. Its three parts are estimated by the method of moments from:

- ``s²``, the variance of the S per-seed values: estimates ``τ² + σ_w²/n``;
- a bootstrap over test examples with one set of resampling weights shared by every seed and every model
  (so paired differences keep their covariance): ``v_T``, the bootstrap variance of the seed mean, estimates
  ``σ_e²/n + σ_w²/(S·n)``; ``v̄``, the mean over seeds of each seed's bootstrap variance, estimates
  ``(σ_e² + σ_w²)/n``.

So ``Var = s²/S + v_T − (v̄ − v_T)/(S − 1)``; only where noise drives that to 0 or below is it replaced by
``max(s²/S, v_T)`` (each a lower bound in expectation). The interval is ``mean ± t·√Var`` with Satterthwaite's
degrees of freedom, made conservative for few seeds (:func:`_satterthwaite_df`); the test-set part, estimated
from thousands of examples, is treated as exact. A quantity with no test-set sampling (an MDL code length on
the training split) has no bootstrap spread and reduces to the t-interval over seeds. ``tests/test_inference.py`` checks coverage and the rate of false directions by
simulation (docs/claims.md gives the figures).

The bootstrap is Poisson(1) weights per example (a multinomial bootstrap in the limit; its weights are
independent, so one matrix serves test sets of any size and every statistic that is a ratio of weighted sums).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Mapping

import numpy as np
from scipy import stats


CONFIDENCE = 0.95
N_BOOTSTRAP = 500


def bootstrap_weights(n_examples: int, n_resamples: int = N_BOOTSTRAP, seed: int = 0) -> np.ndarray:
    """``(1 + n_resamples) × n_examples`` float32 weights: row 0 is all ones (the test set as drawn), each
    later row a Poisson(1) resample. The same (n, resamples, seed) give the same matrix, so every run scored
    on one test set shares it."""
    rng = np.random.default_rng([seed, n_examples])
    weights = np.empty((1 + n_resamples, n_examples), dtype=np.float32)
    weights[0] = 1.0
    weights[1:] = rng.poisson(1.0, size=(n_resamples, n_examples))
    return weights


def weighted_mean(weights: np.ndarray, values: np.ndarray, where: np.ndarray | None = None) -> np.ndarray:
    """Per weight row, the weighted mean of ``values`` over the examples ``where`` is true (NaN if none)."""
    values = np.asarray(values, dtype=np.float32)
    mask = np.ones(len(values), dtype=np.float32) if where is None else np.asarray(where, dtype=np.float32)
    total = weights @ mask
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(total > 0, (weights @ (values * mask)) / total, np.nan)


@dataclass(frozen=True)
class Estimate:
    """A mean over seeds with its standard error, degrees of freedom and two-sided interval."""

    mean: float
    se: float
    df: float
    low: float
    high: float
    n_seeds: int
    per_seed: Mapping[int, float]
    seed_variance: float  # s²/S
    test_variance: float  # the test-set part of Var (0 without per-example data)

    def p_greater(self, threshold: float) -> float:
        """One-sided p-value of H0: true value ≤ ``threshold`` (small when the data show it is above)."""
        return self._tail(self.mean - threshold)

    def p_less(self, threshold: float) -> float:
        """One-sided p-value of H0: true value ≥ ``threshold``."""
        return self._tail(threshold - self.mean)

    def _tail(self, distance: float) -> float:
        """P(T > distance / se) for Student's t with this estimate's df."""
        if not math.isfinite(self.se):
            return math.nan
        if self.se == 0:
            return 0.0 if distance > 0 else 1.0
        return float(stats.t.sf(distance / self.se, self.df))


def missing_estimate(per_seed: Mapping[int, float] | None = None) -> Estimate:
    values = dict(per_seed or {})
    mean = float(np.mean(list(values.values()))) if values else math.nan
    return Estimate(mean, math.nan, math.nan, math.nan, math.nan, len(values), values, math.nan, math.nan)


def crossed_estimate(replicates: Mapping[int, np.ndarray], confidence: float = CONFIDENCE) -> Estimate:
    """The interval of the module docstring from ``{seed: array}``, each array holding the seed's value on the
    test set as drawn (entry 0) and under each shared bootstrap resample (entries 1…; none, or all equal to
    entry 0, for a quantity without test-set sampling). Fewer than 2 seeds, or a NaN value, give NaN ends."""
    seeds = sorted(replicates)
    per_seed = {int(s): float(np.asarray(replicates[s])[0]) for s in seeds}
    if len(seeds) < 2 or not all(math.isfinite(v) for v in per_seed.values()):
        return missing_estimate(per_seed)
    matrix = np.vstack([np.asarray(replicates[s], dtype=float) for s in seeds])
    values = matrix[:, 0]
    n_seeds = len(values)
    seed_variance = float(values.var(ddof=1)) / n_seeds
    test_variance = 0.0
    resampled = matrix[:, 1:]
    if resampled.shape[1] >= 2:
        # a resample in which some seed's statistic is undefined (e.g. a subgroup left empty) is skipped
        resampled = resampled[:, np.all(np.isfinite(resampled), axis=0)]
    if resampled.shape[1] >= 2:
        v_mean = float(resampled.mean(axis=0).var(ddof=1))
        v_within = float(resampled.var(axis=1, ddof=1).mean())
        unbiased = seed_variance + v_mean - (v_within - v_mean) / (n_seeds - 1)
        # Floored at the larger of the two lower bounds only where noise drives the sum below it: flooring
        # always would bias Var upward (over-coverage in the simulation).
        variance = unbiased if unbiased > 0 else max(seed_variance, v_mean)
        test_variance = variance - seed_variance
    if test_variance == 0:  # the plain t-interval over seeds
        variance, df = seed_variance, float(n_seeds - 1)
    else:
        df = _satterthwaite_df(seed_variance, test_variance, n_seeds)
    se = math.sqrt(variance)
    mean = float(values.mean())
    half = float(stats.t.ppf(0.5 + confidence / 2, df)) * se if se > 0 else 0.0
    return Estimate(mean, se, df, mean - half, mean + half, n_seeds, per_seed, seed_variance, test_variance)


SEED_VARIANCE_QUANTILE = 0.10


def _satterthwaite_df(seed_variance: float, test_variance: float, n_seeds: int) -> float:
    """Satterthwaite's degrees of freedom of ``seed_variance + test_variance`` (the first with S − 1 df, the
    second exact), evaluated at an upper 90% confidence bound of the seed variance. The plug-in formula is
    liberal at few seeds: a seed variance small by chance gives both a small SE and a large df, so the tails are
    too thin. Simulated at 5 seeds (tests/test_inference.py, docs/claims.md), the plug-in rejects a true null
    one-sidedly in 3.1% of studies against 2.5%, and a 15-part family in 6.3% against 2.5%; at the bound, 2.5%
    and 2.8%, while the 95% interval covers in 94–96%. Var itself stays the unbiased estimate."""
    k = n_seeds - 1
    if seed_variance == 0:
        return math.inf
    upper = seed_variance * k / float(stats.chi2.ppf(SEED_VARIANCE_QUANTILE, k))
    return (upper + max(test_variance, 0.0)) ** 2 * k / upper**2


@dataclass(frozen=True)
class TrendEstimate(Estimate):
    """A mean over seeds of Spearman's ρ (:func:`privtext.claims.parts.trend`). Its interval is the crossed one
    intersected with [−1, 1]: ρ cannot leave that range, so the intersection covers whenever the interval does.
    Its sign is shown only when the crossed interval *and* a within-seed permutation test both show it
    (``p_permutation_*``: the chance, were the measure unrelated to the swept value within each seed, of a mean ρ
    as high or as low as the one observed). At few swept points and seeds the crossed interval alone is too
    liberal under a flat truth (docs/claims.md, "Trends"); the permutation test is exact there, and requiring
    both keeps each side's error at or below the permutation test's level."""

    p_permutation_greater: float = math.nan
    p_permutation_less: float = math.nan

    def p_greater(self, threshold: float) -> float:
        p = super().p_greater(threshold)
        return max(p, self.p_permutation_greater) if threshold == 0 and math.isfinite(p) else p

    def p_less(self, threshold: float) -> float:
        p = super().p_less(threshold)
        return max(p, self.p_permutation_less) if threshold == 0 and math.isfinite(p) else p


def trend_estimate(replicates: Mapping[int, np.ndarray], p_greater: float, p_less: float,
                   confidence: float = CONFIDENCE) -> Estimate:
    """:class:`TrendEstimate` from per-seed ρ replicates (as :func:`crossed_estimate`) and the permutation
    test's two one-sided p-values; a missing estimate where the crossed one is."""
    crossed = crossed_estimate(replicates, confidence)
    if not math.isfinite(crossed.low):
        return crossed
    fields = {f: getattr(crossed, f) for f in Estimate.__dataclass_fields__}
    fields.update(low=max(crossed.low, -1.0), high=min(crossed.high, 1.0))
    return TrendEstimate(**fields, p_permutation_greater=p_greater, p_permutation_less=p_less)


def seeds_estimate(per_seed: Mapping[int, float], confidence: float = CONFIDENCE) -> Estimate:
    """The t-interval over seeds alone (a quantity with no test-set sampling)."""
    return crossed_estimate({s: np.array([v]) for s, v in per_seed.items()}, confidence)
