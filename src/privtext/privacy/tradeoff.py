"""Exact privacy curves of a Laplace release of one pair of inputs (docs/audit.md, "Trade-off curves").

For a pair whose normalised vectors differ by ``shifts`` (one entry per coordinate) under i.i.d. Lap(``scale``)
noise, the privacy loss distribution is the composition of one Laplace loss per coordinate. We take it from
Google's ``dp-accounting`` (its ``from_laplace_mechanism`` and ``self_compose``; the library rather than our own
convolution) and read two curves from it:

- the privacy profile ε(δ) (``get_epsilon_for_delta``), whose δ = 0 end is the layer's pure ε, Σ shifts / scale;
- the trade-off function f(α): the smallest false-negative rate any test with false-positive rate α can have
  (Dong, Roth & Su 2022, Prop. 2.12: f(α) = sup over ε of max(0, 1 − δ(ε) − e^ε·α, e^−ε·(1 − δ(ε) − α))).

dp-accounting's default estimate is pessimistic (it rounds privacy losses up), so these curves may slightly
overstate what a test can do, never understate it: a sound audit stays under them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from dp_accounting.pld import privacy_loss_distribution

GRID_POINTS = 2000  # points of the ε grid on which δ(ε) is read (the trade-off is a sup over it)
RESOLUTION = 2e4  # the privacy loss is discretised in steps of ε_pure / RESOLUTION
LARGEST_EPSILON = 700.0  # δ(ε) is read up to here: e^ε overflows past 709, and no α > e^−700 needs more


@dataclass(frozen=True)
class ExactCurve:
    """δ(ε) on a grid from 0 to the pure ε, and what follows from it."""

    epsilon_pure: float
    epsilons: np.ndarray
    deltas: np.ndarray
    distribution: object  # dp_accounting's PrivacyLossDistribution

    def epsilon_for_delta(self, delta: float) -> float:
        """The smallest ε for which the pair is (ε, δ)-indistinguishable; δ = 0 gives the pure ε."""
        if delta <= 0 or self.distribution is None:  # None: a pair that does not differ (ε = 0 at every δ)
            return self.epsilon_pure
        return min(float(self.distribution.get_epsilon_for_delta(delta)), self.epsilon_pure)

    def false_negative_rate(self, fpr: np.ndarray | float) -> np.ndarray:
        """f(α): the least false-negative rate of any test whose false-positive rate is α."""
        alpha = np.atleast_1d(np.asarray(fpr, dtype=float))[:, None]
        exp_eps, slack = np.exp(self.epsilons)[None, :], (1.0 - self.deltas)[None, :]
        bound = np.maximum(slack - exp_eps * alpha, (slack - alpha) / exp_eps).max(axis=1)
        return np.clip(bound, 0.0, 1.0)

    def true_positive_rate(self, fpr: np.ndarray | float) -> np.ndarray:
        """1 − f(α): the most power any test with false-positive rate α can have."""
        return 1.0 - self.false_negative_rate(fpr)


def exact_curve(shifts: np.ndarray, scale: float) -> ExactCurve:
    """The exact curves of a pair whose normalised vectors differ by ``shifts`` under Lap(``scale``) noise."""
    magnitudes = np.abs(np.asarray(shifts, dtype=float))
    magnitudes = magnitudes[magnitudes > 0]
    if not scale > 0 or not np.isfinite(scale):
        raise ValueError(f"Laplace scale must be a finite number > 0, got {scale!r}")
    pure = float(magnitudes.sum() / scale)
    if pure == 0:
        return ExactCurve(0.0, np.zeros(1), np.zeros(1), None)
    interval = pure / RESOLUTION
    distribution = None
    values, counts = np.unique(np.round(magnitudes, 12), return_counts=True)
    for value, count in zip(values, counts):
        one = privacy_loss_distribution.from_laplace_mechanism(
            scale, sensitivity=float(value), value_discretization_interval=interval)
        part = one.self_compose(int(count)) if count > 1 else one
        distribution = part if distribution is None else distribution.compose(part)
    epsilons = np.linspace(0.0, min(pure, LARGEST_EPSILON), GRID_POINTS)
    deltas = np.minimum(1.0, np.asarray(distribution.get_delta_for_epsilon(epsilons), dtype=float))
    if pure <= LARGEST_EPSILON:
        deltas[-1] = 0.0  # at the pure ε nothing is left (the pessimistic estimate's rounding can leave ~1e-15)
    return ExactCurve(pure, epsilons, deltas, distribution)


def laplace_false_negative_rate(fpr: np.ndarray | float, shift: float, scale: float) -> np.ndarray:
    """Closed form of f(α) for one coordinate: Lap(0, b) against Lap(s, b), the threshold test on the output
    (the likelihood ratio is monotone in it). Held against :func:`exact_curve` in the tests."""
    alpha = np.asarray(fpr, dtype=float)
    loss = shift / scale
    low = 0.5 * math.exp(-loss)
    with np.errstate(divide="ignore"):
        middle = math.exp(-loss) / (4.0 * alpha)
    return np.where(alpha < low, 1.0 - alpha * math.exp(loss),
                    np.where(alpha <= 0.5, middle, math.exp(-loss) * (1.0 - alpha)))
