"""Dataset builders (SPEC §3). One builder per dataset; the registry names them.

Builders are imported lazily so that building ``adult`` does not import gensim or spaCy.
"""

from __future__ import annotations

import importlib
from typing import Callable

from privtext.data.common import BuiltDataset, DatasetError, Quarantine, write_dataset

BUILDERS: dict[str, str] = {
    "demo": "privtext.data.demo:build",
    "tp_us": "privtext.data.trustpilot:build_tp_us",
    "tp_uk": "privtext.data.trustpilot:build_tp_uk",
    "ag": "privtext.data.ag:build_ag",
    "ag_dpnr": "privtext.data.ag:build_ag_dpnr",
    "blog": "privtext.data.blog:build",
    "adult": "privtext.data.tabular:build_adult",
    "celeba": "privtext.data.tabular:build_celeba",
    "twitter": "privtext.data.encoded:build_twitter",
    "bios": "privtext.data.encoded:build_bios",
}

# Datasets whose examples are feature vectors (x_* columns) rather than text to encode.
TABULAR_DATASETS = frozenset({"adult", "celeba", "twitter", "bios"})


def get_builder(dataset: str) -> Callable[..., BuiltDataset]:
    try:
        module_name, function_name = BUILDERS[dataset].split(":")
    except KeyError:
        raise KeyError(f"unknown dataset {dataset!r}; known: {sorted(BUILDERS)}") from None
    return getattr(importlib.import_module(module_name), function_name)


__all__ = ["BUILDERS", "TABULAR_DATASETS", "BuiltDataset", "DatasetError", "Quarantine", "get_builder", "write_dataset"]
