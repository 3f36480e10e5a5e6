"""The claims table on hand-made measures (intervals over seeds alone: no per-example records) and on a tiny
real run of the claims rule (intervals over seeds and test examples, from the runs' own records); the papers'
published numbers scored by the same reading (issue 20, acceptance 3)."""

import json
import math
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from privtext.report.artefacts.common import ArtefactInputs, normalise_published, prepare_measures
from privtext.claims.table import (CLAIMS, COLUMNS, EQUAL_EFFECTIVE, L1_SETTING, NOMINAL, REFERENCE_CODE, claims_table,
                             paper_readings)

SEEDS = (10, 20, 30, 40, 50)
META = {"toy": {"private_attributes": {"gender": ["m", "f"]}, "label_names": ["a", "b"],
                "attribute_kinds": {"gender": "demographic"}}}
from conftest import SHARED

PUBLISHED = SHARED / "paper_results" / "published.csv"


def _rows(method: str, measure: str, values: dict[int, float], attacker: str = "", **params: float) -> list[dict]:
    path = "/".join(f"{k}~{v:g}" for k, v in params.items())
    return [{"study": "claims", "dataset": "toy", "encoder": "minilm", "method": method, "measure": measure, "split": "test",
             "attribute": "", "attacker": attacker, "group": "", "seed": seed, "value": value,
             "run_dir": f"results/runs/toy/minilm/{method}/mu~0/{path}/seed~{seed}",
             **{f"param_{k}": v for k, v in params.items()}} for seed, value in values.items()]


def _privacy(method: str, values: list[float], **params: float) -> list[dict]:
    return _rows(method, "empirical_privacy_demographic", dict(zip(SEEDS, values)), "mlp", **params)


def _inputs(*groups: list[dict]) -> ArtefactInputs:
    frame = pd.DataFrame([row for group in groups for row in group])
    return ArtefactInputs(measures=prepare_measures(frame), metas=META)


def _row(table: pd.DataFrame, claim: str, setting: str = NOMINAL) -> pd.Series:
    hit = table[(table["claim"] == claim) & (table["dataset"] == "toy") & (table["setting"] == setting)]
    assert len(hit) == 1, hit
    return hit.iloc[0]


def test_a_difference_claim_holds_with_the_t_interval_of_the_paired_differences_over_seeds():
    dpnr, adv = [0.60, 0.64, 0.62, 0.61, 0.63], [0.30, 0.29, 0.35, 0.31, 0.33]
    row = _row(claims_table(_inputs(_privacy("dpnr", dpnr, epsilon=0.05), _privacy("adv", adv, **{"lambda": 1.0})),
                            ["D2"]), "D2")
    differences = np.subtract(dpnr, adv)
    half = stats.t.ppf(0.975, 4) * differences.std(ddof=1) / math.sqrt(5)
    assert row["holds"] == "holds" and row["n_seeds"] == 5
    assert (row["estimate"], row["ci_low"], row["ci_high"]) == pytest.approx(
        (differences.mean(), differences.mean() - half, differences.mean() + half))
    assert row["p_value"] < 0.025 and row["grid_points"].count("results/runs/toy") == 10
    per_seed = json.loads(row["per_seed"])[0]
    assert per_seed["values"] == {str(s): pytest.approx(d) for s, d in zip(SEEDS, differences)}
    assert row["seeds"] == "10, 20, 30, 40, 50" and row["attacker"] == "mlp" and row["dataset_kind"] == "substitute"
    assert row["reading"].endswith("superiority: a − b > 0")


def test_a_difference_against_the_data_is_contradicted_and_a_noisy_one_not_shown():
    contradicted = claims_table(_inputs(_privacy("dpnr", [0.2, 0.21, 0.22, 0.2, 0.21], epsilon=0.05),
                                        _privacy("adv", [0.3, 0.32, 0.31, 0.3, 0.3], **{"lambda": 1.0})), ["D2"])
    noisy = claims_table(_inputs(_privacy("dpnr", [0.2, 0.4, 0.3, 0.25, 0.35], epsilon=0.05),
                                 _privacy("adv", [0.3] * 5, **{"lambda": 1.0})), ["D2"])
    assert _row(contradicted, "D2")["holds"] == "contradicted"
    assert _row(noisy, "D2")["holds"] == "not shown"


