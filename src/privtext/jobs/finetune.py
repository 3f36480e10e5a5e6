"""End-to-end fine-tuning (DPNR Algorithm 1): the text encoder trains together with a method's head.

The model is the shared architecture of docs/methods.md, "Methods" with the transformer in front of it instead of frozen
features: text → word dropout μ → tokens → transformer → pooling → ``E`` → privacy layer (fresh Laplace
noise on every pass, training included) → ``C``, plus the adversaries behind the gradient reversal layer for
adversarial methods. The head is the method's own :class:`~privtext.methods.base.RepresentationModel`, built
by its :class:`~privtext.methods.base.NeuralMethod`; once trained, the fine-tuned transformer extracts
features of every split and that method releases and predicts from them exactly as on frozen features.

Optimisation is DPNR's reference code (docs/methods.md, "The reference code's departures"): AdamW lr 5e-5 over all weights, batch 64, 4 epochs, max
length 128, linear decay to 0 without warm-up (Hugging Face's ``get_linear_schedule_with_warmup`` with its
default of 0 warm-up steps), gradient norm clipped at 1.0; the epoch kept is the best on dev.
Word dropout is drawn afresh every epoch in training (Algorithm 1 masks inside the loop) and, for dev and
the release, with the point's seed: the very draw the frozen pipeline's extraction uses (docs/methods.md, "Word dropout").
"""

from __future__ import annotations

import contextlib
import logging
import math
import time
from dataclasses import asdict, dataclass
from typing import Any, Callable, Mapping, Sequence

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from privtext.runtime.devices import autocast
from privtext.encoding.encoders import LoadedEncoder, pool_output  # the same pooling as frozen extraction
from privtext.methods.base import NeuralMethod, RepresentationModel
from privtext.standins.optim import adamw
from privtext.training.loop import CONVERGENCE_RULE, converged
from privtext.encoding.word_dropout import DEFAULT_MASK_TOKEN, apply_word_dropout

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class FinetuneSettings:
    """How the encoder is fine-tuned; the defaults are DPNR's (docs/methods.md, "The reference code's departures")."""

    lr: float = 5e-5
    epochs: int = 4
    batch_size: int = 64
    max_length: int = 128
    weight_decay: float = 0.0
    warmup_steps: int = 0
    max_grad_norm: float | None = 1.0
    eval_batch_size: int = 64
    pooling: str = "mean"

    def __post_init__(self) -> None:
        for name in ("epochs", "batch_size", "max_length", "eval_batch_size"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"finetune.{name} must be a positive integer, got {value!r}")
        if not self.lr > 0 or self.weight_decay < 0 or self.warmup_steps < 0:
            raise ValueError(f"finetune: lr must be > 0 and weight_decay, warmup_steps >= 0, got {self}")
        if self.max_grad_norm is not None and not self.max_grad_norm > 0:
            raise ValueError(f"finetune.max_grad_norm must be > 0 or None, got {self.max_grad_norm!r}")

    @classmethod
    def from_mapping(cls, values: Mapping[str, Any]) -> "FinetuneSettings":
        """The settings named in ``values`` (other keys, e.g. the encoder's name, are ignored)."""
        return cls(**{k: values[k] for k in cls.__dataclass_fields__ if k in values})

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def linear_schedule(step: int, total_steps: int, warmup_steps: int = 0) -> float:
    """Learning-rate factor at optimiser step ``step`` (0-based): linear warm-up, then linear decay to 0
    at ``total_steps`` (Hugging Face's ``get_linear_schedule_with_warmup``)."""
    if step < warmup_steps:
        return step / max(1, warmup_steps)
    return max(0.0, (total_steps - step) / max(1, total_steps - warmup_steps))


class Tokens:
    """Tokenised texts as one int64 tensor [n, 2, L] (input ids, attention mask), padded on the right to the
    longest text, so that a row gather keeps ids and mask together; batches are trimmed to their own longest."""

    def __init__(self, loaded: LoadedEncoder, texts: Sequence[str], max_length: int) -> None:
        tokenizer = loaded.tokenizer
        if tokenizer.padding_side != "right":
            raise ValueError(f"encoder '{loaded.spec.name}': fine-tuning expects right padding")
        encoded = tokenizer(list(texts), truncation=True, max_length=max_length, padding="longest",
                            return_tensors="pt")
        self.packed = torch.stack([encoded["input_ids"], encoded["attention_mask"]], dim=1).long()

    def __len__(self) -> int:
        return len(self.packed)


