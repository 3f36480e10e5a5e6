"""Searched worst cases (docs/audit.md, "Searched worst cases"): audit a privacy layer on the pair a search finds.

The hand-picked pairs of :mod:`privtext.privacy.audit` are only as good as whoever wrote them, and a new layer has
none. Here a search looks for the pair instead: random restarts, then gradient ascent (Adam) and hill-climbing on a
differentiable stand-in for the likelihood-ratio test, inside the box [−domain, domain]^D of inputs. Each
coordinate is read as Laplace noise around its mean: z_i = |m_i(x) − m_i(x')| / b_i, with m_i the mean and
b_i = s_i/√2 the Laplace scale matching the standard deviation s_i of coordinate i over common random numbers (the
same noise draws for both inputs). The stand-in is ||z||₁ + ||z||₂. Where the noise really is Laplace, ||z||₁ is the
pair's pure ε, the largest value the likelihood-ratio statistic takes, and ||z||₂ is the parameter μ of the
Gaussian trade-off that the statistic's bulk approaches when many coordinates add up (Dong, Roth & Su 2022): the
first makes the pair as far apart as the layer allows, the second, at equal distance, prefers a pair concentrated
in few coordinates, which a test sees best (for l1 any two unit vectors of disjoint support reach its ε, but e₁
against −e₁ is the easiest to tell apart). A layer that adds less noise than it claims, or normalises after the
noise, makes the stand-in larger.

The pair found is then audited as the hand-picked ones are, with one change: each output is released in a batch
beside a batch-mate the auditor knows (the pair's first input), and the learned test also sees the difference of
the two outputs. A correct layer draws every example's noise independently, so the batch-mate tells nothing; a
layer that shares one noise draw across a batch gives its input away through it.

A layer is anything with the :class:`~privtext.privacy.layers.PrivacyLayer` interface: ``forward``, the noise-free
``normalise``, the Laplace ``scale``, and the numpy ``generator`` it draws its noise from (the search resets it to
get common random numbers).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np
import torch
from torch import nn

LayerFactory = Callable[[float, int, np.random.Generator], nn.Module]  # (ε, D, noise generator) -> a layer


@dataclass(frozen=True)
class SearchSettings:
    """How hard the search looks (config.yaml, audit.search)."""

    restarts: int = 6
    steps: int = 120
    draws: int = 64  # common random numbers per evaluation of the stand-in
    domain: float = 10.0  # inputs lie in [−domain, domain]^D
    learning_rate: float = 0.05  # Adam's step, as a fraction of the domain
    moves: int = 300  # hill-climbing moves after the gradient ascent


@dataclass(frozen=True)
class SearchedPair:
    first: np.ndarray
    second: np.ndarray
    stand_in: float  # the stand-in at the pair (fresh common random numbers, 4 × draws)


def _outputs(layer: nn.Module, x: torch.Tensor, draws: int, noise_seed: int) -> torch.Tensor:
    """``draws`` outputs of input ``x`` (one batch), the noise drawn from a generator seeded with ``noise_seed``."""
    layer.generator = np.random.default_rng(noise_seed)
    return layer(x.expand(draws, -1))


def stand_in(layer: nn.Module, first: torch.Tensor, second: torch.Tensor, draws: int, noise_seed: int) -> torch.Tensor:
    """||z||₁ + ||z||₂, z_i = |m_i(first) − m_i(second)| / b_i, over common random numbers (module docstring);
    differentiable."""
    a, b = _outputs(layer, first, draws, noise_seed), _outputs(layer, second, draws, noise_seed)
    scale = torch.sqrt((a.var(dim=0) + b.var(dim=0)) / 4 + 1e-12)  # a Laplace(b) coordinate's variance is 2b²
    shift = (a.mean(dim=0) - b.mean(dim=0)).abs() / scale
    return shift.sum() + torch.sqrt((shift**2).sum() + 1e-24)


def _start(dim: int, restart: int, settings: SearchSettings, rng: np.random.Generator) -> np.ndarray:
    """A random starting pair in the box; restart r of R keeps about D^(1 − r/(R − 1)) coordinates of each input
    (every one at first, one at last, each input its own), so the search also starts from sparse inputs, where
    a pair concentrated in a few coordinates lies."""
    keep = max(1, round(dim ** (1 - restart / max(1, settings.restarts - 1))))
    start = rng.uniform(-settings.domain, settings.domain, size=(2, dim))
    for row in start:
        row[rng.permutation(dim)[keep:]] = 0.0
    return start


def search_pair(layer: nn.Module, dim: int, settings: SearchSettings, rng: np.random.Generator) -> SearchedPair:
    """The pair with the largest stand-in over ``settings.restarts`` gradient ascents from random starts."""
    domain, best = settings.domain, None
    for restart in range(settings.restarts):
        start = _start(dim, restart, settings, rng)
        pair = torch.tensor(start, dtype=torch.float64, requires_grad=True)
        optimiser = torch.optim.Adam([pair], lr=settings.learning_rate * domain)
        for _ in range(settings.steps):
            optimiser.zero_grad()
            (-stand_in(layer, pair[0], pair[1], settings.draws, int(rng.integers(2**63)))).backward()
            optimiser.step()
            with torch.no_grad():
                pair.clamp_(-domain, domain)
        with torch.no_grad():
            pair = _hill_climb(layer, pair.detach(), settings, rng)
            value = float(stand_in(layer, pair[0], pair[1], 4 * settings.draws, int(rng.integers(2**63))))
        if best is None or value > best.stand_in:
            best = SearchedPair(pair[0].detach().numpy().copy(), pair[1].detach().numpy().copy(), value)
    return best


def _hill_climb(layer: nn.Module, pair: torch.Tensor, settings: SearchSettings,
                rng: np.random.Generator) -> torch.Tensor:
    """Moves the gradient cannot make: set one coordinate of one input to −domain, 0 or domain, kept when the
    stand-in grows (on one set of common random numbers, so that moves are compared on the same noise). Zeroing
    coordinates concentrates a pair's difference, which a gradient spread over every coordinate does not do."""
    seed = int(rng.integers(2**63))
    best = float(stand_in(layer, pair[0], pair[1], settings.draws, seed))
    values = (-settings.domain, 0.0, settings.domain)
    sides, coordinates = rng.integers(0, 2, settings.moves), rng.integers(0, pair.shape[1], settings.moves)
    for side, coordinate, choice in zip(sides, coordinates, rng.integers(0, 3, settings.moves)):
        old = float(pair[side, coordinate])
        pair[side, coordinate] = values[choice]
        value = float(stand_in(layer, pair[0], pair[1], settings.draws, seed))
        if value > best:
            best = value
        else:
            pair[side, coordinate] = old
    return pair


