"""FEDERATE (Maheshwari et al. 2022) Tables 1–7 and Figures 2–4 from saved measures.

Model selection follows FEDERATE §5.1 with :func:`privtext.measures.selection.select`: per dataset and method, among
the hyper-parameter settings whose seed-mean dev accuracy is within RT points of the best, the one with the
best seed-mean dev fairness. Only dev columns enter the choice; test metrics of the chosen setting are then
reported as mean ± std over its seeds.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from privtext.report.artefacts.common import (
    MARKERS, PALETTE, ArtefactInputs, TableArtefact, cells_frame, dataset_label, empty_panel, equals, figure_title,
    method_legend, new_figure, number_text, panel_grid, paper_dataset, paper_value, param_columns, PARAM_TEXT, stats_of,
)

TABLE_METHODS = ("random", "nonpriv", "adv", "multiadv", "inlp", "noise", "federate")  # FEDERATE Tables 1–3
RT_METHODS = ("nonpriv", "adv", "multiadv", "noise", "federate")  # Tables 4–6 have no INLP row
TRAINED_METHODS = ("nonpriv", "adv", "multiadv", "inlp", "noise", "federate")
EPSILONS = (8.0, 10.0, 12.0, 14.0, 16.0)  # Table 7 / Figure 4
RT_GRID = (0.0, 0.5, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0)  # Figure 2
LEAKAGE_ATTACKER = "sklearn_mlp"  # FEDERATE's Leakage: scikit-learn MLP trained on dev, scored on test
PERCENT = 100.0
LABELS = {"random": "Random", "nonpriv": "Non-priv", "adv": "Adv", "multiadv": "Multi-adv", "inlp": "INLP",
          "noise": "Noise", "federate": "FEDERATE"}
METRICS = ("test_accuracy", "test_fairness", "test_leakage", "mdl_kbits")
PUBLISHED_MAIN = ("table1a", "table1b", "table2", "table3")


def protected_attribute(inputs: ArtefactInputs, dataset: str) -> str | None:
    """FEDERATE protects one attribute: the dataset's first private attribute."""
    attributes = inputs.attributes(dataset)
    return attributes[0] if attributes else None


def fairness_metric(inputs: ArtefactInputs, dataset: str) -> str:
    """TPR-gap for binary tasks, GRMS for multi-class (FEDERATE §5.1)."""
    return "tpr_gap" if inputs.n_labels(dataset) == 2 else "grms"


def runs_frame(inputs: ArtefactInputs, dataset: str) -> pd.DataFrame:
    """One row per run (dataset, method, parameters, seed) with its dev metrics (for selection) and test
    metrics (for reporting) on the protected attribute."""
    if ("runs", dataset) in inputs.cache:
        return inputs.cache[("runs", dataset)]
    attribute = protected_attribute(inputs, dataset) or ""
    params = param_columns(inputs.measures)
    keys = ["dataset", "method", *params, "seed"]
    sources = {
        "dev_accuracy": inputs.pick("accuracy", dataset, "dev"),
        "dev_fairness": inputs.pick("fairness", dataset, "dev", attribute),
        "test_accuracy": inputs.pick("accuracy", dataset, "test"),
        "test_fairness": inputs.pick("fairness", dataset, "test", attribute),
        "test_leakage": inputs.pick("attack_accuracy", dataset, "test", attribute, LEAKAGE_ATTACKER),
        "mdl_kbits": inputs.pick("mdl_kbits", dataset, None, attribute),
    }
    wide = None
    for name, part in sources.items():
        if part.empty:
            continue
        # NaN parameter keys (a method without that parameter) match each other in groupby and merge.
        column = part.groupby(keys, dropna=False)["value"].mean().rename(name).reset_index()
        wide = column if wide is None else wide.merge(column, on=keys, how="outer")
    if wide is None or "dev_accuracy" not in wide.columns:
        wide = pd.DataFrame(columns=[*keys, *sources])
    wide = wide.reindex(columns=[*keys, *sources])
    inputs.cache[("runs", dataset)] = wide[wide["dev_accuracy"].notna()].reset_index(drop=True)
    return inputs.cache[("runs", dataset)]


def selected_runs(
    runs: pd.DataFrame, rt_points: float, methods: Sequence[str], extra_group: Sequence[str] = ()
) -> pd.DataFrame:
    """Per-seed rows of the setting chosen at ``rt_points`` for each (dataset, method, *extra_group)."""
    from privtext.measures.selection import select  # scipy import kept out of the registry's import path

    runs = runs[runs["method"].isin(methods)]
    if runs.empty:
        return runs.assign(rt_points=float(rt_points))
    params = [c for c in runs.columns if c.startswith("param_") and c not in extra_group]
    return select(runs, group_by=["dataset", "method", *extra_group], param_cols=params,
                  dev_accuracy="dev_accuracy", dev_fairness="dev_fairness", rt_points=rt_points)


