"""Relaxation-threshold selection (FEDERATE §5.1) on dev only, and uncertainty over seeds."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from privtext.measures.selection import paired_test, select, select_settings, summarise_over_seeds

SELECT = dict(group_by=["method"], param_cols=["lam"], dev_accuracy="dev_accuracy", dev_fairness="dev_gap")


def _runs() -> pd.DataFrame:
    """Seed-mean dev accuracy / gap: λ=0.1 → 0.800 / 0.20, λ=0.5 → 0.785 / 0.10, λ=1.0 → 0.750 / 0.02."""
    rows = [
        (0.1, 10, 0.81, 0.22), (0.1, 20, 0.79, 0.18),
        (0.5, 10, 0.79, 0.12), (0.5, 20, 0.78, 0.08),
        (1.0, 10, 0.76, 0.01), (1.0, 20, 0.74, 0.03),
    ]
    frame = pd.DataFrame(rows, columns=["lam", "seed", "dev_accuracy", "dev_gap"]).assign(method="adv")
    rng = np.random.default_rng(0)
    return frame.assign(test_accuracy=rng.random(len(frame)), test_gap=rng.random(len(frame)))


def test_rt_zero_picks_the_best_dev_accuracy_setting():
    chosen = select_settings(_runs(), **SELECT, rt_points=0.0)
    assert chosen["lam"].tolist() == [0.1]


def test_rt_two_points_picks_the_fairest_setting_within_two_points():
    chosen = select_settings(_runs(), **SELECT, rt_points=2.0)
    assert chosen["lam"].tolist() == [0.5]  # 0.785 >= 0.800 - 0.02; λ=1.0 is fairer but 5 points below
    assert chosen["n_admitted"].tolist() == [2]


def test_seeds_are_averaged_before_selection():
    frame = pd.DataFrame({
        "method": "adv", "lam": [1, 1, 2, 2], "seed": [10, 20, 10, 20],
        "dev_accuracy": [0.90, 0.60, 0.80, 0.80], "dev_gap": 0.1,
    })
    chosen = select_settings(frame, **SELECT, rt_points=0.0)
    assert chosen["lam"].tolist() == [2]  # mean 0.80 beats mean 0.75 despite λ=1's single 0.90
    assert chosen["dev_accuracy_mean"].tolist() == [pytest.approx(0.80)]


def test_selection_ignores_every_test_column():
    runs = _runs()
    poisoned = runs.copy()
    rng = np.random.default_rng(1)
    poisoned["test_accuracy"] = rng.random(len(runs)) * 100
    poisoned["test_gap"] = -runs["test_gap"] * 1e6
    for rt in (0.0, 1.0, 2.0, 10.0):
        clean, dirty = select(runs, **SELECT, rt_points=rt), select(poisoned, **SELECT, rt_points=rt)
        assert clean.index.tolist() == dirty.index.tolist()
        pd.testing.assert_frame_equal(clean.drop(columns=["test_accuracy", "test_gap"]),
                                      dirty.drop(columns=["test_accuracy", "test_gap"]))


def test_select_returns_the_per_seed_rows_of_the_chosen_setting():
    rows = select(_runs(), **SELECT, rt_points=2.0)
    assert rows["lam"].tolist() == [0.5, 0.5] and rows["seed"].tolist() == [10, 20]
    assert "test_accuracy" in rows.columns


def test_ties_go_to_the_smallest_parameter_whatever_the_row_order():
    frame = pd.DataFrame({"method": "adv", "lam": [0.3, 0.1, 0.2], "seed": 10, "dev_accuracy": 0.8, "dev_gap": 0.1})
    for order in ([0, 1, 2], [2, 1, 0], [1, 2, 0]):
        chosen = select_settings(frame.iloc[order], **SELECT, rt_points=1.0)
        assert chosen["lam"].tolist() == [0.1]


def test_each_group_is_selected_separately():
    frame = pd.concat([_runs(), _runs().assign(method="federate", dev_gap=lambda f: -f["dev_gap"])])
    chosen = select_settings(frame, **SELECT, rt_points=2.0)
    assert dict(zip(chosen["method"], chosen["lam"])) == {"adv": 0.5, "federate": 0.1}


def test_selecting_on_a_test_column_is_refused():
    with pytest.raises(ValueError, match="test metric"):
        select_settings(_runs(), ["method"], ["lam"], "test_accuracy", "dev_gap", rt_points=1.0)


def test_accuracy_in_percent_is_refused_because_rt_is_in_points():
    runs = _runs().assign(dev_accuracy=lambda f: f["dev_accuracy"] * 100)
    with pytest.raises(ValueError, match="percentage points"):
        select_settings(runs, **SELECT, rt_points=1.0)


def test_bootstrap_interval_contains_the_mean_and_std_is_over_seeds():
    frame = pd.DataFrame({"seed": [10, 20, 30, 40, 50], "accuracy": [0.1, 0.2, 0.3, 0.4, 0.5]})
    summary = summarise_over_seeds(frame, ["accuracy"], seed_col="seed").iloc[0]
    assert summary["n"] == 5 and summary["mean"] == pytest.approx(0.3)
    assert summary["std"] == pytest.approx(np.sqrt(0.025))
    assert summary["ci_low"] <= 0.3 <= summary["ci_high"] and summary["ci_low"] < summary["ci_high"]


def test_the_summarisers_interval_on_cases_whose_interval_is_known():
    # Seeds {0, 1}: a resample's mean is 0, 0.5 or 1 with probabilities 1/4, 1/2, 1/4, so the 2.5th and 97.5th
    # percentiles of the bootstrap distribution are exactly 0 and 1.
    two = summarise_over_seeds(pd.DataFrame({"seed": [10, 20], "v": [0.0, 1.0]}), ["v"]).iloc[0]
    assert (two["ci_low"], two["ci_high"]) == (0.0, 1.0)
    # Many seeds of a normal sample: the percentile bootstrap of the mean is the normal interval
    # mean ± 1.96·s/√n to within a few percent of its width.
    values = np.random.default_rng(1).normal(3.0, 2.0, size=400)
    many = summarise_over_seeds(pd.DataFrame({"seed": range(400), "v": values}), ["v"]).iloc[0]
    half_width = 1.959964 * values.std(ddof=1) / np.sqrt(len(values))
    assert many["ci_low"] == pytest.approx(values.mean() - half_width, abs=0.05 * half_width)
    assert many["ci_high"] == pytest.approx(values.mean() + half_width, abs=0.05 * half_width)


def test_paired_test_on_a_hand_made_case():
    a = np.array([1.0, 2.0, 3.0, 4.0, 5.0])
    differences = np.array([0.1, 0.2, 0.15, 0.3, 0.25])  # mean 0.2, sd sqrt(0.00625): t = 4·sqrt(2)
    result = paired_test(a, a - differences)
    assert result["n"] == 5 and result["mean_difference"] == pytest.approx(0.2)
    assert result["t_statistic"] == pytest.approx(4 * np.sqrt(2))
    assert result["t_pvalue"] == pytest.approx(2 * stats.t.sf(4 * np.sqrt(2), df=4))
    # All five differences positive: exact two-sided Wilcoxon p = 2 / 2**5.
    assert result["wilcoxon_statistic"] == 0.0 and result["wilcoxon_pvalue"] == pytest.approx(0.0625)


def test_paired_test_without_differences_reports_no_p_values():
    result = paired_test([0.5, 0.6], [0.5, 0.6])
    assert result["t_pvalue"] is None and result["wilcoxon_pvalue"] is None
