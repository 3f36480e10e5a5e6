"""results/{tables,figures}/studies/{study}/ladder/{dataset}: the attack ladder of each dataset of a study."""

from pathlib import Path

from privtext.report.ladder import write_ladder
from privtext.runtime.logs import finish_job, setup_logging

setup_logging(snakemake.log[0])
datasets = snakemake.params.datasets
write_ladder(
    snakemake.input.runs,
    out_tables=dict(zip(datasets, snakemake.output.tables)),
    out_figures=dict(zip(datasets, snakemake.output.figures)),
    # results/inversion/{dataset}/{encoder}/frozen.json
    frozen={Path(path).parts[-3]: path for path in snakemake.input.frozen},
    measures_csv=snakemake.input.get("measures"),
)
finish_job()
