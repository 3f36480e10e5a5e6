"""CAPE's Base: CAPE's architecture and hyper-parameters with neither noise nor adversary (CAPE Table 3), so a
comparison with ``cape`` isolates what CAPE adds (docs/claims.md).
"""

from __future__ import annotations

from privtext.methods.cape import SPEC as CAPE
from privtext.methods.spec import ADVERSARIAL, MethodSpec, without

SPEC = MethodSpec("cape_base", defaults=without(CAPE.defaults, "layer", "epsilon", *ADVERSARIAL),
                  label="CAPE Base", colour="#000000", marker="H")
