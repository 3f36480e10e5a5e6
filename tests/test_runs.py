"""One grid point on files, without Snakemake: train, attack, fairness, MDL; determinism; output schemas."""

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from conftest import without_timings
from privtext.report.aggregate import measures_table, runs_table
from privtext.plan.grid import GridPoint
from privtext.jobs.runs import TrainJob, attack_grid_point, fairness_grid_point, mdl_grid_point
from privtext.jobs.train_job import run_grid_point


def _train(root, features, out, method="federate", params=None, seed=5, settings=None):
    point = GridPoint.of("demo", "bow", method, params if params is not None else {"epsilon": 2.0, "lambda": 1.0},
                         seed=seed)
    return run_grid_point(point, TrainJob(data_dir=root / "data", out_dir=out, features=features,
                                          settings={"epochs": 5, **(settings or {})}))


def test_training_is_deterministic_for_a_seed(demo_point, tmp_path):
    root, features = demo_point
    first = _train(root, features, tmp_path / "a")
    second = _train(root, features, tmp_path / "b")
    for key in ("dev", "test", "history", "epsilon_effective"):
        assert without_timings(first[key]) == without_timings(second[key])
    assert np.array_equal(np.load(tmp_path / "a/released_test.npy"), np.load(tmp_path / "b/released_test.npy"))


def test_metrics_record_both_epsilons_and_provenance(demo_point, tmp_path):
    root, features = demo_point
    result = _train(root, features, tmp_path, method="dpnr", params={"epsilon": 0.5})
    assert result["epsilon_nominal"] == 0.5
    assert result["epsilon_effective"] == pytest.approx(0.5 * result["representation_dim"])
    saved = json.loads((tmp_path / "metrics.json").read_text())
    assert saved["versions"]["torch"] and saved["data_split_manifest_sha256"]


def test_attack_fairness_and_mdl_outputs_feed_the_tables(demo_point, tmp_path):
    root, features = demo_point
    # FEDERATE's own batch (5 epochs of few steps): the planted cue is still in the representation to measure
    _train(root, features, tmp_path, method="nonpriv", params={}, settings={"min_steps_per_epoch": 1})
    attack = attack_grid_point(data_dir=root / "data", run_dir=tmp_path, out_path=tmp_path / "attack.json",
                               attackers=["linear"], seed=5, max_train=None)
    assert set(attack["attackers"]["linear"]["attributes"]) == {"strong", "weak"}
    fairness = fairness_grid_point(data_dir=root / "data", run_dir=tmp_path, out_path=tmp_path / "fairness.json")
    assert set(fairness) == {"dev", "test", "seconds"}
    mdl = mdl_grid_point(data_dir=root / "data", run_dir=tmp_path, out_path=tmp_path / "mdl.json",
                         split="train", max_examples=None, probe="linear", seed=5)
    strong, weak = mdl["attributes"]["strong"], mdl["attributes"]["weak"]
    assert strong["kbits"] < weak["kbits"] and strong["kbits"] < 0.8 * strong["uniform_kbits"]  # the strong cue compresses
    runs = runs_table([tmp_path])
    assert len(runs) == 2 and set(runs["attribute"]) == {"strong", "weak"}
    measures = measures_table([tmp_path])
    assert {"accuracy", "attack_accuracy", "fairness", "mdl_kbits", "subgroup_accuracy",
            "attack_subgroup_accuracy"} <= set(measures["measure"])
    # a study that asks for fairness only gets no MDL rows, though this folder has mdl.json
    fairness_only = set(measures_table([tmp_path], ["fairness"])["measure"])
    assert "fairness" in fairness_only and not {m for m in fairness_only if m.startswith("mdl_")}
    # the attacker's accuracy within each value, named by the dataset's value names, averages to its accuracy
    per_value = measures[measures["measure"] == "attack_subgroup_accuracy"].set_index(["attribute", "group"])["value"]
    assert set(per_value.loc["strong"].index) == {"teen", "adult"}
    z_test = pd.read_parquet(root / "data" / "test.parquet")["z_strong"].to_numpy()
    weights = np.bincount(z_test, minlength=2) / len(z_test)
    expected = attack["attackers"]["linear"]["attributes"]["strong"]["accuracy"]
    assert per_value.loc["strong"].loc[["teen", "adult"]].to_numpy() @ weights == pytest.approx(expected)


