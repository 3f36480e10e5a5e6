"""CAPE with min-max normalisation and Lap(D/ε) noise (``minmax_calibrated``): ε-DP as nominal.

CAPE's published layer (``minmax``, Lap(1/ε), D = 256) is (256·ε)-DP; this spec is the same model at an honest
ε, for the claims study's equal-``epsilon_effective`` comparisons (docs/claims.md).
"""

from __future__ import annotations

from privtext.methods.cape import SPEC as CAPE
from privtext.methods.spec import MethodSpec

SPEC = MethodSpec("cape_calibrated", grid_params=("epsilon", "lambda"),
                  defaults={**CAPE.defaults, "layer": "minmax_calibrated"},
                  label="CAPE (calibrated)", colour="#009E73", marker="h")
