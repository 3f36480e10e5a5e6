"""Attacks computed inside the train job and published by the attack job (one process start-up per point).

An attack job alone pays a whole process start-up (torch and scikit-learn imports, seconds here) for work
of the same order. So the train job, which has everything loaded, attacks its own releases right after
writing them and leaves the results beside them in ``attack_precomputed.json``, each part (the attribute
attackers, word recovery) keyed by everything it depends on: the attackers, the row cap, the seed, the sha256
of the three released files and, for word recovery, of the dataset's word sets. The ``attack`` rule stays a
separate cached output with its own rerun trigger (its params are ``attack.*``): its job publishes each
stored part whose key matches (JSON and file hashes, no torch) and computes the others afresh, e.g. after
``attack.*`` changed, when the train job ran without attacks or before the word sets were written.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Mapping, Sequence

from privtext.data import SPLITS
from privtext.runtime.provenance import sha256_file

PRECOMPUTED = "attack_precomputed.json"
# Bumped when what a stored part holds changes, so that results stored by older code are not published.
FORMAT = 2


def attack_keys(run_dir: str | Path, *, attackers: Sequence[str], seed: int, max_train: int | None,
                word_attacker: str | None = None, words: str | Path | None = None) -> dict[str, dict[str, Any]]:
    """What each part's result is a function of (threads and device change no number): the attribute
    attackers', and word recovery's when ``word_attacker`` runs on the word sets ``words`` (which hold the
    vocabulary settings). The released files are hashed once for both."""
    released = {s: sha256_file(Path(run_dir) / f"released_{s}.npy") for s in SPLITS}
    common = {"format": FORMAT, "seed": int(seed), "max_train": max_train, "released_sha256": released}
    keys = {"attributes": {**common, "attackers": list(attackers)}}
    if word_attacker is not None and words is not None:
        keys["inversion"] = {**common, "attacker": word_attacker, "words_sha256": sha256_file(words)}
    return keys


def store(run_dir: str | Path, parts: Mapping[str, tuple[dict[str, Any], Any]]) -> None:
    """Keep attack results, part name → (key, JSON-ready result), for the attack job to publish."""
    (Path(run_dir) / PRECOMPUTED).write_text(
        json.dumps({name: {"key": key, "result": result} for name, (key, result) in parts.items()}) + "\n")


def stored(run_dir: str | Path, keys: Mapping[str, dict[str, Any]]) -> dict[str, Any]:
    """The stored result of each part of ``keys`` that was computed for exactly its key (part → result)."""
    path = Path(run_dir) / PRECOMPUTED
    entries = json.loads(path.read_text()) if path.exists() else {}
    return {part: entries[part]["result"] for part, key in keys.items()
            if isinstance(entries.get(part), dict) and entries[part].get("key") == key}
