"""Configuration loading and the cross-field checks JSON Schema cannot express.

The Snakefile validates with ``snakemake.utils.validate`` (which fills defaults); tests and scripts that run
without Snakemake use :func:`load_config`, which applies the same schema with the same default filling.
"""

from __future__ import annotations

import copy
import math
from pathlib import Path
from typing import Any

import jsonschema
import yaml

PROJECT_ROOT = Path(__file__).resolve().parents[2]
SCHEMA_PATH = PROJECT_ROOT / "schemas" / "config.schema.yaml"
DEFAULT_CONFIG_PATH = PROJECT_ROOT / "config.yaml"


class ConfigError(ValueError):
    """A configuration value is invalid; the message names the key."""


def _validator_filling_defaults() -> type:
    base = jsonschema.Draft202012Validator
    validate_properties = base.VALIDATORS["properties"]

    def set_defaults(validator, properties, instance, schema):
        if isinstance(instance, dict):
            for name, subschema in properties.items():
                if "default" in subschema:
                    instance.setdefault(name, copy.deepcopy(subschema["default"]))
        yield from validate_properties(validator, properties, instance, schema)

    return jsonschema.validators.extend(base, {"properties": set_defaults})


def load_schema() -> dict:
    return yaml.safe_load(SCHEMA_PATH.read_text())


def validate_config(config: dict) -> dict:
    """Validate ``config`` in place against the schema, fill defaults, then run :func:`check_config`."""
    validator = _validator_filling_defaults()(load_schema())
    error = jsonschema.exceptions.best_match(validator.iter_errors(config))
    if error is not None:
        key = ".".join(str(p) for p in error.absolute_path) or "<top level>"
        raise ConfigError(f"invalid config key '{key}': {error.message}")
    check_config(config)
    return config


def load_config(path: str | Path = DEFAULT_CONFIG_PATH, overrides: dict | None = None) -> dict:
    config = yaml.safe_load(Path(path).read_text()) or {}
    config.update(copy.deepcopy(overrides or {}))
    return validate_config(config)


def _check_split(key: str, split: dict) -> None:
    total = sum(split.values())
    if not math.isclose(total, 1.0, abs_tol=1e-6):
        raise ConfigError(
            f"invalid config key '{key}': split ratios {split} sum to {total:g}, they must sum to 1"
        )


def check_config(config: dict[str, Any]) -> None:
    """Checks beyond the schema: split ratios sum to 1 and given folders exist."""
    for block_name, block in config.items():
        if isinstance(block, dict) and isinstance(block.get("split"), dict):
            _check_split(f"{block_name}.split", block["split"])
    undefined = [name for name in config.get("run_studies", []) if name not in config.get("studies", {})]
    if undefined:
        raise ConfigError(
            f"invalid config key 'run_studies': {undefined} not defined under 'studies' "
            f"(defined: {sorted(config.get('studies', {}))})"
        )
    mirror = config.get("data_mirror")
    if mirror and not Path(mirror).is_dir():
        raise ConfigError(f"invalid config key 'data_mirror': folder '{mirror}' does not exist")
