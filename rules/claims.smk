# The papers' claims checked one by one (docs/claims.md): opt-in with the claims studies (`make claims`).


rule claims:
    input:
        unpack(claims_inputs),
    output:
        table_csv=report(
            CLAIMS_FILES["table_csv"],
            caption="../report/claims.rst",
            category=CLAIMS_CATEGORY,
            labels={"artefact": "claims", "format": "csv"},
        ),
        table_md=report(
            CLAIMS_FILES["table_md"],
            caption="../report/claims.rst",
            category=CLAIMS_CATEGORY,
            labels={"artefact": "claims", "format": "md"},
        ),
        paper_csv=CLAIMS_FILES["paper_csv"],
        figure_png=report(
            CLAIMS_FILES["figure_png"],
            caption="../report/claims.rst",
            category=CLAIMS_CATEGORY,
            labels={"artefact": "claims/verdicts", "format": "png"},
        ),
        figure_pdf=report(
            CLAIMS_FILES["figure_pdf"],
            caption="../report/claims.rst",
            category=CLAIMS_CATEGORY,
            labels={"artefact": "claims/verdicts", "format": "pdf"},
        ),
    log:
        "results/logs/claims.log",
    conda:
        "../envs/privtext.yaml"
    threads: 1
    resources:
        mem_mb=6000,
        runtime=20,
    params:
        seeds=claims_seeds,
        seed_shape_run=lambda wildcards: bool(seed_shape_studies()),
    script:
        "../workflow/scripts/claims.py"
