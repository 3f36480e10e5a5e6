"""Snakemake's own cost as the queue of ready jobs grows: its command line's defaults against what cuts it.

    .venv/bin/python benchmarks/scheduler_overhead.py [--jobs 300 1000] [--inputs 8] [--sleep 0]
        [--subsample 16] [--repeat 1]

Two costs grow with the ready queue (docs/performance.md, "Snakemake's own scheduling"):

- Every scheduling round, Snakemake resets the params and resources of every ready job and stats their input
  files before it picks the jobs to start, so a round costs in proportion to the ready queue.
  ``--scheduler-subsample K`` makes a round look at K ready jobs drawn at random (which job starts when changes;
  what a job computes does not).
- Rounds are not only one per finished job. The command line's job-rate limiter (``--max-jobs-per-timespan``,
  100/1s by default) makes every round that leaves a job waiting arm a timer for one more round a second later,
  and every finished job adds a round that arms its own: while jobs wait for a core, the rounds a second grow
  with the jobs finished so far, until Snakemake's process is busy with them. workflow/local_snakemake.py, which
  `make run` and `make claims` start, runs without the limiter, as Snakemake's API does by default. Visible only
  when jobs take a while: give them ``--sleep`` seconds.

A throwaway Snakefile in a scratch folder: N independent jobs, each reading its own ``--inputs`` small files
(as a grid point reads its data and features), sleeping ``--sleep`` seconds and touching one output; one job
writes all the inputs first, not timed. The variants run alternately, ``--cores 2``, from the same inputs with
the outputs removed. Prints each run's wall seconds and CPU seconds (Snakemake's process with its jobs, which
are a ``sleep`` and a ``touch``, so the CPU is Snakemake's).
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
from orchestration import PROJECT_ROOT, SNAKEMAKE, snakemake, snakemake_with_cpu  # noqa: E402  (no profile)

LAUNCHER = PROJECT_ROOT / "workflow" / "local_snakemake.py"

SNAKEFILE = '''
N, K, SLEEP = int(config["njobs"]), int(config["inputs"]), float(config["sleep"])

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
    params: sleep=SLEEP
    shell: "sleep {params.sleep} && touch {output}"
'''


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jobs", type=int, nargs="+", default=[300, 1000], help="ready jobs (N), one run each")
    parser.add_argument("--inputs", type=int, default=8, help="input files per job")
    parser.add_argument("--sleep", type=float, default=0.0, help="seconds each job sleeps")
    parser.add_argument("--subsample", type=int, default=16, help="--scheduler-subsample of the second variant")
    parser.add_argument("--repeat", type=int, default=1, help="alternated runs of each variant")
    args = parser.parse_args()
    plain, local = (str(SNAKEMAKE),), (sys.executable, str(LAUNCHER))
    variants = {"snakemake (command line's defaults)": (plain, []),
                f"snakemake --scheduler-subsample {args.subsample}": (plain, ["--scheduler-subsample",
                                                                            str(args.subsample)]),
                "workflow/local_snakemake.py (no limiter)": (local, [])}
    print(f"snakemake {subprocess.run([str(SNAKEMAKE), '--version'], capture_output=True, text=True).stdout.strip()}, "
          f"--cores 2, {args.inputs} input files per job, jobs sleep {args.sleep:g} s")
    for jobs in args.jobs:
        with tempfile.TemporaryDirectory(prefix="privtext-scheduler-") as scratch:
            workdir = Path(scratch)
            snakefile, configfile = workdir / "Snakefile", workdir / "config.yaml"
            snakefile.write_text(SNAKEFILE)
            configfile.write_text(yaml.safe_dump({"njobs": jobs, "inputs": args.inputs, "sleep": args.sleep}))
            snakemake(workdir, configfile, 2, "in/0_0.txt", snakefile=snakefile)
            runs: dict[str, list[tuple[float, float]]] = {name: [] for name in variants}
            for _ in range(args.repeat):
                for name, (launcher, extra) in variants.items():
                    shutil.rmtree(workdir / "out", ignore_errors=True)
                    runs[name].append(snakemake_with_cpu(workdir, configfile, 2, "all", snakefile=snakefile,
                                                         options=tuple(extra), launcher=launcher))
            for name, values in runs.items():
                wall = statistics.median(v[0] for v in values)
                cpu = statistics.median(v[1] for v in values)
                print(f"N = {jobs:>5}  {name:<44} wall {wall:7.1f} s  CPU {cpu:7.1f} s  "
                      f"{1000 * cpu / jobs:6.1f} CPU-ms per job  "
                      f"({', '.join(f'{w:.1f}/{c:.1f}' for w, c in values)})")


if __name__ == "__main__":
    main()
