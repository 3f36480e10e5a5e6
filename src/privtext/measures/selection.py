"""Hyper-parameter selection with a relaxation threshold (FEDERATE §5.1) and uncertainty over seeds.

Selection reads only the columns it is told are dev metrics (plus the grouping and parameter columns);
any test column rides along for reporting and cannot change the choice. Accuracies are fractions in [0, 1];
the relaxation threshold is given in percentage points (``rt_points=1.0`` admits settings within 0.01).
"""

from __future__ import annotations

import re
from typing import Any, Sequence

import numpy as np
import pandas as pd
from scipy import stats

_TEST_NAME = re.compile(r"(^|[_\W])test($|[_\W])", re.IGNORECASE)
_TOLERANCE = 1e-9  # float slack so a setting exactly RT points below the best is admitted


def select_settings(
    runs: pd.DataFrame,
    group_by: Sequence[str],
    param_cols: Sequence[str],
    dev_accuracy: str,
    dev_fairness: str,
    rt_points: float,
    fairness_higher_is_better: bool = False,
) -> pd.DataFrame:
    """One row per group: the chosen hyper-parameter setting and its seed-averaged dev metrics.

    Per group: average the dev metrics over seeds for each setting (``param_cols``); admit the settings
    whose mean dev accuracy is at least ``best − rt_points/100``; pick the best mean dev fairness among
    them. Ties: higher mean dev accuracy, then the smallest parameter values in ``param_cols`` order
    (NaN last). ``rt_points=0`` is plain best dev accuracy (ties then go to fairness).
    """
    _validate(runs, group_by, param_cols, dev_accuracy, dev_fairness, rt_points)
    keys = list(group_by) + list(param_cols)
    means = (
        runs.groupby(keys, dropna=False, sort=True)
        .agg(dev_accuracy_mean=(dev_accuracy, "mean"), dev_fairness_mean=(dev_fairness, "mean"),
             n_seeds=(dev_accuracy, "size"))
        .reset_index()
    )
    chosen = []
    grouped = means.groupby(list(group_by), dropna=False, sort=True) if group_by else [((), means)]
    for _, settings in grouped:
        best_accuracy = settings["dev_accuracy_mean"].max()
        admitted = settings[settings["dev_accuracy_mean"] >= best_accuracy - rt_points / 100.0 - _TOLERANCE]
        # Rank by fairness (best first, NaN last), then accuracy, then parameters: a total order.
        fairness_key = admitted["dev_fairness_mean"] * (-1.0 if fairness_higher_is_better else 1.0)
        ranked = admitted.assign(_fair=fairness_key.fillna(np.inf), _acc=-admitted["dev_accuracy_mean"])
        ranked = ranked.sort_values(["_fair", "_acc", *param_cols], na_position="last", kind="mergesort")
        chosen.append(ranked.iloc[[0]].drop(columns=["_fair", "_acc"]).assign(
            best_dev_accuracy_mean=best_accuracy, n_settings=len(settings), n_admitted=len(admitted),
            rt_points=float(rt_points),
        ))
    return pd.concat(chosen, ignore_index=True)


def select(
    runs: pd.DataFrame,
    group_by: Sequence[str],
    param_cols: Sequence[str],
    dev_accuracy: str,
    dev_fairness: str,
    rt_points: float,
    fairness_higher_is_better: bool = False,
) -> pd.DataFrame:
    """The per-seed rows of ``runs`` (all columns, test ones included) of the setting chosen in each group
    by :func:`select_settings`, with its selection columns (``dev_accuracy_mean``, ``dev_fairness_mean``,
    ``n_seeds``, ``best_dev_accuracy_mean``, ``n_settings``, ``n_admitted``, ``rt_points``) appended."""
    chosen = select_settings(runs, group_by, param_cols, dev_accuracy, dev_fairness, rt_points,
                             fairness_higher_is_better)
    keys = list(group_by) + list(param_cols)
    # Match on keys with NaN treated as equal (a parameter not used by a method is NaN in every row).
    left = runs.reset_index().rename(columns={"index": "_row"})
    merged = left.merge(chosen, on=keys, how="inner", suffixes=("", "_selection"))
    return merged.sort_values("_row", kind="mergesort").set_index("_row").rename_axis(None)


