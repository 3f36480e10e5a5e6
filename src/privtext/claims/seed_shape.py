"""Whether a quantity's per-seed values look like one optimum (docs/claims.md, "Seeds that are not normal").

The claims' interval (:mod:`privtext.claims.inference`) assumes that the training seed moves a measurement by a
normal amount around one optimum. A method that lands in a worse optimum on some seeds breaks that: with no true
effect, a one-part claim then "holds" far more often than the promised 2.5% (tests/test_inference.py simulates
it). The check here is Engelman and Hartigan's test for two clusters in a univariate sample (JASA 64, 1969):
sort the S values, split them into a lower and an upper group at each of the S − 1 gaps, and take the largest
share of the total sum of squares that lies between the two groups' means (their statistic is the ratio of the
between-group to the within-group sum of squares, a monotone function of this one)::

    R = max_j  j·(S − j)/S · (mean of the upper S − j − mean of the lower j)²  /  Σ (x − x̄)²

R is the same for any location and scale of the values, so under the null (the S values independent and normal
with one mean, which is the crossed model's seed part: a seed effect plus a seed × example interaction, the
test-set error being shared by every seed) its distribution depends on S alone. Its p-value is read off that
distribution, drawn once per S from fixed seeds (:data:`NULL_DRAWS` samples; the Monte Carlo error of a p-value
near 0.01 is about 0.0004). Unlike Grubbs' or Dixon's single-outlier tests it is not masked when two of five
seeds land in the same worse optimum. No maintained library offers it (scipy has neither it nor Hartigan's dip
test, which has no power at 5 values), so it is written out and checked against its null in
tests/test_seed_shape.py.

Two uses. :func:`seed_shape_reason` on a claim part's own seeds (privtext.claims.verdicts.untestable_reason):
seeds in two groups make the part untestable below :data:`SEEDS_NEEDED` seeds. What that cannot see is a
second optimum that no seed of the part drew: at 5 seeds and a worse optimum on 1 seed in 5, a third of
studies, and they are the ones that go wrong. So :func:`study_checks` runs the test once per method family on
the 15 seeds of the study ``seed_shape`` (benchmarks/seed_shape.py prints it), and :func:`family_reasons` gives
the blocker of every claims row that compares a family found to have a second optimum.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Mapping

import numpy as np
import pandas as pd

from privtext.measures.multiple_testing import holm

LEVEL = 0.01  # per claim (judge() splits it over the parts): normal seeds leave a claim untestable ≤ 1% of the time
FAMILY_LEVEL = 0.05  # the seed_shape study: Holm over every (setting, measure) tested
NULL_DRAWS = 50_000
NULL_SEED = 20261128
# The seeds at which the plain interval keeps its promise when 1 seed in 5 lands 10 points worse
# (docs/claims.md, "Seeds that are not normal"; tests/test_inference.py simulates it): below it, a part whose
# seeds fall in two groups is untestable.
SEEDS_NEEDED = 40


@dataclass(frozen=True)
class ClusterTest:
    """Engelman–Hartigan's two-cluster test on one quantity's per-seed values: ``statistic`` R (0–1),
    its ``p_value`` under one normal optimum, the seeds of the smaller group (``apart``: those on the far side
    of the best split) and ``gap``, the difference of the two groups' means (upper − lower)."""

    statistic: float
    p_value: float
    apart: tuple[int, ...]
    gap: float


