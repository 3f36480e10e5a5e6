"""What the full paper grid costs on a SLURM cluster: grid points, jobs, sbatch submissions, CPU/GPU-hours, wall time.

    .venv/bin/python benchmarks/paper_scale.py [--benchmarks DIR ...] [--points-per-job 8] [--gpu-texts-per-second 1000]
    .venv/bin/python benchmarks/paper_scale.py --studies claims_full claims_full_mu --set 'train={max_train: null}'
        [--every-dataset]  (the claims at full size, `make claims-full`)

1. Plans every paper study on every available dataset (no grid_shrink) with a Snakemake dry run in a scratch
   folder (the offline mirror from ../shared when present) and reads each planned job's rule and wildcards.
   --every-dataset plans the datasets whose raw files are not here too (empty stand-ins in the scratch folder):
   their jobs cost what the same method measured on other datasets, scaled to their training rows but not to
   their input width (Twitter's 2,304 columns, Bias in Bios's 768, against 38 to 384 measured here).
2. sbatch submissions: the grid rules (train, attack, mdl, fairness) of a point form one group; a submission
   packs up to --points-per-job points that become ready together (those sharing one extraction), so it is
   the sum over extractions of ceil(points / points-per-job), plus one per ungrouped remote job (data,
   extraction); local rules (downloads, tables, figures) are not submitted.
3. CPU-hours: each planned job costs the mean `s` (wall seconds, times the threads of a fine-tuned point, which
   holds finetune.threads cores) of the benchmark files (`benchmark:` directive, results/benchmarks/**.tsv) of
   the same rule on the same dataset and method, else of the same rule and method, else of the rule (a
   fine-tuned point's method counts apart from the same method on frozen features: its train job takes
   minutes, not seconds; its rows are finetune.max_train where set); the basis of each figure is printed. A job
   that ran in a warm worker (privtext.runtime.warm; its log's first line says so) costs COLD_START more for its
   rule, measured (on a cluster each job is a process of its own; --as-measured leaves it out). A train job's
   training grows with the rows it trains on: where the measured job's run folder (results/runs beside
   results/benchmarks) holds its metrics.json, its training
   seconds (``seconds`` less the per-epoch dev passes; dev is never capped) are scaled from the rows it trained
   on (``n_train``) to the rows the plan trains on (``train.max_train`` of the plan, else the whole training
   split: meta.json, else TRAIN_ROWS); where some of those jobs were measured at the planned rows (pass the
   benchmarks of a full-size run too), only those count. The training rule fixes the batch by the rows (at least
   50 steps an epoch), and a step on a larger batch costs at least what it did and at most in proportion to its
   batch, so with the same epochs the cost lies between the training scaled by optimiser steps and by rows (which
   is the lower depends on whether the plan trains on more rows or fewer); both bounds are printed. The attackers
   train on at most ``attack.max_train`` rows at any size and are not scaled. The figure with every job at its
   measured size is printed beside them.
4. GPU-hours for BERT-base extraction: the texts every planned extraction encodes (each dataset's meta.json
   split sizes, else docs/data.md, "Dataset sizes") at --gpu-texts-per-second (an assumption: no GPU here; the default is a round
   figure for BERT-base at 128 tokens in fp32 on one data-centre GPU).
5. Wall time on 1, 10 and 100 nodes of --cores-per-node single-thread job slots, for both bounds: the CPU work
   divided over the slots, but never less than the longest chain (largest dataset build + its extraction + one
   full group job); queue waits and the local jobs (tables and figures, seconds each) are not counted.
6. Disk of the run folders, with each point's three released representations kept and removed
   (keep_releases: false): per planned point, the mean file sizes of finished run folders (--runs) of the same
   dataset and method, else releases = rows x released columns x 4 bytes (float32); the basis is printed.
"""

from __future__ import annotations

import argparse
import csv
import functools
import json
import math
import re
import subprocess
import sys
import tempfile
from collections import Counter, defaultdict
from pathlib import Path
from statistics import mean
from typing import NamedTuple

