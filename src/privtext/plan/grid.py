"""Studies -> grid points -> run folders, and back: the one definition of a grid point and its paths.

A grid point's folder carries its parameters (``.../{method}/mu~0/epsilon~8/lambda~0.5/seed~10``), so a
finished point is a file that exists and resuming is free; identical points requested by different studies
are one folder. Values are written canonically (``8.0`` and ``8`` are the same point). The rules' wildcard
templates below are the only spelling of these paths: :class:`GridPoint` formats them for the grid expansion
and the aggregation, and :meth:`GridPoint.from_wildcards` reads them back inside a job.
"""

from __future__ import annotations

import itertools
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

from privtext.encoding.names import TABULAR_ENCODER, is_local_folder
from privtext.methods.spec import (
    ATTRIBUTE_NAME_PATTERN, EACH_ATTRIBUTE, FINETUNE, TARGET, WORD_DROPOUT, MethodSpec, is_attribute_name,
)
from privtext.runtime.provenance import sha256_bytes

RUNS_ROOT = "results/runs"
# A fine-tuned point's encoder segment is the frozen one plus this suffix (``minilm+finetune``): its weights are
# no longer the named encoder's, and frozen-feature folders of the same method and params stay as they were.
FINETUNE_SUFFIX = "+finetune"
# Snakemake wildcard templates of a grid point's folders (``params`` is ``mu~0/epsilon~8/...``).
RUN_DIR = RUNS_ROOT + "/{dataset}/{encoder}/{method}/{params}/seed~{seed}"
EMBEDDING_DIR = "results/embeddings/{dataset}/{encoder}/mu~{mu}/seed~{seed}"
# The unaltered text's features (mu = 0: one extraction, seed 0, serves every point; GridPoint.embedding_dir).
FROZEN_FEATURES_DIR = EMBEDDING_DIR.replace("{mu}", "0").replace("{seed}", "0")
# Per-job wall time, CPU and memory (Snakemake `benchmark:`), mirroring the run folders.
BENCHMARK_DIR = RUN_DIR.replace(RUNS_ROOT, "results/benchmarks/runs", 1)

# Names that become one path segment and a word of a cluster job's command line (Snakemake quotes wildcards
# with Python's repr, which a shell does not undo): studies, datasets, methods. No `/`, no leading `.` (so no
# `..`), nothing a shell expands. Used by the config schema and as the rules' wildcard constraints.
NAME_PATTERN = r"[A-Za-z0-9][A-Za-z0-9._-]*"
# An encoder's folder segment (encoder_slug), plus `+` for the fine-tuned suffix (`minilm+finetune`).
SLUG_PATTERN = r"[A-Za-z0-9][A-Za-z0-9._+-]*"
# `encoder.name` as written: a Hugging Face id (`org/model`) or a local folder (`./ckpt`, `~/models/x`).
ENCODER_NAME_PATTERN = r"[A-Za-z0-9._~/-]+"


def format_value(value: float | int | str) -> str:
    """Canonical text of a parameter value: ``1.0 -> '1'``, ``0.10 -> '0.1'``, ``1e-4 -> '0.0001'``."""
    if isinstance(value, bool) or isinstance(value, str):
        return str(value)
    as_float = float(value)
    if as_float.is_integer():
        return str(int(as_float))
    text = format(as_float, ".10g")
    return format(as_float, ".12f").rstrip("0") if "e" in text else text


def parse_value(text: str) -> float | int | str:
    try:
        number = float(text)
    except ValueError:
        return text
    return int(number) if number.is_integer() and "." not in text else number


def encoder_slug(encoder: str) -> str:
    """Folder-safe encoder name for ``results/{embeddings,runs}/{dataset}/{encoder}``.

    A Hugging Face id ``org/model`` becomes ``org--model``. A local folder becomes
    ``local-{folder name}-{8 hex}``, the hex a hash of the path as written: two checkpoints both called
    ``model`` get different folders, and neither a leading ``/``/``.`` nor the absolute path ends up in the
    name (which would give ``--tmp--...`` or hidden ``.--...`` folders and break on another machine).
    Every slug matches :data:`NAME_PATTERN` (a name that would not, e.g. ``.hidden``, raises ValueError).
    """
    if not is_local_folder(encoder):
        slug = encoder.replace("/", "--")
        if not re.fullmatch(NAME_PATTERN, slug):
            raise ValueError(f"encoder name {encoder!r} gives the folder name {slug!r}, which does not match "
                             f"{NAME_PATTERN}: expected a Hugging Face id such as 'org/model' or a local "
                             f"folder such as './model'")
        return slug
    written = os.path.normpath(encoder)
    base = re.sub(r"[^A-Za-z0-9._-]+", "_", Path(os.path.expanduser(written)).name).lstrip(".") or "folder"
    return f"local-{base}-{sha256_bytes(written.encode())[:8]}"


