"""The attackers the claims read, per dataset: what ``attack.attackers: claims`` trains (docs/claims.md, "The
claims studies"). DPNR's and CAPE's claims read the ``mlp`` attacker, FEDERATE's its Leakage (``sklearn_mlp``);
no claim reads ``linear``. A dataset that no claim is about keeps every attacker.

The claim definitions import pandas, so they are imported only when ``claims`` is asked for: planning a
workflow with a list of attackers imports nothing here.
"""

from __future__ import annotations

import functools
from typing import Sequence

CLAIMS = "claims"


@functools.cache  # asked once per attack job when a workflow is planned
def attackers_read(dataset: str) -> tuple[str, ...]:
    """The attackers some claim reads on ``dataset`` (the paper's own, a substitute or the synthetic one),
    sorted; every attacker of the registry where no claim applies."""
    from privtext.claims import cape, dpnr, federate
    from privtext.claims.context import CAPE_ATTACKER, DPNR_ATTACKER, LEAKAGE_ATTACKER

    by_paper = {"DPNR": DPNR_ATTACKER, "CAPE": CAPE_ATTACKER, "FEDERATE": LEAKAGE_ATTACKER}
    read = {by_paper[claim.paper] for claim in (*dpnr.CLAIMS, *cape.CLAIMS, *federate.CLAIMS) if claim.kind(dataset)}
    if read:
        return tuple(sorted(read))
    from privtext.attack.attackers import ATTACKERS  # imports torch: only for a dataset no claim is about

    return tuple(ATTACKERS)


def attackers_for(setting: Sequence[str] | str, dataset: str) -> list[str]:
    """The attackers a grid point of ``dataset`` trains under ``attack.attackers``: the list itself, or with
    ``claims`` those :func:`attackers_read` gives."""
    if setting == CLAIMS:
        return list(attackers_read(dataset))
    if isinstance(setting, str):
        raise ValueError(f"attack.attackers must be a list of attackers or {CLAIMS!r}, got {setting!r}")
    return list(setting)
