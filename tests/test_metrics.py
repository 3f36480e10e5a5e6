"""Main-task metrics and DPNR empirical privacy, on hand-computed cases."""

from __future__ import annotations

import numpy as np
import pytest

from privtext.measures import metrics


def test_demographic_privacy_is_one_minus_mean_attacker_accuracy():
    kinds = {"gender": "demographic", "age": "demographic"}
    privacy = metrics.empirical_privacy(kinds, {"gender": 0.6, "age": 0.8})
    assert privacy == {"demographic": pytest.approx(0.3)}


def test_entity_privacy_is_one_minus_micro_f1_over_presence():
    # Pooled over both entities: TP = 3, FP = 1, FN = 1, so micro-F1 = 6 / 8 = 0.75.
    true = {"bush": np.array([1, 0, 1, 0]), "kerry": np.array([0, 1, 1, 0])}
    pred = {"bush": np.array([1, 1, 0, 0]), "kerry": np.array([0, 1, 1, 0])}
    kinds = {"bush": "entity", "kerry": "entity"}
    privacy = metrics.empirical_privacy(kinds, {"bush": 0.5, "kerry": 1.0}, true, pred)
    assert privacy == {"entity": pytest.approx(0.25)}


def test_empirical_privacy_keeps_demographic_and_entity_apart():
    kinds = {"gender": "demographic", "bush": "entity"}
    true = {"gender": np.array([0, 1]), "bush": np.array([1, 0])}
    pred = {"gender": np.array([0, 0]), "bush": np.array([1, 0])}
    privacy = metrics.empirical_privacy(kinds, {"gender": 0.5, "bush": 1.0}, true, pred)
    assert privacy == {"demographic": pytest.approx(0.5), "entity": pytest.approx(0.0)}


def test_entity_privacy_without_predictions_is_an_error():
    with pytest.raises(ValueError, match="micro-F1"):
        metrics.empirical_privacy({"bush": "entity"}, {"bush": 0.9})


def test_majority_rate_scores_the_reference_majority_on_the_evaluation_labels():
    assert metrics.majority_rate([0, 0, 1], [1, 1, 0, 1]) == pytest.approx(0.25)


def test_majority_class_tie_goes_to_the_smallest_label():
    assert metrics.majority_class([2, 1, 2, 1]) == 1


def test_macro_f1_counts_a_never_predicted_class_as_zero():
    result = metrics.main_task_metrics([0, 0, 1, 1], [0, 0, 0, 0], n_classes=3)
    # class 0: P = 0.5, R = 1 -> F1 = 2/3; classes 1 and 2 -> 0.
    assert result == {"accuracy": 0.5, "macro_f1": pytest.approx(2 / 9), "n": 4}


def test_accuracy_per_value_is_accuracy_within_each_true_value():
    # DPNR Table 5 on a hand-made entity: 3 documents without it (2 right), 1 with it (missed); value 2 is
    # never the truth, so its accuracy is undefined (None), not 0.
    y_true = np.array([0, 0, 0, 1])
    y_pred = np.array([0, 1, 0, 0])
    assert metrics.accuracy_per_value(y_true, y_pred, 3) == [pytest.approx(2 / 3), 0.0, None]


@pytest.mark.parametrize("seed", range(5))
def test_numpy_metrics_equal_scikit_learns(seed):
    from sklearn.metrics import accuracy_score, f1_score, recall_score

    rng = np.random.default_rng(seed)
    y_true, y_pred = rng.integers(0, 4, 60), rng.integers(0, 3, 60)  # class 3 is never predicted
    assert metrics.accuracy(y_true, y_pred) == pytest.approx(accuracy_score(y_true, y_pred))
    assert metrics.macro_f1(y_true, y_pred) == pytest.approx(f1_score(y_true, y_pred, average="macro", zero_division=0))
    assert metrics.macro_f1(y_true, y_pred, labels=[0, 1, 2, 3, 4]) == pytest.approx(
        f1_score(y_true, y_pred, labels=[0, 1, 2, 3, 4], average="macro", zero_division=0))
    recalls = recall_score(y_true, y_pred, labels=[0, 1, 2, 3, 4], average=None, zero_division=0)
    assert metrics.accuracy_per_value(y_true, y_pred, 5) == pytest.approx([*recalls[:4], None])
    presence_true, presence_pred = rng.integers(0, 2, (60, 3)), rng.integers(0, 2, (60, 3))
    assert metrics.entity_micro_f1(presence_true, presence_pred) == pytest.approx(
        f1_score(presence_true, presence_pred, average="micro"))


def test_entity_micro_f1_of_a_single_entity_is_the_f1_of_its_presence():
    # scikit-learn reads one 0/1 column as a binary target and micro-averages both classes (= accuracy);
    # presence F1 counts the present class only, as for several entities.
    true, pred = np.array([1, 1, 0, 0, 0, 0]), np.array([1, 0, 1, 0, 0, 0])
    assert metrics.entity_micro_f1({"e": true}, {"e": pred}) == pytest.approx(2 * 1 / (2 + 2))
    assert metrics.entity_micro_f1({"e": np.zeros(4)}, {"e": np.zeros(4)}) == metrics.ENTITY_F1_WHEN_UNDEFINED
