"""The contract every dataset builder fulfils, and the code they share.

A builder is ``build(inputs, options, seed, quarantine) -> BuiltDataset``: ``inputs`` maps the roles of its
raw files to paths, ``options`` is its config block (plus resolved run facts such as the NER backend).
:func:`write_dataset` checks the result and writes ``{split}.parquet``, ``meta.json`` and
``quarantine.jsonl``; nothing a builder drops goes unrecorded: bad records are quarantined with file and line,
documented preprocessing filters are counted under ``filtered``.
"""

from __future__ import annotations

import json
import re
import reprlib
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

import numpy as np
import pandas as pd
from sklearn.model_selection import train_test_split

from privtext.data import SPLITS
from privtext.runtime.provenance import sha256_bytes, sha256_file

ATTRIBUTE_KINDS = ("demographic", "entity")
# Share of the records a build reads that may be quarantined before it fails (docs/data.md, "Quarantine and
# filters"); the config key max_quarantine_fraction overrides it.
DEFAULT_MAX_QUARANTINE_FRACTION = 0.1
DETAIL_CHARS = 300
# A lone UTF-16 surrogate (from `&#xD800;`, a `\ud800` escape or a pickled str) is a valid Python str that
# no UTF-8 writer accepts: pyarrow raises UnicodeEncodeError when the split is written.
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


class DatasetError(RuntimeError):
    """Raw input cannot give a usable dataset; the message names the file and what is wrong."""


class _BoundedRepr(reprlib.Repr):
    """reprlib with every size bounded, for values read from untrusted files.

    reprlib already cuts depth and container length; this also keeps it from sorting a dict's or set's keys
    (comparing two self-sharing tuples is exponential in their depth), from printing a huge int in full
    (Python refuses past 4,300 digits) and from copying all of a large bytes value first.
    """

    def __init__(self) -> None:
        super().__init__()
        self.maxlevel = 3
        self.maxtuple = self.maxlist = self.maxarray = self.maxdeque = 4
        self.maxdict = self.maxset = self.maxfrozenset = 4
        self.maxstring = self.maxother = 80

    def repr_dict(self, x: dict, level: int) -> str:
        if not x:
            return "{}"
        if level <= 0:
            return "{...}"
        shown = [f"{self.repr1(k, level - 1)}: {self.repr1(x[k], level - 1)}" for k in list(x)[: self.maxdict]]
        return "{" + ", ".join(shown) + (", ..." if len(x) > self.maxdict else "") + "}"

    def _unsorted(self, x: set | frozenset, level: int, left: str, right: str) -> str:
        if level <= 0:
            return f"{left}...{right}"
        shown = [self.repr1(item, level - 1) for _, item in zip(range(self.maxset), x)]
        return left + ", ".join(shown) + (", ..." if len(x) > self.maxset else "") + right

    def repr_set(self, x: set, level: int) -> str:
        return self._unsorted(x, level, "{", "}") if x else "set()"

    def repr_frozenset(self, x: frozenset, level: int) -> str:
        return self._unsorted(x, level, "frozenset({", "})") if x else "frozenset()"

    def repr_int(self, x: int, level: int) -> str:
        return repr(x) if x.bit_length() <= 128 else f"<int of {x.bit_length()} bits>"

    def repr_bytes(self, x: bytes, level: int) -> str:
        return repr(x[: self.maxstring]) + ("..." if len(x) > self.maxstring else "")

    repr_bytearray = repr_bytes


_SHORT_REPR = _BoundedRepr()


def short_repr(value: Any) -> str:
    """A repr of ``value`` of bounded size and cost, whatever its nesting or sharing (quarantine details)."""
    return _SHORT_REPR.repr(value)[:DETAIL_CHARS]


def has_lone_surrogate(text: str) -> bool:
    """True when ``text`` cannot be encoded as UTF-8 (it holds an unpaired surrogate code point)."""
    return _LONE_SURROGATE.search(text) is not None


# ASCII digits only: str.isdigit() also takes "²", which int() refuses, and int() reads "١٩٨٠" as 1980
_DECIMAL = re.compile(r"[0-9]{1,18}")


def decimal_integer(text: str) -> int | None:
    """``text`` (surrounding spaces allowed) as a non-negative integer of at most 18 ASCII digits, else None: a
    raw record's number is checked by this pattern before ``int()``, which a superscript digit or a
    5,000-digit string would make raise (or take time quadratic in the length)."""
    match = _DECIMAL.fullmatch(text.strip())
    return None if match is None else int(match.group())


