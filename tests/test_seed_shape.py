"""The two-cluster test on per-seed values (privtext.claims.seed_shape) and its study check
(benchmarks/seed_shape.py) on hand-made cases (issue 28, item 6)."""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from privtext.claims.inference import Estimate
from privtext.claims.seed_shape import (SEEDS_NEEDED, cluster_test, family_reasons, family_test, seed_shape_reason,
                                        study_checks)
from privtext.claims.verdicts import Reading, judge, untestable_reason

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "seed_shape.py"
spec = importlib.util.spec_from_file_location("seed_shape_benchmark", SCRIPT)
benchmark = importlib.util.module_from_spec(spec)
spec.loader.exec_module(benchmark)


def _between_share_by_hand(values: list[float]) -> float:
    """R written from its definition: every split of the sorted values, group means, sums of squares."""
    x = sorted(values)
    total = sum((v - np.mean(x)) ** 2 for v in x)
    best = 0.0
    for j in range(1, len(x)):
        low, high = x[:j], x[j:]
        between = len(low) * (np.mean(low) - np.mean(x)) ** 2 + len(high) * (np.mean(high) - np.mean(x)) ** 2
        best = max(best, between / total)
    return best


@pytest.mark.parametrize("values", [[0.1, 0.3, 0.2, 0.25, 0.15], [0.0, 1.0, 2.0, 3.0, 10.0],
                                    [5.0, 5.1, -2.0, 4.9, -2.2, 5.05, 4.8]])
def test_the_statistic_is_the_best_splits_between_group_share(values: list[float]) -> None:
    test = cluster_test(dict(enumerate(values)))
    assert test.statistic == pytest.approx(_between_share_by_hand(values))


def test_the_statistic_and_p_value_do_not_depend_on_location_or_scale() -> None:
    values = {10: 0.81, 20: 0.79, 30: 0.80, 40: 0.72, 50: 0.805}
    moved = {s: 3 - 40 * v for s, v in values.items()}
    assert cluster_test(values).statistic == pytest.approx(cluster_test(moved).statistic)
    assert cluster_test(values).p_value == pytest.approx(cluster_test(moved).p_value)


@pytest.mark.parametrize("n_values", [5, 15])
@pytest.mark.parametrize("level", [0.01, 0.05])
def test_under_one_normal_optimum_the_test_rejects_at_its_level(n_values: int, level: float) -> None:
    rng = np.random.default_rng(n_values)
    draws = 4000
    rate = np.mean([cluster_test(dict(enumerate(rng.normal(0.8, 0.01, n_values)))).p_value <= level
                    for _ in range(draws)])
    assert abs(rate - level) <= 3 * math.sqrt(level * (1 - level) / draws), rate


def test_two_of_five_seeds_in_one_worse_optimum_are_not_masked() -> None:
    # Grubbs' statistic here is 1.10, far below its two-sided 5% point for 5 values (1.72): the pair hides each other
    values = {10: 0.800, 20: 0.801, 30: 0.799, 40: 0.700, 50: 0.701}
    test = cluster_test(values)
    assert test.p_value <= 0.001 and test.apart == (40, 50) and test.gap == pytest.approx(0.0995)


def test_nothing_to_test_gives_p_one() -> None:
    assert cluster_test({1: 0.5, 2: 0.5, 3: 0.5, 4: 0.5, 5: 0.5}).p_value == 1.0  # a deterministic measurement
    # a Spearman ρ over 5 swept values piled at its bound: one seed one rank swap off is not a second optimum
    assert cluster_test({1: -1.0, 2: -1.0, 3: -1.0, 4: -0.8, 5: -1.0}).p_value == 1.0
    assert cluster_test({1: 0.5, 2: 0.5, 3: 0.5, 4: 0.5001, 5: 0.4}).p_value == 1.0
    assert cluster_test({1: 0.5, 2: 0.9}).p_value == 1.0  # two values always split perfectly
    assert cluster_test({1: 0.5, 2: math.nan, 3: 0.4, 4: 0.45}).p_value == 1.0


def test_seeds_at_both_ends_of_a_rank_correlation_are_two_groups() -> None:
    assert cluster_test({1: -1.0, 2: -1.0, 3: 0.8, 4: 1.0, 5: 1.0}).p_value <= 0.01


def test_the_reason_names_the_seeds_apart_and_the_seeds_needed() -> None:
    two_groups = {10: 0.800, 20: 0.801, 30: 0.799, 40: 0.700, 50: 0.701}
    reason = seed_shape_reason(two_groups)
    assert "seed(s) 40, 50 lie 0.0995 from the other seeds" in reason and f"{SEEDS_NEEDED} seeds are needed" in reason
    assert seed_shape_reason({10: 0.80, 20: 0.79, 30: 0.81, 40: 0.805, 50: 0.795}) == ""
    # a split no larger than the test-set standard error cannot move a verdict
    assert seed_shape_reason(two_groups, negligible_gap=0.1) == ""
    # at the seeds needed the interval is trusted with a second optimum
    many = {s: 0.8 - 0.1 * (s % 5 == 0) + 1e-4 * s for s in range(SEEDS_NEEDED)}
    assert seed_shape_reason(many) == "" and cluster_test(many).p_value <= 0.01


