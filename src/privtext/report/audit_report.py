"""The ε audit's table (csv + md) and figure: audited ε against claimed ε, one marker per mechanism.

Reads the table :func:`privtext.privacy.audit.run_audit` returns; matplotlib is imported only by the drawing code.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from privtext.privacy.audit import COLUMNS, MECHANISMS, PAIRS, REPORTED_FPR, TESTS

MECHANISM_STYLE = {  # Okabe–Ito colours; the reference code's variants in warm colours
    "l1": ("#0072B2", "o"), "minmax_calibrated": ("#009E73", "D"), "minmax": ("#D55E00", "s"),
    "dpnr_code": ("#E69F00", "P"), "cape_code": ("#CC79A7", "X"), "federate_code": ("#56B4E9", "^"),
    "laplace": ("#000000", "*"),
}
TEST_LABELS = {"likelihood_ratio": "likelihood ratio (filled)", "logistic_regression": "logistic regression (hollow)"}
SHOWN_FLOOR = 1e-3  # epsilon_lower = 0 (nothing proved) is drawn at this height (lower if a positive is)


def _number(value: float) -> str:
    return "–" if math.isnan(value) else "∞" if math.isinf(value) else f"{value:.4g}"


def hand_picked(table: pd.DataFrame) -> pd.DataFrame:
    """The rows on each mechanism's hand-picked pair (the summary figure's and the sizing note's)."""
    return table[table["pair"] == PAIRS[0]] if "pair" in table.columns else table


def audit_notes(table: pd.DataFrame) -> list[str]:
    confidence = float(table["confidence"].iloc[0]) if len(table) else 0.95
    samples = int(table["samples"].iloc[0]) if len(table) else 0
    ceiling = float(table["epsilon_ceiling"].iloc[0]) if len(table) else float("nan")
    return [
        "epsilon_lower: the largest ε the test proves, max(ln((1−β̄)/ᾱ), ln((1−ᾱ)/β̄)) with ᾱ, β̄ one-sided "
        f"Clopper–Pearson {confidence:.0%} upper limits of the test's error rates (both at once: at least "
        f"{2 * confidence - 1:.0%}), measured on `samples` fresh "
        "outputs of each input of the worst-case pair (as many again fitted the test and chose its threshold).",
        f"With {samples:,} outputs per input, no test can prove more than ε = {ceiling:.3g} (a test without a "
        "single error): a gap above that is not detectable at this sample size.",
        "epsilon_effective: the guarantee (privtext.privacy.accounting for the project's layers); the reference code's "
        "variants: dpnr_code and cape_code are not DP at any ε (∞), federate_code gives √D·ε.",
        "A correct mechanism never shows epsilon_lower > epsilon_effective (beyond the stated confidence).",
        "epsilon_reachable: what the best test would prove at this sample size if its error counts came out at their "
        "expected values under the pair's exact trade-off (dp-accounting); ∞ where the output is not Laplace noise.",
        short_of_90_percent(hand_picked(table)),
        "pair: hand-picked (the worst case written for the mechanism) or searched (found by privtext.privacy.search "
        "for each project layer; its outputs are released beside a known batch-mate, and the logistic regression "
        "also sees their difference). pair_epsilon: the pair's L1 distance after normalisation over the layer's "
        "noise scale, the ε the pair is worth under i.i.d. Laplace noise (the layer's own ε at its worst pair).",
    ]


def short_of_90_percent(table: pd.DataFrame) -> str:
    """Which DP settings this sample size cannot audit to 90% of their true ε, however good the test."""
    rows = table[(table["test"] == TESTS[0]) & np.isfinite(table["epsilon_effective"])
                 & (table["epsilon_reachable"] < 0.9 * table["epsilon_effective"])]
    if rows.empty:
        return "At this sample size the best test can reach 90% of the true ε in every setting."
    shown = ", ".join(f"{r.mechanism} (D = {r.D}, ε = {r.epsilon_nominal:g}: {r.epsilon_reachable:.3g} of "
                      f"{r.epsilon_effective:.4g})" for r in rows.itertuples())
    return ("Where the true curve does not let any test reach 90% of the true ε at this sample size "
            f"(epsilon_reachable of epsilon_effective): {shown}.")


