"""The papers' own baselines: DPNR's ADV (DPNR's architecture with an adversary) and one model per targeted
private variable for CAPE's adversarial methods (CAPE Table 3), from the study's grid to the trained model,
the run folder, metrics.json and the measures table."""

from __future__ import annotations

import json
import re
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
import torch

from conftest import demo_with_word_counts, run_snakemake
from privtext.data import BUILDERS, Quarantine, get_builder
from privtext.data.attributes import private_attribute_names
from privtext.jobs.runs import TrainJob, attack_grid_point
from privtext.jobs.train_job import run_grid_point
from privtext.methods import METHODS, Split, build_method
from privtext.plan.config import ConfigError, load_config
from privtext.plan.grid import GridPoint, shrink_study, study_points
from privtext.report.aggregate import measures_table
from privtext.report.artefacts.common import TARGET_COLUMN, pick, prepare_measures

torch.set_num_threads(1)
DEMO_ATTRIBUTES = ("strong", "weak")


def demo_names(dataset: str) -> tuple[str, ...]:
    return private_attribute_names(dataset, {})


def planted_split(n: int, seed: int) -> Split:
    """y (3 classes) in dims 0-2; a binary attribute planted strongly in dims 3-4, independent of y."""
    rng = np.random.default_rng(seed)
    y, planted = rng.integers(0, 3, n), rng.integers(0, 2, n)
    X = rng.standard_normal((n, 16)).astype(np.float32)
    X[np.arange(n), y] += 3.0
    X[:, 3:5] += (4.0 * planted - 2.0)[:, None]
    return Split(X, y, {"planted": planted})


# --- DPNR's ADV --------------------------------------------------------------------------------------------------

def test_dpnr_adv_is_dpnr_nonpriv_plus_one_adversary_per_attribute_and_no_noise_layer():
    spec, nonpriv = METHODS["dpnr_adv"], METHODS["dpnr_nonpriv"]
    assert spec.privacy_layer is None and spec.adversarial and spec.grid_params == ("lambda",)
    # DPNR's architecture and training, unchanged: every setting of dpnr_nonpriv has its value
    assert {k: spec.defaults[k] for k in nonpriv.defaults} == dict(nonpriv.defaults)
    assert spec.defaults["lambda"] == 1.0 and spec.defaults["lambda_schedule"] == "constant"

    sizes = {"gender": 2, "age": 3}
    adv = build_method("dpnr_adv", {}, input_dim=16, n_classes=4, attribute_sizes=sizes, seed=0).build_model(0)
    plain = build_method("dpnr_nonpriv", {}, input_dim=16, n_classes=4, attribute_sizes=sizes, seed=0).build_model(0)
    assert adv.privacy is None
    linear, activation, dropout = adv.encoder[0][0], adv.encoder[1], adv.encoder[2]
    assert (linear.in_features, linear.out_features) == (16, 16)  # tanh(Linear(h)), the input's size
    assert isinstance(activation, torch.nn.Tanh) and dropout.p == 0.1
    assert [type(m) for m in adv.classifier] == [torch.nn.Linear]  # DPNR's linear classifier
    # the same encoder and classifier tensors as DPNR's NON-PRIV, plus the adversaries' and nothing else
    adv_keys, plain_keys = set(adv.state_dict()), set(plain.state_dict())
    assert plain_keys < adv_keys and all(k.startswith("adversaries.") for k in adv_keys - plain_keys)
    assert {k: v.shape for k, v in adv.state_dict().items() if k in plain_keys} == {
        k: v.shape for k, v in plain.state_dict().items()}
    # one adversary per private attribute, on the 16-d representation, DPNR's attacker's width (512)
    assert adv.attributes == ("gender", "age")
    assert [ensemble.sizes for ensemble in adv.adversaries] == [[16, 512, 2], [16, 512, 3]]