import yaml

from privtext.plan.grid import FINETUNE_SUFFIX  # a fine-tuned point's encoder segment ends with it

PROJECT_ROOT = Path(__file__).resolve().parents[1]
SHARED = PROJECT_ROOT.parent / "shared"
SNAKEMAKE = Path(sys.executable).parent / "snakemake"
PAPER_STUDIES = ["dpnr_eps", "dpnr_mu", "dpnr_privacy", "dpnr_fairness", "cape_main", "cape_sweep",
                 "federate_main", "federate_rt", "federate_eps"]
GROUPED = ("train", "attack", "mdl", "fairness")
REMOTE_ALONE = ("build_dataset", "ner_persons", "embed")


def place_missing_raw_files(raw_dir: Path, search_dirs: list[Path]) -> list[str]:
    """Empty stand-ins, under ``raw_dir``, for the raw files of every dataset that has none in ``search_dirs``
    (Trustpilot, Twitter and Bias in Bios here), so that a dry run plans those datasets as a user who has them
    would run them; a dry run opens no raw file. Returns the datasets given stand-ins."""
    from privtext.data import BUILDERS
    from privtext.data.sources import download_targets, resolve_layout

    placed = []
    for dataset in BUILDERS:
        if resolve_layout(dataset, search_dirs) is None:
            for path in download_targets(dataset, raw_dir).values():
                path.parent.mkdir(parents=True, exist_ok=True)
                path.touch()
            placed.append(dataset)
    return placed


def planned_jobs(workdir: Path, studies: list[str] = PAPER_STUDIES, settings: dict | None = None,
                 every_dataset: bool = False) -> list[tuple[str, bool, dict[str, str]]]:
    """(rule, is_local, wildcards) of every job a dry run of ``studies`` plans (``settings``: more config);
    ``every_dataset``: also those whose raw files are not on this machine (:func:`place_missing_raw_files`)."""
    config = {"run_studies": studies, **(settings or {})}
    for key, folder in (("data_mirror", SHARED / "data"), ("nltk_data", SHARED / "nltk_data")):
        if folder.is_dir():
            config[key] = str(folder)
    if every_dataset:
        # the stand-ins go to the scratch folder only, whatever raw_dir the settings name
        raw_dir = workdir / "resources" / "raw"
        config["raw_dir"] = str(raw_dir)
        place_missing_raw_files(raw_dir, [raw_dir, *([Path(config["data_mirror"])] if "data_mirror" in config else [])])
    configfile = workdir / "paper-config.yaml"
    configfile.write_text(yaml.safe_dump(config))
    result = subprocess.run([str(SNAKEMAKE), "-n", "--snakefile", str(PROJECT_ROOT / "Snakefile"), "--directory", str(workdir),
                             "--configfile", str(PROJECT_ROOT / "config.yaml"), str(configfile), "--cores", "1",
                             "--workflow-profile", "none"],  # config.yaml is read from the working folder: pass it
                            capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"dry run failed:\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}")
    jobs = []
    for block in re.split(r"\n(?=\s*(?:local)?rule \w+:\n)", result.stdout):
        head = re.match(r"\s*(local)?rule (\w+):\n", block)
        if not head:
            continue
        found = re.search(r"^\s*wildcards: (.*)$", block, flags=re.M)
        wildcards = dict(item.split("=", 1) for item in found.group(1).split(", ")) if found else {}
        jobs.append((head.group(2), head.group(1) is not None, wildcards))
    return jobs


def method_kind(method: str, encoder: str) -> str:
    """The method as costed: a fine-tuned point's train job takes minutes where the same method on frozen
    features takes seconds, so the two are never averaged together."""
    return method + FINETUNE_SUFFIX if encoder.endswith(FINETUNE_SUFFIX) else method


