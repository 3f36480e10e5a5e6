"""NON-PRIV (DPNR) / Base (CAPE) / Unconstrained (FEDERATE): C(E(h)) trained with cross-entropy on y."""

from __future__ import annotations

from privtext.methods.spec import FEDERATE_FAMILY, MethodSpec

SPEC = MethodSpec("nonpriv", defaults={**FEDERATE_FAMILY},
                  label="NON-PRIV", colour="#000000", marker="o")
