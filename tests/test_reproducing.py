"""docs/reproducing.md, "One table or figure", against the ARTEFACTS registry and the Makefile (issue 43): every
artefact is listed with its files and its one command; each command, as make runs it, plans the artefact's rule and
nothing of another study or dataset; and the cheapest one is built as written on a copy of the project (about
1 minute on 2 cores)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import yaml

from conftest import PROJECT_ROOT, installed_copy, planned_job_counts
from privtext.report.artefacts import ARTEFACTS, Artefact

DOC = PROJECT_ROOT / "docs" / "reproducing.md"
COPIED = ("Makefile", "Snakefile", "config.yaml", "src", "rules", "workflow", "schemas",
          "profiles", "envs", "report")
CHEAPEST = "cape/table3"  # cape_main on demo: 16 points, 60 s on 2 cores (the doc's cost note)
# Stands in for workflow/local_snakemake.py: records the arguments make's recipe hands Snakemake, NUL-separated.
RECORDER = """#!/bin/sh
printf '%s\\0' "$@" > "$RECORD_ARGUMENTS"
"""


def documented_rows() -> dict[str, tuple[str, ...]]:
    """The doc's artefact table: one command -> the files its row lists (brace lists expanded)."""
    section = DOC.read_text().split("### One table or figure", 1)[1].split("\n#", 1)[0]
    rows = {}
    for line in re.findall(r"^\| .+ \|$", section, flags=re.M)[2:]:  # past the header and its rule
        files, command = re.findall(r"`([^`]+)`", line)[:2]
        stem, suffixes = re.fullmatch(r"(.+)\.\{(.+)\}", files).groups()
        rows[command] = tuple(f"{stem}.{suffix}" for suffix in suffixes.split(","))
    return rows


def expected_command(artefact: Artefact) -> str:
    # extra/* name no study of their own: the doc's command names the cheapest paper study
    return f"make {artefact.files[0]}" + ("" if artefact.studies else " STUDIES=cape_main")


def test_the_doc_lists_every_artefact_with_its_files_and_one_command():
    rows = documented_rows()
    expected = {expected_command(a): a.files for a in ARTEFACTS.values()}
    assert rows == expected
    assert len(rows) == len(ARTEFACTS)


def _make_environment(copy: Path) -> dict[str, str]:
    environment = {k: v for k, v in os.environ.items() if not k.startswith(("PRIVTEXT_", "MAKE"))}
    environment["PYTHONPATH"] = str(copy / "src")  # the copy's library, not the installed one
    return environment


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    return installed_copy(tmp_path_factory.mktemp("reproducing"), COPIED)


def test_a_file_that_is_no_artefact_is_refused_with_its_name_and_where_the_list_is(project):
    for command, says in [
        ("make results/tables/dpnr/table9.csv", "results/tables/dpnr/table9.csv is not a file of a paper table"),
        ("make results/tables/claims.csv", "docs/reproducing.md"),
        ("make results/tables/extra/effective_epsilon.csv", "name them, e.g. make results/tables/extra/"),
        ("make results/tables/extra/effective_epsilon.csv STUDIES=quick", "quick feeds no paper table"),
        ("make results/tables/dpnr/table2.csv STUDIES=dpnr_mu", "is built from dpnr_eps"),
    ]:
        result = subprocess.run(["bash", "-c", command], cwd=project, env=_make_environment(project),
                                capture_output=True, text=True, timeout=60)
        assert result.returncode != 0 and says in result.stderr, (command, result.stderr[-2000:])
    assert not (project / "results").exists()  # refused before Snakemake started


def _jobs(dry_run_stdout: str) -> list[tuple[str, dict[str, str], str]]:
    """(rule, wildcards, input line) of each job a Snakemake dry run lists."""
    jobs = []
    for block in re.split(r"^(?:local)?rule ", dry_run_stdout, flags=re.M)[1:]:
        rule = block.split(":", 1)[0]
        wildcards = re.search(r"^    wildcards: (.+)$", block, flags=re.M)
        inputs = re.search(r"^    input: (.+)$", block, flags=re.M)
        jobs.append((rule, dict(w.split("=", 1) for w in wildcards.group(1).split(", ")) if wildcards else {},
                     inputs.group(1) if inputs else ""))
    return jobs


