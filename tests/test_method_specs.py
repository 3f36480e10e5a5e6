"""A grid point's identity has one definition: method specs (no torch) feed the schema, the grid expansion,
the run folders and the trained model alike."""

from types import SimpleNamespace

import numpy as np
import pytest

from privtext import methods as method_registry
from privtext.plan.config import ConfigError, load_config, load_schema
from privtext.plan.grid import RUN_DIR, GridPoint, study_points
from privtext.methods import METHODS, build_method
from privtext.methods.spec import FEDERATE_FAMILY, GRID_PARAMS, MethodSpec


def test_schema_takes_method_ids_and_keys_from_the_registry():
    schema = load_schema()
    assert schema["$defs"]["method_id"]["enum"] == list(METHODS)
    study_methods = schema["$defs"]["study"]["properties"]["methods"]["properties"]
    # an adversarial method also takes `target` (one model per targeted attribute; tests/test_baselines.py)
    assert set(study_methods["federate"]["properties"]) == {"mu", "epsilon", "lambda", "finetune", "target"}
    assert set(study_methods["majority"]["properties"]) == {"mu"}
    assert set(study_methods["inlp"]["properties"]) == {"mu", "n_iter"}  # INLP cannot be fine-tuned
    overrides = schema["properties"]["methods"]["properties"]
    assert set(overrides["noise"]["propertyNames"]["enum"]) == set(METHODS["noise"].defaults) | {"finetune"}
    assert "finetune" not in overrides["inlp"]["propertyNames"]["enum"]


def test_every_grid_parameter_of_every_method_is_declared_once_with_a_label():
    for spec in METHODS.values():
        assert set(spec.grid_params) <= set(GRID_PARAMS)
    from privtext.report.artefacts.common import PARAM_COLUMNS, PARAM_TEXT

    assert set(PARAM_TEXT) == set(PARAM_COLUMNS) == {f"param_{p}" for p in GRID_PARAMS}


def test_a_spec_whose_grid_parameter_has_no_default_is_refused():
    with pytest.raises(ValueError, match="no paper default"):
        MethodSpec("broken", grid_params=("epsilon",), defaults={})
    with pytest.raises(ValueError, match="not in GRID_PARAMS"):
        MethodSpec("broken", grid_params=("temperature",), defaults={"temperature": 1})


def test_grid_default_is_the_config_override_else_the_paper_default():
    noise = METHODS["noise"]
    assert noise.grid_default("epsilon") == 8.0
    assert noise.grid_default("epsilon", {"epsilon": 10}) == 10
    assert noise.grid_default("mu", {"epsilon": 10}) == 0
    resolved = noise.resolve({"epsilon": 10, "epochs": 3}, {"epsilon": 12})
    assert resolved["epsilon"] == 12 and resolved["epochs"] == 3 and resolved["layer"] == "l1"


def test_unlisted_grid_parameter_takes_the_config_override_in_the_folder_name():
    study = {"seeds": [10], "methods": {"noise": {}, "federate": {"lambda": [0.5]}}}
    points = study_points(study, datasets=["demo"], encoder_for=lambda d: "minilm", specs=METHODS,
                          overrides={"noise": {"epsilon": 10}, "federate": {"epsilon": 9, "lambda": 2}})
    assert [p.run_dir for p in points] == [
        "results/runs/demo/minilm/noise/mu~0/epsilon~10/seed~10",
        "results/runs/demo/minilm/federate/mu~0/epsilon~9/lambda~0.5/seed~10",  # a listed value wins
    ]


def test_grid_point_round_trips_through_the_rules_wildcards():
    point = GridPoint("demo", "minilm", "federate", (("mu", "0.3"), ("epsilon", "8"), ("lambda", "0.5")), 20)
    wildcards = SimpleNamespace(dataset="demo", encoder="minilm", method="federate",
                                params="mu~0.3/epsilon~8/lambda~0.5", seed="20")
    assert GridPoint.from_wildcards(wildcards) == point
    assert point.run_dir == RUN_DIR.format(**vars(wildcards))
    assert point.grid_values == {"epsilon": 8, "lambda": 0.5} and point.mu == 0.3
    assert point.embedding_dir == "results/embeddings/demo/minilm/mu~0.3/seed~20"
    no_dropout = GridPoint("demo", "minilm", "noise", (("mu", "0"), ("epsilon", "8")), 20)
    assert no_dropout.embedding_dir.endswith("mu~0/seed~0")  # one extraction serves every seed


@pytest.fixture
def toy_method(monkeypatch):
    """A method that exists only in a temporary registry entry: its spec and nothing else."""
    toy = MethodSpec("toy", grid_params=("epsilon",),
                     defaults={**FEDERATE_FAMILY, "layer": "l1", "epsilon": 3.0, "epochs": 2, "batch_size": 64})
    monkeypatch.setitem(METHODS, "toy", toy)
    return toy


