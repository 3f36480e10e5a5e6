"""DPNR (Lyu, He & Li 2020) Tables 2–7 and Figures 3–4 from saved measures.

DPNR reports accuracies and empirical privacy in percent on test, averaged over runs; its attacker is a
fresh 2-layer MLP (our ``mlp`` attacker). Our cells are mean ± std over seeds.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np
import pandas as pd

from privtext.report.artefacts.common import (
    MARKERS, PALETTE, ArtefactInputs, TableArtefact, cells_frame, dataset_label, empty_panel, equals, figure_title,
    new_figure, number_text, paired_difference, panel_grid, paper_dataset, paper_value, stats_of,
)

EPSILONS = (0.05, 0.1, 0.5, 1.0, 5.0)  # DPNR Table 2, μ = 0
MUS = (0.1, 0.3, 0.5, 0.8)  # DPNR Table 3, ε = 1
DEFAULT_EPSILON = 0.05  # DPNR's default elsewhere (Tables 4–7)
ADV_LAMBDA = 1.0
ATTACKER = "mlp"
PERCENT = 100.0
LABELS = {"majority": "MAJORITY", "nonpriv": "NON-PRIV", "adv": "ADV", "dpnr": "DPNR"}
# DPNR Table 6 reports the second group relative to the first: M vs F, old vs young.
REFERENCE_GROUP = {"gender": "female", "age": "young"}
GROUP_SHORT = {"female": "F", "male": "M"}
ROW = ["Dataset"]


def _base(dataset: str) -> dict[str, Any]:
    return {"dataset": dataset, "paper_dataset": paper_dataset(dataset) or "", "Dataset": dataset_label(dataset)}


def _cell(row: dict[str, Any], column: str, metric: str, stats: dict[str, float], paper: tuple[float, float],
          **extra: Any) -> dict[str, Any]:
    return {**row, "column": column, "metric": metric, **stats, "paper": paper[0], "paper_std": paper[1], **extra}


def _method_rows(frame: pd.DataFrame, method: str, epsilon: float | None = None, mu: float = 0.0) -> pd.DataFrame:
    """Rows of ``method`` at DPNR's settings: μ, ε for DPNR, λ = 1 for ADV."""
    rows = frame[(frame["method"] == method) & equals(frame["param_mu"], mu)]
    if method == "dpnr" and epsilon is not None:
        rows = rows[equals(rows["param_epsilon"], epsilon)]
    if method == "adv" and rows["param_lambda"].notna().any():
        rows = rows[equals(rows["param_lambda"], ADV_LAMBDA)]
    return rows


def _epsilon_text(epsilon: float) -> str:
    return f"ε = {number_text(epsilon)}"


# --- Tables 2 and 3: main accuracy vs ε and vs μ ------------------------------------------------------

def table2(inputs: ArtefactInputs) -> TableArtefact:
    """Rows datasets; columns NON-PRIV and DPNR at each ε (μ = 0); test accuracy in %."""
    accuracy = inputs.pick("accuracy", None, "test")
    seen = _method_rows(accuracy, "dpnr")["param_epsilon"].dropna().unique()
    epsilons = [*EPSILONS, *sorted(e for e in seen if not np.isclose(e, EPSILONS).any())]
    records = []
    for dataset in inputs.datasets():
        rows, row = accuracy[accuracy["dataset"] == dataset], _base(dataset)
        records.append(_cell(row, "NON-PRIV", "main_accuracy", stats_of(_method_rows(rows, "nonpriv"), PERCENT),
                             paper_value(inputs.published, "dpnr", "table2", dataset, "nonpriv", "", "main_accuracy")))
        for epsilon in epsilons:
            setting = f"eps={number_text(epsilon)};mu=0"
            records.append(_cell(row, _epsilon_text(epsilon), "main_accuracy",
                                 stats_of(_method_rows(rows, "dpnr", epsilon), PERCENT),
                                 paper_value(inputs.published, "dpnr", "table2", dataset, "dpnr", setting,
                                             "main_accuracy"),
                                 epsilon_nominal=epsilon, param_mu=0.0))
    return TableArtefact(
        title="DPNR Table 2: main-task test accuracy (%) of NON-PRIV and DPNR at each ε (μ = 0)",
        cells=cells_frame(records, ["dataset", "paper_dataset", "Dataset"]), row_keys=ROW,
        columns=["NON-PRIV", *[_epsilon_text(e) for e in epsilons]],
        notes=["ε is DPNR's nominal ε (Laplace scale 1/ε on min-max features); see extra/effective_epsilon for "
               "the guarantee."],
    )


