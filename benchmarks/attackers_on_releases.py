"""Two versions of the attackers on the very same released representations, cell by cell.

    # either: the attack.json files of two finished runs of the same study (e.g. clean clones of two commits)
    .venv/bin/python benchmarks/attackers_on_releases.py collect --results <old clone>/results --out old.csv
    .venv/bin/python benchmarks/attackers_on_releases.py collect --results <new clone>/results --out new.csv
    # or: the attackers of the checkout on PYTHONPATH, rerun on one results folder's releases
    .venv/bin/python benchmarks/attackers_on_releases.py attack --results results --out new.csv
    PYTHONPATH=<old checkout>/src .venv/bin/python benchmarks/attackers_on_releases.py attack --results results --out old.csv
    # cell by cell (point × attacker × attribute): same / higher / lower, and the means
    .venv/bin/python benchmarks/attackers_on_releases.py compare old.csv new.csv

Both write one row per cell with the attacker's test accuracy, its seconds and the sha256 of the point's
``released_test.npy``, and beside the CSV (``<out>.correct.npz``) which test examples the attacker got right.
``compare`` refuses two files whose releases differ (then the attackers did not see the same data).
``attack`` reruns the attackers of the config (``--attackers``, default ``mlp sklearn_mlp linear``) with the
point's own seed and ``--max-train`` (the default config's 10,000), as the attack rule does, through
``privtext.jobs.runs.attack_grid_point``, which every version of the code since the attackers exist has.

Two attackers that differ only in floating-point rounding cannot be held to "the same or higher" test
accuracy cell by cell: a few test predictions flip either way. So ``compare`` also asks, per cell, whether
the new attacker is weaker than the old beyond chance: the exact one-sided McNemar test on the test examples
the two attackers disagree on (b = only the old one right, c = only the new one right; under "equally strong"
each disagreement is a fair coin, and p = P(Bin(b + c, 1/2) >= b)), with Holm's correction over all cells.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import json
import math
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow.parquet as pq

FIELDS = ("point", "attacker", "attribute", "accuracy", "seconds", "released_test_sha256")


def _points(results: Path, datasets: list[str], marker: str) -> list[Path]:
    points = sorted(p.parent for d in datasets for p in (results / "runs" / d).glob(f"**/{marker}"))
    if not points:
        sys.exit(f"no {marker} under {results}/runs/{{{','.join(datasets)}}}")
    return points


def _sha256(path: Path) -> str:
    # hashlib, not privtext.runtime.provenance: `attack` runs under older checkouts of privtext too
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _cells(results: Path, point: Path, attack_result: dict) -> tuple[list[dict], dict[str, np.ndarray]]:
    """The point's rows and, per cell, which test examples the attacker got right (from its predictions)."""
    released = _sha256(point / "released_test.npy")
    name = str(point.relative_to(results / "runs"))
    test = pq.read_table(_data_dir(results, point) / "test.parquet")
    rows, correct = [], {}
    for attacker, outcome in attack_result["attackers"].items():
        for attribute, scores in outcome["attributes"].items():
            rows.append({"point": name, "attacker": attacker, "attribute": attribute, "accuracy": scores["accuracy"],
                         "seconds": round(scores["seconds"], 4), "released_test_sha256": released})
            truth = test.column(f"z_{attribute}").to_numpy()
            predicted = np.asarray(outcome["predictions"][attribute])
            correct[_key(name, attacker, attribute)] = (predicted == truth).astype(np.uint8)
    return rows, correct


def _data_dir(results: Path, point: Path) -> Path:
    """The dataset folder of a point ``results/runs/<dataset>/...``."""
    return results / "data" / point.relative_to(results / "runs").parts[0]


def _gather(results: Path, points: list[Path], attack_result_of: Any) -> tuple[list[dict], dict[str, np.ndarray]]:
    """Rows and correctness of every point, from ``attack_result_of(point)`` (an attack.json's content)."""
    rows, correct = [], {}
    for point in points:
        point_rows, point_correct = _cells(results, point, attack_result_of(point))
        rows += point_rows
        correct.update(point_correct)
    return rows, correct


def _key(point: str, attacker: str, attribute: str) -> str:
    return f"{point}|{attacker}|{attribute}"


