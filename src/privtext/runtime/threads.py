"""One way to set the threads a job uses: torch's intra-op pool and the BLAS/OpenMP pools of numpy,
scipy and scikit-learn. Snakemake gives each job ``threads`` cores; a job that took more would slow its
neighbours.

The count is also part of what a job computes: torch and BLAS split a reduction between threads, so a sum
over 4 M float32 differs in its last digits between 1 and 2 threads, and those digits grow through a
network's layers. So no job takes its count from the machine: train (frozen features), attack, MDL and word
recovery jobs run at 1 thread; extraction and fine-tuning at ``encoder.threads`` and ``finetune.threads``,
which are params of their rules (a change reruns them) and are used even where Snakemake grants fewer
cores."""

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