def table3(inputs: ArtefactInputs) -> TableArtefact:
    """Rows datasets; columns NON-PRIV and DPNR at each word-dropout rate μ (ε = 1); test accuracy in %."""
    accuracy = inputs.pick("accuracy", None, "test")
    dpnr = accuracy[(accuracy["method"] == "dpnr") & equals(accuracy["param_epsilon"], 1.0)]
    seen = dpnr["param_mu"].dropna().unique()
    mus = [*MUS, *sorted(m for m in seen if m > 0 and not np.isclose(m, MUS).any())]
    records = []
    for dataset in inputs.datasets():
        rows, row = accuracy[accuracy["dataset"] == dataset], _base(dataset)
        records.append(_cell(row, "NON-PRIV", "main_accuracy", stats_of(_method_rows(rows, "nonpriv"), PERCENT),
                             paper_value(inputs.published, "dpnr", "table3", dataset, "nonpriv", "", "main_accuracy")))
        for mu in mus:
            setting = f"eps=1;mu={number_text(mu)}"
            records.append(_cell(row, f"μ = {number_text(mu)}", "main_accuracy",
                                 stats_of(_method_rows(rows, "dpnr", 1.0, mu), PERCENT),
                                 paper_value(inputs.published, "dpnr", "table3", dataset, "dpnr", setting,
                                             "main_accuracy"),
                                 epsilon_nominal=1.0, param_mu=mu))
    return TableArtefact(
        title="DPNR Table 3: main-task test accuracy (%) of DPNR at each word-dropout rate μ (ε = 1)",
        cells=cells_frame(records, ["dataset", "paper_dataset", "Dataset"]), row_keys=ROW,
        columns=["NON-PRIV", *[f"μ = {number_text(m)}" for m in mus]],
        notes=["μ is the fraction of words masked before encoding (DPNR §3.3); embeddings are re-extracted per μ."],
    )


# --- Table 4: main accuracy and empirical privacy ---------------------------------------------------------

def privacy_kind(inputs: ArtefactInputs, dataset: str) -> str:
    """'entity' (1 − F) for entity-presence datasets such as AG, else 'demographic' (1 − X)."""
    kinds = {inputs.attribute_kind(dataset, a) for a in inputs.attributes(dataset)}
    return "entity" if "entity" in kinds else "demographic"


