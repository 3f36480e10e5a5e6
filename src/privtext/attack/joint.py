"""The adversary a method trains jointly with itself, scored as one more attacker (docs/methods.md, "Measures").

CAPE's Table 3 measures leakage by the "secondary classifier" trained "along with the target task": the
adversary behind the gradient reversal layer, not an attacker trained afresh on the frozen release. The train
job writes what a method's own adversaries predict from its released dev and test representations beside the
task's predictions (``predictions.parquet``, one ``adversary_<attribute>`` column per protected attribute); the
attack job scores them as the attacker ``joint``, with the fresh attackers' scores and ε ceilings. It is the
paper's measure, and the weaker one: the reversal trained the representation to defeat exactly that head.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

import numpy as np

from privtext.measures.metrics import attack_scores
from privtext.standins.parquet import column_names, read_columns

JOINT_ADVERSARY = "joint"
COLUMN_PREFIX = "adversary_"
CONFIG = {
    "kind": "the method's own adversaries, trained with it behind the gradient reversal layer (several of one "
            "attribute vote by their mean probability)",
    "fit_split": "train", "select_split": "dev (the method's epoch, chosen on the task)", "test_split": "test",
}


def prediction_columns(predictions: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The ``predictions.parquet`` columns of one split's adversary predictions (attribute → labels)."""
    return {f"{COLUMN_PREFIX}{attribute}": np.asarray(values, dtype=np.int64) for attribute, values in predictions.items()}


def joint_adversary(predictions_path: str | Path, test_path: str | Path, labels: Mapping[str, Mapping[str, np.ndarray]],
                    attribute_kinds: Mapping[str, str], n_train: int) -> dict[str, Any] | None:
    """The ``joint`` attacker's entry of attack.json from a run's ``predictions.parquet``, in the fresh attackers'
    shape (:func:`privtext.attack.attackers.run_attacks`), or None for a run whose method trains no adversary
    (read from the file's footer alone). ``test_path``: the dataset's ``test.parquet``, whose ids the predictions
    must follow; ``labels``: split → attribute → int labels; ``n_train``: the rows the method trained on."""
    names = [name for name in column_names(predictions_path) if name.startswith(COLUMN_PREFIX)]
    if not names:
        return None
    columns = read_columns(predictions_path, ["id", "split", *names])
    test = columns["split"] == "test"
    if not np.array_equal(columns["id"][test], read_columns(test_path, ["id"])["id"]):
        raise ValueError(f"{predictions_path}: its test rows do not follow the dataset's test split; retrain the run")
    per_attribute, predictions = {}, {}
    for name in names:
        attribute = name[len(COLUMN_PREFIX):]
        if attribute not in attribute_kinds:
            raise ValueError(f"{predictions_path}: column {name!r} names no private attribute of the dataset "
                             f"({sorted(attribute_kinds)})")
        y_pred = columns[name][test].astype(np.int64)
        scores = attack_scores({split: values[attribute] for split, values in labels.items()}, y_pred, n_train)
        per_attribute[attribute] = {"kind": attribute_kinds[attribute], **scores, "details": {}}
        predictions[attribute] = y_pred.tolist()
    return {"config": dict(CONFIG), "attributes": per_attribute, "predictions": predictions}
