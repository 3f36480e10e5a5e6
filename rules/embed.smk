# Frozen-encoder feature extraction, once per (dataset, encoder, mu, dropout seed) (docs/methods.md, "Word dropout").


rule embed:
    input:
        unpack(dataset_splits),
    output:
        train=f"{EMBEDDING_DIR}/train.npy",
        dev=f"{EMBEDDING_DIR}/dev.npy",
        test=f"{EMBEDDING_DIR}/test.npy",
        meta=f"{EMBEDDING_DIR}/meta.json",
    log:
        EMBEDDING_DIR.replace("results/embeddings/", "results/logs/embed/", 1) + ".log",
    benchmark:
        EMBEDDING_DIR.replace("results/embeddings/", "results/benchmarks/embed/", 1) + ".tsv"
    # Extraction gates every grid job of its dataset: start it as soon as a core is free.
    priority: 10
    # The script reads config["encoder"]["device"] and config["deterministic"] itself: how a job runs, not a
    # param. Thread counts move numbers (privtext.runtime.threads): encoder.threads is one, via embed_settings.
    conda:
        "../envs/privtext.yaml"
    threads: config["encoder"]["threads"]
    resources:
        mem_mb=6000,
        runtime=lambda wildcards, attempt: 120 * attempt,
        gpu=0,  # the SLURM profile turns it on (PRIVTEXT_SLURM_GPUS); extraction uses CUDA when present
    params:
        encoder=embed_settings,
    script:
        "../workflow/scripts/embed.py"
