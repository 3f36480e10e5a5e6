"""What a method is, without torch: its grid parameters, paper defaults, privacy layer and adversaries.

A :class:`MethodSpec` is read while the Snakefile is parsed (grid expansion, the config schema, run folders)
and again inside the job, where :func:`privtext.methods.build_method` turns it into a torch model. Resolving
a grid point's hyper-parameters happens here, once, so the folder name, the trained model and
``metrics.json`` cannot disagree.
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass, field
from typing import Any, Mapping

# The training rule every neural method follows (privtext.training.loop.TrainingSettings, docs/methods.md): at least
# 50 optimiser steps an epoch on the rows a run sees (the batch shrinks to fit), no early stop before 10
# epochs, and a run whose dev accuracy still rises after the paper's epochs trains on, up to 3 times as many.
# A method may override any of them like any hyper-parameter.
TRAINING_RULE: dict[str, Any] = {"min_steps_per_epoch": 50, "min_epochs": 10, "max_epochs_factor": 3}
# FEDERATE (Maheshwari et al. 2022, §5 and reference code): encoder in→100→50→50, classifier 50→50→25→C,
# adversary 50→50→K, dropout 0.1 after every hidden ReLU, Adam 1e-3, batch 2000, 30 epochs, best dev epoch.
FEDERATE_FAMILY: dict[str, Any] = {
    "encoder_hidden": [100, 50], "representation_dim": 50, "encoder_output_activation": "linear",
    "representation_dropout": 0.0, "classifier_hidden": [50, 25], "dropout": 0.1, "activation": "relu",
    "optimizer": "adam", "lr": 1e-3, "weight_decay": 0.0, "batch_size": 2000, "epochs": 30,
    "patience": None, "select_on": "accuracy", **TRAINING_RULE,
}
# Adversarial part, FEDERATE Algorithm 1 and code: scheduled λ with γ = 7, one adversary per attribute.
ADVERSARIAL: dict[str, Any] = {
    "lambda": 1.0, "lambda_schedule": "dann", "gamma": 7.0, "adversary_hidden": [50], "attributes": None,
    "adversary_steps": 0,
}


def without(defaults: Mapping[str, Any], *keys: str) -> dict[str, Any]:
    """``defaults`` less ``keys``: an ablation of a method (its architecture without noise or adversary)."""
    return {k: v for k, v in defaults.items() if k not in keys}


@dataclass(frozen=True)
class GridParam:
    """A hyper-parameter a study may sweep: its table label and the JSON schema of one value."""

    name: str
    label: str
    value_schema: Mapping[str, Any]


# Every parameter a study can list. A new grid parameter is one entry here plus its name in a method's
# ``grid_params``; the config schema and every table's column labels follow from it.
# (In the order tables name a setting: "ε = 8, λ = 0.5, μ = 0.3".)
GRID_PARAMS: dict[str, GridParam] = {p.name: p for p in (
    GridParam("epsilon", "ε", {"type": "number", "exclusiveMinimum": 0}),
    GridParam("lambda", "λ", {"type": "number", "minimum": 0}),
    GridParam("lambda_orth", "λ_orth", {"type": "number", "minimum": 0}),
    GridParam("n_iter", "iterations", {"type": "integer", "minimum": 1}),
    GridParam("mu", "μ", {"type": "number", "minimum": 0, "exclusiveMaximum": 1}),  # word dropout (docs/methods.md, "Word dropout")
)}
# mu acts on the text before encoding, so every method accepts it; 0 leaves the text unchanged.
WORD_DROPOUT = "mu"
WORD_DROPOUT_DEFAULT = 0
# End-to-end fine-tuning of the text encoder with the method's head (DPNR Algorithm 1; privtext.jobs.finetune).
# A switch of the shared architecture's methods, not a hyper-parameter of the head: a study lists
# ``finetune: [true]`` (or ``[false, true]``) per method, ``methods.<m>.finetune: true`` makes it the default.
# It lives in the run folder's encoder segment (``minilm+finetune``), never in ``params``, so frozen points keep
# their folders. INLP (its own algorithm over a trained encoder) and MAJORITY (no encoder) do not take it.
FINETUNE = "finetune"
# One model per targeted private attribute (CAPE Table 3): a study lists ``target: [each]`` (one grid point per
# private attribute of each dataset) or attribute names for an adversarial method, and each point's adversary
# is trained on that attribute alone (``attributes: [name]``). The folder gets a last segment ``target~name``
# only then, so points of studies that do not ask for it keep their folders. Names become a path segment.
TARGET = "target"
EACH_ATTRIBUTE = "each"
ATTRIBUTE_NAME_PATTERN = r"[A-Za-z0-9_]+"
TARGET_VALUE_SCHEMA: Mapping[str, Any] = {
    "type": "array", "minItems": 1, "uniqueItems": True,
    "items": {"type": "string", "pattern": f"^{ATTRIBUTE_NAME_PATTERN}$"},
}


def is_attribute_name(value: Any) -> bool:
    """Whether ``value`` can name a targeted attribute (and so a folder segment): the pattern, not ``each``."""
    return isinstance(value, str) and bool(re.fullmatch(ATTRIBUTE_NAME_PATTERN, value)) and value != EACH_ATTRIBUTE


# The shared architecture of docs/methods.md, "Methods" (encoder MLP, privacy layer, classifier, adversaries): every method's
# model unless it has an algorithm of its own, and the only one whose encoder can be fine-tuned.
SHARED_ARCHITECTURE = "privtext.methods.base:NeuralMethod"


@dataclass(frozen=True)
class MethodSpec:
    """One method of docs/methods.md, "Methods": ``defaults`` are the paper's hyper-parameters, ``grid_params`` those a study
    may sweep, ``model`` the ``module:Class`` that trains it (the shared architecture unless it has its own
    algorithm). Which parts the model has follows from the defaults: ``layer`` → privacy layer, ``lambda`` →
    adversaries."""

    name: str
    grid_params: tuple[str, ...] = ()
    defaults: Mapping[str, Any] = field(default_factory=dict)
    model: str = SHARED_ARCHITECTURE
    # How tables and figures show the method (privtext.report.artefacts.common.method_styles). Optional: a method
    # that names none is shown under its name, in a colour and marker no other method has.
    label: str | None = None
    colour: str | None = None  # "#RRGGBB"
    marker: str | None = None  # a matplotlib marker: "o", "s", "P", ...

    def __post_init__(self) -> None:
        if self.colour is not None and not re.fullmatch(r"#[0-9A-Fa-f]{6}", str(self.colour)):
            raise ValueError(f"method {self.name!r}: colour {self.colour!r} is not a '#RRGGBB' hex colour")
        for name in ("label", "marker"):
            value = getattr(self, name)
            if value is not None and (not isinstance(value, str) or not value.strip()):
                raise ValueError(f"method {self.name!r}: {name} {value!r} is not a non-empty string")
        unknown = [p for p in self.grid_params if p not in GRID_PARAMS or p == WORD_DROPOUT]
        if unknown:
            raise ValueError(f"method {self.name!r}: grid parameter(s) {unknown} are not in GRID_PARAMS "
                             f"(or are {WORD_DROPOUT!r}, which every method has)")
        missing = [p for p in self.grid_params if p not in self.defaults]
        if missing:
            raise ValueError(f"method {self.name!r}: grid parameter(s) {missing} have no paper default")

    @property
    def privacy_layer(self) -> str | None:
        return self.defaults.get("layer")

    @property
    def adversarial(self) -> bool:
        return "lambda" in self.defaults

    @property
    def finetunable(self) -> bool:
        """Whether the text encoder can be fine-tuned with this method's head (the shared architecture)."""
        return self.model == SHARED_ARCHITECTURE

    @property
    def option_names(self) -> list[str]:
        """Keys ``methods.<name>`` may set: the paper defaults, plus ``finetune`` where it applies."""
        return sorted([*self.defaults, *([FINETUNE] if self.finetunable else [])])

    def check_overrides(self, overrides: Mapping[str, Any]) -> None:
        unknown = sorted(set(overrides) - set(self.option_names))
        if unknown:
            allowed = ", ".join(self.option_names) or "none"
            raise ValueError(f"method {self.name!r}: unknown parameter(s) {unknown}; allowed: {allowed}")

    def grid_default(self, param: str, overrides: Mapping[str, Any] | None = None) -> Any:
        """A grid point's value of ``param`` when its study does not list it: the config override
        (``methods.<name>.<param>``) if there is one, else the paper default."""
        if param == WORD_DROPOUT:
            return WORD_DROPOUT_DEFAULT
        overrides = overrides or {}
        if param == FINETUNE:
            return bool(overrides.get(FINETUNE, False)) and self.finetunable
        return overrides[param] if param in overrides else self.defaults[param]

    @property
    def targetable(self) -> bool:
        """Whether a study may ask for one model per targeted attribute (``target``): methods with adversaries."""
        return self.adversarial

    def resolve(self, overrides: Mapping[str, Any] | None = None, grid: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """Every hyper-parameter of one grid point: paper defaults < config overrides < grid values.
        ``finetune`` is not one (the run folder says whether the encoder was fine-tuned) and is dropped; a
        ``target`` grid value becomes ``attributes: [target]`` (the adversary on that attribute alone)."""
        overrides, grid = dict(overrides or {}), dict(grid or {})
        self.check_overrides(overrides)
        overrides.pop(FINETUNE, None)
        target = grid.pop(TARGET, None)
        self.check_overrides({k: v for k, v in grid.items() if k != WORD_DROPOUT})
        resolved = {**copy.deepcopy(dict(self.defaults)), **copy.deepcopy(overrides),
                    **{k: v for k, v in grid.items() if k != WORD_DROPOUT}}
        if target is not None:
            resolved["attributes"] = [self.check_target(target)]
        return resolved

    def check_target(self, target: Any) -> str:
        """``target`` as an attribute name, or ValueError: the method must have adversaries, the name must
        match :data:`ATTRIBUTE_NAME_PATTERN` (it is a folder segment)."""
        if not self.targetable:
            raise ValueError(f"method {self.name!r} has no adversary: {TARGET!r} applies to adversarial methods only")
        if not is_attribute_name(target):
            raise ValueError(f"method {self.name!r}: {TARGET} {target!r} is not an attribute name "
                             f"(pattern {ATTRIBUTE_NAME_PATTERN}, {EACH_ATTRIBUTE!r} reserved)")
        return target
