"""results/tables/extra/release_audit/{dataset}.csv: the end-to-end ε audit of each DP run's release path on one
dataset's texts (docs/audit.md, "The release path, end to end")."""

import logging
from pathlib import Path

import pandas as pd

from privtext.encoding.encoders import extract_embeddings, load_encoder
from privtext.jobs.release_audit import ReleasePathAudit, release_audit_table, settings_from_config
from privtext.jobs.runs import load_trained_method
from privtext.runtime.logs import finish_job, setup_logging
from privtext.runtime.threads import limited_threads

setup_logging(snakemake.log[0])
encoder_settings = snakemake.params.encoder
settings = settings_from_config(snakemake.params.release, snakemake.params.seed, snakemake.params.confidence)
test = pd.read_parquet(snakemake.input.test, columns=["id", "text"])
rows = []
with limited_threads(snakemake.threads):
    encoder = load_encoder(encoder_settings["name"], "cpu", encoder_settings.get("revision"))

    def encode(texts):
        return extract_embeddings(list(texts), encoder, pooling=encoder_settings["pooling"],
                                  max_length=encoder_settings["max_length"], batch_size=encoder_settings["batch_size"],
                                  threads=snakemake.threads, device="cpu", progress=False)[0]

    audit = ReleasePathAudit(snakemake.wildcards.dataset, test["text"].tolist(), test["id"].tolist(), encode, settings)
    for metrics in snakemake.input.metrics:
        run = Path(metrics).parent
        logging.info("auditing the release path of %s", run)
        method = load_trained_method(run, Path(snakemake.input.meta).parent, threads=snakemake.threads)
        rows += audit.audit(method, str(run))
release_audit_table(rows).to_csv(snakemake.output[0], index=False)
finish_job()
