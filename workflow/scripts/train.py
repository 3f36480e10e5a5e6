"""Train one grid point: on frozen features, or fine-tuning the encoder with its method end to end (encoder
segment `{encoder}+finetune`); write model, releases, predictions, metrics."""

from privtext.runtime.warm import delegate

delegate()  # run in the warm server when `make` started one, before the imports it saves (privtext.runtime.warm)

from pathlib import Path

from privtext.claims.attackers import attackers_for
from privtext.standins.allocator import keep_freed_memory
from privtext.plan.grid import GridPoint
from privtext.runtime.logs import finish_job, setup_logging
from privtext.jobs.runs import SPLITS, TrainJob
from privtext.jobs.train_job import run_grid_point

setup_logging(snakemake.log[0])
keep_freed_memory()  # a training loop's arrays are reused, not faulted in again every step
point = GridPoint.from_wildcards(snakemake.wildcards)
# finetune.max_train, where set, caps a fine-tuned point's rows in place of train.max_train (both are params)
tuned_rows = snakemake.params.settings.get("finetune", {}).get("max_train") if point.finetune else None
run_grid_point(point, TrainJob(
    data_dir=Path(snakemake.input.meta).parent,
    out_dir=Path(snakemake.output.metrics).parent,
    settings=snakemake.params.settings,
    features=None if point.finetune else {s: snakemake.input[f"features_{s}"] for s in SPLITS},
    max_train=snakemake.params.max_train if tuned_rows is None else tuned_rows,
    # A fine-tuned point computes with finetune.threads (a param of the rule) even where Snakemake grants
    # fewer cores: the count moves its numbers. A frozen point's job has 1 thread, fixed by the rule.
    threads=snakemake.config["finetune"]["threads"] if point.finetune else snakemake.threads,
    device=snakemake.config["train"]["device"],  # not a param: a new device reruns nothing
    deterministic=snakemake.config["deterministic"],
    # Attack here, in the process that has everything loaded; the attack job publishes the result. Not a
    # param either: a change of attack.* reruns only the attack jobs (privtext.jobs.attack_cache).
    attack={**snakemake.config["attack"],
            "attackers": attackers_for(snakemake.config["attack"]["attackers"], point.dataset)}
    if snakemake.config["attack"]["in_train_job"] else None,
))
finish_job()
