"""Configuration loading and the cross-field checks JSON Schema cannot express.

The Snakefile (``rules/common.smk``) and :func:`load_config` both call :func:`validate_config`: the JSON Schema
(with its defaults filled in) and then the cross-field checks, before any job runs.
"""

from __future__ import annotations

import copy
import math
import os
import re
from pathlib import Path
from typing import Any

import jsonschema
import yaml

from privtext.encoding.names import missing_folder, revision_form_problem
from privtext.plan.grid import ENCODER_NAME_PATTERN, NAME_PATTERN, encoder_slug

PROJECT_ROOT = Path(__file__).resolve().parents[3]
SCHEMA_PATH = PROJECT_ROOT / "schemas" / "config.schema.yaml"
DEFAULT_CONFIG_PATH = PROJECT_ROOT / "config.yaml"


class ConfigError(ValueError):
    """A configuration value is invalid; the message names the key."""


class WrongCheckoutError(ImportError):
    """The ``privtext`` package Python imports is not the one beside the Snakefile being run."""


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
    """The config schema, with dataset and method ids and each method's keys filled in from the registries
    (one definition: a new method, grid parameter or dataset needs no schema edit)."""
    return with_registries(yaml.safe_load(SCHEMA_PATH.read_text()))


def with_registries(schema: dict) -> dict:
    """Fill ``$defs.dataset_id`` from :data:`privtext.data.BUILDERS` (a dataset without an options block in
    the schema gets an open one), and ``$defs.method_id``, each study's per-method grid lists and
    ``methods`` (overrides, each setting with its schema: :func:`privtext.methods.options.option_schema`)
    from :data:`privtext.methods.METHODS`; the name patterns from :mod:`privtext.plan.grid`."""
    from privtext.data import BUILDERS
    from privtext.methods import METHODS
    from privtext.methods.options import options_schema
    from privtext.methods.spec import FINETUNE, GRID_PARAMS, TARGET, TARGET_VALUE_SCHEMA, WORD_DROPOUT

    badly_named = [name for name in (*BUILDERS, *METHODS) if not re.fullmatch(NAME_PATTERN, name)]
    if badly_named:  # a registry bug, not a config one: these names become folders and wildcards
        raise ValueError(f"dataset/method names {badly_named} do not match {NAME_PATTERN}")
    schema["$defs"]["name"]["pattern"] = f"^{NAME_PATTERN}$"
    schema["properties"]["encoder"]["properties"]["name"]["pattern"] = f"^{ENCODER_NAME_PATTERN}$"
    schema["$defs"]["dataset_id"] = {"enum": list(BUILDERS)}
    for dataset in BUILDERS:
        schema["properties"].setdefault(dataset, {
            "description": f"Options of the {dataset} builder (not described in the schema).",
            "type": "object", "default": {}})
    schema["$defs"]["method_id"] = {"enum": list(METHODS)}
    value_list = {"$ref": "#/$defs/value_list"}
    study_methods = schema["$defs"]["study"]["properties"]["methods"]
    study_methods["properties"] = {
        name: {"type": "object", "additionalProperties": False, "properties": {
            param: {**value_list, "items": dict(GRID_PARAMS[param].value_schema)}
            for param in (WORD_DROPOUT, *spec.grid_params)}
            | ({FINETUNE: {"type": "array", "minItems": 1, "items": {"type": "boolean"}}} if spec.finetunable else {})
            | ({TARGET: copy.deepcopy(TARGET_VALUE_SCHEMA)} if spec.targetable else {})}  # one model per attribute
        for name, spec in METHODS.items()
    }
    schema["properties"]["methods"]["properties"] = {name: options_schema(spec) for name, spec in METHODS.items()}
    return schema


_SCALAR_TYPES = {"integer": int, "number": (int, float), "boolean": bool, "null": type(None)}


def _resolve(schema: dict, root: dict) -> dict:
    while isinstance(schema, dict) and "$ref" in schema:
        target = root
        for part in schema["$ref"].lstrip("#/").split("/"):
            target = target[part]
        schema = {**target, **{k: v for k, v in schema.items() if k != "$ref"}}
    return schema if isinstance(schema, dict) else {}


def _types(schema: dict) -> set[str]:
    declared = schema.get("type", [])
    return {declared} if isinstance(declared, str) else set(declared)


