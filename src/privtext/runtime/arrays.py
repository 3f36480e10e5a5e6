"""Float arrays that later jobs read (frozen features, releases): refused when they hold NaN or ±inf.

A non-finite value written here would surface only in a later job, as an attacker's or a table's error far
from its cause (fp16 autocast overflowing in an encoder, a method's release diverging), so the job that
computes the array fails instead, naming the file.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np


class NonFiniteError(ValueError):
    """An array holds NaN or ±inf; the message names its file, the rows affected and the first of them."""


def check_finite(array: np.ndarray, path: str | Path, hint: str = "") -> None:
    """Raise :class:`NonFiniteError` naming ``path`` (the file the array is or was to be) when ``array``
    holds NaN or ±inf; ``hint`` says what to try."""
    finite = np.isfinite(array)
    if finite.all():
        return
    bad_rows = np.flatnonzero(~finite.reshape(len(array), -1).all(axis=1)) if array.ndim else np.array([0])
    raise NonFiniteError(
        f"{path}: {len(bad_rows)} of {len(array) if array.ndim else 1} rows hold NaN or inf (first: row "
        f"{int(bad_rows[0])}; {int((~finite).sum())} values)" + (f"; {hint}" if hint else ""))


def save_finite(path: str | Path, array: np.ndarray, hint: str = "") -> None:
    """``np.save`` (no pickle) after :func:`check_finite`; on failure nothing is left at ``path``, not even the
    file an earlier run wrote there."""
    path = Path(path)
    try:
        check_finite(array, path, hint)
    except NonFiniteError:
        path.unlink(missing_ok=True)
        raise
    np.save(path, array, allow_pickle=False)