def write_audit_table(table: pd.DataFrame, out_prefix: str | Path) -> list[Path]:
    """``out_prefix``.csv (every column) and .md (the required columns, the error bounds and notes)."""
    from privtext.report.artefacts.common import markdown_table  # the project's one markdown writer

    paths = [Path(f"{out_prefix}.csv"), Path(f"{out_prefix}.md")]
    paths[0].parent.mkdir(parents=True, exist_ok=True)
    table.to_csv(paths[0], index=False)
    shown = table[COLUMNS + ["pair_epsilon", "epsilon_reachable", "alpha_upper", "beta_upper"]].copy()
    for column in ("epsilon_nominal", "epsilon_effective", "epsilon_lower", "pair_epsilon", "epsilon_reachable",
                   "alpha_upper", "beta_upper"):
        shown[column] = shown[column].map(_number)
    lines = ["# Empirical ε audit of every privacy layer (docs/audit.md)", "", markdown_table(shown), "",
             *[f"- {note}" for note in audit_notes(table)]]
    paths[1].write_text("\n".join(lines) + "\n")
    return paths


def _panel(ax: Any, rows: pd.DataFrame, ceiling: float, floor: float) -> None:
    mechanisms = [m for m in MECHANISMS if m in set(rows["mechanism"])]
    for k, mechanism in enumerate(mechanisms):
        colour, marker = MECHANISM_STYLE.get(mechanism, ("#333333", "o"))
        spread = 1.09 ** (k - (len(mechanisms) - 1) / 2)  # side by side at a shared ε, on the log axis
        for test in TESTS:
            part = rows[(rows["mechanism"] == mechanism) & (rows["test"] == test)].sort_values("epsilon_nominal")
            ax.plot(part["epsilon_nominal"] * spread, np.maximum(part["epsilon_lower"], floor), linestyle="none",
                    marker=marker, markersize=7, color=colour, markeredgewidth=1.3,
                    markerfacecolor=colour if test == "likelihood_ratio" else "none")
    low, high = rows["epsilon_nominal"].min() / 2, max(rows["epsilon_nominal"].max(), ceiling) * 2
    ax.plot([low, high], [low, high], color="#444444", linestyle="--", linewidth=1.0)
    ax.axhline(ceiling, color="#888888", linestyle=":", linewidth=1.2)
    ax.axhspan(floor / 1.5, floor * 1.5, color="#eeeeee", zorder=0)
    ax.text(low * 1.1, floor * 1.6, "nothing proved (epsilon_lower = 0)", fontsize=7, color="#555555", va="bottom")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(low, high)
    ax.set_ylim(floor / 1.5, ceiling * 2)
    ax.set_xlabel("claimed ε (the hyper-parameter, log scale)")
    ax.set_ylabel("audited ε: epsilon_lower (log scale)")


def audit_figure(table: pd.DataFrame) -> Any:
    """One panel per D: epsilon_lower against epsilon_nominal, the y = x line and the sample-size ceiling."""
    from matplotlib.figure import Figure
    from matplotlib.lines import Line2D

    table = hand_picked(table)
    dims = sorted(table["D"].unique())
    figure = Figure(figsize=(4.6 * len(dims) + 0.4, 5.4), layout="constrained")
    axes = figure.subplots(1, max(1, len(dims)), squeeze=False)[0]
    ceiling = float(table["epsilon_ceiling"].max())
    positive = table.loc[table["epsilon_lower"] > 0, "epsilon_lower"]
    floor = min(SHOWN_FLOOR, positive.min() / 3) if len(positive) else SHOWN_FLOOR  # no positive in the band
    for ax, dim in zip(axes, dims):
        _panel(ax, table[table["D"] == dim], ceiling, floor)
        ax.set_title(f"D = {dim}" if dim > 1 else "scalar (D = 1)")
    style = lambda m: MECHANISM_STYLE.get(m, ("#333333", "o"))  # noqa: E731
    handles = [Line2D([], [], color=style(m)[0], marker=style(m)[1], linestyle="none", markersize=7, label=m)
               for m in MECHANISMS if m in set(table["mechanism"])]
    handles += [Line2D([], [], color="#444444", linestyle="--", label="audited = claimed"),
                Line2D([], [], color="#888888", linestyle=":", label="most this sample size can prove")]
    handles += [Line2D([], [], color="#444444", linestyle="none", marker="o", label=TEST_LABELS[t],
                       markerfacecolor="#444444" if t == "likelihood_ratio" else "none") for t in TESTS]
    figure.legend(handles=handles, loc="outside lower center", ncols=4, frameon=False)
    figure.suptitle("Empirical ε audit: above the dashed line, the claimed ε is proved wrong "
                    f"({int(table['samples'].iloc[0]):,} outputs per input)")
    return figure


