"""FEDERATE (Maheshwari et al. 2022, Algorithm 1): L1-normalised representation plus Lap(2/ε) noise
(paper Eq. 3; the reference code's L2 normalisation is not reproduced), and one adversary per private
attribute behind a gradient reversal layer with λ_e = λ·(2/(1+exp(−7e/E)) − 1).

ε defaults to 8 (smallest of FEDERATE's grid), λ to 1.0 (within its grid 0.1 … 2.9); 45 epochs with noise.
"""

from __future__ import annotations

from privtext.methods.spec import ADVERSARIAL, FEDERATE_FAMILY, MethodSpec

SPEC = MethodSpec("federate", grid_params=("epsilon", "lambda"),
                defaults={**FEDERATE_FAMILY, **ADVERSARIAL, "layer": "l1", "epsilon": 8.0, "epochs": 45},
                  label="FEDERATE", colour="#0072B2", marker="*")
