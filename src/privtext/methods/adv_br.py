"""ADV with a best-response adversary (not in the papers): before each encoder update the adversaries take
``adversary_steps`` updates of their own on the current, detached representation, so the encoder is pushed
against an adversary near its best response instead of one that lags a step behind.

Why: with one simultaneous update (``adv``, FEDERATE Algorithm 1) the encoder learns to make its own,
lagging adversary confidently wrong; the attribute stays encoded (inverted) and a fresh attacker recovers it,
often better than from NON-PRIV (FEDERATE's published Table 1 shows this on Twitter, CelebA and Adult too).
Constant λ = 3 and batch 64 give the adversary many updates per epoch; the rest is FEDERATE's architecture.
"""

from __future__ import annotations

from privtext.methods.spec import ADVERSARIAL, FEDERATE_FAMILY, MethodSpec

SPEC = MethodSpec("adv_br", grid_params=("lambda",), defaults={
    **FEDERATE_FAMILY, **ADVERSARIAL,
    "lambda": 3.0, "lambda_schedule": "constant", "adversary_steps": 10, "batch_size": 64,
}, label="ADV-BR", colour="#999933", marker="d")
