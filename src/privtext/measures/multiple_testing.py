"""Corrections for testing many hypotheses at once (the claims' parts, the runs checked against an ε ceiling)."""

from __future__ import annotations

import math
from typing import Sequence


def holm(p_values: Sequence[float], level: float) -> list[bool]:
    """Which hypotheses Holm's step-down procedure rejects at family-wise ``level`` (NaN p-values never are).
    Written out because scipy has no Holm and statsmodels, a test dependency only, would be a heavy runtime one;
    tests/test_inference.py holds it to statsmodels' ``multipletests(method="holm")`` and to hand cases."""
    order = sorted((p, i) for i, p in enumerate(p_values) if not math.isnan(p))
    rejected = [False] * len(p_values)
    for rank, (p, i) in enumerate(order):
        if p > level / (len(order) - rank):
            break
        rejected[i] = True
    return rejected
