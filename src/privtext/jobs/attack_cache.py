"""Attacks computed inside the train job and published by the attack job (one process start-up per point).

An attack job alone pays a whole process start-up (torch and scikit-learn imports, seconds here) for work
of the same order. So the train job, which has everything loaded, attacks its own releases right after
writing them and leaves the results beside them in ``attack_precomputed.json`` (a declared output of the
``train`` rule and input of ``attack``), keyed by everything they depend on: the attackers, the row cap, the
seed, the thread count and device asked for, the sha256 of the three released files and of the private
labels they are scored against. The ``attack`` rule stays a separate cached output with its own rerun
trigger (its params are ``attack.*``): its job publishes the stored result when the key matches (JSON, file
hashes and labels, no torch) and attacks afresh otherwise, e.g. after ``attack.*`` changed or when the train
job ran without attacks. Word recovery is computed by the attack job only: the word sets are its input, not
the train job's, so a new vocabulary reruns the attack jobs and no training.

The file is removed when a train job starts (:func:`discard`), written whole or not at all (:func:`store`),
and one that cannot be read (truncated, not JSON) is a miss, not an error (:func:`stored`).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import tempfile
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from privtext.data import SPLITS
from privtext.runtime.provenance import sha256_file

PRECOMPUTED = "attack_precomputed.json"
# Bumped when what a stored part holds changes, so that results stored by older code are not published
# (4: the `linear` attacker became scikit-learn's own LogisticRegression, 2026-12-01).
FORMAT = 4

log = logging.getLogger(__name__)


def labels_sha256(labels: Mapping[str, Mapping[str, np.ndarray]], meta: Mapping[str, Any]) -> str:
    """sha256 of what the attribute attackers are scored against: each split's private labels (split →
    attribute → int labels) and the dataset's attributes, value names and kinds."""
    digest = hashlib.sha256(json.dumps({"private_attributes": meta["private_attributes"],
                                        "attribute_kinds": meta["attribute_kinds"]}, sort_keys=True).encode())
    for split in SPLITS:
        for attribute in sorted(labels[split]):
            values = np.ascontiguousarray(labels[split][attribute], dtype="<i8")
            digest.update(f"\n{split}/{attribute}/{len(values)}\n".encode())
            digest.update(values.tobytes())
    return digest.hexdigest()


def attack_keys(run_dir: str | Path, *, attackers: Sequence[str], seed: int, max_train: int | None, threads: int,
                device: str, labels: Mapping[str, Mapping[str, np.ndarray]],
                meta: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """What the attribute attackers' result is a function of: their settings, the thread count (it moves
    torch's numbers, privtext.runtime.threads) and the device asked for, the released files and the labels
    (``labels``: split → attribute → labels, ``meta``: the dataset's meta.json)."""
    released = {s: sha256_file(Path(run_dir) / f"released_{s}.npy") for s in SPLITS}
    return {"attributes": {"format": FORMAT, "seed": int(seed), "max_train": max_train, "attackers": list(attackers),
                           "threads": int(threads), "device": str(device), "released_sha256": released,
                           "labels_sha256": labels_sha256(labels, meta)}}


def discard(run_dir: str | Path) -> None:
    """Remove the stored attacks: a train job starting will write other releases."""
    (Path(run_dir) / PRECOMPUTED).unlink(missing_ok=True)


def store(run_dir: str | Path, parts: Mapping[str, tuple[dict[str, Any], Any]]) -> None:
    """Keep attack results, part name → (key, JSON-ready result), for the attack job to publish; no parts:
    the train job attacked nothing. Written to a temporary file and renamed, so the file is whole or absent, and
    the temporary file removed if the write fails."""
    run_dir = Path(run_dir)
    text = json.dumps({name: {"key": key, "result": result} for name, (key, result) in parts.items()}) + "\n"
    descriptor, partial = tempfile.mkstemp(dir=run_dir, prefix=f".{PRECOMPUTED}.", suffix=".partial")
    try:
        with os.fdopen(descriptor, "w") as handle:
            handle.write(text)
        os.replace(partial, run_dir / PRECOMPUTED)
    except BaseException:  # a failed write (a full disk, an interrupt) leaves no partial file behind
        Path(partial).unlink(missing_ok=True)
        raise


def stored(run_dir: str | Path, keys: Mapping[str, dict[str, Any]]) -> dict[str, Any]:
    """The stored result of each part of ``keys`` that was computed for exactly its key (part → result). A
    missing or unreadable file (truncated by a crash, not JSON) is a miss: the attack job attacks afresh."""
    path = Path(run_dir) / PRECOMPUTED
    try:
        entries = json.loads(path.read_text()) if path.exists() else {}
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        log.warning("%s is unreadable (%s): attacking afresh", path, error)
        entries = {}
    if not isinstance(entries, dict):
        log.warning("%s holds %s, not an object: attacking afresh", path, type(entries).__name__)
        entries = {}
    return {part: entries[part]["result"] for part, key in keys.items()
            if isinstance(entries.get(part), dict) and entries[part].get("key") == key}
