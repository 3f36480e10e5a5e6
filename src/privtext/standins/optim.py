"""Adam and AdamW (Kingma & Ba 2015; Loshchilov & Hutter 2019) for the small models of this benchmark.

Why not ``torch.optim``: building any ``torch.optim`` optimiser and its first ``step()`` import
``torch._dynamo`` (``Optimizer.add_param_group`` and ``step`` are wrapped by ``torch._disable_dynamo``, which
imports it on first call), about 0.7 s of every train and attack job here, and torch offers no supported
switch that skips the import (``TORCHDYNAMO_DISABLE`` still imports it). These few lines are the same
update as ``torch.optim.Adam``/``AdamW`` with ``amsgrad=False`` on CPU, operation for operation;
``tests/test_optim.py`` holds them equal to torch's to the last bit.
"""

from __future__ import annotations

from typing import Iterable

import torch


class Adam:
    """Adam; ``decoupled_weight_decay=True`` is AdamW. The interface is the part of ``torch.optim`` the
    training loop uses: ``zero_grad(set_to_none=True)`` and ``step()``.

    ``flatten=True`` (the frozen-feature training loop's choice) makes the parameters, their gradients and
    Adam's two moments views of four flat buffers, so that a step in which every parameter got a gradient is
    seven operations on whole buffers instead of seven per parameter: 0.1 against 0.45 ms a step for the
    FEDERATE model here, the same values to the bit. The parameters' data is replaced by views, so give each
    parameter to one flattening optimizer only. Gradients are then zeroed in place rather than set to None;
    which parameters got one since is tracked by hooks, and a step in which some did not (or whose
    parameters have taken different numbers of steps) takes the per-parameter path, as torch would.
    """

    def __init__(
        self, params: Iterable[torch.nn.Parameter], lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8, weight_decay: float = 0.0, decoupled_weight_decay: bool = False, flatten: bool = False,
    ) -> None:
        self.params = [p for p in params]
        self.lr, self.betas, self.eps = float(lr), (float(betas[0]), float(betas[1])), float(eps)
        self.weight_decay, self.decoupled = float(weight_decay), decoupled_weight_decay
        self.steps = [0] * len(self.params)  # per parameter, as torch counts them (a parameter without grad waits)
        self.flat: dict[str, torch.Tensor] | None = None
        if flatten and _flattenable(self.params):
            self._flatten()
        else:
            self.exp_avg = [torch.zeros_like(p, memory_format=torch.preserve_format) for p in self.params]
            self.exp_avg_sq = [torch.zeros_like(p, memory_format=torch.preserve_format) for p in self.params]

    def _flatten(self) -> None:
        with torch.no_grad():
            param = torch.cat([p.detach().reshape(-1) for p in self.params])
            grad = torch.cat([(p.grad if p.grad is not None else torch.zeros_like(p)).reshape(-1) for p in self.params])
        self.flat = {"param": param, "grad": grad, "exp_avg": torch.zeros_like(param),
                     "exp_avg_sq": torch.zeros_like(param)}
        views: dict[str, list[torch.Tensor]] = {name: [] for name in self.flat}
        start = 0
        for p in self.params:
            stop = start + p.numel()
            for name, buffer in self.flat.items():
                views[name].append(buffer[start:stop].view_as(p))
            start = stop
        self.got_grad = [p.grad is not None for p in self.params]
        for i, p in enumerate(self.params):
            p.data, p.grad = views["param"][i], views["grad"][i]
            p.register_post_accumulate_grad_hook(lambda _, i=i: self.got_grad.__setitem__(i, True))
        self.exp_avg, self.exp_avg_sq = views["exp_avg"], views["exp_avg_sq"]

    def zero_grad(self, set_to_none: bool = True) -> None:
        if self.flat is not None:  # the gradients are views of one buffer: zero it, whatever set_to_none says
            self.flat["grad"].zero_()
            self.got_grad = [False] * len(self.params)
            return
        for p in self.params:
            if set_to_none:
                p.grad = None
            elif p.grad is not None:
                p.grad.zero_()

    @torch.no_grad()
    def step(self) -> None:
        if self.flat is not None and all(self.got_grad) and len(set(self.steps)) == 1:
            self.steps = [self.steps[0] + 1] * len(self.params)
            self._update([self.flat["param"]], [self.flat["grad"]], [self.flat["exp_avg"]],
                         [self.flat["exp_avg_sq"]], self.steps[0])
            return
        # Parameters that share a step count take their update together in torch._foreach_* calls (the
        # kernels torch.optim's foreach Adam calls; on the CPU they run the per-tensor kernels, so every value
        # is the same to the bit): a dozen calls per step instead of a dozen per parameter, whose Python
        # overhead was most of the optimiser's time for these small models.
        groups: dict[int, list[int]] = {}
        for i, param in enumerate(self.params):
            if (self.got_grad[i] if self.flat is not None else param.grad is not None):
                self.steps[i] += 1
                groups.setdefault(self.steps[i], []).append(i)
        for step_count, indices in groups.items():
            params = [self.params[i] for i in indices]
            self._update(params, [p.grad for p in params], [self.exp_avg[i] for i in indices],
                         [self.exp_avg_sq[i] for i in indices], step_count)

    def _update(self, params: list[torch.Tensor], grads: list[torch.Tensor], exp_avgs: list[torch.Tensor],
                exp_avg_sqs: list[torch.Tensor], step_count: int) -> None:
        """One Adam step of tensors that share a step count."""
        beta1, beta2 = self.betas
        step = float(step_count)  # torch's float32 step counter reads back the same integer-valued float
        step_size = self.lr / (1 - beta1**step)
        bias_correction2_sqrt = (1 - beta2**step) ** 0.5
        if self.weight_decay != 0:
            if self.decoupled:
                torch._foreach_mul_(params, 1 - self.lr * self.weight_decay)
            else:
                grads = torch._foreach_add(grads, params, alpha=self.weight_decay)
        torch._foreach_lerp_(exp_avgs, grads, 1 - beta1)
        torch._foreach_mul_(exp_avg_sqs, beta2)
        torch._foreach_addcmul_(exp_avg_sqs, grads, grads, value=1 - beta2)
        denoms = torch._foreach_sqrt(exp_avg_sqs)
        torch._foreach_div_(denoms, bias_correction2_sqrt)
        torch._foreach_add_(denoms, self.eps)
        torch._foreach_addcdiv_(params, exp_avgs, denoms, value=-step_size)


def _flattenable(params: list[torch.nn.Parameter]) -> bool:
    """Two or more dense parameters of one dtype on one device (anything else keeps the per-parameter path)."""
    return (len(params) > 1 and len({(p.dtype, p.device) for p in params}) == 1
            and all(p.layout == torch.strided and (p.grad is None or p.grad.layout == torch.strided) for p in params))


def adam(params: Iterable[torch.nn.Parameter], lr: float, weight_decay: float = 0.0, flatten: bool = False) -> Adam:
    return Adam(params, lr=lr, weight_decay=weight_decay, flatten=flatten)


def adamw(params: Iterable[torch.nn.Parameter], lr: float, weight_decay: float = 0.0, flatten: bool = False) -> Adam:
    return Adam(params, lr=lr, weight_decay=weight_decay, decoupled_weight_decay=True, flatten=flatten)
