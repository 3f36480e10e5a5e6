"""CAPE's DP: CAPE's architecture and hyper-parameters with its published min-max layer (Lap(1/ε), a
(D·ε)-DP release) and no adversary (CAPE Table 3); observers as ``cape_base`` has."""

from __future__ import annotations

from privtext.methods.cape import SPEC as CAPE
from privtext.methods.spec import ADVERSARIAL, MethodSpec, without

SPEC = MethodSpec("cape_dp", grid_params=("epsilon",), defaults={**without(CAPE.defaults, *ADVERSARIAL), "observers": True},
                  label="CAPE DP", colour="#009E73", marker=">")
