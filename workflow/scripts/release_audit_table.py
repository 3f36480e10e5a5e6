"""results/tables/extra/release_audit.{csv,md}: the end-to-end ε audit of every audited dataset, in one table."""

import pandas as pd

from privtext.report.audit_report import write_release_audit_table
from privtext.runtime.logs import finish_job, setup_logging

setup_logging(snakemake.log[0])
parts = [pd.read_csv(path) for path in snakemake.input]
write_release_audit_table(pd.concat(parts, ignore_index=True), snakemake.output.table_csv.rsplit(".", 1)[0])
finish_job()
