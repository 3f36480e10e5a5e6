"""Synthetic files in the published formats of ``twitter`` and ``bios``, for tests and dry runs.

The real files (DeepMoji Twitter cells, Bias-in-Bios pickles and [CLS] vectors) are not available offline.
These writers produce the same layouts (see :mod:`privtext.data.sources`) with small vectors that carry a
learnable label signal and a private-attribute signal, and can plant defects whose quarantine counts they
return, so a test knows exactly what a builder must report.
"""

from __future__ import annotations

import pickle
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping

import numpy as np

from privtext.data.sources import DEEPMOJI_CELLS, SPLIT_NAMES

BIOS_DEFECTS = (
    "not_a_dict", "missing_gender", "unknown_gender", "missing_profession", "unknown_profession", "missing_text",
    "non_finite_vector",
)
SMALL_PROFESSIONS = ("accountant", "nurse", "software_engineer", "surgeon", "yoga_teacher")
PRONOUNS = {"m": "He", "f": "She"}


@dataclass
class SyntheticFiles:
    """What was written: relpath -> file, and what a builder should report."""

    files: dict[str, Path]
    expected_examples: dict[str, int]
    expected_quarantine: dict[str, int] = field(default_factory=dict)


def _signal_vectors(rng: np.random.Generator, n: int, dim: int, label: int, private: int, strength: float) -> np.ndarray:
    """Gaussian noise with the label on coordinate ``label`` (mod dim) and the private value on the last one."""
    vectors = rng.normal(0.0, 1.0, size=(n, dim))
    vectors[:, label % (dim - 1)] += strength
    vectors[:, -1] += strength * (2 * private - 1)
    return vectors.astype(np.float32)


def write_twitter_files(
    raw_dir: str | Path,
    rows_per_cell: int | Mapping[str, int],
    *,
    seed: int,
    dim: int = 16,
    presplit: bool = True,
    strength: float = 1.5,
    non_finite: Mapping[str, int] | None = None,
) -> SyntheticFiles:
    """DeepMoji-style ``.npy`` cells under ``raw_dir/deepmoji``: ``{split}/{cell}.npy`` when ``presplit`` (Ravfogel
    et al.'s split), else ``{cell}.npy``. ``rows_per_cell`` is per split when presplit, per file otherwise.
    ``non_finite`` maps a relpath to how many of its rows get a NaN."""
    raw_dir, rng = Path(raw_dir), np.random.default_rng(seed)
    non_finite = dict(non_finite or {})
    files, quarantine = {}, Counter()
    groups = [f"{split}/" for split in SPLIT_NAMES] if presplit else [""]
    for group in groups:
        for cell in DEEPMOJI_CELLS:
            relpath = f"deepmoji/{group}{cell}.npy"
            split = group.rstrip("/") or "all"
            n = rows_per_cell if isinstance(rows_per_cell, int) else rows_per_cell[split]
            sentiment, race = (int(part == "pos") for part in cell.split("_"))
            vectors = _signal_vectors(rng, n, dim, sentiment, race, strength)
            bad = non_finite.pop(relpath, 0)
            vectors[rng.choice(n, size=bad, replace=False), rng.integers(dim)] = np.nan
            quarantine["non_finite_vector"] += bad
            path = raw_dir / relpath
            path.parent.mkdir(parents=True, exist_ok=True)
            np.save(path, vectors, allow_pickle=False)
            files[relpath] = path
    if non_finite:
        raise ValueError(f"non_finite names files that were not written: {sorted(non_finite)}")
    expected = {}
    if presplit:
        counts = rows_per_cell if not isinstance(rows_per_cell, int) else {s: rows_per_cell for s in SPLIT_NAMES}
        expected = {s: 4 * counts[s] for s in SPLIT_NAMES}
    return SyntheticFiles(files, expected, dict(+quarantine))


def _bio(rng: np.random.Generator, gender: str, profession: str) -> dict:
    name = profession.replace("_", " ")
    hard = f"{PRONOUNS[gender]} works as a {name} and has {rng.integers(2, 30)} years of experience ."
    return {
        "g": gender,
        "p": profession,
        "text": f"Alex Doe is a {name} . {hard}",
        "start": 18,
        "hard_text": hard.lower(),
        "hard_text_untokenized": hard.replace(" .", "."),
        "text_without_gender": hard.replace(PRONOUNS[gender], "_"),
    }


