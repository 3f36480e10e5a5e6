"""Hardening of the plan (issue 30, items 1, 2 and 13): names that reach a path or a command line, method
settings with their types and ranges, raw files that cannot be had, and the checkout privtext is imported from.
Each refusal is shown through the real Snakefile: it happens while the workflow is parsed, before any job."""

from __future__ import annotations

import hashlib
import os
import re
import shutil

import numpy as np
import pytest
import yaml

from conftest import PROJECT_ROOT, planned_job_counts, run_snakemake
from privtext.plan.config import ConfigError, load_config

STUDY = {"datasets": ["demo"], "seeds": [10], "methods": {"dpnr": {"epsilon": [1]}}}
CONFIG = {"datasets": ["demo"], "studies": {"s": STUDY}, "run_studies": ["s"]}


def _refused_before_any_job(result) -> str:
    output = result.stdout + result.stderr
    assert result.returncode != 0, output[-3000:]
    assert "Job stats" not in output and "build_dataset" not in output, output[-3000:]
    return output


def _planned_jobs(result) -> dict[str, int]:
    assert result.returncode == 0, (result.stdout + result.stderr)[-3000:]
    return planned_job_counts(result.stdout)


# ----------------------------------------------------------------------------------- item 1: encoder names


def test_an_encoder_name_that_would_inject_shell_is_refused_before_any_job(tmp_path):
    # Nested --config values reach the Snakefile as strings; this one is the issue's `a'$(touch x)`.
    result = run_snakemake(tmp_path, CONFIG, None, "-n", "--config", "encoder={name: a'$(touch x)}", check=False)
    output = _refused_before_any_job(result)
    assert "invalid config key 'encoder.name'" in output and "a'$(touch x)" in output and "does not match" in output
    assert not (tmp_path / "x").exists()


def test_a_hidden_or_dotted_encoder_folder_name_is_refused():
    with pytest.raises(ConfigError, match=r"encoder\.name.*'\.hidden'.*does not match"):
        load_config(overrides={"encoder": {"name": ".hidden"}})


def test_existing_encoder_folder_names_are_unchanged_and_match_the_slug_pattern(tmp_path):
    from privtext.plan.grid import SLUG_PATTERN, encoder_slug

    local = "./checkpoints/model"
    expected_local = f"local-model-{hashlib.sha256(os.path.normpath(local).encode()).hexdigest()[:8]}"
    slugs = {"minilm": "minilm", "bert-base-uncased": "bert-base-uncased",
             "sentence-transformers/all-MiniLM-L6-v2": "sentence-transformers--all-MiniLM-L6-v2",
             local: expected_local}
    for name, slug in slugs.items():
        assert encoder_slug(name) == slug
        assert re.fullmatch(SLUG_PATTERN, slug) and re.fullmatch(SLUG_PATTERN, slug + "+finetune")
    with pytest.raises(ValueError, match="does not match"):
        encoder_slug("a'$(touch x)")


def test_a_run_folder_with_a_shell_word_for_encoder_has_no_rule(tmp_path):
    """The wildcard constraints: even a requested path cannot carry such an encoder segment into a job."""
    target = "results/embeddings/demo/a'$(touch x)/mu~0/seed~0/train.npy"
    result = run_snakemake(tmp_path, CONFIG, [target], "-n", check=False)
    output = result.stdout + result.stderr
    assert result.returncode != 0 and "MissingRuleException" in output and "Job stats" not in output


# ------------------------------------------------------------------------------------ item 2: study names


def test_a_study_name_that_leaves_the_working_directory_is_refused_before_any_job(tmp_path):
    escaped = "../../../../escaped"
    config = {"datasets": ["demo"], "studies": {escaped: STUDY}, "run_studies": [escaped]}
    output = _refused_before_any_job(run_snakemake(tmp_path / "work", config, None, "-n", check=False))
    assert "invalid config key 'studies'" in output and f"'{escaped}' does not match" in output
    assert not list(tmp_path.rglob("escaped*"))


@pytest.mark.parametrize("key, value", [("run_studies", ["a/b"]), ("claims_studies", [".."]),
                                        ("grid_shrink", {"seeds": 1, "values": 1, "studies_exempt": ["x y"]})])
