"""`attack.attackers: claims`: per dataset, the attackers the claims read there (privtext.claims.attackers)."""

from __future__ import annotations

import pytest

from privtext.claims import cape, dpnr, federate
from privtext.attack.attackers import ATTACKERS
from privtext.claims.attackers import CLAIMS, READ_BY_DATASET, attackers_for, read_by_the_claims
from privtext.data import BUILDERS
from privtext.claims.context import CAPE_ATTACKER, DPNR_ATTACKER, LEAKAGE_ATTACKER
from privtext.plan.config import ConfigError, load_config


@pytest.mark.parametrize("dataset", sorted(BUILDERS))
def test_the_table_is_what_the_claim_definitions_read(dataset):
    read = read_by_the_claims(dataset)
    if read:
        assert READ_BY_DATASET[dataset] == read
        assert attackers_for(CLAIMS, dataset) == list(read)
    else:  # no claim is about it: every attacker
        assert dataset not in READ_BY_DATASET
        assert attackers_for(CLAIMS, dataset) == list(ATTACKERS)


@pytest.mark.parametrize("dataset,expected", [
    ("ag_dpnr", ("mlp",)), ("blog", ("mlp",)), ("tp_uk", ("mlp",)),  # DPNR's and CAPE's datasets
    ("adult", ("sklearn_mlp",)), ("celeba", ("sklearn_mlp",)),  # FEDERATE's
    ("demo", ("mlp", "sklearn_mlp")),  # synthetic: every paper's claims run on it
])
def test_the_attackers_read_on_a_dataset(dataset, expected):
    assert read_by_the_claims(dataset) == expected


def test_every_claim_finds_its_attacker_on_every_dataset_it_is_judged_on():
    by_paper = {"DPNR": DPNR_ATTACKER, "CAPE": CAPE_ATTACKER, "FEDERATE": LEAKAGE_ATTACKER}
    for claim in (*dpnr.CLAIMS, *cape.CLAIMS, *federate.CLAIMS):
        for dataset in (*claim.all_datasets, *claim.substitutes, "demo"):
            assert by_paper[claim.paper] in attackers_for(CLAIMS, dataset), (claim.id, dataset)


def test_resolving_claims_imports_neither_the_claims_nor_pandas():
    import subprocess
    import sys

    code = ("import sys; from privtext.claims.attackers import attackers_for; attackers_for('claims', 'adult'); "
            "print(sorted(m for m in ('pandas', 'privtext.claims.context', 'torch') if m in sys.modules))")
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout == "[]\n"


def test_attackers_for_a_list_is_the_list_and_claims_resolves_per_dataset():
    assert attackers_for(["linear"], "ag_dpnr") == ["linear"]
    assert attackers_for(CLAIMS, "adult") == ["sklearn_mlp"]
    with pytest.raises(ValueError, match="'mlp'"):
        attackers_for("mlp", "adult")


def test_the_schema_takes_claims_or_a_list_and_nothing_else():
    assert load_config(overrides={"attack": {"attackers": "claims"}})["attack"]["attackers"] == "claims"
    assert load_config(overrides={"attack": {"attackers": ["mlp"]}})["attack"]["attackers"] == ["mlp"]
    with pytest.raises(ConfigError):
        load_config(overrides={"attack": {"attackers": "strongest"}})
