"""Config validation: schema errors and cross-field errors name the key, before any job runs."""

import pytest

from conftest import run_snakemake
from privtext.plan.config import ConfigError, load_config


def test_default_config_is_valid_and_defaults_are_filled():
    config = load_config()
    assert config["raw_dir"] == "resources/raw"
    assert config["tp_uk"]["split"] == {"train": 0.56, "dev": 0.14, "test": 0.30}
    assert config["blog"]["n_topics"] == 10


@pytest.mark.parametrize(
    "overrides, key",
    [
        ({"datasets": ["nope"]}, "datasets"),
        ({"seed": -1}, "seed"),
        ({"demo": {"split": {"train": 0.5, "dev": 0.2, "test": 0.2}}}, "demo.split"),
        ({"data_mirror": "/no/such/folder"}, "data_mirror"),
        ({"ner_backend": "stanza"}, "ner_backend"),
        ({"unknown_key": 1}, "<top level>"),
    ],
)
def test_invalid_config_names_the_key(overrides, key):
    with pytest.raises(ConfigError, match=key.replace(".", r"\.")):
        load_config(overrides=overrides)


def test_unknown_dataset_error_lists_allowed_values():
    with pytest.raises(ConfigError) as error:
        load_config(overrides={"datasets": ["nope"]})
    assert "demo" in str(error.value) or "auto" in str(error.value)


@pytest.mark.parametrize(
    "config, expected",
    [
        ({"seed": -1}, "seed"),
        ({"demo": {"split": {"train": 0.5, "dev": 0.2, "test": 0.2}}}, "demo.split"),
        ({"datasets": ["demo"], "allow_download": "maybe"}, "allow_download"),
        ({"datasets": ["demo"], "train": {"device": "gpu"}}, "device"),
    ],
)
def test_snakemake_reports_config_error_before_any_job(tmp_path, config, expected):
    result = run_snakemake(tmp_path, config, None, "-n", check=False)
    output = result.stdout + result.stderr
    assert result.returncode != 0
    assert expected.split(".")[0] in output
    assert "Job stats" not in output and "build_dataset" not in output


def test_nested_command_line_strings_become_the_numbers_the_schema_asks_for():
    # What Snakemake hands over for --config 'grid_shrink={seeds: 1, values: 2}' demo='{n_examples: 500}'
    config = {"grid_shrink": {"seeds": "1", "values": "2"}, "demo": {"n_examples": "500"},
              "studies": {"s": {"datasets": ["demo"], "seeds": ["10"], "methods": {"dpnr": {"epsilon": ["0.5", "1"]}}}},
              "run_studies": ["s"], "seed": "7", "encoder": {"name": "1234"}}
    config = load_config(overrides=config)
    assert config["grid_shrink"] == {"seeds": 1, "values": 2}
    assert config["demo"]["n_examples"] == 500
    assert config["studies"]["s"]["seeds"] == [10] and config["studies"]["s"]["methods"]["dpnr"]["epsilon"] == [0.5, 1]
    assert config["seed"] == 7 and config["encoder"]["name"] == "1234"  # a string stays where strings are allowed
    with pytest.raises(ConfigError, match="grid_shrink.seeds"):
        load_config(overrides={"grid_shrink": {"seeds": "one", "values": "2"}})


def test_snakemake_accepts_a_nested_grid_shrink_on_the_command_line(tmp_path):
    config = {"datasets": ["demo"], "run_studies": ["s"],
              "studies": {"s": {"datasets": ["demo"], "seeds": [10, 20], "methods": {"dpnr": {"epsilon": [0.1, 1, 5]}}}}}
    result = run_snakemake(tmp_path, config, None, "-n", "--quiet", "rules", "--config",
                           "grid_shrink={seeds: 1, values: 2}")
    train_jobs = [line for line in result.stdout.splitlines() if line.strip().startswith("train")]
    assert train_jobs and int(train_jobs[0].split()[-1]) == 2  # 1 seed × ε ∈ {0.1, 5}


def test_paths_get_one_spelling_per_location(tmp_path):
    from privtext.plan.config import canonical_config_paths, canonical_path

    work = tmp_path / "project"
    (work / "resources").mkdir(parents=True)
    assert canonical_path("../shared/data", work) == str(tmp_path / "shared" / "data")
    assert canonical_path(tmp_path / "shared" / "data", work) == str(tmp_path / "shared" / "data")
    assert canonical_path("./resources/../resources/raw", work) == "resources/raw"
    assert canonical_path(work / "resources" / "raw", work) == "resources/raw"
    config = canonical_config_paths({"raw_dir": "resources/raw", "data_mirror": "../m", "nltk_data": None}, work)
    assert config == {"raw_dir": "resources/raw", "data_mirror": str(tmp_path / "m"), "nltk_data": None}


def test_relative_and_absolute_mirror_name_the_same_inputs(tmp_path):
    """Spelling the mirror `../mirror` must not change the job's input set (that would rebuild everything)."""
    mirror = tmp_path / "mirror" / "adult"
    mirror.mkdir(parents=True)
    for name in ("adult.data", "adult.test"):
        (mirror / name).write_text("")
    planned = []
    for spelling in ("../mirror", str(tmp_path / "mirror")):
        result = run_snakemake(tmp_path / "work", {"datasets": ["adult"], "data_mirror": spelling},
                               ["results/data/adult/meta.json"], "-n")
        planned.append([line.strip() for line in result.stdout.splitlines() if line.strip().startswith("input:")])
    assert planned[0] == planned[1] == [f"input: {mirror / 'adult.data'}, {mirror / 'adult.test'}"]
