"""Fresh attackers on the released representations of one finished grid point."""

from pathlib import Path

from privtext.logs import finish_job, setup_logging
from privtext.runs import attack_grid_point

setup_logging(snakemake.log[0])
attack_grid_point(
    data_dir=Path(snakemake.input.meta).parent,
    run_dir=Path(snakemake.input.released_train).parent,
    out_path=snakemake.output[0],
    attackers=snakemake.params.attackers,
    seed=int(snakemake.wildcards.seed),
    max_train=snakemake.params.max_train,
    threads=snakemake.threads,
    device=snakemake.config["attack"]["device"],  # not a param: a new device reruns nothing
)
finish_job()
