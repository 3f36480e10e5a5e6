"""Extract frozen-encoder features (or tabular features) for every split of one dataset."""

import json
import logging
from pathlib import Path

from privtext.encoding.embedding import embed_dataset
from privtext.runtime.logs import finish_job, setup_logging

setup_logging(snakemake.log[0])
meta = embed_dataset(
    data_dir=Path(snakemake.input.data_train).parent,
    out_dir=Path(snakemake.output.meta).parent,
    encoder=snakemake.wildcards.encoder,
    settings=snakemake.params.encoder,
    mu=float(snakemake.wildcards.mu),
    seed=int(snakemake.wildcards.seed),
    # The configured count, a param of the rule, even where Snakemake grants fewer cores: it moves the numbers.
    threads=snakemake.config["encoder"]["threads"],
    device=snakemake.config["encoder"]["device"],  # not a param: a new device reruns nothing
    deterministic=snakemake.config["deterministic"],
)
logging.info("embedded %s: %s", snakemake.wildcards.dataset, json.dumps(meta)[:500])
finish_job()