def _between_share(sorted_values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per row of ascending ``sorted_values`` (rows × S): R and the size j of the lower group at the best split."""
    n = sorted_values.shape[1]
    centred = sorted_values - sorted_values.mean(axis=1, keepdims=True)
    total = (centred**2).sum(axis=1)
    lower_sums = np.cumsum(centred, axis=1)[:, :-1]  # the centred sum of the lowest j values, j = 1 … S − 1
    j = np.arange(1, n)
    # with centred values the upper group's sum is −lower_sums, so the between-group sum of squares is
    # j(S − j)/S · (mean_hi − mean_lo)² = lower_sums² · S / (j (S − j))
    between = lower_sums**2 * n / (j * (n - j))
    best = between.argmax(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        share = np.where(total > 0, between[np.arange(len(best)), best] / total, 0.0)
    return share, best + 1


@functools.lru_cache(maxsize=64)
def _null_statistics(n_values: int) -> np.ndarray:
    """The sorted null distribution of R for ``n_values`` independent standard normal values."""
    rng = np.random.default_rng([NULL_SEED, n_values])
    share, _ = _between_share(np.sort(rng.standard_normal((NULL_DRAWS, n_values)), axis=1))
    return np.sort(share)


def cluster_test(per_seed: Mapping[int, float]) -> ClusterTest:
    """The two-cluster test on ``{seed: value}``. Fewer than 3 values or a non-finite value give p = 1
    (nothing to test), and so do values more than half of which are exactly equal: a measurement that sits on a
    bound or is deterministic (a Spearman ρ of −1 over a few swept values, a method that ignores its seed) has
    no normal spread for the null to describe, and one seed off it is not a second optimum."""
    seeds = sorted(per_seed, key=lambda s: (per_seed[s], s))
    values = np.array([per_seed[s] for s in seeds], dtype=float)
    if len(values) < 3 or not np.all(np.isfinite(values)):
        return ClusterTest(0.0, 1.0, (), 0.0)
    if 2 * np.unique(values, return_counts=True)[1].max() > len(values):
        return ClusterTest(0.0, 1.0, (), 0.0)
    share, lower = _between_share(values[None, :])
    statistic, lower_size = float(share[0]), int(lower[0])
    null = _null_statistics(len(values))
    exceeding = len(null) - int(np.searchsorted(null, statistic, side="left"))
    p_value = (1 + exceeding) / (1 + len(null))
    gap = float(values[lower_size:].mean() - values[:lower_size].mean())
    apart = seeds[:lower_size] if lower_size <= len(values) - lower_size else seeds[lower_size:]
    return ClusterTest(statistic, p_value, tuple(int(s) for s in sorted(apart)), gap)


def seed_shape_reason(per_seed: Mapping[int, float], *, negligible_gap: float = 0.0, level: float = LEVEL,
                      seeds_needed: int = SEEDS_NEEDED) -> str:
    """'' when ``{seed: value}`` are consistent with one optimum, else why a verdict on them would not keep
    its promise. It fires when fewer than ``seeds_needed`` seeds fall in two groups (the cluster test's
    p ≤ ``level``) whose means differ by more than ``negligible_gap``. Pass the test-set standard error of the
    mean as ``negligible_gap``: a split smaller than it moves no verdict, and it keeps a measurement that is
    equal on most seeds up to rounding (a deterministic method) from reading as two optima."""
    if len(per_seed) >= seeds_needed:
        return ""
    test = cluster_test(per_seed)
    if test.p_value > level or not abs(test.gap) > negligible_gap:
        return ""
    seeds = ", ".join(str(s) for s in test.apart)
    return (f"seed(s) {seeds} lie {abs(test.gap):.3g} from the other seeds (two-cluster test p = "
            f"{test.p_value:.2g} ≤ {level:.2g}): the seed distribution may have a second optimum, under which a "
            f"{len(per_seed)}-seed interval does not keep its error rates; {seeds_needed} seeds are needed")


@dataclass(frozen=True)
class SettingCheck:
    """The two-cluster test on one setting's (dataset, method, grid parameters) per-seed values of one
    measure; ``second_optimum`` where Holm over every check of the study rejects."""

    dataset: str
    method: str
    setting: str
    measure: str
    per_seed: Mapping[int, float]
    test: ClusterTest
    second_optimum: bool = False


RUNS_COLUMNS = ("dataset", "method", "seed", "test_accuracy", "attacker", "attribute", "attack_accuracy")


def _one_per_seed(frame: pd.DataFrame, column: str, where: str) -> dict[int, float]:
    """{seed: value}; two different values for one seed (two runs of one setting) are an error."""
    values = frame.groupby("seed")[column].agg(["min", "max"])
    clash = values.index[values["min"] != values["max"]].tolist()
    if clash:
        raise ValueError(f"{where}: seed(s) {clash} have more than one {column} (two runs of one setting?)")
    return {int(s): float(v) for s, v in values["min"].items()}


def _setting_label(row: pd.Series, params: list[str]) -> str:
    values = [f"{p.removeprefix('param_')}={row[p]:g}" if isinstance(row[p], float) else
              f"{p.removeprefix('param_')}={row[p]}" for p in params if pd.notna(row[p])]
    return f"{row['dataset']} {row['method']}" + (f" ({', '.join(values)})" if values else "")


def study_checks(runs: pd.DataFrame, level: float = FAMILY_LEVEL, source: str = "runs.csv") -> list[SettingCheck]:
    """Every setting × measure of a study's runs table (``RUNS_COLUMNS``, numeric and finite; one row per grid
    point × attacker × attribute, as privtext.report.aggregate writes it): the main task's test accuracy and
    each attacker's accuracy on each attribute, with the two-cluster test on its per-seed values. The checks
    are many, so ``second_optimum`` is set by Holm's procedure over all of them at family-wise ``level``."""
    missing = [c for c in RUNS_COLUMNS if c not in runs.columns]
    if missing:
        raise ValueError(f"{source}: no column(s) {', '.join(missing)}")
    params = sorted(c for c in runs.columns if c.startswith("param_"))
    keys = ["dataset", *(["encoder"] if "encoder" in runs.columns else []), "method", *params]
    checks = []
    for _, rows in runs.groupby(keys, dropna=False, sort=True):
        first = rows.iloc[0]
        label = _setting_label(first, params)
        measures = [("test accuracy", rows, "test_accuracy")]
        measures += [(f"{attacker} attacker on {attribute}", group, "attack_accuracy")
                     for (attacker, attribute), group in rows.groupby(["attacker", "attribute"], sort=True)]
        for measure, group, column in measures:
            per_seed = _one_per_seed(group, column, f"{source}: {label}, {measure}")
            checks.append(SettingCheck(str(first["dataset"]), str(first["method"]), label, measure, per_seed,
                                       cluster_test(per_seed)))
    rejected = holm([c.test.p_value for c in checks], level)
    return [SettingCheck(c.dataset, c.method, c.setting, c.measure, c.per_seed, c.test, r)
            for c, r in zip(checks, rejected)]