def _write(rows: list[dict], correct: dict[str, np.ndarray], out: Path, points: int, started: float) -> None:
    with open(out, "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=FIELDS)
        writer.writeheader()
        writer.writerows(rows)
    np.savez_compressed(_correct_path(out), **correct)
    print(f"{points} points, {len(rows)} cells in {time.perf_counter() - started:.1f} s -> {out}")


def _correct_path(out: Path) -> Path:
    return out.with_suffix(".correct.npz")


def collect(results: Path, datasets: list[str], out: Path) -> None:
    started = time.perf_counter()
    points = _points(results, datasets, "attack.json")
    rows, correct = _gather(results, points, lambda point: json.loads((point / "attack.json").read_text()))
    _write(rows, correct, out, len(points), started)


def attack(results: Path, datasets: list[str], attackers: list[str], max_train: int | None, out: Path) -> None:
    from privtext.jobs.runs import attack_grid_point

    started = time.perf_counter()
    points = _points(results, datasets, "released_test.npy")
    with tempfile.TemporaryDirectory() as scratch:
        def attacked(point: Path) -> dict:
            return attack_grid_point(data_dir=_data_dir(results, point), run_dir=point,
                                     out_path=Path(scratch) / "attack.json", attackers=attackers,
                                     seed=int(point.name.split("~")[1]), max_train=max_train, threads=1)

        rows, correct = _gather(results, points, attacked)
    _write(rows, correct, out, len(points), started)


def weaker_p_value(old_only: int, new_only: int) -> float:
    """One-sided exact McNemar p-value of "the new attacker is weaker": P(Bin(b + c, 1/2) >= b) with
    b = ``old_only`` (test examples only the old attacker got right) and c = ``new_only``."""
    n = old_only + new_only
    # math.comb: exact integers for any n here (no scipy in the project's attack path)
    return sum(math.comb(n, k) for k in range(old_only, n + 1)) / 2 ** n


def holm(p_values: dict[Any, float], level: float = 0.05) -> set[Any]:
    """The keys whose hypotheses Holm's step-down procedure rejects at family-wise ``level``."""
    # imported here: `attack` runs this file under older checkouts, which have no privtext.measures.multiple_testing
    from privtext.measures.multiple_testing import holm as holm_rejects

    keys = list(p_values)
    return {key for key, rejected in zip(keys, holm_rejects([p_values[k] for k in keys], level)) if rejected}


def compare(before: Path, after: Path) -> None:
    def read(path: Path) -> dict[tuple[str, str, str], dict[str, Any]]:
        with open(path) as handle:
            return {(r["point"], r["attacker"], r["attribute"]):
                    {"accuracy": float(r["accuracy"]), "seconds": float(r["seconds"]), "released": r["released_test_sha256"]}
                    for r in csv.DictReader(handle)}

    old, new = read(before), read(after)
    if old.keys() != new.keys():
        sys.exit(f"the two files cover different cells ({len(old.keys() ^ new.keys())} differ)")
    differing = sorted({k[0] for k in old if old[k]["released"] != new[k]["released"]})
    if differing:
        sys.exit(f"{len(differing)} points were attacked on different releases, e.g. {differing[0]}")
    print(f"{len({k[0] for k in old})} points, the same released_test.npy in both")
    paired = _correct_path(before).exists() and _correct_path(after).exists()
    p_values: dict[tuple[str, str, str], float] = {}
    if paired:
        with np.load(_correct_path(before), allow_pickle=False) as was, np.load(_correct_path(after), allow_pickle=False) as now:
            for key in old:
                right_before, right_after = was[_key(*key)].astype(bool), now[_key(*key)].astype(bool)
                p_values[key] = weaker_p_value(int((right_before & ~right_after).sum()), int((~right_before & right_after).sum()))
    weaker = holm(p_values)
    groups: dict[tuple[str, str], list[tuple[str, str, str]]] = {}
    for key in sorted(old):
        groups.setdefault((key[0].split("/")[0], key[1]), []).append(key)
    print("| dataset, attacker | cells | same | higher | lower | least p of a lower cell (weaker after Holm) "
          "| mean accuracy before → after | seconds per cell before → after |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for (dataset, attacker), keys in groups.items():
        diffs = [new[k]["accuracy"] - old[k]["accuracy"] for k in keys]
        mean = lambda values: sum(values) / len(values)  # noqa: E731
        lower_p = [p_values[k] for k, d in zip(keys, diffs) if d < 0 and k in p_values]
        test = f"{min(lower_p):.3f} ({sum(k in weaker for k in keys)})" if lower_p else ("—" if paired else "not paired")
        print(f"| {dataset}, {attacker} | {len(keys)} | {sum(d == 0 for d in diffs)} | {sum(d > 0 for d in diffs)} | "
              f"{sum(d < 0 for d in diffs)} | {test} | {mean([old[k]['accuracy'] for k in keys]):.4f} → "
              f"{mean([new[k]['accuracy'] for k in keys]):.4f} | {mean([old[k]['seconds'] for k in keys]):.3f} → "
              f"{mean([new[k]['seconds'] for k in keys]):.3f} |")
    lower = [(k, old[k]["accuracy"], new[k]["accuracy"]) for k in sorted(old) if new[k]["accuracy"] < old[k]["accuracy"]]
    for key, was, now in lower:
        p = f", one-sided exact McNemar p = {p_values[key]:.3f}" if key in p_values else ""
        print(f"lower: {' '.join(key)}: {was:.4f} -> {now:.4f}{p}")
    if paired:
        print(f"cells where the new attacker is weaker beyond chance (Holm, 5% family-wise): {len(weaker)} of {len(old)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    gather = commands.add_parser("collect")
    gather.add_argument("--results", type=Path, default=Path("results"))
    gather.add_argument("--datasets", nargs="+", default=["demo", "adult"])
    gather.add_argument("--out", type=Path, required=True)
    run = commands.add_parser("attack")
    run.add_argument("--results", type=Path, default=Path("results"))
    run.add_argument("--datasets", nargs="+", default=["demo", "adult"])
    run.add_argument("--attackers", nargs="+", default=["mlp", "sklearn_mlp", "linear"])
    run.add_argument("--max-train", type=lambda v: None if v == "none" else int(v), default=10000,
                     help="cap on the attackers' fitting rows; none = all")
    run.add_argument("--out", type=Path, required=True)
    diff = commands.add_parser("compare")
    diff.add_argument("before", type=Path)
    diff.add_argument("after", type=Path)
    args = parser.parse_args()
    if args.command == "collect":
        collect(args.results, args.datasets, args.out)
    elif args.command == "attack":
        attack(args.results, args.datasets, args.attackers, args.max_train, args.out)
    else:
        compare(args.before, args.after)


if __name__ == "__main__":
    main()