def _parse_scalar(text: str) -> Any:
    """``text`` read as a YAML scalar; a finite number also where YAML 1.1 (PyYAML) keeps a string: ``1e-4``
    (no dot) is the string '1e-4' to PyYAML, in a config file and on the command line alike."""
    try:
        parsed = yaml.safe_load(text)
    except yaml.YAMLError:
        return text
    if isinstance(parsed, str):
        try:
            number = float(parsed)
        except ValueError:
            return parsed
        return number if math.isfinite(number) else parsed
    return parsed


def _coerce(value: Any, schema: dict, root: dict) -> Any:
    schema = _resolve(schema, root)
    alternatives = [_resolve(s, root) for s in schema.get("oneOf", []) + schema.get("anyOf", [])]
    types = set().union(*(_types(s) for s in (schema, *alternatives)))
    if isinstance(value, str):
        wanted = tuple(_SCALAR_TYPES[t] for t in types if t in _SCALAR_TYPES)
        enum = schema.get("enum")
        if enum is not None and value not in enum:  # `attacker: null` on the command line is the string 'null'
            parsed = _parse_scalar(value)
            return next((option for option in enum if option == parsed and type(option) is type(parsed)), value)
        if not wanted or "string" in types:
            return value
        parsed = _parse_scalar(value)
        is_bool_mismatch = isinstance(parsed, bool) and "boolean" not in types
        # a float where only an integer fits goes on to the integral check below ("5.0" -> 5; "2.5" is refused as 2.5)
        fits = isinstance(parsed, wanted) or ("integer" in types and isinstance(parsed, float))
        value = parsed if fits and not is_bool_mismatch else value
    if isinstance(value, float) and value.is_integer() and "integer" in types and "number" not in types:
        return int(value)  # JSON Schema calls 5.0 an integer; the job's own checks (range(), isinstance) do not
    if not isinstance(value, (dict, list)):
        return value
    for sub in alternatives:  # a container under oneOf/anyOf: use the alternative of its kind
        if (sub.get("type") == "object") == isinstance(value, dict) and sub.get("type") in ("object", "array"):
            schema = sub
            break
    if isinstance(value, dict):
        properties = schema.get("properties", {})
        extra = schema.get("additionalProperties")
        for key, item in value.items():
            sub = properties.get(key, extra if isinstance(extra, dict) else None)
            if sub is not None:
                value[key] = _coerce(item, sub, root)
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        value[:] = [_coerce(item, schema["items"], root) for item in value]
    return value


def coerce_command_line_values(config: dict) -> dict:
    """Turn strings into the numbers, booleans or nulls the schema asks for, in place.

    Snakemake parses a nested ``--config key={a: 1}`` with YAML's BaseLoader, so every nested scalar arrives
    as a string (``{'a': '1'}``); a top-level ``key=1`` is already an int. Strings stay strings wherever the
    schema allows a string, so this never changes the meaning of a valid value read from a YAML file; where
    it wants a number, ``1e-4`` (a string to PyYAML) becomes 0.0001, and where it wants an integer, 5.0
    becomes 5."""
    schema = load_schema()
    return _coerce(config, schema, schema)


def validate_config(config: dict) -> dict:
    """Validate ``config`` in place against the schema, fill defaults, then run :func:`check_config`."""
    coerce_command_line_values(config)
    _refuse_non_finite(config, ())
    schema = load_schema()
    validator = _validator_filling_defaults()(schema)
    error = jsonschema.exceptions.best_match(validator.iter_errors(config))
    if error is not None:
        key = ".".join(str(p) for p in error.absolute_path) or "<top level>"
        raise ConfigError(f"invalid config key '{key}': {_list_hint(error, schema) or error.message}")
    check_config(config)
    return config


def _refuse_non_finite(value: Any, path: tuple) -> None:
    """NaN and infinity pass JSON Schema's ranges (every comparison with NaN is false): refuse them anywhere."""
    if isinstance(value, float) and not math.isfinite(value):
        key = ".".join(str(p) for p in path) or "<top level>"
        raise ConfigError(f"invalid config key '{key}': {value} is not a finite number")
    if isinstance(value, dict):
        for name, item in value.items():
            _refuse_non_finite(item, (*path, name))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            _refuse_non_finite(item, (*path, index))


