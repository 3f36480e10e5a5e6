# Config validation, config -> target lists and input paths, wildcard constraints. Rules live elsewhere.
import functools
from pathlib import Path

# Everything imported here is light (no torch, matplotlib, pandas or scikit-learn): every dry run, every test
# that plans a workflow and every cluster job re-parses this file.
from privtext.plan.config import ConfigError, canonical_config_paths, check_import_path, validate_config
from privtext.attack.inversion import WORDS_FILE
from privtext.claims.attackers import attackers_for
from privtext.data import BUILDERS, SPLITS, TABULAR_DATASETS
from privtext.data.sources import DOWNLOADS, download_targets, resolve_layout, unobtainable_raw_files
from privtext.data.attributes import private_attribute_names
from privtext.report.artefacts import ARTEFACTS
from privtext.encoding.names import TABULAR_ENCODER
from privtext.plan.grid import (
    NAME_PATTERN,
    SLUG_PATTERN,
    BENCHMARK_DIR,
    EMBEDDING_DIR,
    FROZEN_FEATURES_DIR,
    RUN_DIR,
    GridPoint,
    encoder_slug,
    shrink_study,
    study_points,
    unique,
)
from privtext.methods import METHODS
from privtext.data.nlp_resources import NLTK_NER_RESOURCES, resolve_ner_backend

# The library these rules call must be this checkout's (a .venv installed from another one would run its code).
check_import_path(Path(workflow.basedir) / "src")
# The schema (with method ids and keys from the method registry) fills defaults; nested --config values
# arriving as strings are coerced first.
validate_config(config)
canonical_config_paths(config)  # `../shared/data` and its absolute form are one set of inputs

RAW_DIR = config["raw_dir"]
SEARCH_DIRS = [RAW_DIR, config["data_mirror"]]
NLTK_DATA = config["nltk_data"]
NER_BACKEND = resolve_ner_backend(config["ner_backend"], NLTK_DATA)
AG_SOURCE_LAYOUT = {"auto": None, "newsspace": "newsspace", "ag_news_csv": "ag_news_csv"}
TEXT_ENCODER = encoder_slug(config["encoder"]["name"])


wildcard_constraints:
    dataset="|".join(BUILDERS),
    split="|".join(SPLITS),
    backend="nltk|spacy",
    method="|".join(METHODS),
    encoder=SLUG_PATTERN,
    study=NAME_PATTERN,
    mu="[0-9.]+",
    seed="[0-9]+",
    params=r"mu~[0-9.]+(/[a-z_]+~[A-Za-z0-9._+-]+)*",


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


def check_raw_files():
    """Refuse, before any job, a selected dataset whose raw files are missing and cannot be downloaded
    (downloads off, or a file with no public source): its download jobs could only fail."""
    reasons = [
        f"{dataset}: {reason}"
        for dataset in selected_datasets()
        if dataset != "demo" and _layout(dataset) is None
        for reason in unobtainable_raw_files(dataset, RAW_DIR, allow_download=config["allow_download"])
    ]
    if reasons:
        raise ConfigError(
            f"invalid config key 'datasets': raw files missing from {[d for d in SEARCH_DIRS if d]} "
            f"that cannot be downloaded; " + "; ".join(reasons)
        )


check_raw_files()


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


def encoder_for(dataset):
    return TABULAR_ENCODER if dataset in TABULAR_DATASETS else TEXT_ENCODER


def study_config(name):
    """A study block with `auto` datasets resolved, unavailable datasets skipped and grid_shrink applied."""
    study = dict(config["studies"][name])
    selected = selected_datasets()
    wanted = selected if study["datasets"] == "auto" else study["datasets"]
    study["datasets"] = [d for d in wanted if d in selected]
    shrink = config["grid_shrink"]
    if shrink and name not in shrink.get("studies_exempt", ["quick"]):
        study = shrink_study(study, shrink["seeds"], shrink["values"])
    return study


