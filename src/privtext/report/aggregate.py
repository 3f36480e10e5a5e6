"""Gather finished grid points into tables. Reads saved outputs only; never retrains."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Iterable

import pandas as pd

from privtext.measures.multiple_testing import holm

RUN_COLUMNS = ("dataset", "encoder", "method", "seed", "privacy_layer", "epsilon_nominal", "epsilon_effective", "representation_dim")


def _read(path: Path) -> dict:
    return json.loads(path.read_text())


def run_record(run_dir: str | Path) -> dict:
    """One flat record of a grid point: its parameters and main-task metrics on dev and test."""
    metrics = _read(Path(run_dir) / "metrics.json")
    record = {column: metrics.get(column) for column in RUN_COLUMNS}
    record.update({f"param_{name}": value for name, value in metrics["params"].items()})
    for split in ("dev", "test"):
        record.update({f"{split}_{name}": value for name, value in metrics[split].items() if name != "n"})
    record.update(train_seconds=metrics["seconds"], run_dir=str(run_dir))
    return record


# Family-wise level of the above-ceiling flags: Holm over every row of a runs table that has a ceiling.
CEILING_TEST_LEVEL = 0.05
INVERSION_SCORES = ("precision", "recall", "f1")
CEILING_COLUMNS = ("ceiling_nominal", "ceiling_effective", "p_above_nominal_ceiling", "p_above_effective_ceiling")


def inversion_columns(attack: dict) -> dict:
    """A grid point's word-recovery scores as runs-table columns (NaN with the reason where not measured)."""
    inversion = attack.get("inversion") or {"status": "not measured: attack.json predates word recovery"}
    measured = inversion["status"] == "measured"
    nan = float("nan")
    columns = {"inversion_status": inversion["status"]}
    columns.update({f"inversion_{name}": inversion[name] if measured else nan for name in INVERSION_SCORES})
    columns["inversion_baseline_f1"] = inversion["baseline"]["f1"] if measured else nan
    columns["inversion_advantage"] = inversion["advantage"] if measured else nan
    return columns


IDENTIFICATION_N = 100  # the candidate count the runs table and the ladder show (attack.json has every N)


def identification_columns(attack: dict) -> dict:
    """A grid point's identification at N = 100 and its reconstruction scores as runs-table columns (NaN with the
    reason where not measured)."""
    found = attack.get("identification") or {"status": "not measured: attack.json predates identification"}
    columns: dict = {"identification_status": found["status"]}
    key = f"N{IDENTIFICATION_N}"
    for attacker in ("white_box", "features_only"):
        rates = found.get(attacker, {}).get(key, {})
        for name in ("top1", "top1_low", "top1_high", "top1_chance", "top1_ceiling_nominal", "top1_ceiling_effective",
                     "top1_p_above_ceiling_nominal", "top10"):
            columns[f"identification_{attacker}_{name}"] = _number(rates.get(name))
    for source, scores in {"white_box": {}, "features_only": {}, "frequent_words": {},
                           **found.get("reconstruction", {})}.items():
        for name in ("bleu", "chrf", "rouge_l"):
            columns[f"reconstruction_{source}_{name}"] = _number(scores.get(name))
    return columns


def _number(value: float | None) -> float:
    return float("nan") if value is None else float(value)


