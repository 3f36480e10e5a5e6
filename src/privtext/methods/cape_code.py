"""CAPE with the reference code's noise (``minmax_cape_code``): one Lap(1/ε) vector drawn when the model is
built and added to every example. Not DP at any ε; it is here so a claim can be checked with the mechanism
CAPE's published numbers came from, beside the correct layer (docs/claims.md, "Causes").
"""

from __future__ import annotations

from privtext.methods.cape import SPEC as CAPE
from privtext.methods.spec import MethodSpec

SPEC = MethodSpec("cape_code", grid_params=CAPE.grid_params, defaults={**CAPE.defaults, "layer": "minmax_cape_code"},
                  label="CAPE (code's noise)", colour="#009E73", marker="2")
