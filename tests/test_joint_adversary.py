"""The jointly trained attacker (CAPE's Table 3 measure): a method's own adversaries, or the observers of a
method without any, scored from its releases beside the fresh attackers."""

import numpy as np
import pandas as pd
import pytest

from privtext.jobs.runs import TrainJob, attack_grid_point
from privtext.jobs.train_job import run_grid_point
from privtext.methods import build_method
from privtext.methods.base import Split
from privtext.plan.grid import GridPoint
from privtext.report.aggregate import measures_table


def _splits(root, features):
    frames = {s: pd.read_parquet(root / "data" / f"{s}.parquet") for s in ("train", "dev", "test")}
    return {s: Split(np.load(features[s]), frames[s]["y"].to_numpy(np.int64),
                     {a: frames[s][f"z_{a}"].to_numpy(np.int64) for a in ("strong", "weak")}) for s in frames}


def _fitted(splits, observers: bool):
    sizes = {a: int(max(s.Z[a].max() for s in splits.values())) + 1 for a in ("strong", "weak")}
    method = build_method("cape_base", {"observers": observers, "dropout": 0.0, "epochs": 3, "min_epochs": 1,
                                        "max_epochs_factor": 1, "patience": None},
                          input_dim=splits["train"].X.shape[1], n_classes=int(splits["train"].y.max()) + 1,
                          attribute_sizes=sizes, seed=7)
    method.fit(splits["train"], splits["dev"])
    return method


def test_an_observer_learns_the_attribute_and_never_shapes_the_release(demo_point):
    """Without dropout, the only randomness an observer could take from the task's side, a model with observers
    releases bit for bit what the same seed releases without them; its observer still reads the planted cue."""
    splits = _splits(*demo_point)
    watched, plain = _fitted(splits, True), _fitted(splits, False)
    test = splits["test"]
    assert np.array_equal(watched.release(test.X), plain.release(test.X))
    assert np.array_equal(watched.predict(test.X), plain.predict(test.X))
    assert plain.adversary_predictions(plain.release(test.X)) == {}
    guessed = watched.adversary_predictions(watched.release(test.X))
    assert set(guessed) == {"strong", "weak"}
    majority = np.bincount(test.Z["strong"]).max() / len(test.Z["strong"])
    assert np.mean(guessed["strong"] == test.Z["strong"]) > majority + 0.1


def _train(root, features, out, method, params):
    point = GridPoint.of("demo", "bow", method, params, seed=5)
    return run_grid_point(point, TrainJob(data_dir=root / "data", out_dir=out, features=features,
                                          settings={"epochs": 5, "min_steps_per_epoch": 1}))


def test_the_attack_job_scores_the_joint_adversary_from_the_train_jobs_predictions(demo_point, tmp_path):
    root, features = demo_point
    _train(root, features, tmp_path, "federate", {"epsilon": 2.0, "lambda": 1.0})
    written = pd.read_parquet(tmp_path / "predictions.parquet")
    assert {"adversary_strong", "adversary_weak"} <= set(written.columns)
    attack = attack_grid_point(data_dir=root / "data", run_dir=tmp_path, out_path=tmp_path / "attack.json",
                               attackers=["linear"], seed=5, max_train=None)
    assert set(attack["attackers"]) == {"linear", "joint"}
    joint = attack["attackers"]["joint"]["attributes"]["strong"]
    z_test = pd.read_parquet(root / "data/test.parquet")["z_strong"].to_numpy()
    guessed = written.loc[written["split"] == "test", "adversary_strong"].to_numpy()
    assert joint["accuracy"] == pytest.approx(np.mean(guessed == z_test))
    assert joint["n_test"] == len(z_test) and joint["ceiling_nominal"] is not None  # ε ceilings as for any attacker
    rows = measures_table([tmp_path])
    assert set(rows.loc[rows["measure"] == "attack_accuracy", "attacker"]) == {"linear", "joint"}

    _train(root, features, tmp_path / "plain", "nonpriv", {})  # neither adversary nor observer: no joint attacker
    plain = attack_grid_point(data_dir=root / "data", run_dir=tmp_path / "plain",
                              out_path=tmp_path / "plain/attack.json", attackers=["linear"], seed=5, max_train=None)
    assert set(plain["attackers"]) == {"linear"}


def test_predictions_that_do_not_follow_the_test_split_fail_naming_the_file(demo_point, tmp_path):
    from privtext.attack.joint import joint_adversary
    from privtext.standins.parquet import write_columns

    write_columns(tmp_path / "predictions.parquet", {"id": np.array(["b", "a"], dtype=object),
                                                     "split": np.array(["test", "test"], dtype=object),
                                                     "adversary_strong": np.array([0, 1])})
    write_columns(tmp_path / "test.parquet", {"id": np.array(["a", "b"], dtype=object)})
    labels = {s: {"strong": np.array([0, 1])} for s in ("train", "dev", "test")}
    with pytest.raises(ValueError, match="predictions.parquet.*do not follow"):
        joint_adversary(tmp_path / "predictions.parquet", tmp_path / "test.parquet", labels,
                        {"strong": "demographic"}, 2)