def setting_text(row: pd.Series | dict[str, Any]) -> str:
    """'ε = 8, λ = 0.5' from a chosen setting's parameters (μ only when word dropout is on)."""
    parts = []
    for column, label in PARAM_TEXT.items():
        value = row.get(column, np.nan)
        if value is None or pd.isna(value) or (column == "param_mu" and float(value) == 0.0):
            continue
        parts.append(f"{label} = {number_text(value)}")
    return ", ".join(parts) or "—"


def _stats(chosen: pd.DataFrame, column: str, scale: float) -> dict[str, float]:
    return stats_of(chosen[["seed", column]].rename(columns={column: "value"}), scale)


def _random_cells(inputs: ArtefactInputs, dataset: str, attribute: str) -> dict[str, dict[str, float]]:
    """FEDERATE's Random row from saved measures: the `majority` method's test accuracy and fairness (when it
    was run), the attacker's majority rate as leakage and the uniform code length as MDL."""
    leak = inputs.pick("attack_majority_rate", dataset, "test", attribute, LEAKAGE_ATTACKER)
    return {
        "test_accuracy": stats_of(inputs.pick("accuracy", dataset, "test", method="majority"), PERCENT),
        "test_fairness": stats_of(inputs.pick("fairness", dataset, "test", attribute, method="majority"), PERCENT),
        "test_leakage": stats_of(leak, PERCENT),
        "mdl_kbits": stats_of(inputs.pick("mdl_uniform_kbits", dataset, None, attribute)),
    }


def _chosen_cells(rows: pd.DataFrame, columns: Mapping[str, str]) -> tuple[dict[str, dict[str, float]], dict[str, Any]]:
    """Test metrics (mean ± std over seeds) of one method's chosen setting, and that setting's description."""
    values = {c: _stats(rows, c, 1.0 if c == "mdl_kbits" else PERCENT) for c in columns}
    if rows.empty:
        return values, {"Selected setting": ""}
    params = {c: rows[c].iloc[0] for c in rows.columns if c.startswith("param_")}
    return values, {"Selected setting": setting_text(params), **{f"chosen_{c}": v for c, v in params.items()},
                    "n_settings": rows["n_settings"].iloc[0], "n_admitted": rows["n_admitted"].iloc[0]}


def _fairness_column(inputs: ArtefactInputs, datasets: Sequence[str]) -> str:
    kinds = {fairness_metric(inputs, d) for d in datasets}
    return {frozenset({"tpr_gap"}): "TPR-gap", frozenset({"grms"}): "GRMS"}.get(frozenset(kinds), "TPR-gap / GRMS")


def selection_table(
    inputs: ArtefactInputs,
    title: str,
    rt_points: float,
    datasets: Sequence[str] | None,
    methods: Sequence[str],
    published_tables: Sequence[str],
    with_mdl: bool,
) -> TableArtefact:
    """Rows (dataset, method) in FEDERATE's order; columns accuracy, fairness, leakage (and MDL), test metrics
    of the setting selected on dev at ``rt_points``."""
    datasets = inputs.datasets(datasets)
    fairness_column = _fairness_column(inputs, datasets) if datasets else "TPR-gap / GRMS"
    columns = {"test_accuracy": "Accuracy", "test_fairness": fairness_column, "test_leakage": "Leakage"}
    if with_mdl:
        columns["mdl_kbits"] = "MDL (kbits)"
    records = []
    for dataset in datasets:
        attribute = protected_attribute(inputs, dataset) or ""
        fairness = fairness_metric(inputs, dataset)
        paper_metric = {"test_accuracy": "accuracy", "test_fairness": fairness, "test_leakage": "leakage",
                        "mdl_kbits": "mdl"}
        chosen = selected_runs(runs_frame(inputs, dataset), rt_points, [m for m in methods if m != "random"])
        for method in methods:
            base = {"dataset": dataset, "paper_dataset": paper_dataset(dataset) or "",
                    "Dataset": dataset_label(dataset), "method": method, "Method": LABELS[method],
                    "attribute": attribute, "fairness_metric": fairness, "rt_points": float(rt_points)}
            if method == "random":
                values, info = _random_cells(inputs, dataset, attribute), {"Selected setting": "—"}
            else:
                values, info = _chosen_cells(chosen[chosen["method"] == method], columns)
            for column, label in columns.items():
                paper = paper_value(inputs.published, "federate", published_tables, dataset, method,
                                    f"rt={float(rt_points)!r}", paper_metric[column])
                records.append({**base, **info, "column": label, "metric": paper_metric[column], **values[column],
                                "paper": paper[0], "paper_std": paper[1],
                                "unit": "kbits" if column == "mdl_kbits" else "percent"})
    notes = [f"Selection (FEDERATE §5.1): RT = {rt_points:g} points on seed-mean dev accuracy, then best seed-mean "
             "dev fairness; test metrics of the chosen setting. Fairness, leakage and MDL are on the dataset's first "
             f"private attribute; leakage is the `{LEAKAGE_ATTACKER}` attacker's test accuracy (%), lower is more "
             "private; MDL in kbits, higher is more private."]
    if "random" in methods:
        notes.append("Random: accuracy and fairness of the `majority` method (empty when it was not run; FEDERATE's "
                     "Random is a uniform guess, 50 % on binary tasks), leakage = attacker majority rate, "
                     "MDL = uniform code.")
    return TableArtefact(
        title=title, cells=cells_frame(records, ["dataset", "paper_dataset", "Dataset", "method", "Method"]),
        row_keys=["Dataset", "Method"], columns=list(columns.values()), info_columns=["Selected setting"], notes=notes,
    )


