"""Shared fixtures: project paths, the offline data mirror, and a real Snakemake runner."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

PROJECT_ROOT = Path(__file__).resolve().parents[1]
SHARED = PROJECT_ROOT.parent / "shared"
SNAKEMAKE = Path(sys.executable).parent / "snakemake"
# Snakemake's command line without its job-rate limiter, as `make run` starts local runs
LOCAL_SNAKEMAKE = PROJECT_ROOT / "workflow" / "local_snakemake.py"


def _folder(env_var: str, default: Path) -> Path | None:
    path = Path(os.environ.get(env_var, default))
    return path if path.is_dir() else None


DATA_MIRROR = _folder("PRIVTEXT_DATA_MIRROR", SHARED / "data")
NLTK_DATA = _folder("PRIVTEXT_NLTK_DATA", SHARED / "nltk_data")

needs_mirror = pytest.mark.skipif(DATA_MIRROR is None, reason="offline data mirror ../shared/data not present")


@pytest.fixture
def data_mirror() -> Path:
    if DATA_MIRROR is None:
        pytest.skip("offline data mirror ../shared/data not present")
    return DATA_MIRROR


def snakemake_command(
    workdir: Path, config: dict | None = None, targets: list[str] | None = None, *extra: str, cores: int = 2,
) -> list[str]:
    """The command line that runs the project's real Snakefile in ``workdir`` (creating it) with ``config``
    written as its config file; for a test that starts Snakemake itself (to kill it, say)."""
    workdir.mkdir(parents=True, exist_ok=True)
    configfile = workdir / "test-config.yaml"
    configfile.write_text(yaml.safe_dump(config or {}))
    return [
        str(SNAKEMAKE), "--snakefile", str(PROJECT_ROOT / "Snakefile"), "--directory", str(workdir),
        "--configfile", str(configfile), "--cores", str(cores), "--workflow-profile", "none",
        *extra, *(targets or []),
    ]


def run_snakemake(
    workdir: Path,
    config: dict | None = None,
    targets: list[str] | None = None,
    *extra: str,
    check: bool = True,
    cores: int = 2,
) -> subprocess.CompletedProcess:
    """Run the project's real Snakefile in ``workdir`` with ``config`` written as the config file."""
    command = snakemake_command(workdir, config, targets, *extra, cores=cores)
    result = subprocess.run(command, capture_output=True, text=True, cwd=workdir)
    if check and result.returncode != 0:
        raise AssertionError(f"snakemake failed ({result.returncode}):\n{result.stdout[-4000:]}\n{result.stderr[-6000:]}")
    return result


def copy_project(destination: Path, names: tuple[str, ...]) -> Path:
    """A copy of the project's top-level files and folders ``names`` in ``destination`` (caches left out)."""
    import shutil

    ignore = shutil.ignore_patterns("__pycache__", "*.egg-info", ".pytest_cache")
    destination.mkdir(parents=True, exist_ok=True)
    for name in names:
        source = PROJECT_ROOT / name
        if source.is_dir():
            shutil.copytree(source, destination / name, ignore=ignore)
        else:
            shutil.copy2(source, destination / name)
    return destination


INSTALL_INPUTS = ("pyproject.toml", "requirements.lock", "requirements-slurm.lock")  # what the .venv stamp is made from


def installed_copy(folder: Path, names: tuple[str, ...]) -> Path:
    """``folder/project``: a copy of the project's ``names`` (with the install inputs) whose ``.venv`` is the
    installed one, older inputs than its stamp so that make installs nothing, and ``folder/shared`` the shared
    folder when it sits beside the project, as in a clone (make then passes the mirror and the papers' numbers)."""
    stamp = PROJECT_ROOT / ".venv" / ".privtext-installed"
    assert stamp.exists(), "make install first (make test does)"
    copy = copy_project(folder / "project", tuple(dict.fromkeys((*names, *INSTALL_INPUTS))))
    (copy / ".venv").symlink_to(PROJECT_ROOT / ".venv")
    for name in INSTALL_INPUTS:
        os.utime(copy / name, (stamp.stat().st_mtime - 1, stamp.stat().st_mtime - 1))
    if SHARED.is_dir():
        (folder / "shared").symlink_to(SHARED)
    return copy


def planned_job_counts(dry_run_stdout: str) -> dict[str, int]:
    """Rule -> jobs of a Snakemake dry run's "Job stats" table (its total left out); {} when nothing is planned."""
    if "Job stats:" not in dry_run_stdout:
        return {}
    table = dry_run_stdout.split("Job stats:", 1)[1].split("Reasons:", 1)[0]
    return {m.group(1): int(m.group(2)) for m in re.finditer(r"^(\w+)\s+(\d+)$", table, flags=re.M)
            if m.group(1) != "total"}


def without_timings(record):
    """A record (a run's history, metrics) less its wall and CPU seconds (keys ``seconds`` and ``*_seconds``), at
    any depth: no seed fixes those."""
    if isinstance(record, dict):
        return {k: without_timings(v) for k, v in record.items() if k != "seconds" and not k.endswith("_seconds")}
    if isinstance(record, list):
        return [without_timings(v) for v in record]
    return record


def demo_with_word_counts(root: Path, n_examples: int) -> tuple[object, dict[str, Path]]:
    """demo (``n_examples`` texts, seed 3) built into ``root/data``, with each split's word counts as features
    in ``root/{split}.npy`` (a fast stand-in for encoder features): (the built dataset, split -> features)."""
    import numpy as np

    from privtext.data import Quarantine, get_builder, write_dataset
    from privtext.plan.config import load_config

    built = get_builder("demo")({}, {**load_config()["demo"], "n_examples": n_examples}, 3, Quarantine())
    write_dataset(built, root / "data", dataset="demo", inputs={}, seed=3, quarantine=Quarantine())
    vocabulary = sorted({w for frame in built.splits.values() for text in frame["text"] for w in text.split()})
    features = {}
    for split, frame in built.splits.items():
        counts = np.array([[text.split().count(w) for w in vocabulary] for text in frame["text"]], dtype=np.float32)
        np.save(root / f"{split}.npy", counts, allow_pickle=False)
        features[split] = root / f"{split}.npy"
    return built, features


@pytest.fixture(scope="module")
def demo_point(tmp_path_factory) -> tuple[Path, dict[str, Path]]:
    """The demo dataset (400 texts) with bag-of-cue-word features (a fast stand-in for encoder features), built
    once per test module: (root, split -> features)."""
    root = tmp_path_factory.mktemp("point")
    _, features = demo_with_word_counts(root, 400)
    return root, features
