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
import pytest

from privtext.measures.multiple_testing import holm
from privtext.claims.inference import (bootstrap_weights, crossed_estimate, missing_estimate, seeds_estimate,
                                weighted_mean)
from privtext.claims.verdicts import ACCURACY_MARGIN, Reading, judge, paper_reading

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
