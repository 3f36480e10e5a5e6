"""Adversarial + Multiple (Han et al. 2021, EACL): K = 3 adversaries per private attribute behind the
gradient reversal layer, plus the orthogonality penalty λ_orth·Σ_{i<j} ||H_iᵀH_j||_F² on their hidden
representations, which diversifies the adversaries (it does not train the encoder; see base.py).

λ_orth defaults to 0.5, the fixed weight of FEDERATE's reference code; FEDERATE's grid is [0.1, 1.0].
"""

from __future__ import annotations

from typing import Any

from privtext.methods.base import ADVERSARIAL, FEDERATE_FAMILY, NeuralMethod


class MultiAdv(NeuralMethod):
    name = "multiadv"
    grid_params = ("lambda", "lambda_orth")
    defaults: dict[str, Any] = {**FEDERATE_FAMILY, **ADVERSARIAL, "lambda_orth": 0.5, "n_adversaries": 3}
