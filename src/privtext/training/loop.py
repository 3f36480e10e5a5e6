"""The generic training loop: seeded minibatches, per-epoch hook (λ schedule), dev-only model selection.

A trainable model is an ``nn.Module`` whose ``forward(x)`` returns task logits and which has
``training_loss(x, y, z) -> Tensor`` (everything the method optimises in one backward pass, e.g. the
adversaries behind a gradient reversal layer). With ``adversary_steps > 0`` the model must also have
``adversary_parameters()`` and ``adversary_loss(x, z)``: those parameters then get their own optimiser and
that many updates per batch before the joint step (which no longer moves them). The loop knows nothing
about privacy or adversaries.

It is the one loop of the package: heads on frozen features, and the text encoder fine-tuned end to end with a
method's head (``privtext.jobs.finetune``: the encoder is one more part of the model, its tokens the ``x``,
a fresh word-dropout draw each epoch, and DPNR's linear learning-rate decay and gradient clipping).
"""

from __future__ import annotations

import logging
import math
import statistics
import time
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import torch
import torch.nn.functional as F
from torch import nn

from privtext.standins.optim import adam, adamw

log = logging.getLogger(__name__)

SELECT_ON = ("accuracy", "loss")
LR_DECAY = ("none", "linear")
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
    # Fine-tuning a text encoder (DPNR's reference code): the learning rate decays linearly to 0 over the
    # planned steps after ``warmup_steps`` of linear warm-up, and the gradient norm is clipped.
    lr_decay: str = "none"
    warmup_steps: int = 0
    max_grad_norm: float | None = None
    eval_batch_size: int = EVAL_BATCH
    # One buffer for all parameters (privtext.standins.optim): for the small heads this loop mostly trains.
    flatten_parameters: bool = True

    def __post_init__(self) -> None:
        if self.optimizer not in OPTIMIZERS:
            raise ValueError(f"unknown optimizer {self.optimizer!r}; known: {', '.join(OPTIMIZERS)}")
        if self.select_on not in SELECT_ON:
            raise ValueError(f"select_on must be one of {SELECT_ON}, got {self.select_on!r}")
        if self.lr_decay not in LR_DECAY:
            raise ValueError(f"lr_decay must be one of {LR_DECAY}, got {self.lr_decay!r}")
        if self.max_grad_norm is not None and not self.max_grad_norm > 0:
            raise ValueError(f"max_grad_norm must be > 0 or None, got {self.max_grad_norm!r}")
        for name, low in (("epochs", 1), ("batch_size", 1), ("adversary_steps", 0), ("min_steps_per_epoch", 1),
                          ("min_epochs", 1), ("max_epochs_factor", 1), ("warmup_steps", 0), ("eval_batch_size", 1)):
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
        return self.epochs * self.max_epochs_factor if self.epochs >= CONVERGENCE_EPOCHS else self.epochs

    def required_steps(self, n: int) -> int:
        """The fewest optimiser steps the rule asks of a run on ``n`` rows: ``min_epochs`` full epochs."""
        return self.min_epochs * math.ceil(n / self.batch_size_for(n))


# The plateau criterion every run records (docs/claims.md): training stopped on its patience, or the mean dev
# accuracy of the last PLATEAU_WINDOW epochs exceeds that of the PLATEAU_WINDOW before by less than
# PLATEAU_TOLERANCE or by less than two standard errors of that difference. Means over windows, not the best
# epoch: a DP method's dev accuracy is scored through fresh noise every epoch, and a running maximum of a noisy
# curve keeps rising by chance. 0.002 is 2 dev examples on the smallest real dev split (887 Blog texts).
PLATEAU_WINDOW = 5
CONVERGENCE_EPOCHS = 2 * PLATEAU_WINDOW  # the fewest epochs whose two windows the rule can compare
PLATEAU_TOLERANCE = 0.002
CONVERGENCE_RULE = (f"stopped on patience, or the mean dev accuracy of the last {PLATEAU_WINDOW} epochs is less than "
                    f"max({PLATEAU_TOLERANCE:g}, 2 standard errors) above the mean of the {PLATEAU_WINDOW} before")