def test_a_stored_attack_is_published_only_for_the_same_settings_releases_and_labels(tmp_path):
    import numpy as np

    from privtext.jobs.attack_cache import attack_keys, store, stored

    meta = {"private_attributes": {"strong": ["a", "b"]}, "attribute_kinds": {"strong": "binary"}}
    labels = {split: {"strong": np.array([0, 1, 0])} for split in ("train", "dev", "test")}

    def keys(attackers=("linear",), seed=10, threads=1, labels=labels):
        return attack_keys(tmp_path, attackers=list(attackers), seed=seed, max_train=None, threads=threads,
                           device="cpu", labels=labels, meta=meta)

    for split in ("train", "dev", "test"):
        np.save(tmp_path / f"released_{split}.npy", np.ones((3, 2), dtype=np.float32))
    key = keys()
    store(tmp_path, {"attributes": (key["attributes"], {"attackers": {}})})
    assert stored(tmp_path, keys()) == {"attributes": {"attackers": {}}}
    assert "attributes" not in stored(tmp_path, keys(attackers=["mlp"]))
    assert "attributes" not in stored(tmp_path, keys(seed=20))
    assert "attributes" not in stored(tmp_path, keys(threads=2))  # the count moves torch's numbers
    assert "attributes" not in stored(tmp_path, keys(labels={**labels, "test": {"strong": np.array([1, 1, 0])}}))
    # attacks stored by older code (format 3: `linear` was a numpy port) are never published
    store(tmp_path, {"attributes": ({**key["attributes"], "format": 3}, {"attackers": {}})})
    assert stored(tmp_path, keys()) == {}
    store(tmp_path, {"attributes": (key["attributes"], {"attackers": {}})})
    np.save(tmp_path / "released_test.npy", np.zeros((3, 2), dtype=np.float32))  # retrained: other releases
    assert stored(tmp_path, keys()) == {}
    np.save(tmp_path / "released_test.npy", np.ones((3, 2), dtype=np.float32))
    # a part is only published under its own key
    assert stored(tmp_path, {"inversion": key["attributes"]}) == {}


def test_a_train_job_with_the_claims_attackers_imports_neither_scikit_learn_scipy_pandas_nor_dynamo(demo_point, tmp_path):
    """The fixed cost of a cold train job (issue 12; a SLURM job does not fork from the warm interpreter): the job
    with the attackers the claims read never loads scikit-learn and scipy (0.6 to 2.5 s), pandas (~0.5 s; Parquet
    goes through privtext.standins.parquet) or torch._dynamo (~0.7 s). Only the `linear` attacker imports
    scikit-learn."""
    import subprocess
    import sys

    root, features = demo_point
    job = f"""
import sys
from pathlib import Path
from privtext.plan.grid import GridPoint
from privtext.jobs.runs import TrainJob
from privtext.jobs.train_job import run_grid_point
run_grid_point(GridPoint.of("demo", "bow", "federate", {{"epsilon": 2.0, "lambda": 1.0}}, seed=5),
               TrainJob(data_dir=Path({str(root / 'data')!r}), features={ {s: str(p) for s, p in features.items()}!r},
                        out_dir=Path({str(tmp_path)!r}), settings={{"epochs": 2}},
                        attack={{"attackers": ["mlp", "sklearn_mlp"], "max_train": None, "device": "cpu"}}))
print(sorted(m for m in ("sklearn", "scipy", "pandas", "torch._dynamo", "torch") if m in sys.modules))
"""
    result = subprocess.run([sys.executable, "-c", job], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-3000:]
    assert (tmp_path / "attack_precomputed.json").exists()  # the attackers did run in this process
    assert result.stdout.strip().splitlines()[-1] == "['torch']"


def test_attack_json_holds_the_epsilon_ceilings_and_the_word_recovery(demo_point, tmp_path):
    from privtext.attack.inversion import VocabularySettings, write_word_sets
    from privtext.privacy.ceiling import above_ceiling_p_value, attack_ceiling

    root, features = demo_point
    trained = _train(root, features, tmp_path, method="dpnr", params={"epsilon": 0.5})
    common = dict(data_dir=root / "data", run_dir=tmp_path, out_path=tmp_path / "attack.json", attackers=["linear"],
                  seed=5, max_train=None)
    assert attack_grid_point(**common)["inversion"] == {"status": "not measured: attack.inversion.attacker is null"}
    attack = attack_grid_point(**common, word_attacker="ridge", words=None)  # what a dataset without text gets
    assert attack["inversion"] == {"status": "not applicable: no text"}
    scores = attack["attackers"]["linear"]["attributes"]["strong"]
    z_test = pd.read_parquet(root / "data/test.parquet")["z_strong"].to_numpy()
    counts = np.bincount(z_test, minlength=2)
    assert scores["test_class_counts"] == counts.tolist()
    assert scores["ceiling_nominal"] == attack_ceiling(0.5, counts)
    assert scores["ceiling_effective"] == attack_ceiling(trained["epsilon_effective"], counts)
    correct = round(scores["accuracy"] * len(z_test))
    assert scores["p_above_nominal_ceiling"] == above_ceiling_p_value(correct, len(z_test), scores["ceiling_nominal"])

    texts = {s: pd.read_parquet(root / f"data/{s}.parquet")["text"].tolist() for s in ("train", "dev", "test")}
    write_word_sets(texts, VocabularySettings(vocabulary_size=50, min_df=2), tmp_path / "words.npz")
    words = attack_grid_point(**common, word_attacker="ridge", words=tmp_path / "words.npz")["inversion"]
    assert words["status"] == "measured" and 0 <= words["f1"] <= 1 and words["n_words"] <= 50
    assert words["advantage"] == pytest.approx(words["f1"] - words["baseline"]["f1"])

    _train(root, features, tmp_path / "nonpriv", method="nonpriv", params={})  # no privacy layer: no ceiling
    plain = attack_grid_point(**{**common, "run_dir": tmp_path / "nonpriv", "out_path": tmp_path / "nonpriv.json"})
    assert plain["attackers"]["linear"]["attributes"]["strong"]["ceiling_nominal"] is None


