"""Main-task metrics and DPNR's empirical privacy (docs/methods.md, "Measures").

Accuracy, recall and F1 are counted with numpy rather than taken from ``sklearn.metrics``: importing
scikit-learn costs a train job 0.5 s of start-up for a few lines of arithmetic; ``tests/test_metrics.py``
holds them equal to scikit-learn's (same ``zero_division`` conventions). Empirical privacy (DPNR §4): for demographic attributes
``1 − X`` with X the mean attacker accuracy over those attributes; for entity attributes ``1 − F`` with F
the attacker's micro-F1 over the presence of all entities (one binary column per entity).
"""

from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np

# Conservative convention when no entity is present and none is predicted (micro-F1 is 0/0): count the
# attacker as perfect, so privacy is never overstated on a degenerate test split.
ENTITY_F1_WHEN_UNDEFINED = 1.0


def accuracy(y_true: Sequence[int] | np.ndarray, y_pred: Sequence[int] | np.ndarray) -> float:
    """Fraction of exact matches."""
    y_true, y_pred = np.asarray(y_true), np.asarray(y_pred)
    if y_true.shape != y_pred.shape:
        raise ValueError(f"y_true and y_pred differ in shape: {y_true.shape} vs {y_pred.shape}")
    return float(np.mean(y_true == y_pred)) if y_true.size else float("nan")


def accuracy_per_value(
    y_true: Sequence[int] | np.ndarray, y_pred: Sequence[int] | np.ndarray, n_values: int
) -> list[float | None]:
    """Accuracy within each true value ``v`` of ``range(n_values)`` (the recall of ``v``); None for a value
    absent from ``y_true``. DPNR Table 5: the attacker's accuracy on documents without / with an entity."""
    y_true, y_pred = np.asarray(y_true), np.asarray(y_pred)
    return [float(np.mean(y_pred[y_true == v] == v)) if (y_true == v).any() else None for v in range(n_values)]


def macro_f1(
    y_true: Sequence[int] | np.ndarray,
    y_pred: Sequence[int] | np.ndarray,
    labels: Sequence[int] | None = None,
) -> float:
    """Unweighted mean of per-class F1; ``labels`` fixes the class set (default: classes seen in either).
    A class with no true and no predicted example has F1 0 (scikit-learn's ``zero_division=0``)."""
    y_true, y_pred = np.asarray(y_true), np.asarray(y_pred)
    classes = np.asarray(labels) if labels is not None else np.union1d(y_true, y_pred)
    if classes.size == 0:
        return 0.0
    f1 = [_f1(np.sum((y_true == c) & (y_pred == c)), np.sum(y_pred == c), np.sum(y_true == c), 0.0) for c in classes]
    return float(np.mean(f1))


def _f1(true_positives: int, predicted: int, actual: int, undefined: float) -> float:
    """2·TP / (predicted + actual); ``undefined`` when both are 0."""
    return 2.0 * true_positives / (predicted + actual) if predicted + actual else undefined


def main_task_metrics(
    y_true: Sequence[int] | np.ndarray, y_pred: Sequence[int] | np.ndarray, n_classes: int | None = None
) -> dict[str, float | int]:
    """``{"accuracy", "macro_f1", "n"}`` for the main task; with ``n_classes`` macro-F1 averages over all
    classes, so a class the model never predicts and that is absent from the split still counts as 0."""
    labels = list(range(n_classes)) if n_classes is not None else None
    return {"accuracy": accuracy(y_true, y_pred), "macro_f1": macro_f1(y_true, y_pred, labels), "n": int(len(y_true))}


def majority_class(y: Sequence[int] | np.ndarray) -> int:
    """Most frequent label; ties go to the smallest label (np.unique sorts, argmax takes the first)."""
    values, counts = np.unique(np.asarray(y), return_counts=True)
    if len(values) == 0:
        raise ValueError("majority_class needs at least one label")
    return int(values[np.argmax(counts)])


def majority_rate(y_reference: Sequence[int] | np.ndarray, y_eval: Sequence[int] | np.ndarray) -> float:
    """Accuracy on ``y_eval`` of always predicting the majority class of ``y_reference`` (e.g. train → test)."""
    return float(np.mean(np.asarray(y_eval) == majority_class(y_reference)))


