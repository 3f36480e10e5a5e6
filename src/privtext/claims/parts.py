"""A claim's parts: each one comparison, a paired difference ``a − b`` over seeds or a trend (Spearman's ρ
between a swept value and a measure, one ρ per seed), with the :class:`~privtext.claims.verdicts.Reading` the
paper's words give it and the paper's own printed value where it printed one.

Each part's interval combines the spread over seeds with test-set sampling (:mod:`privtext.claims.inference`,
through the per-example records of :mod:`privtext.claims.evidence`; without them, as in unit tests on hand-made
measures, the interval is over seeds alone).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Callable, Collection, Mapping

import numpy as np
from scipy import stats

from privtext.claims.inference import Estimate, crossed_estimate, missing_estimate, trend_estimate
from privtext.claims.verdicts import ACCURACY_MARGIN, ACCURACY_MARGIN_REASON, Reading

Measured = tuple[dict[int, np.ndarray], tuple[str, ...]]  # per-seed replicates, run folders
MIN_TREND_POINTS = 3
PERMUTATIONS = 9_999  # the within-seed permutation test of a trend: Monte Carlo error of p near 0.025 is 0.0016
PERMUTATION_SEED = 20261206

HIGHER, LOWER = Reading("superiority", 1), Reading("superiority", -1)
NOT_LOWER = Reading("non-inferiority", 1, ACCURACY_MARGIN, ACCURACY_MARGIN_REASON)
NOT_HIGHER = Reading("non-inferiority", -1, ACCURACY_MARGIN, ACCURACY_MARGIN_REASON)
COMPARABLE = Reading("equivalence", 1, ACCURACY_MARGIN, ACCURACY_MARGIN_REASON)


@dataclass(frozen=True)
class Part:
    """One comparison of a claim: its reading, its estimate, the paper's printed value where there is one."""

    label: str
    reading: Reading
    estimate: Estimate
    paper_value: float = math.nan
    runs: tuple[str, ...] = ()
    attacker: str = ""
    blocker: str = ""  # why the part cannot be judged ('' when it can)
    hedged: bool = False  # one of the parts the claim's hedge ("in most cases") counts; the others all must hold
    # the same estimate on a subset of its seeds (leave-one-seed-out, privtext.claims.table); None: no seeds
    on_seeds: Callable[[Collection[int]], Estimate] | None = field(default=None, compare=False, repr=False)


def hedged(part: Part) -> Part:
    """``part`` as one of those the claim's hedge counts."""
    return replace(part, hedged=True)


def blocked(label: str, reading: Reading, reason: str, paper_value: float = math.nan) -> Part:
    """A part that cannot be measured here (its paper value is still scored)."""
    return Part(label, reading, missing_estimate(), paper_value, blocker=reason)


def difference(label: str, a: Measured, b: Measured, reading: Reading, *, paper_value: float = math.nan,
               attacker: str = "") -> Part:
    """``a − b`` paired by seed (and by bootstrap resample of the shared test set)."""
    (values_a, runs_a), (values_b, runs_b) = a, b
    shared = sorted(set(values_a) & set(values_b))
    if not shared:
        side = "either side" if not values_a and not values_b else ("the first" if not values_a else "the second")
        return Part(label, reading, missing_estimate(), paper_value, runs_a + runs_b, attacker,
                    f"no saved runs of {side} of the comparison (or no shared seeds); run the claims study here")
    replicates = {s: values_a[s] - values_b[s] for s in shared}

    def on_seeds(seeds: Collection[int]) -> Estimate:
        return crossed_estimate({s: replicates[s] for s in replicates if s in seeds})

    return Part(label, reading, on_seeds(shared), paper_value, runs_a + runs_b, attacker, on_seeds=on_seeds)


