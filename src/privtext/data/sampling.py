"""Seeded row samples: the one way a split is capped (training examples, attackers' fitting split, MDL)."""

from __future__ import annotations

import numpy as np


def seeded_rows(n: int, cap: int | None, seed: int) -> np.ndarray:
    """Sorted indices of a seeded sample of at most ``cap`` of ``n`` rows (all rows when ``cap`` is None or
    at least ``n``), so a capped split keeps its original order."""
    if cap is None or n <= cap:
        return np.arange(n)
    return np.sort(np.random.default_rng(seed).choice(n, size=cap, replace=False))
