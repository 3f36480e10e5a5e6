"""keep_releases (issue 29, "Storage at paper scale"): a point of a study that drops its releases loses
released_{train,dev,test}.npy once its measures are written, a second run plans nothing, a change that reads the
releases again retrains that point to the same numbers; and benchmarks/paper_scale.py's disk footprint."""

from __future__ import annotations

import importlib.util
import json
import re
import shutil
from collections import Counter
from pathlib import Path

import pytest

from conftest import PROJECT_ROOT, planned_job_counts, run_snakemake, without_timings

RELEASES = ("released_train.npy", "released_dev.npy", "released_test.npy")
MEASURED = ("metrics.json", "attack.json", "mdl.json", "fairness.json", "predictions.parquet", "model.safetensors")
CONFIG = {
    "datasets": ["demo"],
    "demo": {"n_examples": 500, "strong_strength": 0.35},
    "attack": {"attackers": ["linear"]},
    "studies": {
        # artefacts on: its points also get MDL and fairness (two more readers of the releases and predictions)
        "dropping": {"datasets": ["demo"], "seeds": [10], "keep_releases": False,
                     "methods": {"nonpriv": {}, "noise": {"epsilon": [0.5]}}},
        # shares the nonpriv point and keeps releases: a point planned by several studies keeps them if any does
        "keeping": {"datasets": ["demo"], "seeds": [10], "artefacts": False, "methods": {"nonpriv": {}}},
    },
    "run_studies": ["dropping", "keeping"],
}
DROPPED = "results/runs/demo/minilm/noise/mu~0/epsilon~0.5/seed~10"
KEPT = "results/runs/demo/minilm/nonpriv/mu~0/seed~10"


@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    workdir = tmp_path_factory.mktemp("keep_releases")
    run_snakemake(workdir, CONFIG)
    return workdir


def test_a_dropping_study_loses_its_releases_once_measured_and_a_shared_point_keeps_them(finished):
    dropped, kept = finished / DROPPED, finished / KEPT
    for name in MEASURED:
        assert (dropped / name).is_file(), f"{DROPPED}/{name}"
        assert (kept / name).is_file(), f"{KEPT}/{name}"
    assert not [name for name in RELEASES if (dropped / name).exists()]
    assert all((kept / name).is_file() for name in RELEASES)
    # the measures were computed from the releases before they went
    mdl = json.loads((dropped / "mdl.json").read_text())
    assert mdl and json.loads((dropped / "attack.json").read_text())
    assert (finished / "results/tables/studies/dropping/measures.csv").is_file()


def test_a_second_run_plans_nothing(finished):
    planned = run_snakemake(finished, CONFIG, None, "-n").stdout
    assert "Nothing to be done" in planned, planned_job_counts(planned)


def test_a_change_that_reads_the_releases_again_retrains_only_the_dropped_point_to_the_same_numbers(finished, tmp_path):
    workdir = tmp_path / "copy"
    shutil.copytree(finished, workdir, symlinks=True)  # copy2 keeps the mtimes Snakemake compares
    changed = json.loads(json.dumps(CONFIG))
    changed["attack"]["attackers"] = ["linear", "mlp"]
    jobs = planned_job_counts(run_snakemake(workdir, changed, None, "-n").stdout)
    assert jobs.get("train") == 1 and jobs.get("attack") == 2 and "embed" not in jobs, jobs

    before = {name: json.loads((workdir / DROPPED / name).read_text()) for name in ("metrics.json", "mdl.json")}
    run_snakemake(workdir, changed)
    after = {name: json.loads((workdir / DROPPED / name).read_text()) for name in ("metrics.json", "mdl.json")}
    assert without_timings(after) == without_timings(before)
    attack = json.loads((workdir / DROPPED / "attack.json").read_text())
    assert "mlp" in json.dumps(attack)
    assert not [name for name in RELEASES if (workdir / DROPPED / name).exists()]
    assert "Nothing to be done" in run_snakemake(workdir, changed, None, "-n").stdout