def benchmark_rows(roots: list[Path]):
    """(rule, dataset, method kind), row, root, file of every benchmark file under roots (results/benchmarks/...):
    a row holds Snakemake's columns (``s`` wall seconds, ``cpu_time``, ``max_rss`` ...)."""
    for root in roots:
        for tsv in root.glob("**/*.tsv"):
            parts = tsv.relative_to(root).parts
            if parts[0] == "runs":  # runs/{dataset}/{encoder}/{method}/.../{rule}.tsv
                key = (tsv.stem, parts[1], method_kind(parts[3], parts[2]))
            elif parts[0] == "data":  # data/{dataset}.tsv
                key = ("build_dataset", tsv.stem, "")
            elif parts[0] == "embed":  # embed/{dataset}/...
                key = ("embed", parts[1], "")
            else:
                continue
            with open(tsv) as handle:
                for row in csv.DictReader(handle, delimiter="\t"):
                    yield key, row, root, tsv


class Sample(NamedTuple):
    """One measured job: its wall seconds; for a train job whose run folder holds its metrics.json, the
    seconds that grow with the training rows, the rows it trained on and its batch rule (the method's batch and
    the fewest optimiser steps an epoch takes) and the threads it computed with (a fine-tuned point holds
    finetune.threads cores; every other job one); whether it ran in a warm worker."""

    wall: float
    training: float = 0.0
    rows: int | None = None
    batch: int | None = None
    min_steps: int = 1
    warm: bool = False
    threads: int = 1

    def steps_per_epoch(self, rows: int) -> int:
        """Optimiser steps an epoch takes on ``rows`` under the training rule (the loop's own batch rule)."""
        from privtext.training.loop import TrainingSettings  # imports torch: only where a train job is scaled

        rule = TrainingSettings(epochs=1, batch_size=self.batch, lr=1.0, min_steps_per_epoch=self.min_steps)
        return math.ceil(rows / rule.batch_size_for(rows))

    def at(self, rows: int | None, cold_start: float = 0.0, bound: str = "high") -> float:
        """Core-seconds (wall seconds times the threads it held) of the same job training on ``rows`` (None or
        unmeasured: as measured), in a process of its own (a job measured in a warm worker pays ``cold_start``
        more). The training part grows with the optimiser steps (a step costs what it did) or with the rows (a
        step costs in proportion to its batch). A step costs at least what it did on a smaller batch and at most
        in proportion to the batch, so with the same epochs the two bound the cost at other rows: ``bound`` "low"
        is the smaller, "high" the larger."""
        wall = self.wall + (cold_start if self.warm else 0.0)
        if rows is not None and self.rows:
            ratios = [rows / self.rows]
            if self.batch:
                ratios.append(self.steps_per_epoch(rows) / self.steps_per_epoch(self.rows))
            wall += self.training * ((min if bound == "low" else max)(ratios) - 1)
        return wall * self.threads


BOUNDS = ("low", "high")
# What a job pays in a process of its own and not in a warm worker (privtext.runtime.warm), per rule: the mean
# job-seconds of one `make claims` (2,191 jobs) run cold at 563f8f0 less the same jobs warm at e39b304 (AMD EPYC
# with AVX-512, 2026-11-28): attack 0.68 s, MDL 1.10 s; train 2.74 s less the 1.2 s a job of claim imports
# that f38ba57 removed in between, which a bare `python -c "import torch"` (1.5 s, /usr/bin/time) agrees with.
# On a cluster every job is a process of its own.
COLD_START = {"train": 1.5, "mdl": 1.1, "attack": 0.7}


def ran_warm(log: Path) -> bool:
    """Whether the job that wrote ``log`` ran in a warm worker (its logging says so first thing)."""
    from privtext.runtime.logs import WARM_WORKER_MESSAGE  # stdlib only

    if not log.is_file():
        return False
    with open(log, errors="replace") as handle:
        return WARM_WORKER_MESSAGE in handle.readline()


