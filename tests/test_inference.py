"""The claims' interval and verdict rule, on simulated seeds and test examples (issue 20, acceptance 1).

The simulation draws, for every simulated study, a fresh test set from a population and 5 training seeds:
example i has a difficulty p_i shared by every seed and both models (the test-set effect), each seed moves a
model's accuracy by u_s (the seed effect), and each (seed, example) is a Bernoulli draw (the interaction). The
population difference of the two models' accuracies is exactly δ (no clipping), so coverage is measured
against a known truth. The intervals and verdicts come from the project's own code: ``bootstrap_weights`` →
``weighted_mean`` → ``crossed_estimate`` → ``verdicts.judge``.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from privtext.measures.multiple_testing import holm
from privtext.claims.inference import (Estimate, bootstrap_weights, crossed_estimate, missing_estimate,
                                       seeds_estimate, weighted_mean)
from privtext.claims.seed_shape import FAMILY_LEVEL, SEEDS_NEEDED, family_reasons, study_checks
from privtext.claims.verdicts import ACCURACY_MARGIN, ALPHA, Reading, judge, paper_reading

SEEDS = (10, 20, 30, 40, 50)
N_TEST = 400
N_STUDIES = 1000
SUPERIORITY = Reading("superiority", 1)


def _study(rng: np.random.Generator, delta: float, seed_sd: float = 0.02) -> dict[int, np.ndarray]:
    """Per seed, the replicates of acc_A − acc_B on one simulated test set (entry 0: as drawn)."""
    difficulty = rng.uniform(0.35, 0.65, N_TEST)
    # each model also finds some examples easier or harder than the other does: a test-set effect that does
    # not cancel in the difference, and that an interval over seeds alone misses
    own_a, own_b = rng.uniform(-0.2, 0.2, (2, N_TEST))
    weights = bootstrap_weights(N_TEST, 200, seed=int(rng.integers(1 << 30)))
    replicates = {}
    for seed in SEEDS:
        shift_a, shift_b = rng.uniform(-seed_sd, seed_sd, 2) * math.sqrt(3)  # seed effects, sd = seed_sd
        correct_a = rng.random(N_TEST) < difficulty + own_a + delta / 2 + shift_a
        correct_b = rng.random(N_TEST) < difficulty + own_b - delta / 2 + shift_b
        replicates[seed] = weighted_mean(weights, correct_a) - weighted_mean(weights, correct_b)
    return replicates


@pytest.mark.parametrize("seed_sd", [0.0, 0.02, 0.05])
def test_the_95_percent_interval_covers_a_known_effect_in_93_to_97_percent_of_studies(seed_sd: float) -> None:
    rng = np.random.default_rng(2026)
    delta = 0.03
    covered = [(e.low <= delta <= e.high) for e in (crossed_estimate(_study(rng, delta, seed_sd))
                                                    for _ in range(2 * N_STUDIES))]
    print(f"coverage at seed sd {seed_sd}: {np.mean(covered):.4f} of {len(covered)} studies")
    assert 0.93 <= np.mean(covered) <= 0.97, np.mean(covered)


def test_an_interval_over_seeds_alone_undercovers_which_is_why_test_sampling_enters() -> None:
    # one model's accuracy (population mean 0.5) whose seeds agree on 90% of the examples, as a probe that
    # converges to nearly the same solution does: the seeds' spread says little about the test set's luck
    rng = np.random.default_rng(7)
    alone, crossed = [], []
    for _ in range(400):
        difficulty = rng.uniform(0.2, 0.8, N_TEST)
        shared = rng.random(N_TEST) < difficulty
        weights = bootstrap_weights(N_TEST, 200, seed=int(rng.integers(1 << 30)))
        study = {}
        for s in SEEDS:
            fresh = rng.random(N_TEST) < 0.1
            study[s] = weighted_mean(weights, np.where(fresh, rng.random(N_TEST) < difficulty, shared))
        seeds_only = seeds_estimate({s: float(v[0]) for s, v in study.items()})
        both = crossed_estimate(study)
        alone.append(seeds_only.low <= 0.5 <= seeds_only.high)
        crossed.append(both.low <= 0.5 <= both.high)
    print(f"seeds that agree: coverage {np.mean(alone):.4f} over seeds alone, {np.mean(crossed):.4f} crossed")
    assert np.mean(alone) < 0.5 and 0.93 <= np.mean(crossed) <= 0.97, (np.mean(alone), np.mean(crossed))


@pytest.mark.parametrize("n_parts, n_studies", [(1, N_STUDIES), (3, 400), (15, 150)])
def test_with_no_effect_holds_and_contradicted_together_come_out_at_most_5_percent(n_parts: int, n_studies: int) -> None:
    rng = np.random.default_rng(11 + n_parts)
    directional = 0
    for _ in range(n_studies):
        parts = [(f"part {k}", SUPERIORITY, crossed_estimate(_study(rng, 0.0)), "") for k in range(n_parts)]
        directional += judge(parts).outcome in ("holds", "contradicted")
    rate = directional / n_studies
    print(f"no effect, {n_parts} part(s): holds or contradicted in {rate:.4f} of {n_studies} studies")
    # 5% is the rule's size at the least favourable null (2.5% each way); the allowance is Monte Carlo error
    assert rate <= 0.05 + 2 * math.sqrt(0.05 * 0.95 / n_studies), rate


@pytest.mark.parametrize("reading, boundary", [
    (Reading("non-inferiority", 1, ACCURACY_MARGIN), -ACCURACY_MARGIN),
    (Reading("equivalence", 1, ACCURACY_MARGIN), ACCURACY_MARGIN),
])
def test_at_a_margins_boundary_the_rule_decides_either_way_at_most_5_percent(reading: Reading, boundary: float) -> None:
    rng = np.random.default_rng(5)
    decided = sum(judge([("p", reading, crossed_estimate(_study(rng, boundary)), "")]).outcome
                  in ("holds", "contradicted") for _ in range(N_STUDIES))
    assert decided / N_STUDIES <= 0.05 + 2 * math.sqrt(0.05 * 0.95 / N_STUDIES)


def test_a_clear_effect_holds_and_its_opposite_is_contradicted() -> None:
    rng = np.random.default_rng(3)
    assert judge([("p", SUPERIORITY, crossed_estimate(_study(rng, 0.15)), "")]).outcome == "holds"
    assert judge([("p", SUPERIORITY, crossed_estimate(_study(rng, -0.15)), "")]).outcome == "contradicted"


def test_the_estimate_reduces_to_the_t_interval_over_seeds_without_test_sampling() -> None:
    values = {1: 0.1, 2: 0.3, 3: 0.2, 4: 0.25, 5: 0.15}
    estimate = seeds_estimate(values)
    sd = np.std(list(values.values()), ddof=1)
    half = 2.7764451051977987 * sd / math.sqrt(5)  # t_{0.975, 4}
    assert (estimate.mean, estimate.low, estimate.high, estimate.df) == pytest.approx((0.2, 0.2 - half, 0.2 + half, 4))
    assert estimate.test_variance == 0


def test_the_test_set_part_is_the_bootstrap_variance_of_the_seed_mean_when_seeds_agree() -> None:
    # every seed has the same per-example values: s² = 0 and v̄ = v_T, so Var = v_T, the variance of a mean
    values = np.random.default_rng(0).random(2000) < 0.7
    weights = bootstrap_weights(2000, 2000, seed=1)
    replicate = weighted_mean(weights, values)
    estimate = crossed_estimate({s: replicate for s in SEEDS})
    assert estimate.se == pytest.approx(math.sqrt(0.7 * 0.3 / 2000), rel=0.08)
    assert estimate.df == math.inf


def test_bootstrap_weights_are_shared_by_size_and_seed_and_row_zero_is_the_test_set() -> None:
    a, b = bootstrap_weights(50, 10, seed=3), bootstrap_weights(50, 10, seed=3)
    assert np.array_equal(a, b) and np.all(a[0] == 1) and a.shape == (11, 50)
    assert not np.array_equal(a, bootstrap_weights(50, 10, seed=4))


def test_weighted_mean_is_the_mean_at_unit_weights_and_nan_on_an_empty_group() -> None:
    values, where = np.array([1, 0, 1, 1]), np.array([True, True, False, False])
    weights = np.array([[1, 1, 1, 1], [2, 0, 0, 1]], dtype=np.float32)
    assert weighted_mean(weights, values).tolist() == pytest.approx([0.75, 1.0])
    assert weighted_mean(weights, values, where).tolist() == pytest.approx([0.5, 1.0])
    assert np.isnan(weighted_mean(np.array([[0, 0, 1, 1]], dtype=np.float32), values, where)[0])


def test_holm_on_hand_cases() -> None:
    assert holm([0.01, 0.04, 0.03], 0.05) == [True, False, False]  # 0.01 ≤ 0.05/3; 0.03 > 0.05/2 stops
    assert holm([0.01, 0.02, 0.04], 0.05) == [True, True, True]  # 0.01 ≤ .0167, 0.02 ≤ .025, 0.04 ≤ .05
    assert holm([math.nan, 0.001], 0.05) == [False, True]


@pytest.mark.parametrize("reading, inside, outside, opposite", [
    (Reading("superiority", -1), (-0.05, -0.01), (-0.05, 0.01), (0.01, 0.05)),
    (Reading("non-inferiority", 1, 0.02), (-0.015, 0.2), (-0.03, 0.01), (-0.09, -0.03)),
    (Reading("equivalence", 1, 0.02), (-0.01, 0.015), (-0.01, 0.03), (0.03, 0.05)),
    (Reading("non-inferiority", -1, 0.02), (-0.3, 0.015), (-0.01, 0.03), (0.03, 0.09)),
])
def test_each_reading_judges_intervals_by_its_region(reading, inside, outside, opposite) -> None:
    def at(low: float, high: float):
        mean, se = (low + high) / 2, (high - low) / 2 / 1.959963984540054
        from privtext.claims.inference import Estimate

        return Estimate(mean, se, math.inf, low, high, 5, {}, se**2, 0.0)

    assert judge([("p", reading, at(*inside), "")]).outcome == "holds"
    assert judge([("p", reading, at(*outside), "")]).outcome == "not shown"
    assert judge([("p", reading, at(*opposite), "")]).outcome == "contradicted"


def test_a_part_without_five_seeds_or_runs_is_untestable_unless_another_is_contradicted() -> None:
    rng = np.random.default_rng(1)
    few = crossed_estimate({s: v for s, v in list(_study(rng, 0.2).items())[:3]})
    assert judge([("p", SUPERIORITY, few, "")]).outcome == "untestable"
    assert judge([("p", SUPERIORITY, missing_estimate(), "")]).outcome == "untestable"
    assert judge([("p", SUPERIORITY, crossed_estimate(_study(rng, 0.2)), "not converged")]).outcome == "untestable"
    shown_opposite = crossed_estimate(_study(rng, -0.2))
    assert judge([("a", SUPERIORITY, few, ""), ("b", SUPERIORITY, shown_opposite, "")]).outcome == "contradicted"


def test_papers_printed_numbers_are_scored_by_the_same_reading() -> None:
    comparable = Reading("equivalence", 1, 0.02)
    assert paper_reading([("d", comparable, 0.05)]).startswith("does not meet")
    assert paper_reading([("d", comparable, 0.01)]) == "meets the claim as read"
    assert paper_reading([("d", comparable, math.nan)]) == "not printed"
    assert paper_reading([("a", SUPERIORITY, 0.1), ("b", SUPERIORITY, math.nan)]).startswith("meets it on the printed")


# --- Seeds that are not normal (issue 28, item 6; docs/claims.md, "Seeds that are not normal") ---------------
# Model A lands in a worse optimum, WORSE_BY lower in accuracy, on a seed with probability P_WORSE. "No true
# effect" means the mixture's mean: the difference A − B is +2 points at the main optimum and −8 on a worse
# seed, 0 on average over seeds, and coverage is of that 0. The two models share most per-example outcomes, as
# models on one test set do (each example has one luck for both models and every seed, redrawn in 6% of the
# draws; per-model example shifts of ±0.02), so the 95% interval at the main optimum is about ±0.025 on 400
# examples, as on the claims' test sets of thousands. At these settings the plain rule errs as issue 28 says.
P_WORSE, WORSE_BY = 0.2, 0.10
MAIN_OPTIMUM_DIFFERENCE = P_WORSE * WORSE_BY
STUDY_TESTS = 2  # a seed_shape family's checks: test accuracy and the claims' attacker (Holm per family)


def _mixture_study(rng: np.random.Generator, worse: np.ndarray, n_parts: int = 1,
                   delta: float = MAIN_OPTIMUM_DIFFERENCE) -> list[dict[int, np.ndarray]]:
    """Per part (the parts share the seeds' runs, so ``worse`` is the same for all), the replicates of
    acc_A − acc_B per seed; A is WORSE_BY worse on the seeds where ``worse`` is true."""
    weights = bootstrap_weights(N_TEST, 200, seed=int(rng.integers(1 << 30)))
    n_seeds, parts = len(worse), []
    for _ in range(n_parts):
        difficulty = rng.uniform(0.35, 0.65, N_TEST)
        own_a, own_b = rng.uniform(-0.02, 0.02, (2, N_TEST))
        luck = rng.random(N_TEST)

        def draws() -> np.ndarray:
            return np.where(rng.random((n_seeds, N_TEST)) < 0.06, rng.random((n_seeds, N_TEST)), luck)

        correct_a = draws() < (difficulty + own_a + delta / 2)[None, :] - WORSE_BY * worse[:, None]
        correct_b = draws() < (difficulty + own_b - delta / 2)[None, :]
        parts.append({10 * (k + 1): weighted_mean(weights, correct_a[k]) - weighted_mean(weights, correct_b[k])
                      for k in range(n_seeds)})
    return parts


def _seed_shape_study(rng: np.random.Generator, p_worse: float = P_WORSE, n_seeds: int = 15) -> str:
    """The seed_shape study's check of A's family: A's test accuracy at 15 seeds (its attackers' accuracies
    left constant), judged as benchmarks/seed_shape.py judges it: Holm over the family's 2 checks. The blocker
    its finding gives A's claims rows ('' if none)."""
    worse = rng.random(n_seeds) < p_worse
    difficulty, luck = rng.uniform(0.35, 0.65, N_TEST), rng.random(N_TEST)
    outcomes = np.where(rng.random((n_seeds, N_TEST)) < 0.06, rng.random((n_seeds, N_TEST)), luck)
    accuracy = (outcomes < difficulty[None, :] - WORSE_BY * worse[:, None]).mean(axis=1)
    runs = pd.DataFrame({"dataset": "sim", "method": "a", "seed": np.arange(n_seeds), "test_accuracy": accuracy,
                         "attacker": "linear", "attribute": "z", "attack_accuracy": 0.5})
    # the second-optimum test alone: the power gate (tests/test_seed_shape.py) only adds blockers
    return family_reasons(study_checks(runs), min_power=0).get(("sim", "a"), "")


