"""CAPE's Adv.: CAPE's architecture, hyper-parameters and adversary (constant λ), without noise (CAPE Table 3)."""

from __future__ import annotations

from privtext.methods.cape import SPEC as CAPE
from privtext.methods.spec import MethodSpec, without

SPEC = MethodSpec("cape_adv", grid_params=("lambda",), defaults=without(CAPE.defaults, "layer", "epsilon"),
                  label="CAPE Adv.", colour="#E69F00", marker="<")
