"""Group fairness of main-task predictions (docs/methods.md, "Measures").

- Subgroup accuracy and its gap (max − min over groups present), DPNR Tables 6–7. Entity attributes have
  the groups absent (0) / present (1).
- TPR-gap (binary tasks, FEDERATE): ``|TPR_g1 − TPR_g0|`` for the positive class 1. With more than two
  groups it is the largest pairwise gap, ``max_g TPR_g − min_g TPR_g``.
- GRMS (multi-class, FEDERATE): ``sqrt(mean over classes c of gap_c²)`` with ``gap_c`` the largest pairwise
  TPR gap of class c across groups.

Empty cells: a (class, group) cell with no example of that true class in that group has no TPR and is
skipped for that class; a class with fewer than two non-empty groups has no gap and is left out of the
mean (it neither adds 0 nor counts in the denominator). A gap that is not defined is NaN, never 0.0 (which
would read as perfectly fair): TPR-gap when fewer than two groups have a positive example, GRMS when no class
has a gap. :func:`fairness_report` writes such a value as null and says why in the attribute's ``notes``, which
also name every group a class's gap left out.

These are hand-written rather than taken from fairlearn/fairlib (fairlearn is a test dependency only), because
the empty-cell rule must be explicit; tests/test_fairness.py holds them to fairlearn's ``MetricFrame`` on
predictions without empty cells, where the two rules agree.
"""

from __future__ import annotations

import math
from typing import Any, Mapping, Sequence

import numpy as np

from privtext.measures import metrics

ENTITY_GROUP_NAMES = ("absent", "present")


def subgroup_accuracy(
    y_true: np.ndarray, y_pred: np.ndarray, groups: np.ndarray, group_names: Sequence[str] | None = None
) -> dict[str, Any]:
    """Accuracy and size per group present, and ``gap`` = max − min accuracy (0.0 with one group)."""
    y_true, y_pred, groups = _arrays(y_true, y_pred, groups)
    per_group = {}
    for g in np.unique(groups):
        mask = groups == g
        per_group[_name(g, group_names)] = {
            "accuracy": float(np.mean(y_true[mask] == y_pred[mask])), "n": int(mask.sum())
        }
    values = [v["accuracy"] for v in per_group.values()]
    return {"per_group": per_group, "gap": float(max(values) - min(values)) if values else 0.0}


def tpr_per_group(y_true: np.ndarray, y_pred: np.ndarray, groups: np.ndarray, cls: int) -> dict[int, float]:
    """TPR of class ``cls`` (P(ŷ = cls | y = cls, group)) for every group with at least one example of it."""
    y_true, y_pred, groups = _arrays(y_true, y_pred, groups)
    positives = y_true == cls
    return {
        int(g): float(np.mean(y_pred[positives & (groups == g)] == cls))
        for g in np.unique(groups[positives])
    }


def tpr_gaps_per_class(
    y_true: np.ndarray, y_pred: np.ndarray, groups: np.ndarray, classes: Sequence[int] | None = None
) -> dict[int, float]:
    """Largest pairwise TPR gap per class; classes with fewer than two non-empty groups are omitted."""
    y_true, y_pred, groups = _arrays(y_true, y_pred, groups)
    classes = np.unique(y_true) if classes is None else classes
    gaps = {}
    for cls in classes:
        rates = tpr_per_group(y_true, y_pred, groups, int(cls))
        if len(rates) >= 2:
            gaps[int(cls)] = float(max(rates.values()) - min(rates.values()))
    return gaps


def tpr_gap(y_true: np.ndarray, y_pred: np.ndarray, groups: np.ndarray, positive: int = 1) -> float:
    """Binary-task TPR-gap for the ``positive`` class: ``|TPR_g1 − TPR_g0|`` (largest pairwise gap with more
    than two groups; NaN when fewer than two groups have a positive example)."""
    return tpr_gaps_per_class(y_true, y_pred, groups, [positive]).get(positive, math.nan)


def grms(
    y_true: np.ndarray, y_pred: np.ndarray, groups: np.ndarray, classes: Sequence[int] | None = None
) -> float:
    """Root mean square over classes of the per-class TPR gap (empty cells skipped, see module docstring; NaN
    when no class has a gap)."""
    gaps = list(tpr_gaps_per_class(y_true, y_pred, groups, classes).values())
    return float(np.sqrt(np.mean(np.square(gaps)))) if gaps else math.nan


