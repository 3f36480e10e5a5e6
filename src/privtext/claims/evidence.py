"""The per-example evidence behind a claims measurement: every test-split measure of a finished run,
recomputed from its per-example records under the shared bootstrap weights of :mod:`privtext.claims.inference`.

A run's test records are its main-task predictions (``predictions.parquet``), its fresh attackers'
predictions (``attack.json``) and the dataset's test labels. Every measure the claims use is a ratio of
weighted sums over test examples, so one weight matrix per dataset gives each run's value on the test set as
drawn (row 0, checked against the saved measure) and under every resample. Measures with no test-set sampling
(MDL, on the training split) come back constant: their interval is the one over seeds alone.
"""

from __future__ import annotations

import json
import math
from functools import cached_property
from pathlib import Path
from typing import Any, Mapping

import numpy as np

from privtext.claims.inference import N_BOOTSTRAP, bootstrap_weights, weighted_mean
from privtext.measures.metrics import ENTITY_F1_WHEN_UNDEFINED
from privtext.standins.parquet import read_columns

TOLERANCE = 1e-5  # float32 sums against the saved float64 measures
# Measures the claims derive from a run's records that no job saves: {derived: the saved measure whose rows name
# the runs}. CAPE's Table 3 F1 on a binary attribute is the F1 of one class (docs/claims.md, "The F1 of CAPE's
# Table 3"): the F1 of the attribute's second value, scikit-learn's ``pos_label=1``.
DERIVED_MEASURES = {"attack_class1_f1": "attack_accuracy"}


class ExampleEvidence:
    """Test records of the runs under ``results`` and the datasets in ``data_dirs`` (dataset → folder with
    ``test.parquet``); ``metas`` are the datasets' meta.json contents."""

    def __init__(self, data_dirs: Mapping[str, str | Path], metas: Mapping[str, Mapping[str, Any]],
                 n_resamples: int = N_BOOTSTRAP, seed: int = 0) -> None:
        self.data_dirs = {d: Path(p) for d, p in data_dirs.items()}
        self.metas = metas
        self.n_resamples = n_resamples
        self.seed = seed
        self._datasets: dict[str, _TestSet] = {}
        self._runs: dict[str, _Run] = {}
        # one measure's replicates per (run, measure, attribute, attacker, group): the claims read the same
        # measures many times (FEDERATE's selected runs in every claim, each RT), and each costs a pass of the
        # weight matrix over the test set
        self._replicates: dict[tuple, np.ndarray] = {}

    def test_set(self, dataset: str) -> "_TestSet":
        if dataset not in self._datasets:
            if dataset not in self.data_dirs:
                raise KeyError(f"no test split given for dataset {dataset!r}; have {sorted(self.data_dirs)}")
            self._datasets[dataset] = _TestSet(self.data_dirs[dataset], self.metas[dataset], self.n_resamples,
                                               self.seed)
        return self._datasets[dataset]

    def run(self, run_dir: str) -> "_Run":
        if run_dir not in self._runs:
            self._runs[run_dir] = _Run(Path(run_dir))
        return self._runs[run_dir]

    def run_info(self, run_dir: str) -> dict[str, Any]:
        """Training rows, optimiser steps, convergence and the settings departures are read from, as the run's
        metrics.json records them."""
        return self.run(run_dir).info

    def replicates(self, row: Any) -> np.ndarray:
        """``row`` (a measures-table row: dataset, run_dir, measure, split, attribute, attacker, group, value)
        on the test set as drawn (entry 0) and under each resample. Raises if entry 0 is not the saved value."""
        size = 1 + self.n_resamples
        if row.split != "test" or row.measure.startswith("mdl_"):
            return np.full(size, float(row.value))  # no test-set sampling: no records to read
        key = tuple(None if isinstance(v, float) and math.isnan(v) else v  # NaN never equals itself
                    for v in (row.dataset, row.run_dir, row.measure, row.attribute, row.attacker, row.group,
                              float(row.value)))
        if key not in self._replicates:
            self._replicates[key] = self._computed(row, size)
            self._replicates[key].flags.writeable = False  # shared by every caller
        return self._replicates[key]

    def _computed(self, row: Any, size: int) -> np.ndarray:
        computed = measure_replicates(row, self.test_set(row.dataset), self.run(row.run_dir))
        if computed is None:
            return np.full(size, float(row.value))
        if row.measure in DERIVED_MEASURES:  # nothing saved to check it against
            return computed.astype(float)
        if not math.isclose(float(computed[0]), float(row.value), rel_tol=TOLERANCE, abs_tol=TOLERANCE):
            raise ValueError(f"{row.run_dir}: {row.measure} ({row.attribute or '-'}, {row.attacker or '-'}, "
                             f"{row.group or '-'}) recomputes to {computed[0]:.6g} from the test records, but the "
                             f"saved measure is {row.value:.6g}; rerun its jobs")
        return computed.astype(float)


