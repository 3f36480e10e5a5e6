"""CAPE's DP with Lap(D/ε) noise (``minmax_calibrated``): ε-DP as nominal, for the equal-effective-ε rows."""

from __future__ import annotations

from privtext.methods.cape_dp import SPEC as CAPE_DP
from privtext.methods.spec import MethodSpec

SPEC = MethodSpec("cape_dp_calibrated", grid_params=("epsilon",),
                  defaults={**CAPE_DP.defaults, "layer": "minmax_calibrated"},
                  label="CAPE DP (calibrated)", colour="#009E73", marker="3")
