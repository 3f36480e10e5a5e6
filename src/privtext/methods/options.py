"""The JSON schema of each method setting, so ``methods.<name>.<key>`` is checked (and a ``--config`` string
coerced) before any job runs, not when the train job builds the model. Torch-free: the Snakefile reads it
while parsing.

A key's schema is, in order: its :data:`~privtext.methods.spec.GRID_PARAMS` entry (ε, λ, ...), its entry in
:data:`OPTION_SCHEMAS` (the settings of the shared architecture and the training loop, with the ranges and
names the job itself accepts), or one derived from the type of the method's paper default (a new method's own
setting needs no entry; a ``None`` default says nothing about the type, so such a setting is only named).
"""

from __future__ import annotations

from typing import Any, Mapping

from privtext.methods.spec import FINETUNE, GRID_PARAMS, MethodSpec

# The names the torch side accepts. They live with torch (privtext.privacy.layers.LAYERS,
# privtext.training.nn.ACTIVATIONS and LAMBDA_SCHEDULES, privtext.training.loop.OPTIMIZERS and SELECT_ON), which
# the Snakefile must not import; tests/test_hardening_config.py checks that these copies agree.
LAYER_NAMES = ("minmax", "minmax_calibrated", "l1", "minmax_dpnr_code", "minmax_cape_code")
ACTIVATION_NAMES = ("relu", "tanh", "linear")
LAMBDA_SCHEDULE_NAMES = ("constant", "dann")
OPTIMIZER_NAMES = ("adam", "adamw")
SELECT_ON_NAMES = ("accuracy", "loss")

_POSITIVE_INTEGER = {"type": "integer", "minimum": 1}
_LAYER_SIZES = {"type": "array", "items": _POSITIVE_INTEGER}  # hidden layers; [] = none
_DROPOUT = {"type": "number", "minimum": 0, "exclusiveMaximum": 1}

# The settings of privtext.methods.base.NeuralMethod and privtext.training.loop.TrainingSettings, with what
# their own checks accept.
OPTION_SCHEMAS: dict[str, Mapping[str, Any]] = {
    "layer": {"enum": list(LAYER_NAMES)},
    "activation": {"enum": list(ACTIVATION_NAMES)},
    "encoder_output_activation": {"enum": list(ACTIVATION_NAMES)},
    "encoder_hidden": _LAYER_SIZES,
    "classifier_hidden": _LAYER_SIZES,
    "adversary_hidden": _LAYER_SIZES,
    "representation_dim": {"type": ["integer", "null"], "minimum": 1},  # null: the input's size
    "dropout": _DROPOUT,
    "representation_dropout": _DROPOUT,
    "optimizer": {"enum": list(OPTIMIZER_NAMES)},
    "lr": {"type": "number", "exclusiveMinimum": 0},
    "weight_decay": {"type": "number", "minimum": 0},
    "batch_size": _POSITIVE_INTEGER,
    "epochs": _POSITIVE_INTEGER,
    "patience": {"type": ["integer", "null"], "minimum": 1},  # null: no early stop
    "select_on": {"enum": list(SELECT_ON_NAMES)},
    "min_steps_per_epoch": _POSITIVE_INTEGER,
    "min_epochs": _POSITIVE_INTEGER,
    "max_epochs_factor": _POSITIVE_INTEGER,
    "adversary_steps": {"type": "integer", "minimum": 0},
    "observers": {"type": "boolean"},  # heads that learn each attribute beside the task, never shaping the release
    "lambda_schedule": {"enum": list(LAMBDA_SCHEDULE_NAMES)},
    "gamma": {"type": "number", "minimum": 0},
    "n_adversaries": _POSITIVE_INTEGER,
    # null: every private attribute of the dataset (which ones exist is known only once it is built)
    "attributes": {"type": ["array", "null"], "minItems": 1, "uniqueItems": True, "items": {"type": "string"}},
}

_JSON_TYPES = ((bool, "boolean"), (int, "integer"), (float, "number"), (str, "string"), (list, "array"),
               (dict, "object"))


def schema_of_default(value: Any) -> dict[str, Any]:
    """A schema from a paper default's type: ``30`` -> integer, ``1e-3`` -> number, ``[50]`` -> array of
    integers, ``None`` -> anything (bool is tested before int: ``True`` is an int in Python)."""
    if value is None:
        return {}
    kind = next((name for python_type, name in _JSON_TYPES if isinstance(value, python_type)), None)
    if kind is None:
        return {}
    schema: dict[str, Any] = {"type": kind}  # "number" also takes an int (lr: 1)
    if kind == "array":
        item_schemas = [schema_of_default(item) for item in value]
        if item_schemas and all(item == item_schemas[0] for item in item_schemas):
            schema["items"] = item_schemas[0]
    return schema


def option_schema(spec: MethodSpec, name: str) -> dict[str, Any]:
    """The JSON schema of ``methods.<spec.name>.<name>`` (``name`` one of ``spec.option_names``)."""
    if name == FINETUNE:
        return {"type": "boolean"}
    if name in GRID_PARAMS:
        return dict(GRID_PARAMS[name].value_schema)
    if name in OPTION_SCHEMAS:
        return dict(OPTION_SCHEMAS[name])
    return schema_of_default(spec.defaults[name])


def options_schema(spec: MethodSpec) -> dict[str, Any]:
    """The schema of the block ``methods.<spec.name>``: its keys are the method's settings, each with its
    own schema (:func:`option_schema`)."""
    return {"type": "object", "propertyNames": {"enum": spec.option_names},
            "properties": {name: option_schema(spec, name) for name in spec.option_names}}
