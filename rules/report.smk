# Per-study measure tables and every paper artefact (docs/reproducing.md, "Paper artefacts"), each with a report caption.


rule study_measures:
    input:
        unpack(study_run_files),
    output:
        "results/tables/studies/{study}/measures.csv",
    log:
        "results/logs/tables/studies/{study}.log",
    localrule: True  # seconds of work on saved results: not worth a queue wait
    conda:
        "../envs/privtext.yaml"
    threads: 1
    resources:
        mem_mb=4000,
        runtime=20,
    params:
        measures=lambda wildcards: study_config(wildcards.study)["measures"],
    script:
        "../workflow/scripts/study_measures.py"


for _artefact in ARTEFACTS.values():

    rule:
        name:
            f"artefact_{artefact_slug(_artefact.name)}"
        input:
            **artefact_inputs(_artefact.name),
        output:
            [
                report(
                    path,
                    caption=f"../report/{artefact_slug(_artefact.name)}.rst",
                    category=artefact_paper(_artefact.name),
                    labels={"artefact": _artefact.name, "format": path.rsplit(".", 1)[1]},
                )
                for path in artefact_outputs(_artefact.name)
            ],
        log:
            f"results/logs/artefacts/{_artefact.name}.log",
        localrule: True  # seconds of work on saved results: not worth a queue wait
        conda:
            "../envs/privtext.yaml"
        threads: 1
        resources:
            mem_mb=4000,
            runtime=30,
        params:
            artefact=_artefact.name,
        script:
            "../workflow/scripts/artefact.py"
