# Fresh attackers on the released representations of a finished grid point (docs/methods.md, "Measures").


rule attack:
    input:
        unpack(dataset_splits),
        meta="results/data/{dataset}/meta.json",
        released_train=f"{RUN_DIR}/released_train.npy",
        released_dev=f"{RUN_DIR}/released_dev.npy",
        released_test=f"{RUN_DIR}/released_test.npy",
    output:
        f"{RUN_DIR}/attack.json",
    log:
        f"results/logs/{RUN_DIR}/attack.log",
    benchmark:
        f"{BENCHMARK_DIR}/attack.tsv"
    params:
        attackers=config["attack"]["attackers"],
        max_train=config["attack"]["max_train"],
    group:
        "point"
    threads: 1
    resources:
        mem_mb=4000,
        runtime=lambda wildcards, attempt: 15 * attempt,
    # The script reads config["attack"]["device"] itself: like threads, a device is not a param.
    conda:
        "../envs/privtext.yaml"
    script:
        "../workflow/scripts/attack.py"
