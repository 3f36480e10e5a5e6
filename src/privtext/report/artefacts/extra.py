"""Beyond the papers: nominal vs effective ε per DP method, and every DP method on one effective-ε axis.

The papers' ε are not comparable: DPNR's and CAPE's min-max layer adds Lap(1/ε) to D coordinates whose
L1 sensitivity is D, so it guarantees D·ε; FEDERATE's l1 layer guarantees its nominal ε (docs/methods.md, "Privacy layers").
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from privtext.report.artefacts.common import (
    METHOD_ORDER, MARKERS, PALETTE, ArtefactInputs, TableArtefact, cells_frame, dataset_label, empty_panel,
    figure_title, method_label, method_legend, number_text, ordered, panel_grid, stats_of,
)

ATTACKER = "mlp"
PERCENT = 100.0
KEYS = ["method", "privacy_layer", "epsilon_nominal", "param_mu", "representation_dim"]


def _dp_runs(measures: pd.DataFrame) -> pd.DataFrame:
    """One row per DP run (a privacy layer was applied): its ε columns and dataset."""
    rows = measures[(measures["privacy_layer"] != "") & measures["epsilon_nominal"].notna()]
    columns = ["dataset", "run_dir", "seed", *KEYS, "epsilon_effective"]
    return rows.drop_duplicates(subset=["dataset", "run_dir", *KEYS, "seed"])[columns]


def effective_epsilon(inputs: ArtefactInputs) -> TableArtefact:
    """One row per DP method × nominal ε × μ × representation size: the ε the release actually guarantees."""
    runs = _dp_runs(inputs.measures)
    records = []
    if not runs.empty:
        grouped = runs.groupby(KEYS, dropna=False)
        for key, part in sorted(grouped, key=lambda kv: (_method_rank(kv[0][0]), str(kv[0][1]), kv[0][2], kv[0][3])):
            row = dict(zip(KEYS, key))
            effective = part["epsilon_effective"].dropna().unique()
            row.update({
                "Method": method_label(row["method"]), "Layer": row["privacy_layer"],
                "ε nominal": number_text(row["epsilon_nominal"]), "μ": number_text(row["param_mu"]),
                "D": "" if pd.isna(row["representation_dim"]) else str(int(row["representation_dim"])),
                "ε effective": ", ".join(f"{e:.6g}" for e in sorted(effective)),
                "epsilon_effective": float(effective[0]) if len(effective) == 1 else np.nan,
                "datasets": ", ".join(ordered(part["dataset"].unique(), ())),
                "ratio effective / nominal": (f"{effective[0] / row['epsilon_nominal']:.6g}"
                                              if len(effective) == 1 and row["epsilon_nominal"] else ""),
            })
            records.append({**row, "column": "Runs", "metric": "n_runs", "ours_mean": float(part["run_dir"].nunique()),
                            "ours_std": np.nan, "n_seeds": part["seed"].nunique()})
    label_columns = [*KEYS, "Method", "Layer", "ε nominal", "μ", "D"]
    return TableArtefact(
        title="Nominal vs effective ε of every DP method run",
        cells=cells_frame(records, label_columns), row_keys=["Method", "Layer", "ε nominal", "μ", "D"],
        columns=["Runs"], info_columns=["ε effective", "ratio effective / nominal", "datasets"],
        column_digits={"Runs": 0}, show_paper=False, unit="count", seeds_note=False,
        notes=["ε effective is the local-DP guarantee of the released representation: minmax adds Lap(1/ε) to D "
               "coordinates of L1 sensitivity D (D·ε); minmax_calibrated and l1 guarantee ε; word dropout μ "
               "lowers it "
               "to ln((1−μ)·e^ε + μ) (DPNR Theorem 2). D is the representation size.",
               "Runs counts grid points (datasets × seeds × other hyper-parameters such as λ)."],
    )


def _method_rank(method: str) -> int:
    return METHOD_ORDER.index(method) if method in METHOD_ORDER else len(METHOD_ORDER)


def attacker_advantage(inputs: ArtefactInputs) -> pd.DataFrame:
    """Per run: attacker accuracy minus the majority rate (`mlp`, test), averaged over the private attributes."""
    accuracy = inputs.pick("attack_accuracy", None, "test", attacker=ATTACKER)
    majority = inputs.pick("attack_majority_rate", None, "test", attacker=ATTACKER)
    keys = ["dataset", "run_dir", "method", "seed", "privacy_layer", "epsilon_effective", "param_mu", "attribute"]
    if accuracy.empty or majority.empty:
        return pd.DataFrame(columns=[*keys[:-1], "value"])
    joined = accuracy[keys + ["value"]].merge(majority[keys + ["value"]], on=keys, suffixes=("_accuracy", "_majority"))
    joined["value"] = joined["value_accuracy"] - joined["value_majority"]
    return joined.groupby(keys[:-1], dropna=False, as_index=False)["value"].mean()


def figure_effective_epsilon(inputs: ArtefactInputs) -> Any:
    """One panel per dataset: each DP method's attacker advantage (%) against its effective ε, log x axis
    shared by all methods and panels; NON-PRIV as a dashed reference."""
    advantage = attacker_advantage(inputs)
    datasets = [d for d in inputs.datasets() if d in set(advantage["dataset"])]
    figure, axes = panel_grid(len(datasets), panel_size=(3.6, 3.0))
    effective = advantage["epsilon_effective"].astype(float)
    finite = effective[(advantage["privacy_layer"] != "") & np.isfinite(effective) & (effective > 0)]
    if not datasets:
        empty_panel(axes[0], "no attacker results in the saved measures")
    shown: list[str] = []
    for ax, dataset in zip(axes, datasets):
        rows = advantage[advantage["dataset"] == dataset]
        dp = rows[(rows["privacy_layer"] != "") & np.isfinite(rows["epsilon_effective"].astype(float))]
        for method in ordered(dp["method"].unique(), METHOD_ORDER):
            part = dp[dp["method"] == method]
            for dropout, style in ((False, "-"), (True, "none")):
                sub = part[(part["param_mu"] > 0) == dropout]
                if sub.empty:
                    continue
                # Points average the seeds and any other hyper-parameter (e.g. λ) sharing the same ε.
                points = [(e, stats_of(g, PERCENT)) for e, g in sub.groupby("epsilon_effective")]
                colour = PALETTE.get(method, "#333333")
                ax.errorbar([p[0] for p in points], [p[1]["ours_mean"] for p in points],
                            yerr=[np.nan_to_num(p[1]["ours_std"]) for p in points], color=colour,
                            marker=MARKERS.get(method, "o"), linestyle=style,
                            markerfacecolor="none" if dropout else colour)
            if method not in shown:
                shown.append(method)
        baseline = stats_of(rows[rows["method"] == "nonpriv"], PERCENT)
        if not np.isnan(baseline["ours_mean"]):
            ax.axhline(baseline["ours_mean"], color=PALETTE["nonpriv"], linestyle="--", linewidth=1.0)
            if "nonpriv" not in shown:
                shown.append("nonpriv")
        ax.axhline(0.0, color="#999999", linewidth=0.8)
        if not dp.empty:
            ax.set_xscale("log")
            ax.set_xlim(finite.min() / 1.6, finite.max() * 1.6)  # the same effective-ε axis in every panel
        ax.set_title(dataset_label(dataset))
        ax.set_xlabel("effective ε (log scale)")
        ax.set_ylabel("attacker advantage over majority (points)")
    styles = {"nonpriv": {"linestyle": "--", "marker": None}}
    method_legend(figure, shown, styles=styles)
    figure_title(figure, f"{ATTACKER} attacker's advantage over the majority rate vs effective ε "
                    "(dashed: NON-PRIV; hollow markers: word dropout μ > 0)")
    return figure
