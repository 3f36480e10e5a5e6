"""Fresh attackers on the released representations of one finished grid point: publish the result the train
job computed for exactly these settings and releases, or attack afresh (privtext.jobs.attack_cache)."""

from pathlib import Path

from privtext.jobs.attack_cache import attack_key, publish
from privtext.runtime.logs import finish_job, setup_logging

setup_logging(snakemake.log[0])
run_dir = Path(snakemake.input.released_train).parent
seed = int(snakemake.wildcards.seed)
key = attack_key(run_dir, attackers=snakemake.params.attackers, seed=seed, max_train=snakemake.params.max_train)
if not publish(run_dir, snakemake.output[0], key):
    from privtext.standins.allocator import keep_freed_memory
    from privtext.jobs.runs import attack_grid_point

    keep_freed_memory()

    attack_grid_point(
        data_dir=Path(snakemake.input.meta).parent,
        run_dir=run_dir,
        out_path=snakemake.output[0],
        attackers=snakemake.params.attackers,
        seed=seed,
        max_train=snakemake.params.max_train,
        threads=snakemake.threads,
        device=snakemake.config["attack"]["device"],  # not a param: a new device reruns nothing
    )
finish_job()