def empty_cell_notes(
    y_true: np.ndarray, groups: np.ndarray, classes: Sequence[int], label_names: Sequence[str] | None = None,
    group_names: Sequence[str] | None = None,
) -> list[str]:
    """Per class, the groups present that have no example of it (their TPR, and so their part of the gap, is
    undefined), and whether the class is left with no gap at all."""
    y_true, groups = np.asarray(y_true), np.asarray(groups)
    present = np.unique(groups)
    notes = []
    for cls in classes:
        with_examples = set(np.unique(groups[y_true == cls]).tolist())
        missing = [g for g in present.tolist() if g not in with_examples]
        if missing:
            names = ", ".join(_name(g, group_names) for g in missing)
            consequence = "no gap for this class" if len(with_examples) < 2 else "its gap is over the other groups"
            notes.append(f"class {_name(cls, label_names)}: no example in group(s) {names}; {consequence}")
    return notes


def fairness_report(
    y_true: np.ndarray,
    y_pred: np.ndarray,
    Z: Mapping[str, np.ndarray],
    attribute_kinds: Mapping[str, str],
    label_names: Sequence[str] | None = None,
    value_names: Mapping[str, Sequence[str]] | None = None,
) -> dict[str, Any]:
    """Fairness of main-task predictions for every attribute of ``attribute_kinds`` (JSON-serialisable)::

        {"n", "n_classes", "task": "binary"|"multiclass", "headline_metric": "tpr_gap"|"grms",
         "main": {"accuracy", "macro_f1", "n"},
         "attributes": {attr: {"kind", "subgroup_accuracy": {group: {"accuracy", "n"}}, "accuracy_gap",
                               "tpr_gap" (binary tasks only), "grms", "tpr_gap_per_class": {label: gap},
                               "fairness" (= the headline metric), "notes": [str]}}}

    A gap that is not defined is null, and ``notes`` says which class lacks which group (:func:`empty_cell_notes`).

    ``value_names`` maps an attribute to the names of its values (entity attributes default to
    absent/present); ``label_names`` names the main-task classes and fixes K.
    """
    y_true, y_pred = np.asarray(y_true).astype(np.int64), np.asarray(y_pred).astype(np.int64)
    n_classes = len(label_names) if label_names is not None else int(max(y_true.max(), y_pred.max()) + 1)
    binary = n_classes == 2
    report: dict[str, Any] = {
        "n": int(len(y_true)), "n_classes": n_classes, "task": "binary" if binary else "multiclass",
        "headline_metric": "tpr_gap" if binary else "grms",
        "main": metrics.main_task_metrics(y_true, y_pred, n_classes), "attributes": {},
    }
    for attribute, kind in attribute_kinds.items():
        if attribute not in Z:
            raise ValueError(f"no group labels for attribute {attribute!r}; have {sorted(Z)}")
        groups = np.asarray(Z[attribute]).astype(np.int64)
        names = (value_names or {}).get(attribute) or (ENTITY_GROUP_NAMES if kind == "entity" else None)
        subgroups = subgroup_accuracy(y_true, y_pred, groups, names)
        gaps = tpr_gaps_per_class(y_true, y_pred, groups, range(n_classes))
        entry: dict[str, Any] = {
            "kind": kind,
            "subgroup_accuracy": subgroups["per_group"],
            "accuracy_gap": subgroups["gap"],
            "grms": _defined(grms(y_true, y_pred, groups, range(n_classes))),
            "tpr_gap_per_class": {_name(c, label_names): g for c, g in gaps.items()},
            "notes": empty_cell_notes(y_true, groups, [1] if binary else range(n_classes), label_names, names),
        }
        if binary:
            entry["tpr_gap"] = _defined(tpr_gap(y_true, y_pred, groups))
        entry["fairness"] = entry["tpr_gap"] if binary else entry["grms"]
        report["attributes"][attribute] = entry
    return report


def _defined(value: float) -> float | None:
    """JSON has no NaN: an undefined gap is written as null (its reason is in the attribute's notes)."""
    return None if math.isnan(value) else value


def _name(value: Any, names: Sequence[str] | None) -> str:
    value = int(value)
    return str(names[value]) if names is not None and 0 <= value < len(names) else str(value)


def _arrays(y_true: Any, y_pred: Any, groups: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    y_true, y_pred, groups = np.asarray(y_true), np.asarray(y_pred), np.asarray(groups)
    if not len(y_true) == len(y_pred) == len(groups):
        raise ValueError(f"lengths differ: y_true {len(y_true)}, y_pred {len(y_pred)}, groups {len(groups)}")
    return y_true, y_pred, groups