def table4(inputs: ArtefactInputs) -> TableArtefact:
    """Per dataset rows MAJORITY, NON-PRIV, ADV, DPNR (ε = 0.05); main accuracy and empirical privacy (%)
    and, for ADV and DPNR, their differences to NON-PRIV (paired by seed), as DPNR prints them."""
    published = inputs.published
    columns = ["Main acc.", "Emp. privacy", "Δ main acc.", "Δ emp. privacy"]
    records = []
    for dataset in inputs.datasets():
        kind = privacy_kind(inputs, dataset)
        accuracy = inputs.pick("accuracy", dataset, "test")
        privacy = inputs.pick(f"empirical_privacy_{kind}", dataset, "test", attacker=ATTACKER)
        reference = {"accuracy": _method_rows(accuracy, "nonpriv"), "privacy": _method_rows(privacy, "nonpriv")}
        for method in ("majority", "nonpriv", "adv", "dpnr"):
            row = {**_base(dataset), "method": method, "Method": LABELS[method], "privacy_kind": kind}
            mine = {"accuracy": _method_rows(accuracy, method, DEFAULT_EPSILON),
                    "privacy": _method_rows(privacy, method, DEFAULT_EPSILON)}
            absolute = method in ("majority", "nonpriv")  # DPNR prints ADV and DPNR relative to NON-PRIV
            delta_setting = f"eps={number_text(DEFAULT_EPSILON)};mu=0;relative_to=nonpriv"

            def published_value(metric: str) -> tuple[float, float]:
                setting = "" if absolute else delta_setting
                return paper_value(published, "dpnr", "table4", dataset, method, setting, metric)

            records.append(_cell(row, "Main acc.", "main_accuracy", stats_of(mine["accuracy"], PERCENT),
                                 published_value("main_accuracy") if absolute else (np.nan, np.nan)))
            records.append(_cell(row, "Emp. privacy", "empirical_privacy", stats_of(mine["privacy"], PERCENT),
                                 published_value("empirical_privacy") if absolute else (np.nan, np.nan)))
            for column, key, metric in (("Δ main acc.", "accuracy", "main_accuracy_delta"),
                                        ("Δ emp. privacy", "privacy", "empirical_privacy_delta")):
                delta = (paired_difference(mine[key], reference[key], PERCENT) if method in ("adv", "dpnr")
                         else {"ours_mean": np.nan, "ours_std": np.nan, "n_seeds": 0})
                records.append(_cell(row, column, metric, delta,
                                     published_value(metric) if not absolute else (np.nan, np.nan)))
    return TableArtefact(
        title=f"DPNR Table 4: main-task test accuracy and empirical privacy (%), attacker `{ATTACKER}`",
        cells=cells_frame(records, ["dataset", "paper_dataset", "Dataset", "method", "Method"]),
        row_keys=["Dataset", "Method"], columns=columns,
        notes=["Empirical privacy is 1 − X (mean attacker accuracy over age and gender) for demographic datasets and "
               "1 − F (attacker micro-F1 over entity presence) for entity datasets; higher is more private.",
               f"Δ columns: ADV (λ = {ADV_LAMBDA:g}) and DPNR (ε = {DEFAULT_EPSILON:g}, μ = 0) minus NON-PRIV, "
               "paired by seed, as DPNR prints them."],
    )


# --- Tables 5 and 7: entity absence / presence -------------------------------------------------------------

def entity_datasets(inputs: ArtefactInputs) -> list[str]:
    return [d for d in inputs.datasets() if privacy_kind(inputs, d) == "entity"]


def entity_label(inputs: ArtefactInputs, dataset: str, attribute: str) -> tuple[str, int | None]:
    """Display label of an entity attribute and its number in DPNR's tables (None when not comparable).

    DPNR numbers its five persons 1–5 by frequency; our ``entity0``..``entity4`` are in the same order, so
    paper entity k is our ``entity{k-1}`` (the shares of entities 3–5, 18/10/9 %, match ours)."""
    entities = {e.get("attribute"): e for e in (inputs.metas.get(dataset) or {}).get("entities") or []
                if isinstance(e, dict)}
    entry = entities.get(attribute, {})
    name = entry.get("name") or entry.get("likely_name")
    number = int(attribute[len("entity"):]) + 1 if attribute[len("entity"):].isdigit() else None
    if paper_dataset(dataset) != "ag":
        number = None
    label = attribute + (f" ({name})" if name else "") + (f" = paper entity {number}" if number else "")
    return label, number


def _present_share(inputs: ArtefactInputs, dataset: str, attribute: str) -> float:
    """Share (%) of documents mentioning the entity: from the dataset's meta, else 1 − majority rate on test."""
    meta = inputs.metas.get(dataset) or {}
    entities = {e.get("attribute"): e for e in meta.get("entities") or [] if isinstance(e, dict)}
    total = sum((meta.get("splits") or {}).values())
    if attribute in entities and total:
        return PERCENT * float(entities[attribute]["documents"]) / total
    rates = inputs.pick("attack_majority_rate", dataset, "test", attribute)["value"]
    return PERCENT * (1.0 - float(rates.mean())) if len(rates) else np.nan


