# Per grid point measurements beyond the attackers: MDL probing and main-task fairness (docs/methods.md, "Measures").


rule mdl:
    input:
        unpack(dataset_splits),
        meta="results/data/{dataset}/meta.json",
        released_train=f"{RUN_DIR}/released_train.npy",
        released_dev=f"{RUN_DIR}/released_dev.npy",
        released_test=f"{RUN_DIR}/released_test.npy",
    output:
        f"{RUN_DIR}/mdl.json",
    log:
        f"results/logs/{RUN_DIR}/mdl.log",
    benchmark:
        f"{BENCHMARK_DIR}/mdl.tsv"
    group:
        "point"
    conda:
        "../envs/privtext.yaml"
    threads: 1
    resources:
        mem_mb=4000,
        runtime=lambda wildcards, attempt: 15 * attempt,
    params:
        split=config["mdl"]["split"],
        max_examples=config["mdl"]["max_examples"],
        probe=config["mdl"]["probe"],
    script:
        "../workflow/scripts/mdl.py"


rule fairness:
    input:
        unpack(dataset_splits),
        meta="results/data/{dataset}/meta.json",
        predictions=f"{RUN_DIR}/predictions.parquet",
    output:
        f"{RUN_DIR}/fairness.json",
    log:
        f"results/logs/{RUN_DIR}/fairness.log",
    benchmark:
        f"{BENCHMARK_DIR}/fairness.tsv"
    group:
        "point"
    conda:
        "../envs/privtext.yaml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=lambda wildcards, attempt: 10 * attempt,
    script:
        "../workflow/scripts/fairness.py"
