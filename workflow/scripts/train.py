"""Train one method at one grid point on frozen features, or fine-tune the encoder with it end to end (encoder
segment `{encoder}+finetune`); write model, releases, predictions, metrics."""

from pathlib import Path

from privtext.allocator import keep_freed_memory
from privtext.grid import GridPoint
from privtext.logs import finish_job, setup_logging
from privtext.runs import train_grid_point

setup_logging(snakemake.log[0])
keep_freed_memory()  # a training loop's arrays are reused, not faulted in again every step
common = dict(
    data_dir=Path(snakemake.input.meta).parent,
    out_dir=Path(snakemake.output.metrics).parent,
    method=snakemake.wildcards.method,
    grid_params=snakemake.params.grid_params,
    settings=snakemake.params.settings,
    mu=snakemake.params.mu,
    seed=int(snakemake.wildcards.seed),
    threads=snakemake.threads,
    max_train=snakemake.params.max_train,
    device=snakemake.config["train"]["device"],  # not a param: a new device reruns nothing
    # Attack here, in the process that has everything loaded; the attack job publishes the result. Not a
    # param either: a change of attack.* reruns only the attack jobs (privtext.attack_cache).
    attack=snakemake.config["attack"] if snakemake.config["attack"]["in_train_job"] else None,
    context={"encoder": snakemake.wildcards.encoder, "run_dir": str(Path(snakemake.output.metrics).parent)},
)
if GridPoint.from_wildcards(snakemake.wildcards).finetune:
    from privtext.finetune_runs import finetune_grid_point

    finetune_grid_point(**common)
else:
    train_grid_point(features={s: snakemake.input[f"features_{s}"] for s in ("train", "dev", "test")}, **common)
finish_job()
