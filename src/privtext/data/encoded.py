"""``twitter`` and ``bios``: FEDERATE's two main datasets, distributed as pre-encoded vectors (docs/data.md).

Both keep their published train/dev/test splits and become tabular-like datasets: the provided vectors are the
``x_*`` feature columns (encoder segment ``features``), as in FEDERATE, which trains on them directly.

- ``twitter`` (Blodgett et al. 2016, encoded with DeepMoji by Elazar & Goldberg 2018, distributed by Ravfogel
  et al. 2020): one float array per sentiment × race cell, ``<sentiment>_<race>.npy``. The first part is the
  sentiment (``pos`` = happy, ``neg`` = sad: the label), the second the race-aligned dialect (``pos`` = African
  American English, ``neg`` = Standard American English: the private attribute), as in
  demog-text-removal's ``make_data.py`` and FEDERATE's ``EncodedEmoji``. There is no text.
- ``bios`` (De-Arteaga et al. 2019 as split by Ravfogel et al. 2020): per split a pickled list of dicts with
  ``g`` (gender 'm'/'f'), ``p`` (profession) and the bio text, plus a ``[n, 768]`` array of BERT [CLS] vectors in
  the same order. Pickles are read with :mod:`privtext.data.safe_pickle`, which runs nothing from the file.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any, Mapping

import numpy as np
import pandas as pd

from privtext.data.common import SPLITS, BuiltDataset, DatasetError, Quarantine, has_lone_surrogate, short_repr
from privtext.data.safe_pickle import load_data_pickle
from privtext.data.sources import DEEPMOJI_CELLS

log = logging.getLogger(__name__)

TWITTER_LABELS = ["negative", "positive"]
TWITTER_RACE = ["sae", "aae"]  # Standard American English = 0, African American English = 1
# FEDERATE (after Han et al. 2021) trains on a stereotyped sample: 80% of it from the cells where sentiment and
# dialect agree (pos_pos, neg_neg), 20% from the others.
AGREEING_CELLS = ("pos_pos", "neg_neg")
GENDER_NAMES = {"m": "male", "f": "female"}


def cell_labels(cell: str) -> tuple[int, int]:
    """(sentiment y, race z) of a DeepMoji cell name: ``pos_neg`` -> (1, 0)."""
    sentiment, race = cell.split("_")
    return int(sentiment == "pos"), int(race == "pos")


def load_vectors(path: Path) -> np.ndarray:
    """A 2-D float array from ``.npy`` (never unpickled, memory-mapped); a DatasetError names the file otherwise."""
    try:
        # Memory-mapped: only the rows kept are copied (the real Twitter cells are ~100,000 x 2,304 each).
        vectors = np.load(path, mmap_mode="r", allow_pickle=False)
    except ValueError as error:  # object arrays need pickle, which allow_pickle=False refuses
        raise DatasetError(f"{path}: not a plain numeric .npy array ({error})") from error
    except EOFError as error:  # an empty or truncated file: numpy's message names no file
        raise DatasetError(f"{path}: empty or truncated .npy file ({error})") from error
    if vectors.ndim != 2 or not np.issubdtype(vectors.dtype, np.floating) or vectors.shape[1] == 0:
        raise DatasetError(f"{path}: expected a 2-D float array [examples, dims], got {vectors.dtype} {vectors.shape}")
    return vectors


def finite_rows(vectors: np.ndarray, path: Path, quarantine: Quarantine) -> np.ndarray:
    """Boolean mask of rows with only finite values; each other row is quarantined with its index."""
    finite = np.isfinite(vectors).all(axis=1)
    for index in np.flatnonzero(~finite):
        quarantine.add("non_finite_vector", path, None, "NaN or inf in the vector", index=int(index))
    return finite


def feature_frame(ids: list[str], vectors: np.ndarray) -> pd.DataFrame:
    """``id`` and float32 columns ``x_0000``… (zero-padded so the column order is the vector order)."""
    width = len(str(vectors.shape[1] - 1))
    features = pd.DataFrame(np.asarray(vectors, dtype=np.float32), columns=[f"x_{i:0{width}d}" for i in range(vectors.shape[1])])
    return pd.concat([pd.DataFrame({"id": ids}), features], axis=1)


def _same_dimension(dims: Mapping[Path, int]) -> int:
    if len(set(dims.values())) != 1:
        raise DatasetError(f"vector files disagree on the dimension: { {p.name: d for p, d in dims.items()} }")
    return next(iter(dims.values()))


# -------------------------------------------------------------------------------------------------- twitter


def _split_cell(
    path: Path, n_rows: int, sizes: Mapping[str, int], seed: int, cell_index: int, filtered: dict[str, int]
) -> dict[str, np.ndarray]:
    """Seeded split of one unsplit cell file into row indices per split (Ravfogel's deepmoji_split.py sizes:
    40,000/2,000/2,000). Dev and test are filled first so a short file shortens train, not evaluation."""
    if n_rows < sizes["dev"] + sizes["test"] + 1:
        raise DatasetError(
            f"{path}: {n_rows} usable rows cannot fill dev ({sizes['dev']}), test ({sizes['test']}) and train; "
            "lower twitter.cell_split"
        )
    order = np.random.default_rng([seed, cell_index]).permutation(n_rows)
    dev_end = sizes["dev"]
    test_end = dev_end + sizes["test"]
    train_end = min(n_rows, test_end + sizes["train"])
    filtered["beyond_cell_split_sizes"] = filtered.get("beyond_cell_split_sizes", 0) + n_rows - train_end
    return {"dev": order[:dev_end], "test": order[dev_end:test_end], "train": order[test_end:train_end]}


def _stereotyped_train(
    train: dict[str, np.ndarray], options: Mapping[str, Any], seed: int, filtered: dict[str, int]
) -> dict[str, dict[str, int]]:
    """Subsample train cells in place to FEDERATE's ratio; returns requested and kept counts per cell."""
    ratio, size = options["train_ratio"], options["train_size"]
    counts = {}
    for cell_index, cell in enumerate(DEEPMOJI_CELLS):
        share = ratio if cell in AGREEING_CELLS else 1 - ratio
        requested = round(size * share / 2)  # FEDERATE's int() gives 9,999 for 0.2 of 100,000 (float error)
        available = train[cell]
        if len(available) < requested:
            log.warning("twitter: train cell %s has %d rows, fewer than the %d asked for", cell, len(available), requested)
        kept = np.random.default_rng([seed, 100 + cell_index]).permutation(len(available))[:requested]
        train[cell] = available[np.sort(kept)]
        filtered["train_ratio_subsample"] = filtered.get("train_ratio_subsample", 0) + len(available) - len(kept)
        counts[cell] = {"requested": requested, "kept": int(len(kept))}
    return counts