def test_every_key_naming_a_study_takes_only_folder_safe_names(key, value):
    with pytest.raises(ConfigError, match=f"invalid config key '{key}.*does not match"):
        load_config(overrides={key: value})


def test_registry_names_match_the_name_pattern_that_wildcards_and_schema_use():
    from privtext.data import BUILDERS
    from privtext.methods import METHODS
    from privtext.plan.grid import NAME_PATTERN

    assert all(re.fullmatch(NAME_PATTERN, name) for name in (*BUILDERS, *METHODS))
    studies = yaml.safe_load((PROJECT_ROOT / "config.yaml").read_text())["studies"]
    assert all(re.fullmatch(NAME_PATTERN, name) for name in studies)


# ------------------------------------------------------------------------- item 13: settings, types, ranges


@pytest.mark.parametrize("setting, key, value, expected", [
    ("{dpnr: {layer: gaussian}}", "methods.dpnr.layer", "'gaussian'", "is not one of ['minmax'"),
    ("{dpnr: {lr: fast}}", "methods.dpnr.lr", "'fast'", "is not of type 'number'"),
    ("{dpnr: {lr: -0.1}}", "methods.dpnr.lr", "-0.1", "is less than or equal to the minimum of 0"),
    ("{dpnr: {epochs: 2.5}}", "methods.dpnr.epochs", "2.5", "is not of type 'integer'"),
    ("{dpnr: {epochs: 0}}", "methods.dpnr.epochs", "0", "is less than the minimum of 1"),
    ("{dpnr: {encoder_hidden: [64, x]}}", "methods.dpnr.encoder_hidden.1", "'x'", "is not of type 'integer'"),
    ("{cape: {patience: soon}}", "methods.cape.patience", "'soon'", "is not of type 'integer', 'null'"),
    ("{dpnr: {dropout: 1}}", "methods.dpnr.dropout", "1", "is greater than or equal to the maximum of 1"),
    ("{federate: {attributes: []}}", "methods.federate.attributes", "[]", "should be non-empty"),
])
def test_a_bad_method_setting_on_the_command_line_is_refused_before_any_job(tmp_path, setting, key, value, expected):
    result = run_snakemake(tmp_path, CONFIG, None, "-n", "--config", f"methods={setting}", check=False)
    output = _refused_before_any_job(result)
    assert f"invalid config key '{key}': {value} {expected}" in output


@pytest.mark.parametrize("setting", ["{dpnr: {lr: 0.0001}}", "{dpnr: {lr: 1e-4}}", "{dpnr: {epochs: 5}}",
                                     "{dpnr: {epochs: 5.0, patience: null, encoder_hidden: [8]}}"])
def test_good_method_settings_from_the_command_line_plan_their_jobs(tmp_path, setting):
    result = run_snakemake(tmp_path, CONFIG, None, "-n", "--config", f"methods={setting}", check=False)
    assert _planned_jobs(result)["train"] == 1


def test_command_line_strings_reach_the_train_job_as_the_types_it_trains_with():
    """What the train job does with `methods.dpnr` (resolve, build, fit) works on what Snakemake hands over
    for --config 'methods={dpnr: {lr: 1e-4, epochs: 5, ...}}' (every nested scalar a string)."""
    from privtext.methods import METHODS, Split, build_method

    as_strings = {"lr": "1e-4", "epochs": "5.0", "batch_size": "16", "patience": "null",
                  "encoder_hidden": ["8"], "layer": "l1", "min_epochs": "1", "max_epochs_factor": "1"}
    settings = load_config(overrides={"methods": {"dpnr": as_strings}})["methods"]["dpnr"]
    assert settings == {"lr": 1e-4, "epochs": 5, "batch_size": 16, "patience": None, "encoder_hidden": [8],
                        "layer": "l1", "min_epochs": 1, "max_epochs_factor": 1}
    assert type(settings["epochs"]) is int and type(settings["lr"]) is float
    params = METHODS["dpnr"].resolve(settings, {"epsilon": 1})
    model = build_method("dpnr", params, input_dim=4, n_classes=2, attribute_sizes={"z": 2}, seed=0)
    rng = np.random.default_rng(0)
    split = Split(X=rng.normal(size=(32, 4)).astype(np.float32), y=rng.integers(0, 2, 32),
                  Z={"z": rng.integers(0, 2, 32)})
    assert model.fit(split, split)["method"] == "dpnr"