def table5(inputs: ArtefactInputs) -> TableArtefact:
    """Rows entities; columns the share of documents without/with the entity and, per method, the attacker's
    accuracy on the documents where the entity is absent and where it is present (%)."""
    methods = ("nonpriv", "adv", "dpnr")
    columns = ["Share absent (%)", "Share present (%)",
               *[f"{LABELS[m]} {state}" for m in methods for state in ("absent", "present")]]
    records = []
    have_measure = (inputs.measures["measure"] == "attack_subgroup_accuracy").any()
    for dataset in entity_datasets(inputs):
        for attribute in [a for a in inputs.attributes(dataset) if inputs.attribute_kind(dataset, a) == "entity"]:
            label, number = entity_label(inputs, dataset, attribute)
            row = {**_base(dataset), "attribute": attribute, "Entity": label, "paper_entity": number}
            setting = f"entity={number}" if number else None
            present = _present_share(inputs, dataset, attribute)
            for column, value, metric in (("Share absent (%)", PERCENT - present, "share_absent_pct"),
                                          ("Share present (%)", present, "share_present_pct")):
                paper = (paper_value(inputs.published, "dpnr", "table5", dataset, "", setting, metric) if setting
                         else (np.nan, np.nan))
                records.append(_cell(row, column, metric, {"ours_mean": value, "ours_std": np.nan,
                                                           "n_seeds": 0}, paper))
            for method in methods:
                for state in ("absent", "present"):
                    cell_rows = inputs.pick("attack_subgroup_accuracy", dataset, "test", attribute, ATTACKER, state)
                    metric = f"attacker_accuracy_{state}"
                    paper = (paper_value(inputs.published, "dpnr", "table5", dataset, method, setting, metric)
                             if setting else (np.nan, np.nan))
                    records.append(_cell({**row, "method": method}, f"{LABELS[method]} {state}", metric,
                                         stats_of(_method_rows(cell_rows, method, DEFAULT_EPSILON), PERCENT), paper))
    notes = ["Paper entity k is our entity{k−1} (same frequency order; DPNR reports entities 3–5).",
             "Shares are over all documents of the dataset (meta.json)."]
    if not have_measure:
        notes.append("Attacker accuracy per absent/present subset needs the measure `attack_subgroup_accuracy` "
                     "(attacker accuracy within each value of the attribute), which attack.json files written "
                     "before it existed lack: delete them and rerun to fill these columns.")
    return TableArtefact(
        title=f"DPNR Table 5: attacker (`{ATTACKER}`) test accuracy (%) on documents without / with each entity",
        cells=cells_frame(records, ["dataset", "paper_dataset", "Dataset", "attribute", "Entity"]),
        row_keys=["Dataset", "Entity"], columns=columns, notes=notes,
    )