def build_twitter(
    inputs: Mapping[str, Path], options: Mapping[str, Any], seed: int, quarantine: Quarantine
) -> BuiltDataset:
    """DeepMoji Twitter: ``y`` = sentiment (positive = 1), private attribute ``race`` (AAE = 1), the 2304-d
    DeepMoji vector as features. Published splits (``split`` layout) are kept; the four unsplit cell files
    (``cells`` layout) are split per cell with a seed."""
    presplit = "train_pos_pos" in inputs
    filtered: dict[str, int] = {}
    # split -> cell -> (ids, vectors); rows with NaN/inf are quarantined before any split is drawn.
    parts: dict[str, dict[str, tuple[list[str], np.ndarray]]] = {split: {} for split in SPLITS}
    dims: dict[Path, int] = {}
    for cell_index, cell in enumerate(DEEPMOJI_CELLS):
        if presplit:
            for split in SPLITS:
                path = Path(inputs[f"{split}_{cell}"])
                vectors = load_vectors(path)
                dims[path] = vectors.shape[1]
                keep = np.flatnonzero(finite_rows(vectors, path, quarantine))
                parts[split][cell] = ([f"twitter:{split}/{cell}:{i}" for i in keep], vectors[keep])
        else:
            path = Path(inputs[cell])
            vectors = load_vectors(path)
            dims[path] = vectors.shape[1]
            keep = np.flatnonzero(finite_rows(vectors, path, quarantine))
            rows = _split_cell(path, len(keep), options["cell_split"], seed, cell_index, filtered)
            for split, positions in rows.items():
                chosen = keep[np.sort(positions)]
                parts[split][cell] = ([f"twitter:{cell}:{i}" for i in chosen], vectors[chosen])
    n_features = _same_dimension(dims)

    train_counts = None
    if options["train_ratio"] is not None:
        positions = {cell: np.arange(len(parts["train"][cell][0])) for cell in DEEPMOJI_CELLS}
        train_counts = _stereotyped_train(positions, options, seed, filtered)
        for cell, chosen in positions.items():
            ids, vectors = parts["train"][cell]
            parts["train"][cell] = ([ids[i] for i in chosen], vectors[chosen])

    splits = {}
    for split in SPLITS:
        frames = []
        for cell in DEEPMOJI_CELLS:
            ids, vectors = parts[split][cell]
            frame = feature_frame(ids, vectors)
            frame["y"], frame["z_race"] = cell_labels(cell)
            frames.append(frame)
        splits[split] = pd.concat(frames, ignore_index=True).astype({"y": "int64", "z_race": "int64"})
    return BuiltDataset(
        splits=splits,
        label_names=TWITTER_LABELS,
        private_attributes={"race": TWITTER_RACE},
        attribute_kinds={"race": "demographic"},
        filtered=filtered,
        extra={
            "layout": "split" if presplit else "cells",
            "n_features": n_features,
            "feature_source": "DeepMoji (Felbo et al. 2017) vectors as distributed by Ravfogel et al. 2020",
            "cell_counts": {s: {c: len(parts[s][c][0]) for c in DEEPMOJI_CELLS} for s in SPLITS},
            "train_ratio": options["train_ratio"],
            "train_cells": train_counts,
        },
    )