@dataclass
class Quarantine:
    """Counts malformed raw records per reason and keeps the first few with their location.

    A reason added with ``incomplete=True`` marks records that lack a field the corpus is known to leave out
    (Trustpilot users without a birth year): counted like the others, but not held against
    ``max_quarantine_fraction``, which is there to stop a build on broken or wrong input.
    """

    max_examples: int = 20
    counts: Counter = field(default_factory=Counter)
    examples: list[dict[str, Any]] = field(default_factory=list)
    incomplete_reasons: set[str] = field(default_factory=set)

    def add(
        self, reason: str, file: str | Path, line: int | None, detail: Any = "", *, index: int | None = None,
        field: str | None = None, incomplete: bool = False,
    ) -> None:
        """``line`` is 1-based in a text file; ``index`` is the 0-based position in an array or pickled list;
        ``field`` names the field at fault. A ``detail`` that is not a str is shown with :func:`short_repr`."""
        self.counts[reason] += 1
        if incomplete:
            self.incomplete_reasons.add(reason)
        if len(self.examples) < self.max_examples:
            text = detail[:DETAIL_CHARS] if isinstance(detail, str) else short_repr(detail)
            example = {"reason": reason, "file": Path(file).name, "line": line, "detail": text}
            if field is not None:
                example["field"] = field
            if index is not None:
                example["index"] = int(index)
            self.examples.append(example)

    def as_dict(self) -> dict[str, int]:
        return dict(sorted(self.counts.items()))

    def counted_against_ceiling(self) -> int:
        """Quarantined records other than those of ``incomplete`` reasons."""
        return sum(n for reason, n in self.counts.items() if reason not in self.incomplete_reasons)


def check_quarantine_fraction(
    dataset: str, quarantine: Quarantine, *, kept: int, filtered: Mapping[str, int], max_fraction: float | None
) -> float:
    """The share of the records read that were quarantined (incomplete reasons left out of the numerator);
    a :class:`DatasetError` giving the counts when it exceeds ``max_fraction`` (None: no ceiling).

    Records read = kept examples + filtered + quarantined, each in the unit its builder counts (a line, a
    user, a review, a vector).
    """
    counted = quarantine.counted_against_ceiling()
    total_quarantined = sum(quarantine.counts.values())
    records = kept + sum(filtered.values()) + total_quarantined
    fraction = counted / records if records else 0.0
    if max_fraction is not None and fraction > max_fraction:
        excused = sorted(quarantine.incomplete_reasons & set(quarantine.counts))
        raise DatasetError(
            f"{dataset}: {counted} of {records} records read were quarantined ({fraction:.1%}), more than "
            f"max_quarantine_fraction {max_fraction:g}; kept {kept}, filtered {sum(filtered.values())}, "
            f"quarantined {quarantine.as_dict()}"
            + (f" ({excused} not counted: fields the corpus leaves out)" if excused else "")
            + ". The input is likely broken or not the expected file; see quarantine reasons above, or raise "
            "max_quarantine_fraction if this share is expected"
        )
    return fraction


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


def _unencodable_cell(frame: pd.DataFrame) -> str:
    """'column C of example ID' for the first str cell of ``frame`` holding a lone surrogate."""
    for column in frame.columns:
        if frame[column].dtype != object:
            continue
        for position, value in enumerate(frame[column]):
            if isinstance(value, str) and has_lone_surrogate(value):
                example = frame["id"].iloc[position] if "id" in frame.columns else position
                return f"column {column!r} of example {short_repr(example)}"
    return "(cell not found)"


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
    max_quarantine_fraction: float | None = DEFAULT_MAX_QUARANTINE_FRACTION,
) -> dict[str, Any]:
    """Check ``built`` and write ``{split}.parquet``, ``meta.json`` and ``quarantine.jsonl`` to ``out_dir``;
    a build that quarantined more than ``max_quarantine_fraction`` of what it read fails, writing nothing."""
    _check(dataset, built)
    kept = sum(len(frame) for frame in built.splits.values())
    fraction = check_quarantine_fraction(
        dataset, quarantine, kept=kept, filtered=built.filtered, max_fraction=max_quarantine_fraction
    )
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    for name, frame in built.splits.items():
        try:
            frame.to_parquet(out_dir / f"{name}.parquet", index=False)
        except UnicodeEncodeError as error:  # a builder let a lone surrogate through: name where it is
            raise DatasetError(f"{dataset}: split '{name}' {_unencodable_cell(frame)} cannot be written as UTF-8 "
                               f"({error.reason}); the builder should quarantine it") from error
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
        "quarantine_fraction": round(fraction, 6),
        "filtered": dict(sorted(built.filtered.items())),
        "split_manifest_sha256": manifest_sha256(built.splits),
        "seed": seed,
        "options": dict(options or {}),
        **built.extra,
    }
    meta = _to_builtin(meta)
    (out_dir / "meta.json").write_text(json.dumps(meta, indent=2, sort_keys=False) + "\n")
    return meta
