"""Paper artefacts (docs/reproducing.md, "Paper artefacts"): a registry of every table and figure, built from saved results only.

``ARTEFACTS`` maps a name such as ``"dpnr/table2"`` to an :class:`Artefact` that says whether it is a table
or a figure, which studies' measures it needs (empty: any study given) and how to build it;
:func:`build_artefact` writes ``out_prefix`` + .csv/.md/.tex (tables) or .png/.pdf (figures).
"""

from __future__ import annotations

import importlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

if TYPE_CHECKING:  # the registry is read while the Snakefile is parsed: no pandas or matplotlib there
    import pandas as pd

    from privtext.report.artefacts.common import ArtefactInputs

KINDS = ("table", "figure")


@dataclass(frozen=True)
class Artefact:
    """One paper table or figure: ``build`` turns :class:`ArtefactInputs` into a :class:`TableArtefact` or a
    matplotlib Figure."""

    name: str
    kind: str
    studies: tuple[str, ...]
    builder: str  # "module:function" within privtext.report.artefacts, imported when the artefact is built

    @property
    def files(self) -> tuple[str, ...]:
        """The files its rule writes, relative to the project (the one spelling: rules and `make <file>` read it)."""
        folder, suffixes = ("tables", ("csv", "md", "tex")) if self.kind == "table" else ("figures", ("png", "pdf"))
        return tuple(f"results/{folder}/{self.name}.{suffix}" for suffix in suffixes)

    @property
    def build(self) -> Callable[[ArtefactInputs], Any]:
        module, function = self.builder.split(":")
        return getattr(importlib.import_module(f"privtext.report.artefacts.{module}"), function)


def _registry(*artefacts: Artefact) -> dict[str, Artefact]:
    return {a.name: a for a in artefacts}


ARTEFACTS: dict[str, Artefact] = _registry(
    Artefact("dpnr/table2", "table", ("dpnr_eps",), "dpnr:table2"),
    Artefact("dpnr/table3", "table", ("dpnr_mu",), "dpnr:table3"),
    Artefact("dpnr/table4", "table", ("dpnr_privacy",), "dpnr:table4"),
    Artefact("dpnr/table5", "table", ("dpnr_privacy",), "dpnr:table5"),
    Artefact("dpnr/table6", "table", ("dpnr_fairness",), "dpnr:table6"),
    Artefact("dpnr/table7", "table", ("dpnr_fairness",), "dpnr:table7"),
    Artefact("dpnr/figure3", "figure", ("dpnr_eps",), "dpnr:figure3"),
    Artefact("dpnr/figure4", "figure", ("dpnr_fairness",), "dpnr:figure4"),
    Artefact("cape/table3", "table", ("cape_main",), "cape:table3"),
    Artefact("cape/table4", "table", ("cape_sweep",), "cape:table4"),
    Artefact("federate/table1", "table", ("federate_main",), "federate:table1"),
    Artefact("federate/table2", "table", ("federate_main",), "federate:table2"),
    Artefact("federate/table3", "table", ("federate_main",), "federate:table3"),
    Artefact("federate/table4", "table", ("federate_rt",), "federate:table4"),
    Artefact("federate/table5", "table", ("federate_rt",), "federate:table5"),
    Artefact("federate/table6", "table", ("federate_rt",), "federate:table6"),
    Artefact("federate/table7", "table", ("federate_eps",), "federate:table7"),
    Artefact("federate/figure2", "figure", ("federate_main",), "federate:figure2"),
    Artefact("federate/figure3", "figure", ("federate_main",), "federate:figure3"),
    Artefact("federate/figure4", "figure", ("federate_eps",), "federate:figure4"),
    Artefact("extra/effective_epsilon", "table", (), "extra:effective_epsilon"),
    Artefact("extra/figure_effective_epsilon", "figure", (), "extra:figure_effective_epsilon"),
)


def artefact_inputs(
    name: str,
    measures: pd.DataFrame | None,
    metas: Mapping[str, Mapping[str, Any]],
    published: pd.DataFrame | None,
    tsne_inputs: Sequence[tuple] | None = None,
    options: Mapping[str, Any] | None = None,
) -> ArtefactInputs:
    """Normalised inputs of artefact ``name`` (its studies' rows only when the measures carry several)."""
    from privtext.report.artefacts.common import ArtefactInputs, normalise_published, prepare_measures

    artefact = _lookup(name)
    return ArtefactInputs(
        measures=prepare_measures(measures, artefact.studies), metas=dict(metas or {}),
        published=normalise_published(published), tsne_inputs=tsne_inputs, options=dict(options or {}),
    )


def build_artefact(
    name: str,
    measures: pd.DataFrame | None,
    metas: Mapping[str, Mapping[str, Any]],
    published: pd.DataFrame | None,
    out_prefix: str | Path,
    tsne_inputs: Sequence[tuple] | None = None,
    options: Mapping[str, Any] | None = None,
) -> list[Path]:
    """Build artefact ``name`` from saved measures and write its files; returns the paths written.

    ``measures``: concatenated ``measures.csv`` of the artefact's studies (with a ``study`` column);
    ``metas``: dataset → meta.json; ``published``: published.csv or None; ``tsne_inputs`` (dpnr/figure4):
    ``(method, dataset, released_test .npy path or array, labels, value_names)`` tuples; ``options``:
    e.g. ``tsne_max_points``, ``tsne_random_state``, ``rt_grid``, ``accuracy_bin_points``.
    """
    import matplotlib

    from privtext.report.artefacts.common import FIGURE_STYLE, TableArtefact, save_figure, write_table

    artefact = _lookup(name)
    inputs = artefact_inputs(name, measures, metas, published, tsne_inputs, options)
    with matplotlib.rc_context(FIGURE_STYLE):
        result = artefact.build(inputs)
        if artefact.kind == "table":
            if not isinstance(result, TableArtefact):
                raise TypeError(f"artefact {name!r} is a table but its builder returned {type(result).__name__}")
            return write_table(result, out_prefix)
        return save_figure(result, out_prefix)


def artefact_of_file(path: str | Path) -> Artefact:
    """The artefact that writes ``path`` (e.g. ``results/figures/dpnr/figure3.png``); ValueError naming the path and
    where the list is when none does."""
    wanted = os.path.normpath(str(path))
    for artefact in ARTEFACTS.values():
        if wanted in artefact.files:
            return artefact
    raise ValueError(
        f"{path} is not a file of a paper table or figure; every one is listed in docs/reproducing.md, "
        "\"One table or figure\" (the ARTEFACTS registry, src/privtext/report/artefacts/__init__.py)"
    )


def _lookup(name: str) -> Artefact:
    if name not in ARTEFACTS:
        raise ValueError(f"unknown artefact {name!r}; known: {', '.join(ARTEFACTS)}")
    return ARTEFACTS[name]


__all__ = ["ARTEFACTS", "Artefact", "artefact_inputs", "artefact_of_file", "build_artefact", "KINDS"]