def _plain_holds(estimate) -> bool:
    return SUPERIORITY.p_holds(estimate) <= ALPHA


def test_a_worse_optimum_on_1_seed_in_5_breaks_the_plain_rule_at_5_seeds_and_a_parts_own_seeds_cannot_tell() -> None:
    # Issue 28's figures: "holds" in 16%, coverage 0.82. The 5 seeds draw no worse seed in 0.8^5 = 33% of
    # studies; the estimate then sits at the main optimum, 2 points above the mean over seeds. The part-level
    # check (judge) sees nothing there, so it leaves the rate where it was. 2,000 studies: Monte Carlo SE ≤ 0.011.
    rng = np.random.default_rng(28)
    plain, judged, covered, no_worse_seed = [], [], [], []
    for _ in range(2 * N_STUDIES):
        worse = rng.random(len(SEEDS)) < P_WORSE
        estimate = crossed_estimate(_mixture_study(rng, worse)[0])
        plain.append(_plain_holds(estimate))
        judged.append(judge([("p", SUPERIORITY, estimate, "")]).outcome == "holds")
        covered.append(estimate.low <= 0 <= estimate.high)
        no_worse_seed.append(not worse.any())
    print(f"1 seed in 5 worse by {WORSE_BY}: plain 'holds' {np.mean(plain):.3f}, with the part check "
          f"{np.mean(judged):.3f}, coverage {np.mean(covered):.3f}; of studies with no worse seed "
          f"({np.mean(no_worse_seed):.3f}) 'holds' {np.mean(np.array(judged)[no_worse_seed]):.3f}")
    assert 0.13 <= np.mean(plain) <= 0.23 and 0.77 <= np.mean(covered) <= 0.87
    assert np.mean(judged) >= 0.13  # the residual a part's own seeds cannot remove: the seed_shape study must