@functools.cache  # config is fixed for a parse, and the run files, claims, ladders and release plan all ask
def study_grid(name):
    study = study_config(name)
    return tuple(
        study_points(
            study,
            datasets=study["datasets"],
            encoder_for=encoder_for,
            specs=METHODS,
            overrides=config["methods"],
            # a study's `target: [each]`: one point per private attribute, named before the data is built
            attributes_for=lambda dataset: private_attribute_names(dataset, config[dataset]),
        )
    )


def dataset_splits(wildcards):
    return {f"data_{s}": f"results/data/{wildcards.dataset}/{s}.parquet" for s in SPLITS}


def run_inputs(wildcards):
    """Dataset splits and the frozen features of a grid point; a fine-tuned point reads the splits' text only."""
    point = GridPoint.from_wildcards(wildcards)
    inputs = {"meta": f"results/data/{wildcards.dataset}/meta.json", **dataset_splits(wildcards)}
    if not point.finetune:
        inputs.update({f"features_{s}": f"{point.embedding_dir}/{s}.npy" for s in SPLITS})
    return inputs


def word_recovery(dataset):
    """Whether the word-recovery attacker runs on this dataset's releases (text datasets, when configured)."""
    return config["attack"]["inversion"]["attacker"] is not None and dataset not in TABULAR_DATASETS


def identification_runs(wildcards):
    """Whether a point's attack job measures identification: a text dataset's frozen-encoder point, when configured."""
    return (
        config["attack"]["identification"] is not None
        and wildcards.dataset not in TABULAR_DATASETS
        and not GridPoint.from_wildcards(wildcards).finetune
    )


def attack_inputs(wildcards):
    """The dataset's splits, its word sets where word recovery or identification runs, and for identification the
    run's model and the dataset's clean frozen features (the receiving party's candidates and pool)."""
    inputs = dataset_splits(wildcards)
    if word_recovery(wildcards.dataset) or identification_runs(wildcards):
        inputs["words"] = f"results/data/{wildcards.dataset}/{WORDS_FILE}"
    if identification_runs(wildcards):
        clean = FROZEN_FEATURES_DIR.format(dataset=wildcards.dataset, encoder=wildcards.encoder)
        inputs.update(
            words_record=f"results/data/{wildcards.dataset}/words.json",
            model=f"{GridPoint.from_wildcards(wildcards).run_dir}/model.safetensors",
            **{f"clean_{s}": f"{clean}/{s}.npy" for s in SPLITS},
        )
    return inputs


def vocabulary_settings():
    """attack.inversion without the attacker: what the word sets depend on (VocabularySettings' fields)."""
    return {k: v for k, v in config["attack"]["inversion"].items() if k != "attacker"}


def grid_params_of(wildcards):
    return GridPoint.from_wildcards(wildcards).grid_values


def mu_of(wildcards):
    return GridPoint.from_wildcards(wildcards).mu


def method_settings(wildcards):
    """The config's overrides of the method's paper defaults; for a fine-tuned point also, under `finetune`,
    what the encoder is trained with (so changing it reruns exactly the fine-tuned points). `finetune: true`
    itself is left out: the folder says it, and frozen points' params stay as they were."""
    settings = {k: v for k, v in config["methods"].get(wildcards.method, {}).items() if k != "finetune"}
    if GridPoint.from_wildcards(wildcards).finetune:
        encoder = {k: config["encoder"][k] for k in ("name", "pooling", "sensitive_words")}
        # max_train only where set: the points fine-tuned before it existed keep their params
        tuning = {
            k: v
            for k, v in config["finetune"].items()
            if k not in ("threads", "mem_mb", "runtime") and not (k == "max_train" and v is None)
        }
        settings["finetune"] = {**encoder, **encoder_revision(), **tuning, **thread_param("finetune")}
    return settings


# A thread count moves a job's numbers (privtext.runtime.threads), so the configurable ones are params. Each
# is left out of the params at the count every result was computed with before it became one, so that
# those results keep the params Snakemake recorded and are not rerun.
EARLIER_THREADS = {"encoder": 1, "finetune": 2}


def thread_param(block):
    """{"threads": n} where config[block]["threads"] is not the earlier results' count, else {}."""
    threads = config[block]["threads"]
    return {} if threads == EARLIER_THREADS[block] else {"threads": threads}


