"""The attack ladder: rung order, means over seeds and attributes, ceilings, MDL, word recovery and
identification."""

from __future__ import annotations

import itertools
import json
import math

import numpy as np
import pandas as pd
import pytest

from privtext.report.ladder import FROZEN_RUNG, ladder_figure, ladder_table, write_ladder

ATTRIBUTES = ("age", "gender")
ATTACKERS = ("linear", "mlp")
# (method, epsilon, lambda, seeds): given out of ladder order on purpose
GRID = [("dpnr", 0.1, np.nan, (1, 2)), ("adv", np.nan, 1.0, (1,)), ("dpnr", 1.0, np.nan, (1, 2)),
        ("nonpriv", np.nan, np.nan, (1,))]
FROZEN = {"status": "measured", "precision": 0.6, "recall": 0.5, "f1": 0.55, "advantage": 0.25,
          "baseline": {"precision": 0.3, "recall": 0.3, "f1": 0.3, "threshold": 0.5, "n_words_predicted": 10},
          # the frozen features are a deterministic release: identified, with no ε and so no ceiling
          "identification": {"status": "measured", "white_box": {"N100": {"top1": 1.0, "top1_chance": 0.01}},
                             "features_only": {"N100": {"top1": 0.95, "top1_chance": 0.01}},
                             "reconstruction": {"white_box": {"rouge_l": 60.0}, "features_only": {"rouge_l": 55.0},
                                                "frequent_words": {"rouge_l": 8.0}}}}


def _runs() -> pd.DataFrame:
    rows, value = [], itertools.count()
    for dataset in ("tp_us", "adult"):
        text = dataset == "tp_us"
        for method, epsilon, lam, seeds in GRID:
            for seed in seeds:
                run_dir = f"runs/{dataset}/{method}/{epsilon}/{lam}/{seed}"
                f1 = 0.4 + 0.01 * seed if text else np.nan
                for attacker, attribute in itertools.product(ATTACKERS, ATTRIBUTES):
                    dp = not np.isnan(epsilon)
                    rows.append({
                        "dataset": dataset, "encoder": "minilm" if text else "tabular", "method": method,
                        "param_epsilon": epsilon, "param_lambda": lam, "param_mu": 0.0, "seed": seed,
                        "epsilon_nominal": epsilon, "epsilon_effective": epsilon * 10, "run_dir": run_dir,
                        "attacker": attacker, "attribute": attribute,
                        "attack_accuracy": 0.5 + next(value) / 1000, "attack_majority_rate": 0.5,
                        "ceiling_nominal": 0.6 if dp else np.nan, "ceiling_effective": 0.9 if dp else np.nan,
                        # flagged: the mlp attacker on age at ε = 1 only
                        "above_nominal_ceiling": (epsilon == 1.0 and attacker == "mlp" and attribute == "age")
                        if dp else np.nan,
                        "inversion_status": "measured" if text else "not applicable: no text",
                        "inversion_f1": f1, "inversion_baseline_f1": 0.3 if text else np.nan,
                        "inversion_advantage": f1 - 0.3 if text else np.nan,
                        **(_identification(epsilon, seed) if text else {}),
                    })
    return pd.DataFrame(rows)


def _identification(epsilon: float, seed: int) -> dict:
    """A text point's identification columns (N = 100): the true text named at 0.9 + seed/100 without noise, 0.3
    under it, flagged above the nominal ceiling at ε = 1."""
    dp = not np.isnan(epsilon)
    prefix = "identification_white_box_top1"
    return {prefix: 0.3 if dp else 0.9 + seed / 100, f"{prefix}_chance": 0.01,
            f"{prefix}_ceiling_nominal": math.exp(epsilon) / (math.exp(epsilon) + 99) if dp else np.nan,
            f"{prefix}_ceiling_effective": np.nan, "identification_features_only_top1": 0.2,
            "identification_above_nominal_ceiling": epsilon == 1.0,
            "reconstruction_white_box_rouge_l": 20.0 + seed, "reconstruction_features_only_rouge_l": 15.0,
            "reconstruction_frequent_words_rouge_l": 8.0}


def _row(table: pd.DataFrame, rung: str) -> pd.Series:
    return table.set_index("rung").loc[rung]