def test_fewer_than_five_seeds_are_untestable_and_say_so():
    table = claims_table(_inputs(_privacy("dpnr", [0.6, 0.62, 0.61, 0.6], epsilon=0.05),
                                 _privacy("adv", [0.3, 0.31, 0.3, 0.3], **{"lambda": 1.0})), ["D2"])
    row = _row(table, "D2")
    assert row["holds"] == "untestable" and "5 needed" in row["reason"]


def test_the_equal_effective_setting_reads_the_calibrated_twin():
    table = claims_table(_inputs(_privacy("dpnr", [0.6, 0.6, 0.61, 0.62, 0.6], epsilon=0.05),
                                 _privacy("dpnr_calibrated", [0.1, 0.1, 0.12, 0.11, 0.1], epsilon=0.05),
                                 _privacy("adv", [0.3, 0.3, 0.31, 0.3, 0.32], **{"lambda": 1.0})), ["D2"])
    assert _row(table, "D2", NOMINAL)["holds"] == "holds"
    equal = _row(table, "D2", EQUAL_EFFECTIVE)
    assert equal["holds"] == "contradicted" and "dpnr_calibrated" in equal["measurement"]
    assert "dpnr_calibrated" in equal["grid_points"] and "/dpnr/" not in equal["grid_points"]


def test_d1_has_a_row_with_the_reference_codes_mechanism_which_is_never_called_dp():
    accuracy = {"dpnr_nonpriv": [0.80, 0.81, 0.80, 0.8, 0.81], "dpnr": [0.5, 0.52, 0.51, 0.5, 0.5],
                "dpnr_code": [0.80, 0.81, 0.81, 0.8, 0.8]}
    groups = [_rows(m, "accuracy", dict(zip(SEEDS, v)), **({} if m == "dpnr_nonpriv" else {"epsilon": 0.05}))
              for m, v in accuracy.items()]
    privacy = [_privacy("dpnr_nonpriv", [0.3] * 5), _privacy("dpnr", [0.6, 0.62, 0.61, 0.6, 0.61], epsilon=0.05),
               _privacy("dpnr_code", [0.6, 0.61, 0.6, 0.62, 0.6], epsilon=0.05)]
    table = claims_table(_inputs(*groups, *privacy), ["D1"])
    assert _row(table, "D1", NOMINAL)["holds"] == "contradicted"  # honest noise costs the accuracy
    code = _row(table, "D1", REFERENCE_CODE)
    assert code["holds"] == "holds" and "dpnr_code" in code["grid_points"] and "/dpnr/" not in code["grid_points"]
    assert "dpnr_code: not DP" in code["epsilon_effective"]


def test_an_equivalence_claim_holds_within_the_margin_and_is_contradicted_beyond_it():
    close = claims_table(_inputs(_privacy("dpnr", [0.500, 0.502, 0.499, 0.501, 0.5], epsilon=0.05),
                                 _privacy("majority", [0.5] * 5)), ["D3"])
    far = claims_table(_inputs(_privacy("dpnr", [0.30, 0.31, 0.29, 0.3, 0.31], epsilon=0.05),
                               _privacy("majority", [0.5] * 5)), ["D3"])
    assert _row(close, "D3")["holds"] == "holds"
    assert _row(far, "D3")["holds"] == "contradicted"
    assert "equivalence: |a − b| < 0.02" in _row(far, "D3")["reading"] and "2 points" in _row(far, "D3")["margin_reason"]


