"""FEDERATE on UCI Adult as the pipeline runs it: one grid point, each job a whole process, imports included.

    .venv/bin/python benchmarks/federate_adult.py --repeats 5 --threads 1

The work is FEDERATE's own setting (issue 12; docs/methods.md, "The reference code's departures"): ε = 8, λ = 0.5 with the γ = 7 schedule, 45 epochs,
batch 2000, Adam 1e-3, the whole training split (27,133 rows, no `train.max_train` cap); then the three fresh
attackers of the default config on the released representations. Adult and its feature matrix are built
first with the real Snakefile in ``--workdir`` (not timed). Each repeat starts fresh processes exactly as
Snakemake's jobs call the library (``workflow/scripts/{train,attack}.py``) and prints, as medians over the
repeats (min–max beside them):

- ``wall_s``: the train job, process start to exit (with the attackers inside it by default, so
  ``train_job_without_attack_s`` is the same job less their seconds);
- ``startup_s``: process start to the first training epoch (interpreter, imports, data, model);
- ``train_s``: the 45-epoch loop; ``after_train_s``: releases, files, and the interpreter's exit;
- ``attack_s``: the attack step, all three attackers: by default (as the pipeline runs it, ``attack.in_train_job``)
  the attackers' seconds inside the train job plus the attack job that publishes their result (process start
  to exit); with ``--separate-attack-job`` (the code before issue 12), the attack job's whole process;
- ``test_accuracy``: FEDERATE's main-task test accuracy (it must not drop for speed), and each attacker's
  test accuracy on ``sex`` (``leakage_*``); ``--accuracy-seeds N`` adds the mean over N seeds, since one
  seed's accuracy moves by about ±0.006 with the noise drawn (which changed with the noise sampler).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import yaml

PROJECT_ROOT = Path(__file__).resolve().parents[1]
SNAKEMAKE = Path(sys.executable).parent / "snakemake"
GRID = {"epsilon": 8.0, "lambda": 0.5}
FEATURES = "results/embeddings/adult/features/mu~0/seed~0"
RUN_DIR = "results/runs/adult/features/federate/mu~0/epsilon~8/lambda~0.5/seed~10"

# The job, run in a fresh interpreter; `train` is wrapped only to stamp the loop's start and end.
TRAIN_JOB = """
import json, sys, time
stamps = {"started": time.time()}
START
from privtext.training import loop as training
from privtext.plan.grid import GridPoint
from privtext.jobs.runs import TrainJob
from privtext.jobs.train_job import run_grid_point
_train = training.train
def timed(*args, **kwargs):  # the method's training loop is the first call (the mlp attacker's comes later)
    first = "loop_start" not in stamps
    if first:
        stamps["loop_start"] = time.time()
    try:
        return _train(*args, **kwargs)
    finally:
        if first:
            stamps["loop_end"] = time.time()
training.train = timed
import privtext.methods.base as base
base.train = timed
workdir, threads, grid, attack = sys.argv[1], int(sys.argv[2]), json.loads(sys.argv[3]), json.loads(sys.argv[4])
seed = int(sys.argv[5]) if len(sys.argv) > 5 else 10
point = GridPoint.of("adult", "features", "federate", grid, seed=seed)
metrics = run_grid_point(point, TrainJob(
    data_dir=f"{workdir}/results/data/adult", features={s: f"{workdir}/FEATURES/{s}.npy" for s in ("train", "dev", "test")},
    out_dir=f"{workdir}/RUN_DIR".replace("seed~10", f"seed~{seed}"), threads=threads, max_train=None,
    **({"attack": attack} if attack else {})))
stamps["done"] = time.time()
print(json.dumps({"stamps": stamps, "test_accuracy": metrics["test"]["accuracy"]}), flush=True)
EXIT
""".replace("FEATURES", FEATURES).replace("RUN_DIR", RUN_DIR)

PUBLISH_JOB = """
import sys
from privtext.jobs.runs import attack_grid_point
workdir, attackers, max_train = sys.argv[1], sys.argv[2].split(","), None if sys.argv[3] == "None" else int(sys.argv[3])
run_dir = f"{workdir}/RUN_DIR"
result = attack_grid_point(data_dir=f"{workdir}/results/data/adult", run_dir=run_dir, out_path=f"{run_dir}/attack.json",
                           attackers=attackers, seed=10, max_train=max_train)
assert result["computed_in"] == "train job"  # published, not attacked again
print("{}")
EXIT
""".replace("RUN_DIR", RUN_DIR)

ATTACK_JOB = """
import json, sys, time
stamps = {"started": time.time()}
START
from privtext.jobs.runs import attack_grid_point
workdir, threads, attack = sys.argv[1], int(sys.argv[2]), json.loads(sys.argv[3])
result = attack_grid_point(data_dir=f"{workdir}/results/data/adult", run_dir=f"{workdir}/RUN_DIR",
                           out_path=f"{workdir}/RUN_DIR/attack.json", seed=10, threads=threads, **attack)
stamps["done"] = time.time()
print(json.dumps({"stamps": stamps, "work": result["seconds"],
                  "accuracy": {a: r["attributes"]["sex"]["accuracy"] for a, r in result["attackers"].items()}}), flush=True)
EXIT
""".replace("RUN_DIR", RUN_DIR)


# Jobs start and end as the workflow scripts do (privtext.standins.allocator.keep_freed_memory; privtext.runtime.logs.finish_job:
# no interpreter teardown), where the code has them.
START = """
try:
    from privtext.standins.allocator import keep_freed_memory