def _list_hint(error: jsonschema.exceptions.ValidationError, schema: dict) -> str | None:
    """For a string where a key takes a list or one special string (``datasets: demo``, ``attackers: mlp``),
    say so, instead of jsonschema's "'auto' was expected" or "does not match '^claims$'"."""
    if error.validator not in ("const", "pattern") or not isinstance(error.instance, str):
        return None
    path = list(error.absolute_schema_path)
    for cut in range(len(path) - 1, 0, -1):
        if path[cut] in ("items", "prefixItems", "properties", "additionalProperties"):
            return None  # the string is an item or a property, not the key's own value
        node: Any = schema
        for step in path[:cut]:
            node = (_resolve(node, schema) if isinstance(node, dict) else node)[step]
        node = _resolve(node, schema)
        if "array" in _types(node):
            special = error.validator_value if error.validator == "const" else error.validator_value.strip("^$")
            return (f"{error.instance!r} is not a list: write [{error.instance}] for a list of one (the only "
                    f"string this key takes is {special!r})")
    return None


# Config keys that name folders or files (raw_dir is inside the project by default, the others usually not).
PATH_KEYS = ("raw_dir", "data_mirror", "nltk_data", "published_results")


def canonical_path(path: str | Path, workdir: str | Path | None = None) -> str:
    """One spelling per location: relative to ``workdir`` (default: the current folder) when inside it,
    absolute otherwise. Snakemake compares input paths as written, so ``../shared/data`` and its absolute
    form would otherwise count as a new set of inputs and rebuild every dataset."""
    base = Path(workdir or os.getcwd()).resolve()
    resolved = (base / Path(path).expanduser()).resolve()
    try:
        return str(resolved.relative_to(base))
    except ValueError:
        return str(resolved)


def canonical_config_paths(config: dict[str, Any], workdir: str | Path | None = None) -> dict[str, Any]:
    """Rewrite the path keys of ``config`` with :func:`canonical_path`, in place."""
    for key in PATH_KEYS:
        if config.get(key):
            config[key] = canonical_path(config[key], workdir)
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
    """Checks beyond the schema: split ratios sum to 1, given folders exist, the encoder has a folder name (and
    names an existing folder where it is written as a path) and a revision of its kind's form, demo's cue
    strengths sum to at most 1."""
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
    encoder = config.get("encoder", {}).get("name")
    if encoder is not None:
        try:
            encoder_slug(encoder)
        except ValueError as error:
            raise ConfigError(f"invalid config key 'encoder.name': {error}") from None
        _check_encoder(encoder, config["encoder"].get("revision"))
    demo = config.get("demo")
    if isinstance(demo, dict) and demo.get("strong_strength", 0) + demo.get("weak_strength", 0) > 1:
        raise ConfigError(
            f"invalid config key 'demo': strong_strength ({demo['strong_strength']}) + weak_strength "
            f"({demo['weak_strength']}) is {demo['strong_strength'] + demo['weak_strength']:g}; a word slot carries "
            "one cue at most, so they must sum to at most 1")


def _check_encoder(name: str, revision: str | None) -> None:
    """An encoder name written as a path names an existing folder; its revision has the form its kind takes."""
    if problem := missing_folder(name):
        raise ConfigError(f"invalid config key 'encoder.name': {problem}")
    if revision is not None and (problem := revision_form_problem(name, revision)):
        raise ConfigError(f"invalid config key 'encoder.revision': {problem}")


def check_import_path(workflow_src: str | Path) -> None:
    """Refuse a ``privtext`` imported from anywhere but ``workflow_src`` (the workflow's own ``src/``).

    A ``.venv`` reused from, or installed by, another checkout imports that checkout's code: the rules of
    this one would silently run the library of the other."""
    import privtext

    imported = Path(privtext.__file__).resolve().parent
    expected = (Path(workflow_src) / "privtext").resolve()
    if imported != expected:
        raise WrongCheckoutError(
            f"privtext is imported from '{imported}', expected this workflow's '{expected}': the Python "
            f"environment installed privtext from another checkout (or PYTHONPATH points there). Install this "
            f"checkout into it (`.venv/bin/pip install --no-deps -e .` in the project folder) or use its own "
            f".venv.")
