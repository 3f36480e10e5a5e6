# One job per grid point: train a method on frozen features, or fine-tune the text encoder with it end to end
# (encoder segment `{encoder}+finetune`, privtext.jobs.finetune), and release representations (docs/methods.md, "Methods").
# RUN_DIR and BENCHMARK_DIR come from privtext.plan.grid (imported in common.smk), the one spelling of the paths.


rule train:
    input:
        unpack(run_inputs),
    output:
        model=f"{RUN_DIR}/model.safetensors",
        # temp() where a run study drops its releases (keep_releases; rules/common.smk, release_output)
        released_train=release_output("train"),
        released_dev=release_output("dev"),
        released_test=release_output("test"),
        predictions=f"{RUN_DIR}/predictions.parquet",
        metrics=f"{RUN_DIR}/metrics.json",
        # The attribute attackers' result, computed here for the attack job to publish (privtext.jobs.attack_cache);
        # written by every train job, empty when it attacked nothing.
        attack_cache=f"{RUN_DIR}/attack_precomputed.json",
    log:
        f"results/logs/{RUN_DIR}/train.log",
    benchmark:
        f"{BENCHMARK_DIR}/train.tsv"
    group:
        "point"
    # The script reads config["train"]["device"] and config["deterministic"] itself: how a job runs, not a
    # param. Thread counts move numbers (privtext.runtime.threads): a frozen point's is fixed at 1, and
    # finetune.threads is a param of fine-tuned points (via method_settings).
    conda:
        "../envs/privtext.yaml"
    # 1 thread and 4 GB for a head on frozen features; a fine-tuned point takes config["finetune"]'s.
    threads: train_job("threads")
    resources:
        mem_mb=train_job("mem_mb"),
        runtime=train_job("runtime"),
    params:
        # The script reads the point from its folder (privtext.plan.grid.GridPoint). grid_params and mu repeat it:
        # they stay so that points trained before keep the params Snakemake recorded, and are not rerun.
        grid_params=grid_params_of,
        mu=mu_of,
        settings=method_settings,
        max_train=config["train"]["max_train"],
    script:
        "../workflow/scripts/train.py"