def test_rungs_are_ordered_from_no_defence_to_the_strongest_epsilon():
    table = ladder_table(_runs(), "tp_us", frozen=FROZEN)
    assert list(table["rung"]) == [FROZEN_RUNG, "nonpriv", "adv λ=1", "dpnr ε=1", "dpnr ε=0.1"]
    assert list(table["n_seeds"].iloc[1:]) == [1, 1, 2, 2]


def test_means_are_over_seeds_and_attributes_per_attacker():
    runs = _runs()
    table = ladder_table(runs, "tp_us")
    rung = runs[(runs["dataset"] == "tp_us") & (runs["method"] == "dpnr") & (runs["param_epsilon"] == 1.0)]
    mlp = rung.loc[rung["attacker"] == "mlp", "attack_accuracy"]
    assert len(mlp) == 4  # 2 seeds × 2 attributes
    row = _row(table, "dpnr ε=1")
    assert row["mlp_accuracy"] == pytest.approx(mlp.mean())
    assert row["linear_accuracy"] == pytest.approx(rung.loc[rung["attacker"] == "linear", "attack_accuracy"].mean())
    assert (row["majority_rate"], row["ceiling_nominal"], row["ceiling_effective"]) == pytest.approx((0.5, 0.6, 0.9))
    assert row["epsilon_effective"] == pytest.approx(10.0)
    # inversion is per grid point: seeds 1 and 2 give F1 0.41 and 0.42
    assert row["inversion_f1"] == pytest.approx(0.415)
    assert row["inversion_advantage"] == pytest.approx(0.115)
    assert np.isnan(_row(table, "nonpriv")["ceiling_nominal"])


def test_flagged_rows_are_counted_per_rung():
    table = ladder_table(_runs(), "tp_us").set_index("rung")["flagged_above_nominal"]
    assert table.to_dict() == {"nonpriv": 0, "adv λ=1": 0, "dpnr ε=1": 2, "dpnr ε=0.1": 0}


def test_every_attacker_the_runs_measured_gets_its_column_and_its_mark(tmp_path):
    """Not a fixed pair: an attacker a study adds (the recipe's ``centroid``) is a column and a mark of the figure."""
    runs = _runs()
    extra = runs[runs["attacker"] == "linear"].assign(attacker="centroid", attack_accuracy=0.77)
    table = ladder_table(pd.concat([runs, extra], ignore_index=True), "tp_us")
    assert [c for c in table.columns if c.endswith("_accuracy")] == ["linear_accuracy", "mlp_accuracy",
                                                                      "centroid_accuracy"]
    assert (table["centroid_accuracy"] == 0.77).all()
    legend = ladder_figure(table, "tp_us").legends[0]
    assert "centroid attacker" in [t.get_text() for t in legend.get_texts()]


def test_frozen_rung_comes_first_with_its_advantage():
    row = ladder_table(_runs(), "tp_us", frozen=FROZEN).iloc[0]
    assert row["rung"] == FROZEN_RUNG
    assert (row["inversion_f1"], row["inversion_baseline_f1"], row["inversion_advantage"]) == (0.55, 0.3, 0.25)
    assert row["inversion_status"] == "measured" and np.isnan(row["mlp_accuracy"])


def test_frozen_rung_reads_the_attribute_attackers_of_the_frozen_features():
    """Every defence is read against the frozen features: their attackers' accuracy and the majority rate, means
    over private attributes (a frozen.json written before it had them leaves the columns empty)."""
    frozen = {**FROZEN, "attributes": {"attackers": {
        "mlp": {"attributes": {"age": {"accuracy": 0.9, "majority_rate": 0.5}, "gender": {"accuracy": 0.7, "majority_rate": 0.6}}},
        "linear": {"attributes": {"age": {"accuracy": 0.8, "majority_rate": 0.5}, "gender": {"accuracy": 0.6, "majority_rate": 0.6}}},
    }}}
    row = ladder_table(_runs(), "tp_us", frozen=frozen).iloc[0]
    assert row["mlp_accuracy"] == pytest.approx(0.8) and row["linear_accuracy"] == pytest.approx(0.7)
    assert row["majority_rate"] == pytest.approx(0.55)


