"""The grid end to end through the real Snakefile on demo: outputs, resumption, incremental grids."""

import base64
import json
import os
import re
import signal
import subprocess
import time
from pathlib import Path

import pandas as pd
import pytest
import yaml

from conftest import PROJECT_ROOT, SNAKEMAKE, planned_job_counts, run_snakemake

STUDY = {
    "datasets": ["demo"],
    "seeds": [10],
    "methods": {
        "majority": {},
        "nonpriv": {},
        "noise": {"epsilon": [0.5]},
        "federate": {"epsilon": [0.5], "lambda": [1.0]},
    },
}
CONFIG = {
    "datasets": ["demo"],
    "demo": {"n_examples": 500, "strong_strength": 0.35},
    "attack": {"attackers": ["linear", "mlp"], "identification": {"max_pool": 200}},
    "studies": {"tiny": STUDY},
    "run_studies": ["tiny"],
}


@pytest.fixture(scope="module")
def finished_grid(tmp_path_factory):
    workdir = tmp_path_factory.mktemp("grid")
    run_snakemake(workdir, CONFIG)
    return workdir


def test_grid_writes_every_output_of_every_point(finished_grid):
    runs = sorted((finished_grid / "results/runs/demo/minilm").glob("*/mu~0/**/seed~10"))
    assert len(runs) == 4
    for run in runs:
        for name in ("model.safetensors", "released_train.npy", "released_test.npy", "predictions.parquet", "metrics.json", "attack.json"):
            assert (run / name).exists(), f"{run}/{name}"
    metrics = json.loads((finished_grid / "results/runs/demo/minilm/federate/mu~0/epsilon~0.5/lambda~1/seed~10/metrics.json").read_text())
    assert metrics["epsilon_nominal"] == 0.5 and metrics["epsilon_effective"] == 0.5
    assert {"accuracy", "macro_f1"} <= set(metrics["test"]) and "versions" in metrics


def test_runs_table_has_a_row_per_point_attacker_and_attribute(finished_grid):
    table = pd.read_csv(finished_grid / "results/tables/studies/tiny/runs.csv")
    # points x attackers x attributes, and federate's jointly trained adversaries (attacker `joint`) on both
    assert len(table) == 4 * 2 * 2 + 2
    assert set(table.loc[table["attacker"] == "joint", "method"]) == {"federate"}
    for column in ("method", "param_epsilon", "param_lambda", "seed", "epsilon_nominal", "epsilon_effective",
                   "test_accuracy", "attack_accuracy", "attack_majority_rate", "empirical_privacy"):
        assert column in table.columns


def test_planted_attribute_leaks_without_privacy_and_not_at_small_effective_epsilon(finished_grid):
    table = pd.read_csv(finished_grid / "results/tables/studies/tiny/runs.csv")
    strong = table[(table.attribute == "strong") & (table.attacker == "linear")].set_index("method")
    majority = strong.loc["nonpriv", "attack_majority_rate"]
    assert strong.loc["nonpriv", "attack_accuracy"] > majority + 0.25
    for private in ("noise", "federate"):
        assert strong.loc[private, "attack_accuracy"] < majority + 0.12


def test_second_run_has_nothing_to_do(finished_grid):
    result = run_snakemake(finished_grid, CONFIG, None, "-n")
    assert "Nothing to be done" in result.stdout + result.stderr


def test_each_study_keeps_its_own_table_and_switching_studies_reruns_nothing(finished_grid):
    """Running another study over some of the same points writes that study's table only; going back to the
    first study then has nothing to do (a single runs.csv used to be rewritten by whichever config ran last)."""
    other = json.loads(json.dumps(CONFIG))
    other["studies"]["other"] = {**other["studies"]["tiny"], "methods": {"nonpriv": {}}, "artefacts": False}
    other["run_studies"] = ["other"]
    jobs = planned_job_counts(run_snakemake(finished_grid, other, None, "-n").stdout)
    # its point is tiny's: nothing retrains; the study gets its own table and ladder
    assert {rule for rule in jobs if rule != "all"} == {"runs_table", "ladder_other"}
    run_snakemake(finished_grid, other)
    tiny = pd.read_csv(finished_grid / "results/tables/studies/tiny/runs.csv")
    mine = pd.read_csv(finished_grid / "results/tables/studies/other/runs.csv")
    assert set(mine["method"]) == {"nonpriv"} and len(mine) == len(tiny[tiny["method"] == "nonpriv"])
    back = run_snakemake(finished_grid, CONFIG, None, "-n")
    assert "Nothing to be done" in back.stdout + back.stderr


