"""The claims table (SPEC §6) on hand-made measures: differences, equivalences and trends give the verdicts and
intervals the summariser and the verdict rule imply; a tiny real run writes a row for every claim id."""

import json
import math
import re

import numpy as np
import pandas as pd
import pytest

from privtext.artefacts.common import ArtefactInputs, prepare_measures
from privtext.claims import CLAIMS, COLUMNS, EQUAL_EFFECTIVE, NOMINAL, claims_table
from privtext.selection import summarise_over_seeds

SEEDS = (10, 20, 30)
META = {"toy": {"private_attributes": {"gender": ["m", "f"]}, "label_names": ["a", "b"],
                "attribute_kinds": {"gender": "demographic"}}}


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


def test_a_difference_claim_is_reproduced_with_the_summarisers_interval_of_the_paired_differences():
    dpnr, adv = [0.60, 0.64, 0.62], [0.30, 0.29, 0.35]
    table = claims_table(_inputs(_privacy("dpnr", dpnr, epsilon=0.05), _privacy("adv", adv, **{"lambda": 1.0})),
                         ["D2"])
    row = _row(table, "D2")
    expected = summarise_over_seeds(pd.DataFrame({"seed": SEEDS, "value": np.subtract(dpnr, adv)}), ["value"]).iloc[0]
    assert row["verdict"] == "reproduced" and row["n_seeds"] == 3
    assert (row["estimate"], row["ci_low"], row["ci_high"]) == pytest.approx(
        (expected["mean"], expected["ci_low"], expected["ci_high"]))
    assert 0 < row["p_value"] < 0.05
    assert row["grid_points"].count("results/runs/toy") == 6


def test_a_difference_claim_against_the_data_is_reversed_and_a_noisy_one_not_reproduced():
    reversed_ = claims_table(_inputs(_privacy("dpnr", [0.2, 0.21, 0.22], epsilon=0.05),
                                     _privacy("adv", [0.3, 0.32, 0.31], **{"lambda": 1.0})), ["D2"])
    noisy = claims_table(_inputs(_privacy("dpnr", [0.2, 0.4, 0.3], epsilon=0.05),
                                 _privacy("adv", [0.3, 0.3, 0.3], **{"lambda": 1.0})), ["D2"])
    assert _row(reversed_, "D2")["verdict"] == "reversed"
    assert _row(noisy, "D2")["verdict"] == "not reproduced"


def test_the_equal_effective_setting_reads_the_calibrated_twin_and_lacks_it_here():
    table = claims_table(_inputs(_privacy("dpnr", [0.6, 0.6, 0.61], epsilon=0.05),
                                 _privacy("dpnr_calibrated", [0.1, 0.1, 0.12], epsilon=0.05),
                                 _privacy("adv", [0.3, 0.3, 0.31], **{"lambda": 1.0})), ["D2"])
    assert _row(table, "D2", NOMINAL)["verdict"] == "reproduced"
    equal = _row(table, "D2", EQUAL_EFFECTIVE)
    assert equal["verdict"] == "reversed" and "dpnr_calibrated" in equal["measurement"]
    assert "dpnr_calibrated" in equal["grid_points"] and "/dpnr/" not in equal["grid_points"]


def test_a_comparable_claim_holds_within_the_margin_and_is_reversed_beyond_it():
    close = claims_table(_inputs(_privacy("dpnr", [0.500, 0.502, 0.499], epsilon=0.05),
                                 _privacy("majority", [0.500, 0.500, 0.500])), ["D3"])
    far = claims_table(_inputs(_privacy("dpnr", [0.30, 0.31, 0.29], epsilon=0.05),
                               _privacy("majority", [0.5, 0.5, 0.5])), ["D3"])
    assert _row(close, "D3")["verdict"] == "reproduced"
    assert _row(far, "D3")["verdict"] == "reversed"


def test_a_trend_claim_uses_spearman_per_seed_and_is_reproduced_when_every_seed_agrees():
    epsilons = (0.05, 0.5, 5.0)
    rows = [_privacy("dpnr", [0.9 - 0.1 * k + 0.01 * s for s in range(3)], epsilon=eps) for k, eps in enumerate(epsilons)]
    row = _row(claims_table(_inputs(*rows), ["D5"]), "D5")
    assert row["verdict"] == "reproduced" and "Spearman" in row["measurement"]
    assert (row["estimate"], row["ci_low"], row["ci_high"]) == (-1.0, -1.0, -1.0)