def test_a_worse_optimum_contradicts_a_15_part_claim_shaped_like_c1_at_5_seeds() -> None:
    # Issue 28: 28%. The claim is opposite to the main optimum; 15 parts rest on the same runs. 300 studies:
    # Monte Carlo SE ≤ 0.026.
    rng = np.random.default_rng(29)
    opposite = Reading("superiority", -1)
    contradicted = 0
    for _ in range(300):
        parts = _mixture_study(rng, rng.random(len(SEEDS)) < P_WORSE, n_parts=15)
        p_opposite = [opposite.p_opposite(crossed_estimate(p)) for p in parts]
        contradicted += any(holm(p_opposite, ALPHA))
    print(f"15 parts, 1 seed in 5 worse: contradicted in {contradicted / 300:.3f} of 300 studies (plain rule)")
    assert 0.20 <= contradicted / 300 <= 0.36


@pytest.mark.parametrize("n_parts, direction, n_worlds", [(1, 1, 1000), (15, -1, 200)])
def test_with_a_worse_optimum_the_rows_keep_the_promise_or_say_why_not(n_parts: int, direction: int,
                                                                      n_worlds: int) -> None:
    # Each world runs the seed_shape study (15 seeds of A's family) and a 5-seed claims study; a row comparing a
    # family the study found two optima in is untestable with that reason, as is a part whose own seeds fall in
    # two groups. With no true effect, "holds" or "contradicted" must stay within 5%, and so must a testable
    # interval that misses the mean over seeds. Allowance: 2 Monte Carlo SEs (0.014 at 1,000 worlds).
    rng = np.random.default_rng(30 + n_parts)
    reading = Reading("superiority", direction)
    decided = missed = flagged = 0
    for _ in range(n_worlds):
        family = _seed_shape_study(rng)
        flagged += bool(family)
        estimates = [crossed_estimate(p) for p in _mixture_study(rng, rng.random(len(SEEDS)) < P_WORSE, n_parts)]
        judgement = judge([(f"p{k}", reading, e, family) for k, e in enumerate(estimates)])
        decided += judgement.outcome in ("holds", "contradicted")
        missed += any(j.outcome != "untestable" and not e.low <= 0 <= e.high
                      for j, e in zip(judgement.parts, estimates))
        if judgement.outcome == "untestable":
            assert "second optimum" in judgement.reason and f"{SEEDS_NEEDED} seeds are needed" in judgement.reason
    allowance = 0.05 + 2 * math.sqrt(0.05 * 0.95 / n_worlds)
    print(f"{n_parts} part(s), 1 seed in 5 worse, with both checks: seed_shape study flags the family in "
          f"{flagged / n_worlds:.3f}; holds or contradicted {decided / n_worlds:.3f}; a testable interval misses "
          f"in {missed / n_worlds:.3f} of {n_worlds} worlds")
    assert decided / n_worlds <= allowance and missed / n_worlds <= allowance
    # the 15 seeds draw no worse seed in 3.5% of studies; the one-seed half of family_test finds a single worse
    # seed, which R alone mostly missed: the study flags the family in about 96% (89% before)
    assert flagged / n_worlds >= 0.92