def summarise_over_seeds(
    df: pd.DataFrame,
    value_cols: Sequence[str],
    seed_col: str = "seed",
    group_by: Sequence[str] = (),
    confidence: float = 0.95,
    n_resamples: int = 9999,
    seed: int = 0,
) -> pd.DataFrame:
    """Long table, one row per (group, metric): ``n``, ``mean``, ``std`` (ddof=1), ``ci_low``, ``ci_high``.

    Rows sharing a seed are first averaged, so each seed counts once. The interval is a seeded percentile
    bootstrap of the mean over seeds (``scipy.stats.bootstrap``; percentile rather than BCa because BCa
    is undefined for the constant samples that 5 seeds often give). ``std`` and the interval are NaN for n < 2.
    """
    missing = [c for c in [*value_cols, seed_col, *group_by] if c not in df.columns]
    if missing:
        raise ValueError(f"columns {missing} not in the table; have {list(df.columns)}")
    per_seed = df.groupby([*group_by, seed_col], dropna=False)[list(value_cols)].mean().reset_index()
    rows = []
    grouped = per_seed.groupby(list(group_by), dropna=False, sort=True) if group_by else [((), per_seed)]
    for key, part in grouped:
        key = key if isinstance(key, tuple) else (key,)
        for column in value_cols:
            values = part[column].dropna().to_numpy(dtype=float)
            low, high = _bootstrap_ci(values, confidence, n_resamples, seed)
            rows.append({
                **dict(zip(group_by, key)), "metric": column, "n": int(len(values)),
                "mean": float(values.mean()) if len(values) else np.nan,
                "std": float(values.std(ddof=1)) if len(values) >= 2 else np.nan,
                "ci_low": low, "ci_high": high,
            })
    return pd.DataFrame(rows)


def paired_test(a: Sequence[float], b: Sequence[float]) -> dict[str, Any]:
    """Paired comparison of ``a`` and ``b`` over the same seeds (two-sided).

    Returns ``{"n", "mean_difference" (a − b), "t_statistic", "t_pvalue", "wilcoxon_statistic",
    "wilcoxon_pvalue"}``; a test that the data do not allow (n < 2, or all differences zero for Wilcoxon,
    or all differences equal for t) gives None for its entries.
    """
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError(f"paired samples must be 1-D of equal length, got {a.shape} and {b.shape}")
    difference = a - b
    result: dict[str, Any] = {
        "n": int(len(a)), "mean_difference": float(difference.mean()) if len(a) else None,
        "t_statistic": None, "t_pvalue": None, "wilcoxon_statistic": None, "wilcoxon_pvalue": None,
    }
    if len(a) >= 2 and np.ptp(difference) > 0:
        t = stats.ttest_rel(a, b)
        result["t_statistic"], result["t_pvalue"] = float(t.statistic), float(t.pvalue)
    if np.count_nonzero(difference) >= 1:
        w = stats.wilcoxon(a, b)
        result["wilcoxon_statistic"], result["wilcoxon_pvalue"] = float(w.statistic), float(w.pvalue)
    return result


def _bootstrap_ci(values: np.ndarray, confidence: float, n_resamples: int, seed: int) -> tuple[float, float]:
    if len(values) < 2:
        return np.nan, np.nan
    if np.ptp(values) == 0:
        return float(values[0]), float(values[0])  # every resample has the same mean
    result = stats.bootstrap(
        (values,), np.mean, confidence_level=confidence, n_resamples=n_resamples, method="percentile",
        rng=np.random.default_rng(seed),
    )
    return float(result.confidence_interval.low), float(result.confidence_interval.high)


def _validate(
    runs: pd.DataFrame,
    group_by: Sequence[str],
    param_cols: Sequence[str],
    dev_accuracy: str,
    dev_fairness: str,
    rt_points: float,
) -> None:
    missing = [c for c in [*group_by, *param_cols, dev_accuracy, dev_fairness] if c not in runs.columns]
    if missing:
        raise ValueError(f"columns {missing} not in runs; have {list(runs.columns)}")
    for column in (dev_accuracy, dev_fairness):
        if _TEST_NAME.search(column):
            raise ValueError(f"selection column {column!r} looks like a test metric; select on dev only")
    if not [*group_by, *param_cols]:
        raise ValueError("give at least one group_by or param_cols column")
    if rt_points < 0:
        raise ValueError(f"rt_points must be >= 0 (percentage points), got {rt_points}")
    accuracy = runs[dev_accuracy].dropna()
    if len(accuracy) and (accuracy.min() < 0 or accuracy.max() > 1):
        raise ValueError(
            f"{dev_accuracy!r} must be a fraction in [0, 1] (rt_points is in percentage points), "
            f"got range [{accuracy.min()}, {accuracy.max()}]"
        )
    if runs.empty:
        raise ValueError("runs is empty: nothing to select from")
