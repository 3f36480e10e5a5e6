"""Fresh attackers on the released representations of one finished grid point: publish what the train job
computed for exactly these settings and releases, attack afresh otherwise (privtext.jobs.attack_cache)."""

from privtext.runtime.warm import delegate

delegate()  # run in the warm server when `make` started one, before the imports it saves (privtext.runtime.warm)

from pathlib import Path

from privtext.jobs.runs import attack_grid_point
from privtext.runtime.logs import finish_job, setup_logging
from privtext.standins.allocator import keep_freed_memory

setup_logging(snakemake.log[0])
keep_freed_memory()
attack_grid_point(
    data_dir=Path(snakemake.input.meta).parent,
    run_dir=Path(snakemake.input.released_train).parent,
    out_path=snakemake.output[0],
    attackers=snakemake.params.attackers,
    seed=int(snakemake.wildcards.seed),
    max_train=snakemake.params.max_train,
    threads=snakemake.threads,
    device=snakemake.config["attack"]["device"],  # not a param: a new device reruns nothing
    deterministic=snakemake.config["deterministic"],
    word_attacker=snakemake.params.word_attacker,
    words=snakemake.input.get("words"),  # absent for a dataset without text
    identification=snakemake.params.identification,
    clean_features={s: snakemake.input[f"clean_{s}"] for s in ("train", "dev", "test")}
    if "clean_train" in snakemake.input.keys() else None,  # a text dataset's frozen-encoder point only
    words_record=snakemake.input.get("words_record"),
)
finish_job()
