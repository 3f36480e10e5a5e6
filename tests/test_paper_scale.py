"""benchmarks/paper_scale.py's CPU-hours: a train job measured on a capped sample costs, at the plan's size, its
training seconds scaled by the rows it will train on; a job measured in a warm worker costs the start-up a
process of its own pays; everything else as measured."""

from __future__ import annotations

import functools
import importlib.util
import os
import statistics
import subprocess
import sys
import json
from collections import Counter
from pathlib import Path

import pytest

from conftest import PROJECT_ROOT
from privtext.runtime.warm import WORKER_ENV

SCRIPT = PROJECT_ROOT / "benchmarks" / "paper_scale.py"
spec = importlib.util.spec_from_file_location("paper_scale_cpu_benchmark", SCRIPT)
paper_scale = importlib.util.module_from_spec(spec)
spec.loader.exec_module(paper_scale)

POINT = "adult/features/federate/mu~0/epsilon~8/lambda~0.5/seed~10"


def _benchmark(results: Path, point: str, rule: str, seconds: float) -> None:
    tsv = results / "benchmarks/runs" / point / f"{rule}.tsv"
    tsv.parent.mkdir(parents=True, exist_ok=True)
    tsv.write_text(f"s\th:m:s\tmax_rss\tcpu_time\n{seconds}\t0:00:{seconds:g}\t100\t{seconds}\n")


def _metrics(results: Path, point: str, seconds: float, n_train: int, dev_seconds: list[float]) -> None:
    metrics = results / "runs" / point / "metrics.json"
    metrics.parent.mkdir(parents=True, exist_ok=True)
    epochs = [{"epoch": i, "train_seconds": 1.0, "dev_seconds": d} for i, d in enumerate(dev_seconds)]
    # FEDERATE's batch of 2,000 under the training rule's 50 steps an epoch: 20 rows a batch on 1,000 rows
    hyperparameters = {"batch_size": 2000, "min_steps_per_epoch": 50}
    metrics.write_text(json.dumps({"seconds": seconds, "n_train": n_train, "hyperparameters": hyperparameters,
                                   "history": {"epochs": epochs}}))


def test_a_train_job_scales_its_training_by_the_planned_rows_and_nothing_else(tmp_path):
    results = tmp_path / "results"
    # measured at 1,000 rows: a 10 s job, of which 7 s in the library, 1 s of it dev passes: 6 s grow with rows
    _benchmark(results, POINT, "train", 10.0)
    _metrics(results, POINT, 7.0, 1_000, [0.25, 0.25, 0.5])
    _benchmark(results, POINT, "attack", 2.0)  # attackers are capped at attack.max_train: never scaled
    other = "adult/features/noise/mu~0/epsilon~8/seed~10"
    _benchmark(results, other, "train", 4.0)  # no run folder: no training part known, costed as measured

    measured = paper_scale.benchmark_seconds([results / "benchmarks"])
    assert measured[("train", "adult", "federate")] == [paper_scale.Sample(10.0, 6.0, 1_000, 2000, 50)]
    assert measured[("attack", "adult", "federate")] == [paper_scale.Sample(2.0)]
    assert measured[("train", "adult", "noise")] == [paper_scale.Sample(4.0)]

    basis = Counter()
    seconds = functools.partial(paper_scale.job_seconds, measured=measured, basis=basis)
    # 3 times the rows: by rows 3 times the training (the upper bound); by steps the same 50 steps an epoch
    # (batches of 60), the training as measured (the lower)
    assert seconds("train", "adult", "federate", rows=3_000) == pytest.approx(10 + 6 * 2)
    assert seconds("train", "adult", "federate", rows=3_000, bound="low") == pytest.approx(10.0)
    # 200,000 rows: batches of 2,000, 100 steps an epoch, twice the training; 200 times by rows
    assert seconds("train", "adult", "federate", rows=200_000, bound="low") == pytest.approx(10 + 6)
    assert seconds("train", "adult", "federate", rows=200_000) == pytest.approx(10 + 6 * 199)
    # fewer rows than measured: by rows is the lower bound now; by steps still 50 an epoch
    assert seconds("train", "adult", "federate", rows=500, bound="low") == pytest.approx(10 - 3)
    assert seconds("train", "adult", "federate", rows=500, bound="high") == pytest.approx(10.0)
    assert seconds("train", "adult", "federate", rows=1_000) == pytest.approx(10.0)
    assert seconds("train", "adult", "federate", rows=None) == pytest.approx(10.0)
    assert seconds("train", "adult", "noise", rows=3_000) == pytest.approx(4.0)
    assert seconds("attack", "adult", "federate", rows=3_000) == pytest.approx(2.0)
    # another dataset's job of the same method: the measured job's training per row at this dataset's rows
    assert seconds("train", "bios", "federate", rows=500, bound="low") == pytest.approx(10 - 3)
    assert basis == Counter({("train", "same rule, dataset, method"): 8, ("train", "same rule and method"): 1,
                             ("train", "same rule, dataset, method, at the planned rows"): 1,  # 1,000 rows
                             ("attack", "same rule, dataset, method"): 1})

    # a job measured at the planned size, where there is one, rather than the extrapolation
    full = tmp_path / "full"
    _benchmark(full, POINT, "train", 30.0)
    _metrics(full, POINT, 27.0, 3_000, [1.0])
    both = paper_scale.benchmark_seconds([results / "benchmarks", full / "benchmarks"])
    basis.clear()
    assert paper_scale.job_seconds("train", "adult", "federate", both, basis, rows=3_000) == pytest.approx(30.0)
    assert paper_scale.job_seconds("train", "adult", "federate", both, basis, rows=2_000) == pytest.approx(
        statistics.mean([10 + 6 * 1, 30]))  # neither at 2,000 rows: the upper bounds, by rows from 1,000 and by
    # steps from 3,000 (50 an epoch at either size)
    assert basis == Counter({("train", "same rule, dataset, method, at the planned rows"): 1,
                             ("train", "same rule, dataset, method"): 1})