def training_part(metrics: Path) -> dict | None:
    """What a finished run folder's metrics.json says of its training (None without one): ``training``, its
    ``seconds`` (data, fit, releases) less the per-epoch dev passes (dev is never capped); ``rows`` trained on;
    the method's ``batch`` and ``min_steps`` (the training rule's fewest steps an epoch; absent for a method
    without minibatches); the ``threads`` it computed with."""
    if not metrics.is_file():
        return None
    record = json.loads(metrics.read_text())
    dev = sum(epoch.get("dev_seconds", 0.0) for epoch in record.get("history", {}).get("epochs", []))
    hyperparameters = record.get("hyperparameters", {})
    part = {"training": max(0.0, float(record["seconds"]) - dev), "rows": int(record["n_train"]),
            "threads": int(record.get("threads") or 1)}
    if hyperparameters.get("batch_size"):
        part.update(batch=int(hyperparameters["batch_size"]),
                    min_steps=int(hyperparameters.get("min_steps_per_epoch", 1)))
    return part


def benchmark_seconds(roots: list[Path]) -> dict[tuple, list[Sample]]:
    """(rule, dataset, method kind) -> every benchmark file's measured job under roots (results/benchmarks/...);
    a train job's training part from results/runs beside it (:func:`training_part`)."""
    samples = defaultdict(list)
    for key, row, root, tsv in benchmark_rows(roots):
        # <results>/benchmarks/runs/<point>/train.tsv: the job of <results>/runs/<point>/metrics.json, logged to
        # <results>/logs/results/runs/<point>/train.log (a run folder's logs are under logs/ by its full path)
        found = None
        if key[0] == "train":
            found = training_part(root.parent / tsv.parent.relative_to(root) / "metrics.json")
        warm = ran_warm(root.parent / "logs" / "results" / tsv.relative_to(root).with_suffix(".log"))
        samples[key].append(Sample(float(row["s"]), **(found or {}), warm=warm))
    return samples


def job_seconds(rule: str, dataset: str, method: str, measured: dict, basis: Counter,
                rows: int | None = None, cold_start: float = 0.0, bound: str = "high") -> float:
    """Mean seconds of the measured jobs closest to (rule, dataset, method), each at ``rows`` training rows
    (its ``bound``) and in a process of its own (:meth:`Sample.at`); ``basis`` counts where the figure came
    from."""
    for level, match in (("same rule, dataset, method", lambda k: k == (rule, dataset, method)),
                         ("same rule and method", lambda k: k[0] == rule and k[2] == method),
                         ("same rule", lambda k: k[0] == rule)):
        samples = [s for key, values in measured.items() if match(key) for s in values]
        # jobs measured at the planned size, where there are any, rather than extrapolated
        at_size = [s for s in samples if rows is not None and s.rows == rows]
        if at_size:
            basis[(rule, f"{level}, at the planned rows")] += 1
            return mean(s.at(rows, cold_start, bound) for s in at_size)
        if samples:
            basis[(rule, level)] += 1
            return mean(s.at(rows, cold_start, bound) for s in samples)
    basis[(rule, "no benchmark: 0 s")] += 1
    return 0.0


# train + dev + test of the text datasets built from ../shared/data (docs/data.md, "Dataset sizes"), used when no
# meta.json of a built dataset is at hand.
DOC_SIZES = {"ag_dpnr": 14_571, "ag": 273, "blog": 6_572, "demo": 2_000}


@functools.cache
def _dataset_meta(data_dirs: tuple[Path, ...], dataset: str) -> dict | None:
    """The first meta.json of ``dataset`` under ``data_dirs``, read once however many points ask."""
    for folder in data_dirs:
        meta = folder / dataset / "meta.json"
        if meta.exists():
            return json.loads(meta.read_text())
    return None


def hours(seconds: float) -> str:
    return f"{seconds / 3600:,.1f} h"


RELEASE_FILES = tuple(f"released_{split}.npy" for split in ("train", "dev", "test"))
# Rows (train + dev + test) and input features of the datasets when no meta.json is at hand (docs/data.md, "Dataset
# sizes"); a text dataset's input is the default encoder's (MiniLM's) 384 dimensions.
DOC_ROWS = {**DOC_SIZES, "adult": 45_222, "celeba": 202_599,
            # the papers' sizes (docs/data.md): Trustpilot; Twitter's 100,000 sampled training rows and Ravfogel et
            # al.'s 8,000 dev and 8,000 test; Bias in Bios's 393,423 biographies
            "tp_us": 27_676, "tp_uk": 50_000, "twitter": 116_000, "bios": 393_423}
