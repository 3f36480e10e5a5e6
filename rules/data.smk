# Raw data acquisition and dataset construction (docs/data.md).


rule download_raw:
    output:
        f"{RAW_DIR}/{{relpath}}",
    log:
        f"results/logs/download/{{relpath}}.log",
    wildcard_constraints:
        relpath="|".join(p.replace(".", r"\.") for p in DOWNLOADS),
    localrule: True  # downloads run where the network is (compute nodes often have none)
    conda:
        "../envs/privtext.yaml"
    threads: 1
    resources:
        mem_mb=4000,
        runtime=60,
    params:
        relpath=download_relpath,
        allowed=config["allow_download"],
    script:
        "../workflow/scripts/download_raw.py"


rule nltk_download:
    output:
        directory(f"{NLTK_DATA}/{{nltk_resource_path}}"),
    log:
        "results/logs/nltk/{nltk_resource_path}.log",
    wildcard_constraints:
        nltk_resource_path="|".join(NLTK_NER_RESOURCES.values()),
    localrule: True  # downloads run where the network is (compute nodes often have none)
    conda:
        "../envs/privtext.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=20,
    script:
        "../workflow/scripts/nltk_download.py"


rule ner_persons:
    input:
        unpack(ner_inputs),
    output:
        "results/cache/ner/ag/{backend}.parquet",
    log:
        "results/logs/ner/ag/{backend}.log",
    priority: 10
    conda:
        "../envs/privtext.yaml"
    threads: 1
    resources:
        mem_mb=4000,
        runtime=lambda wildcards, attempt: 60 * attempt,
    params:
        nltk_data=NLTK_DATA,
        spacy_model=config["spacy_model"],
    script:
        "../workflow/scripts/ner_persons.py"


rule build_dataset:
    input:
        unpack(build_inputs),
    output:
        train="results/data/{dataset}/train.parquet",
        dev="results/data/{dataset}/dev.parquet",
        test="results/data/{dataset}/test.parquet",
        meta="results/data/{dataset}/meta.json",
        quarantine="results/data/{dataset}/quarantine.jsonl",
    log:
        "results/logs/data/{dataset}.log",
    benchmark:
        "results/benchmarks/data/{dataset}.tsv"
    priority: 10
    conda:
        "../envs/privtext.yaml"
    threads: 1
    resources:
        mem_mb=8000,
        runtime=lambda wildcards, attempt: 60 * attempt,
    params:
        options=build_params,
        seed=config["seed"],
        quarantine_examples=config["quarantine_examples"],
    script:
        "../workflow/scripts/build_dataset.py"