def converged(dev_accuracies: Sequence[float], stopped_early: bool = False) -> bool:
    """Whether a run's dev accuracy had plateaued (:data:`CONVERGENCE_RULE`); with fewer than
    :data:`CONVERGENCE_EPOCHS` epochs and no early stop it cannot be told, and counts as not converged."""
    if stopped_early:
        return True
    if len(dev_accuracies) < CONVERGENCE_EPOCHS:
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


def linear_schedule(step: int, total_steps: int, warmup_steps: int = 0) -> float:
    """Learning-rate factor at optimiser step ``step`` (0-based): linear warm-up, then linear decay to 0
    at ``total_steps`` (Hugging Face's ``get_linear_schedule_with_warmup``)."""
    if step < warmup_steps:
        return step / max(1, warmup_steps)
    return max(0.0, (total_steps - step) / max(1, total_steps - warmup_steps))


def batched_apply(fn: Callable[[torch.Tensor], torch.Tensor], x: torch.Tensor, batch: int = EVAL_BATCH) -> torch.Tensor:
    """``fn`` over ``x`` in chunks of ``batch`` rows, concatenated (no autograd)."""
    with torch.inference_mode():
        return torch.cat([fn(x[i:i + batch]) for i in range(0, len(x), batch)])


def evaluate(model: nn.Module, data: TensorSplit, with_loss: bool = True,
             batch: int = EVAL_BATCH) -> tuple[float | None, float]:
    """Task cross-entropy (None unless ``with_loss``) and accuracy of ``model`` on ``data`` in eval mode
    (privacy noise still fresh)."""
    model.eval()
    logits = batched_apply(model, data.x, batch)
    loss = F.cross_entropy(logits, data.y).item() if with_loss else None
    accuracy = (logits.argmax(dim=1) == data.y).double().mean().item()
    return loss, accuracy


def _snapshot(model: nn.Module) -> dict[str, torch.Tensor]:
    # Kept on the CPU: a GPU holds one model, not two (433 MB for a fine-tuned BERT-base).
    return {key: value.detach().to("cpu", copy=True) for key, value in model.state_dict().items()}


