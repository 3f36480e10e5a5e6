"""privtext's Adam/AdamW take exactly torch.optim's steps (they exist only to skip the torch._dynamo import)."""

import pytest
import torch

from privtext.standins.optim import Adam


def _train(make_optimizer, steps: int = 25) -> list[torch.Tensor]:
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(7, 16), torch.nn.ReLU(), torch.nn.Linear(16, 3))
    optimizer = make_optimizer(model.parameters())
    generator = torch.Generator().manual_seed(1)
    for _ in range(steps):
        x, y = torch.randn(32, 7, generator=generator), torch.randint(0, 3, (32,), generator=generator)
        optimizer.zero_grad(set_to_none=True)
        torch.nn.functional.cross_entropy(model(x), y).backward()
        optimizer.step()
    return [p.detach().clone() for p in model.parameters()]


@pytest.mark.parametrize("weight_decay", [0.0, 0.01])
@pytest.mark.parametrize("foreach", [False, True])
def test_adam_takes_torchs_steps_bit_for_bit(weight_decay, foreach):
    ours = _train(lambda ps: Adam(ps, lr=1e-3, weight_decay=weight_decay))
    torchs = _train(lambda ps: torch.optim.Adam(ps, lr=1e-3, weight_decay=weight_decay, foreach=foreach))
    assert all(torch.equal(a, b) for a, b in zip(ours, torchs))


@pytest.mark.parametrize("weight_decay", [0.0, 0.05])
def test_adamw_takes_torchs_steps_bit_for_bit(weight_decay):
    ours = _train(lambda ps: Adam(ps, lr=1e-3, weight_decay=weight_decay, decoupled_weight_decay=True))
    torchs = _train(lambda ps: torch.optim.AdamW(ps, lr=1e-3, weight_decay=weight_decay, foreach=True))
    assert all(torch.equal(a, b) for a, b in zip(ours, torchs))


def test_a_parameter_without_gradient_is_left_alone_and_keeps_its_own_step_count():
    used, unused = torch.nn.Parameter(torch.ones(3)), torch.nn.Parameter(torch.ones(3))
    optimizer = Adam([used, unused], lr=0.1)
    (used ** 2).sum().backward()
    optimizer.step()
    assert torch.equal(unused.detach(), torch.ones(3)) and optimizer.steps == [1, 0]
    assert torch.allclose(used.detach(), torch.full((3,), 0.9))  # first Adam step moves by lr·sign(grad)


@pytest.mark.parametrize("decoupled, weight_decay", [(False, 0.0), (False, 0.01), (True, 0.05)])
def test_the_flattened_optimizer_takes_torchs_steps_bit_for_bit(decoupled, weight_decay):
    ours = _train(lambda ps: Adam(ps, lr=1e-3, weight_decay=weight_decay, decoupled_weight_decay=decoupled,
                                  flatten=True))
    kind = torch.optim.AdamW if decoupled else torch.optim.Adam
    torchs = _train(lambda ps: kind(ps, lr=1e-3, weight_decay=weight_decay, foreach=True))
    assert all(torch.equal(a, b) for a, b in zip(ours, torchs))


def test_flattened_parameters_and_gradients_are_views_of_one_buffer_each():
    model = torch.nn.Sequential(torch.nn.Linear(4, 5), torch.nn.Linear(5, 2))
    before = [p.detach().clone() for p in model.parameters()]
    optimizer = Adam(model.parameters(), lr=0.1, flatten=True)
    model(torch.randn(3, 4)).sum().backward()
    flat = optimizer.flat
    assert flat is not None and flat["param"].numel() == sum(p.numel() for p in model.parameters())
    for p, value in zip(model.parameters(), before):
        assert torch.equal(p.detach(), value)  # the values moved into the buffer unchanged
        assert p.untyped_storage().data_ptr() == flat["param"].untyped_storage().data_ptr()
        assert p.grad.untyped_storage().data_ptr() == flat["grad"].untyped_storage().data_ptr()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    assert all(p.grad is not None and not p.grad.any() for p in model.parameters())  # zeroed in place


def test_a_flattened_parameter_without_gradient_waits_as_torchs_does():
    """A step where one parameter got no gradient takes the per-parameter path; the counts then differ and
    later steps stay on it: every value still equals torch.optim.Adam's."""
    def run(make_optimizer):
        torch.manual_seed(0)
        used, sometimes = torch.nn.Parameter(torch.randn(3)), torch.nn.Parameter(torch.randn(3))
        optimizer = make_optimizer([used, sometimes])
        for step in range(6):
            optimizer.zero_grad(set_to_none=True)
            loss = (used ** 2).sum() + ((sometimes ** 3).sum() if step % 3 == 0 else 0)
            loss.backward()
            optimizer.step()
        return used.detach().clone(), sometimes.detach().clone(), optimizer

    *ours, optimizer = run(lambda ps: Adam(ps, lr=0.1, flatten=True))
    *torchs, _ = run(lambda ps: torch.optim.Adam(ps, lr=0.1, foreach=True))
    assert optimizer.steps == [6, 2]
    assert all(torch.equal(a, b) for a, b in zip(ours, torchs))