def encoder_revision():
    """{"revision": r} when encoder.revision pins the weights, else {} (minilm's default pin, or unpinned):
    left out when null, so that results computed before the key existed keep their params."""
    revision = config["encoder"]["revision"]
    return {} if revision is None else {"revision": revision}


# A frozen point's train job; a fine-tuned point takes config["finetune"]'s values of the same keys.
FROZEN_TRAIN_JOB = {"threads": 1, "mem_mb": 4000, "runtime": 20}


def train_job(key):
    """The train job's ``key`` (threads, mem_mb, or runtime in minutes) for a grid point. runtime grows with
    the attempt, so a retried job (SLURM profile) asks for more time."""

    def frozen_or_finetuned(wildcards, attempt):
        value = config["finetune"][key] if GridPoint.from_wildcards(wildcards).finetune else FROZEN_TRAIN_JOB[key]
        return value * attempt if key == "runtime" else value

    return frozen_or_finetuned


def embed_settings(wildcards):
    if wildcards.encoder == TABULAR_ENCODER:
        return {}
    # device is how a job runs, like a cluster profile: changing it reruns nothing (on CUDA, autocast moves
    # the last digits; meta.json and metrics.json record the device each result came from). threads and
    # revision change the features: params, in the form that keeps earlier results' params.
    settings = {k: v for k, v in config["encoder"].items() if k not in ("threads", "device", "revision")}
    return {**settings, **encoder_revision(), **thread_param("encoder")}


def study_run_files(wildcards):
    """Per file kind, the files of a study's grid points: metrics and attackers, and the study's measures."""
    points = study_grid(wildcards.study)
    return {
        name: [f"{point.run_dir}/{name}.json" for point in points]
        for name in ("metrics", "attack", *study_config(wildcards.study)["measures"])
    }


def studies_with_artefacts():
    """Run studies that feed tables and figures (`artefacts: false` ones stop at their runs.csv)."""
    return [s for s in config["run_studies"] if config["studies"][s].get("artefacts", True)]


def artefacts_to_build():
    """Artefacts whose studies were all run; extra/* need any study with artefacts."""
    run = set(studies_with_artefacts())
    return [a for a in ARTEFACTS.values() if run and (set(a.studies) <= run if a.studies else True)]


def artefact_studies(artefact):
    run = studies_with_artefacts()
    return [s for s in ARTEFACTS[artefact].studies or run if s in run]


def artefact_inputs(artefact):
    studies = artefact_studies(artefact)
    datasets = sorted({d for s in studies for d in study_config(s)["datasets"]})
    inputs = {
        "measures": [f"results/tables/studies/{s}/measures.csv" for s in studies],
        "metas": [f"results/data/{d}/meta.json" for d in datasets],
    }
    if config["published_results"]:
        inputs["published"] = config["published_results"]
    if artefact == "dpnr/figure4" and "dpnr_fairness" in studies:
        first = {}
        for point in study_grid("dpnr_fairness"):
            if point.method in ("nonpriv", "dpnr"):
                first.setdefault((point.dataset, point.method), point)
        inputs["tsne"] = [f"{p.run_dir}/released_test.npy" for p in first.values()]
    return inputs


def artefact_slug(artefact):
    """'dpnr/table2' -> 'dpnr_table2' (rule and caption names)."""
    return "_".join(artefact.split("/"))


def artefact_paper(artefact):
    return artefact.partition("/")[0].upper()


def artefact_outputs(artefact):
    return list(ARTEFACTS[artefact].files)


