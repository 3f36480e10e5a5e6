"""The job processes' allocator setting: freed blocks are reused instead of faulted in again."""

import subprocess
import sys

import pytest

# Three 4 MB arrays allocated and freed together, as a training step's activations and gradients are; counts
# the page faults of 50 such steps after 5 warm-up steps.
STEPS = """
import resource, sys
import numpy as np
if sys.argv[1] == "keep":
    from privtext.standins.allocator import keep_freed_memory
    assert keep_freed_memory()
def step():
    arrays = [np.ones(1 << 19) for _ in range(3)]
    return sum(float(a[-1]) for a in arrays)
for _ in range(5):
    step()
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for _ in range(50):
    step()
print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
"""


def _faults(mode: str) -> int:
    out = subprocess.run([sys.executable, "-c", STEPS, mode], capture_output=True, text=True, check=True)
    return int(out.stdout.strip())


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="mallopt is glibc's")
def test_freed_blocks_are_reused_instead_of_faulted_in_every_step() -> None:
    # glibc's defaults give memory back when the step frees its arrays, so every step faults about 1,000
    # pages (4 MB) in again
    assert _faults("default") > 50 * 400
    assert _faults("keep") < 50