def table1(inputs: ArtefactInputs) -> TableArtefact:
    return selection_table(inputs, "FEDERATE Table 1: every dataset at RT = 1 (test, %)", 1.0, None,
                           TABLE_METHODS, PUBLISHED_MAIN, with_mdl=True)


def table2(inputs: ArtefactInputs) -> TableArtefact:
    return selection_table(inputs, "FEDERATE Table 2: CelebA at RT = 1 (test, %)", 1.0, ["celeba"],
                           TABLE_METHODS, PUBLISHED_MAIN, with_mdl=True)


def table3(inputs: ArtefactInputs) -> TableArtefact:
    return selection_table(inputs, "FEDERATE Table 3: Adult at RT = 1 (test, %)", 1.0, ["adult"],
                           TABLE_METHODS, PUBLISHED_MAIN, with_mdl=True)


def rt_table(rt_points: float, number: int):
    """FEDERATE Tables 4–6: the Table 1 methods but INLP, selected at another relaxation threshold."""
    def build(inputs: ArtefactInputs) -> TableArtefact:
        return selection_table(inputs, f"FEDERATE Table {number}: selection at RT = {rt_points:g} (test, %)", rt_points,
                               None, RT_METHODS, (f"table{number}",), with_mdl=False)
    build.__doc__ = f"FEDERATE Table {number}: RT = {rt_points:g}."
    return build


# --- Table 7 and Figure 4: Noise vs FEDERATE over ε -------------------------------------------------------

def epsilon_curves(inputs: ArtefactInputs) -> pd.DataFrame:
    """Long table (dataset, method, epsilon, metric, ours_mean, ours_std, n_seeds, chosen λ) for Noise and
    FEDERATE at each ε, λ chosen per ε by RT = 1 selection."""
    records = []
    for dataset in inputs.datasets():
        runs = runs_frame(inputs, dataset)
        chosen = selected_runs(runs, 1.0, ("noise", "federate"), extra_group=("param_epsilon",))
        if chosen.empty:
            continue
        for (method, epsilon), rows in chosen.groupby(["method", "param_epsilon"]):
            lam = rows["param_lambda"].iloc[0] if "param_lambda" in rows else np.nan
            for metric in ("test_accuracy", "test_leakage"):
                records.append({"dataset": dataset, "method": method, "epsilon": float(epsilon), "metric": metric,
                                **_stats(rows, metric, PERCENT), "chosen_param_lambda": lam})
    return pd.DataFrame(records, columns=["dataset", "method", "epsilon", "metric", "ours_mean", "ours_std", "n_seeds",
                                          "chosen_param_lambda"])