def write_audit_figure(table: pd.DataFrame, out_prefix: str | Path) -> list[Path]:
    """``out_prefix``.png and .pdf, in the project's figure style."""
    import matplotlib

    from privtext.report.artefacts.common import FIGURE_STYLE, save_figure

    with matplotlib.rc_context(FIGURE_STYLE):
        return save_figure(audit_figure(table), out_prefix)


# --- trade-off curves and privacy profiles (docs/audit.md, "Trade-off curves") ---------------------------------

def _rate(row: pd.Series) -> str:
    return f"{row['tpr']:.3g} [{row['tpr_low']:.3g}, {row['tpr_high']:.3g}] at {row['fpr']:.2g}"


def tradeoff_summary(tradeoff: pd.DataFrame) -> pd.DataFrame:
    """Power at each reported false-positive rate: measured (with its interval and the false-positive rate it
    really had) for each test, beside the most any test can have there (exact; "–" where the law is not Laplace)."""
    key = ["mechanism", "D", "epsilon_nominal"]
    measured = tradeoff[(tradeoff["source"] == "measured") & tradeoff["fpr_target"].isin(REPORTED_FPR)]
    exact = tradeoff[(tradeoff["source"] == "exact") & tradeoff["fpr"].isin(REPORTED_FPR)]
    rows = []
    for (mechanism, dim, epsilon, test), part in measured.groupby(key + ["test"], sort=False):
        row = {"mechanism": mechanism, "D": dim, "epsilon_nominal": epsilon, "test": test}
        for fpr in REPORTED_FPR:
            hit = part[part["fpr_target"] == fpr]
            best = exact[(exact["mechanism"] == mechanism) & (exact["D"] == dim)
                         & (exact["epsilon_nominal"] == epsilon) & (exact["fpr"] == fpr)]
            row[f"TPR at FPR {fpr:g}: measured [95% CI] at its FPR"] = _rate(hit.iloc[0]) if len(hit) else "–"
            row[f"TPR at FPR {fpr:g}: best possible"] = f"{best['tpr'].iloc[0]:.3g}" if len(best) else "–"
        rows.append(row)
    return pd.DataFrame(rows)


def write_tradeoff_tables(tradeoff: pd.DataFrame, profile: pd.DataFrame, tradeoff_prefix: str | Path,
                          profile_csv: str | Path) -> list[Path]:
    """``tradeoff_prefix``.csv (every point), .md (power at REPORTED_FPR) and the exact profiles' csv."""
    from privtext.report.artefacts.common import markdown_table

    paths = [Path(f"{tradeoff_prefix}.csv"), Path(f"{tradeoff_prefix}.md"), Path(profile_csv)]
    paths[0].parent.mkdir(parents=True, exist_ok=True)
    tradeoff.to_csv(paths[0], index=False)
    lines = ["# Trade-off of the ε audit's tests (docs/audit.md, \"Trade-off curves\")", "",
             markdown_table(tradeoff_summary(tradeoff)), "",
             "- measured: the threshold is chosen on the calibration half for the target false-positive rate; both "
             "rates are counted on the measurement half (two-sided Clopper–Pearson intervals; ties broken at random).",
             "- best possible: 1 − f(α), the trade-off function of the pair's exact privacy loss distribution "
             "(dp-accounting); a sound mechanism's measured power stays under it (up to its interval)."]
    paths[1].write_text("\n".join(lines) + "\n")
    paths[2].parent.mkdir(parents=True, exist_ok=True)
    profile.to_csv(paths[2], index=False)
    return paths


FPR_FLOOR = 1e-5  # the trade-off panels' left edge (false-positive rate 0 is drawn here)


