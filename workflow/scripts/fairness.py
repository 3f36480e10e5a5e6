"""Main-task fairness per private attribute of one grid point, on dev and test."""

from pathlib import Path

from privtext.runtime.logs import finish_job, setup_logging
from privtext.jobs.runs import fairness_grid_point

setup_logging(snakemake.log[0])
fairness_grid_point(
    data_dir=Path(snakemake.input.meta).parent,
    run_dir=Path(snakemake.input.predictions).parent,
    out_path=snakemake.output[0],
)
finish_job()