def test_a_non_inferiority_part_accepts_a_gain_and_is_contradicted_by_a_loss_beyond_the_margin():
    def d1(accuracy_dpnr):
        return _row(claims_table(_inputs(
            _privacy("dpnr", [0.6, 0.62, 0.61, 0.6, 0.61], epsilon=0.05),
            _privacy("dpnr_nonpriv", [0.3, 0.31, 0.3, 0.3, 0.3]),
            _rows("dpnr", "accuracy", dict(zip(SEEDS, accuracy_dpnr)), epsilon=0.05),
            _rows("dpnr_nonpriv", "accuracy", dict(zip(SEEDS, [0.80, 0.81, 0.80, 0.8, 0.81])))), ["D1"]), "D1")

    assert d1([0.90, 0.91, 0.90, 0.9, 0.91])["holds"] == "holds"  # a gain is not against "without lowering"
    lost = d1([0.50, 0.52, 0.51, 0.5, 0.5])
    assert lost["holds"] == "contradicted" and "accuracy" in lost["measurement"]
    assert "empirical privacy" in lost["parts"] and "→ holds" in lost["parts"]


def test_a_trend_claim_uses_spearman_per_seed_and_holds_when_every_seed_agrees():
    epsilons = (0.05, 0.5, 5.0)
    rows = [_privacy("dpnr", [0.9 - 0.1 * k + 0.01 * s for s in range(5)], epsilon=eps) for k, eps in enumerate(epsilons)]
    row = _row(claims_table(_inputs(*rows), ["D5"]), "D5")
    assert row["holds"] == "holds" and "Spearman" in row["measurement"]
    assert (row["estimate"], row["ci_low"], row["ci_high"]) == (-1.0, -1.0, -1.0)


def test_a_trend_with_too_few_values_is_untestable_and_says_why():
    rows = [_privacy("dpnr", [0.9, 0.8, 0.85, 0.8, 0.8], epsilon=0.05),
            _privacy("dpnr", [0.7, 0.6, 0.65, 0.6, 0.6], epsilon=5.0)]
    row = _row(claims_table(_inputs(*rows), ["D5"]), "D5")
    assert row["holds"] == "untestable" and "at least 3" in row["reason"]


def test_every_claim_has_a_row_no_two_repeat_a_measurement_and_missing_paper_datasets_are_untestable():
    table = claims_table(_inputs(_privacy("dpnr", [0.6] * 5, epsilon=0.05)))
    assert list(table.columns) == list(COLUMNS)
    assert set(table["claim"]) == set(CLAIMS)
    tp_uk = table[(table["claim"] == "C1") & (table["dataset"] == "tp_uk")].iloc[0]
    assert tp_uk["holds"] == "untestable" and "not in this run" in tp_uk["reason"]
    assert not table.duplicated(["claim", "dataset", "setting"]).any()
    # claims whose DP methods use the L1 layer have one row, where nominal and effective ε coincide
    assert set(table.loc[table["claim"] == "F4", "setting"]) == {L1_SETTING}
    # C3 is about TP-UK's own attributes (6-bin age): no substitute dataset stands in for it
    assert set(table.loc[table["claim"] == "C3", "dataset"]) == {"tp_uk"}


def test_a_part_resting_on_an_unconverged_run_is_untestable_with_that_reason():
    class Evidence:  # the two calls claims_table makes of privtext.claims.evidence.ExampleEvidence
        def replicates(self, row):
            return np.array([row.value])

        def run_info(self, run_dir):
            return {"n_train": 100, "converged": "/adv/" not in run_dir}

    inputs = _inputs(_privacy("dpnr", [0.6, 0.62, 0.61, 0.6, 0.63], epsilon=0.05),
                     _privacy("adv", [0.3, 0.31, 0.3, 0.32, 0.3], **{"lambda": 1.0}))
    row = _row(claims_table(inputs, ["D2"], evidence=Evidence()), "D2")
    assert row["holds"] == "untestable" and "5 of its 10 runs did not converge" in row["reason"]
    assert row["converged"] == "no" and row["train_rows"] == "100"

    class ShortEvidence(Evidence):  # converged, capped, but the adv runs stopped short of the rule's steps
        def run_info(self, run_dir):
            short = "/adv/" in run_dir
            return {"n_train": 100, "n_train_available": 250, "converged": True, "required_steps": 500,
                    "optimizer_steps": 150 if short else 500}

    row = _row(claims_table(inputs, ["D2"], evidence=ShortEvidence()), "D2")
    assert row["holds"] == "untestable" and "5 of its 10 runs took fewer optimiser steps" in row["reason"]
    assert row["converged"] == "yes" and row["train_rows"] == "100 of 250 (capped)"


