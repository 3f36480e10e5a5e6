"""The attack ladder of one study and dataset: every defence (rung) from no defence to the strongest ε, with what
each attacker still recovers — private attributes (next to the ε ceilings) and the words of the text — so one
glance shows how much each rung buys. Reads runs.csv (and optionally measures.csv, frozen.json); never retrains."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Mapping

import numpy as np
import pandas as pd

from privtext.plan.grid import FINETUNE_SUFFIX
from privtext.methods.spec import GRID_PARAMS, WORD_DROPOUT, WORD_DROPOUT_DEFAULT
from privtext.report.aggregate import IDENTIFICATION_N, identification_columns
from privtext.report.artefacts.common import FIGURE_STYLE, METHOD_ORDER, PALETTE, dataset_label

FROZEN_RUNG = "no defence (frozen features)"
FIXED_PARAMS = ("param_epsilon", "param_lambda", "param_mu")  # always in the table, NaN where a method lacks them
INVERSION = ("inversion_f1", "inversion_baseline_f1", "inversion_advantage")
# identification at N = 100 (privtext.report.aggregate.IDENTIFICATION_N) with its ceilings, and reconstruction
IDENTIFICATION = ("identification_white_box_top1", "identification_white_box_top1_ceiling_nominal",
                  "identification_white_box_top1_ceiling_effective", "identification_white_box_top1_chance",
                  "identification_features_only_top1", "reconstruction_white_box_rouge_l",
                  "reconstruction_features_only_rouge_l", "reconstruction_frequent_words_rouge_l")
ACCURACY = "_accuracy"  # each attacker's column: "{attacker}_accuracy"
ATTACKER_MARKERS = "osD^vP*X"
ATTACKER_COLOURS = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9")  # Okabe–Ito


def _flag(values: pd.Series) -> pd.Series:
    """True/False whether read as bools or (with NaN in the column) as strings."""
    return values.astype(str).str.lower().isin({"true", "1", "1.0"})


def _status(values: pd.Series) -> str:
    found = sorted(set(values.dropna().astype(str)))
    return "; ".join(found) if found else "not measured"


def _label(method: str, encoder: str, params: Mapping[str, Any]) -> str:
    """'cape ε=1 λ=1': the method and its set grid values (μ only when word dropout is on)."""
    parts = [method + (" (fine-tuned)" if str(encoder).endswith(FINETUNE_SUFFIX) else "")]
    for column, value in params.items():
        name = column.removeprefix("param_")
        if pd.notna(value) and not (name == WORD_DROPOUT and value == WORD_DROPOUT_DEFAULT):
            text = value if isinstance(value, str) else f"{value:g}"  # a targeted attribute is a name
            parts.append(f"{GRID_PARAMS[name].label if name in GRID_PARAMS else name}={text}")
    return " ".join(parts)


def _order(table: pd.DataFrame) -> pd.DataFrame:
    """Methods without ε first, then DP methods by method, ε descending (weakest privacy first), then λ."""
    rank = {m: i for i, m in enumerate(METHOD_ORDER)}
    keys = table.assign(
        _dp=table["param_epsilon"].notna() | table["epsilon_nominal"].notna(),
        _rank=table["method"].map(lambda m: rank.get(m, len(rank))),
        _eps=-table["param_epsilon"],
    )
    params = [c for c in table.columns if c.startswith("param_") and c != "param_epsilon"]
    return table.loc[keys.sort_values(["_dp", "_rank", "method", "_eps", *params, "encoder"], kind="stable").index]


def attackers_of(runs: pd.DataFrame) -> list[str]:
    """The attribute attackers the runs measured, in the order the study's configuration ran them (every
    registered attacker a study names, and the jointly trained adversary where a method has one)."""
    return list(dict.fromkeys(runs["attacker"].dropna().astype(str)))


def _frozen_attacks(frozen: Mapping[str, Any], attackers: list[str]) -> dict[str, float]:
    """The frozen rung's attribute attackers (frozen.json's ``attributes``; older files have none): each attacker's
    accuracy and the majority rate, means over private attributes."""
    measured = frozen.get("attributes", {}).get("attackers", {})
    out = {f"{a}{ACCURACY}": float(np.mean([s["accuracy"] for s in measured[a]["attributes"].values()]))
           for a in attackers if a in measured}
    if measured:  # the majority rate is the attribute's, whichever attacker reports it
        per_attribute = next(iter(measured.values()))["attributes"].values()
        out["majority_rate"] = float(np.mean([s["majority_rate"] for s in per_attribute]))
    return out


def ladder_table(runs: pd.DataFrame, dataset: str, frozen: Mapping[str, Any] | None = None,
                 measures: pd.DataFrame | None = None) -> pd.DataFrame:
    """One row per rung of ``dataset``: means over seeds and private attributes of each attacker's accuracy, the
    ceilings, MDL and word recovery; the frozen-feature rung (``frozen``: frozen.json) first when given."""
    rows = runs[runs["dataset"] == dataset]
    if rows.empty:
        raise ValueError(f"no runs for dataset {dataset!r}")
    varying = [c for c in rows.columns if c.startswith("param_") and c not in FIXED_PARAMS and rows[c].nunique() > 1]
    params = [*FIXED_PARAMS, *varying]
    rows = rows.reindex(columns=[*rows.columns, *(c for c in params if c not in rows)])
    rows["_flag"] = _flag(rows["above_nominal_ceiling"])
    mdl = measures[measures["measure"] == "mdl_kbits"] if measures is not None else None
    attackers = attackers_of(rows)
    records = []
    for (method, encoder, *values), rung in rows.groupby(["method", "encoder", *params], dropna=False, sort=False):
        points = rung.drop_duplicates("run_dir")  # inversion is per grid point, repeated on each row
        accuracy = {a: rung.loc[rung["attacker"] == a, "attack_accuracy"].mean() for a in attackers}
        kbits = mdl.loc[mdl["run_dir"].isin(points["run_dir"]), "value"].mean() if mdl is not None else np.nan
        records.append({
            "rung": _label(method, encoder, dict(zip(params, values))), "method": method, "encoder": encoder,
            **dict(zip(params, values)),
            "epsilon_nominal": rung["epsilon_nominal"].mean(), "epsilon_effective": rung["epsilon_effective"].mean(),
            "n_seeds": rung["seed"].nunique(),
            **{f"{a}{ACCURACY}": value for a, value in accuracy.items()},
            "majority_rate": rung["attack_majority_rate"].mean(),
            "ceiling_nominal": rung["ceiling_nominal"].mean(), "ceiling_effective": rung["ceiling_effective"].mean(),
            "flagged_above_nominal": int(rung["_flag"].sum()), "mdl_kbits": kbits,
            **{c: points[c].mean() for c in INVERSION}, "inversion_status": _status(points["inversion_status"]),
            **{c: points[c].mean() if c in points else np.nan for c in IDENTIFICATION},
            "identification_flagged_above_nominal": int(_flag(points["identification_above_nominal_ceiling"]).sum())
            if "identification_above_nominal_ceiling" in points else 0,
        })
    table = _order(pd.DataFrame(records))
    if frozen is not None:
        first = {"rung": FROZEN_RUNG, "method": "frozen", "inversion_f1": frozen["f1"],
                 "inversion_baseline_f1": frozen["baseline"]["f1"], "inversion_advantage": frozen["advantage"],
                 "inversion_status": frozen["status"], **_frozen_attacks(frozen, attackers),
                 **{c: value for c, value in identification_columns(frozen).items() if c in IDENTIFICATION}}
        table = pd.concat([pd.DataFrame([first]), table], ignore_index=True)[table.columns]
    # the frozen rung has none of these
    table = table.astype({column: "Int64" for column in
                          ("n_seeds", "flagged_above_nominal", "identification_flagged_above_nominal")})
    return table.reset_index(drop=True)


def ladder_figure(table: pd.DataFrame, dataset: str) -> Any:
    """Four panels sharing the rungs: attribute inference against the ceilings, word recovery, identification among
    N = 100 texts against its ceiling, and retrieval reconstruction against the frequent-word baseline."""
    import matplotlib
    from matplotlib.figure import Figure

    y = np.arange(len(table))
    with matplotlib.rc_context(FIGURE_STYLE):
        figure = Figure(figsize=(16, 1.6 + 0.32 * len(table)), layout="constrained")
        left, words, which, rebuilt = figure.subplots(1, 4, sharey=True, gridspec_kw={"width_ratios": [3, 2, 2, 2]})
        attackers = [c.removesuffix(ACCURACY) for c in table.columns if c.endswith(ACCURACY)]
        for k, attacker in enumerate(attackers):
            left.plot(table[f"{attacker}{ACCURACY}"], y, ATTACKER_MARKERS[k % len(ATTACKER_MARKERS)],
                      color=ATTACKER_COLOURS[k % len(ATTACKER_COLOURS)], label=f"{attacker} attacker")
        left.plot(table["majority_rate"], y, "x", color="#555555", label="majority rate / chance / baseline")
        # effective first: where a method's two ε agree, the nominal mark stays visible on top
        left.plot(table["ceiling_effective"], y, "|", color="#999999", markersize=14, mew=2,
                  label="ceiling (effective ε)")
        left.plot(table["ceiling_nominal"], y, "|", color="#000000", markersize=14, mew=2, label="ceiling (nominal ε)")
        left.set(title="attribute inference accuracy", xlabel="accuracy (mean over seeds and attributes)")
        left.set_yticks(y, table["rung"])
        left.invert_yaxis()
        colours = [PALETTE.get(m, "#333333") for m in table["method"]]
        _points(words, table["inversion_advantage"], y, colours,
                "word recovery\n(inversion advantage = F1 − baseline F1)", "advantage")
        words.axvline(0, color="#555555", linewidth=1)
        prefix = "identification_white_box_top1"
        _points(which, table[prefix], y, colours, f"which text is this? (N = {IDENTIFICATION_N})\nwhite-box ●, "
                "features-only ◆", "top-1 rate")
        which.plot(table["identification_features_only_top1"], y, "D", color="#333333", fillstyle="none")
        which.plot(table[f"{prefix}_chance"], y, "x", color="#555555")
        which.plot(table[f"{prefix}_ceiling_effective"], y, "|", color="#999999", markersize=14, mew=2)
        which.plot(table[f"{prefix}_ceiling_nominal"], y, "|", color="#000000", markersize=14, mew=2)
        which.set_xlim(-0.03, 1.03)
        _points(rebuilt, table["reconstruction_white_box_rouge_l"], y, colours,
                "what was written? nearest training text\nwhite-box ●, features-only ◆", "ROUGE-L (0–100)")
        rebuilt.plot(table["reconstruction_features_only_rouge_l"], y, "D", color="#333333", fillstyle="none")
        rebuilt.plot(table["reconstruction_frequent_words_rouge_l"], y, "x", color="#555555")
        figure.legend(*left.get_legend_handles_labels(), loc="outside lower center", ncols=min(6, 3 + len(attackers)),
                      frameon=False)
        figure.suptitle(f"Attack ladder: {dataset_label(dataset)}")
    return figure


def _points(axes: Any, values: pd.Series, y: np.ndarray, colours: list[str], title: str, xlabel: str) -> None:
    """One measure per rung in its method's colour; a panel with no value at all says it measured no text."""
    axes.scatter(values, y, c=colours, zorder=3)
    if values.isna().all():
        title += "\nnot applicable: no text"
        axes.set_xticks([])
    axes.set(title=title, xlabel=xlabel)


def write_ladder(runs_csv: str | Path, out_tables: Mapping[str, str | Path], out_figures: Mapping[str, str | Path],
                 frozen: Mapping[str, str | Path], measures_csv: str | Path | None = None) -> None:
    """Write each dataset's ladder CSV and PNG; a dataset without runs is an error, not an empty figure."""
    runs = pd.read_csv(runs_csv)
    measures = pd.read_csv(measures_csv) if measures_csv else None
    for dataset, table_path in out_tables.items():
        if not (runs["dataset"] == dataset).any():
            raise ValueError(f"{runs_csv} has no rows for dataset {dataset!r}")
        info = json.loads(Path(frozen[dataset]).read_text()) if dataset in frozen else None
        table = ladder_table(runs, dataset, info, measures)
        for path in (table_path, out_figures[dataset]):
            Path(path).parent.mkdir(parents=True, exist_ok=True)
        table.to_csv(table_path, index=False)
        ladder_figure(table, dataset).savefig(out_figures[dataset], dpi=120)
