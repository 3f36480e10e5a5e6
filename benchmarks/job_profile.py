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
"""

from __future__ import annotations

import argparse
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
    for key, row in benchmark_rows(roots):
        group = tuple(key[FIELDS[name]] for name in by)
        walls[group].append(float(row["s"]))
        cpus[group] += float(row.get("cpu_time") or 0.0)
    total = sum(sum(values) for values in walls.values()) or 1.0
    groups = [{**dict(zip(by, group)), "jobs": len(values), "wall_s": sum(values), "median_s": median(values),
               "min_s": min(values), "cpu_s": cpus[group], "share": sum(values) / total}
              for group, values in walls.items()]
    return sorted(groups, key=lambda g: -g["wall_s"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--benchmarks", type=Path, nargs="+", default=[PROJECT_ROOT / "results" / "benchmarks"])
    parser.add_argument("--by", nargs="+", choices=list(FIELDS), default=list(FIELDS))
    parser.add_argument("--top", type=int, default=25, help="groups to print (the rest are summed in one line)")
    parser.add_argument("--wall-seconds", type=float, help="the run's wall time, to print how busy the cores were")
    parser.add_argument("--cores", type=int, default=os.cpu_count())
    args = parser.parse_args()
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