def spearman_columns(x: np.ndarray, matrix: np.ndarray) -> np.ndarray:
    """Spearman's ρ between ``x`` and each column of ``matrix`` (points × resamples); NaN for a constant column."""
    ranks = stats.rankdata(matrix, axis=0)
    x_ranks = stats.rankdata(x)[:, None]
    x_c, r_c = x_ranks - x_ranks.mean(), ranks - ranks.mean(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (x_c * r_c).sum(axis=0) / np.sqrt((x_c**2).sum() * (r_c**2).sum(axis=0))


def spearman(xs: list[float], values: list[float]) -> float:
    """Spearman's ρ of printed numbers (a paper's table), NaN with fewer than 3 points or a constant measure."""
    pairs = [(x, v) for x, v in zip(xs, values) if math.isfinite(v)]
    if len(pairs) < MIN_TREND_POINTS or len({v for _, v in pairs}) < 2:
        return math.nan
    x, v = np.array(pairs, dtype=float).T
    return float(spearman_columns(x, v[:, None])[0])


def permutation_p_values(points: Mapping[int, tuple[np.ndarray, np.ndarray]], observed: float,
                         n_permutations: int = PERMUTATIONS, seed: int = PERMUTATION_SEED) -> tuple[float, float]:
    """One-sided p-values (as high, as low) of a mean Spearman ρ ``observed`` over seeds, ``points`` being each
    seed's swept values and measures, under the null that within each seed the measure does not depend on the
    swept value (its points exchangeable): the measures are shuffled within each seed, independently, and the
    mean ρ recomputed (Monte Carlo, seeded; a constant seed contributes ρ = 0 as in :func:`trend`). Exact at
    any number of points and seeds, where the t-interval over a handful of discrete ρ values is not."""
    rng = np.random.default_rng(seed)
    total = np.zeros(n_permutations)
    for s in sorted(points):
        xs, values = points[s]
        x_c = stats.rankdata(xs) - (len(xs) + 1) / 2
        v_c = stats.rankdata(values) - (len(values) + 1) / 2
        scale = math.sqrt(float((x_c**2).sum() * (v_c**2).sum()))
        if scale == 0:
            continue
        shuffled = rng.permuted(np.tile(np.arange(len(values)), (n_permutations, 1)), axis=1)
        total += (v_c[shuffled] @ x_c) / scale
    null = total / len(points)
    tolerance = 1e-9  # a permuted ρ equal to the observed one counts as at least as extreme
    return (float(1 + np.count_nonzero(null >= observed - tolerance)) / (n_permutations + 1),
            float(1 + np.count_nonzero(null <= observed + tolerance)) / (n_permutations + 1))


def trend(label: str, points: Mapping[float, Measured], reading: Reading, attacker: str = "",
          paper_value: float = math.nan) -> Part:
    """Spearman's ρ between the swept value and the measure, one ρ per seed over the points that seed has (and
    per resample of the test set); the claimed direction is the sign of ρ. A measure that does not change over
    the sweep (FEDERATE's selection picking the same run at every RT) has no trend: ρ = 0, not shown either way,
    rather than a part that cannot be judged."""
    points = {x: p for x, p in points.items() if p[0]}
    runs = tuple(r for _, p in sorted(points.items()) for r in p[1])
    if len(points) < MIN_TREND_POINTS:
        return Part(label, reading, missing_estimate(), paper_value, runs, attacker, blocker=(
            f"a trend needs at least {MIN_TREND_POINTS} swept values with saved runs, have {len(points)} "
            f"({', '.join(f'{x:g}' for x in sorted(points)) or 'none'})"))
    seeds = sorted({s for values, _ in points.values() for s in values})
    per_seed, observed = {}, {}
    for seed in seeds:
        xs = [x for x in sorted(points) if seed in points[x][0]]
        if len(xs) < MIN_TREND_POINTS:
            continue
        matrix = np.vstack([points[x][0][seed] for x in xs])
        rho = spearman_columns(np.asarray(xs, dtype=float), matrix)
        constant = np.ptp(matrix, axis=0) == 0  # the only columns where ρ is undefined
        per_seed[seed] = np.where(constant, 0.0, rho)
        observed[seed] = (np.asarray(xs, dtype=float), matrix[:, 0])
    if not per_seed:
        return Part(label, reading, missing_estimate(), paper_value, runs, attacker,
                    blocker=f"no seed has runs at {MIN_TREND_POINTS} or more swept values")

    def on_seeds(kept: Collection[int]) -> Estimate:
        replicates = {s: per_seed[s] for s in per_seed if s in kept}
        if len(replicates) < 2:
            return crossed_estimate(replicates)
        mean = float(np.mean([r[0] for r in replicates.values()]))
        return trend_estimate(replicates, *permutation_p_values({s: observed[s] for s in replicates}, mean))

    return Part(label, reading, on_seeds(per_seed), paper_value, runs, attacker, on_seeds=on_seeds)


def values_text(swept: list[float]) -> str:
    """'{0, 0.3, 0.8}' for a sweep's label; says so when no run of the sweep is saved."""
    return "{" + ", ".join(f"{v:g}" for v in swept) + "}" if len(swept) else "{} (no runs saved)"
