"""ε accounting: nominal vs effective ε per layer, and DPNR's word dropout amplification."""

from __future__ import annotations

import math

import pytest

from privtext.privacy.accounting import epsilon_accounting, word_dropout_epsilon


def test_published_minmax_guarantees_dimension_times_epsilon() -> None:
    result = epsilon_accounting("minmax", 0.05, 384)
    assert result["epsilon_nominal"] == 0.05
    assert result["epsilon_effective"] == pytest.approx(384 * 0.05)


def test_calibrated_minmax_guarantees_nominal_epsilon() -> None:
    assert epsilon_accounting("minmax_calibrated", 0.5, 384)["epsilon_effective"] == pytest.approx(0.5)


def test_l1_layer_guarantees_nominal_epsilon() -> None:
    assert epsilon_accounting("l1", 8.0, 50)["epsilon_effective"] == pytest.approx(8.0)


def test_word_dropout_matches_hand_computed_value() -> None:
    assert word_dropout_epsilon(1.0, 0.5) == pytest.approx(math.log(0.5 * math.e + 0.5))


def test_word_dropout_applies_to_effective_epsilon() -> None:
    result = epsilon_accounting("minmax", 0.01, 100, mu=0.3)
    assert result["epsilon_layer"] == pytest.approx(1.0)
    assert result["epsilon_effective"] == pytest.approx(math.log(0.7 * math.e + 0.3))


def test_word_dropout_rate_zero_is_identity() -> None:
    assert word_dropout_epsilon(3.7, 0.0) == pytest.approx(3.7)


def test_word_dropout_does_not_overflow_for_large_epsilon() -> None:
    eps = word_dropout_epsilon(384 * 20.0, 0.5)
    assert math.isfinite(eps)
    assert eps == pytest.approx(7680 + math.log(0.5))


@pytest.mark.parametrize("epsilon", [0.01, 0.5, 1.0, 20.0, 7680.0])
@pytest.mark.parametrize("mu", [0.0, 0.1, 0.5, 0.8, 1.0])
def test_word_dropout_never_increases_epsilon(epsilon: float, mu: float) -> None:
    assert 0.0 <= word_dropout_epsilon(epsilon, mu) <= epsilon + 1e-12


def test_no_privacy_layer_is_not_differentially_private() -> None:
    result = epsilon_accounting(None, None, 50, mu=0.5)
    assert result["epsilon_nominal"] is None
    assert result["epsilon_effective"] == math.inf
    assert result["differentially_private"] is False


def test_unknown_layer_is_rejected() -> None:
    with pytest.raises(ValueError, match="'l2'"):
        epsilon_accounting("l2", 1.0, 10)


@pytest.mark.parametrize("mu", [-0.1, 1.5])
def test_word_dropout_rate_outside_unit_interval_is_rejected(mu: float) -> None:
    with pytest.raises(ValueError, match=f"mu.*{mu}"):
        epsilon_accounting("l1", 1.0, 10, mu=mu)
