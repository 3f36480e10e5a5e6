"""The Makefile from a project folder whose path has spaces: it still finds ../shared and hands each of its
paths to Snakemake as one argument."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import PROJECT_ROOT

# Stands in for .venv/bin/snakemake and records what make hands it: its arguments, NUL-separated, and the
# mirror variables the Makefile exports.
RECORDING_SNAKEMAKE = """#!/bin/sh
printf '%s\\0' "$@" > "$RECORD_ARGUMENTS"
printf '%s\\0' "$PRIVTEXT_DATA_MIRROR" "$PRIVTEXT_NLTK_DATA" > "$RECORD_ENVIRONMENT"
"""


# Stands in for .venv/bin/python: `python -m privtext.runtime.warm -- COMMAND ...` (the warm interpreter
# `make run` and `make claims` start) runs COMMAND as the real module would, with the server left out; and
# `python workflow/local_snakemake.py ARGUMENTS` (Snakemake's command line without its rate limiter) hands
# ARGUMENTS to Snakemake as it does.
WARM_PYTHON = """#!/bin/sh
if [ "$1" = workflow/local_snakemake.py ]; then shift; exec "$(dirname "$0")/snakemake" "$@"; fi
[ "$1 $2 $3" = "-m privtext.runtime.warm --" ] || exit 99
shift 3
exec "$@"
"""


def _recording_project(tmp_path: Path) -> tuple[Path, Path, dict[str, str]]:
    """A copy of the Makefile in a folder whose path has spaces, beside a ../shared, with a snakemake that
    records its arguments: (project, shared, environment for make)."""
    root = tmp_path / "my work"
    project, shared = root / "privtext copy", root / "shared"
    for folder in ("data", "nltk_data", "paper_results"):
        (shared / folder).mkdir(parents=True)
    project.mkdir()
    for name in ("Makefile", "pyproject.toml", "requirements.lock"):
        shutil.copy2(PROJECT_ROOT / name, project / name)
    snakemake = project / ".venv" / "bin" / "snakemake"
    snakemake.parent.mkdir(parents=True)
    snakemake.write_text(RECORDING_SNAKEMAKE)
    snakemake.chmod(0o755)
    python = project / ".venv" / "bin" / "python"
    python.write_text(WARM_PYTHON)
    python.chmod(0o755)
    # .venv is installed: the stamp is newer than pyproject.toml and the lock, so make runs only the target's command
    for name in ("pyproject.toml", "requirements.lock"):
        os.utime(project / name, (1_000_000_000, 1_000_000_000))
    (project / ".venv" / ".privtext-installed").touch()
    environment = {k: v for k, v in os.environ.items() if not k.startswith(("PRIVTEXT_", "MAKE"))}
    environment.update(RECORD_ARGUMENTS=str(tmp_path / "arguments"), RECORD_ENVIRONMENT=str(tmp_path / "environment"))
    return project, shared, environment


@pytest.mark.parametrize("target", ["run", "dryrun", "claims", "claims-finetune"])
def test_make_passes_the_shared_folders_whole_from_a_path_with_spaces(target: str, tmp_path: Path) -> None:
    project, shared, environment = _recording_project(tmp_path)

    result = subprocess.run(["make", target], cwd=project, env=environment, capture_output=True, text=True)

    assert result.returncode == 0, result.stdout + result.stderr
    arguments = (tmp_path / "arguments").read_text().split("\0")[:-1]
    overrides = [f"data_mirror={shared}/data", f"nltk_data={shared}/nltk_data",
                 f"published_results={shared}/paper_results/published.csv"]
    assert "--config" in arguments, arguments
    start = arguments.index("--config") + 1
    assert arguments[start:start + 3] == overrides
    assert (tmp_path / "environment").read_text().split("\0")[:-1] == [f"{shared}/data", f"{shared}/nltk_data"]


def test_make_claims_without_the_training_cap_as_docs_claims_md_says(tmp_path: Path) -> None:
    # docs/claims.md, "At full size": make claims CLAIMS_CONFIG="'train={max_train: null}'"
    project, _, environment = _recording_project(tmp_path)
    result = subprocess.run(["make", "claims", "CLAIMS_CONFIG='train={max_train: null}'"], cwd=project,
                            env=environment, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    arguments = (tmp_path / "arguments").read_text().split("\0")[:-1]
    # one argument, the last of --config's: it reaches Snakemake whole and overrides config.yaml's cap
    assert arguments[-1] == "train={max_train: null}", arguments
    assert arguments.index("--config") < len(arguments) - 1


def test_make_claims_finetune_is_make_claims_with_the_fine_tuned_arm(tmp_path: Path) -> None:
    # docs/claims.md, "The fine-tuned arm": the claims studies, the study claims_finetune among the claims
    # studies, and fine-tuned points capped at 2,000 training rows; a CLAIMS_CONFIG setting still comes last
    project, _, environment = _recording_project(tmp_path)
    for target in ("claims", "claims-finetune"):
        result = subprocess.run(["make", target, "CLAIMS_CONFIG='finetune={max_train: 2000, epochs: 10}'"],
                                cwd=project, env=environment, capture_output=True, text=True)
        assert result.returncode == 0, result.stdout + result.stderr
        arguments = (tmp_path / "arguments").read_text().split("\0")[:-1]
        if target == "claims":
            studies = next(a for a in arguments if a.startswith("run_studies="))
            continue
    assert next(a for a in arguments if a.startswith("run_studies=")) == studies[:-1] + ",claims_finetune]"
    assert "claims_studies=[claims,claims_cape,claims_federate,claims_federate_eps,claims_mu,claims_finetune]" in arguments
    assert arguments.index("finetune={max_train: 2000}") < arguments.index("finetune={max_train: 2000, epochs: 10}")


def test_the_replicate_on_new_seeds_runs_every_claims_study_on_them_as_docs_claims_md_says(tmp_path: Path) -> None:
    # docs/claims.md, "Verdicts on new seeds": make claims with every claims study on seeds 110-150, each
    # keeping its datasets and methods (Snakemake merges a nested --config into config.yaml key by key)
    import re

    import yaml
    from snakemake.cli import parse_config
    from snakemake.utils import update_config

    from privtext.plan.config import validate_config

    docs = (PROJECT_ROOT / "docs" / "claims.md").read_text()
    command = re.search(r"^make claims CLAIMS_CONFIG=\"('studies=.*')\"$", docs, flags=re.M)
    assert command, "docs/claims.md states the replicate's command on a line of its own"
    project, _, environment = _recording_project(tmp_path)
    result = subprocess.run(["make", "claims", f"CLAIMS_CONFIG={command.group(1)}"], cwd=project, env=environment,
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    arguments = (tmp_path / "arguments").read_text().split("\0")[:-1]
    assert arguments[-1] == command.group(1).strip("'"), arguments

    base = validate_config(yaml.safe_load((PROJECT_ROOT / "config.yaml").read_text()))
    config = yaml.safe_load((PROJECT_ROOT / "config.yaml").read_text())
    update_config(config, parse_config(arguments[arguments.index("--config") + 1:]))
    validate_config(config)
    claims_studies = re.search(r"^CLAIMS_STUDIES := (.*)$", (PROJECT_ROOT / "Makefile").read_text(), flags=re.M)
    for name in claims_studies.group(1).split(","):
        study, before = config["studies"][name], base["studies"][name]
        assert study["seeds"] == [110, 120, 130, 140, 150], name
        assert (study["datasets"], study["methods"]) == (before["datasets"], before["methods"]), name
    assert config["studies"]["seed_shape"]["seeds"] == base["studies"]["seed_shape"]["seeds"]


def test_the_adult_arm_at_the_papers_lambda_grid_runs_as_docs_claims_md_says(tmp_path: Path) -> None:
    # docs/claims.md, "Which departures the contradicted rows survived": FEDERATE's claims studies on Adult alone,
    # uncapped, at the paper's 15 values of lambda, without the seed_shape studies
    import re

    import yaml
    from snakemake.cli import parse_config
    from snakemake.utils import update_config

    from privtext.claims.context import PAPER_LAMBDAS
    from privtext.plan.config import validate_config

    docs = (PROJECT_ROOT / "docs" / "claims.md").read_text()
    command = re.search(r"^make claims SEED_SHAPE= CLAIMS_CONFIG=\"(.*)\"$", docs, flags=re.M)
    assert command, "docs/claims.md states the Adult arm's command on a line of its own"
    project, _, environment = _recording_project(tmp_path)
    result = subprocess.run(["make", "claims", "SEED_SHAPE=", f"CLAIMS_CONFIG={command.group(1)}"], cwd=project,
                            env=environment, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    arguments = (tmp_path / "arguments").read_text().split("\0")[:-1]
    config = yaml.safe_load((PROJECT_ROOT / "config.yaml").read_text())
    update_config(config, parse_config(arguments[arguments.index("--config") + 1:]))
    validate_config(config)
    assert not [s for s in config["run_studies"] if s.startswith("seed_shape")], config["run_studies"]
    assert {"claims_federate", "claims_federate_eps"} <= set(config["run_studies"])
    assert config["datasets"] == ["adult"] and config["train"]["max_train"] is None
    methods = config["studies"]["claims_federate"]["methods"]
    for method in ("adv", "multiadv", "federate"):
        assert tuple(methods[method]["lambda"]) == PAPER_LAMBDAS, method
    assert methods["federate"]["epsilon"] == [8] and "noise" in methods and "inlp" in methods
