"""The generic training loop: seeded minibatches, per-epoch hook (λ schedule), dev-only model selection.

A trainable model is an ``nn.Module`` whose ``forward(x)`` returns task logits and which has
``training_loss(x, y, z) -> Tensor`` (everything the method optimises in one backward pass, e.g. the
adversaries behind a gradient reversal layer). With ``adversary_steps > 0`` the model must also have
``adversary_parameters()`` and ``adversary_loss(x, z)``: those parameters then get their own optimiser and
that many updates per batch before the joint step (which no longer moves them). The loop knows nothing
about privacy or adversaries.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import torch
import torch.nn.functional as F
from torch import nn

from privtext.standins.optim import adam, adamw

SELECT_ON = ("accuracy", "loss")
# privtext.standins.optim: the same updates as torch.optim.Adam/AdamW without importing torch._dynamo (0.7 s a job).
OPTIMIZERS = {"adam": adam, "adamw": adamw}
EVAL_BATCH = 8192


@dataclass
class TensorSplit:
    """One split as tensors: features ``x`` [n, d], labels ``y`` [n], private attributes ``z``."""

    x: torch.Tensor
    y: torch.Tensor
    z: dict[str, torch.Tensor]

    def __len__(self) -> int:
        return len(self.y)

    def to(self, device: torch.device) -> "TensorSplit":
        """The same split on ``device`` (the very same tensors when they are already there)."""
        return TensorSplit(self.x.to(device), self.y.to(device), {k: v.to(device) for k, v in self.z.items()})


@dataclass(frozen=True)
class TrainingSettings:
    epochs: int
    batch_size: int
    lr: float
    optimizer: str = "adam"
    weight_decay: float = 0.0
    patience: int | None = None  # None: train all epochs, then restore the best dev epoch
    select_on: str = "accuracy"  # dev accuracy (higher is better) or dev task loss (lower is better)
    adversary_steps: int = 0  # 0: adversaries move only in the joint step; k: k best-response updates first
    # The training rule (docs/claims.md): every epoch takes at least this many optimiser steps (the batch shrinks
    # to fit the rows a run sees), and patience may stop a run only after ``min_epochs``.
    min_steps_per_epoch: int = 50
    min_epochs: int = 10
    # ... and a run whose dev accuracy has not plateaued (:func:`converged`) after its ``epochs`` trains on, one
    # epoch at a time, until it has or until ``max_epochs_factor`` × ``epochs``. 1: never. A budget shorter
    # than two plateau windows cannot be judged, so it is never extended.
    max_epochs_factor: int = 1

    def __post_init__(self) -> None:
        if self.optimizer not in OPTIMIZERS:
            raise ValueError(f"unknown optimizer {self.optimizer!r}; known: {', '.join(OPTIMIZERS)}")
        if self.select_on not in SELECT_ON:
            raise ValueError(f"select_on must be one of {SELECT_ON}, got {self.select_on!r}")
        for name, low in (("epochs", 1), ("batch_size", 1), ("adversary_steps", 0), ("min_steps_per_epoch", 1),
                          ("min_epochs", 1), ("max_epochs_factor", 1)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise ValueError(f"{name} must be an integer >= {low}, got {value!r}")
        if self.patience is not None and (not isinstance(self.patience, int) or self.patience < 1):
            raise ValueError(f"patience must be a positive integer or None, got {self.patience!r}")
        if not self.lr > 0:
            raise ValueError(f"lr must be > 0, got {self.lr!r}")


    def batch_size_for(self, n: int) -> int:
        """The batch a run on ``n`` training rows uses: the method's own, shrunk so that an epoch takes at least
        ``min_steps_per_epoch`` optimiser steps. FEDERATE's batch of 2,000 was chosen for 100k+ rows; on the
        10,000 rows a CPU study sees it would give 5 steps an epoch, 150 in all."""
        return max(1, min(self.batch_size, math.ceil(n / self.min_steps_per_epoch)))

    @property
    def max_epochs(self) -> int:
        """The most epochs a run may take: ``epochs``, extended while it has not converged (see above)."""
        return self.epochs * self.max_epochs_factor if self.epochs >= 2 * PLATEAU_WINDOW else self.epochs

    def required_steps(self, n: int) -> int:
        """The fewest optimiser steps the rule asks of a run on ``n`` rows: ``min_epochs`` full epochs."""
        return self.min_epochs * math.ceil(n / self.batch_size_for(n))


# The plateau criterion every run records (docs/claims.md): training stopped on its patience, or the mean dev
# accuracy of the last PLATEAU_WINDOW epochs exceeds that of the PLATEAU_WINDOW before by less than
# PLATEAU_TOLERANCE or by less than two standard errors of that difference. Means over windows, not the best
# epoch: a DP method's dev accuracy is scored through fresh noise every epoch, and a running maximum of a noisy
# curve keeps rising by chance. 0.002 is 2 dev examples on the smallest real dev split (887 Blog texts).
PLATEAU_WINDOW = 5
PLATEAU_TOLERANCE = 0.002
CONVERGENCE_RULE = (f"stopped on patience, or the mean dev accuracy of the last {PLATEAU_WINDOW} epochs is less than "
                    f"max({PLATEAU_TOLERANCE:g}, 2 standard errors) above the mean of the {PLATEAU_WINDOW} before")


def converged(dev_accuracies: Sequence[float], stopped_early: bool = False) -> bool:
    """Whether a run's dev accuracy had plateaued (:data:`CONVERGENCE_RULE`); with fewer than
    ``2 * PLATEAU_WINDOW`` epochs and no early stop it cannot be told, and counts as not converged."""
    if stopped_early:
        return True
    if len(dev_accuracies) < 2 * PLATEAU_WINDOW:
        return False
    last = [float(a) for a in dev_accuracies[-PLATEAU_WINDOW:]]
    before = [float(a) for a in dev_accuracies[-2 * PLATEAU_WINDOW:-PLATEAU_WINDOW]]
    gain = statistics.fmean(last) - statistics.fmean(before)
    se = math.sqrt((statistics.variance(last) + statistics.variance(before)) / PLATEAU_WINDOW)
    return gain < max(PLATEAU_TOLERANCE, 2 * se)


class TaskClassifier(nn.Module):
    """A plain classifier in the shape :func:`train` expects, trained on the task loss only (INLP's head on
    projected representations, the torch MLP attacker)."""

    def __init__(self, net: nn.Module) -> None:
        super().__init__()
        self.net = net

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x)

    def training_loss(self, x: torch.Tensor, y: torch.Tensor, z: dict[str, torch.Tensor]) -> torch.Tensor:
        return F.cross_entropy(self.net(x), y)


def batched_apply(fn: Callable[[torch.Tensor], torch.Tensor], x: torch.Tensor) -> torch.Tensor:
    """``fn`` over ``x`` in large chunks, concatenated (no autograd)."""
    with torch.inference_mode():
        return torch.cat([fn(x[i:i + EVAL_BATCH]) for i in range(0, len(x), EVAL_BATCH)])


def evaluate(model: nn.Module, data: TensorSplit, with_loss: bool = True) -> tuple[float | None, float]:
    """Task cross-entropy (None unless ``with_loss``) and accuracy of ``model`` on ``data`` in eval mode
    (privacy noise still fresh)."""
    model.eval()
    logits = batched_apply(model, data.x)
    loss = F.cross_entropy(logits, data.y).item() if with_loss else None
    accuracy = (logits.argmax(dim=1) == data.y).double().mean().item()
    return loss, accuracy


def _snapshot(model: nn.Module) -> dict[str, torch.Tensor]:
    return {key: value.detach().clone() for key, value in model.state_dict().items()}


def train(
    model: nn.Module,
    train_data: TensorSplit,
    dev_data: TensorSplit,
    settings: TrainingSettings,
    *,
    generator: torch.Generator,
    epoch_hook: Callable[[int], dict[str, float]] | None = None,
) -> dict[str, Any]:
    """Minibatch training; after each epoch score dev, keep the best dev state, stop after ``patience``
    epochs without improvement (not before ``min_epochs``), and restore the best state. The batch is
    :meth:`TrainingSettings.batch_size_for` the training rows. Shuffling uses ``generator`` only.

    A run that has not converged after ``settings.epochs`` trains on up to :attr:`TrainingSettings.max_epochs`.

    Returns the history: ``epochs_run``, ``epochs_planned``, ``best_epoch`` (0-based), ``selected_on``, ``batch_size``,
    ``optimizer_steps``, ``required_steps``, ``converged`` (:func:`converged`) and per-epoch records.
    """
    make_optimizer = OPTIMIZERS[settings.optimizer]
    inner: list[nn.Parameter] = []
    if settings.adversary_steps:
        inner = [p for p in model.adversary_parameters() if p.requires_grad]
    inner_ids = {id(p) for p in inner}
    parameters = [p for p in model.parameters() if p.requires_grad and id(p) not in inner_ids]
    # flatten: one Adam step is a few operations on whole buffers (privtext.standins.optim); these models own their
    # parameters, and each parameter goes to one of the two optimisers
    optimizer = make_optimizer(parameters, lr=settings.lr, weight_decay=settings.weight_decay, flatten=True)
    inner_optimizer = (make_optimizer(inner, lr=settings.lr, weight_decay=settings.weight_decay, flatten=True)
                       if inner else None)
    n = len(train_data)
    batch_size = settings.batch_size_for(n)
    records: list[dict[str, float]] = []
    best_score, best_epoch, best_state, stale = -float("inf"), 0, _snapshot(model), 0
    steps, stopped_early = 0, False
    # dev loss is computed only when it selects the epoch: one fewer pass over dev logits per epoch
    with_loss = settings.select_on == "loss"
    columns = [train_data.x, train_data.y, *train_data.z.values()]
    # row-major whatever the inputs' layout (empty_like would copy a column-major one)
    shuffled_columns = [torch.empty(t.shape, dtype=t.dtype, device=t.device) for t in columns]
    for epoch in range(settings.max_epochs):
        if epoch >= settings.epochs and converged([r["dev_accuracy"] for r in records]):
            break  # the planned epochs are done and dev accuracy has plateaued
        record: dict[str, float] = {"epoch": epoch, **(epoch_hook(epoch) if epoch_hook else {})}
        model.train()
        # Shuffled on the CPU generator whatever the device, so a seed gives the same batches everywhere.
        order = torch.randperm(n, generator=generator).to(train_data.y.device)
        # One gather per epoch into the same buffers; a batch is then a view of consecutive rows (the same rows
        # as order[i:j]). index_select is twice as fast as x[order] on the CPU, and into an existing buffer
        # it spares allocating (and faulting in) a fresh 10 MB array every epoch. The previous epoch's batches
        # are no longer referenced by then: each batch's graph is freed by its backward pass.
        for tensor, shuffled in zip(columns, shuffled_columns):
            torch.index_select(tensor, 0, order, out=shuffled)
        x_all, y_all, *z_columns = shuffled_columns
        z_all = dict(zip(train_data.z, z_columns))
        total = torch.zeros((), dtype=torch.float64, device=train_data.y.device)
        batches = 0
        for start in range(0, n, batch_size):
            stop = start + batch_size
            x, y, z = x_all[start:stop], y_all[start:stop], {k: v[start:stop] for k, v in z_all.items()}
            for _ in range(settings.adversary_steps if inner_optimizer else 0):
                inner_optimizer.zero_grad(set_to_none=True)
                model.adversary_loss(x, z).backward()
                inner_optimizer.step()
            loss = model.training_loss(x, y, z)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            steps += 1
            total += loss.detach()
            batches += 1
        dev_loss, dev_accuracy = evaluate(model, dev_data, with_loss)
        record.update(train_loss=total.item() / batches, dev_loss=dev_loss, dev_accuracy=dev_accuracy)
        records.append(record)
        score = dev_accuracy if settings.select_on == "accuracy" else -dev_loss
        if score > best_score:  # first best epoch wins ties
            best_score, best_epoch, best_state, stale = score, epoch, _snapshot(model), 0
        else:
            stale += 1
            if (settings.patience is not None and stale >= settings.patience
                    and epoch + 1 >= min(settings.min_epochs, settings.epochs)):
                stopped_early = True
                break
    model.load_state_dict(best_state)
    model.eval()
    return {
        "epochs_run": len(records),
        "epochs_planned": settings.epochs,
        "best_epoch": best_epoch,
        "selected_on": f"dev_{settings.select_on}",
        "best_dev_accuracy": records[best_epoch]["dev_accuracy"],
        "best_dev_loss": records[best_epoch]["dev_loss"],
        "batch_size": batch_size,
        "optimizer_steps": steps,
        "required_steps": settings.required_steps(n),
        "converged": converged([r["dev_accuracy"] for r in records], stopped_early),
        "convergence_rule": CONVERGENCE_RULE,
        "epochs": records,
    }
