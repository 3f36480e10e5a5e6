# Config validation, config -> target lists and input paths, wildcard constraints. Rules live elsewhere.
from pathlib import Path

from snakemake.utils import validate

from privtext.config import check_config
from privtext.data import BUILDERS, TABULAR_DATASETS
from privtext.data.common import SPLITS
from privtext.data.sources import DOWNLOADS, download_targets, resolve_layout
from privtext.nlp_resources import NLTK_NER_RESOURCES, resolve_ner_backend


validate(config, "../schemas/config.schema.yaml", set_default=True)
check_config(config)

RAW_DIR = config["raw_dir"]
SEARCH_DIRS = [RAW_DIR, config["data_mirror"]]
NLTK_DATA = config["nltk_data"]
NER_BACKEND = resolve_ner_backend(config["ner_backend"], NLTK_DATA)
AG_SOURCE_LAYOUT = {"auto": None, "newsspace": "newsspace", "ag_news_csv": "ag_news_csv"}


wildcard_constraints:
    dataset="|".join(BUILDERS),
    split="|".join(SPLITS),
    backend="nltk|spacy",
    nltk_package="|".join(NLTK_NER_RESOURCES),


def _layout(dataset):
    prefer = AG_SOURCE_LAYOUT[config["ag"]["source"]] if dataset == "ag" else None
    return resolve_layout(dataset, SEARCH_DIRS, prefer)


def raw_inputs(dataset):
    """role -> path of a dataset's raw files: found locally, or where the download rule will put them."""
    if dataset == "demo":
        return {}
    found = _layout(dataset)
    files = found[1] if found else download_targets(dataset, RAW_DIR)
    return {role: str(path) for role, path in files.items()}


def selected_datasets():
    if config["datasets"] != "auto":
        return list(config["datasets"])
    return [d for d in BUILDERS if d == "demo" or _layout(d) is not None]


def build_inputs(wildcards):
    inputs = raw_inputs(wildcards.dataset)
    if wildcards.dataset == "ag":
        inputs["ner"] = f"results/cache/ner/ag/{NER_BACKEND}.parquet"
    return inputs


def build_params(wildcards):
    options = dict(config[wildcards.dataset])
    if wildcards.dataset == "ag":
        options.update(ner_backend=NER_BACKEND, ner_source=_layout("ag")[0] if _layout("ag") else "download")
    return options


def ner_inputs(wildcards):
    inputs = raw_inputs("ag")
    if wildcards.backend == "nltk":
        inputs.update({p: f"{NLTK_DATA}/{rel}" for p, rel in NLTK_NER_RESOURCES.items()})
    return inputs


def download_relpath(wildcards):
    return wildcards.relpath


def dataset_outputs(dataset):
    return [f"results/data/{dataset}/meta.json"]


def final_outputs():
    return [path for dataset in selected_datasets() for path in dataset_outputs(dataset)]