def _adversary_cross_entropy(lam: float, train: Split, dev: Split) -> tuple[float, list[float]]:
    method = build_method("dpnr_adv", {"lambda": lam, "epochs": 3}, input_dim=16, n_classes=3,
                          attribute_sizes={"planted": 2}, seed=1)
    history = method.fit(train, dev)
    model = method._fitted()
    with torch.no_grad():
        loss = model.adversary_loss(torch.from_numpy(train.X), {"planted": torch.from_numpy(train.Z["planted"])})
    return float(loss), [epoch["lambda"] for epoch in history["epochs"]]


def test_gradient_reversal_makes_dpnr_adv_encoder_defeat_its_own_adversary():
    """With λ = 0 the adversary reads the planted attribute almost perfectly (cross-entropy near 0); with the
    reversal on, the encoder is trained against it and the same adversary, trained as long, is left near chance
    (ln 2 ≈ 0.69). λ is constant over the epochs."""
    train, dev = planted_split(600, 0), planted_split(300, 1)
    free, free_lambdas = _adversary_cross_entropy(0.0, train, dev)
    reversed_, lambdas = _adversary_cross_entropy(1.0, train, dev)
    assert free < 0.2 and reversed_ > 0.4 and reversed_ > 3 * free
    assert free_lambdas == [0.0] * len(free_lambdas) and lambdas == [1.0] * len(lambdas)


def test_the_reversal_layer_sends_minus_lambda_times_the_adversary_gradient_into_dpnr_adv_representation():
    method = build_method("dpnr_adv", {"lambda": 2.5}, input_dim=16, n_classes=3,
                          attribute_sizes={"planted": 2}, seed=0)
    model = method.build_model(0).eval()
    model.reversal.lambda_ = method.lambda_at(0)
    data = planted_split(64, 3)
    z = {"planted": torch.from_numpy(data.Z["planted"])}
    r = model.represent(torch.from_numpy(data.X)).detach().requires_grad_(True)
    (through_reversal,) = torch.autograd.grad(model._adversaries_loss(model.reversal(r), z), r)
    (plain,) = torch.autograd.grad(model._adversaries_loss(r, z), r)
    assert torch.allclose(through_reversal, -2.5 * plain) and plain.abs().sum() > 0


# --- one model per targeted variable: planning ------------------------------------------------------------------

CAPE_STUDY = {"seeds": [10], "methods": {
    "cape": {"epsilon": [0.1], "lambda": [1.0], "target": ["each"]},
    "cape_adv": {"lambda": [1.0], "target": ["each"]},
    "cape_base": {},
    "cape_dp": {"epsilon": [0.1]},
}}


def _points(study: dict, datasets=("demo",)) -> list[GridPoint]:
    return study_points(study, datasets=list(datasets), encoder_for=lambda d: "minilm", specs=METHODS,
                        attributes_for=demo_names)


def test_target_each_plans_one_point_per_attribute_whose_model_has_that_adversary_only():
    points = _points(CAPE_STUDY)
    assert [p.run_dir for p in points] == [
        "results/runs/demo/minilm/cape/mu~0/epsilon~0.1/lambda~1/target~strong/seed~10",
        "results/runs/demo/minilm/cape/mu~0/epsilon~0.1/lambda~1/target~weak/seed~10",
        "results/runs/demo/minilm/cape_adv/mu~0/lambda~1/target~strong/seed~10",
        "results/runs/demo/minilm/cape_adv/mu~0/lambda~1/target~weak/seed~10",
        "results/runs/demo/minilm/cape_base/mu~0/seed~10",  # no adversary: one model serves every variable
        "results/runs/demo/minilm/cape_dp/mu~0/epsilon~0.1/seed~10",
    ]
    sizes = {"strong": 2, "weak": 2}
    for point in points:
        hyperparameters = METHODS[point.method].resolve({}, point.grid_values)
        model = build_method(point.method, hyperparameters, input_dim=8, n_classes=2, attribute_sizes=sizes,
                             seed=0).build_model(0)
        assert model.attributes == ((point.target,) if point.target else ())
        assert point.target is None or hyperparameters["attributes"] == [point.target]


