"""Fetch one raw file from its public location, checking its pinned sha256 (docs/data.md, "Downloads")."""

import logging

from privtext.data.sources import download
from privtext.runtime.logs import setup_logging

setup_logging(snakemake.log[0])
record = download(
    snakemake.params.relpath,
    snakemake.output[0],
    allowed=snakemake.params.allowed,
    # Not a param: the opt-in changes no file that is written, so setting it reruns nothing already fetched.
    allow_unpinned=snakemake.config["allow_unpinned_downloads"],
)
logging.info("downloaded %s: %s", snakemake.params.relpath, record)
