"""What ε a configuration really guarantees (docs/methods.md, "Privacy layers" and "Word dropout"), kept apart from the mechanisms.

``epsilon_nominal`` is the paper's hyper-parameter; ``epsilon_effective`` is the local-DP guarantee of the
released representation: the layer's true ε (Laplace scale vs true L1 sensitivity), then the word
dropout amplification of DPNR Theorem 2.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from privtext.privacy.layers import INDEPENDENT, LAYER_KINDS, noise_scale, sensitivity


def layer_epsilon(layer: str, epsilon: float, dim: int) -> float:
    """ε guaranteed by the Laplace mechanism of ``layer``: true sensitivity / noise scale (∞ for the reference
    code's layers, which are DP at no ε)."""
    scale = noise_scale(layer, epsilon, dim)  # validates layer, epsilon and dim
    if LAYER_KINDS[layer].noise != INDEPENDENT:
        return math.inf
    return sensitivity(layer, dim) / scale


def word_dropout_epsilon(epsilon: float, mu: float) -> float:
    """DPNR Theorem 2: masking a fraction μ of words turns an ε-DP release into
    ε' = ln((1−μ)·e^ε + μ)-DP; computed in log space so that ε = 384·20 does not overflow."""
    if not 0.0 <= mu <= 1.0:
        raise ValueError(f"word dropout rate mu must lie in [0, 1], got {mu!r}")
    if math.isinf(epsilon):
        return epsilon if mu < 1.0 else 0.0
    with np.errstate(divide="ignore"):  # log(0) = -inf is the intended limit for mu in {0, 1}
        return float(np.logaddexp(np.log1p(-mu) + epsilon, np.log(mu)))


def epsilon_accounting(layer: str | None, epsilon: float | None, dim: int, mu: float = 0.0) -> dict[str, Any]:
    """Nominal and effective ε of a release through ``layer`` (None: no privacy layer, not DP)."""
    word_dropout_epsilon(0.0, mu)  # validates mu whatever the layer
    if layer is None:
        return {
            "layer": None, "epsilon_nominal": None, "epsilon_layer": math.inf,
            "epsilon_effective": math.inf, "mu": float(mu), "sensitivity": None, "noise_scale": None,
            "differentially_private": False,
        }
    if layer not in LAYER_KINDS:
        raise ValueError(f"unknown privacy layer {layer!r}; known layers: {', '.join(LAYER_KINDS)}")
    if epsilon is None:
        raise ValueError(f"privacy layer {layer!r} needs an epsilon, got None")
    eps_layer = layer_epsilon(layer, epsilon, dim)
    return {
        "layer": layer,
        "epsilon_nominal": float(epsilon),
        "epsilon_layer": eps_layer,
        "epsilon_effective": word_dropout_epsilon(eps_layer, mu),
        "mu": float(mu),
        "sensitivity": sensitivity(layer, dim),
        "noise_scale": noise_scale(layer, epsilon, dim),
        "differentially_private": LAYER_KINDS[layer].noise == INDEPENDENT,
    }
