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
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    conda:
        "../envs/privtext.yaml"
    script:
        "../workflow/scripts/runs_table.py"