def test_adding_one_epsilon_plans_only_the_new_train_and_attack_jobs(finished_grid):
    bigger = json.loads(json.dumps(CONFIG))
    bigger["studies"]["tiny"]["methods"]["noise"]["epsilon"] = [0.5, 2]
    jobs = planned_job_counts(run_snakemake(finished_grid, bigger, None, "-n").stdout)
    per_point = {rule: n for rule, n in jobs.items() if rule in ("embed", "train", "attack", "fairness", "mdl")}
    assert per_point == {"train": 1, "attack": 1, "fairness": 1, "mdl": 1}  # no extraction, one new point
    assert "build_dataset" not in jobs


def test_a_new_word_dropout_rate_adds_one_extraction(finished_grid):
    bigger = json.loads(json.dumps(CONFIG))
    bigger["studies"]["tiny"]["methods"]["noise"]["mu"] = [0, 0.3]
    jobs = planned_job_counts(run_snakemake(finished_grid, bigger, None, "-n").stdout)
    assert jobs["embed"] == 1 and jobs["train"] == 1


# --- a grid point's identity: config overrides, one path template, a torch-free parse ------------------

OVERRIDE_CONFIG = {
    "datasets": ["demo"],
    "demo": {"n_examples": 300},
    "attack": {"attackers": ["linear"]},
    "methods": {"noise": {"epsilon": 10, "epochs": 2}, "nonpriv": {"epochs": 2}},
    "studies": {"unlisted": {"datasets": ["demo"], "seeds": [10], "artefacts": False,
                             "methods": {"noise": {}, "nonpriv": {}}}},
    "run_studies": ["unlisted"],
}


def _planned_train_runs(dry_run_stdout: str) -> list[str]:
    return sorted(set(re.findall(r"output: (results/runs/\S+)/model\.safetensors", dry_run_stdout)))


def test_a_config_override_of_an_unlisted_grid_parameter_names_and_trains_the_point(tmp_path):
    run_snakemake(tmp_path, OVERRIDE_CONFIG)
    metrics = json.loads((tmp_path / "results/runs/demo/minilm/noise/mu~0/epsilon~10/seed~10/metrics.json").read_text())
    assert metrics["epsilon_nominal"] == 10
    assert metrics["hyperparameters"]["epsilon"] == 10 and metrics["hyperparameters"]["epochs"] == 2
    assert metrics["hyperparameters"]["layer"] == "l1"  # the paper defaults are recorded too

    new_epsilon = json.loads(json.dumps(OVERRIDE_CONFIG))
    new_epsilon["methods"]["noise"]["epsilon"] = 12
    planned = run_snakemake(tmp_path, new_epsilon, None, "-n").stdout
    assert _planned_train_runs(planned) == ["results/runs/demo/minilm/noise/mu~0/epsilon~12/seed~10"]

    new_epochs = json.loads(json.dumps(OVERRIDE_CONFIG))
    new_epochs["methods"]["noise"]["epochs"] = 3  # not a grid parameter: same folder, params changed
    planned = run_snakemake(tmp_path, new_epochs, None, "-n").stdout
    assert _planned_train_runs(planned) == ["results/runs/demo/minilm/noise/mu~0/epsilon~10/seed~10"]