BATCH_PAIRS = 32  # (input, batch-mate) pairs per forward pass of the searched audit's releases


def batch_release(layer: nn.Module, batch_mate: np.ndarray,
                  picks: np.random.Generator | None = None) -> Callable[[np.ndarray, int], np.ndarray]:
    """n outputs of an input, each released beside ``batch_mate`` in a batch of BATCH_PAIRS such pairs, one
    forward pass per batch: [o, o − o_mate] per row (the likelihood ratio reads the first D columns, the learned
    test all of them). Many small batches, not one: a layer that shares one draw per pass must show the test
    many draws to fit on, or it learns the draw instead of the leak. An input given as a matrix [M, D] is a
    random one: each output takes a row drawn uniformly by ``picks`` (word dropout's masks)."""
    def release(x: np.ndarray, n: int) -> np.ndarray:
        x = np.asarray(x, dtype=np.float64)
        if x.ndim == 2 and picks is None:
            raise ValueError("an input of several rows needs a generator to pick them")
        rows = []
        with torch.no_grad():
            for start in range(0, n, BATCH_PAIRS):
                k = min(BATCH_PAIRS, n - start)
                batch = np.empty((2 * k, x.shape[-1]))
                batch[0::2] = x if x.ndim == 1 else x[picks.integers(len(x), size=k)]
                batch[1::2] = batch_mate
                out = layer(torch.from_numpy(batch)).numpy()
                rows.append(np.hstack([out[0::2], out[0::2] - out[1::2]]))
        return np.vstack(rows)
    return release


def normalised(layer: nn.Module, x: np.ndarray) -> np.ndarray:
    """The layer's noise-free output of ``x``."""
    with torch.no_grad():
        return layer.normalise(torch.from_numpy(x[None, :].astype(np.float64)))[0].numpy()


def pair_epsilon(layer: nn.Module, first: np.ndarray, second: np.ndarray) -> float:
    """The pure ε of the pair under Laplace noise of the layer's stated scale: ||n(x) − n(x')||₁ / scale. At the
    worst pair of a correct layer it is the layer's ε."""
    return float(np.abs(normalised(layer, first) - normalised(layer, second)).sum() / layer.scale)