DOC_FEATURES = {"adult": 97, "celeba": 38, "twitter": 2_304, "bios": 768}  # DeepMoji's and BERT's vectors
# Training rows of the whole training split when no meta.json is at hand: docs/data.md, "Dataset sizes" for the
# offline datasets and the papers' sizes for Trustpilot; Twitter's seeded sample (`twitter.train_size`); Bias in
# Bios about 65% of its 393,423 biographies (De-Arteaga et al.'s split, FEDERATE's appendix D.2).
TRAIN_ROWS = {"ag_dpnr": 11_657, "ag": 217, "blog": 5_257, "adult": 27_133, "celeba": 121_559, "demo": 1_200,
              "tp_us": 22_142, "tp_uk": 28_000, "twitter": 100_000, "bios": 255_725}
TEXT_ENCODER_DIM = 384


def run_folder_bytes(runs_roots: list[Path]) -> dict[tuple[str, str], dict[str, list[int]]]:
    """(dataset, method) -> {"releases": bytes of the three released_*.npy of each finished run folder that
    still holds them, "other": bytes of every other file of each finished folder} under results/runs folders
    (runs/{dataset}/{encoder}/{method}/.../seed~N; finished = holds metrics.json)."""
    sizes: dict[tuple[str, str], dict[str, list[int]]] = defaultdict(lambda: {"releases": [], "other": []})
    for root in runs_roots:
        for metrics in root.glob("**/metrics.json"):
            parts = metrics.parent.relative_to(root).parts
            files = [f for f in metrics.parent.iterdir() if f.is_file()]
            releases = [f for f in files if f.name in RELEASE_FILES]
            entry = sizes[(parts[0], parts[2])]
            entry["other"].append(sum(f.stat().st_size for f in files if f.name not in RELEASE_FILES))
            if len(releases) == len(RELEASE_FILES):
                entry["releases"].append(sum(f.stat().st_size for f in releases))
    return sizes


def released_dim(data_dirs: list[Path], dataset: str, method: str) -> int:
    """Columns of a point's releases: the method's paper-default representation_dim, else its input's (a
    tabular dataset's features from meta.json or docs/data.md, else the text encoder's)."""
    from privtext.methods import METHODS  # the method registry; light (no torch)

    dim = METHODS[method].defaults.get("representation_dim") if method in METHODS else None
    if dim:
        return int(dim)
    meta = _dataset_meta(tuple(data_dirs), dataset)
    if meta and "n_features" in meta:
        return int(meta["n_features"])
    return DOC_FEATURES.get(dataset, TEXT_ENCODER_DIM)


def training_rows(data_dirs: list[Path], dataset: str, max_train: int | None) -> int | None:
    """Rows a planned point of ``dataset`` trains on: its training split (meta.json, else :data:`TRAIN_ROWS`)
    capped at ``max_train`` (None: uncapped); None when the split's size is unknown."""
    meta = _dataset_meta(tuple(data_dirs), dataset)
    rows = meta["splits"]["train"] if meta else TRAIN_ROWS.get(dataset)
    if rows is None:
        return None
    return rows if max_train is None else min(rows, max_train)


def dataset_rows(data_dirs: list[Path], dataset: str) -> int | None:
    """Rows (train + dev + test) of ``dataset``: its meta.json's split sizes, else docs/data.md's, else None."""
    meta = _dataset_meta(tuple(data_dirs), dataset)
    return sum(meta["splits"].values()) if meta else DOC_ROWS.get(dataset)


