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
    training loop uses: ``zero_grad(set_to_none=True)`` and ``step()``."""

    def __init__(
        self, params: Iterable[torch.nn.Parameter], lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8, weight_decay: float = 0.0, decoupled_weight_decay: bool = False,
    ) -> None:
        self.params = [p for p in params]
        self.lr, self.betas, self.eps = float(lr), (float(betas[0]), float(betas[1])), float(eps)
        self.weight_decay, self.decoupled = float(weight_decay), decoupled_weight_decay
        self.steps = [0] * len(self.params)  # per parameter, as torch counts them (a parameter without grad waits)
        self.exp_avg = [torch.zeros_like(p, memory_format=torch.preserve_format) for p in self.params]
        self.exp_avg_sq = [torch.zeros_like(p, memory_format=torch.preserve_format) for p in self.params]

    def zero_grad(self, set_to_none: bool = True) -> None:
        for p in self.params:
            if set_to_none:
                p.grad = None
            elif p.grad is not None:
                p.grad.zero_()

    @torch.no_grad()
    def step(self) -> None:
        # Parameters that share a step count take their update together in torch._foreach_* calls (the
        # kernels torch.optim's foreach Adam calls; on the CPU they run the per-tensor kernels, so every value
        # is the same to the bit): a dozen calls per step instead of a dozen per parameter, whose Python
        # overhead was most of the optimiser's time for these small models.
        groups: dict[int, list[int]] = {}
        for i, param in enumerate(self.params):
            if param.grad is not None:
                self.steps[i] += 1
                groups.setdefault(self.steps[i], []).append(i)
        beta1, beta2 = self.betas
        for step_count, indices in groups.items():
            step = float(step_count)  # torch's float32 step counter reads back the same integer-valued float
            step_size = self.lr / (1 - beta1**step)
            bias_correction2_sqrt = (1 - beta2**step) ** 0.5
            params = [self.params[i] for i in indices]
            exp_avgs, exp_avg_sqs = [self.exp_avg[i] for i in indices], [self.exp_avg_sq[i] for i in indices]
            grads = [p.grad for p in params]
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


def adam(params: Iterable[torch.nn.Parameter], lr: float, weight_decay: float = 0.0) -> Adam:
    return Adam(params, lr=lr, weight_decay=weight_decay)


def adamw(params: Iterable[torch.nn.Parameter], lr: float, weight_decay: float = 0.0) -> Adam:
    return Adam(params, lr=lr, weight_decay=weight_decay, decoupled_weight_decay=True)