def test_planning_the_default_workflow_imports_neither_torch_nor_matplotlib(tmp_path):
    import subprocess
    import sys

    from conftest import DATA_MIRROR, PROJECT_ROOT

    mirror = ["--config", f"data_mirror={DATA_MIRROR}"] if DATA_MIRROR else []
    command = [sys.executable, "-X", "importtime", "-m", "snakemake", "-n", "--snakefile", str(PROJECT_ROOT / "Snakefile"),
               "--directory", str(tmp_path), "--configfile", str(PROJECT_ROOT / "config.yaml"), "--cores", "1",
               "--workflow-profile", "none", *mirror]
    result = subprocess.run(command, capture_output=True, text=True, cwd=tmp_path)
    assert result.returncode == 0, result.stderr[-3000:]
    imported = {line.rsplit("|", 1)[1].strip() for line in result.stderr.splitlines() if line.startswith("import time:")}
    assert "privtext.plan.grid" in imported and "snakemake" in imported  # the check sees the parsing process
    for heavy in ("torch", "matplotlib", "sklearn"):  # (Snakemake itself imports pandas)
        assert heavy not in imported, f"parsing the Snakefile imported {heavy}"
    assert "Job stats:" in result.stdout


def _numbers(attack: dict) -> dict:
    """attack.json without what describes the run rather than the result."""
    return {k: v for k, v in attack.items() if k not in ("seconds", "versions", "computed_in")} | {
        "inversion": {k: v for k, v in attack["inversion"].items() if k not in ("seconds", "computed_in")}} | {
        "identification": {k: v for k, v in attack["identification"].items() if k != "seconds"}} | {
        "attackers": {name: {**{k: v for k, v in result.items() if k != "seconds"},
                             "attributes": {a: {k: v for k, v in s.items() if k != "seconds"}
                                            for a, s in result["attributes"].items()}}
                      for name, result in attack["attackers"].items()}}


def test_attacks_computed_in_the_train_job_equal_a_fresh_attack_job(finished_grid, tmp_path):
    from privtext.jobs.runs import attack_grid_point

    run = finished_grid / "results/runs/demo/minilm/federate/mu~0/epsilon~0.5/lambda~1/seed~10"
    published = json.loads((run / "attack.json").read_text())
    assert published["computed_in"] == "train job"
    attack_grid_point(data_dir=finished_grid / "results/data/demo", run_dir=run, out_path=tmp_path / "a.json",
                      attackers=CONFIG["attack"]["attackers"], seed=10, max_train=10000,
                      word_attacker="ridge", words=finished_grid / "results/data/demo/words.npz",
                      identification={"candidates": [10, 100, 1000], "max_pool": 200},
                      clean_features={s: finished_grid / f"results/embeddings/demo/minilm/mu~0/seed~0/{s}.npy"
                                      for s in ("train", "dev", "test")},
                      words_record=finished_grid / "results/data/demo/words.json")
    assert _numbers(json.loads((tmp_path / "a.json").read_text())) == _numbers(published)


def test_changing_the_attackers_reruns_only_the_attack_jobs(finished_grid):
    bigger = json.loads(json.dumps(CONFIG))
    bigger["attack"]["attackers"] = ["linear"]
    jobs = planned_job_counts(run_snakemake(finished_grid, bigger, None, "-n").stdout)
    assert jobs.get("attack") == 4 and "train" not in jobs and "embed" not in jobs


def _train_jobs(workdir: Path) -> tuple[int, int]:
    """(finished, running) train jobs: Snakemake writes a job's benchmark file only when the job has ended."""
    logs = {p.parent for p in (workdir / "results/logs/results/runs").glob("**/train.log")}
    done = {p.parent for p in (workdir / "results/benchmarks/runs").glob("**/train.tsv")}
    finished = {Path(str(d).replace("/results/benchmarks/runs/", "/results/logs/results/runs/", 1)) for d in done}
    return len(finished), len(logs - finished)


def _without_wall_times(table: pd.DataFrame) -> pd.DataFrame:
    return table.drop(columns=[c for c in table.columns if c.endswith("_seconds")])