def test_word_dropout_is_not_judged_on_feature_datasets():
    frame = pd.DataFrame(_privacy("dpnr", [0.6] * 5, epsilon=1.0)).assign(encoder="features")
    table = claims_table(ArtefactInputs(measures=prepare_measures(frame), metas=META), ["D4"])
    assert "toy" not in set(table["dataset"])


# --- the papers' own numbers, read the same way ----------------------------------------------------------------

@pytest.fixture(scope="module")
def paper_table() -> pd.DataFrame:
    if not PUBLISHED.exists():
        pytest.skip(f"{PUBLISHED} not present")
    return paper_readings(normalise_published(pd.read_csv(PUBLISHED)))


def _paper(table: pd.DataFrame, claim: str, dataset: str) -> str:
    return table[(table["claim"] == claim) & (table["dataset"] == dataset)]["paper_reading"].iloc[0]


@pytest.mark.parametrize("claim, dataset", [
    ("D3", "ag_dpnr"), ("D3", "blog"),  # DPNR's privacy 5.0 and 2.8 points above MAJORITY, against ±2
    ("D4", "tp_us"), ("D4", "ag_dpnr"), ("D4", "blog"),  # Table 3 loses 4.7–13.5 accuracy points at μ = 0.8
    ("F4", "adult"),  # Appendix D.5: Noise leaks less than FEDERATE on Adult
    ("F7", "adult"),  # FEDERATE's accuracy 0.82 points below INLP's
    ("F8", "adult"),  # Noise's TPR-gap above Adversarial's
])
def test_the_papers_own_numbers_that_miss_their_claim_as_read_say_so(paper_table, claim, dataset):
    assert _paper(paper_table, claim, dataset).startswith("does not meet the claim as read")


def test_the_papers_own_numbers_that_meet_their_claim_say_so(paper_table):
    assert _paper(paper_table, "D1", "ag_dpnr") == "meets the claim as read"
    assert _paper(paper_table, "D2", "blog") == "meets the claim as read"
    assert _paper(paper_table, "D5", "blog") == "not printed"  # Figure 3 is a plot: no numbers in the file
    assert set(paper_table["claim"]) == set(CLAIMS)


def test_no_margin_is_set_from_results():
    """Margins are module constants of the readings, fixed before any run is read."""
    from privtext.claims import table as claims, verdicts

    source = Path(claims.__file__).read_text() + Path(verdicts.__file__).read_text()
    assert not re.search(r"margin\s*=\s*[^,)\n]*(estimate|value|mean|measure)", source)


# --- a real run of the claims rule ----------------------------------------------------------------------------

TINY = {
    "datasets": ["demo"],
    "demo": {"n_examples": 400},
    "attack": {"attackers": ["mlp", "sklearn_mlp"]},
    "methods": {"dpnr_nonpriv": {"epochs": 1}, "dpnr": {"epochs": 1}, "dpnr_code": {"epochs": 1}},
    "studies": {"tiny_claims": {"datasets": ["demo"], "seeds": [10, 20, 30, 40, 50], "artefacts": True,
                                "methods": {"majority": {}, "dpnr_nonpriv": {}, "dpnr": {"epsilon": [0.05]},
                                            "dpnr_code": {"epsilon": [0.05]}}}},
    "claims_studies": ["tiny_claims"],
    "run_studies": ["tiny_claims"],
}