def table7(inputs: ArtefactInputs) -> TableArtefact:
    """Rows entities; per method the main-task test accuracy (%) on documents without and with the entity and
    the difference present − absent (DPNR prints 'present' relative to 'absent')."""
    methods = ("nonpriv", "adv", "dpnr")
    columns = [f"{LABELS[m]} {part}" for m in methods for part in ("absent", "present", "Δ present")]
    records = []
    for dataset in entity_datasets(inputs):
        rows = inputs.pick("subgroup_accuracy", dataset, "test")
        for attribute in [a for a in inputs.attributes(dataset) if inputs.attribute_kind(dataset, a) == "entity"]:
            label, number = entity_label(inputs, dataset, attribute)
            row = {**_base(dataset), "attribute": attribute, "Entity": label, "paper_entity": number}
            for method in methods:
                absent = _method_rows(rows[(rows["attribute"] == attribute) & (rows["group"] == "absent")], method,
                                      DEFAULT_EPSILON)
                present = _method_rows(rows[(rows["attribute"] == attribute) & (rows["group"] == "present")], method,
                                       DEFAULT_EPSILON)

                def published_value(setting: str, metric: str) -> tuple[float, float]:
                    if number is None:
                        return np.nan, np.nan
                    return paper_value(inputs.published, "dpnr", "table7", dataset, method, setting, metric)

                cell_row = {**row, "method": method}
                records.append(_cell(cell_row, f"{LABELS[method]} absent", "main_accuracy", stats_of(absent, PERCENT),
                                     published_value(f"entity={number};absent", "main_accuracy")))
                records.append(_cell(cell_row, f"{LABELS[method]} present", "main_accuracy", stats_of(present, PERCENT),
                                     (np.nan, np.nan)))
                records.append(_cell(cell_row, f"{LABELS[method]} Δ present", "main_accuracy_delta",
                                     paired_difference(present, absent, PERCENT),
                                     published_value(f"entity={number};present;relative_to=absent",
                                                     "main_accuracy_delta")))
    return TableArtefact(
        title="DPNR Table 7: main-task test accuracy (%) on documents without / with each entity",
        cells=cells_frame(records, ["dataset", "paper_dataset", "Dataset", "attribute", "Entity"]),
        row_keys=["Dataset", "Entity"], columns=columns,
        notes=["Paper entity k is our entity{k−1} (same frequency order; DPNR reports entities 3–5).",
               f"ADV at λ = {ADV_LAMBDA:g}; DPNR at ε = {DEFAULT_EPSILON:g}, μ = 0. "
               "Δ present = present − absent, paired by seed."],
    )


# --- Table 6: subgroup accuracy per demographic group ------------------------------------------------------

def _groups(inputs: ArtefactInputs, dataset: str, attribute: str) -> list[str]:
    """The attribute's value names with DPNR's reference group first (F before M, young before old)."""
    names = inputs.value_names(dataset, attribute)
    reference = REFERENCE_GROUP.get(attribute)
    return [reference, *[n for n in names if n != reference]] if reference in names else names


def table6(inputs: ArtefactInputs) -> TableArtefact:
    """Rows (dataset, method); per demographic attribute the test accuracy (%) of each group and the
    difference of each other group to the reference group (DPNR: M − F, old − young)."""
    methods = ("nonpriv", "adv", "dpnr")
    columns: list[str] = []
    records = []
    datasets = [d for d in inputs.datasets() if privacy_kind(inputs, d) == "demographic"]
    for dataset in datasets:
        rows = inputs.pick("subgroup_accuracy", dataset, "test")
        # gender before age, as DPNR's Table 6
        attributes = sorted(inputs.attributes(dataset), key=lambda a: (a != "gender", a != "age"))
        for method in methods:
            row = {**_base(dataset), "method": method, "Method": LABELS[method]}
            for attribute in attributes:
                groups = _groups(inputs, dataset, attribute)
                if len(groups) < 2:
                    continue
                short = {g: GROUP_SHORT.get(g, g) for g in groups}
                reference = _method_rows(rows[(rows["attribute"] == attribute) & (rows["group"] == groups[0])], method,
                                         DEFAULT_EPSILON)
                for group in groups:
                    column = f"{attribute}={short[group]}"
                    cell_rows = _method_rows(rows[(rows["attribute"] == attribute) & (rows["group"] == group)], method,
                                             DEFAULT_EPSILON)
                    paper = (paper_value(inputs.published, "dpnr", "table6", dataset, method, column, "main_accuracy")
                             if group == groups[0] else (np.nan, np.nan))
                    records.append(_cell({**row, "attribute": attribute, "group": group}, column, "main_accuracy",
                                         stats_of(cell_rows, PERCENT), paper))
                    columns.append(column)
                    if group != groups[0]:
                        column = f"Δ {attribute}={short[group]}"
                        setting = f"{attribute}={short[group]};relative_to={attribute}={short[groups[0]]}"
                        records.append(_cell({**row, "attribute": attribute, "group": group}, column,
                                             "main_accuracy_delta", paired_difference(cell_rows, reference, PERCENT),
                                             paper_value(inputs.published, "dpnr", "table6", dataset, method, setting,
                                                         "main_accuracy_delta")))
                        columns.append(column)
    return TableArtefact(
        title="DPNR Table 6: main-task test accuracy (%) per demographic group",
        cells=cells_frame(records, ["dataset", "paper_dataset", "Dataset", "method", "Method"]),
        row_keys=["Dataset", "Method"], columns=list(dict.fromkeys(columns)),
        notes=["Δ columns: the group minus the attribute's reference group (F for gender, young for age, else the "
               "first value), paired by seed; DPNR prints only the reference accuracy and this difference.",
               f"ADV at λ = {ADV_LAMBDA:g}; DPNR at ε = {DEFAULT_EPSILON:g}, μ = 0. "
               "DPNR's group shares are not repeated here."],
    )


