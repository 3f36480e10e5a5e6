"""What every method shares: the data contract, parameter handling, the model of docs/methods.md, "Methods" and its trainer.

The shared architecture over frozen features ``h``: encoder MLP ``E``, optional privacy layer, classifier
MLP ``C``, and for adversarial methods adversary MLPs ``A`` behind one gradient reversal layer. A concrete
method is a :class:`~privtext.methods.spec.MethodSpec` (no torch); which parts exist follows from its
parameters (``layer`` → privacy layer, ``lambda`` → adversaries).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Iterator, Mapping

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from privtext.runtime.devices import resolve_device
from privtext.training.nn import (
    ACTIVATIONS, LAMBDA_SCHEDULES, Dropout, GradientReversal, MLPEnsemble, make_activation, mlp,
)
from privtext.methods.spec import TRAINING_RULE, MethodSpec
from privtext.privacy.layers import LAYERS, PrivacyLayer, noise_scale
from privtext.runtime.threads import limited_threads
from privtext.training.loop import TensorSplit, TrainingSettings, batched_apply, train

@dataclass
class Split:
    """One split as the pipeline passes it: features ``X`` float32 [n, d], labels ``y`` int64 [n] and one
    int64 [n] array per private attribute in ``Z``."""

    X: np.ndarray
    y: np.ndarray
    Z: dict[str, np.ndarray]


def as_features(X: np.ndarray, input_dim: int) -> torch.Tensor:
    X = np.asarray(X)
    if X.ndim != 2 or X.shape[1] != input_dim:
        raise ValueError(f"features must have shape [n, {input_dim}], got {X.shape}")
    if not np.issubdtype(X.dtype, np.floating):
        raise ValueError(f"features must be floating point, got dtype {X.dtype}")
    # Row-major whatever the file's order (pandas-built feature matrices are column-major): batches are rows,
    # and gathering rows of a column-major [27133, 97] matrix took 9-17 ms an epoch against 2-4 ms.
    return torch.from_numpy(np.array(X, dtype=np.float32, order="C", copy=True))


def _as_labels(values: np.ndarray, n: int, n_values: int, what: str) -> torch.Tensor:
    values = np.asarray(values)
    if values.shape != (n,) or not np.issubdtype(values.dtype, np.integer):
        raise ValueError(f"{what} must be an integer array of shape ({n},), got {values.dtype} {values.shape}")
    if n and (values.min() < 0 or values.max() >= n_values):
        raise ValueError(f"{what} must lie in [0, {n_values - 1}], got range [{values.min()}, {values.max()}]")
    return torch.from_numpy(values.astype(np.int64))


def seed_streams(seed: int, n: int = 3) -> list[int]:
    """Independent seeds for weight init/dropout, shuffling and privacy noise, derived from one run seed."""
    return [int(s) for s in np.random.SeedSequence(seed).generate_state(n)]


@contextmanager
def torch_session(threads: int, seed: int | None = None) -> Iterator[None]:
    """Use ``threads`` intra-op threads and, given ``seed``, a private seeded global RNG for init/dropout."""
    with limited_threads(threads), torch.random.fork_rng(devices=[]):
        if seed is not None:
            torch.manual_seed(seed)
        yield


class Method(ABC):
    """A method of docs/methods.md, "Methods", built from its spec by :func:`privtext.methods.build_method`; ``params``
    override the spec's paper defaults."""

    def __init__(
        self, spec: MethodSpec, params: Mapping[str, Any] | None = None, *, input_dim: int, n_classes: int,
        attribute_sizes: Mapping[str, int], seed: int, threads: int = 1, device: str | torch.device = "cpu",
    ) -> None:
        self.spec, self.name = spec, spec.name
        self.params: dict[str, Any] = spec.resolve(params)
        for label, value, low in (("input_dim", input_dim, 1), ("n_classes", n_classes, 2),
                                  ("threads", threads, 1), ("seed", seed, 0)):
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
                raise ValueError(f"{label} must be an integer >= {low}, got {value!r}")
        for attribute, size in attribute_sizes.items():
            if not isinstance(size, (int, np.integer)) or size < 2:
                raise ValueError(f"private attribute {attribute!r} needs at least 2 values, got {size!r}")
        self.input_dim, self.n_classes = int(input_dim), int(n_classes)
        self.seed, self.threads = int(seed), int(threads)
        self.device = resolve_device(device)  # where models and batches live; numpy in and out stays on the CPU
        self.attribute_sizes = {str(k): int(v) for k, v in attribute_sizes.items()}

    def check_split(self, split: Split, what: str) -> TensorSplit:
        """Validate ``split`` against the method's dimensions and convert it to tensors."""
        x = as_features(split.X, self.input_dim)
        y = _as_labels(split.y, len(x), self.n_classes, f"{what}.y")
        missing = sorted(set(self.attribute_sizes) - set(split.Z))
        if missing:
            raise ValueError(f"{what}.Z lacks private attribute(s) {missing}")
        z = {a: _as_labels(split.Z[a], len(x), k, f"{what}.Z[{a!r}]") for a, k in self.attribute_sizes.items()}
        return TensorSplit(x, y, z)

    @abstractmethod
    def fit(self, train: Split, dev: Split) -> dict[str, Any]:
        """Train on ``train``, select on ``dev`` only; return the training history."""

    @abstractmethod
    def predict(self, X: np.ndarray) -> np.ndarray:
        """Task labels as the server computes them (from a freshly noised representation for DP methods)."""

    @abstractmethod
    def release(self, X: np.ndarray) -> np.ndarray:
        """The representation sent to the server, float32 [n, representation_dim], fresh noise per call."""

    @abstractmethod
    def predict_released(self, R: np.ndarray) -> np.ndarray:
        """Task labels from already released representations ``R`` (the server's view of one release)."""

    @abstractmethod
    def state_dict(self) -> dict[str, torch.Tensor]:
        """Trained weights as contiguous tensors (safetensors-compatible)."""

    def adversary_predictions(self, R: np.ndarray) -> dict[str, np.ndarray]:
        """What the adversaries trained jointly with the method predict of each attribute they protect, from
        released representations ``R`` (the attacker CAPE's Table 3 measured); {} for a method that trains none."""
        return {}

    @property
    def privacy_layer(self) -> tuple[str, float] | None:
        """(kind, nominal epsilon) of the privacy layer, or None for non-DP methods."""
        return None

    @property
    @abstractmethod
    def representation_dim(self) -> int: ...


