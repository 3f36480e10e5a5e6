"""MAJORITY (DPNR Table 4) / Random: predict the most frequent training class; nothing to train.

The release is a constant zero vector of dimension 1, so any attacker can only learn its majority rate.
"""

from __future__ import annotations

from privtext.methods.spec import MethodSpec

SPEC = MethodSpec("majority", model="privtext.methods.majority_model:Majority",
                  label="MAJORITY", colour="#999999", marker="x")