# --- Figure 3: empirical privacy vs ε ----------------------------------------------------------------------

def figure3(inputs: ArtefactInputs) -> Any:
    """One panel per dataset: DPNR's empirical privacy (mean ± std over seeds) against ε on a log axis, with
    NON-PRIV as a horizontal reference band."""
    datasets = inputs.datasets() or [""]
    figure, axes = panel_grid(len(datasets), panel_size=(3.4, 2.9))
    for ax, dataset in zip(axes, datasets):
        if not dataset:
            empty_panel(ax, "no DPNR runs in the saved measures")
            continue
        kind = privacy_kind(inputs, dataset)
        privacy = inputs.pick(f"empirical_privacy_{kind}", dataset, "test", attacker=ATTACKER)
        dpnr = _method_rows(privacy, "dpnr")
        points = [(e, stats_of(dpnr[equals(dpnr["param_epsilon"], e)], PERCENT))
                  for e in sorted(dpnr["param_epsilon"].dropna().unique())]
        baseline = stats_of(_method_rows(privacy, "nonpriv"), PERCENT)
        if not points and np.isnan(baseline["ours_mean"]):
            empty_panel(ax, f"{dataset_label(dataset)}: no runs")
            continue
        if points:
            x = [p[0] for p in points]
            ax.errorbar(x, [p[1]["ours_mean"] for p in points], yerr=[np.nan_to_num(p[1]["ours_std"]) for p in points],
                        color=PALETTE["dpnr"], marker=MARKERS["dpnr"], label="DPNR")
            ax.set_xscale("log")
            ax.set_xticks(x, [number_text(v) for v in x])
            ax.minorticks_off()
        if not np.isnan(baseline["ours_mean"]):
            ax.axhline(baseline["ours_mean"], color=PALETTE["nonpriv"], linestyle="--", label="NON-PRIV")
            if not np.isnan(baseline["ours_std"]):
                ax.axhspan(baseline["ours_mean"] - baseline["ours_std"], baseline["ours_mean"] + baseline["ours_std"],
                           color=PALETTE["nonpriv"], alpha=0.1, linewidth=0)
        ax.set_title(dataset_label(dataset))
        ax.set_xlabel("ε (nominal, log scale)")
        # DPNR writes 1 − X and 1 − F; spelled out so the axis reads without the paper at hand
        ax.set_ylabel("empirical privacy (%)\n" + ("1 − attacker micro-F1" if kind == "entity" else "1 − mean attacker accuracy"))
        ax.legend(loc="best")
    figure_title(figure, f"DPNR Figure 3: empirical privacy vs ε ({ATTACKER} attacker, μ = 0; "
                         "higher is more private)")
    return figure


# --- Figure 4: t-SNE of released test representations -------------------------------------------------------