# The one spelling of the ε audit's and the claims' output paths (their rules and the targets use these).
AUDIT_FILES = {
    "table_csv": "results/tables/extra/epsilon_audit.csv",
    "table_md": "results/tables/extra/epsilon_audit.md",
    "figure_png": "results/figures/extra/epsilon_audit.png",
    "figure_pdf": "results/figures/extra/epsilon_audit.pdf",
    "tradeoff_csv": "results/tables/extra/epsilon_audit_tradeoff.csv",
    "tradeoff_md": "results/tables/extra/epsilon_audit_tradeoff.md",
    "profile_csv": "results/tables/extra/epsilon_audit_profile.csv",
}
AUDIT_TRADEOFF_FIGURES = {  # one per audited mechanism
    "png": "results/figures/extra/epsilon_audit_tradeoff/{mechanism}.png",
    "pdf": "results/figures/extra/epsilon_audit_tradeoff/{mechanism}.pdf",
}
CLAIMS_FILES = {
    "table_csv": "results/tables/claims.csv",
    "table_md": "results/tables/claims.md",
    "paper_csv": "results/tables/claims_paper.csv",
    "figure_png": "results/figures/claims/verdicts.png",
    "figure_pdf": "results/figures/claims/verdicts.pdf",
}


RELEASE_AUDIT_FILES = {
    "table_csv": "results/tables/extra/release_audit.csv",
    "table_md": "results/tables/extra/release_audit.md",
}


def release_audit_datasets():
    """The text datasets whose release paths the audit covers: audit.release's, where selected and in its study."""
    block = config["audit"]["release"]
    if block is None:
        return []
    if block["study"] not in config["studies"]:  # asked only when the audit is: another config may drop the study
        raise ConfigError(
            f"invalid config key 'audit.release.study': {block['study']!r} is not defined under "
            f"'studies' (defined: {sorted(config['studies'])})"
        )
    studied = study_config(block["study"])["datasets"]
    return [d for d in block["datasets"] if d in studied and d not in TABULAR_DATASETS]


def release_audit_points(dataset):
    """The runs audit.release audits on ``dataset``: its study's frozen DP points at μ = 0 and the first seed."""
    points = [
        p
        for p in study_grid(config["audit"]["release"]["study"])
        if p.dataset == dataset and not p.finetune and p.mu == 0 and "layer" in METHODS[p.method].defaults
    ]
    first = min((p.seed for p in points), default=None)
    return [p for p in points if p.seed == first]


def release_audit_inputs(wildcards):
    points = release_audit_points(wildcards.dataset)
    return {
        "meta": f"results/data/{wildcards.dataset}/meta.json",
        "test": f"results/data/{wildcards.dataset}/test.parquet",
        "metrics": [f"{p.run_dir}/metrics.json" for p in points],
        "models": [f"{p.run_dir}/model.safetensors" for p in points],
    }


def audit_outputs():
    """The ε audit's tables and figures (docs/audit.md), opt-in via run_audit: rule epsilon_audit writes the tables
    and the summary figure, rule audit_tradeoff_figure one trade-off figure per audited mechanism, rule
    release_audit_table the end-to-end table (where audit.release has datasets)."""
    figures = [
        path.format(mechanism=m) for m in config["audit"]["mechanisms"] for path in AUDIT_TRADEOFF_FIGURES.values()
    ]
    release = list(RELEASE_AUDIT_FILES.values()) if release_audit_datasets() else []
    return list(AUDIT_FILES.values()) + figures + release


# Snakemake's report menu sorts categories with localeCompare (digits before letters): "1." puts the claims
# before CAPE, DPNR, EXTRA and FEDERATE.
CLAIMS_CATEGORY = "1. WHAT HOLDS (CLAIMS)"


def claims_outputs():
    """The claims table and verdict figure, built when the first claims study runs."""
    if config["claims_studies"][0] not in config["run_studies"]:
        return []
    return list(CLAIMS_FILES.values())


def claims_inputs(wildcards):
    studies = [s for s in config["claims_studies"] if s in config["run_studies"]]
    datasets = sorted({d for s in studies for d in study_config(s)["datasets"]})
    points = unique(point for s in studies for point in study_grid(s))
    inputs = {
        "measures": [f"results/tables/studies/{s}/measures.csv" for s in studies],
        "metas": [f"results/data/{d}/meta.json" for d in datasets],
        # the per-example test records behind each interval (privtext.claims.evidence)
        "tests": [f"results/data/{d}/test.parquet" for d in datasets],
        "records": [f"{p.run_dir}/{name}" for p in points for name in ("predictions.parquet", "attack.json")],
    }
    if config["published_results"]:
        inputs["published"] = config["published_results"]
    if config["run_audit"]:
        inputs["audit"] = AUDIT_FILES["table_csv"]  # F12: the ε audit as a claim row
        if release_audit_datasets():  # D4: Theorem 2 on the release path
            inputs["release_audit"] = RELEASE_AUDIT_FILES["table_csv"]
    # the seeds-in-two-optima check per method family: the seed_shape studies that run and have points here (a
    # subset of datasets can leave one with none)
    inputs["seed_shape"] = [f"results/tables/studies/{s}/runs.csv" for s in seed_shape_studies() if study_grid(s)]
    return inputs