def test_a_toy_method_is_accepted_by_the_schema_expanded_by_a_study_and_trained(toy_method):
    config = load_config(overrides={
        "datasets": ["demo"], "methods": {"toy": {"epochs": 1}},
        "studies": {"toys": {"datasets": ["demo"], "methods": {"toy": {"epsilon": [1, 2]}}}}, "run_studies": ["toys"],
    })
    study = config["studies"]["toys"]
    points = study_points(study, datasets=["demo"], encoder_for=lambda d: "minilm", specs=METHODS,
                          overrides=config["methods"])
    assert [p.run_dir for p in points] == [f"results/runs/demo/minilm/toy/mu~0/epsilon~{e}/seed~10" for e in (1, 2)]
    model = build_method("toy", {"epsilon": 2}, input_dim=4, n_classes=2, attribute_sizes={"z": 2}, seed=0)
    assert model.privacy_layer == ("l1", 2.0) and model.params["epochs"] == 2
    rng = np.random.default_rng(0)
    split = method_registry.Split(X=rng.normal(size=(64, 4)).astype(np.float32), y=rng.integers(0, 2, 64),
                                  Z={"z": rng.integers(0, 2, 64)})
    assert model.fit(split, split)["method"] == "toy"
    assert model.release(split.X).shape == (64, 50)
    with pytest.raises(ConfigError, match="methods.toy"):
        load_config(overrides={"methods": {"toy": {"not_a_key": 1}}})


def test_the_registry_without_the_toy_method_rejects_it():
    assert "toy" not in method_registry.METHODS
    with pytest.raises(ConfigError):
        load_config(overrides={"studies": {"toys": {"methods": {"toy": {}}}}, "run_studies": ["toys"]})


def _readme_example(marker: str) -> str:
    """The python block of README.md that starts with the comment ``marker``."""
    from conftest import PROJECT_ROOT

    readme = (PROJECT_ROOT / "README.md").read_text()
    start = readme.index(marker)
    block = readme[start:readme.index("```", start)]
    return "\n".join(line[2:] if line.startswith("  ") else line for line in block.splitlines())


def test_the_readme_worked_example_adds_a_method_with_one_file_and_one_registry_line(monkeypatch):
    from conftest import PROJECT_ROOT

    module = {}
    exec(compile(_readme_example("# src/privtext/methods/dpnr_deep.py"), "dpnr_deep.py", "exec"), module)
    spec = module["SPEC"]
    # a method that does not exist yet: copied as written, the example overwrites nothing
    assert spec.name not in METHODS and not (PROJECT_ROOT / "src/privtext/methods/dpnr_deep.py").exists()
    monkeypatch.setitem(METHODS, spec.name, spec)  # the registry line
    config = load_config(overrides={
        "methods": {"dpnr_deep": {"lr": 1e-4}},
        "studies": {"deep": {"datasets": ["demo"], "methods": {"dpnr_deep": {"epsilon": [1, 8]}}}},
        "run_studies": ["deep"],
    })
    points = study_points(config["studies"]["deep"], datasets=["demo"], encoder_for=lambda d: "minilm",
                          specs=METHODS, overrides=config["methods"])
    assert [p.run_dir for p in points] == [
        f"results/runs/demo/minilm/dpnr_deep/mu~0/epsilon~{e}/seed~10" for e in (1, 8)]
    model = build_method("dpnr_deep", {**config["methods"]["dpnr_deep"], "epsilon": 8},
                         input_dim=4, n_classes=2, attribute_sizes={"z": 2}, seed=0)
    assert model.privacy_layer == ("minmax", 8.0) and model.params["lr"] == 1e-4
    assert model.params["encoder_hidden"] == [256]


def test_a_new_grid_parameter_is_its_spec_only(monkeypatch):
    from privtext.methods.spec import GridParam

    monkeypatch.setitem(GRID_PARAMS, "dropout", GridParam("dropout", "dropout",
                                                          {"type": "number", "minimum": 0, "exclusiveMaximum": 1}))
    dpnr = METHODS["dpnr"]
    monkeypatch.setitem(METHODS, "dpnr", MethodSpec("dpnr", ("epsilon", "dropout"), dpnr.defaults, dpnr.model))
    config = load_config(overrides={
        "studies": {"sweep": {"datasets": ["demo"], "methods": {"dpnr": {"dropout": [0.1, 0.3]}}}}, "run_studies": ["sweep"]})
    points = study_points(config["studies"]["sweep"], datasets=["demo"], encoder_for=lambda d: "minilm",
                          specs=METHODS, overrides=config["methods"])
    assert [p.params_path for p in points] == ["mu~0/epsilon~0.05/dropout~0.1", "mu~0/epsilon~0.05/dropout~0.3"]
    with pytest.raises(ConfigError, match="dropout"):
        load_config(overrides={"studies": {"sweep": {"methods": {"dpnr": {"dropout": [1.5]}}}}, "run_studies": ["sweep"]})
