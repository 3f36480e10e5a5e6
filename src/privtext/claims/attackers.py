"""The attackers the claims read, per dataset: what ``attack.attackers: claims`` trains (docs/claims.md, "The
claims studies"). DPNR's and CAPE's claims read the ``mlp`` attacker, FEDERATE's its Leakage (``sklearn_mlp``);
no claim reads ``linear``. A dataset that no claim is about keeps every attacker.

The table is asked for in every train job, which must not import pandas (tests/test_runs.py); the claim
definitions do, so the table is written out here and tests/test_claims_attackers.py holds it to them
(:func:`read_by_the_claims`): a claim on a new dataset fails that test until the table has it.
"""

from __future__ import annotations

from typing import Mapping, Sequence

CLAIMS = "claims"
READ_BY_DATASET: Mapping[str, tuple[str, ...]] = {
    "ag_dpnr": ("mlp",), "blog": ("mlp",), "tp_uk": ("mlp",), "tp_us": ("mlp",),  # DPNR's and CAPE's
    "adult": ("sklearn_mlp",), "bios": ("sklearn_mlp",), "celeba": ("sklearn_mlp",),  # FEDERATE's
    "twitter": ("sklearn_mlp",),
    "demo": ("mlp", "sklearn_mlp"),  # synthetic: every paper's claims run on it
}


def read_by_the_claims(dataset: str) -> tuple[str, ...]:
    """The attackers some claim definition reads on ``dataset`` (the paper's own, a substitute or the synthetic
    one), sorted: what :data:`READ_BY_DATASET` must say. Imports the claims, and with them pandas."""
    from privtext.claims import cape, dpnr, federate
    from privtext.claims.context import CAPE_ATTACKER, DPNR_ATTACKER, LEAKAGE_ATTACKER

    by_paper = {"DPNR": DPNR_ATTACKER, "CAPE": CAPE_ATTACKER, "FEDERATE": LEAKAGE_ATTACKER}
    return tuple(sorted({by_paper[claim.paper] for claim in (*dpnr.CLAIMS, *cape.CLAIMS, *federate.CLAIMS)
                         if claim.kind(dataset)}))


def attackers_for(setting: Sequence[str] | str, dataset: str) -> list[str]:
    """The attackers a grid point of ``dataset`` trains under ``attack.attackers``: the list itself, or with
    ``claims`` those the claims read there (every attacker of the registry where no claim applies)."""
    if setting == CLAIMS:
        if dataset in READ_BY_DATASET:
            return list(READ_BY_DATASET[dataset])
        from privtext.attack.attackers import ATTACKERS  # imports torch: only for a dataset no claim is about

        return list(ATTACKERS)
    if isinstance(setting, str):
        raise ValueError(f"attack.attackers must be a list of attackers or {CLAIMS!r}, got {setting!r}")
    return list(setting)