def test_at_the_seeds_needed_the_interval_keeps_its_promise_with_a_worse_optimum() -> None:
    # At SEEDS_NEEDED seeds the part check stands aside; the plain interval's errors are then within 5% and its
    # coverage within 93–97% (at 25–30 seeds they were 4.7–5.5% in a wider run: docs/claims.md). 1,500
    # studies: Monte Carlo SE 0.0056 at 5%.
    rng = np.random.default_rng(40)
    n_studies, decided, covered = 1500, 0, 0
    for _ in range(n_studies):
        estimate = crossed_estimate(_mixture_study(rng, rng.random(SEEDS_NEEDED) < P_WORSE)[0])
        decided += judge([("p", SUPERIORITY, estimate, "")]).outcome in ("holds", "contradicted")
        covered += estimate.low <= 0 <= estimate.high
    print(f"{SEEDS_NEEDED} seeds, 1 seed in 5 worse: holds or contradicted {decided / n_studies:.4f}, coverage "
          f"{covered / n_studies:.4f} of {n_studies} studies")
    assert decided / n_studies <= 0.05 + 2 * math.sqrt(0.05 * 0.95 / n_studies)
    assert 0.93 <= covered / n_studies <= 0.97


def test_with_normal_seeds_the_checks_rarely_stand_in_the_way() -> None:
    # The part check at 5 normal seeds (the existing simulation, no effect) and the seed_shape study on a
    # family without a second optimum: each blocks at most its level of the time. 1,000 studies: SE ≤ 0.0032.
    rng = np.random.default_rng(41)
    blocked = sum(judge([("p", SUPERIORITY, crossed_estimate(_study(rng, 0.0, 0.02)), "")]).outcome == "untestable"
                  for _ in range(N_STUDIES))
    family = sum(bool(_seed_shape_study(rng, p_worse=0.0)) for _ in range(N_STUDIES))
    print(f"normal seeds: the part check blocks {blocked / N_STUDIES:.4f}, "
          f"the seed_shape study {family / N_STUDIES:.4f}")
    assert blocked / N_STUDIES <= 0.01 + 2 * math.sqrt(0.01 * 0.99 / N_STUDIES)
    assert family / N_STUDIES <= FAMILY_LEVEL / STUDY_TESTS + 2 * math.sqrt(0.01 / N_STUDIES)


