"""CAPE (Plant, Giuffrida & Gkatzia 2021) Tables 3 and 4 from saved measures.

CAPE prints fractions with a standard deviation over runs; so do we. CAPE's "attacker" was the jointly
trained adversary head; ours is a fresh ``mlp`` attacker trained on the released representations.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from privtext.report.artefacts.common import (
    ArtefactInputs, TableArtefact, cells_frame, dataset_label, equals, number_text, paper_dataset, paper_value,
    stats_of,
)

EPSILON = 0.1  # CAPE Table 3
LAMBDA = 1.0
EPSILON_SWEEP = (0.01, 0.1, 0.5, 1.0)  # CAPE Table 4, λ = 1
LAMBDA_SWEEP = (0.1, 0.5, 1.0, 1.5)  # CAPE Table 4, ε = 0.1
ATTACKER = "mlp"
LABELS = {"nonpriv": "Base", "adv": "Adv.", "dpnr": "DP", "cape": "CAPE"}
COLUMNS = {"Target acc.": ("accuracy", "target_accuracy"), "Target F1": ("macro_f1", "target_f1"),
           "Attacker acc.": ("attack_accuracy", "attacker_accuracy"), "Attacker F1": ("attack_macro_f1", "attacker_f1")}


def _setting_rows(frame: pd.DataFrame, method: str, epsilon: float | None, lam: float | None) -> pd.DataFrame:
    rows = frame[(frame["method"] == method) & equals(frame["param_mu"], 0.0)]
    if epsilon is not None:
        rows = rows[equals(rows["param_epsilon"], epsilon)]
    if lam is not None:
        rows = rows[equals(rows["param_lambda"], lam)]
    return rows


def _method_settings(method: str) -> tuple[float | None, float | None]:
    """(ε, λ) of each Table 3 row: DP at ε = 0.1, Adv. at λ = 1, CAPE at both."""
    return {"nonpriv": (None, None), "adv": (None, LAMBDA), "dpnr": (EPSILON, None), "cape": (EPSILON, LAMBDA)}[method]


def _cells(inputs: ArtefactInputs, dataset: str, attribute: str, method: str, epsilon: float | None,
           lam: float | None, row: dict[str, Any], setting: str) -> list[dict[str, Any]]:
    """The four CAPE columns of one row: target accuracy / F1 (test) and attacker accuracy / F1 on ``attribute``."""
    records = []
    for column, (measure, metric) in COLUMNS.items():
        if measure.startswith("attack_"):
            chosen = inputs.pick(measure, dataset, "test", attribute, ATTACKER)
        else:
            chosen = inputs.pick(measure, dataset, "test")
        paper = paper_value(inputs.published, "cape", ("table3", "table4"), dataset, method, setting, metric)
        records.append({**row, "column": column, "metric": metric,
                        **stats_of(_setting_rows(chosen, method, epsilon, lam)),
                        "paper": paper[0], "paper_std": paper[1]})
    return records


def table3(inputs: ArtefactInputs) -> TableArtefact:
    """Per dataset and private attribute, rows Base, Adv., DP, CAPE; columns target accuracy and F1, attacker
    accuracy and F1 (fractions, mean ± SD over seeds)."""
    records = []
    for dataset in inputs.datasets():
        for attribute in inputs.attributes(dataset):
            for method in ("nonpriv", "adv", "dpnr", "cape"):
                epsilon, lam = _method_settings(method)
                row = {"dataset": dataset, "paper_dataset": paper_dataset(dataset) or "",
                       "Dataset": dataset_label(dataset), "attribute": attribute, "Private attribute": attribute,
                       "method": method, "Model": LABELS[method], "param_epsilon": epsilon, "param_lambda": lam}
                setting = f"private={attribute};eps={EPSILON!r};lambda={LAMBDA!r}"
                records.extend(_cells(inputs, dataset, attribute, method, epsilon, lam, row, setting))
    return TableArtefact(
        title=f"CAPE Table 3: target and attacker scores per private attribute (ε = {EPSILON:g}, λ = {LAMBDA:g})",
        cells=cells_frame(records, ["dataset", "paper_dataset", "Dataset", "attribute", "Private attribute",
                                    "method", "Model"]),
        row_keys=["Dataset", "Private attribute", "Model"], columns=list(COLUMNS), digits=3, unit="fraction",
        notes=[f"Attacker: a fresh `{ATTACKER}` trained on the released test-time representations; CAPE reported its "
               "jointly trained adversary head, so the attacker columns are not like for like.",
               "Target scores do not depend on the attribute for Base and DP (no adversary): the same runs are "
               "repeated under each attribute.", "Scores are fractions, as CAPE prints them."],
    )


def _attribute(inputs: ArtefactInputs, dataset: str) -> str | None:
    attributes = inputs.attributes(dataset)
    return "gender" if "gender" in attributes else (attributes[0] if attributes else None)


def table4(inputs: ArtefactInputs) -> TableArtefact:
    """Per dataset: Base, then CAPE over ε at λ = 1, then CAPE over λ at ε = 0.1, on gender (or the first
    private attribute); the four CAPE columns."""
    records = []
    for dataset in inputs.datasets():
        attribute = _attribute(inputs, dataset)
        if attribute is None:
            continue
        base = {"dataset": dataset, "paper_dataset": paper_dataset(dataset) or "", "Dataset": dataset_label(dataset),
                "attribute": attribute, "Private attribute": attribute}
        sweeps = [("Base", "nonpriv", None, None)]
        sweeps += [(f"ε sweep: ε = {number_text(e)}, λ = {LAMBDA:g}", "cape", e, LAMBDA) for e in EPSILON_SWEEP]
        sweeps += [(f"λ sweep: ε = {EPSILON:g}, λ = {number_text(lam)}", "cape", EPSILON, lam)
                   for lam in LAMBDA_SWEEP]
        for label, method, epsilon, lam in sweeps:
            setting = (f"private={attribute}" if method == "nonpriv"
                       else f"private={attribute};eps={float(epsilon)!r};lambda={float(lam)!r}")
            row = {**base, "method": method, "Setting": label, "param_epsilon": epsilon, "param_lambda": lam}
            records.extend(_cells(inputs, dataset, attribute, method, epsilon, lam, row, setting))
    return TableArtefact(
        title="CAPE Table 4: CAPE over ε (λ = 1) and over λ (ε = 0.1), target and attacker scores",
        cells=cells_frame(records, ["dataset", "paper_dataset", "Dataset", "attribute", "Private attribute",
                                    "method", "Setting"]),
        row_keys=["Dataset", "Private attribute", "Setting"], columns=list(COLUMNS), digits=3, unit="fraction",
        notes=[f"Attacker: a fresh `{ATTACKER}` (CAPE reported its jointly trained adversary).",
               "ε = 0.1, λ = 1 appears in both sweeps, as in CAPE's table. Scores are fractions."],
    )