def table7(inputs: ArtefactInputs) -> TableArtefact:
    """Rows (dataset, ε); columns accuracy and leakage (%) of Noise and FEDERATE (λ chosen at RT = 1 per ε)."""
    curves = epsilon_curves(inputs)
    methods = ("noise", "federate")
    columns = [f"{LABELS[m]} {what}" for m in methods for what in ("accuracy", "leakage")]
    seen = curves["epsilon"].unique() if not curves.empty else []
    epsilons = [*EPSILONS, *sorted(e for e in seen if not np.isclose(e, EPSILONS).any())]
    records = []
    for dataset in ordered_datasets(inputs, curves):
        for epsilon in epsilons:
            lam = curves[(curves["dataset"] == dataset) & (curves["method"] == "federate")
                         & equals(curves["epsilon"], epsilon)]["chosen_param_lambda"]
            row = {"dataset": dataset, "paper_dataset": paper_dataset(dataset) or "", "Dataset": dataset_label(dataset),
                   "epsilon": epsilon, "ε": number_text(epsilon),
                   "FEDERATE λ (selected)": number_text(lam.iloc[0]) if len(lam) and pd.notna(lam.iloc[0]) else ""}
            for method in methods:
                for what, metric in (("accuracy", "test_accuracy"), ("leakage", "test_leakage")):
                    hit = curves[(curves["dataset"] == dataset) & (curves["method"] == method)
                                 & equals(curves["epsilon"], epsilon) & (curves["metric"] == metric)]
                    stats = hit[["ours_mean", "ours_std", "n_seeds"]].iloc[0].to_dict() if len(hit) else \
                        {"ours_mean": np.nan, "ours_std": np.nan, "n_seeds": 0}
                    paper = paper_value(inputs.published, "federate", "table7", dataset, method,
                                        f"eps={float(epsilon)!r}", what)
                    records.append({**row, "method": method, "column": f"{LABELS[method]} {what}", "metric": what,
                                    **stats, "paper": paper[0], "paper_std": paper[1]})
    return TableArtefact(
        title="FEDERATE Table 7: accuracy and leakage (test, %) of Noise and FEDERATE at each ε",
        cells=cells_frame(records, ["dataset", "paper_dataset", "Dataset", "epsilon", "ε"]),
        row_keys=["Dataset", "ε"], columns=columns, info_columns=["FEDERATE λ (selected)"],
        notes=["FEDERATE's λ is chosen per ε by RT = 1 selection on dev (FEDERATE §5.1); Noise has no λ.",
               f"Leakage: `{LEAKAGE_ATTACKER}` attacker test accuracy on the first private attribute; "
               "lower is more private.",
               "ε is the nominal ε of the l1 layer (Lap(2/ε)), which is also its effective ε."],
    )


def ordered_datasets(inputs: ArtefactInputs, frame: pd.DataFrame) -> list[str]:
    return [d for d in inputs.datasets() if not frame.empty and d in set(frame["dataset"])]


def figure4(inputs: ArtefactInputs) -> Any:
    """Rows datasets; accuracy and leakage against ε for Noise and FEDERATE (mean ± std over seeds)."""
    curves = epsilon_curves(inputs)
    datasets = ordered_datasets(inputs, curves)
    figure, axes = new_figure(max(1, len(datasets)), 2, panel_size=(3.6, 2.6))
    if not datasets:
        for ax in axes[0]:
            empty_panel(ax, "no Noise / FEDERATE runs in the saved measures")
    for r, dataset in enumerate(datasets):
        for c, (metric, label) in enumerate((("test_accuracy", "accuracy (%)"), ("test_leakage", "leakage (%)"))):
            ax = axes[r][c]
            for method in ("noise", "federate"):
                part = curves[(curves["dataset"] == dataset) & (curves["method"] == method)
                              & (curves["metric"] == metric)].sort_values("epsilon")
                if part.empty:
                    continue
                ax.errorbar(part["epsilon"], part["ours_mean"], yerr=part["ours_std"].fillna(0.0),
                            color=PALETTE[method], marker=MARKERS[method], label=LABELS[method])
            epsilons = sorted(curves.loc[curves["dataset"] == dataset, "epsilon"].unique())
            ax.set_xticks(epsilons, [number_text(e) for e in epsilons])
            ax.set_title(f"{dataset_label(dataset)}: {label.split(' ')[0]}")
            ax.set_xlabel("ε (l1 layer, nominal = effective)")
            ax.set_ylabel(f"test {label}")
    method_legend(figure, ("noise", "federate"), LABELS)
    figure_title(figure, "FEDERATE Figure 4: accuracy and leakage vs ε (λ selected at RT = 1 per ε)")
    return figure


# --- Figure 2: metrics vs RT --------------------------------------------------------------------------------