# --- trends (issue 40): Spearman's ρ over a sweep whose points all sit at one level ---------------------------
SWEEP = (0.05, 0.1, 0.5, 1.0, 5.0)  # D5's ε at equal effective ε, where calibrated noise puts every ε at chance


def _flat_sweep(rng: np.random.Generator, run_sd: float, shared: float, slope: float = 0.0) -> dict:
    """``trend``'s input for one study: per swept value, per seed, the replicates of one run's accuracy on a
    shared test set. Every run has the same population accuracy plus ``slope`` × the value's rank (0: a flat
    truth) and a run effect of sd ``run_sd``; runs share each example's outcome with probability ``shared`` (as
    models at chance that predict much the same)."""
    weights = bootstrap_weights(N_TEST, 200, seed=int(rng.integers(1 << 30)))
    difficulty, luck = rng.uniform(0.3, 0.7, N_TEST), rng.random(N_TEST)
    points = {}
    for rank, x in enumerate(SWEEP):
        per_seed = {}
        for seed in SEEDS:
            draws = np.where(rng.random(N_TEST) < shared, luck, rng.random(N_TEST))
            shift = rng.normal(0.0, run_sd) + slope * rank
            per_seed[seed] = weighted_mean(weights, draws < difficulty + shift)
        points[x] = (per_seed, (f"x{x}",))
    return points


