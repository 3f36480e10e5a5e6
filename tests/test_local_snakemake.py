"""workflow/local_snakemake.py: local runs schedule once per finished job, not once per timer of the rate limiter."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from conftest import LOCAL_SNAKEMAKE as LAUNCHER, PROJECT_ROOT, SNAKEMAKE
JOBS = 6

# Jobs that wait for the one core: every round of Snakemake's scheduler logs the ready jobs it looks at (--verbose).
SNAKEFILE = f"""
rule all:
    input: expand("out/{{i}}.done", i=range({JOBS}))

rule job:
    output: "out/{{i}}.done"
    shell: "sleep 1 && touch {{output}}"
"""


def _launcher():
    spec = importlib.util.spec_from_file_location("local_snakemake", LAUNCHER)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _scheduling_rounds(workdir: Path, command: list[str]) -> int:
    result = subprocess.run([*command, "--snakefile", str(workdir / "Snakefile"), "--directory", str(workdir),
                             "--cores", "1", "--workflow-profile", "none", "--verbose"],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-3000:]
    assert len(list((workdir / "out").glob("*.done"))) == JOBS
    return len(re.findall(r"Ready (?:subsampled )?jobs", result.stderr + result.stdout))


@pytest.fixture
def workflow_dir(tmp_path: Path) -> Path:
    (tmp_path / "Snakefile").write_text(SNAKEFILE)
    return tmp_path


def test_local_runs_schedule_once_per_finished_job_where_the_cli_default_adds_rounds(workflow_dir):
    launched = _scheduling_rounds(workflow_dir, [sys.executable, str(LAUNCHER)])
    # One round to start, one per finished job (the last of which starts `all`).
    assert launched <= JOBS + 2
    for path in (workflow_dir / "out").glob("*.done"):
        path.unlink()
    # Snakemake's own command line, for contrast: its 100/1s limiter arms a timer every round that leaves a job
    # waiting, and each finished job adds a round that arms one more, so rounds grow with the jobs done. If this
    # fails, Snakemake no longer does that, and the launcher can go (docs/performance.md).
    plain = _scheduling_rounds(workflow_dir, [str(SNAKEMAKE)])
    assert plain >= 2 * JOBS


@pytest.mark.parametrize("argv, asked", [
    ([], False),
    (["--max-jobs-per-timespan", "100/1s"], True),
    (["--max-jobs-per-timespan=10/1m"], True),
    (["--max-jobs-per-second", "5"], True),
])
def test_a_limit_set_on_the_command_line_is_kept(argv, asked):
    from snakemake.cli import parse_args

    launcher = _launcher()
    _, args = parse_args(["--cores", "1", "--snakefile", str(PROJECT_ROOT / "Snakefile"), *argv])
    assert launcher.limit_was_asked_for(argv, args) is asked
    assert launcher.is_local(args)


def test_a_limit_set_by_a_profile_is_kept(tmp_path):
    from snakemake.cli import parse_args

    profile = tmp_path / "profile"
    profile.mkdir()
    (profile / "config.yaml").write_text('max-jobs-per-timespan: "20/1s"\n')
    argv = ["--cores", "1", "--profile", str(profile), "--snakefile", str(PROJECT_ROOT / "Snakefile")]
    _, args = parse_args(argv)
    assert _launcher().limit_was_asked_for(argv, args)


def test_a_run_through_an_executor_plugin_keeps_the_default_limit():
    # A cluster executor submits jobs: there the limiter protects the cluster's scheduler.
    launcher = _launcher()
    assert not launcher.is_local(SimpleNamespace(executor="slurm"))
    assert launcher.is_local(SimpleNamespace(executor="local"))
