# Gather each run study's finished grid points into its own table, so that switching between studies (`make run`,
# the paper studies, `make claims`) never rewrites, nor reruns, another study's table.


rule runs_table:
    input:
        metrics=lambda wildcards: study_run_files(wildcards)["metrics"],
        attacks=lambda wildcards: study_run_files(wildcards)["attack"],
    output:
        "results/tables/studies/{study}/runs.csv",
    log:
        "results/logs/tables/studies/{study}_runs.log",
    localrule: True  # seconds of work on saved results: not worth a queue wait
    conda:
        "../envs/privtext.yaml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    script:
        "../workflow/scripts/runs_table.py"


# The attack ladder of each run study: per dataset, every defence from the frozen features (no defence) to the
# strongest ε, with the attribute attackers against the ε ceilings and the word-recovery attacker. One rule per
# study, since its outputs (one table and figure per dataset) follow from the study's grid.
for _study in config["run_studies"]:
    _datasets = sorted({p.dataset for p in study_grid(_study)})
    _settings = study_config(_study)
    _measures = (  # measures.csv is built only for these studies
        {"measures": f"results/tables/studies/{_study}/measures.csv"}
        if "mdl" in _settings["measures"] and _settings.get("artefacts", True)
        else {}
    )
    if not _datasets:
        continue

    rule:
        name:
            f"ladder_{_study}"
        input:
            **_measures,
            runs=f"results/tables/studies/{_study}/runs.csv",
            frozen=[
                f"results/inversion/{d}/{encoder_for(d)}/frozen.json"
                for d in _datasets
                if word_recovery(d)  # text datasets, while a word-recovery attacker is configured
            ],
        output:
            tables=[
                report(
                    f"results/tables/studies/{_study}/ladder/{d}.csv",
                    caption="../report/ladder.rst",
                    category="Attack ladder",
                    labels={"study": _study, "dataset": d, "format": "csv"},
                )
                for d in _datasets
            ],
            figures=[
                report(
                    f"results/figures/studies/{_study}/ladder/{d}.png",
                    caption="../report/ladder.rst",
                    category="Attack ladder",
                    labels={"study": _study, "dataset": d, "format": "png"},
                )
                for d in _datasets
            ],
        log:
            f"results/logs/tables/studies/{_study}_ladder.log",
        localrule: True  # seconds of work on saved results: not worth a queue wait
        conda:
            "../envs/privtext.yaml"
        threads: 1
        resources:
            mem_mb=2000,
            runtime=10,
        params:
            datasets=_datasets,
        script:
            "../workflow/scripts/ladder.py"
