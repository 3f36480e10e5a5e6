"""Attacks computed inside the train job and published by the attack job (one process start-up per point).

An attack job alone pays a whole process start-up (torch and scikit-learn imports, seconds here) for work
of the same order. So the train job, which has everything loaded, attacks its own releases right after
writing them and leaves the result beside them in ``attack_precomputed.json``, keyed by everything the
result depends on: the attackers, the row cap, the seed and the sha256 of the three released files. The
``attack`` rule stays a separate cached output with its own rerun trigger (its params are ``attack.*``):
its job publishes the stored result when the key matches (JSON and three file hashes, no torch) and attacks
afresh otherwise, e.g. after ``attack.*`` changed or when the train job ran without attacks.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Sequence

from privtext.data import SPLITS
from privtext.runtime.provenance import sha256_file

PRECOMPUTED = "attack_precomputed.json"


def attack_key(run_dir: str | Path, *, attackers: Sequence[str], seed: int, max_train: int | None) -> dict[str, Any]:
    """What an attack.json is a function of (threads and device change no number)."""
    return {
        "attackers": list(attackers), "seed": int(seed), "max_train": max_train,
        "released_sha256": {s: sha256_file(Path(run_dir) / f"released_{s}.npy") for s in SPLITS},
    }


def store(run_dir: str | Path, key: dict[str, Any], result_json: str) -> None:
    """Keep an attack result (its attack.json text) for the attack job to publish."""
    (Path(run_dir) / PRECOMPUTED).write_text(json.dumps({"key": key, "result": json.loads(result_json)}) + "\n")


def publish(run_dir: str | Path, out_path: str | Path, key: dict[str, Any]) -> bool:
    """Write the stored result to ``out_path`` if it was computed for exactly ``key``; say whether it was."""
    stored_path = Path(run_dir) / PRECOMPUTED
    if not stored_path.exists():
        return False
    stored = json.loads(stored_path.read_text())
    if stored.get("key") != key:
        return False
    Path(out_path).write_text(json.dumps(stored["result"], indent=2) + "\n")
    return True
