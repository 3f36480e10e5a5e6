"""The most any attacker can learn from an ε-DP release: a ceiling on attribute-inference accuracy.

Why it holds. A release ``M`` is ε-DP in its input (local DP: one text in, one vector out), so for every set of
outputs ``S`` and any two inputs, ``P(M(x) ∈ S) ≤ e^ε · P(M(x') ∈ S)``. An attacker ``g`` reads ``M(x)`` and
guesses a private attribute with classes ``1..K`` and prior ``π``. Let ``Q_b(a)`` be the chance that ``g``
answers ``a`` when the true class is ``b`` (averaged over the inputs of class ``b``). It is an average of
chances that all lie within a factor ``e^ε`` of one another, so ``Q_b(a) ≥ e^-ε · Q_a(a)`` for every ``a, b``.
The accuracy is ``Σ_a π_a d_a`` with ``d_a = Q_a(a)``, and each row of ``Q`` sums to at most 1:

    d_b + e^-ε · Σ_{a≠b} d_a ≤ 1    for every class b.

Maximising a linear function over these constraints (a linear programme in ``d ≥ 0``) ends at a vertex, and
at every vertex the constraints of the classes with ``d_b > 0`` are tight, which makes those ``d_b`` equal:
``d_b = e^ε / (e^ε + k − 1)`` on some ``k`` classes, best the ``k`` most frequent. So

    ceiling(ε, π) = max over k = 1..K of  e^ε · (π_(1) + … + π_(k)) / (e^ε + k − 1),

with ``π_(1) ≥ π_(2) ≥ …``. Randomised response over the ``k`` most frequent classes reaches it, so no
smaller bound holds. Binary case: ``max(π_(1), e^ε / (1 + e^ε))``. ``ε → 0`` gives the majority rate and
``ε → ∞`` gives 1. ``tests/test_ceiling.py`` holds the formula to the linear programme solved by SciPy.

On a test split the prior is the split's own class proportions: given the test labels the examples are
independent (fresh noise per example, an attacker fitted on other splits), each correct with some chance, and
those chances average at most the ceiling. :func:`above_ceiling_p_value` tests an attacker's count of correct
answers against it.
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np


def attack_ceiling(epsilon: float, prior: Sequence[float]) -> float:
    """The largest accuracy any attacker can reach on an attribute with class ``prior`` (proportions or
    counts) from an ``epsilon``-DP release (module docstring); ``epsilon`` may be ``math.inf``."""
    p = np.sort(np.asarray(prior, dtype=float))[::-1]
    if p.ndim != 1 or len(p) == 0 or np.any(p < 0) or not p.sum() > 0:
        raise ValueError(f"prior must be non-negative class weights with a positive sum, got {list(prior)!r}")
    if not epsilon >= 0:
        raise ValueError(f"epsilon must be >= 0, got {epsilon!r}")
    p = p / p.sum()
    k = np.arange(1, len(p) + 1)
    # e^ε·Π_k/(e^ε + k − 1) written as Π_k/(1 + (k − 1)·e^-ε): no overflow at ε = 384·20
    return float(np.max(np.cumsum(p) / (1.0 + (k - 1) * math.exp(-epsilon))))


def above_ceiling_p_value(correct: int, n: int, ceiling: float) -> float:
    """One-sided p-value of "this attacker's accuracy exceeds ``ceiling``" from ``correct`` right answers out of
    ``n`` test examples: ``P(Binomial(n, ceiling) ≥ correct)``. The examples' chances of being right differ, but
    when they average at most ``ceiling``, the chance of ``correct`` or more right answers, for any count of at
    least ``n · ceiling + 1`` (the only counts that can be significant), is at most the binomial's (Hoeffding
    1956, Theorem 4), so the test keeps its level."""
    from scipy.stats import binom

    if not 0 <= correct <= n or n < 1:
        raise ValueError(f"need 0 <= correct <= n and n >= 1, got correct={correct}, n={n}")
    if not 0.0 <= ceiling <= 1.0:
        raise ValueError(f"ceiling must be in [0, 1], got {ceiling!r}")
    return float(binom.sf(correct - 1, n, ceiling))


def ceiling_record(epsilon_nominal: float | None, epsilon_effective: float | None, y_test: np.ndarray,
                   y_pred: np.ndarray, n_classes: int) -> dict[str, float | list[int] | None]:
    """An attacker's test accuracy against the ceilings of a release's nominal and effective ε: each ceiling
    (from the test split's class counts) and the p-value of "above it". ``None`` where the release claims no
    ε (a method without a privacy layer)."""
    counts = np.bincount(np.asarray(y_test, dtype=np.int64), minlength=n_classes)
    correct, n = int(np.sum(np.asarray(y_pred) == np.asarray(y_test))), int(len(y_test))
    record: dict[str, float | list[int] | None] = {"test_class_counts": counts.tolist()}
    for name, epsilon in (("nominal", epsilon_nominal), ("effective", epsilon_effective)):
        ceiling = None if epsilon is None else attack_ceiling(epsilon, counts)
        record[f"ceiling_{name}"] = ceiling
        record[f"p_above_{name}_ceiling"] = None if ceiling is None else above_ceiling_p_value(correct, n, ceiling)
    return record
