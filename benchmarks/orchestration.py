"""Snakemake's overhead for a grid: wall time of the grid run against the summed run times of its jobs.

    .venv/bin/python benchmarks/orchestration.py --points 50 --workdir /tmp/privtext-orchestration

Runs the real Snakefile on `demo` in a scratch workdir. The dataset and its embeddings are built first and not
counted; then one study of ``--points`` grid points (`noise` over as many ε values) is run with ``--cores 1``
so jobs are serial and the wall time splits exactly into:

- the jobs' own run times, summed from the `benchmark:` files every grid rule writes
  (`results/benchmarks/runs/.../{train,attack,mdl,fairness}.tsv`); each includes the job's Python start-up;
- within those, the time spent in the library (the `seconds` each job records in its JSON output), so the
  remainder is per-job start-up (interpreter, torch and scikit-learn imports);
- Snakemake's own overhead: wall time minus the summed job run times (DAG, scheduling, file checks, and the
  un-benchmarked aggregation jobs).

Prints each component, per job and as a ratio to the summed job run times.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import yaml

PROJECT_ROOT = Path(__file__).resolve().parents[1]
SNAKEMAKE = Path(sys.executable).parent / "snakemake"
GRID_RULES = ("train", "attack", "mdl", "fairness")


def snakemake(workdir: Path, configfile: Path, cores: int, *targets: str,
              snakefile: Path = PROJECT_ROOT / "Snakefile", options: tuple[str, ...] = ()) -> float:
    """Wall seconds of a quiet Snakemake run of ``targets`` in ``workdir`` (no workflow profile); exits on failure."""
    return snakemake_with_cpu(workdir, configfile, cores, *targets, snakefile=snakefile, options=options)[0]


def snakemake_with_cpu(workdir: Path, configfile: Path, cores: int, *targets: str,
                       snakefile: Path = PROJECT_ROOT / "Snakefile", options: tuple[str, ...] = (),
                       launcher: tuple[str, ...] = (str(SNAKEMAKE),)) -> tuple[float, float]:
    """Wall seconds and CPU seconds (user + system) of that run: Snakemake's process and every process it waited
    for (its jobs, a scheduling solver). ``launcher`` is the command before Snakemake's arguments. Exits on failure."""
    command = [*launcher, *targets, "--snakefile", str(snakefile), "--directory", str(workdir),
               "--configfile", str(configfile), "--cores", str(cores), "--workflow-profile", "none",
               "--quiet", "all", *options]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    result = subprocess.run(command, capture_output=True, text=True)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if result.returncode != 0:
        sys.exit(f"snakemake failed:\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--points", type=int, default=50)
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/privtext-orchestration"))
    parser.add_argument("--demo-examples", type=int, default=2000)
    args = parser.parse_args()

    workdir = args.workdir.resolve()
    if (workdir / "results" / "runs").exists():
        sys.exit(f"{workdir} already holds runs; pass a fresh --workdir so every job runs")
    workdir.mkdir(parents=True, exist_ok=True)
    epsilons = [round(float(e), 4) for e in np.geomspace(0.1, 100, args.points)]
    config = {
        "datasets": ["demo"], "demo": {"n_examples": args.demo_examples}, "run_studies": ["bench"],
        "studies": {"bench": {"datasets": ["demo"], "seeds": [10], "methods": {"noise": {"epsilon": epsilons}}}},
    }
    configfile = workdir / "orchestration-config.yaml"
    configfile.write_text(yaml.safe_dump(config))

    setup = snakemake(workdir, configfile, 2, "results/embeddings/demo/minilm/mu~0/seed~0/meta.json")
    wall = snakemake(workdir, configfile, 1)

    per_rule = {rule: {"job": [], "library": []} for rule in GRID_RULES}
    for point_dir in sorted((workdir / "results" / "runs").glob("demo/*/noise/**/seed~10")):
        relative = point_dir.relative_to(workdir / "results" / "runs")
        library = {}
        for rule in GRID_RULES:
            with open(workdir / "results" / "benchmarks" / "runs" / relative / f"{rule}.tsv") as handle:
                per_rule[rule]["job"].append(float(next(csv.DictReader(handle, delimiter="\t"))["s"]))
            record = json.loads((point_dir / f"{'metrics' if rule == 'train' else rule}.json").read_text())
            library[rule] = float(record.get("seconds", 0.0))
            if rule == "attack" and record.get("computed_in") == "train job":
                # attacked inside the train job (privtext.jobs.attack_cache): its work counts there
                library["train"] += library["attack"]
                library["attack"] = 0.0
        for rule in GRID_RULES:
            per_rule[rule]["library"].append(library[rule])
    job_seconds = [s for rule in GRID_RULES for s in per_rule[rule]["job"]]
    library_seconds = [s for rule in GRID_RULES for s in per_rule[rule]["library"]]
    jobs, summed, in_library = len(job_seconds), sum(job_seconds), sum(library_seconds)
    if jobs != len(GRID_RULES) * args.points:
        sys.exit(f"expected {len(GRID_RULES) * args.points} grid jobs, found benchmarks for {jobs}")
    overhead = wall - summed
    print(f"setup (data + embeddings, not counted): {setup:.1f} s; CPU cores: {os.cpu_count()}")
    print(f"grid: {args.points} points, {jobs} jobs ({', '.join(GRID_RULES)}), --cores 1")
    print(f"wall time                      {wall:8.1f} s")
    print(f"summed job run times           {summed:8.1f} s  ({summed / jobs:.2f} s per job)")
    print(f"  of which in the library      {in_library:8.1f} s  ({in_library / jobs:.2f} s per job)")
    print(f"  of which job start-up        {summed - in_library:8.1f} s  ({(summed - in_library) / jobs:.2f} s per job)")
    print(f"Snakemake overhead             {overhead:8.1f} s  ({overhead / jobs:.2f} s per job)")
    print(f"overhead / summed job times    {overhead / summed:8.3f}")
    print(f"start-up / summed job times    {(summed - in_library) / summed:8.3f}")
    print("fixed cost per job (job run time − library time: interpreter, imports, Snakemake's script wrapper, exit):")
    for rule in GRID_RULES:
        job, library = np.mean(per_rule[rule]["job"]), np.mean(per_rule[rule]["library"])
        print(f"  {rule:<9} job {job:6.2f} s   library {library:6.2f} s   fixed {job - library:6.2f} s")


if __name__ == "__main__":
    main()
