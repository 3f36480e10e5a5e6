"""The README's commands, run as written on a copy of the project: `make claims` on a subset of the datasets
(issue 43: it failed on an empty seed_shape table). About 7 minutes on 2 cores, most of it the ε audit."""

from __future__ import annotations

import os
import subprocess

import pandas as pd
import pytest

from conftest import PROJECT_ROOT, copy_project

pytestmark = pytest.mark.slow

COPIED = ("Makefile", "Snakefile", "config.yaml", "pyproject.toml", "requirements.lock", "README.md", "src", "rules",
          "workflow", "schemas", "profiles", "envs")
SUBSET_COMMAND = "make claims CLAIMS_CONFIG='datasets=[demo]'"


def test_the_readme_claims_subset_command_runs_and_says_which_rows_it_left_out(tmp_path):
    assert SUBSET_COMMAND in (PROJECT_ROOT / "README.md").read_text()
    stamp = PROJECT_ROOT / ".venv" / ".privtext-installed"
    assert stamp.exists(), "make install first (make test does)"
    copy = copy_project(tmp_path / "project", COPIED)
    (copy / ".venv").symlink_to(PROJECT_ROOT / ".venv")  # installed: make sees its stamp and installs nothing
    for name in ("pyproject.toml", "requirements.lock"):
        os.utime(copy / name, (stamp.stat().st_mtime - 1, stamp.stat().st_mtime - 1))
    shared = PROJECT_ROOT.parent / "shared"
    if shared.is_dir():  # beside the project, as in a clone: make passes the mirror and the papers' numbers
        (tmp_path / "shared").symlink_to(shared)
    environment = {**os.environ, "PYTHONPATH": str(copy / "src")}  # the copy's library, not the installed one
    result = subprocess.run(["bash", "-c", SUBSET_COMMAND], cwd=copy, env=environment, capture_output=True,
                            text=True, timeout=3600)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]

    claims = pd.read_csv(copy / "results/tables/claims.csv")
    left_out = claims[claims["dataset"].isin(["ag_dpnr", "blog", "adult", "celeba", "tp_us"])]
    assert len(left_out) and (left_out["holds"] == "untestable").all()
    assert left_out["reason"].str.contains("not in this run: ").all()  # after a reading's label, where it has one
    assert (claims.loc[claims["dataset"] == "demo", "holds"] != "untestable").any()  # the subset was judged