class _TestSet:
    def __init__(self, data_dir: Path, meta: Mapping[str, Any], n_resamples: int, seed: int) -> None:
        attributes = list(meta["private_attributes"])
        columns = read_columns(data_dir / "test.parquet", ["id", "y", *[f"z_{a}" for a in attributes]])
        self.ids = columns["id"]
        self.y = columns["y"].astype(np.int64)
        self.z = {a: columns[f"z_{a}"].astype(np.int64) for a in attributes}
        self.kinds = dict(meta["attribute_kinds"])
        self.value_names = {a: list(v) for a, v in meta["private_attributes"].items()}
        self.n_classes = len(meta["label_names"])
        self.weights = bootstrap_weights(len(self.y), n_resamples, seed)
        self.path = data_dir / "test.parquet"


class _Run:
    def __init__(self, run_dir: Path) -> None:
        self.dir = run_dir

    @cached_property
    def predictions(self) -> dict[str, np.ndarray]:
        columns = read_columns(self.dir / "predictions.parquet", ["id", "split", "y_true", "y_pred"])
        test = columns["split"] == "test"
        return {k: v[test] for k, v in columns.items() if k != "split"}

    @cached_property
    def attack(self) -> dict[str, Any]:
        return json.loads((self.dir / "attack.json").read_text())

    @cached_property
    def info(self) -> dict[str, Any]:
        metrics = json.loads((self.dir / "metrics.json").read_text())
        history = metrics.get("history") or {}
        return {"n_train": metrics.get("n_train"), "n_train_available": metrics.get("n_train_available"),
                "max_train": metrics.get("max_train"), "optimizer_steps": history.get("optimizer_steps"),
                "required_steps": history.get("required_steps"), "converged": history.get("converged"),
                # the settings a row's departures are read from (privtext.claims.departures)
                "finetune": metrics.get("finetune"), "layer": metrics.get("layer"),
                "differentially_private": metrics.get("differentially_private"),
                "batch_size": history.get("batch_size"), "epochs_planned": history.get("epochs_planned"),
                "epochs_run": history.get("epochs_run")}

    def attacker_predictions(self, attacker: str, attribute: str, test: _TestSet) -> np.ndarray:
        try:
            predicted = self.attack["attackers"][attacker]["predictions"][attribute]
        except KeyError:
            raise ValueError(f"{self.dir}/attack.json has no test predictions of attacker {attacker!r} on "
                             f"{attribute!r}; rerun its attack job") from None
        predicted = np.asarray(predicted, dtype=np.int64)
        if len(predicted) != len(test.y):
            raise ValueError(f"{self.dir}/attack.json: {len(predicted)} predictions of {attacker}/{attribute}, "
                             f"but {test.path} has {len(test.y)} rows")
        return predicted

    def main_predictions(self, test: _TestSet) -> tuple[np.ndarray, np.ndarray]:
        predictions = self.predictions
        if not np.array_equal(predictions["id"], test.ids):
            raise ValueError(f"{self.dir}/predictions.parquet does not follow {test.path}; retrain the run")
        return predictions["y_true"].astype(np.int64), predictions["y_pred"].astype(np.int64)


