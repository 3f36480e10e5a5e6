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
