"""Privacy layers, tested statistically: sensitivity bounds, worst cases, noise scale, freshness."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from privtext.privacy.layers import (
    LAYER_KINDS, LAYERS, PrivacyLayer, l1_normalise, laplace_noise, minmax_normalise, noise_scale, sensitivity,
)

torch.set_num_threads(1)
NORMALISE = {kind: LAYER_KINDS[kind].normalise for kind in LAYERS}  # every registered layer's, a new one's too


def _random_vectors(n: int, dim: int, seed: int) -> torch.Tensor:
    """Vectors of very different scales and signs, including sparse ones."""
    g = torch.Generator().manual_seed(seed)
    v = torch.randn(n, dim, generator=g) * torch.exp(4 * torch.randn(n, 1, generator=g))
    return v * (torch.rand(n, dim, generator=g) > 0.3)


@pytest.mark.parametrize("kind", LAYERS)
def test_normalised_vectors_never_differ_by_more_than_the_sensitivity(kind: str) -> None:
    dim = 8
    a, b = (NORMALISE[kind](_random_vectors(20_000, dim, seed)) for seed in (1, 2))
    distance = (a - b).abs().sum(dim=1)
    assert distance.max() <= sensitivity(kind, dim) + 1e-5


def test_minmax_sensitivity_is_dimension_on_the_worst_case_pair() -> None:
    dim = 6
    a = minmax_normalise(torch.tensor([[0.0] + [1.0] * (dim - 1)]))
    b = minmax_normalise(torch.tensor([[1.0] + [0.0] * (dim - 1)]))
    assert (a - b).abs().sum().item() == pytest.approx(dim)
    assert sensitivity("minmax", dim) == dim == sensitivity("minmax_calibrated", dim)


def test_l1_layer_sensitivity_is_two() -> None:
    one_hot = torch.zeros(1, 5)
    one_hot[0, 2] = 3.0
    distance = (l1_normalise(one_hot) - l1_normalise(-one_hot)).abs().sum().item()
    assert distance == pytest.approx(2.0)
    assert sensitivity("l1", 384) == 2.0


def test_minmax_output_lies_in_unit_interval() -> None:
    out = minmax_normalise(_random_vectors(1000, 16, seed=3))
    assert out.min() >= 0.0 and out.max() <= 1.0


def test_minmax_guards_constant_vector() -> None:
    v = torch.full((2, 4), 7.5, requires_grad=True)
    out = minmax_normalise(v)
    out.sum().backward()
    assert torch.equal(out, torch.zeros(2, 4))
    assert torch.isfinite(v.grad).all()


def test_l1_guards_zero_vector() -> None:
    v = torch.zeros(2, 4, requires_grad=True)
    out = l1_normalise(v)
    out.sum().backward()
    assert torch.equal(out, torch.zeros(2, 4))
    assert torch.isfinite(v.grad).all()


@pytest.mark.parametrize("kind", LAYERS)
def test_degenerate_input_through_layer_stays_finite(kind: str) -> None:
    layer = PrivacyLayer(kind, 1.0, 4, seed=0)
    assert torch.isfinite(layer(torch.zeros(3, 4))).all()


def test_published_minmax_noise_ignores_dimension_while_calibrated_scales_with_it() -> None:
    assert noise_scale("minmax", 0.5, 384) == pytest.approx(2.0)
    assert noise_scale("minmax_calibrated", 0.5, 384) == pytest.approx(768.0)
    assert noise_scale("l1", 0.5, 384) == pytest.approx(4.0)


def test_laplace_noise_has_requested_scale() -> None:
    noise = laplace_noise((200_000,), 1.7, torch.Generator().manual_seed(0))
    assert noise.abs().mean().item() == pytest.approx(1.7, rel=0.02)  # mean |X| of Lap(b) is b
    assert noise.std().item() == pytest.approx(math.sqrt(2) * 1.7, rel=0.02)
    assert abs(noise.median().item()) < 0.02


@pytest.mark.parametrize(("kind", "epsilon"), [("minmax", 2.0), ("minmax_calibrated", 8.0), ("l1", 0.5)])
def test_layer_noise_scale_recovered_from_samples(kind: str, epsilon: float) -> None:
    dim = 100
    layer = PrivacyLayer(kind, epsilon, dim, seed=1)
    v = torch.randn(2_000, dim)
    noise = layer(v) - layer.normalise(v)
    expected = (1.0 if kind == "minmax" else sensitivity(kind, dim)) / epsilon
    assert noise.abs().mean().item() == pytest.approx(expected, rel=0.05)


def test_seeded_generator_reproduces_noise() -> None:
    draw = lambda: laplace_noise((50,), 1.0, torch.Generator().manual_seed(42))  # noqa: E731
    assert torch.equal(draw(), draw())


@pytest.mark.parametrize("training", [True, False])
def test_layer_draws_fresh_noise_on_every_forward(training: bool) -> None:
    layer = PrivacyLayer("l1", 1.0, 8, seed=0).train(training)
    v = torch.randn(4, 8)
    first, second = layer(v), layer(v)
    assert not torch.isclose(first, second).any()


def test_layer_noise_is_independent_per_coordinate_and_example() -> None:
    layer = PrivacyLayer("l1", 1.0, 8, seed=0)
    noise = layer(torch.ones(10_000, 8)) - layer.normalise(torch.ones(10_000, 8))
    correlation = torch.corrcoef(noise.T)
    off_diagonal = correlation - torch.eye(8)
    assert off_diagonal.abs().max() < 0.05
    assert noise[:, 0].unique().numel() == 10_000  # no scalar shared by a batch (DPNR code bug)


def test_example_normalisation_does_not_depend_on_its_batch() -> None:
    layer = PrivacyLayer("minmax", 1.0, 6, seed=0)
    batch = _random_vectors(32, 6, seed=4)
    assert torch.equal(layer.normalise(batch)[5], layer.normalise(batch[5:6])[0])


def test_noise_does_not_depend_on_the_data() -> None:
    a, b = _random_vectors(16, 6, seed=5), _random_vectors(16, 6, seed=6)
    layer_a = PrivacyLayer("minmax", 1.0, 6, seed=9)
    layer_b = PrivacyLayer("minmax", 1.0, 6, seed=9)
    noise_a, noise_b = layer_a(a) - layer_a.normalise(a), layer_b(b) - layer_b.normalise(b)
    assert torch.allclose(noise_a, noise_b, atol=1e-5)


def test_layer_has_no_parameters_or_batch_statistics() -> None:
    layer = PrivacyLayer("minmax", 1.0, 6, seed=0)
    assert list(layer.parameters()) == [] and list(layer.buffers()) == []


@pytest.mark.parametrize("epsilon", [0, -1.0, math.inf, float("nan")])
def test_non_positive_epsilon_is_rejected_with_its_value(epsilon: float) -> None:
    with pytest.raises(ValueError, match=f"epsilon.*{epsilon}"):
        PrivacyLayer("l1", epsilon, 4)


def test_unknown_layer_is_rejected_with_known_names() -> None:
    with pytest.raises(ValueError, match="'gaussian'.*minmax, minmax_calibrated, l1"):
        PrivacyLayer("gaussian", 1.0, 4)


def test_layer_rejects_wrong_dimension() -> None:
    with pytest.raises(ValueError, match="last dimension 4"):
        PrivacyLayer("l1", 1.0, 4, seed=0)(torch.zeros(2, 5))


def test_a_numpy_generator_draws_the_laplace_law_with_the_requested_scale() -> None:
    from scipy import stats

    noise = laplace_noise((200_000,), 1.7, np.random.default_rng(0), dtype=torch.float64).numpy()
    assert stats.kstest(noise, stats.laplace(scale=1.7).cdf).pvalue > 0.01
    assert np.abs(noise).mean() == pytest.approx(1.7, rel=0.01)
    assert (noise > 0).mean() == pytest.approx(0.5, abs=0.005)
    assert np.abs(noise).max() > 10 * 1.7  # float64 tails: P(|X| > 10·scale) = e^-10, ~9 of 200,000 draws


def test_a_seeded_numpy_generator_reproduces_the_noise_in_every_dtype() -> None:
    draw = lambda dtype: laplace_noise((64, 5), 0.3, np.random.default_rng(7), dtype=dtype)  # noqa: E731
    assert torch.equal(draw(torch.float32), draw(torch.float32))
    assert draw(torch.float32).dtype == torch.float32 and draw(torch.float64).dtype == torch.float64
    assert torch.equal(draw(torch.float64).float(), draw(torch.float32))


# --- the reference code's mechanisms, run as named non-DP variants -----------------------------------------------

def test_dpnr_code_layer_adds_one_scalar_per_example_which_subtracting_the_minimum_undoes() -> None:
    layer = PrivacyLayer("minmax_dpnr_code", 1.0, 8, generator=np.random.default_rng(0))
    v = _random_vectors(500, 8, seed=1)
    released = layer(v)
    noise = released - layer.normalise(v)
    assert torch.allclose(noise, noise[:, :1].expand_as(noise), atol=1e-6)  # one scalar per example
    assert noise[:, 0].unique().numel() == 500 and noise[:, 0].abs().mean().item() == pytest.approx(1.0, rel=0.15)
    recovered = released - released.min(dim=1, keepdim=True).values
    assert torch.allclose(recovered, layer.normalise(v), atol=1e-5)  # the release hides nothing


def test_cape_code_layer_adds_the_same_vector_to_every_example_and_pass() -> None:
    layer = PrivacyLayer("minmax_cape_code", 0.5, 64, generator=np.random.default_rng(0))
    v = _random_vectors(20, 64, seed=2)
    first, second = layer(v) - layer.normalise(v), layer(v) - layer.normalise(v)
    assert torch.equal(first, second) and torch.allclose(first, first[:1].expand_as(first))
    assert first[0].abs().mean().item() == pytest.approx(2.0, rel=0.3)  # Lap(1/ε), drawn once


@pytest.mark.parametrize("kind", ["minmax_dpnr_code", "minmax_cape_code"])
def test_the_reference_code_layers_are_accounted_as_not_dp(kind: str) -> None:
    from privtext.privacy.accounting import epsilon_accounting

    record = epsilon_accounting(kind, 0.05, 384)
    assert record["differentially_private"] is False and math.isinf(record["epsilon_effective"])
    assert record["epsilon_nominal"] == 0.05 and record["noise_scale"] == 20.0
