"""results/data/{dataset}/words.{npz,json}: which of the dataset's vocabulary words each text holds, the
vocabulary fitted on the training texts only (privtext.attack.inversion)."""

from pathlib import Path

from privtext.attack.inversion import VocabularySettings, write_word_sets
from privtext.data import SPLITS
from privtext.jobs.runs import json_text
from privtext.runtime.logs import finish_job, setup_logging
from privtext.standins.parquet import read_columns

setup_logging(snakemake.log[0])
texts = {split: read_columns(snakemake.input[f"data_{split}"], ["text"])["text"].tolist() for split in SPLITS}
record = write_word_sets(texts, VocabularySettings(**snakemake.params.vocabulary), snakemake.output.words)
Path(snakemake.output.record).write_text(json_text(record))
finish_job()
