"""MDL online code length of each private attribute on one grid point's released representations."""

from privtext.runtime.warm import delegate

delegate()  # run in the warm server when `make` started one, before the imports it saves (privtext.runtime.warm)

from pathlib import Path

from privtext.runtime.logs import finish_job, setup_logging
from privtext.jobs.runs import mdl_grid_point

setup_logging(snakemake.log[0])
mdl_grid_point(
    data_dir=Path(snakemake.input.meta).parent,
    run_dir=Path(snakemake.input.released_train).parent,
    out_path=snakemake.output[0],
    split=snakemake.params.split,
    max_examples=snakemake.params.max_examples,
    probe=snakemake.params.probe,
    seed=int(snakemake.wildcards.seed),
)
finish_job()