except ImportError:
    keep_freed_memory = None
if keep_freed_memory:
    keep_freed_memory()
"""
EXIT = """
try:
    from privtext.runtime.logs import finish_job
except ImportError:
    finish_job = None
if finish_job:
    finish_job()
"""
TRAIN_JOB, ATTACK_JOB, PUBLISH_JOB = (job.replace("START", START).replace("EXIT", EXIT)
                                     for job in (TRAIN_JOB, ATTACK_JOB, PUBLISH_JOB))


def build_inputs(workdir: Path, mirror: Path) -> None:
    if (workdir / "results/data/adult/meta.json").exists() and (workdir / FEATURES / "meta.json").exists():
        return  # built already (by any version of the code: the benchmark times the jobs, not the build)
    config = workdir / "benchmark-config.yaml"
    config.write_text(yaml.safe_dump({"datasets": ["adult"], "data_mirror": str(mirror), "run_studies": []}))
    command = [str(SNAKEMAKE), "results/data/adult/meta.json", f"{FEATURES}/train.npy", "--snakefile",
               str(PROJECT_ROOT / "Snakefile"), "--directory", str(workdir), "--configfile", str(config),
               "--cores", "2", "--workflow-profile", "none", "--quiet", "all"]
    # The build runs this checkout's Snakefile, which refuses a privtext from elsewhere: PYTHONPATH (an older
    # checkout's library, for the timed jobs) is left out here.
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    subprocess.run(command, check=True, env=env)


def run_job(code: str, *args: str) -> tuple[float, float, dict]:
    """(spawn time, exit time, what the job printed) of one fresh interpreter running ``code``."""
    spawned = time.time()
    result = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True)
    ended = time.time()
    if result.returncode != 0:
        sys.exit(f"job failed:\n{result.stderr[-3000:]}")
    return spawned, ended, json.loads(result.stdout.strip().splitlines()[-1])


def attack_settings() -> dict:
    config = yaml.safe_load((PROJECT_ROOT / "config.yaml").read_text())
    return {"attackers": config["attack"]["attackers"], "max_train": config["attack"]["max_train"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/privtext-federate-adult"))
    parser.add_argument("--data-mirror", type=Path, default=PROJECT_ROOT.parent / "shared" / "data")
    parser.add_argument("--separate-attack-job", action="store_true",
                        help="attack in a job of its own (the code before attacks ran in the train job)")
    parser.add_argument("--accuracy-seeds", type=int, default=0, metavar="N",
                        help="then train seeds 10 … 10+N−1 (no attackers) and print their test accuracy's mean and "
                             "standard deviation: one seed's accuracy moves by ±0.006 with the noise drawn")
    args = parser.parse_args()
    workdir = args.workdir.resolve()
    workdir.mkdir(parents=True, exist_ok=True)
    build_inputs(workdir, args.data_mirror.resolve())
    attack = attack_settings()
    rows = []
    for _ in range(args.repeats):
        in_train = not args.separate_attack_job
        spawned, ended, train = run_job(TRAIN_JOB, str(workdir), str(args.threads), json.dumps(GRID),
                                        json.dumps(attack if in_train else {}))
        stamps = train["stamps"]
        row = {"wall_s": ended - spawned, "startup_s": stamps["loop_start"] - spawned,
               "train_s": stamps["loop_end"] - stamps["loop_start"], "after_train_s": ended - stamps["loop_end"],
               "test_accuracy": train["test_accuracy"]}
        if in_train:
            p_spawned, p_ended, _ = run_job(PUBLISH_JOB, str(workdir), ",".join(attack["attackers"]), str(attack["max_train"]))
            attacked = json.loads((workdir / RUN_DIR / "attack.json").read_text())
            row.update(attack_s=attacked["seconds"] + (p_ended - p_spawned), attack_work_s=attacked["seconds"],
                       attack_job_s=p_ended - p_spawned, train_job_without_attack_s=row["wall_s"] - attacked["seconds"])
        else:
            a_spawned, a_ended, printed = run_job(ATTACK_JOB, str(workdir), str(args.threads), json.dumps(attack))
            attacked = json.loads((workdir / RUN_DIR / "attack.json").read_text())
            row.update(attack_s=a_ended - a_spawned, attack_work_s=printed["work"], attack_job_s=a_ended - a_spawned)
        row.update({f"leakage_{k}": r["attributes"]["sex"]["accuracy"] for k, r in attacked["attackers"].items()})
        rows.append(row)
    print(f"FEDERATE on Adult, {args.repeats} repeats, {args.threads} thread(s), {os.cpu_count()} cores; "
          f"{'attack job of its own' if args.separate_attack_job else 'attack in the train job, published by the attack job'}")
    for name in rows[0]:
        values = [r[name] for r in rows]
        print(f"{name:>24}: {statistics.median(values):8.3f}   (min {min(values):.3f}, max {max(values):.3f})")
    if args.accuracy_seeds:
        seeds = range(10, 10 + args.accuracy_seeds)
        accuracies = [run_job(TRAIN_JOB, str(workdir), str(args.threads), json.dumps(GRID), "{}", str(seed))[2]
                      ["test_accuracy"] for seed in seeds]
        spread = statistics.stdev(accuracies) if len(accuracies) > 1 else 0.0
        print(f"{'test_accuracy_seeds':>24}: {statistics.mean(accuracies):8.4f}   (sd {spread:.4f}, seeds "
              f"{seeds.start}-{seeds.stop - 1}: {' '.join(f'{a:.4f}' for a in accuracies)})")


if __name__ == "__main__":
    main()
