"""ADV (DPNR, FEDERATE) / Adv. (CAPE): one adversary per private attribute behind a gradient reversal
layer, CE(y) − λ·CE(z); λ follows FEDERATE's schedule (γ = 7) unless ``lambda_schedule="constant"``."""

from __future__ import annotations

from typing import Any

from privtext.methods.base import ADVERSARIAL, FEDERATE_FAMILY, NeuralMethod


class Adv(NeuralMethod):
    name = "adv"
    grid_params = ("lambda",)
    defaults: dict[str, Any] = {**FEDERATE_FAMILY, **ADVERSARIAL}
