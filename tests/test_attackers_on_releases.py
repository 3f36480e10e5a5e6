"""The paired comparison of two attacker versions (benchmarks/attackers_on_releases.py) on hand-computed cases."""

from __future__ import annotations

import csv
import importlib.util
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "attackers_on_releases.py"
spec = importlib.util.spec_from_file_location("attackers_on_releases", SCRIPT)
releases = importlib.util.module_from_spec(spec)
spec.loader.exec_module(releases)


@pytest.mark.parametrize("old_only, new_only, expected", [
    (0, 0, Fraction(1)),  # no disagreement: no evidence at all
    (3, 0, Fraction(1, 8)),  # three disagreements, all won by the old attacker: (1/2)^3
    (1, 1, Fraction(3, 4)),  # P(Bin(2, 1/2) >= 1)
    (5, 2, Fraction(1 + 7 + 21, 128)),  # P(Bin(7, 1/2) >= 5) = (C(7,7) + C(7,6) + C(7,5)) / 2^7
    (0, 4, Fraction(1)),  # the new attacker won every disagreement
])
def test_weaker_p_value_is_the_exact_one_sided_binomial_tail(old_only, new_only, expected):
    assert releases.weaker_p_value(old_only, new_only) == pytest.approx(float(expected), abs=1e-15)


def test_holm_steps_down_and_stops_at_the_first_kept_hypothesis():
    # sorted: a 0.01 <= 0.05/3 rejected; c 0.03 > 0.05/2 kept, so b (0.04) is kept too
    assert releases.holm({"a": 0.01, "b": 0.04, "c": 0.03}) == {"a"}
    assert releases.holm({"a": 0.01, "b": 0.02}) == {"a", "b"}  # 0.01 <= 0.025, then 0.02 <= 0.05
    assert releases.holm({}) == set()


def _write_version(path: Path, correct: dict[tuple[str, str, str], list[int]]) -> None:
    rows = [{"point": p, "attacker": a, "attribute": z, "accuracy": float(np.mean(c)), "seconds": 0.1,
             "released_test_sha256": "same"} for (p, a, z), c in correct.items()]
    with open(path, "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=releases.FIELDS)
        writer.writeheader()
        writer.writerows(rows)
    np.savez_compressed(releases._correct_path(path),
                        **{releases._key(*k): np.array(c, dtype=np.uint8) for k, c in correct.items()})


def test_compare_flags_only_a_cell_that_is_weaker_beyond_chance(tmp_path, capsys):
    n = 40
    right = [1] * n
    slightly = [0] + [1] * (n - 1)  # one example lost: p = 1/2
    much = [0] * 12 + [1] * (n - 12)  # twelve examples lost and none gained: p = 2^-12
    before = {("demo/a/seed~1", "linear", "z"): right, ("demo/b/seed~1", "linear", "z"): right}
    after = {("demo/a/seed~1", "linear", "z"): slightly, ("demo/b/seed~1", "linear", "z"): much}
    _write_version(tmp_path / "before.csv", before)
    _write_version(tmp_path / "after.csv", after)
    releases.compare(tmp_path / "before.csv", tmp_path / "after.csv")
    out = capsys.readouterr().out
    assert "| demo, linear | 2 | 0 | 0 | 2 | 0.000 (1) |" in out  # least p 2^-12, and one cell rejected
    assert "demo/a/seed~1 linear z: 1.0000 -> 0.9750, one-sided exact McNemar p = 0.500" in out
    assert "weaker beyond chance (Holm, 5% family-wise): 1 of 2" in out