@pytest.mark.slow
def test_each_documented_command_plans_its_artefact_and_nothing_of_another_study(project, tmp_path):
    """Each command is run by make as written, with Snakemake's arguments recorded rather than run; commands
    whose arguments differ only in their target share one real dry run (the FEDERATE grids take about a minute
    each to plan)."""
    recorder = tmp_path / "record_snakemake"
    recorder.write_text(RECORDER)
    recorder.chmod(0o755)
    studies_config = yaml.safe_load((project / "config.yaml").read_text())["studies"]
    groups: dict[tuple[str, ...], list[tuple[Artefact, str]]] = {}
    for command, files in documented_rows().items():
        artefact = next(a for a in ARTEFACTS.values() if a.files == files)
        record = tmp_path / "arguments"
        environment = {**_make_environment(project), "RECORD_ARGUMENTS": str(record)}
        # the recipe as written, with Snakemake recorded: WARM and LOCAL_SNAKEMAKE overridden on make's command line
        subprocess.run(["bash", "-c", f"{command} WARM= LOCAL_SNAKEMAKE={recorder}"], cwd=project,
                       env=environment, check=True, timeout=60)
        arguments = record.read_text().split("\0")[:-1]
        assert arguments[-2:] == ["--", artefact.files[0]], arguments
        groups.setdefault(tuple(arguments[:-2]), []).append((artefact, command))

    def dry_run(arguments: tuple[str, ...]) -> subprocess.CompletedProcess:
        targets = [artefact.files[0] for artefact, _ in groups[arguments]]
        return subprocess.run([sys.executable, "workflow/local_snakemake.py", "-n", *arguments, "--", *targets],
                              cwd=project, env=_make_environment(project), capture_output=True, text=True,
                              timeout=600)

    with ThreadPoolExecutor(max_workers=2) as pool:
        results = dict(zip(groups, pool.map(dry_run, groups)))
    for arguments, result in results.items():
        assert result.returncode == 0, result.stderr[-3000:]
        run_studies = next(a for a in arguments if a.startswith("run_studies="))
        studies = set(run_studies.removeprefix("run_studies=[").removesuffix("]").split(","))
        for artefact, command in groups[arguments]:
            assert studies == set(artefact.studies or ["cape_main"]), command
        datasets = {d for s in studies for d in studies_config[s]["datasets"]}
        counts = planned_job_counts(result.stdout)
        jobs = _jobs(result.stdout)
        for artefact, command in groups[arguments]:
            rule = "artefact_" + artefact.name.replace("/", "_")
            assert counts.get(rule) == 1, (command, counts)
            # its inputs are its studies' measures: with its studies left out of run_studies it would have none
            inputs = next(i for r, _, i in jobs if r == rule)
            for study in studies:
                assert f"results/tables/studies/{study}/measures.csv" in inputs, (command, inputs[:500])
        assert counts["study_measures"] == len(studies) and counts["train"] > 0, counts
        assert {r for r in counts if r.startswith("artefact_")} == {
            "artefact_" + a.name.replace("/", "_") for a, _ in groups[arguments]}
        other_study = [(r, w) for r, w, _ in jobs if "study" in w and w["study"] not in studies]
        other_dataset = [(r, w) for r, w, _ in jobs if "dataset" in w and w["dataset"] not in datasets]
        assert not other_study and not other_dataset, (other_study[:3], other_dataset[:3])


@pytest.mark.slow
def test_the_cheapest_artefact_builds_as_the_doc_says_on_a_clean_copy(tmp_path):
    artefact = ARTEFACTS[CHEAPEST]
    command = expected_command(artefact)
    assert command in documented_rows()
    copy = installed_copy(tmp_path, COPIED)
    result = subprocess.run(["bash", "-c", command], cwd=copy, env=_make_environment(copy), capture_output=True,
                            text=True, timeout=1800)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    for path in artefact.files:
        assert (copy / path).stat().st_size > 0, path
    assert "| demo" in (copy / "results/tables/cape/table3.md").read_text()  # rows, not a note of missing data
    # only what the table needs: its study's table and its one available dataset
    assert sorted(p.name for p in (copy / "results/tables").iterdir()) == ["cape", "studies"]
    assert sorted(p.name for p in (copy / "results/tables/studies").iterdir()) == ["cape_main"]
    assert sorted(p.name for p in (copy / "results/data").iterdir()) == ["demo"]
    assert not (copy / "results/figures").exists()
