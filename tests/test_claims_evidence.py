"""The claims' per-example measures under bootstrap weights: with integer weights, each weighted measure equals
the project's own metric (privtext.measures.metrics, privtext.measures.fairness) on the test set with every example repeated as
often as its weight says. That holds the weighted code to the code that wrote the saved measures."""

from __future__ import annotations

import json
from types import SimpleNamespace

import numpy as np
import pytest

from privtext.measures import fairness, metrics
from privtext.claims.evidence import ExampleEvidence, measure_replicates
from privtext.standins.parquet import write_columns

N, CLASSES = 300, 3
META = {"private_attributes": {"gender": ["m", "f"], "age": ["young", "mid", "old"],
                               "entity1": ["absent", "present"], "entity2": ["absent", "present"]},
        "attribute_kinds": {"gender": "demographic", "age": "demographic", "entity1": "entity", "entity2": "entity"},
        "label_names": ["a", "b", "c"]}


@pytest.fixture(scope="module")
def records(tmp_path_factory) -> dict:
    rng = np.random.default_rng(0)
    root = tmp_path_factory.mktemp("evidence")
    data, run = root / "data", root / "run"
    data.mkdir(), run.mkdir()
    ids = np.arange(N).astype(str).astype(object)
    y = rng.integers(0, CLASSES, N)
    z = {"gender": rng.integers(0, 2, N), "age": rng.integers(0, 3, N), "entity1": (rng.random(N) < 0.2).astype(int),
         "entity2": (rng.random(N) < 0.1).astype(int)}
    write_columns(data / "test.parquet", {"id": ids, "y": y, **{f"z_{a}": v for a, v in z.items()}})
    y_pred = np.where(rng.random(N) < 0.7, y, rng.integers(0, CLASSES, N))
    write_columns(run / "predictions.parquet", {"id": ids, "split": np.full(N, "test", dtype=object),
                                                 "y_true": y, "y_pred": y_pred})
    guesses = {a: np.where(rng.random(N) < 0.6, v, rng.integers(0, 2 if a != "age" else 3, N)) for a, v in z.items()}
    attack = {"attackers": {"mlp": {"predictions": {a: g.tolist() for a, g in guesses.items()},
                                    "attributes": {a: {"majority_class": 0} for a in z}}}}
    (run / "attack.json").write_text(json.dumps(attack))
    evidence = ExampleEvidence({"toy": data}, {"toy": META}, n_resamples=30, seed=1)
    return {"evidence": evidence, "run": str(run), "y": y, "y_pred": y_pred, "z": z, "guesses": guesses}


def _replicates(records: dict, measure: str, attribute: str = "", attacker: str = "", group: str = "") -> np.ndarray:
    evidence = records["evidence"]
    row = SimpleNamespace(dataset="toy", run_dir=records["run"], measure=measure, split="test", attribute=attribute,
                          attacker=attacker, group=group, value=np.nan)
    test = evidence.test_set("toy")
    return measure_replicates(row, test, evidence.run(records["run"])), test.weights


def _repeated(weights_row: np.ndarray, *arrays: np.ndarray) -> list[np.ndarray]:
    index = np.repeat(np.arange(N), weights_row.astype(int))
    return [a[index] for a in arrays]


@pytest.mark.parametrize("attribute", ["gender", "age"])
def test_fairness_and_accuracy_gap_match_the_fairness_module_on_repeated_examples(records, attribute):
    fair, weights = _replicates(records, "fairness", attribute)
    gap, _ = _replicates(records, "accuracy_gap", attribute)
    for b in (0, 1, 7, 30):
        y, y_pred, groups = _repeated(weights[b], records["y"], records["y_pred"], records["z"][attribute])
        assert fair[b] == pytest.approx(fairness.grms(y, y_pred, groups, range(CLASSES)), abs=1e-5)
        assert gap[b] == pytest.approx(fairness.subgroup_accuracy(y, y_pred, groups)["gap"], abs=1e-5)


def test_attacker_measures_match_the_metrics_module_on_repeated_examples(records):
    privacy, weights = _replicates(records, "empirical_privacy_demographic", attacker="mlp")
    entity, _ = _replicates(records, "empirical_privacy_entity", attacker="mlp")
    present, _ = _replicates(records, "attack_subgroup_accuracy", "entity1", "mlp", "present")
    accuracy, _ = _replicates(records, "accuracy")
    z, guesses = records["z"], records["guesses"]
    for b in (0, 3, 30):
        rep = lambda *a: _repeated(weights[b], *a)  # noqa: E731
        accuracies = {a: metrics.accuracy(*rep(z[a], guesses[a])) for a in ("gender", "age")}
        assert privacy[b] == pytest.approx(metrics.demographic_privacy(accuracies), abs=1e-5)
        truth = {a: rep(z[a])[0] for a in ("entity1", "entity2")}
        assert entity[b] == pytest.approx(
            metrics.entity_privacy(truth, {a: rep(guesses[a])[0] for a in truth}), abs=1e-5)
        per_value = metrics.accuracy_per_value(*rep(z["entity1"], guesses["entity1"]), 2)
        assert present[b] == pytest.approx(per_value[1], abs=1e-5)
        assert accuracy[b] == pytest.approx(metrics.accuracy(*rep(records["y"], records["y_pred"])), abs=1e-5)


