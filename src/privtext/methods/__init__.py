"""Registry of the methods of docs/methods.md, "Methods". Adding a method is one small spec module and one line in
``METHODS`` (plus a model module if it has an algorithm of its own, named by its spec's ``model``).

Importing this package loads specs only: the Snakefile reads it while parsing, and torch is imported by
:func:`build_method`, inside the job.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any, Mapping

from privtext.methods.spec import GRID_PARAMS, MethodSpec

if TYPE_CHECKING:
    import torch

    from privtext.methods.base import Method


def _specs(*names: str) -> dict[str, MethodSpec]:
    """name -> the ``SPEC`` of module ``privtext.methods.<name>``."""
    specs = {name: importlib.import_module(f"privtext.methods.{name}").SPEC for name in names}
    wrong = [name for name, spec in specs.items() if spec.name != name]
    if wrong:
        raise ValueError(f"method module(s) {wrong} declare a SPEC under another name")
    return specs


# The order is the one of every table and legend (privtext.report.artefacts.common.METHOD_ORDER): a
# method's ablations and variants beside it.
METHODS: dict[str, MethodSpec] = _specs(
    "majority",
    "nonpriv",
    "adv",
    "adv_br",
    "multiadv",
    "inlp",
    "noise",
    "dpnr_nonpriv",
    "dpnr_adv",
    "dpnr",
    "dpnr_calibrated",
    "dpnr_code",
    "cape_base",
    "cape_adv",
    "cape_dp",
    "cape_dp_calibrated",
    "cape_dp_code",
    "cape",
    "cape_calibrated",
    "cape_code",
    "federate",
)


def get_spec(name: str) -> MethodSpec:
    if name not in METHODS:
        raise ValueError(f"unknown method {name!r}; known methods: {', '.join(METHODS)}")
    return METHODS[name]


def build_method(
    name: str, params: Mapping[str, Any], *, input_dim: int, n_classes: int,
    attribute_sizes: Mapping[str, int], seed: int, threads: int = 1, device: str | torch.device = "cpu",
) -> Method:
    """The method ``name`` with ``params`` overriding its paper defaults (unknown names raise ValueError),
    training on ``device`` (``cpu``, ``cuda``, ``auto`` or a ``torch.device``)."""
    spec = get_spec(name)
    module_name, class_name = spec.model.split(":")
    model_class = getattr(importlib.import_module(module_name), class_name)
    return model_class(spec, params, input_dim=input_dim, n_classes=n_classes,
                       attribute_sizes=attribute_sizes, seed=seed, threads=threads, device=device)


def __getattr__(name: str) -> Any:
    # `Split` (the data contract of every model) lives with the torch models; load it only when asked for.
    if name == "Split":
        from privtext.methods.base import Split

        return Split
    raise AttributeError(name)


__all__ = ["GRID_PARAMS", "METHODS", "MethodSpec", "Split", "build_method", "get_spec"]
