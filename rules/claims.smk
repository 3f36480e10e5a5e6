# The claims of SPEC §6 checked one by one (issue 13): opt-in with the claims studies (`make claims`).


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
        mem_mb=4000,
        runtime=20,
    conda:
        "../envs/privtext.yaml"
    script:
        "../workflow/scripts/claims.py"