def test_the_extending_docs_example_setting_is_a_number():
    example = "methods: {dpnr_l1: {lr: 1e-4}}"
    assert example in (PROJECT_ROOT / "docs/extending.md").read_text()
    # dpnr_l1 exists only once the recipe has added it (tests/test_extending.py); the same setting on a real variant
    parsed = yaml.safe_load(example.replace("dpnr_l1", "dpnr_calibrated"))
    assert parsed["methods"]["dpnr_calibrated"]["lr"] == "1e-4"  # PyYAML (YAML 1.1): a string
    assert load_config(overrides=parsed)["methods"]["dpnr_calibrated"]["lr"] == 1e-4


def test_an_enum_setting_takes_null_from_the_command_line():
    config = load_config(overrides={"attack": {"inversion": {"attacker": "null"}}})
    assert config["attack"]["inversion"]["attacker"] is None


def test_every_paper_default_passes_its_own_setting_schema():
    import jsonschema

    from privtext.methods import METHODS
    from privtext.methods.options import options_schema

    for spec in METHODS.values():
        jsonschema.validate(dict(spec.defaults), options_schema(spec))


def test_setting_names_agree_with_what_the_job_accepts():
    from privtext.methods.options import (
        ACTIVATION_NAMES, LAMBDA_SCHEDULE_NAMES, LAYER_NAMES, OPTIMIZER_NAMES, SELECT_ON_NAMES,
    )
    from privtext.privacy.layers import LAYERS
    from privtext.training.loop import OPTIMIZERS, SELECT_ON
    from privtext.training.nn import ACTIVATIONS, LAMBDA_SCHEDULES

    assert set(LAYER_NAMES) == set(LAYERS) and set(ACTIVATION_NAMES) == set(ACTIVATIONS)
    assert set(LAMBDA_SCHEDULE_NAMES) == set(LAMBDA_SCHEDULES) and set(OPTIMIZER_NAMES) == set(OPTIMIZERS)
    assert set(SELECT_ON_NAMES) == set(SELECT_ON)


def test_a_new_methods_own_setting_is_checked_against_its_default_type(monkeypatch):
    from privtext.methods import METHODS
    from privtext.methods.spec import MethodSpec

    monkeypatch.setitem(METHODS, "toy", MethodSpec("toy", defaults={"temperature": 0.5, "rounds": 3, "tag": "a"}))
    config = load_config(overrides={"methods": {"toy": {"temperature": "2e-1", "rounds": "4"}}})
    assert config["methods"]["toy"] == {"temperature": 0.2, "rounds": 4}
    with pytest.raises(ConfigError, match=r"key 'methods\.toy\.rounds': 'many' is not of type 'integer'"):
        load_config(overrides={"methods": {"toy": {"rounds": "many"}}})


# ------------------------------------------------------------------------ item 13: raw files, import path


def test_a_dataset_without_raw_files_and_without_downloads_is_refused_at_planning(tmp_path):
    raw_dir = tmp_path / "raw"
    config = {"datasets": ["adult"], "raw_dir": str(raw_dir), "allow_download": False, "run_studies": []}
    output = _refused_before_any_job(run_snakemake(tmp_path / "work", config, None, "-n", check=False))
    assert "invalid config key 'datasets'" in output and "download_raw" not in output
    assert "adult: 'adult/adult.data' is missing and allow_download is false" in output
    assert f"place 'adult.test' at '{raw_dir / 'adult/adult.test'}'" in output


def test_a_file_with_no_public_download_is_refused_at_planning_even_with_downloads_on(tmp_path):
    config = {"datasets": ["celeba"], "raw_dir": str(tmp_path / "raw"), "allow_download": True, "run_studies": []}
    output = _refused_before_any_job(run_snakemake(tmp_path / "work", config, None, "-n", check=False))
    assert "celeba: CelebA is distributed through Google Drive" in output and "download it by hand" in output


def test_downloadable_raw_files_still_plan_their_downloads(tmp_path):
    config = {"datasets": ["adult"], "raw_dir": str(tmp_path / "raw"), "allow_download": True, "run_studies": []}
    assert _planned_jobs(run_snakemake(tmp_path / "work", config, None, "-n", check=False))["download_raw"] == 2


