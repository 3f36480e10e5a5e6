"""The contract every dataset builder fulfils, and the code they share.

A builder is ``build(inputs, options, seed, quarantine) -> BuiltDataset``: ``inputs`` maps the roles of its
raw files to paths, ``options`` is its config block (plus resolved run facts such as the NER backend).
:func:`write_dataset` checks the result and writes ``{split}.parquet``, ``meta.json`` and
``quarantine.jsonl``; nothing a builder drops goes unrecorded: bad records are quarantined with file and line,
documented preprocessing filters are counted under ``filtered``.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

import numpy as np
import pandas as pd
from sklearn.model_selection import train_test_split

from privtext.data import SPLITS, read_meta
from privtext.runtime.provenance import sha256_bytes, sha256_file

ATTRIBUTE_KINDS = ("demographic", "entity")


class DatasetError(RuntimeError):
    """Raw input cannot give a usable dataset; the message names the file and what is wrong."""


@dataclass
class Quarantine:
    """Counts malformed raw records per reason and keeps the first few with their location."""

    max_examples: int = 20
    counts: Counter = field(default_factory=Counter)
    examples: list[dict[str, Any]] = field(default_factory=list)

    def add(
        self, reason: str, file: str | Path, line: int | None, detail: str = "", *, index: int | None = None
    ) -> None:
        """``line`` is 1-based in a text file; ``index`` is the 0-based position in an array or pickled list."""
        self.counts[reason] += 1
        if len(self.examples) < self.max_examples:
            example = {"reason": reason, "file": Path(file).name, "line": line, "detail": detail[:300]}
            if index is not None:
                example["index"] = int(index)
            self.examples.append(example)

    def as_dict(self) -> dict[str, int]:
        return dict(sorted(self.counts.items()))


@dataclass
class BuiltDataset:
    """What a builder returns. Each split frame has ``id`` (str), ``text`` or feature columns ``x_*``,
    ``y`` (int) and one int column ``z_<name>`` per private attribute."""

    splits: dict[str, pd.DataFrame]
    label_names: list[str]
    private_attributes: dict[str, list[str]]
    attribute_kinds: dict[str, str]
    filtered: dict[str, int] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)




def split_frame(
    frame: pd.DataFrame, ratios: Mapping[str, float], seed: int, stratify: str | None = "y"
) -> dict[str, pd.DataFrame]:
    """Seeded split into train/dev/test by ``ratios``, stratified on ``stratify`` so every split sees every
    class when the data allows (a documented departure from the papers' plain shuffle)."""
    if len(frame) < 3:
        raise DatasetError(f"cannot split {len(frame)} examples into train/dev/test")
    frame = frame.sort_values("id", kind="stable").reset_index(drop=True)
    labels = frame[stratify] if stratify else None
    if labels is not None and labels.value_counts().min() < 3:
        labels = None  # a class too rare to stratify; write_dataset reports any split left without it
    rest_share = ratios["dev"] + ratios["test"]
    train, rest = train_test_split(
        frame, test_size=rest_share, random_state=seed, shuffle=True, stratify=labels
    )
    rest_labels = rest[stratify] if labels is not None else None
    if rest_labels is not None and rest_labels.value_counts().min() < 2:
        rest_labels = None
    dev, test = train_test_split(
        rest, test_size=ratios["test"] / rest_share, random_state=seed, shuffle=True, stratify=rest_labels
    )
    splits = {name: part.reset_index(drop=True) for name, part in zip(SPLITS, (train, dev, test))}
    return _cover_every_class(splits, stratify) if stratify else splits


def _cover_every_class(splits: dict[str, pd.DataFrame], column: str) -> dict[str, pd.DataFrame]:
    """Move one example of a class into each split that lacks it, from the split holding most of that class.

    Stratification cannot place a class with only a handful of examples (e.g. 4 Sports articles in AG's
    person-filtered test.csv) in every split; a class with fewer examples than splits still cannot be, and
    write_dataset then stops with an error naming it.
    """
    counts = pd.concat(splits.values())[column].value_counts()
    for label in sorted(counts[counts >= len(splits)].index):
        for name in SPLITS:
            if (splits[name][column] == label).any():
                continue
            donor = max(SPLITS, key=lambda s: (int((splits[s][column] == label).sum()), s))
            row = splits[donor][splits[donor][column] == label].iloc[[-1]]
            splits[donor] = splits[donor].drop(row.index).reset_index(drop=True)
            splits[name] = pd.concat([splits[name], row], ignore_index=True)
    return splits


def manifest_sha256(splits: Mapping[str, pd.DataFrame]) -> str:
    """Hash of the ordered example ids of each split: equal hashes mean identical splits."""
    manifest = {name: [str(i) for i in splits[name]["id"]] for name in SPLITS}
    return sha256_bytes(json.dumps(manifest, separators=(",", ":")).encode())


def _check(dataset: str, built: BuiltDataset) -> None:
    if set(built.splits) != set(SPLITS):
        raise DatasetError(f"{dataset}: builder returned splits {sorted(built.splits)}, expected {SPLITS}")
    for name, frame in built.splits.items():
        if frame.empty:
            raise DatasetError(f"{dataset}: split '{name}' is empty; check the raw inputs and filters")
        missing = {"id", "y"} - set(frame.columns)
        if missing:
            raise DatasetError(f"{dataset}: split '{name}' lacks columns {sorted(missing)}")
        absent = sorted(set(range(len(built.label_names))) - set(frame["y"].unique()))
        if absent:
            names = [built.label_names[i] for i in absent]
            raise DatasetError(
                f"{dataset}: split '{name}' has no example of class(es) {names}; "
                "the dataset is too small or too skewed for this split"
            )
        for attribute in built.private_attributes:
            if f"z_{attribute}" not in frame.columns:
                raise DatasetError(f"{dataset}: split '{name}' lacks column z_{attribute}")
    ids = pd.concat([frame["id"] for frame in built.splits.values()])
    if ids.duplicated().any():
        raise DatasetError(f"{dataset}: duplicate example ids, e.g. {ids[ids.duplicated()].iloc[0]!r}")
    for attribute, kind in built.attribute_kinds.items():
        if kind not in ATTRIBUTE_KINDS:
            raise DatasetError(f"{dataset}: attribute {attribute} has unknown kind {kind!r}")


def input_hashes(inputs: Mapping[str, str | Path]) -> dict[str, str]:
    """sha256 per raw input, keyed by file name, or by ``folder/name`` where names repeat (DeepMoji's
    ``train/pos_pos.npy`` and ``dev/pos_pos.npy``) so no input's hash is overwritten."""
    paths = [Path(p) for p in inputs.values()]
    names = Counter(p.name for p in paths)
    return {(f"{p.parent.name}/{p.name}" if names[p.name] > 1 else p.name): sha256_file(p) for p in paths}


def _to_builtin(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _to_builtin(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_to_builtin(v) for v in value]
    if isinstance(value, np.generic):
        return value.item()
    return value


def write_dataset(
    built: BuiltDataset,
    out_dir: str | Path,
    *,
    dataset: str,
    inputs: Mapping[str, str | Path],
    seed: int,
    quarantine: Quarantine,
    options: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Check ``built`` and write ``{split}.parquet``, ``meta.json`` and ``quarantine.jsonl`` to ``out_dir``."""
    _check(dataset, built)
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    for name, frame in built.splits.items():
        frame.to_parquet(out_dir / f"{name}.parquet", index=False)
    with (out_dir / "quarantine.jsonl").open("w") as handle:
        for record in quarantine.examples:
            handle.write(json.dumps(record) + "\n")
    meta = {
        "dataset": dataset,
        "splits": {name: int(len(built.splits[name])) for name in SPLITS},
        "label_names": list(built.label_names),
        "private_attributes": built.private_attributes,
        "attribute_kinds": built.attribute_kinds,
        "inputs": input_hashes(inputs),
        "quarantined": quarantine.as_dict(),
        "filtered": dict(sorted(built.filtered.items())),
        "split_manifest_sha256": manifest_sha256(built.splits),
        "seed": seed,
        "options": dict(options or {}),
        **built.extra,
    }
    meta = _to_builtin(meta)
    (out_dir / "meta.json").write_text(json.dumps(meta, indent=2, sort_keys=False) + "\n")
    return meta
