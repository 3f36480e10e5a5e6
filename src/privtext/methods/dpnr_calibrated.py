"""DPNR with min-max normalisation and Lap(D/ε) noise (``minmax_calibrated``): ε-DP as nominal.

DPNR's published layer (``minmax``, Lap(1/ε)) is (D·ε)-DP; this spec is the same model at an honest ε, so the
claims study can compare DPNR with the other methods at equal ``epsilon_effective`` (docs/claims.md).
"""

from __future__ import annotations

from privtext.methods.dpnr import SPEC as DPNR
from privtext.methods.spec import MethodSpec

SPEC = MethodSpec("dpnr_calibrated", grid_params=("epsilon",), defaults={**DPNR.defaults, "layer": "minmax_calibrated"},
                  label="DPNR (calibrated)", colour="#D55E00", marker="p")