def _estimate(per_seed: dict[int, float], test_se: float) -> Estimate:
    values = np.array(list(per_seed.values()))
    seed_variance = values.var(ddof=1) / len(values)
    se = math.sqrt(seed_variance + test_se**2)
    return Estimate(values.mean(), se, 4.0, values.mean() - 2.78 * se, values.mean() + 2.78 * se, len(values),
                    per_seed, seed_variance, test_se**2)


def test_a_part_whose_seeds_fall_in_two_groups_is_untestable_unless_the_gap_is_within_test_noise() -> None:
    two_groups = {10: 0.050, 20: 0.051, 30: 0.049, 40: -0.050, 50: 0.0505}
    clear = _estimate(two_groups, test_se=0.002)
    judgement = judge([("p", Reading("superiority", 1), clear, "")])
    assert judgement.outcome == "untestable" and "second optimum" in judgement.reason
    assert untestable_reason(_estimate(two_groups, test_se=0.2)) == ""
    # the level is split over a claim's parts: the same part among 15 normal ones needs stronger evidence
    normal = _estimate({10: 0.05, 20: 0.06, 30: 0.04, 40: 0.055, 50: 0.045}, test_se=0.002)
    weak = {10: 0.050, 20: 0.052, 30: 0.047, 40: 0.0, 50: 0.051}
    assert untestable_reason(_estimate(weak, 0.002), shape_level=0.01) != ""
    parts = [("weak", Reading("superiority", 1), _estimate(weak, 0.002), "")]
    parts += [(f"p{k}", Reading("superiority", 1), normal, "") for k in range(14)]
    assert cluster_test(weak).p_value > 0.01 / 15 and judge(parts).parts[0].outcome != "untestable"


def _runs_table(rng: np.random.Generator, worse_seeds: set[int]) -> pd.DataFrame:
    """A hand-made runs.csv: 15 seeds of NON-PRIV and ADV on Adult, two attackers on sex; ADV lands 10 points
    worse in task accuracy (and leaks 8 points less) on ``worse_seeds``."""
    rows = []
    for method, params in (("nonpriv", {"param_lambda": math.nan}), ("adv", {"param_lambda": 1.0})):
        for seed in range(10, 160, 10):
            worse = method == "adv" and seed in worse_seeds
            accuracy = 0.84 + rng.normal(0, 0.003) - 0.10 * worse
            for attacker in ("linear", "mlp"):
                rows.append({"dataset": "adult", "encoder": "features", "method": method, **params, "seed": seed,
                             "test_accuracy": accuracy, "attacker": attacker, "attribute": "sex",
                             "attack_accuracy": 0.75 + rng.normal(0, 0.004) - 0.08 * worse})
    return pd.DataFrame(rows)


def test_the_study_check_flags_the_family_with_a_second_optimum_and_prints_every_seed(tmp_path, capsys,
                                                                                      monkeypatch) -> None:
    runs = _runs_table(np.random.default_rng(3), worse_seeds={30, 90, 140})
    checks = study_checks(runs)
    flagged = {(c.method, c.measure) for c in checks if c.second_optimum}
    assert flagged == {("adv", "test accuracy"), ("adv", "linear attacker on sex"), ("adv", "mlp attacker on sex")}
    assert all(c.test.apart == (30, 90, 140) for c in checks if c.second_optimum)
    reasons = family_reasons(checks)
    assert set(reasons) == {("adult", "adv"), ("adult", "nonpriv")} and reasons[("adult", "nonpriv")] == ""
    assert "second optimum of adv on adult" in reasons[("adult", "adv")]
    assert f"{SEEDS_NEEDED} seeds are needed" in reasons[("adult", "adv")]

    folder = tmp_path / "results/tables/studies/seed_shape"
    folder.mkdir(parents=True)
    runs["attack_accuracy"] = runs["attack_accuracy"].astype(object)
    runs.loc[5, "attack_accuracy"] = "broken"  # a bad value: its row is left out and named
    runs.to_csv(folder / "runs.csv", index=False)
    monkeypatch.setattr("sys.argv", ["seed_shape.py", "--results", str(tmp_path / "results")])
    benchmark.main()
    out = capsys.readouterr().out
    assert f"{folder / 'runs.csv'}:7: attack_accuracy = 'broken' is not a finite number; row left out" in out
    assert "adult adv (lambda=1) | test accuracy | 15 seeds | R = " in out
    assert "SECOND OPTIMUM: seed(s) 30, 90, 140" in out
    assert "adult nonpriv | test accuracy | 15 seeds" in out and "families whose claims rows are untestable below 40 seeds: adv on adult" in out
    assert "adult nonpriv: 3 checks, seeds' sd up to" in out and "vouches for its rows" in out
    first_seed = f"10:{runs[(runs.method == 'adv') & (runs.seed == 10)].test_accuracy.iloc[0]:.4f}"
    assert first_seed in out  # every seed's value is printed
    assert "note: some measure has 14 seeds" in out  # the row left out


