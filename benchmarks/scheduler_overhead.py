"""Snakemake's scheduling cost as the queue of ready jobs grows, with and without ``--scheduler-subsample``.

    .venv/bin/python benchmarks/scheduler_overhead.py [--jobs 300 1000] [--inputs 8] [--subsample 32] [--repeat 1]

Every scheduling round (one per finished job) Snakemake stats the input files of every ready job, and resets
their params and resources, before it picks the jobs to start: a round costs in proportion to the ready queue,
and a run of N jobs that are all ready at once costs in proportion to N². A `make claims` run has hundreds of
ready jobs for most of its length. ``--scheduler-subsample K`` makes a round look at K ready jobs drawn at
random instead (which jobs run when changes; what each job computes does not). docs/performance.md, "Snakemake's
own scheduling", has the figures and the same comparison on the real DAG.

A throwaway Snakefile in a scratch folder: N independent jobs, each reading its own ``--inputs`` small files
(as a grid point reads its data and features) and touching one output; one job writes all the inputs first,
not timed. Both variants run alternately, ``--cores 2``, from the same inputs with the outputs removed. Prints
the wall seconds of each run and per job; the jobs themselves are a ``touch`` each, so the time is Snakemake's.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from orchestration import SNAKEMAKE, snakemake  # noqa: E402  (a run's wall seconds, no workflow profile)

SNAKEFILE = '''
N, K = int(config["njobs"]), int(config["inputs"])

rule all:
    input: expand("out/{i}.done", i=range(N))

rule inputs:
    output: [f"in/{i}_{j}.txt" for i in range(N) for j in range(K)]
    run:
        for path in output:
            open(path, "w").close()

rule job:
    input: [f"in/{{i}}_{j}.txt" for j in range(K)]
    output: "out/{i}.done"
    shell: "touch {output}"
'''


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jobs", type=int, nargs="+", default=[300, 1000], help="ready jobs (N), one run each")
    parser.add_argument("--inputs", type=int, default=8, help="input files per job")
    parser.add_argument("--subsample", type=int, default=32, help="--scheduler-subsample of the second variant")
    parser.add_argument("--repeat", type=int, default=1, help="alternated runs of each variant")
    args = parser.parse_args()
    variants = {"every ready job": [], f"--scheduler-subsample {args.subsample}":
                ["--scheduler-subsample", str(args.subsample)]}
    print(f"snakemake {subprocess.run([str(SNAKEMAKE), '--version'], capture_output=True, text=True).stdout.strip()}, "
          f"--cores 2, {args.inputs} input files per job")
    for jobs in args.jobs:
        with tempfile.TemporaryDirectory(prefix="privtext-scheduler-") as scratch:
            workdir = Path(scratch)
            snakefile, configfile = workdir / "Snakefile", workdir / "config.yaml"
            snakefile.write_text(SNAKEFILE)
            configfile.write_text(yaml.safe_dump({"njobs": jobs, "inputs": args.inputs}))
            snakemake(workdir, configfile, 2, "in/0_0.txt", snakefile=snakefile)
            seconds: dict[str, list[float]] = {name: [] for name in variants}
            for _ in range(args.repeat):
                for name, extra in variants.items():
                    shutil.rmtree(workdir / "out", ignore_errors=True)
                    seconds[name].append(snakemake(workdir, configfile, 2, "all", snakefile=snakefile,
                                                   options=tuple(extra)))
            for name, values in seconds.items():
                wall = statistics.median(values)
                print(f"N = {jobs:>5}  {name:<28} {wall:8.1f} s  {1000 * wall / jobs:6.1f} ms per job  "
                      f"({', '.join(f'{v:.1f}' for v in values)})")


if __name__ == "__main__":
    main()
