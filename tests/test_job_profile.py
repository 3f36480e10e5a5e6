"""benchmarks/job_profile.py --inside-train: a train job's wall seconds split into training, each in-job
attacker and the rest, on a hand-made results folder."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from conftest import PROJECT_ROOT

SCRIPT = PROJECT_ROOT / "benchmarks" / "job_profile.py"
# Snakemake's benchmark columns; only `s` (wall seconds) is read
HEADER = "s\th:m:s\tmax_rss\tmax_vms\tmax_uss\tmax_pss\tio_in\tio_out\tmean_load\tcpu_time\n"


def _train_job(results: Path, dataset: str, seed: int, wall: float, training: float, attackers: dict) -> None:
    point = Path(dataset, "features", "federate", "mu~0", f"seed~{seed}")
    (results / "benchmarks" / "runs" / point).mkdir(parents=True)
    (results / "benchmarks" / "runs" / point / "train.tsv").write_text(
        HEADER + f"{wall}\t0:00:00\t1\t1\t1\t1\t0\t0\t50\t{wall / 2}\n")
    (results / "runs" / point).mkdir(parents=True)
    (results / "runs" / point / "metrics.json").write_text(json.dumps({"seconds": training}))
    stored = {"attributes": {"key": {}, "result": {"attackers": {a: {"seconds": s} for a, s in attackers.items()}}}}
    (results / "runs" / point / "attack_precomputed.json").write_text(json.dumps(stored))


def test_inside_train_splits_each_job_into_training_attackers_and_the_rest(tmp_path):
    results = tmp_path / "results"
    _train_job(results, "adult", 10, wall=60.0, training=30.0, attackers={"sklearn_mlp": 24.0})
    _train_job(results, "adult", 20, wall=60.0, training=24.0, attackers={"sklearn_mlp": 12.0, "mlp": 18.0})
    _train_job(results, "blog", 10, wall=18.0, training=6.0, attackers={})  # a job that attacked nothing

    out = subprocess.run([sys.executable, str(SCRIPT), "--inside-train", str(results)], capture_output=True,
                         text=True, check=True).stdout.splitlines()

    rows = [line.split("\t") for line in out]
    assert rows[0] == ["dataset", "jobs", "wall (job-min)", "training (job-min)", "attacker mlp (job-min)",
                       "attacker sklearn_mlp (job-min)", "rest (job-min)"]
    jobs = {row[0]: int(row[1]) for row in rows[1:]}
    minutes = {row[0]: [float(v) for v in row[2:]] for row in rows[1:]}
    assert jobs == {"adult": 2, "blog": 1, "total": 3}
    # printed to 0.1 job-minute: seconds chosen as multiples of 6
    assert minutes["adult"] == [2.0, 0.9, 0.3, 0.6, 0.2]
    assert minutes["blog"] == [0.3, 0.1, 0.0, 0.0, 0.2]
    assert minutes["total"] == [2.3, 1.0, 0.3, 0.6, 0.4]
