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
``released_test.npy``; ``compare`` refuses two files whose releases differ (then the attackers did not see
the same data). ``attack`` reruns the attackers of the config (``--attackers``, default ``mlp sklearn_mlp
linear``) with the point's own seed and ``--max-train`` (the default config's 10,000), as the attack rule does.
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
import time
from pathlib import Path
from typing import Any

FIELDS = ("point", "attacker", "attribute", "accuracy", "seconds", "released_test_sha256")


def _points(results: Path, datasets: list[str], marker: str) -> list[Path]:
    points = sorted(p.parent for d in datasets for p in (results / "runs" / d).glob(f"**/{marker}"))
    if not points:
        sys.exit(f"no {marker} under {results}/runs/{{{','.join(datasets)}}}")
    return points


def _rows(results: Path, point: Path, attack_result: dict) -> list[dict]:
    from privtext.provenance import sha256_file

    released = sha256_file(point / "released_test.npy")
    return [{"point": str(point.relative_to(results / "runs")), "attacker": name, "attribute": attribute,
             "accuracy": scores["accuracy"], "seconds": round(scores["seconds"], 4), "released_test_sha256": released}
            for name, outcome in attack_result["attackers"].items() for attribute, scores in outcome["attributes"].items()]


def _write(rows: list[dict], out: Path, points: int, started: float) -> None:
    with open(out, "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=FIELDS)
        writer.writeheader()
        writer.writerows(rows)
    print(f"{points} points, {len(rows)} cells in {time.perf_counter() - started:.1f} s -> {out}")


def collect(results: Path, datasets: list[str], out: Path) -> None:
    started = time.perf_counter()
    points = _points(results, datasets, "attack.json")
    rows = [row for point in points for row in _rows(results, point, json.loads((point / "attack.json").read_text()))]
    _write(rows, out, len(points), started)


def attack(results: Path, datasets: list[str], attackers: list[str], max_train: int | None, out: Path) -> None:
    from privtext.data import read_meta
    from privtext.runs import _attack

    started = time.perf_counter()
    points = _points(results, datasets, "released_test.npy")
    rows = []
    for point in points:
        data_dir = results / "data" / point.relative_to(results / "runs").parts[0]
        seed = int(point.name.split("~")[1])
        rows += _rows(results, point, _attack(read_meta(data_dir), data_dir, point, attackers, seed, max_train, 1, "cpu"))
    _write(rows, out, len(points), started)


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
    groups: dict[tuple[str, str], list[tuple[str, str, str]]] = {}
    for key in sorted(old):
        groups.setdefault((key[0].split("/")[0], key[1]), []).append(key)
    print("| dataset, attacker | cells | same | higher | lower | mean accuracy before → after | seconds per cell before → after |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for (dataset, attacker), keys in groups.items():
        diffs = [new[k]["accuracy"] - old[k]["accuracy"] for k in keys]
        mean = lambda values: sum(values) / len(values)  # noqa: E731
        print(f"| {dataset}, {attacker} | {len(keys)} | {sum(d == 0 for d in diffs)} | {sum(d > 0 for d in diffs)} | "
              f"{sum(d < 0 for d in diffs)} | {mean([old[k]['accuracy'] for k in keys]):.4f} → "
              f"{mean([new[k]['accuracy'] for k in keys]):.4f} | {mean([old[k]['seconds'] for k in keys]):.3f} → "
              f"{mean([new[k]['seconds'] for k in keys]):.3f} |")
    lower = [(k, old[k]["accuracy"], new[k]["accuracy"]) for k in sorted(old) if new[k]["accuracy"] < old[k]["accuracy"]]
    for key, was, now in lower:
        print(f"lower: {' '.join(key)}: {was:.4f} -> {now:.4f}")


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
