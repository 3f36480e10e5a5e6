"""The ε audit's table (csv + md) and figure: audited ε against claimed ε, one marker per mechanism.

Reads the table :func:`privtext.privacy.audit.run_audit` returns; matplotlib is imported only by the drawing code.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from privtext.privacy.audit import COLUMNS, MECHANISMS, TESTS

MECHANISM_STYLE = {  # Okabe–Ito colours; the reference code's variants in warm colours
    "l1": ("#0072B2", "o"), "minmax_calibrated": ("#009E73", "D"), "minmax": ("#D55E00", "s"),
    "dpnr_code": ("#E69F00", "P"), "cape_code": ("#CC79A7", "X"), "federate_code": ("#56B4E9", "^"),
    "laplace": ("#000000", "*"),
}
TEST_LABELS = {"likelihood_ratio": "likelihood ratio (filled)", "logistic_regression": "logistic regression (hollow)"}
SHOWN_FLOOR = 1e-3  # epsilon_lower = 0 (nothing proved) is drawn at this height (lower if a positive is)


def _number(value: float) -> str:
    return "∞" if math.isinf(value) else f"{value:.4g}"


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
    ]


def write_audit_table(table: pd.DataFrame, out_prefix: str | Path) -> list[Path]:
    """``out_prefix``.csv (every column) and .md (the required columns, the error bounds and notes)."""
    from privtext.report.artefacts.common import markdown_table  # the project's one markdown writer

    paths = [Path(f"{out_prefix}.csv"), Path(f"{out_prefix}.md")]
    paths[0].parent.mkdir(parents=True, exist_ok=True)
    table.to_csv(paths[0], index=False)
    shown = table[COLUMNS + ["alpha_upper", "beta_upper"]].copy()
    for column in ("epsilon_nominal", "epsilon_effective", "epsilon_lower", "alpha_upper", "beta_upper"):
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
