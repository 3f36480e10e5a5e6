"""Noise (FEDERATE's name for Lyu et al. 2020 with a corrected analysis): C(l1(E(h))), i.e. L1
normalisation and Lap(2/ε) noise, trained with fresh noise (robust training); no adversary.

ε defaults to 8, the smallest value of FEDERATE's grid {8, …, 20}; 45 epochs with noise (FEDERATE code).
"""

from __future__ import annotations

from privtext.methods.spec import FEDERATE_FAMILY, MethodSpec

SPEC = MethodSpec("noise", grid_params=("epsilon",), defaults={**FEDERATE_FAMILY, "layer": "l1", "epsilon": 8.0, "epochs": 45},
                  label="Noise", colour="#56B4E9", marker="^")
