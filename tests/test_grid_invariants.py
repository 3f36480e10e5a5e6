"""What a study's grid must keep however its points are trained (issue 29: seeds trained together in one batched
process), pinned on today's one-job-per-point pipeline through the real Snakefile on demo:

- adding a seed to a finished study plans only the new seed's jobs and the study's aggregates, and rewrites
  no existing file (resumable grids);
- a train job killed mid-training (SIGKILL) reruns to the files of an uninterrupted run;
- the warm interpreter of local runs (privtext.runtime.warm: jobs forked from one process that imported torch)
  writes the files a job writes alone, and a run killed with it reruns to them too.

What may differ between two runs of the same point is its wall and CPU seconds: the keys ``seconds`` (metrics.json,
attack.json, attack_precomputed.json: the job's and each attacker's wall time) and ``*_seconds`` (metrics.json's
per-epoch history: train/dev wall and CPU time), dropped by ``conftest.without_timings``. Nothing else is excluded.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd
import pytest
import yaml

from conftest import LOCAL_SNAKEMAKE, PROJECT_ROOT, run_snakemake, snakemake_command, without_timings

pytestmark = pytest.mark.slow

STUDY = "grid"
SEEDS = [10, 11]
NEW_SEED = 12
# One point of demo at 300 texts: noise at ε = 8 trains 45 epochs (a few seconds), and the study keeps its
# artefacts so that every per-point job (train, attack, fairness, MDL) and every aggregate runs.
CONFIG = {
    "datasets": ["demo"],
    "demo": {"n_examples": 300},
    "attack": {"attackers": ["linear"]},
    "studies": {STUDY: {"datasets": ["demo"], "seeds": SEEDS, "methods": {"noise": {"epsilon": [8]}}}},
    "run_studies": [STUDY],
}
PER_POINT_RULES = ["attack", "fairness", "mdl", "train"]
WARM = [sys.executable, "-m", "privtext.runtime.warm", "--"]  # what `make run` puts before snakemake


def as_make_runs_it(command: list[str]) -> list[str]:
    """A Snakemake command line (snakemake_command's) as `make run` starts it: through the warm interpreter and
    Snakemake's command line without its rate limiter (workflow/local_snakemake.py)."""
    assert Path(command[0]).name == "snakemake", command
    return [*WARM, sys.executable, str(LOCAL_SNAKEMAKE), *command[1:]]

# What `make run` does about reruns comes from the workflow profile, which `run_snakemake` drops
# (`--workflow-profile none`): pass its rerun settings, so that a concurrent edit of a script cannot replan a job.
_PROFILE = yaml.safe_load((PROJECT_ROOT / "profiles/default/config.yaml").read_text())
AS_THE_PROFILE = [*(["--rerun-incomplete"] if _PROFILE.get("rerun-incomplete") else []),
                  "--rerun-triggers", *_PROFILE["rerun-triggers"]]


def _with_seeds(seeds: list[int]) -> dict:
    config = json.loads(json.dumps(CONFIG))
    config["studies"][STUDY]["seeds"] = seeds
    return config


@pytest.fixture(scope="module")
def finished_study(tmp_path_factory) -> Path:
    """The study run to the end with seeds 10 and 11. The seed test adds seed 12 to it; seeds 10 and 11's files
    stay as they were (which that test asserts), so the kill test can compare with them in either order."""
    workdir = tmp_path_factory.mktemp("study")
    run_snakemake(workdir, CONFIG, None, *AS_THE_PROFILE)
    return workdir


def _planned_jobs(dry_run_stdout: str) -> list[dict]:
    """Each job of a dry run: its rule, wildcards, and the files it writes (outputs, log, benchmark)."""
    jobs: list[dict] = []
    for line in dry_run_stdout.splitlines():
        text = line.strip()
        if match := re.fullmatch(r"(?:local)?rule (\w+):", text):
            jobs.append({"rule": match[1], "wildcards": {}, "writes": set()})
            continue
        key, _, value = text.partition(": ")
        if jobs and key == "wildcards":
            jobs[-1]["wildcards"] = dict(pair.split("=", 1) for pair in value.split(", "))
        elif jobs and key in ("output", "log", "benchmark"):
            jobs[-1]["writes"].update(value.split(", "))
    total = re.search(r"^total\s+(\d+)$", dry_run_stdout.split("Job stats:", 1)[1], flags=re.M)
    assert total and int(total[1]) == len(jobs), "the dry run's job listing was not parsed whole"
    return jobs


def _files(results: Path) -> dict[str, tuple[str, int]]:
    """Every file under ``results`` (paths relative to the working directory): (sha256, mtime in ns)."""
    return {str(p.relative_to(results.parent)): (hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_mtime_ns)
            for p in sorted(results.rglob("*")) if p.is_file()}


def _without_wall_times(table: pd.DataFrame) -> pd.DataFrame:
    return table.drop(columns=[c for c in table.columns if c == "seconds" or c.endswith("_seconds")])


def _aggregate_rules() -> set[str]:
    """The study's jobs that read every seed, and so rerun when one is added: its runs table, its measures
    table, its attack ladder, the extra/* artefacts built from every study with artefacts, and `all`."""
    from privtext.report.artefacts import ARTEFACTS

    extras = {"artefact_" + "_".join(a.name.split("/")) for a in ARTEFACTS.values() if not a.studies}
    return {"runs_table", "study_measures", f"ladder_{STUDY}", "all", *extras}


def test_adding_a_seed_plans_only_its_jobs_and_rewrites_no_existing_output(finished_study):
    results = finished_study / "results"
    before = _files(results)
    tables = {name: pd.read_csv(results / f"tables/studies/{STUDY}/{name}.csv") for name in ("runs", "measures")}
    bigger = _with_seeds([*SEEDS, NEW_SEED])

    planned = _planned_jobs(run_snakemake(finished_study, bigger, None, "-n", *AS_THE_PROFILE).stdout)
    per_point = [job for job in planned if "seed" in job["wildcards"]]
    assert {job["wildcards"]["seed"] for job in per_point} == {str(NEW_SEED)}
    assert sorted(job["rule"] for job in per_point) == PER_POINT_RULES  # the new point's chain, once
    aggregates = [job["rule"] for job in planned if "seed" not in job["wildcards"]]
    assert sorted(aggregates) == sorted(_aggregate_rules())  # each once, and nothing upstream (data, features)
    rewritten = {path for job in planned for path in job["writes"]}
    assert not {path for path in rewritten if path in before and path.startswith("results/runs/")}

    run_snakemake(finished_study, bigger, None, *AS_THE_PROFILE)
    after = _files(results)
    # Every file that existed is untouched (bytes and modification time) unless a planned aggregate job wrote it.
    changed = sorted(path for path, signature in before.items() if after.get(path) != signature)
    assert set(changed) <= rewritten, [path for path in changed if path not in rewritten]
    assert not [path for path in changed if "/seed~" in path]
    new_run = f"results/runs/demo/minilm/noise/mu~0/epsilon~8/seed~{NEW_SEED}"
    for name in ("model.safetensors", "metrics.json", "attack.json", "fairness.json", "mdl.json"):
        assert f"{new_run}/{name}" in after
    # The rewritten tables keep the existing seeds' numbers and add the new seed's rows.
    for name, old in tables.items():
        new = pd.read_csv(results / f"tables/studies/{STUDY}/{name}.csv")
        assert set(new["seed"]) == {*SEEDS, NEW_SEED}
        kept = new[new["seed"].isin(SEEDS)].reset_index(drop=True)
        pd.testing.assert_frame_equal(_without_wall_times(kept), _without_wall_times(old), check_exact=True)
    again = run_snakemake(finished_study, bigger, None, "-n", *AS_THE_PROFILE)
    assert "Nothing to be done" in again.stdout + again.stderr


def _training_now(workdir: Path) -> Path | None:
    """The log of a train job that has finished an epoch and not yet written its metrics, if one has."""
    for log in (workdir / "results/logs/results/runs").glob("**/train.log"):
        run = workdir / log.parent.relative_to(workdir / "results/logs")
        if "epoch 0:" in log.read_text() and not (run / "metrics.json").exists():
            return log
    return None


def _run_outputs(workdir: Path) -> dict[str, object]:
    """Each file of the study's run folders: a JSON record less its timings, any other file's sha256."""
    files = {}
    for path in sorted((workdir / "results/runs").rglob("*")):
        if path.is_file() and any(f"/seed~{seed}/" in str(path) for seed in SEEDS):
            name = str(path.relative_to(workdir))
            files[name] = (without_timings(json.loads(path.read_text())) if path.suffix == ".json"
                           else hashlib.sha256(path.read_bytes()).hexdigest())
    return files


def test_the_warm_interpreter_writes_the_files_a_job_writes_alone(finished_study, tmp_path):
    workdir = tmp_path / "warm"
    command = snakemake_command(workdir, CONFIG, None, *AS_THE_PROFILE)
    subprocess.run(as_make_runs_it(command), cwd=workdir, capture_output=True, text=True, check=True, timeout=900)
    for rule in ("attack", "mdl", "train"):  # the jobs that import torch ran in workers (fairness needs none)
        logs = list((workdir / "results/logs/results/runs").glob(f"**/{rule}.log"))
        assert len(logs) == len(SEEDS) and all("running in a warm worker" in log.read_text() for log in logs), rule
    warm, alone = _run_outputs(workdir), _run_outputs(finished_study)
    assert sorted(warm) == sorted(alone)
    for name, content in warm.items():
        assert content == alone[name], name


@pytest.mark.parametrize("warm", [False, True], ids=["alone", "warm"])
def test_a_train_job_killed_mid_training_reruns_to_the_uninterrupted_files(finished_study, tmp_path, warm):
    # SIGKILL to Snakemake and its jobs (one process group), as when the machine dies; with the warm interpreter
    # the group holds it and its workers too. Both profiles rerun incomplete jobs; the kill leaves Snakemake's
    # lock, which `--unlock` lifts (docs/reproducing.md).
    assert _PROFILE["rerun-incomplete"] is True
    workdir = tmp_path / "killed"
    command = snakemake_command(workdir, CONFIG, None, *AS_THE_PROFILE)
    # a killed warm server cannot remove its socket's folder (privtext.runtime.warm): this test does
    servers_before = set(Path(tempfile.gettempdir()).glob("privtext-warm-*"))
    with open(tmp_path / "killed.log", "w") as out:
        run = subprocess.Popen(as_make_runs_it(command) if warm else command, cwd=workdir, stdout=out,
                               stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + 600
        killed_log = None
        while run.poll() is None and time.monotonic() < deadline:
            if killed_log := _training_now(workdir):
                os.killpg(run.pid, signal.SIGKILL)
                break
            time.sleep(0.05)
        run.wait()
    for folder in set(Path(tempfile.gettempdir()).glob("privtext-warm-*")) - servers_before:
        shutil.rmtree(folder, ignore_errors=True)
    assert killed_log is not None and run.returncode == -signal.SIGKILL, (
        run.returncode, (tmp_path / "killed.log").read_text()[-3000:])
    killed_run = workdir / killed_log.parent.relative_to(workdir / "results/logs")
    assert not (killed_run / "metrics.json").exists() and not (killed_run / "model.safetensors").exists()

    subprocess.run([*command, "--unlock"], cwd=workdir, capture_output=True, text=True, check=True)
    run_snakemake(workdir, CONFIG, None, *AS_THE_PROFILE)
    resumed, uninterrupted = _run_outputs(workdir), _run_outputs(finished_study)
    assert sorted(resumed) == sorted(uninterrupted)
    assert {Path(name).name for name in resumed} >= {
        "model.safetensors", "released_train.npy", "released_dev.npy", "released_test.npy", "predictions.parquet",
        "metrics.json", "attack_precomputed.json", "attack.json", "fairness.json", "mdl.json"}
    for name, content in resumed.items():
        assert content == uninterrupted[name], name
