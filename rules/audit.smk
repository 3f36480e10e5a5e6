# The empirical ε audit of every privacy layer (docs/audit.md, "How the audit works"): needs no data, opt-in (`make audit`, run_audit).


rule epsilon_audit:
    output:
        table_csv=report(
            "results/tables/extra/epsilon_audit.csv",
            caption="../report/extra_epsilon_audit.rst",
            category="EXTRA",
            labels={"artefact": "extra/epsilon_audit", "format": "csv"},
        ),
        table_md=report(
            "results/tables/extra/epsilon_audit.md",
            caption="../report/extra_epsilon_audit.rst",
            category="EXTRA",
            labels={"artefact": "extra/epsilon_audit", "format": "md"},
        ),
        figure_png=report(
            "results/figures/extra/epsilon_audit.png",
            caption="../report/extra_epsilon_audit.rst",
            category="EXTRA",
            labels={"artefact": "extra/epsilon_audit_figure", "format": "png"},
        ),
        figure_pdf=report(
            "results/figures/extra/epsilon_audit.pdf",
            caption="../report/extra_epsilon_audit.rst",
            category="EXTRA",
            labels={"artefact": "extra/epsilon_audit_figure", "format": "pdf"},
        ),
    log:
        "results/logs/extra/epsilon_audit.log",
    params:
        audit=config["audit"],
    threads: 1
    resources:
        mem_mb=2000,
        runtime=20,
    conda:
        "../envs/privtext.yaml"
    script:
        "../workflow/scripts/epsilon_audit.py"