def _plant_bios(record: dict, defect: str) -> object:
    if defect == "not_a_dict":
        return [record["g"], record["p"]]
    if defect == "missing_gender":
        del record["g"]
    elif defect == "unknown_gender":
        record["g"] = "x"
    elif defect == "missing_profession":
        record["p"] = None
    elif defect == "unknown_profession":
        record["p"] = "astronaut"
    elif defect == "missing_text":
        record["hard_text"] = ""
    return record


def write_bios_files(
    raw_dir: str | Path,
    records_per_split: Mapping[str, int],
    *,
    seed: int,
    dim: int = 12,
    professions: tuple[str, ...] = SMALL_PROFESSIONS,
    layout: str = "federate",
    strength: float = 2.0,
    defects: Mapping[str, int] | None = None,
    extra_records: Mapping[str, int] | None = None,
    extra_vectors: Mapping[str, int] | None = None,
    write_index: bool = True,
) -> SyntheticFiles:
    """Bias-in-Bios files under ``raw_dir``: ``biasbios/{split}.pickle`` (lists of record dicts, plain data only),
    the [CLS]-like vectors (``biasbios/{split}.pickle_bert_cls.npy`` for the ``federate`` layout,
    ``bert_encode_biasbios/{split}_cls.npy`` for ``inlp``) and, when ``write_index``, the two ``*2index.txt``
    files. ``defects`` plants that many bad records in train; ``extra_records``/``extra_vectors`` add that many
    unpaired records or vectors at the end of a split."""
    raw_dir, rng = Path(raw_dir), np.random.default_rng(seed)
    defects, extra_records, extra_vectors = dict(defects or {}), dict(extra_records or {}), dict(extra_vectors or {})
    unknown = set(defects) - set(BIOS_DEFECTS)
    if unknown:
        raise ValueError(f"unknown Bios defects {sorted(unknown)}; known: {BIOS_DEFECTS}")
    files, quarantine, expected = {}, Counter(), {}
    if write_index:
        for relpath, names in (("biasbios/profession2index.txt", professions), ("biasbios/gender2index.txt", ("m", "f"))):
            path = raw_dir / relpath
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("".join(f"{name}\t{i}\n" for i, name in enumerate(names)))
            files[relpath] = path
    for split in SPLIT_NAMES:
        n = records_per_split[split]
        genders = ["mf"[i % 2] for i in range(n)]
        labels = [i % len(professions) for i in range(n)]
        records = [_bio(rng, g, professions[p]) for g, p in zip(genders, labels)]
        vectors = np.concatenate(
            [_signal_vectors(rng, 1, dim, 3 * p, int(g == "f"), strength) for g, p in zip(genders, labels)]
        )
        if split == "train":
            # Defects go on the last records so every class keeps its sound examples at the front.
            position = n
            for defect, count in sorted(defects.items()):
                for _ in range(count):
                    position -= 1
                    if defect == "non_finite_vector":
                        vectors[position, 0] = np.inf
                    else:
                        records[position] = _plant_bios(records[position], defect)
                    quarantine[defect] += 1
            expected[split] = position
        else:
            expected[split] = n
        records += [_bio(rng, "f", professions[0]) for _ in range(extra_records.get(split, 0))]
        quarantine["record_without_vector"] += extra_records.get(split, 0)
        vectors = np.concatenate([vectors, _signal_vectors(rng, extra_vectors.get(split, 0), dim, 0, 0, strength)])
        quarantine["vector_without_record"] += extra_vectors.get(split, 0)
        record_rel = f"biasbios/{split}.pickle"
        vector_rel = f"biasbios/{split}.pickle_bert_cls.npy" if layout == "federate" else f"bert_encode_biasbios/{split}_cls.npy"
        for relpath in (record_rel, vector_rel):
            (raw_dir / relpath).parent.mkdir(parents=True, exist_ok=True)
        (raw_dir / record_rel).write_bytes(pickle.dumps(records, protocol=4))
        np.save(raw_dir / vector_rel, vectors, allow_pickle=False)
        files[record_rel], files[vector_rel] = raw_dir / record_rel, raw_dir / vector_rel
    return SyntheticFiles(files, expected, dict(+quarantine))
