"""CAPE's Base: CAPE's architecture and hyper-parameters with neither noise nor adversary (CAPE Table 3), so a
comparison with ``cape`` isolates what CAPE adds (docs/claims.md). Its observers (one head per private attribute
that learns from the representation and never shapes it) are the jointly trained attacker Table 3 reports for it.
"""

from __future__ import annotations

from privtext.methods.cape import SPEC as CAPE
from privtext.methods.spec import ADVERSARIAL, MethodSpec, without

SPEC = MethodSpec("cape_base", defaults={**without(CAPE.defaults, "layer", "epsilon", *ADVERSARIAL), "observers": True},
                  label="CAPE Base", colour="#000000", marker="H")
