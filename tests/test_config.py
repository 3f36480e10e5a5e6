"""Config validation: schema errors and cross-field errors name the key, before any job runs."""

import pytest

from conftest import run_snakemake
from privtext.config import ConfigError, load_config


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
    ],
)
def test_snakemake_reports_config_error_before_any_job(tmp_path, config, expected):
    result = run_snakemake(tmp_path, config, None, "-n", check=False)
    output = result.stdout + result.stderr
    assert result.returncode != 0
    assert expected.split(".")[0] in output
    assert "Job stats" not in output and "build_dataset" not in output
