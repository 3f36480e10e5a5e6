"""DPNR's ADV: DPNR's architecture and training (tanh representation, dropout, linear classifier, AdamW, early
stopping on dev accuracy; :mod:`privtext.methods.dpnr`'s defaults) with no privacy layer and one adversary per
private attribute behind a gradient reversal layer, CE(y) − λ·CE(z).

DPNR compares against "the adversarial learning (ADV) (Coavoux et al., 2018)" (§4.5, Tables 4–7) without
describing it further; Coavoux et al.'s defence changes the main model's training objective so that an
adversary predicting the private variables from the representation is penalised. DPNR's claims (D2, D6, D7) set
DPNR against that ADV, so the like-for-like baseline is DPNR's own model with the adversary added: the only
difference between ``dpnr_adv`` and ``dpnr_nonpriv`` is the adversary, between ``dpnr_adv`` and ``dpnr`` the
adversary instead of the noise. ``adv`` is FEDERATE's architecture with an adversary, a different model.

Where DPNR is silent, and the choice made:

- λ and its schedule: DPNR gives neither. λ = 1, constant: CAPE's setting (Table 3, a constant λ through a
  reversal layer, §2.2) for the adversarial approach it compares with "a sample adversarial learning approach
  (Coavoux et al., 2018)" (§1), and the ``adv`` λ the DPNR studies already run. A study may sweep ``lambda``.
- the adversary: DPNR describes only its attacker, "a 2-layer MLP with 512 hidden units and ReLU activation"
  (§4.3); the adversary that simulates it during training is the same MLP (one hidden layer of 512, ReLU,
  DPNR's dropout 0.1), on the released representation tanh(Linear(h)) of the input's size.
- the update: one simultaneous update per batch through the reversal layer (the project's convention,
  FEDERATE Algorithm 1), no extra adversary steps.
"""

from __future__ import annotations

from privtext.methods.dpnr_nonpriv import SPEC as DPNR_NONPRIV
from privtext.methods.spec import ADVERSARIAL, MethodSpec

SPEC = MethodSpec("dpnr_adv", grid_params=("lambda",), defaults={
    **DPNR_NONPRIV.defaults, **ADVERSARIAL,
    "lambda": 1.0, "lambda_schedule": "constant", "adversary_hidden": [512],
}, label="DPNR ADV", colour="#E69F00", marker="4")  # ADV's colour, as CAPE's Adv. has