def runs_table(run_dirs: Iterable[str | Path]) -> pd.DataFrame:
    """One row per grid point x attacker x attribute (docs/methods.md, "Measures"), with every parameter, ε, all
    metrics, the attacker's ε ceilings and the point's word recovery. ``above_{nominal,effective}_ceiling``
    flags the rows whose attacker beats that ceiling, Holm-corrected over the rows of this table that have one."""
    rows = []
    for run_dir in run_dirs:
        base = run_record(run_dir)
        attack = _read(Path(run_dir) / "attack.json")
        inversion = {**inversion_columns(attack), **identification_columns(attack)}
        for attacker, result in attack["attackers"].items():
            privacy = result.get("empirical_privacy", {})
            for attribute, scores in result["attributes"].items():
                rows.append(
                    {
                        **base,
                        "attacker": attacker,
                        "attribute": attribute,
                        "attribute_kind": scores["kind"],
                        "attack_accuracy": scores["accuracy"],
                        "attack_macro_f1": scores["macro_f1"],
                        "attack_majority_rate": scores["majority_rate"],
                        "attack_advantage": scores["accuracy"] - scores["majority_rate"],
                        "empirical_privacy": privacy.get(scores["kind"]),
                        **{column: _number(scores.get(column)) for column in CEILING_COLUMNS},
                        **inversion,
                    }
                )
    table = pd.DataFrame(rows)
    if table.empty:
        return table
    for name in ("nominal", "effective"):
        table[f"above_{name}_ceiling"] = holm(table[f"p_above_{name}_ceiling"].tolist(), CEILING_TEST_LEVEL)
    # identification is one test per grid point, repeated on its attacker x attribute rows: corrected over points
    points = table.drop_duplicates("run_dir").set_index("run_dir")
    p_values = points["identification_white_box_top1_p_above_ceiling_nominal"]
    flagged = dict(zip(p_values.index, holm(p_values.tolist(), CEILING_TEST_LEVEL)))
    table["identification_above_nominal_ceiling"] = table["run_dir"].map(flagged)
    param_columns = sorted(c for c in table.columns if c.startswith("param_"))
    ordered = ["dataset", "encoder", "method", *param_columns, "seed"]
    rest = [c for c in table.columns if c not in ordered]
    return table[ordered + rest].sort_values(["dataset", "method", *param_columns, "seed", "attacker", "attribute"], kind="stable")


MEASURE_COLUMNS = ("measure", "split", "attribute", "attacker", "group", "value")


# The measures a study may ask for beyond accuracy and the attackers (each its own job and file per point).
OPTIONAL_MEASURES = ("fairness", "mdl")


def _measure_rows(run_dir: Path, measures: Iterable[str] = OPTIONAL_MEASURES) -> list[dict]:
    """Every scalar measured on one grid point, as long rows (measure, split, attribute, attacker, group):
    accuracy, the attackers, and of ``measures`` those whose file the point has."""
    rows = []

    def add(measure, value, split="", attribute="", attacker="", group=""):
        if value is not None:
            rows.append(dict(measure=measure, split=split, attribute=attribute, attacker=attacker, group=group, value=float(value)))

    metrics = _read(run_dir / "metrics.json")
    for split in ("dev", "test"):
        add("accuracy", metrics[split]["accuracy"], split)
        add("macro_f1", metrics[split]["macro_f1"], split)
    attack = _read(run_dir / "attack.json")
    for attacker, result in attack["attackers"].items():
        for attribute, scores in result["attributes"].items():
            for name in ("accuracy", "macro_f1", "majority_rate"):
                add(f"attack_{name}", scores[name], "test", attribute, attacker)
            for value, accuracy in (scores.get("accuracy_per_value") or {}).items():
                add("attack_subgroup_accuracy", accuracy, "test", attribute, attacker, group=value)
        for kind, value in result.get("empirical_privacy", {}).items():
            add(f"empirical_privacy_{kind}", value, "test", "", attacker)
    measures = set(measures)
    if "fairness" in measures and (run_dir / "fairness.json").exists():
        fairness = _read(run_dir / "fairness.json")
        for split, report in ((split, fairness[split]) for split in ("dev", "test")):
            for attribute, scores in report["attributes"].items():
                for name in ("accuracy_gap", "grms", "tpr_gap", "fairness"):
                    add(name, scores.get(name), split, attribute)
                for group, cell in scores["subgroup_accuracy"].items():
                    add("subgroup_accuracy", cell["accuracy"], split, attribute, group=group)
    if "mdl" in measures and (run_dir / "mdl.json").exists():
        mdl = _read(run_dir / "mdl.json")
        for attribute, code in mdl["attributes"].items():
            for name in ("kbits", "uniform_kbits", "compression"):
                add(f"mdl_{name}", code[name], mdl["split"], attribute)
    return rows


def measures_table(run_dirs: Iterable[str | Path], measures: Iterable[str] = OPTIONAL_MEASURES) -> pd.DataFrame:
    """Long table: one row per grid point x measure x split x attribute x attacker x group, with the run's
    parameters and ε (what every paper table and figure is pivoted from). Of the optional ``measures``, only
    those asked for are read, so the table does not depend on what another study left in a shared folder."""
    frames = []
    measures = tuple(measures)
    for run_dir in run_dirs:
        base = run_record(run_dir)
        keep = {k: v for k, v in base.items() if not k.startswith(("dev_", "test_"))}
        rows = _measure_rows(Path(run_dir), measures)
        frames.append(pd.DataFrame([{**keep, **row} for row in rows]))
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=[*RUN_COLUMNS, *MEASURE_COLUMNS])
