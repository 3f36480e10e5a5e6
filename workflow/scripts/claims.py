"""results/tables/claims.{csv,md}, claims_paper.csv and results/figures/claims/verdicts.{png,pdf}."""

import json
from pathlib import Path

import pandas as pd

from privtext.report.artefacts.common import ArtefactInputs, normalise_published, prepare_measures
from privtext.claims.table import PAPER_COLUMNS, claims_table, paper_readings
from privtext.claims.evidence import ExampleEvidence
from privtext.claims.report import write_claims_table, write_verdict_figure
from privtext.claims.seed_shape import family_reasons, study_checks
from privtext.runtime.logs import finish_job, setup_logging

setup_logging(snakemake.log[0])
measures = pd.concat(
    [pd.read_csv(p, keep_default_na=False, na_values=[""]) for p in snakemake.input.measures], ignore_index=True
)
metas = {Path(p).parent.name: json.loads(Path(p).read_text()) for p in snakemake.input.metas}
published = pd.read_csv(snakemake.input.published) if "published" in snakemake.input.keys() else None
inputs = ArtefactInputs(measures=prepare_measures(measures), metas=metas,
                        published=normalise_published(published, snakemake.input.get("published", "published_results")))
evidence = ExampleEvidence({Path(p).parent.name: Path(p).parent for p in snakemake.input.tests}, metas,
                        seed=snakemake.config["seed"])
audit = pd.read_csv(snakemake.input.audit) if "audit" in snakemake.input.keys() else None
if "release_audit" in snakemake.input.keys():  # D4: Theorem 2 on the release path (privtext.claims.formal)
    audit = pd.concat([audit, pd.read_csv(snakemake.input.release_audit)], ignore_index=True)
families = None  # the seed_shape studies did not run: each row says so
if snakemake.params.seed_shape_run:
    families = {}
    for path in snakemake.input.seed_shape:
        families.update(family_reasons(study_checks(pd.read_csv(path), source=path)))
table = claims_table(inputs, evidence=evidence, audit=audit, seed_families=families)
paper = paper_readings(inputs.published) if inputs.published is not None else None
if paper is not None:
    paper.to_csv(snakemake.output.paper_csv, index=False)
else:
    pd.DataFrame(columns=list(PAPER_COLUMNS)).to_csv(snakemake.output.paper_csv, index=False)
write_claims_table(table, snakemake.output.table_csv.rsplit(".", 1)[0], seeds=snakemake.params.seeds,
                   paper_table=paper)
write_verdict_figure(table, snakemake.output.figure_png.rsplit(".", 1)[0])
finish_job()
