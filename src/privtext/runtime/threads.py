"""One way to cap the threads a job uses: torch's intra-op pool and the BLAS/OpenMP pools of numpy,
scipy and scikit-learn. Snakemake gives each job ``threads`` cores; a job that took more would slow its
neighbours (and change nothing in its numbers: every result here is the same at any thread count)."""

from __future__ import annotations

import sys
from contextlib import contextmanager
from typing import Iterator


@contextmanager
def limited_threads(threads: int) -> Iterator[None]:
    """Run the block with at most ``threads`` threads per pool, then restore the previous limits. torch is
    capped only when it is already imported (a job that does not use it does not pay for importing it)."""
    from threadpoolctl import threadpool_limits  # a scikit-learn dependency

    if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
        raise ValueError(f"threads must be an integer >= 1, got {threads!r}")
    torch = sys.modules.get("torch")
    previous = torch.get_num_threads() if torch is not None else None
    if torch is not None:
        torch.set_num_threads(threads)
    try:
        with threadpool_limits(limits=threads):
            yield
    finally:
        if torch is not None:
            torch.set_num_threads(previous)