def orthogonality_penalty(hidden: torch.Tensor) -> torch.Tensor:
    """Σ_{i<j} ||H_iᵀ H_j||_F² over the hidden representations [n, k, h] of k adversaries (Han et al.
    2021, after Domain Separation Networks). Rows are L2-normalised and the sum divided by n², so each pair
    contributes a value in [0, 1] whatever the batch size and scale (the reference code normalises too)."""
    n, k, width = hidden.shape
    unit = hidden / hidden.norm(dim=2, keepdim=True).clamp_min(1e-6)
    flat = unit.reshape(n, k * width)
    blocks = (flat.T @ flat).pow(2).view(k, width, k, width).sum(dim=(1, 3))  # [k, k]: ||H_iᵀH_j||_F²
    return torch.triu(blocks, diagonal=1).sum() / (n * n)


class RepresentationModel(nn.Module):
    """``C(priv(E(h)))`` with adversaries ``A_{a,k}(GRL_λ(priv(E(h))))`` for each protected attribute ``a``, and
    observers ``O_a(priv(E(h)))``: heads that learn an attribute from the release but never shape it (their
    gradient stops at the release), the jointly trained attacker of a method without adversaries."""

    def __init__(
        self, encoder: nn.Module, classifier: nn.Module, privacy: PrivacyLayer | None = None,
        adversaries: Mapping[str, MLPEnsemble] | None = None, lambda_orth: float = 0.0,
        observers: Mapping[str, MLPEnsemble] | None = None,
    ) -> None:
        super().__init__()
        self.encoder, self.privacy, self.classifier = encoder, privacy, classifier
        adversaries, observers = adversaries or {}, observers or {}
        self.attributes = tuple(adversaries)  # index keys: attribute names may contain '.'
        self.adversaries = nn.ModuleList(adversaries.values())
        self.observed = tuple(observers)
        self.observers = nn.ModuleList(observers.values())
        self.reversal = GradientReversal(0.0)
        self.lambda_orth = lambda_orth

    def joint_heads(self) -> list[tuple[str, MLPEnsemble]]:
        """(attribute, head) of every attacker trained with the model: its adversaries, else its observers."""
        if self.attributes:
            return list(zip(self.attributes, self.adversaries))
        return list(zip(self.observed, self.observers))

    def represent(self, x: torch.Tensor) -> torch.Tensor:
        """The released representation: privacy-layer output (fresh noise) or E(h)."""
        r = self.encoder(x)
        return self.privacy(r) if self.privacy is not None else r

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.classifier(self.represent(x))

    def adversary_parameters(self) -> Iterator[nn.Parameter]:
        return self.adversaries.parameters()

    def _adversaries_loss(self, r: torch.Tensor, z: Mapping[str, torch.Tensor]) -> torch.Tensor:
        """Σ_a Σ_k CE(z_a, A_ak(r)), plus the orthogonality penalty of several adversaries per attribute."""
        loss = r.new_zeros(())
        for attribute, ensemble in zip(self.attributes, self.adversaries):
            logits = ensemble(r)  # [n, k, values]
            # mean over n·k predictions times k = sum over the k adversaries of their mean CE
            loss = loss + ensemble.k * F.cross_entropy(
                logits.flatten(0, 1), z[attribute].repeat_interleave(ensemble.k))
            if self.lambda_orth > 0 and ensemble.k > 1:
                # The penalty diversifies the adversaries only; E gets no gradient from it (as in fairlib,
                # which trains adversaries on detached hidden states).
                loss = loss + self.lambda_orth * orthogonality_penalty(ensemble.hidden(r.detach()))
        return loss

    def adversary_loss(self, x: torch.Tensor, z: Mapping[str, torch.Tensor]) -> torch.Tensor:
        """The adversaries' loss on a detached representation: an adversary-only update leaves E alone."""
        return self._adversaries_loss(self.represent(x).detach(), z)

    def training_loss(self, x: torch.Tensor, y: torch.Tensor, z: Mapping[str, torch.Tensor]) -> torch.Tensor:
        """CE(y, C(r)) + Σ_a Σ_k CE(z_a, A_ak(GRL_λ(r))): one backward pass trains the adversaries on
        CE(z) and pushes −λ·∂CE(z)/∂r into E (FEDERATE Algorithm 1)."""
        r = self.represent(x)
        loss = F.cross_entropy(self.classifier(r), y) + self._adversaries_loss(self.reversal(r), z)
        if self.observers:
            watched = r.detach()  # an observer learns from the release and leaves it as it is
            for attribute, observer in zip(self.observed, self.observers):
                loss = loss + F.cross_entropy(observer(watched).squeeze(1), z[attribute])
        return loss