def test_the_planned_rows_are_the_training_split_under_the_cap(tmp_path):
    data = tmp_path / "data"
    (data / "adult").mkdir(parents=True)
    (data / "adult/meta.json").write_text(json.dumps({"splits": {"train": 27_133, "dev": 9_044, "test": 9_045}}))
    assert paper_scale.training_rows([data], "adult", None) == 27_133
    assert paper_scale.training_rows([data], "adult", 10_000) == 10_000
    assert paper_scale.training_rows([data], "adult", 50_000) == 27_133
    assert paper_scale.training_rows([data], "bios", None) == paper_scale.TRAIN_ROWS["bios"]  # no meta.json
    assert paper_scale.training_rows([data], "unknown", None) is None


def _job_log(path: Path, in_worker: bool) -> None:
    """The log a job's own logging set-up writes, in a process of its own (it replaces the root handlers)."""
    environment = {k: v for k, v in os.environ.items() if k != WORKER_ENV}
    subprocess.run([sys.executable, "-c", "import sys; from privtext.runtime.logs import setup_logging; "
                    "setup_logging(sys.argv[1])", str(path)],
                   env={**environment, **({WORKER_ENV: "1"} if in_worker else {})}, check=True)


def test_a_job_measured_in_a_warm_worker_pays_the_start_up_of_a_process_of_its_own(tmp_path):
    results = tmp_path / "results"
    _benchmark(results, POINT, "train", 10.0)
    _metrics(results, POINT, 7.0, 1_000, [1.0])
    _benchmark(results, POINT, "mdl", 1.0)
    # the job's own logging writes the log, as a worker's would (results/logs/<run folder>/<rule>.log)
    _job_log(results / "logs/results/runs" / POINT / "train.log", in_worker=True)
    _job_log(results / "logs/results/runs" / POINT / "mdl.log", in_worker=False)

    measured = paper_scale.benchmark_seconds([results / "benchmarks"])
    assert measured[("train", "adult", "federate")] == [paper_scale.Sample(10.0, 6.0, 1_000, 2000, 50, warm=True)]
    assert measured[("mdl", "adult", "federate")] == [paper_scale.Sample(1.0, warm=False)]
    basis = Counter()
    assert paper_scale.job_seconds("train", "adult", "federate", measured, basis, 2_000, 1.5) == pytest.approx(17.5)
    assert paper_scale.job_seconds("mdl", "adult", "federate", measured, basis, None, 1.5) == pytest.approx(1.0)