def measure_replicates(row: Any, test: _TestSet, run: _Run) -> np.ndarray | None:
    """One measure under every weight row, or None for a measure without per-example records here."""
    W = test.weights
    measure = row.measure
    if measure == "accuracy":
        y_true, y_pred = run.main_predictions(test)
        return weighted_mean(W, y_true == y_pred)
    if measure in ("accuracy_gap", "fairness"):
        y_true, y_pred = run.main_predictions(test)
        groups = test.z[row.attribute]
        if measure == "accuracy_gap":
            return _gap([weighted_mean(W, y_true == y_pred, groups == g) for g in np.unique(groups)])
        return _fairness(W, y_true, y_pred, groups, test.n_classes)
    if measure in ("attack_accuracy", "attack_majority_rate", "attack_subgroup_accuracy"):
        truth = test.z[row.attribute]
        if measure == "attack_majority_rate":
            return weighted_mean(W, truth == run.attack["attackers"][row.attacker]["attributes"][row.attribute]
                                 ["majority_class"])
        correct = run.attacker_predictions(row.attacker, row.attribute, test) == truth
        if measure == "attack_accuracy":
            return weighted_mean(W, correct)
        value = test.value_names[row.attribute].index(row.group)
        return weighted_mean(W, correct, truth == value)
    if measure == "attack_macro_f1":  # CAPE's attacker measure
        truth = test.z[row.attribute]
        return _macro_f1(W, truth, run.attacker_predictions(row.attacker, row.attribute, test))
    if measure == "attack_class1_f1":
        truth = test.z[row.attribute]
        if len(test.value_names[row.attribute]) != 2:
            raise ValueError(f"attack_class1_f1 is for binary attributes; {row.attribute} has "
                             f"{len(test.value_names[row.attribute])} values")
        return _class_f1(W, truth, run.attacker_predictions(row.attacker, row.attribute, test), 1)
    if measure == "empirical_privacy_demographic":
        attributes = [a for a, k in test.kinds.items() if k == "demographic"]
        accuracies = [weighted_mean(W, run.attacker_predictions(row.attacker, a, test) == test.z[a])
                      for a in attributes]
        return 1.0 - np.mean(accuracies, axis=0)
    if measure == "empirical_privacy_entity":
        entities = [a for a, k in test.kinds.items() if k == "entity"]
        true_positive = predicted = actual = 0.0
        for a in entities:
            truth, guess = test.z[a] == 1, run.attacker_predictions(row.attacker, a, test) == 1
            true_positive = true_positive + W @ (truth & guess).astype(np.float32)
            predicted = predicted + W @ guess.astype(np.float32)
            actual = actual + W @ truth.astype(np.float32)
        denominator = predicted + actual
        with np.errstate(invalid="ignore", divide="ignore"):
            f1 = np.where(denominator > 0, 2.0 * true_positive / denominator, ENTITY_F1_WHEN_UNDEFINED)
        return 1.0 - f1
    return None


def _class_f1(W: np.ndarray, truth: np.ndarray, predicted: np.ndarray, c: int) -> np.ndarray:
    """F1 of class ``c`` per weight row (0 where the class has no weight in truth or prediction)."""
    true_positive = W @ ((truth == c) & (predicted == c)).astype(np.float32)
    denominator = W @ (predicted == c).astype(np.float32) + W @ (truth == c).astype(np.float32)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(denominator > 0, 2.0 * true_positive / denominator, 0.0)


def _macro_f1(W: np.ndarray, truth: np.ndarray, predicted: np.ndarray) -> np.ndarray:
    """Macro-F1 per weight row over the classes seen in either (:func:`privtext.measures.metrics.macro_f1`'s
    class set and its F1 of 0 for a class with no weight in a resample)."""
    scores = [_class_f1(W, truth, predicted, c) for c in np.union1d(truth, predicted)]
    return np.mean(scores, axis=0) if scores else np.zeros(W.shape[0])


def _gap(rates: list[np.ndarray]) -> np.ndarray:
    """max − min over groups per weight row, NaN where a group is empty in that row."""
    stacked = np.vstack(rates)
    return stacked.max(axis=0) - stacked.min(axis=0)


def _fairness(W: np.ndarray, y_true: np.ndarray, y_pred: np.ndarray, groups: np.ndarray,
              n_classes: int) -> np.ndarray:
    """TPR-gap of class 1 (binary tasks) or GRMS over classes, per weight row, with
    :mod:`privtext.measures.fairness`'s empty-cell rule: a (class, group) cell without weight is skipped, a class with
    fewer than two cells has no gap, and no gap at all gives 0."""
    classes = [1] if n_classes == 2 else range(n_classes)
    gaps = []
    for c in classes:
        rates = [weighted_mean(W, y_pred == c, (y_true == c) & (groups == g)) for g in np.unique(groups)]
        stacked = np.vstack(rates)
        present = np.isfinite(stacked)
        with np.errstate(invalid="ignore"):
            gap = np.nanmax(np.where(present, stacked, -np.inf), axis=0) - np.nanmin(
                np.where(present, stacked, np.inf), axis=0)
        gaps.append(np.where(present.sum(axis=0) >= 2, gap, np.nan))
    gaps = np.vstack(gaps)
    counted = np.isfinite(gaps).sum(axis=0)
    with np.errstate(invalid="ignore"):
        mean_square = np.where(counted > 0, np.nansum(np.square(np.nan_to_num(gaps, nan=0.0)), axis=0)
                               / np.maximum(counted, 1), 0.0)
    return np.sqrt(mean_square)