# ----------------------------------------------------------------------------------------------------- bios


def read_label_index(path: Path) -> list[str]:
    """Names ordered by index from ``name<TAB>index`` lines (Ravfogel's ``*2index.txt``); indices must be 0..K-1."""
    index: dict[int, str] = {}
    for line_no, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        fields = line.split("\t")
        if len(fields) != 2 or not fields[1].strip().isdigit() or not fields[0]:
            raise DatasetError(f"{path}: line {line_no} should be 'name<TAB>index', got {line!r}")
        name, position = fields[0], int(fields[1])
        if position in index or name in index.values():
            raise DatasetError(f"{path}: line {line_no} repeats index {position} or name {name!r}")
        index[position] = name
    if sorted(index) != list(range(len(index))) or len(index) < 2:
        raise DatasetError(f"{path}: indices must be 0..K-1 with K >= 2, got {sorted(index)}")
    return [index[i] for i in range(len(index))]


def _record_problem(
    record: Any, text_key: str, professions: Mapping[str, int], genders: Mapping[str, int]
) -> tuple[str, str | None] | None:
    """(quarantine reason, field at fault) for one Bios record, or None when it is usable.

    Types are checked before any value is looked up: a list is unhashable, and hashing a tuple that holds
    the same sub-tuple twice at every level (a few hundred bytes of pickle) takes time exponential in its depth.
    """
    if not isinstance(record, dict):
        return "not_a_dict", None
    for key, known, missing, unknown in (
        ("g", genders, "missing_gender", "unknown_gender"), ("p", professions, "missing_profession", "unknown_profession")
    ):
        value = record.get(key)
        if value is None:
            return missing, key
        if not isinstance(value, str):
            return "wrong_type", key
        if value not in known:
            return unknown, key
    text = record.get(text_key)
    if text is not None and not isinstance(text, str):
        return "wrong_type", text_key
    if not text or not text.strip():
        return "missing_text", text_key
    if has_lone_surrogate(text):
        return "unencodable_text", text_key
    return None