def figure2(inputs: ArtefactInputs) -> Any:
    """Rows datasets; test accuracy, fairness and leakage of each method's selected setting as RT varies."""
    grid = tuple(float(x) for x in (inputs.options or {}).get("rt_grid", RT_GRID))
    datasets = inputs.datasets()
    panels = (("test_accuracy", "accuracy (%)"), ("test_fairness", "fairness gap (%)"), ("test_leakage", "leakage (%)"))
    figure, axes = new_figure(max(1, len(datasets)), 3, panel_size=(3.3, 2.5))
    if not datasets:
        for ax in axes[0]:
            empty_panel(ax, "no runs in the saved measures")
    shown: set[str] = set()
    for r, dataset in enumerate(datasets):
        runs = runs_frame(inputs, dataset)
        per_rt = [selected_runs(runs, rt, TRAINED_METHODS) for rt in grid]
        for c, (metric, label) in enumerate(panels):
            ax = axes[r][c]
            for method in TRAINED_METHODS:
                stats = [_stats(chosen[chosen["method"] == method], metric, PERCENT) for chosen in per_rt]
                means = np.array([s["ours_mean"] for s in stats], dtype=float)
                if np.isnan(means).all():
                    continue
                stds = np.nan_to_num(np.array([s["ours_std"] for s in stats], dtype=float))
                ax.plot(grid, means, color=PALETTE[method], marker=MARKERS[method], markersize=3.5)
                ax.fill_between(grid, means - stds, means + stds, color=PALETTE[method], alpha=0.08, linewidth=0)
                shown.add(method)
            fairness = fairness_metric(inputs, dataset).replace("tpr_gap", "TPR-gap").replace("grms", "GRMS")
            ax.set_title(f"{dataset_label(dataset)}: {label.split(' (')[0] if c != 1 else fairness}")
            ax.set_xlabel("relaxation threshold RT (points)")
            ax.set_ylabel(f"test {label if c != 1 else fairness + ' (%)'}")
    method_legend(figure, [m for m in TRAINED_METHODS if m in shown], LABELS)
    figure_title(figure, "FEDERATE Figure 2: selected setting's test metrics as the relaxation threshold grows")
    return figure


# --- Figure 3: best fairness per accuracy interval ------------------------------------------------------------

def best_fairness_per_interval(runs: pd.DataFrame, bin_points: float) -> pd.DataFrame:
    """Per method and interval of seed-mean dev accuracy (``bin_points`` wide): the setting with the best
    seed-mean dev fairness in that interval and its seed-mean test fairness. Test values never choose."""
    params = [c for c in runs.columns if c.startswith("param_")]
    means = runs.groupby(["method", *params], dropna=False)[["dev_accuracy", "dev_fairness", "test_fairness",
                                                             "test_accuracy"]].mean().reset_index()
    means = means[means["dev_accuracy"].notna() & means["dev_fairness"].notna()]
    means = means.assign(interval=np.floor(means["dev_accuracy"] * PERCENT / bin_points) * bin_points)
    best = means.sort_values(["dev_fairness", "dev_accuracy"], ascending=[True, False], kind="mergesort")
    best = best.groupby(["method", "interval"], as_index=False).first()
    return best.sort_values(["method", "interval"]).reset_index(drop=True)


def figure3(inputs: ArtefactInputs) -> Any:
    """One panel per dataset: for each interval of dev accuracy, the test fairness gap of the fairest (on dev)
    setting of each method in that interval."""
    bin_points = float((inputs.options or {}).get("accuracy_bin_points", 1.0))
    datasets = inputs.datasets()
    figure, axes = panel_grid(len(datasets), panel_size=(3.4, 2.9))
    if not datasets:
        empty_panel(axes[0], "no runs in the saved measures")
    shown: set[str] = set()
    for ax, dataset in zip(axes, datasets):
        frontier = best_fairness_per_interval(runs_frame(inputs, dataset), bin_points)
        for method in TRAINED_METHODS:
            part = frontier[frontier["method"] == method]
            if part.empty:
                continue
            ax.plot(part["interval"] + bin_points / 2, part["test_fairness"] * PERCENT, color=PALETTE[method],
                    marker=MARKERS[method], markersize=3.5, linewidth=1.0)
            shown.add(method)
        fairness = fairness_metric(inputs, dataset).replace("tpr_gap", "TPR-gap").replace("grms", "GRMS")
        ax.set_title(dataset_label(dataset))
        ax.set_xlabel(f"dev accuracy interval (%, {bin_points:g}-point bins)")
        ax.set_ylabel(f"best test {fairness} (%)")
    method_legend(figure, [m for m in TRAINED_METHODS if m in shown], LABELS)
    figure_title(figure, "FEDERATE Figure 3: fairest setting (chosen on dev) per accuracy interval; lower is fairer")
    return figure


table4 = rt_table(0.0, 4)
table5 = rt_table(3.0, 5)
table6 = rt_table(10.0, 6)