@pytest.mark.parametrize("run_sd, shared", [(0.0, 0.0), (0.01, 0.0), (0.01, 0.9)])
def test_a_trend_under_a_flat_truth_keeps_the_5_percent_promise_inside_minus_1_to_1(run_sd: float,
                                                                                     shared: float) -> None:
    # A "ρ < 0" claim at 5 swept values and 5 seeds, every value at the same level. The crossed interval alone
    # (the rule before issue 40) decides too often and reaches past ±1; with the within-seed permutation test
    # each side stays at 2.5% and every interval inside [−1, 1]. 1,000 studies: Monte Carlo SE 0.0069 at 5%.
    from privtext.claims.parts import LOWER, trend

    rng = np.random.default_rng(int(100 * run_sd) + int(10 * shared) + 40)
    held = contradicted = plain_decided = plain_outside = outside = 0
    for _ in range(N_STUDIES):
        part = trend("ρ", _flat_sweep(rng, run_sd, shared), LOWER)
        estimate = part.estimate
        outcome = judge([(part.label, part.reading, estimate, "")]).outcome
        held += outcome == "holds"
        contradicted += outcome == "contradicted"
        outside += not -1.0 <= estimate.low <= estimate.high <= 1.0
        # the crossed interval alone: the base class's tests, its interval unclipped
        plain_decided += min(Estimate.p_less(estimate, 0.0), Estimate.p_greater(estimate, 0.0)) <= ALPHA
        half = (estimate.high - estimate.low) / 2 if estimate.se == 0 else \
            float(stats.t.ppf(0.975, estimate.df)) * estimate.se
        plain_outside += abs(estimate.mean) + half > 1.0
    n = N_STUDIES
    print(f"flat sweep, run sd {run_sd}, shared {shared}: holds {held / n:.4f}, contradicted {contradicted / n:.4f}; "
          f"the crossed interval alone decides {plain_decided / n:.4f}, reaches past ±1 in {plain_outside / n:.4f} "
          f"of {n} studies")
    side = ALPHA + 2 * math.sqrt(ALPHA * (1 - ALPHA) / n)
    assert held / n <= side and contradicted / n <= side
    assert (held + contradicted) / n <= 0.05 + 2 * math.sqrt(0.05 * 0.95 / n)
    assert outside == 0