def test_tabular_dataset_has_no_inversion():
    table = ladder_table(_runs(), "adult")
    assert table["inversion_f1"].isna().all() and table["inversion_advantage"].isna().all()
    assert set(table["inversion_status"]) == {"not applicable: no text"}
    assert table["mdl_kbits"].isna().all()


def test_mdl_is_merged_from_measures():
    runs = _runs()
    dirs = sorted(runs.loc[(runs["dataset"] == "tp_us") & (runs["param_epsilon"] == 1.0), "run_dir"].unique())
    measures = pd.DataFrame(
        [{"run_dir": d, "measure": m, "attribute": a, "value": v + (i * 2 if m == "mdl_kbits" else 100)}
         for i, d in enumerate(dirs) for a, v in zip(ATTRIBUTES, (1.0, 3.0)) for m in ("mdl_kbits", "mdl_compression")])
    table = ladder_table(runs, "tp_us", measures=measures)
    assert _row(table, "dpnr ε=1")["mdl_kbits"] == pytest.approx((1 + 3 + 3 + 5) / 4)
    assert np.isnan(_row(table, "nonpriv")["mdl_kbits"])


def test_figure_builds_for_text_and_tabular():
    runs = _runs()
    for dataset, frozen in (("tp_us", FROZEN), ("adult", None)):
        figure = ladder_figure(ladder_table(runs, dataset, frozen), dataset)
        assert len(figure.axes) == 4  # attributes, word recovery, identification, reconstruction
    assert all("not applicable: no text" in axes.get_title() for axes in figure.axes[1:])


def test_identification_per_rung_with_its_ceiling_and_the_frozen_rung_identified():
    table = ladder_table(_runs(), "tp_us", frozen=FROZEN)
    frozen = _row(table, FROZEN_RUNG)
    assert frozen["identification_white_box_top1"] == 1.0 and frozen["identification_features_only_top1"] == 0.95
    assert frozen["reconstruction_white_box_rouge_l"] == 60.0 and frozen["reconstruction_frequent_words_rouge_l"] == 8.0
    assert np.isnan(frozen["identification_white_box_top1_ceiling_nominal"])  # no ε, no ceiling
    assert _row(table, "nonpriv")["identification_white_box_top1"] == pytest.approx(0.91)
    strong = _row(table, "dpnr ε=1")
    assert strong["identification_white_box_top1_ceiling_nominal"] == pytest.approx(math.e / (math.e + 99))
    assert strong["reconstruction_white_box_rouge_l"] == pytest.approx(21.5)  # seeds 1 and 2, once per point
    assert strong["identification_flagged_above_nominal"] == 2 and _row(table, "dpnr ε=0.1")[
        "identification_flagged_above_nominal"] == 0


def test_write_ladder_writes_each_dataset(tmp_path):
    runs_csv = tmp_path / "runs.csv"
    _runs().to_csv(runs_csv, index=False)
    frozen = tmp_path / "inversion" / "tp_us" / "minilm" / "frozen.json"
    frozen.parent.mkdir(parents=True)
    frozen.write_text(json.dumps(FROZEN))
    tables = {d: tmp_path / "tables" / f"{d}.csv" for d in ("tp_us", "adult")}
    figures = {d: tmp_path / "figures" / f"{d}.png" for d in ("tp_us", "adult")}
    write_ladder(runs_csv, tables, figures, {"tp_us": frozen}, None)
    for dataset in tables:
        assert figures[dataset].stat().st_size > 0
        expected = ladder_table(_runs(), dataset, FROZEN if dataset == "tp_us" else None)
        assert list(pd.read_csv(tables[dataset])["rung"]) == list(expected["rung"])
    assert pd.read_csv(tables["tp_us"])["rung"].iloc[0] == FROZEN_RUNG


def test_a_dataset_without_runs_is_an_error(tmp_path):
    runs_csv = tmp_path / "runs.csv"
    _runs().to_csv(runs_csv, index=False)
    with pytest.raises(ValueError, match="blog"):
        write_ladder(runs_csv, {"blog": tmp_path / "b.csv"}, {"blog": tmp_path / "b.png"}, {}, None)
    with pytest.raises(ValueError, match="blog"):
        ladder_table(_runs(), "blog")