def test_without_target_the_folders_and_models_are_todays():
    study = {"seeds": [10], "methods": {"cape": {"epsilon": [0.1], "lambda": [1.0]}, "adv": {"lambda": [1.0]}}}
    points = _points(study)
    assert [p.run_dir for p in points] == [
        "results/runs/demo/minilm/cape/mu~0/epsilon~0.1/lambda~1/seed~10",
        "results/runs/demo/minilm/adv/mu~0/lambda~1/seed~10",
    ]
    assert points[0].grid_values == {"epsilon": 0.1, "lambda": 1} and points[0].target is None
    resolved = METHODS["cape"].resolve({}, points[0].grid_values)
    assert resolved["attributes"] is None  # adversaries on every private attribute, as before
    model = build_method("cape", resolved, input_dim=8, n_classes=2, attribute_sizes={"a": 2, "b": 3},
                         seed=0).build_model(0)
    assert model.attributes == ("a", "b")


def test_a_targeted_folder_round_trips_and_keeps_the_name_as_text():
    wildcards = SimpleNamespace(dataset="demo", encoder="minilm", method="cape_adv",
                                params="mu~0/lambda~1/target~7", seed="10")
    point = GridPoint.from_wildcards(wildcards)
    assert point.target == "7" and point.grid_values == {"lambda": 1, "target": "7"}  # not the number 7
    assert point.run_dir == "results/runs/demo/minilm/cape_adv/mu~0/lambda~1/target~7/seed~10"
    assert METHODS["cape_adv"].resolve({}, point.grid_values)["attributes"] == ["7"]


