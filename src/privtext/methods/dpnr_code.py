"""DPNR with the reference code's noise (``minmax_dpnr_code``): one Lap(1/ε) scalar per example, added to every
coordinate of the min-max vector. Not DP at any ε; it is here so a claim can be checked with the mechanism
DPNR's published numbers came from, beside the correct layer (docs/claims.md, "Causes").
"""

from __future__ import annotations

from privtext.methods.dpnr import SPEC as DPNR
from privtext.methods.spec import MethodSpec

SPEC = MethodSpec("dpnr_code", grid_params=("epsilon",), defaults={**DPNR.defaults, "layer": "minmax_dpnr_code"},
                  label="DPNR (code's noise)", colour="#D55E00", marker="1")