def figure4(inputs: ArtefactInputs) -> Any:
    """t-SNE of the released test representations, NON-PRIV beside DPNR, coloured by the attribute's groups."""
    from sklearn.manifold import TSNE
    from privtext.runtime.threads import limited_threads

    options = inputs.options or {}
    max_points = int(options.get("tsne_max_points", 1500))
    random_state = int(options.get("tsne_random_state", 0))
    entries = _tsne_entries(inputs.tsne_inputs or ())
    datasets = list(dict.fromkeys(e[1] for e in entries))
    methods = ("nonpriv", "dpnr")
    figure, axes = new_figure(max(1, len(datasets)), 2, panel_size=(3.4, 3.2))
    if not datasets:
        for ax in axes[0]:
            empty_panel(ax, "no released representations were given")
    for r, dataset in enumerate(datasets):
        for c, method in enumerate(methods):
            ax = axes[r][c]
            entry = next((e for e in entries if e[0] == method and e[1] == dataset), None)
            if entry is None:
                empty_panel(ax, f"{dataset_label(dataset)}: no {LABELS[method]} run")
                continue
            released, labels, names = _load_released(entry)
            keep = np.random.default_rng(random_state).permutation(len(labels))[:max_points]
            keep.sort()  # the same rows for both methods of a dataset (same test order, same generator)
            X, y = released[keep], labels[keep]
            if len(X) < 5:
                empty_panel(ax, f"{dataset_label(dataset)}: too few points for t-SNE")
                continue
            perplexity = float(min(30.0, (len(X) - 1) / 3.0))
            # OpenMP threads beyond the rule's share make Barnes-Hut t-SNE several times slower on a busy CPU.
            with limited_threads(int(options.get("threads", 1))):
                embedded = TSNE(n_components=2, perplexity=perplexity, init="pca",
                                random_state=random_state).fit_transform(X.astype(np.float64))
            for value in np.unique(y):
                name = names[int(value)] if 0 <= int(value) < len(names) else str(value)
                mask = y == value
                ax.scatter(embedded[mask, 0], embedded[mask, 1], s=4, alpha=0.6, label=f"{name} (n={mask.sum()})",
                           rasterized=True)
            ax.set_title(f"{dataset_label(dataset)}: {LABELS[method]}")
            ax.set_xticks([])
            ax.set_yticks([])
            ax.set_xlabel("t-SNE 1")
            ax.set_ylabel("t-SNE 2")
            ax.legend(loc="best", markerscale=3, title=entry[5] or _attribute_named(inputs, dataset, names))
    figure_title(figure, f"DPNR Figure 4: t-SNE of released test representations "
                    f"(≤ {max_points} test points, t-SNE random_state {random_state})")
    return figure


def _attribute_named(inputs: ArtefactInputs, dataset: str, names: Sequence[str]) -> str | None:
    """The private attribute of ``dataset`` whose value names are ``names`` (for the legend title)."""
    return next((a for a in inputs.attributes(dataset) if inputs.value_names(dataset, a) == list(names)), None)


def _tsne_entries(raw: Sequence[tuple]) -> list[tuple]:
    """(method, dataset, path or array, labels, value_names, attribute name or '') per given input."""
    entries = []
    for item in raw:
        method, dataset, released, labels, names = item[:5]
        attribute = item[5] if len(item) > 5 else ""
        entries.append((method, dataset, released, np.asarray(labels), list(names), attribute))
    return entries


def _load_released(entry: tuple) -> tuple[np.ndarray, np.ndarray, list[str]]:
    released = entry[2]
    is_path = isinstance(released, (str, bytes)) or hasattr(released, "__fspath__")
    matrix = np.load(released, allow_pickle=False) if is_path else np.asarray(released)
    matrix = matrix.reshape(len(matrix), -1)
    labels = entry[3]
    if len(labels) != len(matrix):
        raise ValueError(f"{entry[0]} on {entry[1]}: {len(matrix)} released rows but {len(labels)} labels")
    return matrix, labels, entry[4]
