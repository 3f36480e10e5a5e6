"""MDL online code length of a label given a representation (Voita & Titov 2020; docs/methods.md, "Measures").

The data are shuffled with the seed and cut into blocks ending at fractions of N. The first block is sent
with the uniform code (``n_1·log2 K`` bits); every later block is sent with a probe trained only on all
earlier blocks, costing ``−Σ log2 p(y|x)`` over that block alone. FEDERATE's code scored probes on data they
had been trained on; here a probe never sees the block it codes. Higher MDL = less information about ``y``.

Probabilities are mixed with the uniform distribution, ``p = (1 − α)·p_probe + α/K``: the mixture is still a
distribution (so the total stays a valid code length), every class (including ones absent from the earlier
blocks) gets probability at least ``α/K``, and no block can cost more than ``log2(K/α)`` bits per example.
"""

from __future__ import annotations

import math
import warnings
from typing import Any, Callable, Sequence

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression
from sklearn.neural_network import MLPClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

DEFAULT_FRACTIONS = (0.001, 0.002, 0.004, 0.008, 0.016, 0.032, 0.0625, 0.125, 0.25, 0.5, 1.0)
DEFAULT_SMOOTHING = 1e-3


def _linear_probe(seed: int, y_train: np.ndarray) -> Any:
    # Fixed C: tuning it on held-out data per block would need data the online code has not yet sent.
    return make_pipeline(StandardScaler(), LogisticRegression(C=1.0, max_iter=1000, random_state=seed))


def _mlp_probe(seed: int, y_train: np.ndarray) -> Any:
    # Early stopping on a held-out tenth of the earlier blocks once every class has enough examples for
    # sklearn's stratified split; without it an MLP memorises small blocks and codes the next one badly.
    early = len(y_train) >= 100 and np.unique(y_train, return_counts=True)[1].min() >= 10
    return make_pipeline(
        StandardScaler(),
        MLPClassifier(
            hidden_layer_sizes=(64,), alpha=1.0, max_iter=200, early_stopping=bool(early), n_iter_no_change=5,
            random_state=seed,
        ),
    )


# Probe factories: (seed, training labels) -> unfitted estimator with fit / predict_proba / classes_.
PROBES: dict[str, Callable[[int, np.ndarray], Any]] = {"linear": _linear_probe, "mlp": _mlp_probe}


def block_boundaries(n: int, fractions: Sequence[float] = DEFAULT_FRACTIONS) -> list[int]:
    """End index (exclusive) of every block: ``floor(f·n)``, at least 1, strictly increasing, last = n.

    Fractions that map to an end already taken (small ``n``) are dropped, so no block is empty.
    """
    if n < 1:
        raise ValueError(f"need at least one example, got n={n}")
    if not fractions or any(not 0 < f <= 1 for f in fractions) or list(fractions) != sorted(fractions):
        raise ValueError(f"fractions must be increasing values in (0, 1], got {list(fractions)}")
    ends: list[int] = []
    for fraction in fractions:
        end = min(n, max(1, math.floor(fraction * n + 1e-9)))  # epsilon: 0.004*1000 must give 4, not 3
        if not ends or end > ends[-1]:
            ends.append(end)
    if ends[-1] != n:
        ends.append(n)
    return ends


def online_code_length(
    X: np.ndarray,
    y: np.ndarray,
    n_classes: int,
    seed: int,
    fractions: Sequence[float] = DEFAULT_FRACTIONS,
    probe: str = "linear",
    smoothing: float = DEFAULT_SMOOTHING,
) -> dict[str, Any]:
    """Online code length of ``y`` (ints in ``[0, n_classes)``) given ``X``.

    Returns a JSON-serialisable dict: ``bits``, ``kbits`` (= bits/1024), ``uniform_bits`` (= N·log2 K, the
    code length with no information, FEDERATE's "Random" row), ``uniform_kbits``, ``compression``
    (= uniform_bits / bits), ``n``, ``n_classes``, ``probe``, ``smoothing``, ``seed``, ``fractions``,
    ``block_ends`` and ``blocks`` (per block: ``start``, ``end``, ``n``, ``n_train``, ``coded_by``
    ("uniform"/"probe"), ``bits``, ``bits_per_example``).
    """
    X, y = np.asarray(X, dtype=float), np.asarray(y).astype(np.int64)
    _validate(X, y, n_classes, probe, smoothing)
    order = np.random.default_rng(seed).permutation(len(y))
    X, y = X[order], y[order]
    ends = block_boundaries(len(y), fractions)
    log2_k = math.log2(n_classes)
    blocks = [_block_record(0, ends[0], 0, "uniform", ends[0] * log2_k)]
    for start, end in zip(ends[:-1], ends[1:]):
        probabilities = _probe_probabilities(X[:start], y[:start], X[start:end], n_classes, seed, probe)
        probabilities = (1.0 - smoothing) * probabilities + smoothing / n_classes
        bits = float(-np.sum(np.log2(probabilities[np.arange(end - start), y[start:end]])))
        blocks.append(_block_record(start, end, start, "probe", bits))
    total = float(sum(b["bits"] for b in blocks))
    uniform = len(y) * log2_k
    return {
        "bits": total,
        "kbits": total / 1024,
        "uniform_bits": uniform,
        "uniform_kbits": uniform / 1024,
        "compression": uniform / total,
        "n": int(len(y)),
        "n_classes": int(n_classes),
        "probe": probe,
        "smoothing": float(smoothing),
        "seed": int(seed),
        "fractions": [float(f) for f in fractions],
        "block_ends": ends,
        "blocks": blocks,
    }


def _probe_probabilities(
    X_train: np.ndarray, y_train: np.ndarray, X_code: np.ndarray, n_classes: int, seed: int, probe: str
) -> np.ndarray:
    """Probe's class probabilities on ``X_code`` as an (n, K) array; classes unseen in training get 0 here
    (smoothing gives them mass later)."""
    probabilities = np.zeros((len(X_code), n_classes))
    seen = np.unique(y_train)
    if len(seen) == 1:
        probabilities[:, seen[0]] = 1.0  # one class so far: a probe can only predict it
        return probabilities
    model = PROBES[probe](seed, y_train)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # an unconverged probe still gives a valid code
        model.fit(X_train, y_train)
    probabilities[:, np.asarray(model.classes_, dtype=np.int64)] = model.predict_proba(X_code)
    return probabilities


def _block_record(start: int, end: int, n_train: int, coded_by: str, bits: float) -> dict[str, Any]:
    return {
        "start": int(start), "end": int(end), "n": int(end - start), "n_train": int(n_train),
        "coded_by": coded_by, "bits": float(bits), "bits_per_example": float(bits / (end - start)),
    }


def _validate(X: np.ndarray, y: np.ndarray, n_classes: int, probe: str, smoothing: float) -> None:
    if X.ndim != 2 or len(X) != len(y):
        raise ValueError(f"X must be 2-D with one row per label; got X {X.shape}, y {y.shape}")
    if n_classes < 2:
        raise ValueError(f"n_classes must be >= 2 (log2 K = 0 otherwise), got {n_classes}")
    if len(y) and (y.min() < 0 or y.max() >= n_classes):
        raise ValueError(f"labels must lie in [0, {n_classes}), got range [{y.min()}, {y.max()}]")
    if probe not in PROBES:
        raise ValueError(f"unknown probe {probe!r}; available: {sorted(PROBES)}")
    if not 0 < smoothing <= 1:
        raise ValueError(f"smoothing must be in (0, 1], got {smoothing}")
