"""Each dataset's private attribute names, known before it is built.

A study's ``target: [each]`` (one model per targeted attribute, CAPE Table 3) plans one grid point per private
attribute while the Snakefile is parsed, before any data exists, so the names cannot come from ``meta.json``.
They are the names each builder writes (``BuiltDataset.private_attributes``), in its order; the train job
checks a point's target against the built ``meta.json`` (an unknown one is a ValueError naming both lists),
and tests/test_baselines.py checks these against the builders it can run. Torch- and pandas-free.
"""

from __future__ import annotations

from typing import Any, Mapping

# AG rebuilt with NER has ``ag.n_entities`` person attributes; the DPNR authors' AG file has five
# (privtext.data.ag.DPNR_N_ENTITIES, checked by the tests).
AG_DPNR_ENTITIES = 5

FIXED_NAMES: dict[str, tuple[str, ...]] = {
    "demo": ("strong", "weak"),
    "tp_us": ("gender", "age"),
    "tp_uk": ("gender", "age", "location"),
    "ag_dpnr": tuple(f"entity{i}" for i in range(AG_DPNR_ENTITIES)),
    "blog": ("age", "gender"),
    "adult": ("sex",),
    "celeba": ("male",),
    "twitter": ("race",),
    "bios": ("gender",),
}


def private_attribute_names(dataset: str, options: Mapping[str, Any] | None = None) -> tuple[str, ...]:
    """The private attributes ``dataset`` is built with under its config ``options`` (``config[dataset]``)."""
    if dataset == "ag":
        n_entities = (options or {}).get("n_entities")
        if not isinstance(n_entities, int) or isinstance(n_entities, bool) or n_entities < 1:
            raise ValueError(f"ag: private attribute names need ag.n_entities (a positive integer), got {n_entities!r}")
        return tuple(f"entity{i}" for i in range(n_entities))
    if dataset not in FIXED_NAMES:
        raise ValueError(f"dataset {dataset!r} declares no private attribute names in privtext.data.attributes; "
                         "add them there to plan one model per targeted attribute on it")
    return FIXED_NAMES[dataset]