def _mask_token(loaded: LoadedEncoder) -> str:
    return getattr(loaded.tokenizer, "mask_token", None) or DEFAULT_MASK_TOKEN


def dropped_tokens(
    loaded: LoadedEncoder, texts: Sequence[str], ids: Sequence[object], mu: float, seed: int,
    sensitive_words: Sequence[str], max_length: int,
) -> Tokens:
    """Word dropout μ with ``seed`` (docs/methods.md, "Word dropout"; the tokenizer's own mask token), then tokenisation."""
    dropped, _ = apply_word_dropout(texts, ids, mu, seed, sensitive_words, _mask_token(loaded))
    return Tokens(loaded, dropped, max_length)


def epoch_seed(dropout_seed: int, epoch: int) -> int:
    """Seed of one training epoch's word-dropout draw: fresh every epoch, fixed by the run's seed."""
    return int(np.random.SeedSequence([int(dropout_seed), int(epoch)]).generate_state(1)[0])


class FinetunedModel(nn.Module):
    """Transformer + pooling in front of a method's head: ``head(pool(T(tokens)))``."""

    def __init__(self, transformer: nn.Module, head: RepresentationModel, pooling: str, name: str) -> None:
        super().__init__()
        self.transformer, self.head, self.pooling, self.name = transformer, head, pooling, name

    def features(self, packed: torch.Tensor) -> torch.Tensor:
        """Pooled transformer output ``h`` [n, hidden] of packed tokens [n, 2, L] (batch trimmed to its
        longest text; autocast on CUDA at inference only, training stays fp32)."""
        longest = max(int(packed[:, 1].sum(dim=1).max()), 1)
        ids, mask = packed[:, 0, :longest], packed[:, 1, :longest]
        device = ids.device
        with contextlib.nullcontext() if self.training else autocast(device):
            output = self.transformer(input_ids=ids, attention_mask=mask)
        return pool_output(output, mask, self.pooling, self.name)

    def forward(self, packed: torch.Tensor) -> torch.Tensor:
        return self.head(self.features(packed))

    def training_loss(self, packed: torch.Tensor, y: torch.Tensor, z: Mapping[str, torch.Tensor]) -> torch.Tensor:
        return self.head.training_loss(self.features(packed), y, z)


def encode(model: FinetunedModel, tokens: Tokens, device: torch.device, batch_size: int) -> np.ndarray:
    """Features ``h`` of every text in eval mode (no noise: that is the head's), float32 [n, hidden], in
    input order; batches are formed longest first, so short texts are not padded to long ones."""
    model.eval()
    lengths = tokens.packed[:, 1].sum(dim=1)
    order = torch.argsort(-lengths, stable=True)
    out = torch.empty((len(tokens), model.transformer.config.hidden_size), dtype=torch.float32)
    with torch.inference_mode():
        for first in range(0, len(tokens), batch_size):
            rows = order[first:first + batch_size]
            out[rows] = model.features(tokens.packed[rows].to(device)).float().cpu()
    return out.numpy()