def test_a_saved_value_that_the_records_do_not_give_is_refused(records):
    row = SimpleNamespace(dataset="toy", run_dir=records["run"], measure="accuracy", split="test", attribute="",
                          attacker="", group="", value=0.123)
    with pytest.raises(ValueError, match="recomputes to .* saved measure is 0.123"):
        records["evidence"].replicates(row)


def test_measures_without_test_sampling_come_back_constant(records):
    row = SimpleNamespace(dataset="toy", run_dir=records["run"], measure="mdl_kbits", split="train", attribute="gender",
                          attacker="", group="", value=4.2)
    assert np.all(records["evidence"].replicates(row) == 4.2)


@pytest.mark.parametrize("attribute", ["gender", "age"])
def test_attacker_macro_f1_matches_the_metrics_module_on_repeated_examples(records, attribute):
    """CAPE's attacker measure (Table 3's F1): per resample, the project's macro-F1 over the classes of the test
    set as drawn, on the examples repeated as their weights say."""
    replicates, weights = _replicates(records, "attack_macro_f1", attribute, "mlp")
    truth, guess = records["z"][attribute], records["guesses"][attribute]
    classes = np.union1d(truth, guess)
    assert replicates[0] == pytest.approx(metrics.macro_f1(truth, guess))
    for r in range(1, 6):
        t, g = _repeated(weights[r], truth, guess)
        assert replicates[r] == pytest.approx(metrics.macro_f1(t, g, labels=classes), abs=1e-6)


def test_one_class_f1_is_scikit_learns_binary_f1_and_needs_no_saved_value(records):
    """CAPE's Table 3 F1 on a binary attribute (docs/claims.md, "The F1 of CAPE's Table 3"): per resample,
    scikit-learn's default f1_score (pos_label=1) on the repeated examples. No job saves it: replicates() takes
    the row without a value, and refuses an attribute of more than two values."""
    from sklearn.metrics import f1_score

    replicates, weights = _replicates(records, "attack_class1_f1", "gender", "mlp")
    truth, guess = records["z"]["gender"], records["guesses"]["gender"]
    assert replicates[0] == pytest.approx(f1_score(truth, guess))
    for r in range(1, 6):
        assert replicates[r] == pytest.approx(f1_score(*_repeated(weights[r], truth, guess)), abs=1e-6)
    row = SimpleNamespace(dataset="toy", run_dir=records["run"], measure="attack_class1_f1", split="test",
                          attribute="gender", attacker="mlp", group="", value=np.nan)
    assert records["evidence"].replicates(row)[0] == pytest.approx(f1_score(truth, guess))
    with pytest.raises(ValueError, match="binary attributes"):
        _replicates(records, "attack_class1_f1", "age", "mlp")


def test_a_claim_reads_the_derived_f1_from_the_runs_of_its_saved_measure(records):
    import pandas as pd
    from sklearn.metrics import f1_score

    from privtext.claims.context import ClaimContext
    from privtext.report.artefacts.common import ArtefactInputs, prepare_measures

    rows = pd.DataFrame([{"study": "s", "dataset": "toy", "encoder": "minilm", "method": "cape_base",
                          "measure": "attack_accuracy", "split": "test", "attribute": "gender", "attacker": "mlp",
                          "group": "", "seed": seed, "value": 0.5, "run_dir": records["run"]} for seed in (10, 20)])
    inputs = ArtefactInputs(measures=prepare_measures(rows), metas={"toy": META})
    values, runs = ClaimContext(inputs, "toy", "no DP method", records["evidence"]).series(
        "cape_base", "attack_class1_f1", attribute="gender", attacker="mlp")
    assert set(values) == {10, 20} and runs == (records["run"],)
    assert values[10][0] == pytest.approx(f1_score(records["z"]["gender"], records["guesses"]["gender"]))
    # without per-example records nothing is derived: the part is left unjudged, not filled in
    assert ClaimContext(inputs, "toy", "no DP method").series("cape_base", "attack_class1_f1", attribute="gender",
                                                              attacker="mlp") == ({}, ())
