"""results/tables/studies/{study}/runs.csv: one row per grid point of the study x attacker x attribute."""

from pathlib import Path

from privtext.report.aggregate import runs_table
from privtext.runtime.logs import setup_logging

setup_logging(snakemake.log[0])
table = runs_table([Path(p).parent for p in snakemake.input.metrics])
Path(snakemake.output[0]).parent.mkdir(parents=True, exist_ok=True)
table.to_csv(snakemake.output[0], index=False)