def test_runs_table_flags_attackers_above_a_ceiling_after_holm_over_its_rows(tmp_path):
    def point(name: str, p_nominal: float | None, inversion: dict | None) -> str:
        folder = tmp_path / name
        folder.mkdir()
        split = {"accuracy": 0.8, "macro_f1": 0.8, "n": 100}
        epsilon = None if p_nominal is None else 1.0
        (folder / "metrics.json").write_text(json.dumps({
            "dataset": "demo", "encoder": "minilm", "method": "dpnr" if epsilon else "nonpriv", "seed": 10,
            "privacy_layer": None, "epsilon_nominal": epsilon, "epsilon_effective": epsilon, "representation_dim": 4,
            "params": {"mu": 0, "name": name}, "dev": split, "test": split, "seconds": 1.0}))
        scores = {"kind": "demographic", "accuracy": 0.9, "macro_f1": 0.9, "majority_rate": 0.6,
                  "ceiling_nominal": None if epsilon is None else 0.73, "ceiling_effective": None if epsilon is None else 0.73,
                  "p_above_nominal_ceiling": p_nominal, "p_above_effective_ceiling": p_nominal}
        attack = {"attackers": {"linear": {"attributes": {"strong": scores}}}}
        (folder / "attack.json").write_text(json.dumps(attack | ({"inversion": inversion} if inversion else {})))
        return folder

    measured = {"status": "measured", "precision": 0.5, "recall": 0.25, "f1": 1 / 3, "advantage": 0.1,
                "baseline": {"f1": 1 / 3 - 0.1}}
    # Holm at 5% over three p-values: 0.001 <= 0.05/3 is flagged, then 0.03 > 0.05/2 stops.
    folders = [point("a", 0.001, measured), point("b", 0.03, {"status": "not applicable: no text"}),
               point("c", 0.04, None), point("d", None, measured)]
    table = runs_table(folders).set_index("param_name")
    assert table["above_nominal_ceiling"].to_dict() == {"a": True, "b": False, "c": False, "d": False}
    assert table["above_effective_ceiling"].to_dict() == {"a": True, "b": False, "c": False, "d": False}
    assert np.isnan(table.loc["d", "ceiling_nominal"])
    assert table.loc["a", ["inversion_f1", "inversion_baseline_f1", "inversion_advantage"]].tolist() == \
        pytest.approx([1 / 3, 1 / 3 - 0.1, 0.1])
    assert table.loc["b", "inversion_status"] == "not applicable: no text" and np.isnan(table.loc["b", "inversion_f1"])
    assert table.loc["c", "inversion_status"].startswith("not measured")


def test_identification_above_its_ceiling_is_flagged_once_per_point_after_holm(tmp_path):
    def point(name: str, p_nominal: float | None) -> Path:
        folder = tmp_path / name
        folder.mkdir()
        split = {"accuracy": 0.8, "macro_f1": 0.8, "n": 100}
        (folder / "metrics.json").write_text(json.dumps({
            "dataset": "demo", "encoder": "minilm", "method": "dpnr", "seed": 10, "privacy_layer": None,
            "epsilon_nominal": 1.0, "epsilon_effective": 1.0, "representation_dim": 4,
            "params": {"mu": 0, "name": name}, "dev": split, "test": split, "seconds": 1.0}))
        scores = {"kind": "demographic", "accuracy": 0.6, "macro_f1": 0.6, "majority_rate": 0.6}
        rates = {"top1": 0.5, "top1_ceiling_nominal": 0.027} | (
            {} if p_nominal is None else {"top1_p_above_ceiling_nominal": p_nominal})
        identification = {"status": "measured", "white_box": {"N100": rates}, "features_only": {"N100": {}}}
        # two attackers: the point's one test appears on both rows and must count once
        (folder / "attack.json").write_text(json.dumps({
            "attackers": {"linear": {"attributes": {"strong": scores}}, "mlp": {"attributes": {"strong": scores}}},
            "identification": identification}))
        return folder

    # Holm at 5% over the two points: 0.001 <= 0.05/2, then 0.03 <= 0.05. Over the four rows 0.03 > 0.05/2 would
    # stop it.
    table = runs_table([point("a", 0.001), point("b", 0.03), point("c", None)])
    flags = table.groupby("param_name")["identification_above_nominal_ceiling"].agg(set).to_dict()
    assert flags == {"a": {True}, "b": {True}, "c": {False}}
    assert table["identification_white_box_top1_ceiling_nominal"].eq(0.027).all()
