"""results/figures/extra/epsilon_audit_tradeoff/{mechanism}.{png,pdf}: one audited mechanism's trade-off and ε(δ)."""

import pandas as pd

from privtext.report.audit_report import write_tradeoff_figure
from privtext.runtime.logs import finish_job, setup_logging

setup_logging(snakemake.log[0])
write_tradeoff_figure(pd.read_csv(snakemake.input.tradeoff), pd.read_csv(snakemake.input.profile),
                      snakemake.wildcards.mechanism, snakemake.output.png.rsplit(".", 1)[0])
finish_job()
