"""ADV (DPNR, FEDERATE) / Adv. (CAPE): one adversary per private attribute behind a gradient reversal
layer, CE(y) − λ·CE(z); λ follows FEDERATE's schedule (γ = 7) unless ``lambda_schedule="constant"``."""

from __future__ import annotations

from privtext.methods.spec import ADVERSARIAL, FEDERATE_FAMILY, MethodSpec

SPEC = MethodSpec("adv", grid_params=("lambda",), defaults={**FEDERATE_FAMILY, **ADVERSARIAL},
                  label="ADV", colour="#E69F00", marker="s")