def test_the_study_check_finds_nothing_in_normal_seeds_and_names_a_missing_column(tmp_path) -> None:
    runs = _runs_table(np.random.default_rng(4), worse_seeds=set())
    assert not any(c.second_optimum for c in study_checks(runs))
    assert family_reasons(study_checks(runs)) == {("adult", "adv"): "", ("adult", "nonpriv"): ""}
    path = tmp_path / "runs.csv"
    runs.drop(columns=["attack_accuracy"]).to_csv(path, index=False)
    with pytest.raises(ValueError, match=r"runs.csv: no column\(s\) attack_accuracy"):
        benchmark.read_runs(path)
    clash = pd.concat([runs, runs.assign(test_accuracy=runs.test_accuracy + 0.01).head(1)])
    with pytest.raises(ValueError, match=r"adult nonpriv, test accuracy: seed\(s\) \[10\] have more than one"):
        study_checks(clash)


def test_the_family_checks_power_is_the_figure_docs_claims_states():
    """Issue 40: the power of a seed_shape family check as `make claims` runs it (15 seeds, Holm over the family's
    2 checks: test accuracy and the claims' attacker), 1 seed in 5 landing 10 or 5 points worse, at the seed spreads
    of Adult's, AG's and 1,500-example test sets (benchmarks/seed_shape.py prints it, docs/claims.md states it).
    At 1.3 points it reaches the 90% the issue asks for; the two-cluster test alone did not (69% over the study's
    22 checks, 82% over 2)."""
    from pathlib import Path

    from privtext.claims.seed_shape import MIN_POWER, family_check_power

    stated = {0.003: (0.97, 0.97), 0.007: (0.97, 0.86), 0.013: (0.90, 0.17)}  # spread: (10, 5 points worse)
    page = (Path(__file__).resolve().parents[1] / "docs" / "claims.md").read_text().splitlines()
    for spread, figures in stated.items():
        powers = [family_check_power(spread, worse, n_checks=2) for worse in (0.10, 0.05)]
        assert [round(p, 2) for p in powers] == list(figures), (spread, powers)
        row = next(line for line in page if line.startswith(f"| {spread * 100:g} points"))
        assert row.endswith(f"| {figures[0]:.0%} | {figures[1]:.0%} |"), row
    assert family_check_power(0.013, 0.10, n_checks=2) >= MIN_POWER


def test_the_outlier_half_finds_one_seed_in_a_worse_optimum_and_keeps_the_level():
    """family_test joins the two-cluster test with the largest studentised distance of one seed from the others:
    one seed of 15 in a worse optimum inflates the spread it is measured against, so R alone misses it; the
    joined test is calibrated as the smaller of two p-values, so under one normal optimum it keeps its level."""
    rng = np.random.default_rng(8)
    found = {"two-cluster": 0, "family": 0}
    for _ in range(500):  # one seed of 15 landing 10 points worse where seeds spread 1.3 points
        values = rng.normal(0.0, 1.0, 15)
        values[3] -= 7.7
        found["two-cluster"] += cluster_test(dict(enumerate(values))).p_value <= 0.025
        found["family"] += family_test(dict(enumerate(values))).p_value <= 0.025
    # at Holm's first step over a family's 2 checks: R alone 39%, the pair 99% (Monte Carlo SE ≤ 0.022)
    assert found["two-cluster"] / 500 <= 0.5 and found["family"] / 500 >= 0.95
    null = np.array([family_test(dict(enumerate(rng.normal(0.0, 1.0, 15)))).p_value for _ in range(2000)])
    # 2,000 draws: the Monte Carlo SE of a 5% rate is 0.0049
    assert abs((null <= 0.05).mean() - 0.05) <= 0.015 and abs((null <= 0.01).mean() - 0.01) <= 0.007


def test_a_family_whose_seeds_spread_too_widely_cannot_vouch_for_its_rows():
    """docs/claims.md: a family whose check has less than 90% power to find 1 seed in 5 landing 10 points worse,
    at its own seeds' spread, leaves its rows untestable below 40 seeds, and says so."""
    runs = _runs_table(np.random.default_rng(5), worse_seeds=set())
    wide = runs["method"] == "adv"
    runs.loc[wide, "attack_accuracy"] = 0.75 + np.random.default_rng(6).normal(0, 0.03, wide.sum())
    reasons = family_reasons(study_checks(runs))
    assert reasons[("adult", "nonpriv")] == ""
    assert "finds 1 seed in 5 landing 10 points worse only" in reasons[("adult", "adv")]
    assert f"{SEEDS_NEEDED} seeds are needed" in reasons[("adult", "adv")]
