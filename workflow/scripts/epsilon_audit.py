"""results/tables/extra/epsilon_audit{,_tradeoff,_profile}.* and its summary figure: the empirical ε audit (docs/audit.md, "How the audit works")."""

import logging

from privtext.privacy.audit import run_audit
from privtext.privacy.search import SearchSettings
from privtext.report.audit_report import write_audit_figure, write_audit_table, write_tradeoff_tables
from privtext.runtime.logs import finish_job, setup_logging
from privtext.runtime.threads import limited_threads

setup_logging(snakemake.log[0])
settings = snakemake.params.audit
with limited_threads(snakemake.threads):
    audit = run_audit(
        settings["mechanisms"], settings["epsilons"], settings["dims"], settings["samples"], seed=settings["seed"],
        confidence=settings["confidence"], logistic_samples=settings["logistic_samples"],
        search=None if settings["search"] is None else SearchSettings(**settings["search"]),
        progress=logging.getLogger("privtext.privacy.audit").info,
    )
write_audit_table(audit.table, snakemake.output.table_csv.rsplit(".", 1)[0])
write_audit_figure(audit.table, snakemake.output.figure_png.rsplit(".", 1)[0])
write_tradeoff_tables(audit.tradeoff, audit.profile, snakemake.output.tradeoff_csv.rsplit(".", 1)[0],
                      snakemake.output.profile_csv)
finish_job()
