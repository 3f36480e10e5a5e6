# privtext: private and fair text representations, reproduced (DPNR, CAPE, FEDERATE).
# This file is the table of contents; stages live in rules/, logic in src/privtext/.
from snakemake.utils import min_version

min_version("8.0")


configfile: "config.yaml"


include: "rules/common.smk"
include: "rules/data.smk"


rule all:
    input:
        final_outputs(),
    default_target: True
