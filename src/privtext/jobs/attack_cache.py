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


def _released(run_dir: str | Path) -> dict[str, str]:
    return {s: sha256_file(Path(run_dir) / f"released_{s}.npy") for s in SPLITS}


def attack_key(run_dir: str | Path, *, attackers: Sequence[str], seed: int, max_train: int | None) -> dict[str, Any]:
    """What the attribute attackers' results are a function of (threads and device change no number)."""
    return {"format": FORMAT, "attackers": list(attackers), "seed": int(seed), "max_train": max_train,
            "released_sha256": _released(run_dir)}


def inversion_key(run_dir: str | Path, words: str | Path, *, attacker: str, seed: int,
                  max_train: int | None) -> dict[str, Any]:
    """What a word-recovery result is a function of: the word sets hold the vocabulary settings."""
    return {"format": FORMAT, "attacker": attacker, "seed": int(seed), "max_train": max_train,
            "words_sha256": sha256_file(words), "released_sha256": _released(run_dir)}


def store(run_dir: str | Path, parts: Mapping[str, tuple[dict[str, Any], Any]]) -> None:
    """Keep attack results, part name → (key, JSON-ready result), for the attack job to publish."""
    (Path(run_dir) / PRECOMPUTED).write_text(
        json.dumps({name: {"key": key, "result": result} for name, (key, result) in parts.items()}) + "\n")


def stored(run_dir: str | Path, part: str, key: dict[str, Any]) -> Any | None:
    """The stored result of ``part`` if it was computed for exactly ``key``, else None."""
    path = Path(run_dir) / PRECOMPUTED
    if not path.exists():
        return None
    entry = json.loads(path.read_text()).get(part)
    return entry["result"] if isinstance(entry, dict) and entry.get("key") == key else None
