# Fresh attackers on the released representations of a finished grid point, and word recovery
# (docs/methods.md, "Measures" and "Word recovery").


rule attack:
    input:
        unpack(attack_inputs),
        meta="results/data/{dataset}/meta.json",
        metrics=f"{RUN_DIR}/metrics.json",
        # the method's own adversaries' predictions, scored as the attacker `joint` (privtext.attack.joint)
        predictions=f"{RUN_DIR}/predictions.parquet",
        # Where a study drops releases (keep_releases) they go once this job and mdl are done; this job hashes
        # them for the attack cache while they are still there.
        released_train=f"{RUN_DIR}/released_train.npy",
        released_dev=f"{RUN_DIR}/released_dev.npy",
        released_test=f"{RUN_DIR}/released_test.npy",
        attack_cache=f"{RUN_DIR}/attack_precomputed.json",
    output:
        f"{RUN_DIR}/attack.json",
    log:
        f"results/logs/{RUN_DIR}/attack.log",
    benchmark:
        f"{BENCHMARK_DIR}/attack.tsv"
    group:
        "point"
    # The script reads config["attack"]["device"] and config["deterministic"] itself: how a job runs, not a
    # param. Its thread count is fixed at 1 (privtext.runtime.threads).
    conda:
        "../envs/privtext.yaml"
    threads: 1
    resources:
        mem_mb=4000,
        runtime=lambda wildcards, attempt: 15 * attempt,
    params:
        attackers=lambda wildcards: attackers_for(config["attack"]["attackers"], wildcards.dataset),
        max_train=config["attack"]["max_train"],
        word_attacker=config["attack"]["inversion"]["attacker"],
        identification=config["attack"]["identification"],
    script:
        "../workflow/scripts/attack.py"


# The words each text holds, over a vocabulary fitted on the training texts: the word-recovery attacker's
# targets, once per text dataset. Only attack jobs read them, so a new vocabulary retrains nothing.
rule word_sets:
    input:
        unpack(dataset_splits),
    output:
        words=f"results/data/{{dataset}}/{WORDS_FILE}",
        record="results/data/{dataset}/words.json",
    log:
        "results/logs/data/{dataset}_words.log",
    conda:
        "../envs/privtext.yaml"
    threads: 1
    resources:
        mem_mb=4000,
        runtime=15,
    params:
        vocabulary=vocabulary_settings(),
    script:
        "../workflow/scripts/word_sets.py"


# The attack ladder's "no defence" rung: word recovery, the attribute attackers and (when configured) identification
# on the frozen encoder features themselves.
rule invert_frozen:
    input:
        unpack(dataset_splits),
        meta="results/data/{dataset}/meta.json",
        features_train=f"{FROZEN_FEATURES_DIR}/train.npy",
        features_dev=f"{FROZEN_FEATURES_DIR}/dev.npy",
        features_test=f"{FROZEN_FEATURES_DIR}/test.npy",
        words=f"results/data/{{dataset}}/{WORDS_FILE}",
        words_record="results/data/{dataset}/words.json",
    output:
        "results/inversion/{dataset}/{encoder}/frozen.json",
    log:
        "results/logs/inversion/{dataset}/{encoder}/frozen.log",
    conda:
        "../envs/privtext.yaml"
    threads: 1
    resources:
        mem_mb=4000,
        runtime=15,
    params:
        word_attacker=config["attack"]["inversion"]["attacker"],
        attackers=lambda wildcards: attackers_for(config["attack"]["attackers"], wildcards.dataset),
        max_train=config["attack"]["max_train"],
        identification=config["attack"]["identification"],
        seed=config["seed"],
    script:
        "../workflow/scripts/invert_frozen.py"
