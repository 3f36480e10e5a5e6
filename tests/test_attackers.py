"""Fresh attackers on released representations: they find what is there, and only what is there."""

from __future__ import annotations

import json

import numpy as np
import pytest

from privtext.attack.attackers import ATTACKERS, run_attacks

ALL = sorted(ATTACKERS)
SIZES = {"train": 1200, "dev": 400, "test": 400}


def _data(seed: int = 0, dims: int = 8):
    """Coordinate 0 decides ``leaked`` (kept away from the threshold); ``hidden`` is independent noise
    with a 70 % majority class."""
    rng = np.random.default_rng(seed)
    released, Z = {}, {}
    for split, n in SIZES.items():
        leaked = rng.integers(0, 2, n)
        X = rng.normal(size=(n, dims))
        X[:, 0] = np.where(leaked == 1, 1.0, -1.0) * rng.uniform(1.0, 2.0, n)
        released[split] = X
        Z[split] = {"leaked": leaked, "hidden": (rng.random(n) < 0.3).astype(int)}
    return released, Z


def _without_timing(result: dict) -> dict:
    if isinstance(result, dict):
        return {k: _without_timing(v) for k, v in result.items() if k != "seconds"}
    return result


def test_every_attacker_recovers_an_attribute_that_is_a_function_of_a_coordinate():
    released, Z = _data()
    result = run_attacks(released, Z, {"leaked": "demographic"}, ALL, seed=1)
    for name in ALL:
        assert result["attackers"][name]["attributes"]["leaked"]["accuracy"] >= 0.98, name


def test_every_attacker_is_near_the_majority_rate_on_pure_noise():
    released, Z = _data()
    result = run_attacks(released, Z, {"hidden": "demographic"}, ALL, seed=1)
    for name in ALL:
        scores = result["attackers"][name]["attributes"]["hidden"]
        assert abs(scores["accuracy"] - scores["majority_rate"]) <= 0.08, (name, scores)


def test_majority_rate_uses_the_train_majority_class_on_test():
    released, Z = _data()
    Z["train"]["hidden"] = np.ones(SIZES["train"], dtype=int)  # train majority becomes 1
    result = run_attacks(released, Z, {"hidden": "demographic"}, ["linear"], seed=1)
    scores = result["attackers"]["linear"]["attributes"]["hidden"]
    assert scores["majority_class"] == 1
    assert scores["majority_rate"] == pytest.approx(np.mean(Z["test"]["hidden"] == 1))


def test_single_class_training_attribute_predicts_that_class():
    released, Z = _data()
    for split in ("train", "dev"):
        Z[split]["hidden"] = np.zeros(SIZES[split], dtype=int)
    result = run_attacks(released, Z, {"hidden": "demographic"}, ALL, seed=1)
    for name in ALL:
        scores = result["attackers"][name]["attributes"]["hidden"]
        assert scores["single_class"] and scores["n_classes_train"] == 1
        assert set(result["attackers"][name]["predictions"]["hidden"]) == {0}
        assert scores["accuracy"] == pytest.approx(np.mean(Z["test"]["hidden"] == 0))


def test_attacks_are_deterministic_for_a_seed():
    released, Z = _data()
    kinds = {"leaked": "demographic", "hidden": "demographic"}
    first = run_attacks(released, Z, kinds, ALL, seed=3)
    second = run_attacks(released, Z, kinds, ALL, seed=3)
    assert _without_timing(first) == _without_timing(second)


def test_sklearn_mlp_attacker_never_reads_the_train_split():
    released, Z = _data()
    kinds = {"leaked": "demographic", "hidden": "demographic"}
    clean = run_attacks(released, Z, kinds, ["sklearn_mlp"], seed=1)["attackers"]["sklearn_mlp"]
    rng = np.random.default_rng(99)
    released["train"] = rng.normal(scale=1e3, size=released["train"].shape)
    Z["train"] = {a: 1 - labels for a, labels in Z["train"].items()}
    poisoned = run_attacks(released, Z, kinds, ["sklearn_mlp"], seed=1)["attackers"]["sklearn_mlp"]
    assert clean["predictions"] == poisoned["predictions"]
    for attribute in kinds:
        for key in ("accuracy", "macro_f1", "n_train", "details"):
            assert clean["attributes"][attribute][key] == poisoned["attributes"][attribute][key]
    assert clean["config"]["fit_split"] == "dev"


def test_max_train_caps_the_attackers_training_examples_and_is_recorded():
    released, Z = _data()
    result = run_attacks(released, Z, {"leaked": "demographic"}, ["linear", "sklearn_mlp"], seed=1, max_train=150)
    assert result["settings"]["max_train"] == 150
    assert result["attackers"]["linear"]["attributes"]["leaked"]["n_train"] == 150
    assert result["attackers"]["sklearn_mlp"]["attributes"]["leaked"]["n_train"] == 150


def test_entity_attributes_report_micro_f1_privacy_and_result_is_json():
    released, Z = _data()
    kinds = {"leaked": "entity", "hidden": "entity"}
    result = run_attacks(released, Z, kinds, ["linear"], seed=1)
    linear = result["attackers"]["linear"]
    assert linear["empirical_privacy"]["entity"] == pytest.approx(1 - linear["entity_micro_f1"])
    assert "demographic" not in linear["empirical_privacy"]
    assert len(linear["predictions"]["leaked"]) == SIZES["test"]
    json.dumps(result)


def test_unknown_attacker_is_rejected_by_name():
    released, Z = _data()
    with pytest.raises(ValueError, match="'svm'"):
        run_attacks(released, Z, {"leaked": "demographic"}, ["svm"], seed=1)


def test_attacker_options_override_defaults_and_are_recorded():
    released, Z = _data()
    options = {"linear": {"c_grid": (1.0,)}}
    result = run_attacks(released, Z, {"leaked": "demographic"}, ["linear"], seed=1, attacker_options=options)
    assert result["attackers"]["linear"]["config"]["c_grid"] == [1.0]
    assert result["attackers"]["linear"]["attributes"]["leaked"]["details"]["C"] == 1.0
    with pytest.raises(ValueError, match="bad options"):
        run_attacks(released, Z, {"leaked": "demographic"}, ["linear"], seed=1, attacker_options={"linear": {"k": 1}})


def test_linear_attacker_extends_its_grid_past_an_edge_that_wins():
    from privtext.attack.attackers import AttackData, LinearAttacker

    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 5))
    y = (X[:, 0] > 0).astype(np.int64)  # separable: dev accuracy keeps rising as regularisation weakens
    data = AttackData(X_fit=X[:200], y_fit=y[:200], X_select=X[200:300], y_select=y[200:300], X_test=X[300:])
    _, info = LinearAttacker(c_grid=(0.001, 0.01)).fit_predict(data, seed=0)
    assert info["C"] > 0.01  # the winning edge of the grid was not the end of the search
    assert set(info["dev_accuracy_per_C"]) > {"0.001", "0.01"}