def family_reasons(checks: list[SettingCheck], seeds_needed: int = SEEDS_NEEDED) -> dict[str, str]:
    """{method: why its claims' rows are untestable below ``seeds_needed`` seeds} for every method with a
    check that showed a second optimum: the blocker a claims row takes when it compares that method."""
    reasons: dict[str, list[str]] = {}
    for check in checks:
        if check.second_optimum:
            reasons.setdefault(check.method, []).append(
                f"{check.setting}, {check.measure}: seed(s) {', '.join(map(str, check.test.apart))} lie "
                f"{abs(check.test.gap):.3g} from the others (p = {check.test.p_value:.2g})")
    return {method: (f"the seed_shape study found a second optimum of {method} ({'; '.join(found)}): "
                     f"{seeds_needed} seeds are needed") for method, found in reasons.items()}


STUDY_SEEDS = 15  # the seed_shape study's seeds (config.yaml): a 1-in-5 worse optimum is drawn in 96.5% of studies
POWER_STUDIES = 2000  # Monte Carlo error of a power near 0.9: 0.007


def family_check_power(spread: float, worse_by: float, *, n_checks: int, p_worse: float = 0.2,
                       n_seeds: int = STUDY_SEEDS, level: float = FAMILY_LEVEL, n_studies: int = POWER_STUDIES,
                       seed: int = NULL_SEED) -> float:
    """How often :func:`study_checks` flags a family whose seeds land ``worse_by`` lower with probability
    ``p_worse`` (1 seed in 5), its other seeds spread normally with sd ``spread`` (both on the measure's scale),
    when the study runs ``n_checks`` checks under Holm at family-wise ``level`` and the others have one optimum
    (their p-values uniform). A simulation with fixed seeds: the same arguments give the same figure."""
    rng = np.random.default_rng([seed, n_seeds, n_checks])
    flagged = 0
    for _ in range(n_studies):
        values = rng.normal(0.0, spread, n_seeds) - worse_by * (rng.random(n_seeds) < p_worse)
        p_values = [cluster_test(dict(enumerate(values))).p_value, *rng.random(n_checks - 1)]
        flagged += holm(p_values, level)[0]
    return flagged / n_studies
