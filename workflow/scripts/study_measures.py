"""results/tables/studies/{study}/measures.csv: every measure of every grid point of one study."""

from pathlib import Path

from privtext.report.aggregate import measures_table
from privtext.runtime.logs import setup_logging

setup_logging(snakemake.log[0])
table = measures_table([Path(p).parent for p in snakemake.input.metrics], snakemake.params.measures)
table.insert(0, "study", snakemake.wildcards.study)
table.to_csv(snakemake.output[0], index=False)
