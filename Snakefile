# privtext: private and fair text representations, reproduced (DPNR, CAPE, FEDERATE).
# This file is the table of contents; stages live in rules/, logic in src/privtext/.
from snakemake.utils import min_version

min_version("8.0")


configfile: "config.yaml"


report: "report/workflow.rst"


include: "rules/common.smk"
include: "rules/data.smk"
include: "rules/embed.smk"
include: "rules/train.smk"
include: "rules/attack.smk"
include: "rules/measure.smk"
include: "rules/aggregate.smk"
include: "rules/report.smk"
include: "rules/audit.smk"
include: "rules/claims.smk"


rule all:
    default_target: True
    input:
        final_outputs(),


# `make audit`: every table and figure of the ε audit (docs/audit.md)
rule audit:
    input:
        lambda wildcards: audit_outputs(),  # at planning: its config is checked only when the audit is asked for
