"""Adversarial + Multiple (Han et al. 2021, EACL): K = 3 adversaries per private attribute behind the
gradient reversal layer, plus the orthogonality penalty λ_orth·Σ_{i<j} ||H_iᵀH_j||_F² on their hidden
representations, which diversifies the adversaries (it does not train the encoder; see base.py).

λ_orth defaults to 0.5, the fixed weight of FEDERATE's reference code; FEDERATE's grid is [0.1, 1.0].
"""

from __future__ import annotations

from privtext.methods.spec import ADVERSARIAL, FEDERATE_FAMILY, MethodSpec

SPEC = MethodSpec("multiadv", grid_params=("lambda", "lambda_orth"),
                defaults={**FEDERATE_FAMILY, **ADVERSARIAL, "lambda_orth": 0.5, "n_adversaries": 3},
                  label="Multi-adv", colour="#8C6D31", marker="D")
