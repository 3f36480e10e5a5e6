# Frozen-encoder feature extraction, once per (dataset, encoder, mu, dropout seed) (SPEC §1.2).


rule embed:
    input:
        unpack(dataset_splits),
    output:
        train="results/embeddings/{dataset}/{encoder}/mu~{mu}/seed~{seed}/train.npy",
        dev="results/embeddings/{dataset}/{encoder}/mu~{mu}/seed~{seed}/dev.npy",
        test="results/embeddings/{dataset}/{encoder}/mu~{mu}/seed~{seed}/test.npy",
        meta="results/embeddings/{dataset}/{encoder}/mu~{mu}/seed~{seed}/meta.json",
    log:
        "results/logs/embed/{dataset}/{encoder}/mu~{mu}/seed~{seed}.log",
    benchmark:
        "results/benchmarks/embed/{dataset}/{encoder}/mu~{mu}/seed~{seed}.tsv"
    params:
        encoder=embed_settings,
    threads: config["encoder"]["threads"]
    # Extraction gates every grid job of its dataset: start it as soon as a core is free.
    priority: 10
    resources:
        mem_mb=6000,
        runtime=lambda wildcards, attempt: 120 * attempt,
        gpu=0,  # the SLURM profile turns it on (PRIVTEXT_SLURM_GPUS); extraction uses CUDA when present
    conda:
        "../envs/privtext.yaml"
    script:
        "../workflow/scripts/embed.py"