def test_privtext_imported_from_another_checkout_is_refused(tmp_path, monkeypatch):
    """A complete other checkout (library and schema) on the import path: this Snakefile must not plan with it."""
    other = tmp_path / "other-checkout"
    shutil.copytree(PROJECT_ROOT / "src" / "privtext", other / "src" / "privtext",
                    ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(PROJECT_ROOT / "schemas", other / "schemas")
    monkeypatch.setenv("PYTHONPATH", str(other / "src"))  # run_snakemake's subprocess inherits it
    output = _refused_before_any_job(run_snakemake(tmp_path / "work", CONFIG, None, "-n", check=False))
    assert f"privtext is imported from '{other / 'src' / 'privtext'}'" in output
    assert f"expected this workflow's '{PROJECT_ROOT / 'src' / 'privtext'}'" in output


# --- Issue 43, item 3: what a job would refuse is refused while the workflow is parsed ------------------------------

ADV_CONFIG = {"datasets": ["demo"], "run_studies": ["s"],
              "studies": {"s": {"datasets": ["demo"], "seeds": [10], "methods": {"adv": {"lambda": [1.0]}}}}}


@pytest.mark.parametrize("setting, expected", [
    ("max_quarantine_fraction=nan", "invalid config key 'max_quarantine_fraction': nan is not a finite number"),
    ("studies={s: {datasets: [demo], seeds: [10], methods: {dpnr: {epsilon: [.inf]}}}}",
     "invalid config key 'studies.s.methods.dpnr.epsilon.0': inf is not a finite number"),
    ("studies={s: {datasets: [demo], seeds: [10], methods: {dpnr: {epsilon: [.nan]}}}}",
     "invalid config key 'studies.s.methods.dpnr.epsilon.0': nan is not a finite number"),
    ("demo={strong_strength: 0.8, weak_strength: 0.5}",
     "invalid config key 'demo': strong_strength (0.8) + weak_strength (0.5) is 1.3"),
    ("encoder={name: ./no_such_model}",
     "invalid config key 'encoder.name': './no_such_model' is written as a path but is not a folder"),
    ('encoder={revision: "not a sha"}',
     "invalid config key 'encoder.revision': 'not a sha' for encoder 'minilm'; expected the sha256"),
    ("encoder={name: org/model, revision: 'main; rm'}",
     "invalid config key 'encoder.revision': 'main; rm' for encoder 'org/model'; expected a commit, tag or branch"),
    ("datasets=demo", "invalid config key 'datasets': 'demo' is not a list: write [demo] for a list of one (the "
                      "only string this key takes is 'auto')"),
    ("attack={attackers: mlp}", "invalid config key 'attack.attackers': 'mlp' is not a list: write [mlp] for a "
                                "list of one (the only string this key takes is 'claims')"),
])
def test_a_setting_its_job_would_refuse_is_refused_by_a_dry_run(tmp_path, setting, expected):
    result = run_snakemake(tmp_path, CONFIG, None, "-n", "--config", setting, check=False)
    assert expected in _refused_before_any_job(result)


def test_a_method_attribute_that_is_not_the_dataset_s_is_refused_by_a_dry_run(tmp_path):
    result = run_snakemake(tmp_path, ADV_CONFIG, None, "-n", "--config", "methods={adv: {attributes: [nosuch]}}",
                           check=False)
    output = _refused_before_any_job(result)
    assert "invalid config key 'methods.adv.attributes': ['nosuch'] are not private attributes of 'demo'" in output
    good = run_snakemake(tmp_path, ADV_CONFIG, None, "-n", "--config", "methods={adv: {attributes: [strong]}}",
                         check=False)
    assert _planned_jobs(good)["train"] == 1


def test_finite_numbers_and_well_formed_revisions_still_pass(tmp_path):
    from privtext.encoding.encoders import MINILM_REVISION

    assert load_config(overrides={"encoder": {"revision": MINILM_REVISION}})["encoder"]["revision"] == MINILM_REVISION
    hub = load_config(overrides={"encoder": {"name": "org/model", "revision": "v1.0"}})["encoder"]
    assert hub["revision"] == "v1.0"
    assert load_config(overrides={"encoder": {"name": str(tmp_path)}})["encoder"]["name"] == str(tmp_path)
    assert load_config(overrides={"demo": {"strong_strength": 0.6, "weak_strength": 0.4}})["demo"]["weak_strength"] == 0.4
