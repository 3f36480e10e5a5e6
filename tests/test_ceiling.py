"""The ε ceiling on attribute inference (privtext.privacy.ceiling): hand cases, the linear programme it solves,
trained attackers on simulated releases through the real privacy layers, and its test's level."""

import math

import numpy as np
import pytest
import torch
from scipy.optimize import linprog
from sklearn.linear_model import LogisticRegression

from privtext.privacy.ceiling import above_ceiling_p_value, attack_ceiling
from privtext.privacy.layers import PrivacyLayer


@pytest.mark.parametrize("epsilon, prior, expected", [
    (math.log(3), [0.5, 0.5], 0.75),  # e^ε/(1+e^ε)
    (math.log(3), [0.9, 0.1], 0.9),  # the majority rate is already higher
    (math.log(19), [0.1, 0.9], 0.95),  # order of the classes does not matter
    (math.log(2), [0.5, 0.3, 0.2], 2 * 0.8 / 3),  # k = 2: e^ε(π1 + π2)/(e^ε + 1)
    (math.log(2), [50, 30, 20], 2 * 0.8 / 3),  # counts are proportions
    (math.log(4), [1 / 3] * 3, 4 / 6),  # k = K: e^ε/(e^ε + K − 1)
    (0.0, [0.6, 0.3, 0.1], 0.6),  # ε → 0: the majority rate
    (math.inf, [0.6, 0.3, 0.1], 1.0),  # ε → ∞: anything
    (384 * 20.0, [0.5, 0.5], 1.0),  # DPNR's nominal ε on MiniLM, effective: no overflow
])
def test_the_ceiling_on_hand_cases(epsilon, prior, expected):
    assert attack_ceiling(epsilon, prior) == pytest.approx(expected, abs=1e-12)


def test_the_ceiling_tends_to_the_majority_rate_and_to_one():
    prior = [0.7, 0.2, 0.1]
    assert attack_ceiling(1e-9, prior) == pytest.approx(0.7, abs=1e-8)
    assert attack_ceiling(40.0, prior) == pytest.approx(1.0, abs=1e-12)
    values = [attack_ceiling(e, prior) for e in np.linspace(0, 10, 50)]
    assert all(b >= a - 1e-15 for a, b in zip(values, values[1:]))  # more ε, never a lower ceiling


def _linear_programme(epsilon: float, prior: np.ndarray) -> float:
    """max Σ π_a Q[a, a] over channels Q[m, a] = P(answer m | class a) with Q[m, a] ≤ e^ε Q[m, b]."""
    k = len(prior)
    index = lambda m, a: m * k + a  # noqa: E731
    cost = np.zeros(k * k)
    for a in range(k):
        cost[index(a, a)] = -prior[a]
    upper, bound = [], []
    for m in range(k):
        for a in range(k):
            for b in range(k):
                if a != b:
                    row = np.zeros(k * k)
                    row[index(m, a)], row[index(m, b)] = 1.0, -math.exp(epsilon)
                    upper.append(row)
                    bound.append(0.0)
    equal = np.zeros((k, k * k))
    for a in range(k):
        for m in range(k):
            equal[a, index(m, a)] = 1.0
    result = linprog(cost, A_ub=np.array(upper), b_ub=bound, A_eq=equal, b_eq=np.ones(k), bounds=(0, 1))
    assert result.success
    return -result.fun


def test_the_ceiling_is_the_optimum_of_the_linear_programme_over_all_channels():
    rng = np.random.default_rng(0)
    for _ in range(40):
        k = int(rng.integers(2, 6))
        prior = rng.dirichlet(np.ones(k) * rng.choice([0.3, 1.0, 5.0]))
        epsilon = float(rng.choice([0.05, 0.3, 1.0, 2.0, 5.0]))
        assert attack_ceiling(epsilon, prior) == pytest.approx(_linear_programme(epsilon, prior), abs=1e-7)


def _released(kind: str, epsilon: float, inputs: np.ndarray, n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """A binary attribute ``a`` whose examples are ``inputs[a]``, released through the real privacy layer."""
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 2, n)
    layer = PrivacyLayer(kind, epsilon, inputs.shape[1], seed=seed)
    with torch.no_grad():
        return layer(torch.tensor(inputs[a], dtype=torch.float32)).numpy(), a


ONE_HOT = np.eye(2)  # the attribute in one coordinate each: the l1 layer's whole sensitivity spent on it
PATTERN = np.array([np.tile([1.0, 0.0], 32), np.tile([0.0, 1.0], 32)])  # in every coordinate: L1 distance 64


@pytest.mark.parametrize("epsilon", [0.5, 1.0, 3.0])
def test_no_trained_attacker_beats_the_ceiling_of_the_l1_layer(epsilon):
    x_fit, a_fit = _released("l1", epsilon, ONE_HOT, 4000, 1)
    x_test, a_test = _released("l1", epsilon, ONE_HOT, 4000, 2)
    accuracy = LogisticRegression(max_iter=1000).fit(x_fit, a_fit).score(x_test, a_test)
    ceiling = attack_ceiling(epsilon, np.bincount(a_test))
    # The attacker gets well above the majority rate (0.56, 0.61, 0.80) and stays under the ceiling (0.62,
    # 0.73, 0.95): Laplace noise is further from the bound than randomised response, which reaches it.
    assert 0.53 < accuracy <= ceiling + 3 * math.sqrt(ceiling * (1 - ceiling) / len(a_test))
    assert above_ceiling_p_value(round(accuracy * len(a_test)), len(a_test), ceiling) > 0.001


def test_a_trained_attacker_beats_the_nominal_ceiling_of_the_published_min_max_layer():
    """DPNR's and CAPE's layer adds Lap(1/ε) to min-max normalised vectors, whose L1 sensitivity is D, not 1."""
    epsilon = 1.0
    x_fit, a_fit = _released("minmax", epsilon, PATTERN, 2000, 1)
    x_test, a_test = _released("minmax", epsilon, PATTERN, 2000, 2)
    accuracy = LogisticRegression(max_iter=1000).fit(x_fit, a_fit).score(x_test, a_test)
    ceiling = attack_ceiling(epsilon, np.bincount(a_test))  # 0.73 at the nominal ε
    assert accuracy > 0.95 > ceiling
    assert above_ceiling_p_value(round(accuracy * len(a_test)), len(a_test), ceiling) < 1e-12


def test_the_above_ceiling_test_keeps_its_level_when_chances_differ():
    """Examples whose chances of being right average exactly the ceiling: rejections at 5% stay at most 5%."""
    rng = np.random.default_rng(3)
    n, ceiling = 400, 0.75
    chances = np.clip(ceiling + rng.uniform(-0.2, 0.2, n), 0, 1)
    chances += ceiling - chances.mean()
    correct = (rng.random((4000, n)) < chances).sum(axis=1)
    rejections = np.mean([above_ceiling_p_value(int(c), n, ceiling) < 0.05 for c in correct])
    assert rejections <= 0.05
    assert above_ceiling_p_value(0, n, ceiling) == 1.0
