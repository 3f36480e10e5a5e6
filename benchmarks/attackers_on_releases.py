"""The fresh attackers of the library on released representations a run already wrote, for comparing two
versions of the attackers on the very same releases.

    # the attackers of the checkout on PYTHONPATH, over every point of a results folder:
    .venv/bin/python benchmarks/attackers_on_releases.py attack --results results --datasets demo adult --out new.csv
    PYTHONPATH=<old checkout>/src .venv/bin/python benchmarks/attackers_on_releases.py attack ... --out old.csv
    # cell by cell (point × attacker × attribute): same / higher / lower, and the means
    .venv/bin/python benchmarks/attackers_on_releases.py compare old.csv new.csv

``attack`` reruns the attackers of the config (``--attackers``, default ``mlp sklearn_mlp linear``) with the
point's own seed and ``--max-train`` (the default config's 10,000) on each point's ``released_*.npy``, as the
attack rule does, and writes one row per cell with the test accuracy and the seconds the attacker took.
"""

from __future__ import annotations

import argparse
import csv
import sys
import time
from pathlib import Path

FIELDS = ("point", "attacker", "attribute", "accuracy", "seconds")


def attack(results: Path, datasets: list[str], attackers: list[str], max_train: int | None, out: Path) -> None:
    from privtext.data import read_meta
    from privtext.runs import _attack

    points = sorted(p.parent for d in datasets for p in (results / "runs" / d).glob("**/released_test.npy"))
    if not points:
        sys.exit(f"no released_test.npy under {results}/runs/{{{','.join(datasets)}}}")
    rows, started = [], time.perf_counter()
    for point in points:
        dataset = point.relative_to(results / "runs").parts[0]
        data_dir = results / "data" / dataset
        seed = int(point.name.split("~")[1])
        result = _attack(read_meta(data_dir), data_dir, point, attackers, seed, max_train, 1, "cpu")
        for name, outcome in result["attackers"].items():
            for attribute, scores in outcome["attributes"].items():
                rows.append({"point": str(point.relative_to(results / "runs")), "attacker": name, "attribute": attribute,
                             "accuracy": scores["accuracy"], "seconds": round(scores["seconds"], 4)})
    with open(out, "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=FIELDS)
        writer.writeheader()
        writer.writerows(rows)
    print(f"{len(points)} points, {len(rows)} cells in {time.perf_counter() - started:.1f} s -> {out}")


def compare(before: Path, after: Path) -> None:
    def read(path: Path) -> dict[tuple[str, str, str], dict[str, float]]:
        with open(path) as handle:
            return {(r["point"], r["attacker"], r["attribute"]): {"accuracy": float(r["accuracy"]), "seconds": float(r["seconds"])}
                    for r in csv.DictReader(handle)}

    old, new = read(before), read(after)
    if old.keys() != new.keys():
        sys.exit(f"the two files cover different cells ({len(old.keys() ^ new.keys())} differ)")
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
    if args.command == "attack":
        attack(args.results, args.datasets, args.attackers, args.max_train, args.out)
    else:
        compare(args.before, args.after)


if __name__ == "__main__":
    main()
