"""Subgroup accuracy, TPR-gap and GRMS on hand-computed cases, including empty (class, group) cells."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from privtext.measures import fairness

# Multi-class case. class 0: TPR 1.0 in group 0, 0.5 in group 1 -> gap 0.5.
# class 1: TPR 1.0 in both groups -> gap 0.0. class 2: no example in group 1 (empty cell) -> no gap.
Y_TRUE = np.array([0, 0, 0, 0, 1, 1, 2, 2])
GROUPS = np.array([0, 0, 1, 1, 0, 1, 0, 0])
Y_PRED = np.array([0, 0, 0, 1, 1, 1, 2, 0])


def test_grms_skips_a_class_with_an_empty_group_cell():
    assert fairness.tpr_gaps_per_class(Y_TRUE, Y_PRED, GROUPS) == {0: 0.5, 1: 0.0}
    # sqrt((0.5² + 0²) / 2); counting class 2 as a zero gap would give sqrt(0.25 / 3) instead.
    assert fairness.grms(Y_TRUE, Y_PRED, GROUPS) == pytest.approx(math.sqrt(0.125))


def test_tpr_gap_is_the_positive_class_gap_and_ignores_a_group_without_positives():
    y_true = np.array([1, 1, 1, 1, 1, 1, 0, 0, 0])
    y_pred = np.array([1, 1, 1, 0, 1, 0, 1, 0, 0])
    groups = np.array([0, 0, 0, 0, 1, 1, 1, 2, 2])  # TPR 0.75 vs 0.5; group 2 has no positive
    assert fairness.tpr_gap(y_true, y_pred, groups) == pytest.approx(0.25)


def test_tpr_gap_with_three_groups_is_the_largest_pairwise_gap():
    y_true = np.ones(6, dtype=int)
    y_pred = np.array([1, 1, 1, 0, 0, 0])
    groups = np.array([0, 0, 1, 1, 2, 2])  # TPR 1.0, 0.5, 0.0
    assert fairness.tpr_gap(y_true, y_pred, groups) == pytest.approx(1.0)


def test_gaps_are_nan_not_zero_when_no_class_has_two_groups():
    """One group without a positive example: no TPR-gap is defined, and 0.0 would read as perfectly fair."""
    y_true, y_pred, groups = np.array([1, 1, 0, 0]), np.array([1, 0, 0, 1]), np.array([0, 0, 1, 1])
    assert math.isnan(fairness.tpr_gap(y_true, y_pred, groups))
    assert math.isnan(fairness.grms(y_true, y_pred, groups, [1]))


def test_the_report_writes_an_undefined_gap_as_null_with_a_note():
    y_true, y_pred = np.array([1, 1, 0, 0, 1, 0]), np.array([1, 0, 0, 1, 1, 0])
    Z = {"gender": np.array([0, 0, 1, 1, 0, 1]), "bush": np.array([0, 1, 0, 1, 0, 1])}
    report = fairness.fairness_report(
        y_true, y_pred, Z, {"gender": "demographic", "bush": "entity"}, label_names=["neg", "pos"],
        value_names={"gender": ["F", "M"]},
    )
    gender, bush = report["attributes"]["gender"], report["attributes"]["bush"]
    assert gender["tpr_gap"] is None and gender["fairness"] is None
    assert gender["notes"] == ["class pos: no example in group(s) M; no gap for this class"]
    # bush: TPR 2/2 = 1.0 where absent, 0/1 where present
    assert bush["tpr_gap"] == bush["fairness"] == pytest.approx(1.0) and bush["notes"] == []
    assert "NaN" not in json.dumps(report)


def test_a_gap_over_the_groups_left_says_which_group_it_left_out():
    y_true = np.array([1, 1, 1, 1, 1, 1, 0, 0, 0])
    y_pred = np.array([1, 1, 1, 0, 1, 0, 1, 0, 0])
    groups = np.array([0, 0, 0, 0, 1, 1, 1, 2, 2])  # TPR 0.75 vs 0.5; group 2 has no positive
    report = fairness.fairness_report(y_true, y_pred, {"age": groups}, {"age": "demographic"}, ["neg", "pos"])
    assert report["attributes"]["age"]["tpr_gap"] == pytest.approx(0.25)
    assert report["attributes"]["age"]["notes"] == [
        "class pos: no example in group(s) 2; its gap is over the other groups"
    ]


def test_subgroup_accuracy_gap_is_max_minus_min():
    result = fairness.subgroup_accuracy(
        np.array([0, 1, 0, 1, 1]), np.array([0, 1, 1, 1, 0]), np.array([0, 0, 1, 1, 1]), ["F", "M"]
    )
    assert result["per_group"] == {"F": {"accuracy": 1.0, "n": 2}, "M": {"accuracy": pytest.approx(1 / 3), "n": 3}}
    assert result["gap"] == pytest.approx(2 / 3)


def test_fairness_report_for_a_binary_task_uses_tpr_gap_and_entity_group_names():
    y_true = np.array([1, 1, 1, 1, 1, 1, 0, 0])
    y_pred = np.array([1, 1, 1, 0, 1, 0, 0, 1])
    Z = {"bush": np.array([0, 0, 0, 0, 1, 1, 0, 1])}
    report = fairness.fairness_report(y_true, y_pred, Z, {"bush": "entity"}, label_names=["neg", "pos"])
    bush = report["attributes"]["bush"]
    assert report["task"] == "binary" and bush["fairness"] == bush["tpr_gap"] == pytest.approx(0.25)
    assert set(bush["subgroup_accuracy"]) == {"absent", "present"}
    json.dumps(report)


def test_fairness_report_for_a_multiclass_task_uses_grms():
    report = fairness.fairness_report(Y_TRUE, Y_PRED, {"gender": GROUPS}, {"gender": "demographic"})
    gender = report["attributes"]["gender"]
    assert report["headline_metric"] == "grms" and "tpr_gap" not in gender
    assert gender["fairness"] == pytest.approx(math.sqrt(0.125))
    assert gender["tpr_gap_per_class"] == {"0": 0.5, "1": 0.0}


# --- held to fairlearn (issue 43): the same predictions, every group holding every class -------------------------

def _predictions(seed: int, n_classes: int, n_groups: int, n: int = 600):
    rng = np.random.default_rng(seed)
    groups = np.arange(n) % n_groups  # every group in every class: no empty cell, where the rules agree
    y_true = (np.arange(n) // n_groups) % n_classes
    y_pred = np.where(rng.random(n) < 0.3 + 0.1 * groups, rng.integers(0, n_classes, n), y_true)
    return y_true, y_pred, groups


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("n_groups", [2, 3])
def test_subgroup_accuracy_and_the_tpr_gap_are_fairlearn_s(seed, n_groups):
    from fairlearn.metrics import MetricFrame, true_positive_rate
    from sklearn.metrics import accuracy_score

    y_true, y_pred, groups = _predictions(seed, 2, n_groups)
    frame = MetricFrame(metrics={"accuracy": accuracy_score, "tpr": true_positive_rate}, y_true=y_true,
                        y_pred=y_pred, sensitive_features=groups)
    ours = fairness.subgroup_accuracy(y_true, y_pred, groups)
    assert {int(g): v["accuracy"] for g, v in ours["per_group"].items()} == pytest.approx(
        frame.by_group["accuracy"].to_dict())
    assert ours["gap"] == pytest.approx(frame.difference(method="between_groups")["accuracy"])
    assert fairness.tpr_gap(y_true, y_pred, groups) == pytest.approx(frame.difference(method="between_groups")["tpr"])


@pytest.mark.parametrize("seed", range(3))
def test_grms_is_the_rms_of_fairlearn_s_per_class_recall_gaps(seed):
    from fairlearn.metrics import MetricFrame
    from sklearn.metrics import recall_score

    n_classes = 4
    y_true, y_pred, groups = _predictions(seed, n_classes, 3)
    gaps = []
    for cls in range(n_classes):
        frame = MetricFrame(metrics=lambda t, p, c=cls: recall_score(t == c, p == c), y_true=y_true, y_pred=y_pred,
                            sensitive_features=groups)
        gaps.append(frame.difference(method="between_groups"))
    assert fairness.grms(y_true, y_pred, groups) == pytest.approx(math.sqrt(np.mean(np.square(gaps))))
