"""Fetch one raw file from its canonical public location, checking its pinned sha256."""

import logging

from privtext.data.sources import download
from privtext.runtime.logs import setup_logging

setup_logging(snakemake.log[0])
record = download(snakemake.params.relpath, snakemake.output[0], allowed=snakemake.params.allowed)
logging.info("downloaded %s: %s", snakemake.params.relpath, record)
