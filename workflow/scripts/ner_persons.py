"""Run NER once over the AG corpus and cache the PERSON mentions of every document.

Cached separately from the dataset build so that rebuilding AG with other options does not rerun NER.
"""

import logging
from pathlib import Path

from privtext.data import Quarantine
from privtext.data.ag import read_ag_documents
from privtext.data.common import check_quarantine_fraction
from privtext.data.ner import person_mentions
from privtext.runtime.logs import setup_logging

setup_logging(snakemake.log[0])
inputs = {role: Path(path) for role, path in snakemake.input.items() if role in ("newsspace", "csv_train", "csv_test")}
quarantine, filtered = Quarantine(), {}
documents = read_ag_documents(inputs, quarantine, filtered)
# The build applies the same ceiling to the same reading; failing here spares the long NER run.
check_quarantine_fraction("ag", quarantine, kept=len(documents), filtered=filtered,
                          max_fraction=snakemake.config["max_quarantine_fraction"])
documents["persons"] = person_mentions(
    documents["text"].tolist(),
    snakemake.wildcards.backend,
    nltk_data=snakemake.params.nltk_data,
    spacy_model=snakemake.params.spacy_model,
)
documents[["id", "persons"]].to_parquet(snakemake.output[0], index=False)
logging.info("NER (%s) over %d documents", snakemake.wildcards.backend, len(documents))
