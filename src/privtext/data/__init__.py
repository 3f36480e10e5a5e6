"""Dataset builders (docs/data.md). One builder per dataset; the registry names them.

Builders are imported lazily so that building ``adult`` does not import gensim or spaCy, and this module
imports nothing heavy: the Snakefile reads the registry while parsing.
"""

from __future__ import annotations

import importlib
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:  # the builders' module imports pandas and scikit-learn: not while the Snakefile parses
    from privtext.data.common import BuiltDataset

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
SPLITS = ("train", "dev", "test")


def read_meta(data_dir: str | Path) -> dict[str, Any]:
    """A built dataset's ``meta.json`` (splits, label and attribute names, hashes)."""
    return json.loads((Path(data_dir) / "meta.json").read_text())


def get_builder(dataset: str) -> Callable[..., BuiltDataset]:
    try:
        module_name, function_name = BUILDERS[dataset].split(":")
    except KeyError:
        raise KeyError(f"unknown dataset {dataset!r}; known: {sorted(BUILDERS)}") from None
    return getattr(importlib.import_module(module_name), function_name)


def __getattr__(name: str) -> Any:
    # The data contract (pandas, scikit-learn) is loaded only by those who use it.
    if name in ("BuiltDataset", "DatasetError", "Quarantine", "write_dataset"):
        from privtext.data import common

        return getattr(common, name)
    raise AttributeError(name)


__all__ = ["BUILDERS", "SPLITS", "TABULAR_DATASETS", "read_meta", "BuiltDataset", "DatasetError", "Quarantine", "get_builder", "write_dataset"]
