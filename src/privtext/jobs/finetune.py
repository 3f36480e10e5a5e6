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
from dataclasses import asdict, dataclass
from typing import Any, Callable, Mapping, Sequence

import numpy as np
import torch
from torch import nn

from privtext.runtime.devices import autocast
from privtext.encoding.encoders import LoadedEncoder, pool_output  # the same pooling as frozen extraction
from privtext.methods.base import NeuralMethod, RepresentationModel
from privtext.training.loop import TensorSplit, TrainingSettings, train
from privtext.encoding.word_dropout import DEFAULT_MASK_TOKEN, apply_word_dropout



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

    def training(self, head: TrainingSettings) -> TrainingSettings:
        """The loop's settings for fine-tuning with a method whose head trains with ``head``: AdamW over every
        weight with linear decay and clipping, DPNR's fixed epochs and batch (the training rule's batch shrink,
        early stop and extension are for heads on frozen features), the head's dev selection and adversary
        updates."""
        return TrainingSettings(
            epochs=self.epochs, batch_size=self.batch_size, lr=self.lr, optimizer="adamw",
            weight_decay=self.weight_decay, patience=None, select_on=head.select_on,
            adversary_steps=head.adversary_steps, min_steps_per_epoch=1, min_epochs=1, max_epochs_factor=1,
            lr_decay="linear", warmup_steps=self.warmup_steps, max_grad_norm=self.max_grad_norm,
            eval_batch_size=self.eval_batch_size, flatten_parameters=False)


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

    def adversary_parameters(self) -> list[nn.Parameter]:
        return list(self.head.adversary_parameters())

    def adversary_loss(self, packed: torch.Tensor, z: Mapping[str, torch.Tensor]) -> torch.Tensor:
        """The adversaries' loss on features they cannot move (their own updates leave the encoder as it is)."""
        with torch.no_grad():
            h = self.features(packed)
        return self.head.adversary_loss(h, z)


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
    """Train all of ``model`` on ``train_tokens(epoch)`` (word dropout drawn per epoch) with
    :func:`privtext.training.loop.train`, the loop every method trains with, under
    :meth:`FinetuneSettings.training`: dev scored through the head's fresh noise, the best dev epoch kept (dev
    only, never test) and restored. Returns the history."""
    device = method.device
    labels = torch.tensor(y, dtype=torch.int64, device=device)  # a copy: pandas' arrays are read-only
    private = {a: torch.tensor(v, dtype=torch.int64, device=device) for a, v in z.items()}
    dev = TensorSplit(dev_tokens.packed.to(device), torch.tensor(dev_y, dtype=torch.int64, device=device), {})
    return train(model, lambda epoch: TensorSplit(train_tokens(epoch).packed.to(device), labels, private), dev,
                 settings.training(method.settings), generator=generator, epoch_hook=method.epoch_hook)


def parameter_checksum(module: nn.Module) -> str:
    """sha256 over a module's parameters in order (bytes of float32 CPU copies): equal iff no weight moved."""
    import hashlib

    digest = hashlib.sha256()
    for name, value in module.state_dict().items():
        digest.update(name.encode())
        digest.update(value.detach().to("cpu", torch.float32).contiguous().numpy().tobytes())
    return digest.hexdigest()
