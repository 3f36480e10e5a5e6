"""DPNR's NON-PRIV: DPNR's architecture and training (tanh representation, dropout, linear classifier, AdamW,
early stopping) with no privacy layer. DPNR's Table 4 compares against this model, so the claims do too: the
difference between it and ``dpnr`` is the noise alone, not the architecture (docs/claims.md).
"""

from __future__ import annotations

from privtext.methods.dpnr import SPEC as DPNR
from privtext.methods.spec import MethodSpec, without

SPEC = MethodSpec("dpnr_nonpriv", defaults=without(DPNR.defaults, "layer", "epsilon"),
                  label="DPNR NON-PRIV", colour="#000000", marker="8")
