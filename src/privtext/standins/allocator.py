"""How a training job's process uses the C allocator.

A training step allocates and frees the same few arrays (activations, gradients, dropout masks, noise) of
0.1-4 MB each, hundreds of times. glibc's defaults return such blocks to the system: blocks above a
threshold (raised on the fly up to the largest block freed so far) go through ``mmap``, and more than twice
that threshold free at the top of the heap is trimmed. The next step then faults every page in again, zeroed
by the kernel: about 200 page faults a step, 190,000 a FEDERATE Adult train job.
Stands in for no library: it sets glibc's own ``mallopt`` thresholds; ``tests/test_allocator.py`` counts the page
faults it saves.
"""

from __future__ import annotations

import ctypes
import sys

# glibc's mallopt parameters (malloc.h)
M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3
MMAP_THRESHOLD = 32 << 20  # the ceiling of glibc's own moving threshold
TRIM_THRESHOLD = 128 << 20


def keep_freed_memory() -> bool:
    """Keep freed blocks under 32 MB in the heap for reuse and trim its top only past 128 MB free, so a
    training loop's arrays are reused instead of faulted in again every step. Values are unchanged: this only
    decides where memory comes from.

    Why these bounds: keeping every block (no ``mmap`` under 256 MB, no trimming) lets the heap grow where
    freed holes do not fit new 64-byte-aligned blocks: a loop of 64 MB tensors among smaller ones peaked
    334 MB above its start, against 126 MB with glibc's defaults and 146 MB with these bounds; blocks of
    32 MB and more still go straight to ``mmap`` and back to the system when freed. A lower bound costs
    elsewhere: at 8 MB, the linear attacker's 11 MB float64 arrays on Adult went to ``mmap`` at every
    allocation (0.31-0.36 s against 0.23 s at 32 MB). Returns whether the settings took effect: only glibc
    (Linux) has ``mallopt``; elsewhere this does nothing.
    """
    if not sys.platform.startswith("linux"):
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt  # the running process's C library
    except (OSError, AttributeError):  # musl and others without mallopt
        return False
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    # mallopt returns 1 on success; setting either threshold also ends glibc's on-the-fly adjustment of both.
    return bool(mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and bool(mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD))
