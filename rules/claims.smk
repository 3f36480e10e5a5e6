# The papers' claims checked one by one (docs/claims.md): opt-in with the claims studies (`make claims`).


rule claims:
    input:
        unpack(claims_inputs),
    output:
        table_csv=report(
            "results/tables/claims.csv",
            caption="../report/claims.rst",
            category=CLAIMS_CATEGORY,
            labels={"artefact": "claims", "format": "csv"},
        ),
        table_md=report(
            "results/tables/claims.md",
            caption="../report/claims.rst",
            category=CLAIMS_CATEGORY,
            labels={"artefact": "claims", "format": "md"},
        ),
        paper_csv="results/tables/claims_paper.csv",
        figure_png=report(
            "results/figures/claims/verdicts.png",
            caption="../report/claims.rst",
            category=CLAIMS_CATEGORY,
            labels={"artefact": "claims/verdicts", "format": "png"},
        ),
        figure_pdf=report(
            "results/figures/claims/verdicts.pdf",
            caption="../report/claims.rst",
            category=CLAIMS_CATEGORY,
            labels={"artefact": "claims/verdicts", "format": "pdf"},
        ),
    log:
        "results/logs/claims.log",
    params:
        seeds=claims_seeds,
    threads: 1
    resources:
        mem_mb=6000,
        runtime=20,
    conda:
        "../envs/privtext.yaml"
    script:
        "../workflow/scripts/claims.py"