@dataclass(frozen=True)
class GridPoint:
    dataset: str
    encoder: str
    method: str
    params: tuple[tuple[str, str], ...]  # (name, canonical value), mu first, then the method's grid params
    seed: int

    @classmethod
    def from_wildcards(cls, wildcards: Any) -> "GridPoint":
        """The grid point of a job matched on :data:`RUN_DIR` (anything with those attributes)."""
        pairs = tuple(tuple(segment.split("~", 1)) for segment in wildcards.params.split("/"))
        return cls(wildcards.dataset, wildcards.encoder, wildcards.method, pairs, int(wildcards.seed))

    @classmethod
    def of(cls, dataset: str, encoder: str, method: str, grid: Mapping[str, Any] | None = None, *, mu: float = 0,
           seed: int) -> "GridPoint":
        """The grid point of ``method`` at the grid values ``grid`` (word dropout ``mu``), written canonically."""
        params = ((WORD_DROPOUT, format_value(mu)), *((k, format_value(v)) for k, v in (grid or {}).items()))
        return cls(dataset, encoder, method, params, int(seed))

    @property
    def params_path(self) -> str:
        return "/".join(f"{name}~{value}" for name, value in self.params)

    @property
    def run_dir(self) -> str:
        return RUN_DIR.format(dataset=self.dataset, encoder=self.encoder, method=self.method,
                              params=self.params_path, seed=self.seed)

    @property
    def mu(self) -> float:
        return float(dict(self.params)[WORD_DROPOUT])

    @property
    def grid_values(self) -> dict[str, float | int | str]:
        """The method's grid parameters (mu excluded) as numbers, and ``target`` (an attribute name, kept as
        text whatever it looks like): what the job trains with."""
        return {name: value if name == TARGET else parse_value(value) for name, value in self.params
                if name != WORD_DROPOUT}

    @property
    def target(self) -> str | None:
        """The private attribute this point's adversary alone was trained on, or None (every attribute)."""
        return dict(self.params).get(TARGET)

    @property
    def finetune(self) -> bool:
        """Whether this point fine-tunes its text encoder end to end (trains on text, not frozen features)."""
        return self.encoder.endswith(FINETUNE_SUFFIX)

    @property
    def embedding_dir(self) -> str:
        """Frozen features of this point. mu = 0 leaves the text unchanged, so one extraction (seed 0)
        serves every seed and method. A fine-tuned point has none (it encodes the text itself)."""
        if self.finetune:
            raise ValueError(f"{self.run_dir} fine-tunes its encoder: it reads text, not frozen features")
        if self.mu == 0:
            return FROZEN_FEATURES_DIR.format(dataset=self.dataset, encoder=self.encoder)
        return EMBEDDING_DIR.format(dataset=self.dataset, encoder=self.encoder, mu=format_value(self.mu), seed=self.seed)


