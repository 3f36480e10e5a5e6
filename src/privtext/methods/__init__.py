"""Registry of the methods of SPEC §2. Adding a method is one small module and one line in ``METHODS``."""

from __future__ import annotations

from typing import Any, Mapping

import torch

from privtext.methods.adv import Adv
from privtext.methods.adv_br import AdvBestResponse
from privtext.methods.base import Method, Split
from privtext.methods.cape import CAPE
from privtext.methods.dpnr import DPNR
from privtext.methods.federate import Federate
from privtext.methods.inlp import INLP
from privtext.methods.majority import Majority
from privtext.methods.multiadv import MultiAdv
from privtext.methods.noise import Noise
from privtext.methods.nonpriv import NonPriv

METHODS: dict[str, type[Method]] = {
    "majority": Majority,
    "nonpriv": NonPriv,
    "adv": Adv,
    "adv_br": AdvBestResponse,
    "multiadv": MultiAdv,
    "inlp": INLP,
    "noise": Noise,
    "dpnr": DPNR,
    "cape": CAPE,
    "federate": Federate,
}


def build_method(
    name: str, params: Mapping[str, Any], *, input_dim: int, n_classes: int,
    attribute_sizes: Mapping[str, int], seed: int, threads: int = 1, device: str | torch.device = "cpu",
) -> Method:
    """The method ``name`` with ``params`` overriding its paper defaults (unknown names raise ValueError),
    training on ``device`` (``cpu``, ``cuda``, ``auto`` or a ``torch.device``)."""
    if name not in METHODS:
        raise ValueError(f"unknown method {name!r}; known methods: {', '.join(METHODS)}")
    return METHODS[name](params, input_dim=input_dim, n_classes=n_classes,
                         attribute_sizes=attribute_sizes, seed=seed, threads=threads, device=device)


__all__ = ["METHODS", "Method", "Split", "build_method"]
