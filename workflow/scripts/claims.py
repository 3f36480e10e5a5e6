"""results/tables/claims.{csv,md} and results/figures/claims/verdicts.{png,pdf}: every claim of SPEC §6."""

import json
from pathlib import Path

import pandas as pd

from privtext.artefacts.common import ArtefactInputs, normalise_published, prepare_measures
from privtext.claims import claims_table
from privtext.claims_report import write_claims_table, write_verdict_figure
from privtext.logs import finish_job, setup_logging

setup_logging(snakemake.log[0])
measures = pd.concat(
    [pd.read_csv(p, keep_default_na=False, na_values=[""]) for p in snakemake.input.measures], ignore_index=True
)
metas = {Path(p).parent.name: json.loads(Path(p).read_text()) for p in snakemake.input.metas}
published = pd.read_csv(snakemake.input.published) if "published" in snakemake.input.keys() else None
inputs = ArtefactInputs(measures=prepare_measures(measures), metas=metas, published=normalise_published(published))
table = claims_table(inputs)
write_claims_table(table, snakemake.output.table_csv.rsplit(".", 1)[0], seeds=snakemake.params.seeds)
write_verdict_figure(table, snakemake.output.figure_png.rsplit(".", 1)[0])
finish_job()