def _all_inputs(workdir: Path, config: dict) -> str:
    planned = run_snakemake(workdir, config, None, "-n").stdout
    return re.search(r"rule all:\n\s+input: (.*)", planned).group(1)


def test_the_top_level_setting_overrides_every_study(tmp_path):
    # Under each study's setting the shared point is kept through rule all; keep_releases=false drops it too.
    assert f"{KEPT}/released_test.npy" in _all_inputs(tmp_path / "studies", CONFIG)
    assert "released_" not in _all_inputs(tmp_path / "dropped", {**CONFIG, "keep_releases": False})
    assert "released_" not in _all_inputs(tmp_path / "kept", {**CONFIG, "keep_releases": True})


# --- benchmarks/paper_scale.py: the disk footprint -------------------------------------------------------------

SCRIPT = PROJECT_ROOT / "benchmarks" / "paper_scale.py"
spec = importlib.util.spec_from_file_location("paper_scale_benchmark", SCRIPT)
paper_scale = importlib.util.module_from_spec(spec)
spec.loader.exec_module(paper_scale)


def _file(path: Path, size: int) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"x" * size)


def test_the_disk_footprint_takes_measured_folders_first_then_rows_times_columns(tmp_path):
    runs, data = tmp_path / "results/runs", tmp_path / "results/data"
    point = runs / "demo/minilm/nonpriv/mu~0/seed~10"  # releases 1,000 bytes, other files 1,000
    for name, size in (("metrics.json", 100), ("model.safetensors", 900), *zip(RELEASES, (600, 200, 200))):
        _file(point / name, size)
    dropped = runs / "demo/minilm/nonpriv/mu~0/seed~20"  # releases removed: other files 1,200, no release size
    _file(dropped / "metrics.json", 100)
    _file(dropped / "model.safetensors", 1100)
    for name in RELEASES:  # unfinished (no metrics.json): not measured
        _file(runs / "demo/minilm/noise/mu~0/epsilon~1/seed~10" / name, 5000)
    (data / "demo").mkdir(parents=True)
    (data / "demo/meta.json").write_text(json.dumps({"splits": {"train": 10, "dev": 5, "test": 5}}))
    (data / "adult").mkdir()
    (data / "adult/meta.json").write_text(json.dumps({"splits": {"train": 20, "dev": 5, "test": 5}, "n_features": 7}))

    measured = paper_scale.run_folder_bytes([runs])
    assert dict(measured) == {("demo", "nonpriv"): {"releases": [1000], "other": [1000, 1200]}}
    basis = Counter()
    points = [("demo", "nonpriv"), ("demo", "nonpriv"),  # measured: 1,000 + 1,100 each
              ("demo", "dpnr"),     # dpnr releases its input: 20 rows x 384 (text encoder) x 4 = 30,720
              ("adult", "dpnr"),    # 30 rows x 7 features x 4 = 840
              ("adult", "nonpriv"),  # representation_dim 50: 30 x 50 x 4 = 6,000
              ("tp_us", "nonpriv"),  # no meta.json: the papers' size, 27,676 rows x 50 x 4 = 5,535,200
              ("unlisted", "nonpriv")]  # no meta.json, no documented size: releases 0
    kept, without = paper_scale.disk_footprint(points, measured, [data], basis)
    other = 1100  # a point without a measured folder of its own: the mean of every measured folder
    assert without == 2 * 1100 + 5 * other
    assert kept == without + 2 * 1000 + 30_720 + 840 + 6_000 + 5_535_200
    assert basis == Counter({("releases", "measured: same dataset and method"): 2,
                             ("releases", "rows x released columns x 4 bytes"): 4,
                             ("releases", "dataset size unknown: 0"): 1,
                             ("other files", "measured: same dataset and method"): 2,
                             ("other files", "mean of every measured folder"): 5})