@pytest.fixture(scope="module")
def tiny_claims_run(tmp_path_factory):
    from conftest import run_snakemake

    workdir = tmp_path_factory.mktemp("claims")
    run_snakemake(workdir, TINY)
    return workdir


def test_the_claims_rule_writes_a_row_for_every_claim_with_the_required_columns(tiny_claims_run):
    table = pd.read_csv(tiny_claims_run / "results/tables/claims.csv")
    assert list(table.columns) == list(COLUMNS)
    assert set(table["claim"]) == set(CLAIMS)
    assert set(table["holds"]) <= {"holds", "not shown", "contradicted", "untestable"}
    d1 = table[(table["claim"] == "D1") & (table["dataset"] == "demo") & (table["setting"] == NOMINAL)].iloc[0]
    assert d1["n_seeds"] == 5 and d1["ci_low"] <= d1["estimate"] <= d1["ci_high"]
    assert d1["grid_points"].count("results/runs/demo/minilm/") == 10
    assert d1["dataset_kind"] == "synthetic" and d1["encoder"] == "minilm" and d1["train_rows"]
    # the interval carries test-set sampling: a test part (an unbiased moment estimate, so of either sign on a
    # 40-example test set) for every measured part
    parts = json.loads(d1["per_seed"])
    assert len(parts) == 2 and all(p["test_variance"] != 0 and len(p["values"]) == 5 for p in parts)
    md = (tiny_claims_run / "results/tables/claims.md").read_text()
    assert md.startswith("# The papers' claims") and "synthetic `demo`" in md
    assert (tiny_claims_run / "results/figures/claims/verdicts.png").stat().st_size > 10_000
    # one epoch is fewer optimiser steps than the training rule asks: the row says so rather than judging them
    assert d1["holds"] == "untestable" and "fewer optimiser steps than the training rule" in d1["reason"]
    assert d1["converged"] == "no" and float(d1["train_rows"]) > 0  # demo is not capped
    code = table[(table["claim"] == "D1") & (table["dataset"] == "demo") & (table["setting"] == REFERENCE_CODE)]
    assert len(code) == 1 and "dpnr_code: not DP" in code["epsilon_effective"].iloc[0]


def test_the_evidence_recomputes_every_saved_test_measure_of_a_real_run(tiny_claims_run, monkeypatch):
    """Row 0 of every replicate equals the saved measure (ExampleEvidence raises otherwise)."""
    from privtext.claims.evidence import ExampleEvidence

    monkeypatch.chdir(tiny_claims_run)
    measures = prepare_measures(pd.read_csv("results/tables/studies/tiny_claims/measures.csv",
                                            keep_default_na=False, na_values=[""]))
    meta = json.loads(Path("results/data/demo/meta.json").read_text())
    evidence = ExampleEvidence({"demo": Path("results/data/demo")}, {"demo": meta}, n_resamples=20)
    tested = measures[(measures["split"] == "test") & ~measures["measure"].str.startswith("mdl_")]
    recomputed = {m for m in tested["measure"]
                  if all(len(evidence.replicates(r)) == 21 for r in tested[tested["measure"] == m].itertuples())}
    assert {"accuracy", "attack_accuracy", "empirical_privacy_demographic", "fairness", "accuracy_gap"} <= recomputed


def test_the_report_opens_with_the_claims(tiny_claims_run):
    from conftest import run_snakemake

    run_snakemake(tiny_claims_run, TINY, None, "--report", "report.html")
    html = (tiny_claims_run / "report.html").read_text(errors="replace")
    categories = json.loads(re.search(r"var categories = (\{.*?\});\n", html, flags=re.S).group(1))
    # the report's menu orders categories with JavaScript's localeCompare: digits first, then letters by case-folded
    first = min(categories, key=lambda name: (not name[0].isdigit(), name.casefold()))
    assert "EXTRA" in categories and first.startswith("1. WHAT HOLDS")
    claims_files = [path for paths in categories[first].values() for path in paths]
    assert any(path.endswith("claims.csv") for path in claims_files)