def test_every_dataset_plans_those_whose_raw_files_are_not_here(tmp_path):
    from privtext.data import BUILDERS
    from privtext.data.sources import download_targets, resolve_layout

    mirror = tmp_path / "mirror"  # Adult's files only: every other dataset with raw files lacks them here
    for path in download_targets("adult", mirror).values():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("kept")
    raw = tmp_path / "raw"
    placed = paper_scale.place_missing_raw_files(raw, [raw, mirror])
    assert "adult" not in placed and "demo" not in placed  # found in the mirror; generated, no raw files
    assert {"tp_us", "tp_uk", "twitter", "bios"} <= set(placed)
    for dataset in BUILDERS:  # a dry run now finds a layout for every dataset
        assert resolve_layout(dataset, [raw, mirror]) is not None, dataset
    assert all(path.read_text() == "kept" for path in download_targets("adult", mirror).values())
    assert not (raw / "adult").exists() and all(p.stat().st_size == 0 for p in raw.rglob("*") if p.is_file())

    # the stand-ins are planned like real files: a FEDERATE point on Twitter and on Bias in Bios
    # and never in a raw_dir the settings name: only in the plan's scratch folder
    user_raw = tmp_path / "user-raw"
    shrink = {"grid_shrink": {"seeds": 1, "values": 1, "studies_exempt": ["quick"]}, "raw_dir": str(user_raw)}
    workdir = tmp_path / "plan"
    workdir.mkdir()
    jobs = paper_scale.planned_jobs(workdir, ["claims_federate"], shrink, every_dataset=True)
    trained = {(w["dataset"], w["method"]) for rule, _, w in jobs if rule == "train"}
    assert {("twitter", "federate"), ("bios", "federate"), ("adult", "federate")} <= trained
    assert not user_raw.exists()


def test_a_fine_tuned_point_is_costed_apart_from_the_same_method_on_frozen_features(tmp_path):
    results = tmp_path / "results"
    frozen, tuned = (f"ag_dpnr/{encoder}/dpnr/mu~0/epsilon~0.5/seed~10" for encoder in ("minilm", "minilm+finetune"))
    _benchmark(results, frozen, "train", 3.0)
    _benchmark(results, tuned, "train", 780.0)

    measured = paper_scale.benchmark_seconds([results / "benchmarks"])
    assert measured[("train", "ag_dpnr", "dpnr")] == [paper_scale.Sample(3.0)]
    assert measured[("train", "ag_dpnr", "dpnr+finetune")] == [paper_scale.Sample(780.0)]
    assert paper_scale.method_kind("dpnr", "minilm+finetune") == "dpnr+finetune"
    assert paper_scale.method_kind("dpnr", "minilm") == "dpnr"
    basis = Counter()
    assert paper_scale.job_seconds("train", "ag_dpnr", "dpnr+finetune", measured, basis) == pytest.approx(780.0)
    assert paper_scale.job_seconds("train", "ag_dpnr", "dpnr", measured, basis) == pytest.approx(3.0)


def test_a_job_that_held_two_cores_costs_twice_its_wall_seconds(tmp_path):
    results = tmp_path / "results"
    point = "ag_dpnr/minilm+finetune/dpnr/mu~0/epsilon~0.5/seed~10"
    _benchmark(results, point, "train", 780.0)
    metrics = results / "runs" / point / "metrics.json"
    metrics.parent.mkdir(parents=True)
    metrics.write_text(json.dumps({"seconds": 700.0, "n_train": 2_000, "threads": 2, "history": {"epochs": []}}))

    [sample] = paper_scale.benchmark_seconds([results / "benchmarks"])[("train", "ag_dpnr", "dpnr+finetune")]
    assert sample.threads == 2
    assert sample.at(None) == pytest.approx(1_560.0)
    assert sample.at(4_000) == pytest.approx(2 * (780 + 700))  # twice the rows: the training part twice, on 2 cores
