"""NON-PRIV (DPNR) / Base (CAPE) / Unconstrained (FEDERATE): C(E(h)) trained with cross-entropy on y."""

from __future__ import annotations

from typing import Any

from privtext.methods.base import FEDERATE_FAMILY, NeuralMethod


class NonPriv(NeuralMethod):
    name = "nonpriv"
    grid_params = ()
    defaults: dict[str, Any] = {**FEDERATE_FAMILY}