SEED_SHAPE_STUDIES = ("seed_shape", "seed_shape_dpnr", "seed_shape_cape")


def seed_shape_studies():
    return [s for s in SEED_SHAPE_STUDIES if s in config["run_studies"]]


def claims_seeds(wildcards):
    return sorted(
        {int(seed) for s in config["claims_studies"] if s in config["run_studies"] for seed in study_config(s)["seeds"]}
    )


def final_outputs():
    data = [f"results/data/{dataset}/meta.json" for dataset in selected_datasets()]
    artefacts = [path for a in artefacts_to_build() for path in artefact_outputs(a.name)]
    audit = audit_outputs() if config["run_audit"] else []
    runs = [f"results/tables/studies/{s}/runs.csv" for s in config["run_studies"]]
    return data + runs + ladder_outputs() + claims_outputs() + artefacts + audit + kept_release_files()


def release_plan():
    """(kept, dropped): run folders of the run studies' points that keep released_{train,dev,test}.npy, and
    those whose releases are removed once every job reading them is done (keep_releases, rules/train.smk).
    A point planned by several run studies keeps its releases if any of them keeps them. Both empty when no run
    study drops them."""
    keeps = {
        name: study_config(name)["keep_releases"] if config["keep_releases"] is None else config["keep_releases"]
        for name in config["run_studies"]
    }
    if all(keeps.values()):
        return set(), set()  # nothing dropped: no grid to plan here (every job re-parses this file)
    kept, dropped = set(), set()
    for name, keep in keeps.items():
        (kept if keep else dropped).update(point.run_dir for point in study_grid(name))
    # A consumer that forces keeping: an artefact reading releases (DPNR Figure 4's t-SNE reads released_test.npy)
    # reads them again at each rebuild (new plotting code); its few points keep theirs rather than retrain.
    for artefact in artefacts_to_build():
        for paths in artefact_inputs(artefact.name).values():
            kept.update(
                str(Path(p).parent)
                for p in ([paths] if isinstance(paths, str) else paths)
                if Path(p).name.startswith("released_")
            )
    return kept, dropped - kept


KEPT_RELEASES, DROPPED_RELEASES = release_plan()


def release_output(split):
    """The train rule's released_{split}.npy: temp() when a run point drops its releases, so that Snakemake
    removes them once attack and mdl (their only readers in the grid) are done, and a missing one reruns the
    point only when a job that reads it must run again. Otherwise a plain output, as before the setting."""
    path = f"{RUN_DIR}/released_{split}.npy"
    return temp(path) if DROPPED_RELEASES else path


def kept_release_files():
    """When some points drop their releases, the other points' releases as inputs of the `all` rule: Snakemake
    keeps a temp() file that a target rule without outputs reads (DAG.derived_targetfiles). A run given explicit
    targets instead of the `all` rule keeps none of the temp() releases of its points."""
    if not DROPPED_RELEASES:
        return []
    return [f"{run_dir}/released_{split}.npy" for run_dir in sorted(KEPT_RELEASES) for split in SPLITS]


def ladder_outputs():
    """Each run study's attack ladder, one table and figure per dataset (rules/aggregate.smk)."""
    return [
        f"results/{kind}/studies/{s}/ladder/{d}.{suffix}"
        for s in config["run_studies"]
        for d in sorted({p.dataset for p in study_grid(s)})
        for kind, suffix in (("tables", "csv"), ("figures", "png"))
    ]
