"""Privacy layers: per-example normalisation followed by the Laplace mechanism (docs/methods.md, "Privacy layers").

Each mechanism is a small pure function whose docstring states what the guarantee relies on. What ε a
configuration actually gives is computed separately, in :mod:`privtext.privacy.accounting`.

| kind                | normalisation           | noise      | L1 sensitivity | guarantee |
| ------------------- | ----------------------- | ---------- | -------------- | --------- |
| ``minmax``          | per-example min-max     | Lap(1/ε)   | D              | (D·ε)-DP  |
| ``minmax_calibrated`` | per-example min-max   | Lap(D/ε)   | D              | ε-DP      |
| ``l1``              | v / ||v||_1             | Lap(2/ε)   | 2              | ε-DP      |
| ``minmax_dpnr_code`` | per-example min-max    | one Lap(1/ε) scalar per example | D | not DP |
| ``minmax_cape_code`` | per-example min-max    | one Lap(1/ε) vector per model   | D | not DP |

``minmax`` is what DPNR and CAPE publish: noise calibrated to a sensitivity of 1 although min-max
normalised vectors in [0,1]^D differ by up to D in L1 (FEDERATE, Appendix C). The two ``*_code`` layers are
what the papers' public code does instead (docs/methods.md): DPNR's adds one noise scalar per example to every
coordinate (``o − min(o)`` gives the normalised vector back), CAPE's draws one noise vector when the model is
built and adds it to every example (a deterministic release). They exist so that a claim can be checked with
the mechanism the published numbers came from; they are DP at no ε, and :mod:`privtext.privacy.accounting` says so.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np
import torch
from torch import nn


def _check_kind(kind: str) -> None:
    if kind not in LAYER_KINDS:
        raise ValueError(f"unknown privacy layer {kind!r}; known layers: {', '.join(LAYER_KINDS)}")


def _check_dim(dim: int) -> None:
    if not isinstance(dim, int) or isinstance(dim, bool) or dim < 1:
        raise ValueError(f"representation dimension must be a positive integer, got {dim!r}")


def _check_epsilon(epsilon: float) -> None:
    if isinstance(epsilon, bool) or not isinstance(epsilon, (int, float)) or not (0 < epsilon < math.inf):
        raise ValueError(f"epsilon must be a finite number > 0, got {epsilon!r}")


def minmax_normalise(v: torch.Tensor) -> torch.Tensor:
    """Min-max scale each example (last dim) to [0, 1]; L1 sensitivity D.

    Every coordinate lies in [0, 1], so two outputs differ by at most D in L1 ([0,1,…,1] vs [1,0,…,0]).
    A constant vector (max == min) has no defined scaling and maps to zeros, which stays in [0, 1].
    """
    low = v.amin(dim=-1, keepdim=True)
    span = v.amax(dim=-1, keepdim=True) - low
    # A zero span means v - low is exactly 0 in every coordinate, so dividing by 1 instead gives the zeros.
    return (v - low) / torch.where(span <= 0, torch.ones_like(span), span)


def l1_normalise(v: torch.Tensor) -> torch.Tensor:
    """Divide each example (last dim) by its L1 norm; L1 sensitivity 2 (FEDERATE Eq. 3).

    Every output has L1 norm 1 (or 0), so two outputs differ by at most 2 in L1 (triangle inequality).
    The zero vector maps to zeros, whose norm 0 ≤ 1 keeps the bound.
    """
    norm = v.abs().sum(dim=-1, keepdim=True)
    # A zero norm means v is the zero vector, so dividing by 1 instead gives the zeros.
    return v / torch.where(norm <= 0, torch.ones_like(norm), norm)


INDEPENDENT, PER_EXAMPLE_SCALAR, PER_MODEL_VECTOR = "independent", "per_example_scalar", "per_model_vector"


@dataclass(frozen=True)
class LayerKind:
    """One privacy layer (docs/extending.md, "A new privacy layer"): its per-example normalisation, the true L1
    sensitivity of what that normalisation outputs, the sensitivity its Laplace noise is calibrated to (scale =
    ``calibrated_to(D)/ε``), and how the noise is drawn: ``independent`` per coordinate and example (the only
    DP way), or as the reference code does, ``per_example_scalar`` (one scalar per example on every coordinate)
    or ``per_model_vector`` (one vector, drawn when the layer is built, for every example)."""

    normalise: Callable[[torch.Tensor], torch.Tensor]
    sensitivity: Callable[[int], float]
    calibrated_to: Callable[[int], float]
    noise: str = INDEPENDENT


def _dimension(dim: int) -> float:
    return float(dim)


def _one(dim: int) -> float:
    return 1.0  # DPNR §3.2 / CAPE §3 assume sensitivity 1; the true one is D (see accounting)


def _two(dim: int) -> float:
    return 2.0


# Every layer the methods accept, by name (methods/options.py keeps a copy of the names for the Snakefile).
LAYER_KINDS: dict[str, LayerKind] = {
    "minmax": LayerKind(minmax_normalise, _dimension, _one),
    "minmax_calibrated": LayerKind(minmax_normalise, _dimension, _dimension),
    "l1": LayerKind(l1_normalise, _two, _two),
    "minmax_dpnr_code": LayerKind(minmax_normalise, _dimension, _one, noise=PER_EXAMPLE_SCALAR),
    "minmax_cape_code": LayerKind(minmax_normalise, _dimension, _one, noise=PER_MODEL_VECTOR),
}
LAYERS = tuple(LAYER_KINDS)
DP_LAYERS = tuple(name for name, kind in LAYER_KINDS.items() if kind.noise == INDEPENDENT)
CODE_LAYERS = tuple(name for name in LAYERS if name not in DP_LAYERS)  # the reference code's mechanisms: not DP


NoiseGenerator = np.random.Generator | torch.Generator


def laplace_noise(
    shape: tuple[int, ...] | torch.Size,
    scale: float,
    generator: NoiseGenerator,
    *,
    dtype: torch.dtype = torch.float32,
    device: torch.device | str = "cpu",
) -> torch.Tensor:
    """I.i.d. Lap(0, ``scale``) noise of ``shape`` drawn from ``generator`` in float64, then cast to ``dtype``.

    From a numpy ``Generator`` (what :class:`PrivacyLayer` uses): ``scale·S·E`` with ``E ~ Exp(1)`` from numpy's
    ziggurat sampler and ``S`` a fair random sign, one random bit per value. This is the Laplace law exactly
    (|X|/scale ~ Exp(1) independent of the sign of X), in float64, with no logarithm on the common path and
    tails that reach past 40·scale. From a ``torch.Generator``: the inverse CDF of a float64 uniform (tails
    to ~36·scale; float32 uniforms would stop at ~17·scale), drawn where the generator lives.
    """
    if not scale > 0:
        raise ValueError(f"Laplace scale must be > 0, got {scale!r}")
    if isinstance(generator, np.random.Generator):
        # Why not inverse CDF here: this runs on every forward pass, and numpy's float64 log is only vectorised
        # on CPUs with AVX-512 (0.83 ms per 100,000 values on an AVX2 machine, 0.11 with AVX-512); the
        # ziggurat costs the same on both. Measured on AVX2, per 100,000 values: 1.0 ms against 1.8 ms for
        # torch's uniforms with numpy's log.
        magnitude = generator.standard_exponential(tuple(shape))
        n = magnitude.size
        negative = np.unpackbits(generator.integers(0, 256, size=(n + 7) // 8, dtype=np.uint8), count=n)
        # Set the sign bit where the random bit is 1: exactly −magnitude, without a pass in floating point.
        magnitude.reshape(-1).view(np.uint64)[...] ^= negative.astype(np.uint64) << np.uint64(63)
        released = np.empty(magnitude.shape, dtype=np.float32 if dtype == torch.float32 else np.float64)
        np.multiply(magnitude, scale, out=released, casting="same_kind")
        return torch.from_numpy(released).to(device=device, dtype=dtype)
    # Drawn where the generator lives, then moved: a CUDA model gets the same noise.
    u = torch.rand(shape, generator=generator, dtype=torch.float64, device=generator.device).sub_(0.5)
    # -scale·sign(u)·log(1 − 2|u|); the clamp keeps u = -0.5 from giving -inf.
    noise = u.abs().mul_(-2.0).add_(1.0).clamp_(min=torch.finfo(torch.float64).tiny)
    if noise.device.type == "cpu":
        # torch's float64 log is not vectorised on the CPU; numpy's is where the CPU has AVX-512. The two differ
        # in the last bit for a few values in a thousand (the same mechanism, still float64).
        np.log(noise.numpy(), out=noise.numpy())
    else:
        noise.log_()
    return noise.mul_(u.sign_()).mul_(-scale).to(device=device, dtype=dtype)


def sensitivity(kind: str, dim: int) -> float:
    """True L1 sensitivity of the normalised vector of layer ``kind`` in dimension ``dim``."""
    _check_kind(kind)
    _check_dim(dim)
    return float(LAYER_KINDS[kind].sensitivity(dim))


def noise_scale(kind: str, epsilon: float, dim: int) -> float:
    """Laplace scale the layer uses: 1/ε for ``minmax`` and the reference code's layers (as published), Δ1/ε for
    the others."""
    _check_kind(kind)
    _check_epsilon(epsilon)
    _check_dim(dim)
    return float(LAYER_KINDS[kind].calibrated_to(dim)) / epsilon


class PrivacyLayer(nn.Module):
    """Normalise each example independently, then add fresh i.i.d. Laplace noise per coordinate.

    Noise is drawn on every forward pass, in training (robust training, DPNR §3.3) and in eval mode alike;
    the layer has no parameters and uses no batch statistics. Pass ``seed`` (a ``torch.Generator`` seeded
    with it) or a ``generator`` for reproducible noise; a numpy ``Generator`` draws it about twice as fast on
    the CPU (:func:`laplace_noise`), and the methods pass one.
    """

    def __init__(
        self, kind: str, epsilon: float, dim: int, *, seed: int | None = None,
        generator: NoiseGenerator | None = None,
    ) -> None:
        super().__init__()
        self.scale = noise_scale(kind, epsilon, dim)  # validates kind, epsilon, dim
        if seed is not None and generator is not None:
            raise ValueError("give either seed or generator to PrivacyLayer, not both")
        self.kind, self.epsilon, self.dim = kind, float(epsilon), dim
        if generator is None:
            generator = torch.Generator()
            generator.manual_seed(seed) if seed is not None else generator.seed()
        self.generator = generator
        # CAPE's code: one noise vector drawn when the model is built, the same for every example and pass
        self.noise = LAYER_KINDS[kind].noise
        self.constant_noise = laplace_noise((dim,), self.scale, generator) if self.noise == PER_MODEL_VECTOR else None

    def normalise(self, v: torch.Tensor) -> torch.Tensor:
        """The noise-free, per-example normalisation."""
        return LAYER_KINDS[self.kind].normalise(v)

    def forward(self, v: torch.Tensor) -> torch.Tensor:
        if v.shape[-1] != self.dim:
            raise ValueError(f"PrivacyLayer expects last dimension {self.dim}, got shape {tuple(v.shape)}")
        normalised = self.normalise(v)
        if self.constant_noise is not None:
            return normalised + self.constant_noise.to(dtype=v.dtype, device=v.device)
        # DPNR's code: noise of shape [batch, 1], one scalar per example broadcast over the coordinates
        shape = (*normalised.shape[:-1], 1) if self.noise == PER_EXAMPLE_SCALAR else normalised.shape
        noise = laplace_noise(shape, self.scale, self.generator, dtype=v.dtype, device=v.device)
        return normalised + noise

    def extra_repr(self) -> str:
        return f"kind={self.kind}, epsilon={self.epsilon}, dim={self.dim}, scale={self.scale:.4g}"
