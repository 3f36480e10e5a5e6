"""`make test-slurm`: the grid on a real SLURM cluster gives the numbers of a local run, and survives a scancel.

    .venv/bin/python tests/slurm/run_slurm_check.py [--workdir DIR] [--keep]

As root on Debian, with ../shared/tools beside the project (or PRIVTEXT_SLURM_TOOLS): starts the local
single-node cluster with start_local_slurm.sh (stopped again at the end, unless it was already up), then

1. plans the default study with `--profile profiles/slurm -n` from the project folder;
2. runs a small `demo` grid (DPNR and FEDERATE x 2 epsilon x 2 seeds, every point's train -> attack -> MDL ->
   fairness chain, 4 points per sbatch job) through `--profile profiles/slurm` in a fresh folder, and the same grid with `--cores 2` locally in
   another; checks that `sacct` lists every submitted job COMPLETED, that grouping made fewer sbatch jobs than
   rule jobs ran under SLURM, and that runs.csv and the study's measures.csv are equal number for number;
3. adds a third seed (a larger grid), scancels a running group job, shows the run fails, reruns the same
   command, and checks the numbers against the local run of the larger grid.

Every Snakemake call runs under `timeout -s INT` (SIGINT scancels the jobs; SIGTERM would wait forever).
Prints the figures; exits non-zero on the first failed check.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd
import yaml

PROJECT_ROOT = Path(__file__).resolve().parents[2]
SNAKEMAKE = Path(sys.executable).parent / "snakemake"
SHARED = PROJECT_ROOT.parent / "shared"
TOOLS = Path(os.environ.get("PRIVTEXT_SLURM_TOOLS", SHARED / "tools"))
PARTITION = os.environ.get("SLURM_PARTITION", "debug")  # what start_local_slurm.sh creates
ACCOUNT = os.environ.get("SLURM_ACCOUNT", "testacct")
RUN_TIMEOUT = 900  # seconds per Snakemake call; a hang fails the check instead of blocking CI

# Few epochs and a small demo keep each job at a few seconds; every job still starts Python and the library.
STUDY = {
    "datasets": ["demo"],
    "seeds": [10, 20],
    "methods": {"dpnr": {"epsilon": [1, 8]}, "federate": {"epsilon": [1, 8], "lambda": [1.0]}},
}
CONFIG = {
    "datasets": ["demo"],
    "demo": {"n_examples": 400},
    "methods": {"dpnr": {"epochs": 3}, "federate": {"epochs": 3}},
    "attack": {"attackers": ["linear"]},
    "mdl": {"max_examples": 200},
    "studies": {"slurmcheck": STUDY},
    "run_studies": ["slurmcheck"],
}
LARGER_SEEDS = [10, 20, 30]
TABLES = ("results/tables/studies/slurmcheck/runs.csv", "results/tables/studies/slurmcheck/measures.csv")


class CheckFailed(SystemExit):
    pass


def fail(message: str) -> None:
    raise CheckFailed(f"test-slurm FAILED: {message}")


def say(message: str) -> None:
    print(f"[test-slurm] {message}", flush=True)


def cluster_is_up() -> bool:
    if shutil.which("scontrol") is None:
        return False
    ping = subprocess.run(["scontrol", "ping"], capture_output=True, text=True)
    return "is UP" in ping.stdout


def write_config(workdir: Path, seeds: list[int]) -> Path:
    config = yaml.safe_load(yaml.safe_dump(CONFIG))
    config["studies"]["slurmcheck"]["seeds"] = seeds
    path = workdir / "check-config.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def snakemake(workdir: Path, configfile: Path, *options: str, log_name: str) -> tuple[int, float, str]:
    """Run the project's Snakefile in ``workdir`` (its cwd, so SLURM logs land there); return code, wall, log."""
    command = ["timeout", "-s", "INT", "-k", "60", str(RUN_TIMEOUT), str(SNAKEMAKE),
               "--snakefile", str(PROJECT_ROOT / "Snakefile"), "--configfile", str(configfile), *options]
    started = time.perf_counter()
    with open(workdir / log_name, "w") as log:
        code = subprocess.run(command, cwd=workdir, stdout=log, stderr=subprocess.STDOUT).returncode
    wall = time.perf_counter() - started
    text = (workdir / log_name).read_text()
    if code == 124:
        fail(f"snakemake timed out after {RUN_TIMEOUT} s; see {workdir / log_name}")
    return code, wall, text


def slurm_run(workdir: Path, configfile: Path, *options: str, log_name: str) -> tuple[int, float, str]:
    return snakemake(workdir, configfile, "--profile", str(PROJECT_ROOT / "profiles" / "slurm"), *options, log_name=log_name)


def local_run(workdir: Path, configfile: Path, log_name: str) -> float:
    code, wall, text = snakemake(workdir, configfile, "--cores", "2", "--workflow-profile", "none", log_name=log_name)
    if code != 0:
        fail(f"local run failed ({code}):\n{text[-3000:]}")
    return wall