def head_accuracy(method: NeuralMethod, features: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """Dev accuracy and task cross-entropy of the method's head on ``features`` (fresh noise, eval mode)."""
    assert method.model is not None
    method.model.eval()
    logits = method.apply(method.model, torch.from_numpy(features))
    labels = torch.tensor(y, dtype=torch.int64)
    return float((logits.argmax(dim=1) == labels).double().mean()), float(F.cross_entropy(logits, labels))


def fit_end_to_end(
    method: NeuralMethod,
    model: FinetunedModel,
    train_tokens: Callable[[int], Tokens],
    y: np.ndarray,
    z: Mapping[str, np.ndarray],
    dev_tokens: Tokens,
    dev_y: np.ndarray,
    settings: FinetuneSettings,
    *,
    generator: torch.Generator,
) -> dict[str, Any]:
    """Train all of ``model`` on ``train_tokens(epoch)`` (word dropout drawn per epoch) with AdamW and a
    linear schedule; after each epoch score dev with the head's fresh noise, keep the best dev epoch (dev
    only, never test) and restore it. Adversary-only updates (``adversary_steps``) as in
    :func:`privtext.training.loop.train`. Returns the history."""
    device = method.device
    inner = [p for p in model.head.adversary_parameters()] if method.settings.adversary_steps else []
    inner_ids = {id(p) for p in inner}
    parameters = [p for p in model.parameters() if p.requires_grad and id(p) not in inner_ids]
    optimizer = adamw(parameters, lr=settings.lr, weight_decay=settings.weight_decay)
    inner_optimizer = adamw(inner, lr=settings.lr, weight_decay=settings.weight_decay) if inner else None
    labels = torch.tensor(y, dtype=torch.int64, device=device)  # a copy: pandas' arrays are read-only
    private = {a: torch.tensor(v, dtype=torch.int64, device=device) for a, v in z.items()}
    n = len(labels)
    total_steps = settings.epochs * math.ceil(n / settings.batch_size)
    step, records = 0, []
    best_score, best_epoch, best_state = -math.inf, 0, None
    select_on = method.settings.select_on
    for epoch in range(settings.epochs):
        started, cpu_started = time.perf_counter(), time.process_time()  # process CPU time: all threads
        record: dict[str, Any] = {"epoch": epoch, **method.epoch_hook(epoch)}
        packed = train_tokens(epoch).packed
        order = torch.randperm(n, generator=generator)  # CPU generator: the same batches on every device
        model.train()
        total, batches = 0.0, 0
        for first in range(0, n, settings.batch_size):
            rows = order[first:first + settings.batch_size]
            batch, y_batch = packed[rows].to(device), labels[rows.to(device)]
            z_batch = {a: v[rows.to(device)] for a, v in private.items()}
            for group in (optimizer, inner_optimizer):
                if group is not None:
                    group.lr = settings.lr * linear_schedule(step, total_steps, settings.warmup_steps)
            if inner_optimizer is not None:
                with torch.no_grad():
                    h = model.features(batch)
                for _ in range(method.settings.adversary_steps):
                    inner_optimizer.zero_grad(set_to_none=True)
                    model.head.adversary_loss(h, z_batch).backward()
                    inner_optimizer.step()
            loss = model.training_loss(batch, y_batch, z_batch)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            if settings.max_grad_norm is not None:
                nn.utils.clip_grad_norm_(parameters, settings.max_grad_norm)
            optimizer.step()
            step += 1
            total += float(loss.detach())
            batches += 1
        trained, cpu_trained = time.perf_counter(), time.process_time()
        dev_accuracy, dev_loss = head_accuracy(method, encode(model, dev_tokens, device, settings.eval_batch_size), dev_y)
        record.update(train_loss=total / batches, dev_loss=dev_loss, dev_accuracy=dev_accuracy, lr_end=optimizer.lr,
                      # what an epoch costs: the update pass (n examples) and the dev pass, wall and CPU seconds
                      train_seconds=round(trained - started, 3), train_cpu_seconds=round(cpu_trained - cpu_started, 3),
                      dev_seconds=round(time.perf_counter() - trained, 3),
                      dev_cpu_seconds=round(time.process_time() - cpu_trained, 3))
        records.append(record)
        log.info("fine-tuning epoch %d: train loss %.4f, dev accuracy %.4f (%.1f s train, %.1f s dev)", epoch,
                 record["train_loss"], dev_accuracy, record["train_seconds"], record["dev_seconds"])
        score = dev_accuracy if select_on == "accuracy" else -dev_loss
        if score > best_score:  # first best epoch wins ties
            best_score, best_epoch = score, epoch
            # Kept on the CPU: a GPU holds one model, not two (433 MB for BERT-base).
            best_state = {k: v.detach().to("cpu", copy=True) for k, v in model.state_dict().items()}
    assert best_state is not None
    model.load_state_dict(best_state)
    model.eval()
    return {
        "epochs_run": len(records), "best_epoch": best_epoch, "selected_on": f"dev_{select_on}",
        "best_dev_accuracy": records[best_epoch]["dev_accuracy"], "best_dev_loss": records[best_epoch]["dev_loss"],
        "optimizer_steps": step, "converged": converged([r["dev_accuracy"] for r in records]),
        "convergence_rule": CONVERGENCE_RULE, "epochs": records,
    }


def parameter_checksum(module: nn.Module) -> str:
    """sha256 over a module's parameters in order (bytes of float32 CPU copies): equal iff no weight moved."""
    import hashlib

    digest = hashlib.sha256()
    for name, value in module.state_dict().items():
        digest.update(name.encode())
        digest.update(value.detach().to("cpu", torch.float32).contiguous().numpy().tobytes())
    return digest.hexdigest()
