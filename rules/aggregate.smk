# Gather the requested studies' grid points, and every point finished before, into one table.


rule runs_table:
    input:
        unpack(runs_table_inputs),
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
