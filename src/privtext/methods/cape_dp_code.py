"""CAPE's DP with the reference code's noise (``minmax_cape_code``: one Lap(1/ε) vector per model, not DP), the
code twin of ``cape_dp``: a claims row with the code's mechanism compares CAPE and its DP ablation under one
mechanism (C2, C5; docs/claims.md, "Causes")."""

from __future__ import annotations

from privtext.methods.cape_dp import SPEC as CAPE_DP
from privtext.methods.spec import MethodSpec

SPEC = MethodSpec("cape_dp_code", grid_params=("epsilon",), defaults={**CAPE_DP.defaults, "layer": "minmax_cape_code"},
                  label="CAPE DP (code's noise)", colour="#009E73", marker="4")
