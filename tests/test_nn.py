"""Building blocks: gradient reversal, λ schedules, MLPs, dropout, adversary ensembles."""

from __future__ import annotations

import math

import pytest
import torch
from torch import nn

from privtext.training.nn import Dropout, GradientReversal, MLPEnsemble, constant_lambda, lambda_schedule, mlp

torch.set_num_threads(1)


def test_gradient_reversal_forward_is_identity() -> None:
    x = torch.randn(3, 4)
    assert torch.equal(GradientReversal(2.5)(x), x)


@pytest.mark.parametrize("lambda_", [0.0, 0.3, 2.0])
def test_gradient_reversal_backward_multiplies_by_minus_lambda(lambda_: float) -> None:
    x = torch.randn(3, 4, requires_grad=True)
    upstream = torch.randn(3, 4)
    GradientReversal(lambda_)(x).backward(upstream)
    assert torch.allclose(x.grad, -lambda_ * upstream)


def test_lambda_schedule_is_zero_at_first_epoch() -> None:
    assert lambda_schedule(1.5, 0, 30, 7.0) == 0.0


def test_lambda_schedule_approaches_base() -> None:
    assert lambda_schedule(1.5, 30, 30, 10.0) == pytest.approx(1.5, rel=1e-3)
    values = [lambda_schedule(1.5, e, 30, 7.0) for e in range(30)]
    assert values == sorted(values) and values[-1] < 1.5


def test_lambda_schedule_gamma_seven_hand_value() -> None:
    assert lambda_schedule(2.0, 5, 10, 7.0) == pytest.approx(2.0 * (2.0 / (1.0 + math.exp(-3.5)) - 1.0))


def test_constant_lambda_ignores_epoch() -> None:
    assert constant_lambda(0.7, 0, 20) == constant_lambda(0.7, 19, 20) == 0.7


def test_mlp_hidden_layers_are_dropout_of_activation_of_linear() -> None:
    net = mlp([8, 5, 3, 2], 0.1, "relu")
    kinds = [type(layer) for layer in net]
    assert kinds == [nn.Linear, nn.ReLU, Dropout, nn.Linear, nn.ReLU, Dropout, nn.Linear]


def test_dropout_drops_at_its_rate_and_preserves_the_mean() -> None:
    torch.manual_seed(0)
    out = Dropout(0.1).train()(torch.ones(400_000))
    assert (out == 0).double().mean().item() == pytest.approx(0.1, abs=0.003)
    assert out.mean().item() == pytest.approx(1.0, abs=0.005)


def test_dropout_masks_follow_the_seed_and_are_fresh_on_every_call() -> None:
    def masks(seed: int) -> list[torch.Tensor]:
        torch.manual_seed(seed)
        first, second = Dropout(0.3).train(), Dropout(0.3).train()
        x = torch.ones(2000, dtype=torch.float64)
        return [first(x) == 0, first(x) == 0, second(x) == 0]

    a, b = masks(4), masks(4)
    assert all(torch.equal(m, n) for m, n in zip(a, b))
    assert not torch.equal(a[0], a[1]) and not torch.equal(a[0], a[2])  # fresh bits on every call
    assert not torch.equal(a[0], masks(5)[0])


def test_dropout_is_identity_in_eval_mode() -> None:
    x = torch.randn(10)
    assert torch.equal(Dropout(0.5).eval()(x), x)


def test_ensemble_members_are_independent() -> None:
    ensemble = MLPEnsemble([4, 6, 2], k=3, dropout=0.0)
    logits = ensemble(torch.randn(5, 4))
    assert logits.shape == (5, 3, 2)
    logits[:, 1].sum().backward()
    assert ensemble.weights[0].grad[0].abs().sum() == 0 and ensemble.weights[0].grad[1].abs().sum() > 0
