"""Where a finished run's job-seconds went, by rule, dataset and method, from its per-job benchmark files.

    .venv/bin/python benchmarks/job_profile.py [--benchmarks results/benchmarks] [--by rule|dataset|method ...]
        [--top 25] [--wall-seconds S]

Every Snakemake job of the grid writes its wall seconds and CPU seconds to results/benchmarks/ (`benchmark:`).
This sums them per group (default: rule, dataset and method) and prints, largest first: the jobs, their wall
seconds (total, median, minimum) and CPU seconds, and each group's share of all job-seconds. The minimum of a
group whose jobs do the same work at different sizes is about its fixed cost per job (interpreter, imports,
reading inputs), so ``jobs × min`` bounds what fewer process start-ups could save there. ``--wall-seconds``
(the run's wall time, e.g. from `/usr/bin/time`) adds how busy the cores were: job-seconds / (wall × cores).
Rules without a `benchmark:` (tables, figures, the claims table) are not counted.

``--inside-train RESULTS`` splits each train job of a results folder instead, per dataset: its benchmark's wall
seconds into the training (``metrics.json`` ``seconds``), each in-job attacker (``attack_precomputed.json``) and
the rest (interpreter, imports, reading and writing files), in job-minutes.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import sys
from collections import defaultdict
from pathlib import Path
from statistics import median

sys.path.insert(0, str(Path(__file__).resolve().parent))
from paper_scale import PROJECT_ROOT, benchmark_rows  # noqa: E402  (a sibling script, not a package)

FIELDS = {"rule": 0, "dataset": 1, "method": 2}


def profile(roots: list[Path], by: list[str]) -> list[dict]:
    """One dict per group (the ``by`` fields of (rule, dataset, method)), largest total wall seconds first."""
    walls, cpus = defaultdict(list), defaultdict(float)
    for key, row, _, _ in benchmark_rows(roots):
        group = tuple(key[FIELDS[name]] for name in by)
        walls[group].append(float(row["s"]))
        cpus[group] += float(row.get("cpu_time") or 0.0)
    total = sum(sum(values) for values in walls.values()) or 1.0
    groups = [{**dict(zip(by, group)), "jobs": len(values), "wall_s": sum(values), "median_s": median(values),
               "min_s": min(values), "cpu_s": cpus[group], "share": sum(values) / total}
              for group, values in walls.items()]
    return sorted(groups, key=lambda g: -g["wall_s"])


def inside_train(results: Path) -> dict[str, dict[str, float]]:
    """dataset -> {"jobs", "wall", "training", "attacker <name>" ..., "rest"} in seconds, over every train job of
    ``results`` whose benchmark, metrics.json and attack_precomputed.json are all there."""
    parts: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for tsv in (results / "benchmarks" / "runs").glob("**/train.tsv"):
        run_dir = results / "runs" / tsv.parent.relative_to(results / "benchmarks" / "runs")
        metrics, stored = run_dir / "metrics.json", run_dir / "attack_precomputed.json"
        if not (metrics.is_file() and stored.is_file()):
            continue
        with open(tsv) as handle:
            wall = float(next(csv.DictReader(handle, delimiter="\t"))["s"])
        training = json.loads(metrics.read_text())["seconds"]
        attacks = json.loads(stored.read_text()).get("attributes", {}).get("result", {}).get("attackers", {})
        record = parts[run_dir.relative_to(results / "runs").parts[0]]
        record["jobs"] += 1
        record["wall"] += wall
        record["training"] += training
        for name, attack in attacks.items():
            record[f"attacker {name}"] += attack["seconds"]
        record["rest"] += wall - training - sum(attack["seconds"] for attack in attacks.values())
    return {dataset: dict(record) for dataset, record in sorted(parts.items())}


def print_inside_train(results: Path) -> None:
    parts = inside_train(results)
    if not parts:
        sys.exit(f"no train job with its benchmark, metrics.json and attack_precomputed.json under {results}")
    columns = sorted({c for record in parts.values() for c in record} - {"jobs", "wall", "training", "rest"})
    columns = ["wall", "training", *columns, "rest"]
    print("\t".join(["dataset", "jobs", *(f"{c} (job-min)" for c in columns)]))
    totals: dict[str, float] = defaultdict(float)
    for dataset, record in parts.items():
        print("\t".join([dataset, str(int(record["jobs"])), *(f"{record.get(c, 0.0) / 60:.1f}" for c in columns)]))
        for key, value in record.items():
            totals[key] += value
    print("\t".join(["total", str(int(totals["jobs"])), *(f"{totals.get(c, 0.0) / 60:.1f}" for c in columns)]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--benchmarks", type=Path, nargs="+", default=[PROJECT_ROOT / "results" / "benchmarks"])
    parser.add_argument("--by", nargs="+", choices=list(FIELDS), default=list(FIELDS))
    parser.add_argument("--top", type=int, default=25, help="groups to print (the rest are summed in one line)")
    parser.add_argument("--wall-seconds", type=float, help="the run's wall time, to print how busy the cores were")
    parser.add_argument("--cores", type=int, default=os.cpu_count())
    parser.add_argument("--inside-train", type=Path, metavar="RESULTS",
                        help="a results folder: split its train jobs into training, attackers and the rest")
    args = parser.parse_args()
    if args.inside_train:
        print_inside_train(args.inside_train)
        return
    missing = [str(root) for root in args.benchmarks if not root.is_dir()]
    if missing:
        sys.exit(f"no benchmark folder: {', '.join(missing)}")
    groups = profile(args.benchmarks, args.by)
    if not groups:
        sys.exit("no benchmark files found")
    header = [*args.by, "jobs", "wall_s", "median_s", "min_s", "jobs×min_s", "cpu_s", "share"]
    print("\t".join(header))
    for group in groups[:args.top]:
        print("\t".join([*(group[name] or "-" for name in args.by), str(group["jobs"]), f"{group['wall_s']:.0f}",
                         f"{group['median_s']:.2f}", f"{group['min_s']:.2f}",
                         f"{group['jobs'] * group['min_s']:.0f}", f"{group['cpu_s']:.0f}",
                         f"{100 * group['share']:.1f}%"]))
    rest = groups[args.top:]
    if rest:
        print(f"... {len(rest)} more groups: {sum(g['jobs'] for g in rest)} jobs, "
              f"{sum(g['wall_s'] for g in rest):.0f} s ({100 * sum(g['share'] for g in rest):.1f}%)")
    job_seconds = sum(g["wall_s"] for g in groups)
    print(f"total: {sum(g['jobs'] for g in groups)} jobs, {job_seconds:.0f} job-seconds "
          f"({job_seconds / 60:.1f} min), {sum(g['cpu_s'] for g in groups) / 60:.1f} CPU-minutes")
    if args.wall_seconds:
        print(f"cores busy: {job_seconds / (args.wall_seconds * args.cores):.0%} of {args.cores} cores × "
              f"{args.wall_seconds:.0f} s")


if __name__ == "__main__":
    main()
