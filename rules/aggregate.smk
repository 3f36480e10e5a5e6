# Gather finished grid points of the requested studies into one table.


rule runs_table:
    input:
        metrics=run_files("metrics.json"),
        attacks=run_files("attack.json"),
    output:
        "results/tables/runs.csv",
    log:
        "results/logs/tables/runs.log",
    localrule: True  # seconds of work on saved results: not worth a queue wait
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    conda:
        "../envs/privtext.yaml"
    script:
        "../workflow/scripts/runs_table.py"