def _check_sizes(name: str, value: Any) -> None:
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, int) and v >= 1 for v in value):
        raise ValueError(f"{name} must be a list of positive integers, got {value!r}")


def _check_number(name: str, value: Any, low: float) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= low:
        raise ValueError(f"{name} must be a number >= {low}, got {value!r}")


class NeuralMethod(Method):
    """A method built on :class:`RepresentationModel`; the subclass's ``defaults`` decide its parts."""

    def __init__(self, spec: MethodSpec, params: Mapping[str, Any] | None = None, **kwargs: Any) -> None:
        super().__init__(spec, params, **kwargs)
        self.settings = TrainingSettings(**{k: self.params[k] for k in (
            "epochs", "batch_size", "lr", "optimizer", "weight_decay", "patience", "select_on")},
            adversary_steps=self.params.get("adversary_steps", 0),
            **{k: self.params[k] for k in TRAINING_RULE if k in self.params})
        self._validate()
        self.model: RepresentationModel | None = None

    # -- parameters -------------------------------------------------------------------------------------
    def _validate(self) -> None:
        p = self.params
        for key in ("encoder_hidden", "classifier_hidden", "adversary_hidden"):
            if key in p:
                _check_sizes(key, p[key])
        if p["representation_dim"] is not None:
            _check_sizes("representation_dim", [p["representation_dim"]])
        for key in ("activation", "encoder_output_activation"):
            if p[key] not in ACTIVATIONS:
                raise ValueError(f"{key} must be one of {list(ACTIVATIONS)}, got {p[key]!r}")
        for key in ("dropout", "representation_dropout"):
            if not 0.0 <= p[key] < 1.0:
                raise ValueError(f"{key} must lie in [0, 1), got {p[key]!r}")
        if not isinstance(p.get("observers", False), bool):
            raise ValueError(f"observers must be true or false, got {p['observers']!r}")
        if "layer" in p:
            if p["layer"] not in LAYERS:
                raise ValueError(f"layer must be one of {list(LAYERS)}, got {p['layer']!r}")
            noise_scale(p["layer"], p["epsilon"], self.representation_dim)  # validates epsilon
        if "lambda" in p:
            self._validate_adversarial()

    def _validate_adversarial(self) -> None:
        p = self.params
        for key in ("lambda", "gamma", "lambda_orth"):
            if key in p:
                _check_number(key, p[key], 0.0)
        if "n_adversaries" in p:
            _check_sizes("n_adversaries", [p["n_adversaries"]])
        if p["lambda_schedule"] not in LAMBDA_SCHEDULES:
            raise ValueError(f"lambda_schedule must be one of {list(LAMBDA_SCHEDULES)}, got {p['lambda_schedule']!r}")
        if not self.protected_attributes:
            raise ValueError(f"method {self.name!r} needs at least one private attribute to protect")
        if p.get("n_adversaries", 1) > 1 and not p["adversary_hidden"]:
            raise ValueError("several adversaries per attribute need adversary_hidden for the orthogonality penalty")

    @property
    def protected_attributes(self) -> list[str]:
        """Attributes with adversaries: ``attributes`` if given, else every private attribute."""
        chosen = self.params.get("attributes")
        if chosen is None:
            return list(self.attribute_sizes)
        unknown = sorted(set(chosen) - set(self.attribute_sizes))
        if unknown:
            raise ValueError(f"attributes {unknown} are not private attributes; known: {sorted(self.attribute_sizes)}")
        return list(chosen)

    @property
    def representation_dim(self) -> int:
        return self.params["representation_dim"] or self.input_dim

    @property
    def privacy_layer(self) -> tuple[str, float] | None:
        return (self.params["layer"], float(self.params["epsilon"])) if "layer" in self.params else None

    # -- model ------------------------------------------------------------------------------------------
    def build_model(self, noise_seed: int) -> RepresentationModel:
        p, dim = self.params, self.representation_dim
        encoder = nn.Sequential(
            mlp([self.input_dim, *p["encoder_hidden"], dim], p["dropout"], p["activation"]),
            make_activation(p["encoder_output_activation"]),  # tanh: DPNR pooler; relu: CAPE Dense(256, relu)
            Dropout(p["representation_dropout"]),  # DPNR: dropout 0.1 between pooler and min-max
        )
        privacy = None
        if "layer" in p:  # noise from numpy's PCG64: twice as fast on the CPU as a torch.Generator's (laplace_noise)
            privacy = PrivacyLayer(p["layer"], p["epsilon"], dim, generator=np.random.default_rng(noise_seed))
        classifier = mlp([dim, *p["classifier_hidden"], self.n_classes], p["dropout"], p["activation"])
        adversaries = {}
        if "lambda" in p:
            adversaries = {
                a: MLPEnsemble([dim, *p["adversary_hidden"], self.attribute_sizes[a]], p.get("n_adversaries", 1),
                               p["dropout"], p["activation"])
                for a in self.protected_attributes
            }
        observers = {}
        if p.get("observers") and not adversaries:  # one per private attribute, in the classifier's shape
            observers = {a: MLPEnsemble([dim, *p["classifier_hidden"], size], 1, p["dropout"], p["activation"])
                         for a, size in self.attribute_sizes.items()}
        return RepresentationModel(encoder, classifier, privacy, adversaries, p.get("lambda_orth", 0.0), observers)

    def lambda_at(self, epoch: int) -> float:
        schedule = LAMBDA_SCHEDULES[self.params["lambda_schedule"]]
        return schedule(float(self.params["lambda"]), epoch, self.settings.epochs, float(self.params["gamma"]))

    def epoch_hook(self, epoch: int) -> dict[str, float]:
        """Set what changes per epoch (the adversaries' λ) before ``epoch`` trains; returns what the history records."""
        assert self.model is not None
        if not self.model.attributes:
            return {}
        self.model.reversal.lambda_ = self.lambda_at(epoch)
        return {"lambda": self.model.reversal.lambda_}

    # -- API --------------------------------------------------------------------------------------------
    def fit(self, train_split: Split, dev_split: Split) -> dict[str, Any]:
        train_data, dev_data = self.check_split(train_split, "train"), self.check_split(dev_split, "dev")
        init_seed, shuffle_seed, noise_seed = seed_streams(self.seed)
        with torch_session(self.threads, init_seed):
            # Built (initialised) on the CPU, then moved: a seed gives the same initial weights on every device.
            self.model = self.build_model(noise_seed).to(self.device)
            shuffler = torch.Generator().manual_seed(shuffle_seed)
            history = train(self.model, train_data.to(self.device), dev_data.to(self.device), self.settings,
                            generator=shuffler, epoch_hook=self.epoch_hook)
        return {"method": self.name, "protected_attributes": list(self.model.attributes), **history}

    def _fitted(self) -> RepresentationModel:
        if self.model is None:
            raise RuntimeError(f"method {self.name!r} is not fitted; call fit(train, dev) first")
        self.model.eval()
        return self.model

    def apply(self, fn: Any, X: torch.Tensor) -> torch.Tensor:
        """``fn`` over ``X`` on the method's device; the result comes back on the CPU."""
        with torch_session(self.threads):
            return batched_apply(fn, X.to(self.device)).cpu()

    def predict(self, X: np.ndarray) -> np.ndarray:
        model = self._fitted()
        return self.apply(model, as_features(X, self.input_dim)).argmax(dim=1).numpy()

    def release(self, X: np.ndarray) -> np.ndarray:
        model = self._fitted()
        return self.apply(model.represent, as_features(X, self.input_dim)).numpy().astype(np.float32)

    def predict_released(self, R: np.ndarray) -> np.ndarray:
        model = self._fitted()
        return self.apply(model.classifier, as_features(R, self.representation_dim)).argmax(dim=1).numpy()

    def adversary_predictions(self, R: np.ndarray) -> dict[str, np.ndarray]:
        heads = self._fitted().joint_heads()
        if not heads:
            return {}
        R = as_features(R, self.representation_dim)
        # several adversaries of one attribute vote by their mean probability: one joint adversary per attribute
        return {attribute: self.apply(lambda r, members=head: members(r).softmax(dim=2).mean(dim=1), R)
                .argmax(dim=1).numpy() for attribute, head in heads}

    def state_dict(self) -> dict[str, torch.Tensor]:
        model = self._fitted()
        return {k: v.detach().clone().contiguous() for k, v in model.state_dict().items()}

    def load_state(self, state: Mapping[str, torch.Tensor]) -> None:
        """Rebuild the fitted model from :meth:`state_dict`'s weights (a finished run's ``model.safetensors``); the
        method must be built with the run's hyper-parameters, sizes and seed. Missing or extra weights raise."""
        _, _, noise_seed = seed_streams(self.seed)
        with torch_session(self.threads):
            model = self.build_model(noise_seed)
            model.load_state_dict(dict(state), strict=True)
        self.model = model.to(self.device)

    def representation_before_noise(self, X: np.ndarray) -> np.ndarray:
        """``E(h)``: what the privacy layer receives (it normalises, then adds noise), float64 [n, D]; for a
        method without a layer, its release."""
        model = self._fitted()
        return self.apply(model.encoder, as_features(X, self.input_dim)).numpy().astype(np.float64)

    @property
    def privacy_module(self) -> PrivacyLayer | None:
        """The fitted model's privacy layer (normalisation and noise), or None for a non-DP method."""
        return self._fitted().privacy
