"""A claims row's departures from the paper's procedure, derived from what its runs recorded (issue 40,
acceptance 1): rows of every kind (frozen / fine-tuned, fresh / joint attacker, capped / uncapped, code / DP
mechanism, substitute data, cut grids) give the terms their settings imply, and a row whose runs recorded
other settings than its column says is caught."""

from __future__ import annotations

from pathlib import Path

import pytest

from privtext.claims import cape, dpnr, federate
from privtext.claims.departures import VOCABULARY, GridRead, RunSettings, derive

DOCS = Path(__file__).resolve().parents[1] / "docs" / "claims.md"


def _run(method: str = "dpnr", encoder: str = "minilm", **recorded) -> RunSettings:
    return RunSettings(f"results/runs/x/{encoder}/{method}/seed~10", method, encoder, **recorded)


def test_a_frozen_capped_dpnr_row_departs_on_encoder_frozen_size_epochs_and_mechanism():
    runs = [_run(finetune=False, n_train=10_000, n_train_available=27_133, epochs_planned=20, epochs_run=12,
                 layer="minmax", differentially_private=True, batch_size=64),
            _run("dpnr_nonpriv", finetune=False, n_train=10_000, n_train_available=27_133, epochs_planned=20,
                 epochs_run=28, batch_size=64)]
    found = derive(dpnr.PROCEDURE, "ag_dpnr", "the paper's", runs, ["mlp"], [])
    assert found.terms == ["encoder", "frozen", "size", "mechanism", "epochs"]
    assert "10000 of 27133" in found.detail_text() and "minilm for bert-base-cased" in found.detail_text()
    assert "up to 20–28 epochs for 4" in found.detail_text() and "heads on frozen minilm" in found.detail_text()
    # a majority-class predictor trains nothing: it departs on neither frozen, batch nor epochs
    majority = [_run("majority", finetune=False, n_train=10_000, n_train_available=10_000)]
    assert derive(dpnr.PROCEDURE, "ag_dpnr", "the paper's", majority, [], []).terms == ["encoder"]


def test_a_fine_tuned_uncapped_row_at_the_papers_epochs_with_the_codes_mechanism_departs_on_the_encoder_alone():
    runs = [_run("dpnr_code", "minilm+finetune", finetune=True, n_train=500, n_train_available=500,
                 epochs_planned=4, epochs_run=4, layer="minmax_dpnr_code", differentially_private=False)]
    assert derive(dpnr.PROCEDURE, "ag_dpnr", "the paper's", runs, ["mlp"], []).terms == ["encoder"]
    bert = [_run("dpnr", "bert-base-cased+finetune", finetune=True, epochs_planned=4, epochs_run=4,
                 layer="minmax_dpnr_code", differentially_private=False)]
    assert derive(dpnr.PROCEDURE, "ag_dpnr", "the paper's", bert, [], []).terms == []


def test_a_fresh_attacker_departs_only_where_the_paper_measured_its_joint_adversary():
    runs = [_run("cape", finetune=False, layer="minmax", differentially_private=True)]
    on_cape = derive(cape.PROCEDURE, "tp_uk", "the paper's", runs, ["mlp"], [])
    assert "attacker" in on_cape.terms and "frozen" not in on_cape.terms  # CAPE froze BERT too
    assert "fresh mlp for the joint adversary" in on_cape.detail_text()
    assert "attacker" not in derive(dpnr.PROCEDURE, "blog", "the paper's", runs, ["mlp"], []).terms
    assert "attacker" not in derive(cape.PROCEDURE, "tp_uk", "the paper's", runs, [], []).terms  # no attacker read
    # the jointly trained adversary is the paper's own measure (privtext.attack.joint)
    assert "attacker" not in derive(cape.PROCEDURE, "tp_uk", "the paper's", runs, ["joint"], []).terms


def test_federate_on_its_own_features_departs_on_batch_mechanism_grid_and_substitute_data():
    runs = [_run("federate", "features", n_train=10_000, n_train_available=10_000, batch_size=200,
                 epochs_planned=45, epochs_run=30, layer="l1", differentially_private=True)]
    reads = [GridRead("federate", "lambda", (0.1, 0.3, 0.5), (0.1, 0.5))]
    found = derive(federate.PROCEDURE, "celeba", "the paper's", runs, ["sklearn_mlp"], reads)
    assert found.terms == ["grid", "mechanism", "batch"]  # its features are the paper's: no encoder, no frozen
    assert "federate lambda 2 of 3 paper values" in found.detail_text()
    assert derive(federate.PROCEDURE, "adult", "substitute", runs, [], []).terms[0] == "data"
    whole = [GridRead("noise", "epsilon", (8.0, 10.0), (8.0, 9.0, 10.0))]
    assert "grid" not in derive(federate.PROCEDURE, "adult", "the paper's", runs, [], whole).terms


def test_every_term_is_in_the_vocabulary_and_docs_claims_defines_each():
    text = DOCS.read_text()
    section = text.split("## Departures", 1)[1].split("\n## ", 1)[0]
    for term in VOCABULARY:
        assert f"| `{term}` |" in section, term
    with pytest.raises(ValueError, match="not in the vocabulary"):
        derive(dpnr.PROCEDURE, "blog", "the paper's", [], [], []).add("hardware", "a CPU")