def train(
    model: nn.Module,
    train_data: TensorSplit | Callable[[int], TensorSplit],
    dev_data: TensorSplit,
    settings: TrainingSettings,
    *,
    generator: torch.Generator,
    epoch_hook: Callable[[int], dict[str, float]] | None = None,
) -> dict[str, Any]:
    """Minibatch training; after each epoch score dev, keep the best dev state, stop after ``patience``
    epochs without improvement (not before ``min_epochs``), and restore the best state. The batch is
    :meth:`TrainingSettings.batch_size_for` the training rows. Shuffling uses ``generator`` only.
    ``train_data`` is the training split, or a function giving each epoch's (same rows, e.g. a fresh
    word-dropout draw of the same texts). A run that has not converged after ``settings.epochs`` trains on up
    to :attr:`TrainingSettings.max_epochs`.

    Returns the history: ``epochs_run``, ``epochs_planned``, ``best_epoch`` (0-based), ``selected_on``, ``batch_size``,
    ``optimizer_steps``, ``required_steps``, ``converged`` (:func:`converged`) and per-epoch records.
    """
    split_of = train_data if callable(train_data) else None
    split = split_of(0) if split_of else train_data
    make_optimizer = OPTIMIZERS[settings.optimizer]
    inner: list[nn.Parameter] = []
    if settings.adversary_steps:
        inner = [p for p in model.adversary_parameters() if p.requires_grad]
    inner_ids = {id(p) for p in inner}
    parameters = [p for p in model.parameters() if p.requires_grad and id(p) not in inner_ids]
    # flatten: one Adam step is a few operations on whole buffers (privtext.standins.optim); these models own
    # their parameters, and each parameter goes to one of the two optimisers
    flatten = settings.flatten_parameters
    optimizer = make_optimizer(parameters, lr=settings.lr, weight_decay=settings.weight_decay, flatten=flatten)
    inner_optimizer = (make_optimizer(inner, lr=settings.lr, weight_decay=settings.weight_decay, flatten=flatten)
                       if inner else None)
    n = len(split)
    batch_size = settings.batch_size_for(n)
    planned_steps = settings.epochs * math.ceil(n / batch_size)  # where a linear decay reaches 0
    records: list[dict[str, float]] = []
    best_score, best_epoch, best_state, stale = -float("inf"), 0, _snapshot(model), 0
    steps, stopped_early = 0, False
    # dev loss is computed only when it selects the epoch: one fewer pass over dev logits per epoch
    with_loss = settings.select_on == "loss"
    shuffled_columns: list[torch.Tensor] = []
    for epoch in range(settings.max_epochs):
        if epoch >= settings.epochs and converged([r["dev_accuracy"] for r in records]):
            break  # the planned epochs are done and dev accuracy has plateaued
        started, cpu_started = time.perf_counter(), time.process_time()  # process CPU time: all threads
        record: dict[str, float] = {"epoch": epoch, **(epoch_hook(epoch) if epoch_hook else {})}
        if split_of and epoch:
            split = split_of(epoch)
        columns = [split.x, split.y, *split.z.values()]
        if [t.shape for t in shuffled_columns] != [t.shape for t in columns]:
            # row-major whatever the inputs' layout (empty_like would copy a column-major one)
            shuffled_columns = [torch.empty(t.shape, dtype=t.dtype, device=t.device) for t in columns]
        model.train()
        # Shuffled on the CPU generator whatever the device, so a seed gives the same batches everywhere.
        order = torch.randperm(n, generator=generator).to(split.y.device)
        # One gather per epoch into the same buffers; a batch is then a view of consecutive rows (the same rows
        # as order[i:j]). index_select is twice as fast as x[order] on the CPU, and into an existing buffer
        # it spares allocating (and faulting in) a fresh 10 MB array every epoch. The previous epoch's batches
        # are no longer referenced by then: each batch's graph is freed by its backward pass.
        for tensor, shuffled in zip(columns, shuffled_columns):
            torch.index_select(tensor, 0, order, out=shuffled)
        x_all, y_all, *z_columns = shuffled_columns
        z_all = dict(zip(split.z, z_columns))
        total = torch.zeros((), dtype=torch.float64, device=split.y.device)
        batches = 0
        for start in range(0, n, batch_size):
            stop = start + batch_size
            x, y, z = x_all[start:stop], y_all[start:stop], {k: v[start:stop] for k, v in z_all.items()}
            if settings.lr_decay == "linear":
                factor = linear_schedule(steps, planned_steps, settings.warmup_steps)
                for each in (optimizer, inner_optimizer):
                    if each is not None:
                        each.lr = settings.lr * factor
            for _ in range(settings.adversary_steps if inner_optimizer else 0):
                inner_optimizer.zero_grad(set_to_none=True)
                model.adversary_loss(x, z).backward()
                inner_optimizer.step()
            loss = model.training_loss(x, y, z)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            if settings.max_grad_norm is not None:
                nn.utils.clip_grad_norm_(parameters, settings.max_grad_norm)
            optimizer.step()
            steps += 1
            total += loss.detach()
            batches += 1
        trained, cpu_trained = time.perf_counter(), time.process_time()
        dev_loss, dev_accuracy = evaluate(model, dev_data, with_loss, settings.eval_batch_size)
        record.update(train_loss=total.item() / batches, dev_loss=dev_loss, dev_accuracy=dev_accuracy,
                      lr_end=optimizer.lr,
                      # what an epoch costs: the update pass and the dev pass, wall and CPU seconds
                      train_seconds=round(trained - started, 3), train_cpu_seconds=round(cpu_trained - cpu_started, 3),
                      dev_seconds=round(time.perf_counter() - trained, 3),
                      dev_cpu_seconds=round(time.process_time() - cpu_trained, 3))
        records.append(record)
        log.info("epoch %d: train loss %.4f, dev accuracy %.4f (%.1f s train, %.1f s dev)", epoch,
                  record["train_loss"], dev_accuracy, record["train_seconds"], record["dev_seconds"])
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