@pytest.mark.parametrize("methods, message", [
    ({"cape_dp": {"target": ["each"]}}, "not grid parameters of cape_dp"),  # no adversary to target
    ({"cape": {"target": ["gender"]}}, "not a private attribute of 'demo'"),
    ({"cape": {"target": ["../x"]}}, "not an attribute name"),
])
def test_a_target_that_cannot_be_planned_is_refused_naming_method_and_value(methods, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        _points({"seeds": [10], "methods": methods})


def test_the_config_schema_accepts_target_for_adversarial_methods_only_and_checks_the_names():
    config = load_config(overrides={"studies": {"s": {"datasets": ["demo"], "methods": {
        "cape": {"target": ["each"]}, "dpnr_adv": {"target": ["strong"]}}}}, "run_studies": ["s"]})
    assert config["studies"]["s"]["methods"]["cape"]["target"] == ["each"]
    with pytest.raises(ConfigError, match="target"):
        load_config(overrides={"studies": {"s": {"methods": {"cape": {"target": ["a/b"]}}}}, "run_studies": ["s"]})
    with pytest.raises(ConfigError, match="cape_base"):
        load_config(overrides={"studies": {"s": {"methods": {"cape_base": {"target": ["each"]}}}},
                               "run_studies": ["s"]})
    with pytest.raises(ValueError, match="no adversary"):
        METHODS["cape_dp"].resolve({}, {"target": "strong"})


def test_grid_shrink_keeps_every_targeted_attribute():
    study = {"seeds": [10, 20], "methods": {"cape": {"lambda": [0.1, 0.5, 1.0], "target": ["strong", "weak"]}}}
    assert shrink_study(study, 1, 1)["methods"]["cape"] == {"lambda": [0.1], "target": ["strong", "weak"]}


def test_declared_attribute_names_are_the_builders():
    for dataset in BUILDERS:  # every dataset can be planned per target
        assert private_attribute_names(dataset, {"n_entities": 3})
    assert private_attribute_names("ag", {"n_entities": 3}) == ("entity0", "entity1", "entity2")
    from privtext.data.ag import DPNR_N_ENTITIES, _entity_columns

    assert private_attribute_names("ag_dpnr") == tuple(_entity_columns(DPNR_N_ENTITIES)[0])
    built = get_builder("demo")({}, {**load_config()["demo"], "n_examples": 200}, 3, Quarantine())
    assert tuple(built.private_attributes) == private_attribute_names("demo") == DEMO_ATTRIBUTES
    with pytest.raises(ValueError, match="declares no private attribute names"):
        private_attribute_names("no_such_dataset")


# --- one model per targeted variable: the job, metrics.json and the measures table -------------------------------

@pytest.fixture(scope="module")
def demo_data(tmp_path_factory):
    """The demo dataset with bag-of-cue-word features (a fast stand-in for encoder features)."""
    root = tmp_path_factory.mktemp("targeted")
    _, features = demo_with_word_counts(root, 300)
    return root, features


def test_a_targeted_run_names_its_attribute_in_metrics_json_and_the_measures_table(demo_data, tmp_path):
    root, features = demo_data
    run_dirs = []
    for target in (None, "weak"):
        grid = {"epsilon": 0.1, "lambda": 1.0, **({"target": target} if target else {})}
        point = GridPoint.of("demo", "bow", "cape", grid, seed=5)
        out = tmp_path / point.params_path
        run_grid_point(point, TrainJob(data_dir=root / "data", out_dir=out, features=features,
                                       settings={"epochs": 1, "min_epochs": 1}))
        attack_grid_point(data_dir=root / "data", run_dir=out, out_path=out / "attack.json", attackers=["linear"],
                          seed=5, max_train=None)
        run_dirs.append(out)
    metrics = json.loads((run_dirs[1] / "metrics.json").read_text())
    assert metrics["params"] == {"mu": 0.0, "epsilon": 0.1, "lambda": 1, "target": "weak"}
    assert metrics["hyperparameters"]["attributes"] == ["weak"]
    assert metrics["history"]["protected_attributes"] == ["weak"]
    untargeted = json.loads((run_dirs[0] / "metrics.json").read_text())
    assert "target" not in untargeted["params"] and untargeted["history"]["protected_attributes"] == ["strong", "weak"]

    # as a claim reads it: measures.csv written and read back, then prepared like every artefact's input
    path = tmp_path / "measures.csv"
    measures_table(run_dirs).assign(study="s").to_csv(path, index=False)
    measures = prepare_measures(pd.read_csv(path))
    attacked = pick(measures, "attack_accuracy", "test", "weak", "linear", method="cape")
    assert len(attacked) == 2
    chosen = pick(measures, "attack_accuracy", "test", "weak", "linear", method="cape", **{TARGET_COLUMN: "weak"})
    assert list(chosen["run_dir"]) == [str(run_dirs[1])]
    every = pick(measures, "attack_accuracy", "test", "weak", "linear", method="cape", **{TARGET_COLUMN: None})
    assert list(every["run_dir"]) == [str(run_dirs[0])]


# --- the real workflow plans them ------------------------------------------------------------------------------

def test_a_snakemake_dry_run_on_demo_plans_one_point_per_attribute(tmp_path):
    config = {
        "datasets": ["demo"], "demo": {"n_examples": 300}, "attack": {"attackers": ["linear"]},
        "studies": {"baselines": {"datasets": ["demo"], "seeds": [10], "artefacts": False, "methods": {
            "cape": {"epsilon": [0.1], "lambda": [1.0], "target": ["each"]},
            "cape_base": {},
            "dpnr_adv": {},
        }}},
        "run_studies": ["baselines"],
    }
    planned = run_snakemake(tmp_path, config, None, "-n").stdout
    runs = sorted(set(re.findall(r"output: (results/runs/\S+)/model\.safetensors", planned)))
    assert runs == [
        "results/runs/demo/minilm/cape/mu~0/epsilon~0.1/lambda~1/target~strong/seed~10",
        "results/runs/demo/minilm/cape/mu~0/epsilon~0.1/lambda~1/target~weak/seed~10",
        "results/runs/demo/minilm/cape_base/mu~0/seed~10",
        "results/runs/demo/minilm/dpnr_adv/mu~0/lambda~1/seed~10",
    ]