def test_a_trend_with_too_few_values_is_inconclusive_and_says_why():
    rows = [_privacy("dpnr", [0.9, 0.8, 0.85], epsilon=0.05), _privacy("dpnr", [0.7, 0.6, 0.65], epsilon=5.0)]
    row = _row(claims_table(_inputs(*rows), ["D5"]), "D5")
    assert row["verdict"] == "inconclusive" and "at least 3" in row["reason"]


def test_a_two_part_claim_takes_its_weakest_part():
    """D1: more privacy (holds) but accuracy far below NON-PRIV (a 'comparable' part shown false)."""
    table = claims_table(_inputs(
        _privacy("dpnr", [0.6, 0.62, 0.61], epsilon=0.05), _privacy("nonpriv", [0.3, 0.31, 0.3]),
        _rows("dpnr", "accuracy", dict(zip(SEEDS, [0.50, 0.52, 0.51])), epsilon=0.05),
        _rows("nonpriv", "accuracy", dict(zip(SEEDS, [0.90, 0.91, 0.90])))), ["D1"])
    row = _row(table, "D1")
    assert row["verdict"] == "reversed" and "accuracy" in row["measurement"]
    assert "empirical privacy" in row["parts"] and "→ reproduced" in row["parts"]


def test_every_claim_has_a_row_and_untestable_ones_say_so():
    table = claims_table(_inputs(_privacy("dpnr", [0.6, 0.6, 0.6], epsilon=0.05)))
    assert list(table.columns) == list(COLUMNS)
    assert set(table["claim"]) == set(CLAIMS)
    tp_uk = table[(table["claim"] == "C1") & (table["dataset"] == "tp_uk")].iloc[0]
    assert tp_uk["verdict"] == "inconclusive" and "no data" in tp_uk["reason"]
    d6 = table[table["claim"] == "D6"]
    assert (d6["verdict"] == "inconclusive").all() and math.isnan(d6["estimate"].iloc[0])


# --- a real run of the claims rule ----------------------------------------------------------------------------

TINY = {
    "datasets": ["demo"],
    "demo": {"n_examples": 400},
    "attack": {"attackers": ["mlp", "sklearn_mlp"]},
    "methods": {"nonpriv": {"epochs": 1}, "dpnr": {"epochs": 1}},
    "studies": {"tiny_claims": {"datasets": ["demo"], "seeds": [10, 20, 30], "artefacts": True,
                                "methods": {"majority": {}, "nonpriv": {}, "dpnr": {"epsilon": [0.05]}}}},
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
    required = {"claim", "paper", "claim_text", "dataset", "setting", "measurement", "estimate", "ci_low", "ci_high",
                "n_seeds", "paper_value", "verdict", "reason", "grid_points"}
    assert required <= set(table.columns)
    assert set(table["claim"]) == set(CLAIMS)
    assert set(table["verdict"]) <= {"reproduced", "not reproduced", "reversed", "inconclusive"}
    d1 = table[(table["claim"] == "D1") & (table["dataset"] == "demo") & (table["setting"] == NOMINAL)].iloc[0]
    assert d1["n_seeds"] == 3 and d1["ci_low"] <= d1["estimate"] <= d1["ci_high"]
    assert d1["grid_points"].count("results/runs/demo/minilm/") == 6
    assert (tiny_claims_run / "results/tables/claims.md").read_text().startswith("# The papers' claims")
    assert (tiny_claims_run / "results/figures/claims/verdicts.png").stat().st_size > 10_000


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


def test_word_dropout_is_not_judged_on_feature_datasets():
    frame = pd.DataFrame(_privacy("dpnr", [0.6, 0.6, 0.6], epsilon=1.0)).assign(encoder="features")
    table = claims_table(ArtefactInputs(measures=prepare_measures(frame), metas=META), ["D4"])
    assert "toy" not in set(table["dataset"])