def study_points(
    study: Mapping,
    *,
    datasets: Sequence[str],
    encoder_for: Callable[[str], str],
    specs: Mapping[str, MethodSpec],
    overrides: Mapping[str, Mapping[str, Any]] | None = None,
    attributes_for: Callable[[str], Sequence[str]] | None = None,
) -> list[GridPoint]:
    """Expand one study block into grid points.

    ``study['methods']`` maps a method to lists of values per parameter; a grid parameter the study does not
    list takes the config override ``overrides[method][param]`` if there is one, else the paper default
    (:meth:`MethodSpec.grid_default`); ``mu`` (word dropout, docs/methods.md, "Word dropout") defaults to 0 for every method.
    ``finetune`` (a list of booleans, or ``methods.<m>.finetune``) puts fine-tuned points of the methods that
    take it under the encoder segment ``{encoder}+finetune``; datasets without a text encoder (tabular,
    pre-encoded) have nothing to fine-tune and keep their features.
    ``target`` (adversarial methods; attribute names, or ``each`` for every name ``attributes_for(dataset)``
    gives) plans one point per targeted attribute, its folder ending ``target~<name>``; without it a point's
    folder has no such segment, as before.
    """
    overrides = overrides or {}
    points = []
    for dataset, seed in itertools.product(datasets, study["seeds"]):
        for method, value_lists in study["methods"].items():
            spec = specs[method]
            names = [WORD_DROPOUT, *spec.grid_params]
            allowed = names + [FINETUNE] * spec.finetunable + [TARGET] * spec.targetable
            unknown = set(value_lists) - set(allowed)
            if unknown:
                raise ValueError(f"study parameter(s) {sorted(unknown)} are not grid parameters of {method}; allowed: {allowed}")
            lists = [value_lists.get(name, [spec.grid_default(name, overrides.get(method))]) for name in names]
            encoder = encoder_for(dataset)
            finetune = value_lists.get(FINETUNE, [spec.grid_default(FINETUNE, overrides.get(method))])
            encoders = dict.fromkeys(encoder + FINETUNE_SUFFIX if on and encoder != TABULAR_ENCODER else encoder
                                     for on in finetune)
            targets = targeted_attributes(value_lists.get(TARGET), dataset, method, attributes_for)
            check_method_attributes((overrides.get(method) or {}).get("attributes"), dataset, method, attributes_for)
            for encoder_segment, values, target in itertools.product(encoders, itertools.product(*lists), targets):
                params = tuple((name, format_value(value)) for name, value in zip(names, values))
                params += ((TARGET, target),) if target is not None else ()
                points.append(GridPoint(dataset, encoder_segment, method, params, int(seed)))
    return points


def targeted_attributes(
    listed: Sequence[str] | None, dataset: str, method: str, attributes_for: Callable[[str], Sequence[str]] | None,
) -> list[str | None]:
    """A study's ``target`` list for one dataset: ``[None]`` (one model, adversaries on every attribute) when
    not listed, else attribute names with ``each`` expanded to the dataset's, each checked against
    :data:`ATTRIBUTE_NAME_PATTERN` (it becomes a folder segment) and, where the names are known, the dataset's."""
    if listed is None:
        return [None]
    known = list(attributes_for(dataset)) if attributes_for is not None else None
    if EACH_ATTRIBUTE in listed and known is None:
        raise ValueError(f"{method}: target {EACH_ATTRIBUTE!r} needs the private attribute names of {dataset!r}")
    names = [name for value in listed for name in (known if value == EACH_ATTRIBUTE else [value])]
    for name in names:
        if not is_attribute_name(name):
            raise ValueError(f"{method}: target {name!r} on {dataset!r} is not an attribute name "
                             f"(pattern {ATTRIBUTE_NAME_PATTERN}; {EACH_ATTRIBUTE!r} is reserved)")
        if known is not None and name not in known:
            raise ValueError(f"{method}: target {name!r} is not a private attribute of {dataset!r} "
                             f"({', '.join(known)}); target: [{EACH_ATTRIBUTE}] takes each dataset's own")
    return list(dict.fromkeys(names))


def check_method_attributes(chosen: Sequence[str] | None, dataset: str, method: str,
                            attributes_for: Callable[[str], Sequence[str]] | None) -> None:
    """A method's ``attributes`` setting (the attributes its adversaries see) names private attributes of every
    dataset it runs on, where their names are known before the dataset is built (as ``target`` is checked)."""
    if chosen is None or attributes_for is None:
        return
    try:
        known = list(attributes_for(dataset))
    except ValueError:  # a dataset whose names are known only once built: its train job checks them
        return
    unknown = [name for name in chosen if name not in known]
    if unknown:
        raise ValueError(f"invalid config key 'methods.{method}.attributes': {unknown} are not private attributes "
                         f"of {dataset!r}; expected some of {known} (or null: every one)")


def unique(points: Iterable[GridPoint]) -> list[GridPoint]:
    return list(dict.fromkeys(points))


def shrink_study(study: Mapping, seeds: int, values: int) -> dict:
    """A CPU-sized copy of ``study``: its first ``seeds`` seeds and at most ``values`` values per parameter
    list, evenly spaced with both ends kept (so a sweep still spans its range). ``target`` lists are kept
    whole: attributes are not a sweep to thin."""

    def thin(options: list) -> list:
        if len(options) <= values:
            return list(options)
        if values == 1:
            return [options[0]]
        step = (len(options) - 1) / (values - 1)
        return [options[round(i * step)] for i in range(values)]

    return {
        **study,
        "seeds": list(study["seeds"])[:seeds],
        "methods": {m: {p: v if p == TARGET else thin(v) for p, v in params.items()}
                    for m, params in study["methods"].items()},
    }