def _bios_split(
    split: str, inputs: Mapping[str, Path], text_key: str, professions: Mapping[str, int],
    genders: Mapping[str, int], quarantine: Quarantine,
) -> tuple[pd.DataFrame, dict[str, int]]:
    records_path, vectors_path = Path(inputs[f"{split}_records"]), Path(inputs[f"{split}_vectors"])
    records = load_data_pickle(records_path)
    if not isinstance(records, list):
        raise DatasetError(f"{records_path}: expected a pickled list of dicts, got {type(records).__name__}")
    vectors = load_vectors(vectors_path)
    # Records and vectors pair by position (as in FEDERATE's loader); any surplus on either side has no partner.
    paired = min(len(records), len(vectors))
    for index in range(paired, len(records)):
        quarantine.add("record_without_vector", records_path, None, f"{vectors_path.name} has {len(vectors)} rows", index=index)
    for index in range(paired, len(vectors)):
        quarantine.add("vector_without_record", vectors_path, None, f"{records_path.name} has {len(records)} records", index=index)
    finite = np.isfinite(vectors[:paired]).all(axis=1)
    keep, y, z, texts = [], [], [], []
    for index in range(paired):
        record = records[index]
        problem = _record_problem(record, text_key, professions, genders)
        if problem:  # one reason per example: a bad record is not counted again for its vector
            reason, field = problem
            # short_repr: the value may be anything the pickle holds, e.g. a self-sharing tuple whose full repr
            # is exponential in size.
            detail = short_repr({k: record.get(k) for k in ("g", "p")}) if isinstance(record, dict) else type(record).__name__
            quarantine.add(reason, records_path, None, detail, index=index, field=field)
        elif not finite[index]:
            quarantine.add("non_finite_vector", vectors_path, None, "NaN or inf in the vector", index=index)
        else:
            keep.append(index)
            y.append(professions[record["p"]])
            z.append(genders[record["g"]])
            texts.append(record[text_key])
    frame = feature_frame([f"bios:{split}:{i}" for i in keep], vectors[keep])
    frame.insert(1, "text", texts)
    frame["y"] = np.asarray(y, dtype=np.int64)
    frame["z_gender"] = np.asarray(z, dtype=np.int64)
    return frame, {"records": len(records), "vectors": len(vectors), "dim": int(vectors.shape[1])}


def build_bios(
    inputs: Mapping[str, Path], options: Mapping[str, Any], seed: int, quarantine: Quarantine
) -> BuiltDataset:
    """Bias in Bios: ``y`` = profession (index of ``profession2index.txt``), private attribute ``gender``
    (``gender2index.txt``: m = 0, f = 1), the BERT [CLS] vector as features and the bio as ``text``."""
    profession_names = read_label_index(Path(inputs["professions"]))
    gender_codes = read_label_index(Path(inputs["genders"]))
    professions = {name: i for i, name in enumerate(profession_names)}
    genders = {code: i for i, code in enumerate(gender_codes)}
    text_key = options["text_key"]
    splits, counts = {}, {}
    for split in SPLITS:
        splits[split], counts[split] = _bios_split(split, inputs, text_key, professions, genders, quarantine)
    n_features = _same_dimension({Path(inputs[f"{s}_vectors"]): counts[s]["dim"] for s in SPLITS})
    return BuiltDataset(
        splits=splits,
        label_names=profession_names,
        private_attributes={"gender": [GENDER_NAMES.get(code, code) for code in gender_codes]},
        attribute_kinds={"gender": "demographic"},
        extra={
            "n_features": n_features,
            "feature_source": "BERT [CLS] vectors as distributed with the records",
            "text_key": text_key,
            "raw_counts": {s: {k: v for k, v in counts[s].items() if k != "dim"} for s in SPLITS},
        },
    )
