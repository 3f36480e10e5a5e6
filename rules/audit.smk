# The empirical ε audit of every privacy layer (docs/audit.md, "How the audit works"): needs no data, opt-in (`make audit`, run_audit).


rule epsilon_audit:
    output:
        table_csv=report(
            AUDIT_FILES["table_csv"],
            caption="../report/extra_epsilon_audit.rst",
            category="EXTRA",
            labels={"artefact": "extra/epsilon_audit", "format": "csv"},
        ),
        table_md=report(
            AUDIT_FILES["table_md"],
            caption="../report/extra_epsilon_audit.rst",
            category="EXTRA",
            labels={"artefact": "extra/epsilon_audit", "format": "md"},
        ),
        figure_png=report(
            AUDIT_FILES["figure_png"],
            caption="../report/extra_epsilon_audit.rst",
            category="EXTRA",
            labels={"artefact": "extra/epsilon_audit_figure", "format": "png"},
        ),
        figure_pdf=report(
            AUDIT_FILES["figure_pdf"],
            caption="../report/extra_epsilon_audit.rst",
            category="EXTRA",
            labels={"artefact": "extra/epsilon_audit_figure", "format": "pdf"},
        ),
        tradeoff_csv=AUDIT_FILES["tradeoff_csv"],
        tradeoff_md=report(
            AUDIT_FILES["tradeoff_md"],
            caption="../report/extra_epsilon_audit_tradeoff.rst",
            category="EXTRA",
            labels={"artefact": "extra/epsilon_audit_tradeoff", "format": "md"},
        ),
        profile_csv=AUDIT_FILES["profile_csv"],
    log:
        "results/logs/extra/epsilon_audit.log",
    conda:
        "../envs/privtext.yaml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=20,
    params:
        audit=config["audit"],
    script:
        "../workflow/scripts/epsilon_audit.py"


# One figure per audited mechanism: its tests' trade-off against the exact curve, and its exact ε(δ)
rule audit_tradeoff_figure:
    input:
        tradeoff=AUDIT_FILES["tradeoff_csv"],
        profile=AUDIT_FILES["profile_csv"],
    output:
        png=report(
            AUDIT_TRADEOFF_FIGURES["png"],
            caption="../report/extra_epsilon_audit_tradeoff.rst",
            category="EXTRA",
            labels={"artefact": "extra/epsilon_audit_tradeoff/{mechanism}", "format": "png"},
        ),
        pdf=AUDIT_TRADEOFF_FIGURES["pdf"],
    log:
        "results/logs/extra/epsilon_audit_tradeoff/{mechanism}.log",
    wildcard_constraints:
        mechanism="[a-z0-9_]+",
    conda:
        "../envs/privtext.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    script:
        "../workflow/scripts/audit_tradeoff_figure.py"


# The end-to-end audit of each DP run's release path on one dataset's texts (docs/audit.md, "The release path,
# end to end"): word dropout, the frozen encoder, the run's trained encoder and privacy layer.
rule release_audit:
    input:
        unpack(release_audit_inputs),
    output:
        "results/tables/extra/release_audit/{dataset}.csv",
    log:
        "results/logs/extra/release_audit/{dataset}.log",
    conda:
        "../envs/privtext.yaml"
    threads: 2
    resources:
        mem_mb=4000,
        runtime=30,
    params:
        release=config["audit"]["release"],
        seed=config["audit"]["seed"],
        confidence=config["audit"]["confidence"],
        # what the job loads the encoder with, revision null included (load_encoder's default pin); embed_settings
        # drops a null revision only so that older features keep their params. device and threads: how it runs
        encoder={k: v for k, v in config["encoder"].items() if k not in ("device", "threads")},
    script:
        "../workflow/scripts/release_audit.py"


rule release_audit_table:
    input:
        lambda wildcards: [f"results/tables/extra/release_audit/{d}.csv" for d in release_audit_datasets()],
    output:
        table_csv=RELEASE_AUDIT_FILES["table_csv"],
        table_md=report(
            RELEASE_AUDIT_FILES["table_md"],
            caption="../report/extra_release_audit.rst",
            category="EXTRA",
            labels={"artefact": "extra/release_audit", "format": "md"},
        ),
    log:
        "results/logs/extra/release_audit_table.log",
    conda:
        "../envs/privtext.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    script:
        "../workflow/scripts/release_audit_table.py"