def test_a_real_trend_is_still_shown() -> None:
    # one point of accuracy lost per swept value: the permutation test costs the rule little power
    from privtext.claims.parts import LOWER, trend

    rng = np.random.default_rng(44)
    held = sum(judge([("ρ", LOWER, trend("ρ", _flat_sweep(rng, 0.005, 0.0, slope=-0.02), LOWER).estimate, "")])
               .outcome == "holds" for _ in range(200))
    print(f"a trend of −2 points per swept value: holds in {held / 200:.3f} of 200 studies")
    assert held / 200 >= 0.9


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("level", [0.01, 0.05, 0.1])
def test_holm_is_statsmodels_multipletests(seed, level):
    """Issue 43: the hand-written Holm step held to statsmodels' on the same p-values (NaN ones left out, which
    statsmodels does not take and holm never rejects)."""
    from statsmodels.stats.multitest import multipletests

    from privtext.measures.multiple_testing import holm

    rng = np.random.default_rng(seed)
    p_values = np.concatenate([rng.uniform(0, 0.02, 6), rng.uniform(0, 1, 14)])  # some rejected, most not
    p_values[[3, 7]] = p_values[[2, 6]]  # ties
    expected = multipletests(p_values, alpha=level, method="holm")[0]
    assert holm(list(p_values), level) == list(expected)
    with_nan = [*p_values, float("nan")]
    assert holm(with_nan, level) == [*expected, False]