def disk_footprint(points: list[tuple[str, str]], measured: dict, data_dirs: list[Path],
                   basis: Counter) -> tuple[float, float]:
    """(bytes with releases kept, bytes without them) of the run folders of ``points`` ((dataset, method) per
    planned grid point): each point's releases and other files cost the mean of ``measured``
    (:func:`run_folder_bytes`) for its dataset and method. Else its releases cost rows x released columns x 4
    bytes (float32; 0 for a dataset of unknown size) and its other files the mean of every measured folder
    (0 without any). ``basis`` counts, per part, where each point's figure came from."""
    kept = without = 0.0
    everything = [b for entry in measured.values() for b in entry["other"]]
    for dataset, method in points:
        same = measured.get((dataset, method), {"releases": [], "other": []})
        if same["releases"]:
            releases = mean(same["releases"])
            basis[("releases", "measured: same dataset and method")] += 1
        else:
            rows = dataset_rows(data_dirs, dataset)
            releases = (rows or 0) * released_dim(data_dirs, dataset, method) * 4
            basis[("releases", "rows x released columns x 4 bytes" if rows else "dataset size unknown: 0")] += 1
        if same["other"]:
            other = mean(same["other"])
            basis[("other files", "measured: same dataset and method")] += 1
        else:
            other = mean(everything) if everything else 0.0
            basis[("other files", "mean of every measured folder" if everything else "no run folder measured: 0")] += 1
        kept += releases + other
        without += other
    return kept, without