def _marked_incomplete(workdir: Path) -> list[str]:
    """Outputs of jobs that started and never ended: Snakemake's markers, named by the URL-safe base64 of the
    path ('-' and '_' where standard base64 has '+' and '/', which decides by the path's bytes whether a
    standard decoder works). A name longer than the file system allows is split into folders named '@' + a
    piece, the last piece being the file: join the pieces before decoding."""
    root = workdir / ".snakemake/incomplete"
    return [base64.urlsafe_b64decode("".join(part.lstrip("@") for part in m.relative_to(root).parts)).decode()
            for m in root.rglob("*") if m.is_file()]


def test_a_run_killed_mid_grid_completes_on_rerun_with_identical_numbers(finished_grid, tmp_path):
    # SIGKILL to Snakemake and its running jobs (one process group), as when the machine dies; --rerun-incomplete
    # is what both profiles set (`--workflow-profile none` here drops them, so the command passes it).
    workdir = tmp_path / "killed"
    configfile = workdir / "test-config.yaml"
    workdir.mkdir()
    configfile.write_text(yaml.safe_dump(CONFIG))
    command = [str(SNAKEMAKE), "--snakefile", str(PROJECT_ROOT / "Snakefile"), "--directory", str(workdir),
               "--configfile", str(configfile), "--cores", "2", "--workflow-profile", "none", "--rerun-incomplete"]
    with open(workdir / "killed.log", "w") as log:
        run = subprocess.Popen(command, cwd=workdir, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + 600
        while run.poll() is None and time.monotonic() < deadline:
            finished, running = _train_jobs(workdir)
            if finished >= 1 and running >= 1:
                os.killpg(run.pid, signal.SIGKILL)
                break
            time.sleep(0.1)
        run.wait()
    assert run.returncode == -signal.SIGKILL, (run.returncode, (workdir / "killed.log").read_text()[-3000:])
    assert not (workdir / "results/tables/studies/tiny/runs.csv").exists()

    # The killed train job's outputs stay marked incomplete. Whether it had written any depends on the instant
    # of the kill, so give it the worst case: a half-written metrics.json.
    killed_metrics = [Path(p) for p in _marked_incomplete(workdir) if p.endswith("/metrics.json")]
    assert killed_metrics, _marked_incomplete(workdir)
    partial = workdir / killed_metrics[0]
    if not partial.exists():
        partial.write_text('{"test": {"accuracy": 0.')
    refused = run_snakemake(workdir, CONFIG, None, "-n", check=False)
    assert refused.returncode != 0 and "IncompleteFilesException" in refused.stdout + refused.stderr
    assert str(killed_metrics[0]) in refused.stdout + refused.stderr

    # SIGKILL also leaves Snakemake's lock: the same command refuses to start until `--unlock` (docs/reproducing.md).
    locked = subprocess.run(command, cwd=workdir, capture_output=True, text=True)
    assert locked.returncode != 0 and "--unlock" in locked.stdout + locked.stderr
    subprocess.run([*command, "--unlock"], cwd=workdir, capture_output=True, text=True, check=True)
    resumed = subprocess.run(command, cwd=workdir, capture_output=True, text=True)
    assert resumed.returncode == 0, resumed.stderr[-4000:]
    assert json.loads(partial.read_text())["test"]["accuracy"] > 0
    killed_table = pd.read_csv(workdir / "results/tables/studies/tiny/runs.csv")
    uninterrupted = pd.read_csv(finished_grid / "results/tables/studies/tiny/runs.csv")
    pd.testing.assert_frame_equal(_without_wall_times(killed_table), _without_wall_times(uninterrupted), check_exact=True)


def test_the_runs_table_carries_word_recovery_and_ceilings_and_the_ladder_is_drawn(finished_grid):
    runs = pd.read_csv(finished_grid / "results/tables/studies/tiny/runs.csv")
    assert (runs["inversion_status"] == "measured").all() and runs["inversion_advantage"].notna().all()
    private = runs[runs["epsilon_nominal"].notna()]
    assert set(private["method"]) == {"noise", "federate"}
    assert (private["ceiling_nominal"] >= private["attack_majority_rate"] - 0.1).all()  # test vs train prior
    assert runs.loc[runs["epsilon_nominal"].isna(), "ceiling_nominal"].isna().all()
    assert not runs["above_effective_ceiling"].any()  # the true guarantee is never beaten
    ladder = pd.read_csv(finished_grid / "results/tables/studies/tiny/ladder/demo.csv")
    assert ladder["rung"].iloc[0] == "no defence (frozen features)"
    assert {"majority", "nonpriv", "noise", "federate"} <= set(ladder["method"])
    assert (finished_grid / "results/figures/studies/tiny/ladder/demo.png").stat().st_size > 10_000
    # which text is this? a deterministic release names its text among 100 far beyond chance (ties between
    # identical demo texts are broken at random); every DP point stays under its effective ceiling
    assert (runs["identification_status"] == "measured").all()
    nonpriv = runs[runs["method"] == "nonpriv"]
    assert (nonpriv["identification_white_box_top1"] > 0.5).all()
    assert (private["identification_white_box_top1_low"] <= private["identification_white_box_top1_ceiling_effective"]).all()
    assert runs["reconstruction_white_box_rouge_l"].notna().all()
    assert ladder["identification_white_box_top1"].notna().all()  # the no-defence rung too
    frozen = json.loads((finished_grid / "results/inversion/demo/minilm/frozen.json").read_text())
    assert frozen["status"] == "measured" and frozen["attacker"]["fit_split"] == "train"
    assert frozen["identification"]["white_box"]["N100"]["top1"] > 0.5
    assert frozen["identification"]["reconstruction_max_words"] == 128  # the encoder's window
    # the no-defence rung is read by the same attribute attackers as every defence
    assert set(frozen["attributes"]["attackers"]) == {"linear", "mlp"}
    assert ladder.iloc[0][["linear_accuracy", "mlp_accuracy", "majority_rate"]].notna().all()


def _claims_attack() -> dict:
    """The attack settings `make claims` passes (the Makefile's CLAIMS_ATTACK), as Snakemake's --config reads them."""
    line = re.search(r"^CLAIMS_ATTACK := '(.*)'$", (PROJECT_ROOT / "Makefile").read_text(), flags=re.M).group(1)
    key, value = line.split("=", 1)
    assert key == "attack"
    return yaml.safe_load(value)


def test_make_claims_trains_the_attackers_the_claims_read():
    assert _claims_attack() == {"attackers": "claims", "inversion": {"attacker": None}, "identification": None}


def test_the_claims_attack_settings_rerun_only_attacks_and_draw_the_ladder_without_word_recovery(finished_grid,
                                                                                                 tmp_path):
    import shutil

    workdir = tmp_path / "grid"
    shutil.copytree(finished_grid, workdir, symlinks=True)
    claims = json.loads(json.dumps(CONFIG))
    claims["attack"].update(_claims_attack())
    jobs = planned_job_counts(run_snakemake(workdir, claims, None, "-n").stdout)
    assert jobs["attack"] == 4 and not {"train", "embed", "word_sets", "invert_frozen"} & set(jobs)
    run_snakemake(workdir, claims)
    attack = json.loads(next((workdir / "results/runs/demo").glob("**/nonpriv/**/attack.json")).read_text())
    assert list(attack["attackers"]) == ["mlp", "sklearn_mlp"]  # every paper has claims on demo
    ladder = pd.read_csv(workdir / "results/tables/studies/tiny/ladder/demo.csv")
    assert "frozen" not in set(ladder["method"])  # no word-recovery rung without a word-recovery attacker
    # the ladder shows the attackers that ran, and no column for one that did not
    assert "linear_accuracy" not in ladder and ladder[["mlp_accuracy", "sklearn_mlp_accuracy"]].notna().all().all()
    assert ladder["inversion_status"].str.startswith("not measured").all()
    assert (workdir / "results/figures/studies/tiny/ladder/demo.png").stat().st_size > 10_000