def submitted_jobs(log: str) -> list[str]:
    return re.findall(r"submitted with SLURM jobid (\d+)", log)


def rule_jobs(log: str) -> tuple[int, int]:
    """(jobs sent to SLURM, jobs run on the submitting host) as Snakemake logged them."""
    remote = len(re.findall(r"^\s*rule \w+:$", log, flags=re.M))  # group members are indented
    local = len(re.findall(r"^localrule \w+:$", log, flags=re.M))
    return remote, local


def sacct_states(job_ids: list[str]) -> dict[str, str]:
    out = subprocess.run(["sacct", "-X", "-n", "-P", "-o", "JobID,State", "-j", ",".join(job_ids)],
                         capture_output=True, text=True, check=True).stdout
    return dict(line.split("|", 1) for line in out.splitlines() if line)


def compare_tables(slurm_dir: Path, local_dir: Path) -> str:
    """Every table equal value for value (wall-time columns aside); returns a one-line summary."""
    values = 0
    for table in TABLES:
        slurm, local = (pd.read_csv(d / table) for d in (slurm_dir, local_dir))
        timing = [c for c in slurm.columns if c.endswith("_seconds")]
        slurm, local = slurm.drop(columns=timing), local.drop(columns=timing)
        if list(slurm.columns) != list(local.columns) or len(slurm) != len(local):
            fail(f"{table}: shapes differ: SLURM {slurm.shape} vs local {local.shape}")
        if not slurm.equals(local):
            differing = [c for c in slurm.columns if not slurm[c].equals(local[c])]
            fail(f"{table}: columns differ between the SLURM and the local run: {differing}")
        values += slurm.size
    rows = len(pd.read_csv(slurm_dir / TABLES[0]))
    return f"identical: {values} values in runs.csv ({rows} rows) and measures.csv (wall-time columns excluded)"


def wait_for_running_job(process: subprocess.Popen, timeout: float) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and process.poll() is None:
        running = subprocess.run(["squeue", "-h", "-t", "RUNNING", "-o", "%i %M"], capture_output=True, text=True).stdout.split("\n")
        for line in filter(None, running):
            job_id, elapsed = line.split()
            if elapsed not in ("0:00", "0:01", "0:02"):  # well inside its first component
                return job_id
        time.sleep(1)
    fail("no SLURM job reached the RUNNING state to scancel")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workdir", type=Path, help="fresh folder for both runs (default: a new temporary one)")
    parser.add_argument("--keep", action="store_true", help="keep the work folders")
    args = parser.parse_args()
    if os.geteuid() != 0:
        fail("must run as root (the local cluster's start script needs it)")
    root = (args.workdir or Path(tempfile.mkdtemp(prefix="privtext-slurm-"))).resolve()
    slurm_dir, local_dir = root / "slurm", root / "local"
    for folder in (slurm_dir, local_dir):
        if folder.exists() and any(folder.iterdir()):
            fail(f"{folder} is not empty; give a fresh --workdir")
        folder.mkdir(parents=True, exist_ok=True)

    was_up = cluster_is_up()
    started = time.perf_counter()
    subprocess.run(["bash", str(TOOLS / "start_local_slurm.sh")], check=True)
    cluster_start = time.perf_counter() - started
    say(f"cluster {'was already up' if was_up else 'started'} in {cluster_start:.0f} s")
    os.environ.update(PRIVTEXT_SLURM_PARTITION=PARTITION, PRIVTEXT_SLURM_ACCOUNT=ACCOUNT)
    try:
        check(slurm_dir, local_dir, cluster_start)
    finally:
        if was_up:
            say("cluster was running before: left running")
        else:
            subprocess.run(["bash", str(TOOLS / "stop_local_slurm.sh")])
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)