def gigabytes(size: float) -> str:
    return f"{size / 1e9:,.1f} GB"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--benchmarks", type=Path, nargs="+", default=[PROJECT_ROOT / "results" / "benchmarks"],
                        help="results/benchmarks folders of finished runs")
    parser.add_argument("--points-per-job", type=int, default=8, help="the profile's group-components point=N")
    parser.add_argument("--cores-per-node", type=int, default=2)
    parser.add_argument("--gpu-texts-per-second", type=float, default=1000.0)
    parser.add_argument("--data", type=Path, help="a results/data folder with every dataset's meta.json (text counts)")
    parser.add_argument("--runs", type=Path, nargs="+", default=[PROJECT_ROOT / "results" / "runs"],
                        help="results/runs folders of finished runs (their files' sizes: the disk footprint)")
    parser.add_argument("--as-measured", action="store_true",
                        help="jobs that ran in a warm worker cost what they measured (default: plus COLD_START)")
    parser.add_argument("--studies", nargs="+", default=PAPER_STUDIES, help="the studies to plan (default: the papers')")
    parser.add_argument("--every-dataset", action="store_true",
                        help="plan the studies' datasets whose raw files are not here too (Trustpilot, Twitter, Bias "
                             "in Bios), as a user who has them would run them")
    parser.add_argument("--set", nargs="*", default=[], metavar="KEY=YAML",
                        help="config settings for the plan, e.g. 'train={max_train: null}' (dots nest keys)")
    args = parser.parse_args()
    settings: dict = {}
    for item in args.set:
        key, _, value = item.partition("=")
        *parents, leaf = key.split(".")
        node = settings
        for parent in parents:
            node = node.setdefault(parent, {})
        node[leaf] = yaml.safe_load(value)

    with tempfile.TemporaryDirectory(prefix="privtext-paper-scale-") as scratch:
        workdir = Path(scratch)
        jobs = planned_jobs(workdir, args.studies, settings, args.every_dataset)
        measured = benchmark_seconds([b for b in args.benchmarks if b.is_dir()])
        data_dirs = [d for d in (args.data, PROJECT_ROOT / "results" / "data") if d]
        # the plan's training cap: --set's, else config.yaml's
        max_train = settings.get("train", {}).get(
            "max_train", yaml.safe_load((PROJECT_ROOT / "config.yaml").read_text())["train"]["max_train"])
        # a fine-tuned point's cap: finetune.max_train where set, else the same (workflow/scripts/train.py)
        tuned_max_train = settings.get("finetune", {}).get("max_train", max_train)
        per_rule = Counter(rule for rule, _, _ in jobs)
        # a dry run without the SLURM executor prints every job as local: the rules decide (localrule: True)
        local = [rule for rule, _, _ in jobs if rule not in (*GROUPED, *REMOTE_ALONE, "all")]
        points_per_extraction = Counter()
        # seconds per rule with the training at the planned rows (both bounds), and as measured
        basis, cost = Counter(), {kind: Counter() for kind in (*BOUNDS, "measured")}
        by_dataset = {kind: Counter() for kind in (*BOUNDS, "measured")}  # the grid rules' seconds
        costs: dict[tuple, tuple[dict[str, float], Counter]] = {}  # 60,000 jobs over a few hundred kinds
        planned_rows: dict[tuple[str, bool], int | None] = {}  # (dataset, fine-tuned): rows
        for rule, is_local, wildcards in jobs:
            if rule == "all":
                continue
            dataset, encoder = wildcards.get("dataset", ""), wildcards.get("encoder", "")
            method = method_kind(wildcards.get("method", ""), encoder)
            rows = None
            if rule == "train":
                tuned = method.endswith(FINETUNE_SUFFIX)
                rows = planned_rows.setdefault((dataset, tuned), training_rows(
                    data_dirs, dataset, tuned_max_train if tuned else max_train))
            kind = (rule, dataset, method, rows)
            if kind not in costs:
                found = Counter()
                cold = 0.0 if args.as_measured else COLD_START.get(rule, 0.0)
                seconds = {bound: job_seconds(rule, dataset, method, measured, found if bound == "low" else Counter(),
                                              rows, cold, bound) for bound in BOUNDS}
                seconds["measured"] = job_seconds(rule, dataset, method, measured, Counter(), None, cold)
                costs[kind] = seconds, found
            seconds, found = costs[kind]
            for name, value in seconds.items():
                cost[name][rule] += value
                if rule in GROUPED:
                    by_dataset[name][dataset] += value
            basis.update(found)
            if rule == "train":
                mu = re.match(r"mu~([^/]+)", wildcards["params"]).group(1)
                seed = 0 if float(mu) == 0 else wildcards["seed"]
                points_per_extraction[(dataset, wildcards["encoder"], mu, seed)] += 1
        group_jobs = sum(math.ceil(n / args.points_per_job) for n in points_per_extraction.values())
        alone = sum(per_rule[r] for r in REMOTE_ALONE)
        texts = sum(dataset_rows(data_dirs, wildcards["dataset"]) or 0 for rule, _, wildcards in jobs
                    if rule == "embed" and wildcards.get("encoder") != "features")
        disk_basis = Counter()
        disk_kept, disk_without = disk_footprint(
            [(w["dataset"], w["method"]) for rule, _, w in jobs if rule == "train"],
            run_folder_bytes([r for r in args.runs if r.is_dir()]), data_dirs, disk_basis)

    points = per_rule["train"]
    remote = {name: sum(by_rule[r] for r in (*GROUPED, *REMOTE_ALONE)) for name, by_rule in cost.items()}
    per_point = {name: sum(by_rule[r] for r in GROUPED) / max(points, 1) for name, by_rule in cost.items()}
    longest = {rule: max((mean(s.wall for s in v) for k, v in measured.items() if k[0] == rule), default=0.0)
               for rule in ("build_dataset", "embed")}
    longest_setup = longest["build_dataset"] + longest["embed"]
    chain = {name: longest_setup + args.points_per_job * per_point[name] for name in BOUNDS}

    datasets = "every dataset, raw files here or not" if args.every_dataset else "every available dataset"
    print(f"studies: {', '.join(args.studies)}; {datasets}; no grid_shrink"
          + (f"; {' '.join(args.set)}" if args.set else ""))
    print(f"grid points                      {points:>10,}")
    print(f"rule jobs                        {sum(per_rule.values()) - per_rule['all']:>10,}  "
          + ", ".join(f"{r} {n:,}" for r, n in per_rule.most_common() if r != "all"))
    print(f"  remote (sent to SLURM)         {sum(per_rule[r] for r in (*GROUPED, *REMOTE_ALONE)):>10,}")
    print(f"  local (submitting host)        {len(local):>10,}")
    print(f"sbatch submissions               {group_jobs + alone:>10,}  ({group_jobs:,} group jobs of <= {args.points_per_job} points"
          f" over {len(points_per_extraction)} extractions + {alone} data/extraction jobs)")
    cap = f"train.max_train {max_train if max_train is not None else 'null'}"
    if any(method.endswith(FINETUNE_SUFFIX) for _, _, method, _ in costs):
        cap += f", finetune.max_train {tuned_max_train if tuned_max_train is not None else 'null'}"
    print(f"CPU-hours (remote jobs)          {hours(remote['low']):>10} to {hours(remote['high'])}  "
          f"({per_point['low']:.1f} to {per_point['high']:.1f} s per grid point; training at {cap}, "
          "scaled from the measured jobs: bounds by optimiser steps and by rows)")
    print(f"  every job at its measured size {hours(remote['measured']):>10}  (train jobs "
          f"{hours(cost['measured']['train'])} measured; "
          f"{hours(cost['low']['train'])} to {hours(cost['high']['train'])} scaled)")
    print(f"GPU-hours, BERT-base extraction  {hours(texts / args.gpu_texts_per_second):>10}  "
          f"({texts:,} texts at an assumed {args.gpu_texts_per_second:,.0f} texts/s per GPU)")
    print(f"disk, run folders, releases kept {gigabytes(disk_kept):>10}  ({disk_kept / max(points, 1) / 1e6:,.1f} MB per grid point)")
    print(f"  releases removed               {gigabytes(disk_without):>10}  (keep_releases: false; data and features not counted)")
    for nodes in (1, 10, 100):
        low, high = (max(remote[name] / (nodes * args.cores_per_node), chain[name]) for name in BOUNDS)
        print(f"wall time, {nodes:>3} node(s) x {args.cores_per_node} cores   {hours(low):>10} to {hours(high)}")
    print("CPU-hours of the grid jobs by dataset (points: the bounds, then as measured):")
    points_of = Counter(w.get("dataset", "") for rule, _, w in jobs if rule == "train")
    for dataset, n in sorted(points_of.items()):
        low, high, as_measured = (by_dataset[name][dataset] for name in (*BOUNDS, "measured"))
        print(f"  {dataset:<30} {n:>7,} points {hours(low):>10} to {hours(high):>8}  ({hours(as_measured)})")
    print("basis of the per-job seconds (jobs: where the figure came from):")
    for (rule, level), n in sorted(basis.items()):
        if rule != "all":
            print(f"  {rule:<42} {n:>7,}  {level}")
    warm = Counter(key[0] for key, values in measured.items() for s in values if s.warm)
    if warm:
        print("measured jobs that ran in a warm worker" + (", costed as measured" if args.as_measured else
              ", costed the start-up of a process of their own more (a cluster job starts one)") + ": "
              + ", ".join(f"{rule} {n:,}" + ("" if args.as_measured else f" (+{COLD_START.get(rule, 0.0):g} s)")
                          for rule, n in warm.most_common()))
    print("training rows per planned train job (the measured train jobs' rows, where their metrics.json was found):")
    for (dataset, tuned), rows in sorted(planned_rows.items()):
        seen = sorted({s.rows for (rule, d, m), values in measured.items()
                       if rule == "train" and d == dataset and m.endswith(FINETUNE_SUFFIX) == tuned
                       for s in values if s.rows})
        label = f"{dataset}, fine-tuned" if tuned else dataset
        print(f"  {label:<42} {f'{rows:,}' if rows else 'unknown: as measured':>10}  "
              f"(measured: {', '.join(f'{n:,}' for n in seen) if seen else 'none on this dataset'})")
    print("basis of the disk footprint (grid points: where the figure came from):")
    for (part, level), n in sorted(disk_basis.items()):
        print(f"  {part:<42} {n:>7,}  {level}")


if __name__ == "__main__":
    main()