def _dp_region(epsilon: float, fpr: np.ndarray) -> np.ndarray:
    """The most power an ε-DP mechanism allows: min(1, e^ε·α, 1 − e^−ε·(1 − α))."""
    return np.minimum.reduce([np.ones_like(fpr), np.exp(min(epsilon, 700.0)) * fpr, 1 - np.exp(-epsilon) * (1 - fpr)])


def tradeoff_figure(tradeoff: pd.DataFrame, profile: pd.DataFrame, mechanism: str) -> Any:
    """One column per ε; per D a row of trade-off panels (power against false-positive rate, both log) and a row
    of exact ε(δ) profiles."""
    from matplotlib.figure import Figure

    rows = tradeoff[tradeoff["mechanism"] == mechanism]
    if rows.empty:
        raise ValueError(f"the audit's trade-off table has no rows for mechanism {mechanism!r}")
    dims, epsilons = sorted(rows["D"].unique()), sorted(rows["epsilon_nominal"].unique())
    figure = Figure(figsize=(3.4 * len(epsilons) + 0.4, 5.6 * len(dims)), layout="constrained")
    axes = figure.subplots(2 * len(dims), len(epsilons), squeeze=False)
    colour = MECHANISM_STYLE.get(mechanism, ("#333333", "o"))[0]
    grid = np.geomspace(FPR_FLOOR, 1.0, 200)
    for i, dim in enumerate(dims):
        for j, epsilon in enumerate(epsilons):
            ax, ax_profile = axes[2 * i, j], axes[2 * i + 1, j]
            part = rows[(rows["D"] == dim) & (rows["epsilon_nominal"] == epsilon)]
            ax.plot(grid, _dp_region(epsilon, grid), color="#888888", linestyle="--", linewidth=1.0,
                    label="most a release true to the claimed ε allows")
            exact = part[part["source"] == "exact"]
            if len(exact):
                ax.plot(np.maximum(exact["fpr"], FPR_FLOOR), np.maximum(exact["tpr"], FPR_FLOOR), color="#000000",
                        linewidth=1.2, label="best possible (exact, dp-accounting)")
            for test in TESTS:
                measured = part[(part["source"] == "measured") & (part["test"] == test)]
                x, y = np.maximum(measured["fpr"], FPR_FLOOR), np.maximum(measured["tpr"], FPR_FLOOR)
                ax.errorbar(x, y, yerr=[y - np.maximum(measured["tpr_low"], FPR_FLOOR),
                                        np.maximum(measured["tpr_high"], FPR_FLOOR) - y],
                            linestyle="none", marker="o", markersize=3.5, color=colour, elinewidth=0.8,
                            markerfacecolor=colour if test == "likelihood_ratio" else "none",
                            label=TEST_LABELS[test].split(" (")[0] + " (measured, 95% CI)")
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_xlim(FPR_FLOOR, 1.0)
            ax.set_ylim(FPR_FLOOR, 1.5)
            ax.set_title(f"D = {dim}, claimed ε = {epsilon:g}" if dim > 1 else f"claimed ε = {epsilon:g}")
            ax.set_xlabel("false-positive rate")
            ax.set_ylabel("true-positive rate")
            curve = profile[(profile["mechanism"] == mechanism) & (profile["D"] == dim)
                            & (profile["epsilon_nominal"] == epsilon) & (profile["delta"] > 0)]
            if len(curve):
                ax_profile.plot(curve["delta"], curve["epsilon"], color="#000000", linewidth=1.2)
                ax_profile.set_xscale("log")
            else:
                ax_profile.text(0.5, 0.5, "no finite ε at any δ\n(not DP)", ha="center", va="center",
                                transform=ax_profile.transAxes)
            ax_profile.axhline(epsilon, color="#888888", linestyle="--", linewidth=1.0)
            ax_profile.set_xlabel("δ")
            ax_profile.set_ylabel("exact ε(δ) of the pair")
    handles, labels = axes[0, 0].get_legend_handles_labels()
    figure.legend(handles, labels, loc="outside lower center", ncols=2, frameon=False)
    figure.suptitle(f"{mechanism}: trade-off of the audit's tests on its worst-case pair, and its exact ε(δ) "
                    "(dashed: the claimed ε)")
    return figure