def demographic_privacy(attacker_accuracy: Mapping[str, float]) -> float:
    """DPNR empirical privacy ``1 − mean accuracy`` over the given demographic attributes."""
    if not attacker_accuracy:
        raise ValueError("demographic_privacy needs at least one attribute accuracy")
    return float(1.0 - np.mean([float(v) for v in attacker_accuracy.values()]))


def entity_micro_f1(
    presence_true: Mapping[str, np.ndarray] | np.ndarray, presence_pred: Mapping[str, np.ndarray] | np.ndarray
) -> float:
    """Micro-F1 over the binary presence matrix (examples × entities); mappings are stacked column-wise in
    the key order of ``presence_true``."""
    true, pred = _presence_matrix(presence_true), _presence_matrix(presence_pred, order=presence_true)
    if true.shape != pred.shape:
        raise ValueError(f"entity presence shapes differ: true {true.shape}, predicted {pred.shape}")
    if not set(np.unique(true)) | set(np.unique(pred)) <= {0, 1}:
        raise ValueError("entity attributes must be binary absent(0)/present(1)")
    return _f1(int(np.sum((true == 1) & (pred == 1))), int(np.sum(pred == 1)), int(np.sum(true == 1)),
               ENTITY_F1_WHEN_UNDEFINED)


def entity_privacy(
    presence_true: Mapping[str, np.ndarray] | np.ndarray, presence_pred: Mapping[str, np.ndarray] | np.ndarray
) -> float:
    """DPNR empirical privacy for entities: ``1 − micro-F1`` of the attacker over entity presence."""
    return 1.0 - entity_micro_f1(presence_true, presence_pred)


def empirical_privacy(
    attribute_kinds: Mapping[str, str],
    attacker_accuracy: Mapping[str, float],
    y_true: Mapping[str, np.ndarray] | None = None,
    y_pred: Mapping[str, np.ndarray] | None = None,
) -> dict[str, float]:
    """Empirical privacy per attribute kind present: ``{"demographic": 1 − X, "entity": 1 − F}``.

    ``attacker_accuracy`` holds test accuracy per attribute; ``y_true``/``y_pred`` hold test labels and
    attacker predictions per attribute and are needed only when entity attributes are present.
    """
    demographic = [a for a, kind in attribute_kinds.items() if kind == "demographic"]
    entities = [a for a, kind in attribute_kinds.items() if kind == "entity"]
    unknown = {k for k in attribute_kinds.values()} - {"demographic", "entity"}
    if unknown:
        raise ValueError(f"unknown attribute kind(s) {sorted(unknown)}; expected 'demographic' or 'entity'")
    result: dict[str, float] = {}
    if demographic:
        missing = [a for a in demographic if a not in attacker_accuracy]
        if missing:
            raise ValueError(f"no attacker accuracy for demographic attribute(s) {missing}")
        result["demographic"] = demographic_privacy({a: attacker_accuracy[a] for a in demographic})
    if entities:
        if y_true is None or y_pred is None:
            raise ValueError(f"entity attributes {entities} need y_true and y_pred for micro-F1")
        result["entity"] = entity_privacy({a: y_true[a] for a in entities}, {a: y_pred[a] for a in entities})
    return result


def _presence_matrix(
    presence: Mapping[str, np.ndarray] | np.ndarray, order: Mapping[str, np.ndarray] | np.ndarray | None = None
) -> np.ndarray:
    if isinstance(presence, Mapping):
        keys = list(order) if isinstance(order, Mapping) else list(presence)
        return np.column_stack([np.asarray(presence[k]).astype(int) for k in keys])
    matrix = np.asarray(presence).astype(int)
    return matrix.reshape(-1, 1) if matrix.ndim == 1 else matrix


def attack_scores(labels: Mapping[str, np.ndarray], y_pred: np.ndarray, n_train: int) -> dict[str, object]:
    """What every attacker reports of one attribute from its test predictions ``y_pred`` (``labels``: split →
    the attribute's int labels; ``n_train``: the rows it learnt from)."""
    return {
        "accuracy": accuracy(labels["test"], y_pred),
        "macro_f1": macro_f1(labels["test"], y_pred),
        "majority_rate": majority_rate(labels["train"], labels["test"]),
        # indexed by attribute value; the values seen in any split (the builder fixes the value set)
        "accuracy_per_value": accuracy_per_value(
            labels["test"], y_pred, int(max(v.max(initial=0) for v in labels.values())) + 1),
        "majority_class": majority_class(labels["train"]),
        "n_train": int(n_train),
        "n_test": int(len(labels["test"])),
    }