def check(slurm_dir: Path, local_dir: Path, cluster_start: float) -> None:
    # 1. The default study plans under the SLURM profile (from the project folder, as a user types it; with
    # the offline mirror when it is there, as `make run` passes it).
    mirror = [f"{key}={path}" for key, path in (("data_mirror", SHARED / "data"), ("nltk_data", SHARED / "nltk_data")) if path.is_dir()]
    plan = subprocess.run(["timeout", "-s", "INT", "-k", "30", "300", str(SNAKEMAKE), "--profile", "profiles/slurm", "-n",
                           *(["--config", *mirror] if mirror else [])],
                          cwd=PROJECT_ROOT, capture_output=True, text=True)
    if plan.returncode != 0 or "Job stats:" not in plan.stdout:
        fail(f"`snakemake --profile profiles/slurm -n` failed ({plan.returncode}):\n{plan.stdout[-2000:]}{plan.stderr[-2000:]}")
    planned = re.search(r"^total\s+(\d+)$", plan.stdout, flags=re.M).group(1)
    groups = plan.stdout.count("Group job point")
    say(f"dry run of the default study with --profile profiles/slurm: {planned} jobs, {groups} grouped sbatch jobs of grid points")

    # 2. The small grid under SLURM and locally. Two sbatch jobs of 4 points fill the node's 2 CPUs.
    os.environ["PRIVTEXT_SLURM_POINTS_PER_JOB"] = "4"
    config = write_config(slurm_dir, STUDY["seeds"])
    code, slurm_wall, log = slurm_run(slurm_dir, config, log_name="slurm-run.log")
    if code != 0:
        fail(f"SLURM run failed ({code}); see {slurm_dir / 'slurm-run.log'}:\n{log[-3000:]}")
    jobs = submitted_jobs(log)
    remote, local = rule_jobs(log)
    states = sacct_states(jobs)
    not_done = {j: s for j, s in states.items() if s != "COMPLETED"}
    if len(states) != len(jobs) or not_done:
        fail(f"sacct: {len(states)} of {len(jobs)} submitted jobs listed, not COMPLETED: {not_done}")
    if not len(jobs) < remote:
        fail(f"grouping did not reduce submissions: {len(jobs)} sbatch jobs for {remote} rule jobs")
    local_wall = local_run(local_dir, write_config(local_dir, STUDY["seeds"]), "local-run.log")
    equality = compare_tables(slurm_dir, local_dir)
    points = len(pd.read_csv(slurm_dir / TABLES[0]).drop_duplicates("run_dir"))

    # 3. A larger grid: scancel a running group job, then rerun the same command.
    config = write_config(slurm_dir, LARGER_SEEDS)
    os.environ["PRIVTEXT_SLURM_POINTS_PER_JOB"] = "2"  # several group jobs, so one can be cancelled mid-run
    # --retries 0: the cancelled job fails the run instead of being resubmitted by the profile's retries
    command = ["timeout", "-s", "INT", "-k", "60", str(RUN_TIMEOUT), str(SNAKEMAKE), "--snakefile", str(PROJECT_ROOT / "Snakefile"),
               "--configfile", str(config), "--profile", str(PROJECT_ROOT / "profiles" / "slurm"), "--retries", "0"]
    started = time.perf_counter()
    with open(slurm_dir / "slurm-cancelled.log", "w") as out:
        process = subprocess.Popen(command, cwd=slurm_dir, stdout=out, stderr=subprocess.STDOUT)
        victim = wait_for_running_job(process, timeout=300)
        subprocess.run(["scancel", victim], check=True)
        code = process.wait()
    cancelled_wall = time.perf_counter() - started
    if code == 0:
        fail(f"the run with scancelled job {victim} exited 0")
    state = sacct_states([victim])[victim]
    say(f"scancel of running SLURM job {victim} ({state}): snakemake exited with code {code} after {cancelled_wall:.0f} s")
    code, rerun_wall, log = snakemake(slurm_dir, config, "--profile", str(PROJECT_ROOT / "profiles" / "slurm"), "--retries", "0",
                                      log_name="slurm-rerun.log")
    if code != 0:
        fail(f"rerun after scancel failed ({code}):\n{log[-3000:]}")
    resubmitted = submitted_jobs(log)
    rerun_remote, _ = rule_jobs(log)
    local_larger_wall = local_run(local_dir, write_config(local_dir, LARGER_SEEDS), "local-larger.log")
    larger_equality = compare_tables(slurm_dir, local_dir)
    larger_points = len(pd.read_csv(slurm_dir / TABLES[0]).drop_duplicates("run_dir"))

    print()
    print("test-slurm: figures")
    print(f"  cluster start (start_local_slurm.sh)          {cluster_start:7.0f} s")
    print(f"  grid: demo, {points} points (2 methods x 2 eps x 2 seeds), train -> attack -> MDL -> fairness each")
    print(f"  rule jobs run under SLURM                     {remote:7d}   (+ {local} local jobs on the submitting host)")
    print(f"  sbatch submissions (sacct: all COMPLETED)     {len(jobs):7d}   ({remote / len(jobs):.1f} rule jobs per submission)")
    print(f"  wall time, --profile profiles/slurm           {slurm_wall:7.0f} s")
    print(f"  wall time, local --cores 2                    {local_wall:7.0f} s")
    print(f"  SLURM vs local: {equality}")
    print(f"  larger grid ({larger_points} points): scancel of job {victim} -> exit code != 0 after {cancelled_wall:.0f} s;")
    print(f"    rerun of the same command: {rerun_remote} rule jobs in {len(resubmitted)} sbatch jobs, exit 0, {rerun_wall:.0f} s"
          f" (local --cores 2 for the new points: {local_larger_wall:.0f} s)")
    print(f"  SLURM (cancelled + rerun) vs local: {larger_equality}")
    print("test-slurm: OK")


if __name__ == "__main__":
    main()