def write_tradeoff_figure(tradeoff: pd.DataFrame, profile: pd.DataFrame, mechanism: str,
                          out_prefix: str | Path) -> list[Path]:
    """``out_prefix``.png and .pdf: :func:`tradeoff_figure` in the project's figure style."""
    import matplotlib

    from privtext.report.artefacts.common import FIGURE_STYLE, save_figure

    with matplotlib.rc_context(FIGURE_STYLE):
        return save_figure(tradeoff_figure(tradeoff, profile, mechanism), out_prefix)


RELEASE_SHOWN = ["dataset", "method", "epsilon_nominal", "mu", "adjacency", "test", "epsilon_lower", "epsilon_effective",
                 "epsilon_prime", "epsilon_prime_nominal", "pair_epsilon"]


def release_audit_notes(table: pd.DataFrame) -> list[str]:
    """What the end-to-end table answers: does a path exceed its guarantee, does word dropout's amplification show
    for one-word pairs and not for any pair, and how far real pairs are from the layer's worst case."""
    from privtext.jobs.release_audit import ADJACENCIES, exceeds

    if table.empty:
        return ["No release path was audited."]
    above = table[exceeds(table)]
    notes = [
        "epsilon_lower as in the layer audit, on outputs of the whole path: word dropout at mu (the pipeline's masks), "
        "the frozen encoder, the run's trained encoder, normalisation and noise; epsilon_effective: the layer's real "
        "guarantee (privtext.privacy.accounting); epsilon_prime: DPNR Theorem 2's ln((1 − mu)·e^ε + mu) of the "
        "effective ε, which the theorem promises for one-word pairs only; epsilon_prime_nominal: the same at the "
        "nominal ε, as the paper states it; masked_share: the share of the drawn masks under which the two texts "
        "coincide (for a one-word pair, those hiding the swapped word: at most mu, since ⌊d·mu⌋ of d words are "
        "masked); epsilon_prime_audited: Theorem 2's argument at that share, the guarantee of the release audited; "
        "pair_epsilon: the pair's L1 distance after normalisation (mu = 0) over the noise scale.",
        f"Paths above their guarantee (effective ε, or epsilon_prime_audited for a one-word pair): {len(above)} of "
        f"{len(table)} bounds" + (": " + "; ".join(f"{r.dataset} {r.method} mu = {r.mu:g} {r.adjacency} "
                                                   f"{r.test} {r.epsilon_lower:.3g}" for r in above.itertuples())
                                  if len(above) else "."),
    ]
    lr = table[table["test"] == TESTS[0]]
    for adjacency in ADJACENCIES:
        rows = lr[lr["adjacency"] == adjacency]
        base = rows[rows["mu"] == 0].set_index(["dataset", "method", "epsilon_nominal"])["epsilon_lower"]
        for mu in sorted(set(rows["mu"]) - {0.0}):
            dropped = rows[rows["mu"] == mu].set_index(["dataset", "method", "epsilon_nominal"])["epsilon_lower"]
            change = (dropped - base).dropna()
            if len(change):
                notes.append(f"Word dropout at mu = {mu:g}, {adjacency} pairs: the likelihood ratio's bound moves by "
                             f"{change.median():+.3g} (median of {len(change)} paths; range {change.min():+.3g} to "
                             f"{change.max():+.3g}) against mu = 0.")
        ratio = (rows["pair_epsilon"] / rows["epsilon_effective"]).dropna()
        if len(ratio):
            notes.append(f"{adjacency} pairs reach {ratio.max():.3g} of the layer's worst case at most (pair_epsilon "
                         f"over the effective ε; median {ratio.median():.3g}).")
    return notes


def write_release_audit_table(table: pd.DataFrame, out_prefix: str | Path) -> list[Path]:
    """``out_prefix``.csv (every column) and .md (the main columns and what they answer)."""
    from privtext.report.artefacts.common import markdown_table

    paths = [Path(f"{out_prefix}.csv"), Path(f"{out_prefix}.md")]
    paths[0].parent.mkdir(parents=True, exist_ok=True)
    table.to_csv(paths[0], index=False)
    shown = table[RELEASE_SHOWN].copy()
    for column in RELEASE_SHOWN[6:]:
        shown[column] = shown[column].map(_number)
    lines = ["# The release path audited end to end (docs/audit.md)", "", markdown_table(shown), "",
             *[f"- {note}" for note in release_audit_notes(table)]]
    paths[1].write_text("\n".join(lines) + "\n")
    return paths
