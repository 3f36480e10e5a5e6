"""What the full paper grid costs on a SLURM cluster: grid points, jobs, sbatch submissions, CPU/GPU-hours, wall time.

    .venv/bin/python benchmarks/paper_scale.py [--benchmarks DIR ...] [--points-per-job 8] [--gpu-texts-per-second 1000]
    .venv/bin/python benchmarks/paper_scale.py --studies claims_full claims_full_mu --set 'train={max_train: null}'
        (the claims at full size, `make claims-full`)

1. Plans every paper study on every available dataset (no grid_shrink) with a Snakemake dry run in a scratch
   folder (the offline mirror from ../shared when present) and reads each planned job's rule and wildcards.
2. sbatch submissions: the grid rules (train, attack, mdl, fairness) of a point form one group; a submission
   packs up to --points-per-job points that become ready together (those sharing one extraction), so it is
   the sum over extractions of ceil(points / points-per-job), plus one per ungrouped remote job (data,
   extraction); local rules (downloads, tables, figures) are not submitted.
3. CPU-hours: each planned job costs the mean `s` (wall seconds) x threads of the benchmark files
   (`benchmark:` directive, results/benchmarks/**.tsv) of the same rule on the same dataset and method, else
   of the same rule and method, else of the rule; the basis of each figure is printed.
4. GPU-hours for BERT-base extraction: the texts every planned extraction encodes (each dataset's meta.json
   split sizes, else docs/data.md, "Dataset sizes") at --gpu-texts-per-second (an assumption: no GPU here; the default is a round
   figure for BERT-base at 128 tokens in fp32 on one data-centre GPU).
5. Wall time on 1, 10 and 100 nodes of --cores-per-node single-thread job slots: the CPU work divided over
   the slots, but never less than the longest chain (largest dataset build + its extraction + one full
   group job); queue waits and the local jobs (tables and figures, seconds each) are not counted.
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

import yaml

PROJECT_ROOT = Path(__file__).resolve().parents[1]
SHARED = PROJECT_ROOT.parent / "shared"
SNAKEMAKE = Path(sys.executable).parent / "snakemake"
PAPER_STUDIES = ["dpnr_eps", "dpnr_mu", "dpnr_privacy", "dpnr_fairness", "cape_main", "cape_sweep",
                 "federate_main", "federate_rt", "federate_eps"]
GROUPED = ("train", "attack", "mdl", "fairness")
REMOTE_ALONE = ("build_dataset", "ner_persons", "embed")


def planned_jobs(workdir: Path, studies: list[str] = PAPER_STUDIES,
                 settings: dict | None = None) -> list[tuple[str, bool, dict[str, str]]]:
    """(rule, is_local, wildcards) of every job a dry run of ``studies`` plans (``settings``: more config)."""
    config = {"run_studies": studies, **(settings or {})}
    for key, folder in (("data_mirror", SHARED / "data"), ("nltk_data", SHARED / "nltk_data")):
        if folder.is_dir():
            config[key] = str(folder)
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


def benchmark_rows(roots: list[Path]):
    """(rule, dataset, method), row of every benchmark file under roots (results/benchmarks/...): a row holds
    Snakemake's columns (``s`` wall seconds, ``cpu_time``, ``max_rss`` ...)."""
    for root in roots:
        for tsv in root.glob("**/*.tsv"):
            parts = tsv.relative_to(root).parts
            if parts[0] == "runs":  # runs/{dataset}/{encoder}/{method}/.../{rule}.tsv
                key = (tsv.stem, parts[1], parts[3])
            elif parts[0] == "data":  # data/{dataset}.tsv
                key = ("build_dataset", tsv.stem, "")
            elif parts[0] == "embed":  # embed/{dataset}/...
                key = ("embed", parts[1], "")
            else:
                continue
            with open(tsv) as handle:
                for row in csv.DictReader(handle, delimiter="\t"):
                    yield key, row


def benchmark_seconds(roots: list[Path]) -> dict[tuple, list[float]]:
    """(rule, dataset, method) -> wall seconds of every benchmark file under roots (results/benchmarks/...)."""
    seconds = defaultdict(list)
    for key, row in benchmark_rows(roots):
        seconds[key].append(float(row["s"]))
    return seconds


def job_seconds(rule: str, dataset: str, method: str, measured: dict, basis: Counter) -> float:
    for level, match in (("same rule, dataset, method", lambda k: k == (rule, dataset, method)),
                         ("same rule and method", lambda k: k[0] == rule and k[2] == method),
                         ("same rule", lambda k: k[0] == rule)):
        samples = [s for key, values in measured.items() if match(key) for s in values]
        if samples:
            basis[(rule, level)] += 1
            return mean(samples)
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
DOC_ROWS = {**DOC_SIZES, "adult": 45_222, "celeba": 202_599}
DOC_FEATURES = {"adult": 97, "celeba": 38}
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
    parser.add_argument("--studies", nargs="+", default=PAPER_STUDIES, help="the studies to plan (default: the papers')")
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
        jobs = planned_jobs(workdir, args.studies, settings)
        measured = benchmark_seconds([b for b in args.benchmarks if b.is_dir()])
        per_rule = Counter(rule for rule, _, _ in jobs)
        # a dry run without the SLURM executor prints every job as local: the rules decide (localrule: True)
        local = [rule for rule, _, _ in jobs if rule not in (*GROUPED, *REMOTE_ALONE, "all")]
        points_per_extraction = Counter()
        basis, seconds_by_rule = Counter(), Counter()
        for rule, is_local, wildcards in jobs:
            dataset, method = wildcards.get("dataset", ""), wildcards.get("method", "")
            seconds_by_rule[rule] += job_seconds(rule, dataset, method, measured, basis) if rule != "all" else 0.0
            if rule == "train":
                mu = re.match(r"mu~([^/]+)", wildcards["params"]).group(1)
                seed = 0 if float(mu) == 0 else wildcards["seed"]
                points_per_extraction[(dataset, wildcards["encoder"], mu, seed)] += 1
        group_jobs = sum(math.ceil(n / args.points_per_job) for n in points_per_extraction.values())
        alone = sum(per_rule[r] for r in REMOTE_ALONE)
        data_dirs = [d for d in (args.data, PROJECT_ROOT / "results" / "data") if d]
        texts = sum(dataset_rows(data_dirs, wildcards["dataset"]) or 0 for rule, _, wildcards in jobs
                    if rule == "embed" and wildcards.get("encoder") != "features")
        disk_basis = Counter()
        disk_kept, disk_without = disk_footprint(
            [(w["dataset"], w["method"]) for rule, _, w in jobs if rule == "train"],
            run_folder_bytes([r for r in args.runs if r.is_dir()]), data_dirs, disk_basis)

    points = per_rule["train"]
    remote_cpu = sum(seconds_by_rule[r] for r in (*GROUPED, *REMOTE_ALONE))
    per_point = sum(seconds_by_rule[r] for r in GROUPED) / max(points, 1)
    longest_setup = max((mean(v) for k, v in measured.items() if k[0] == "build_dataset"), default=0.0) + max(
        (mean(v) for k, v in measured.items() if k[0] == "embed"), default=0.0)
    chain = longest_setup + args.points_per_job * per_point

    print(f"studies: {', '.join(args.studies)}; every available dataset; no grid_shrink"
          + (f"; {' '.join(args.set)}" if args.set else ""))
    print(f"grid points                      {points:>10,}")
    print(f"rule jobs                        {sum(per_rule.values()) - per_rule['all']:>10,}  "
          + ", ".join(f"{r} {n:,}" for r, n in per_rule.most_common() if r != "all"))
    print(f"  remote (sent to SLURM)         {sum(per_rule[r] for r in (*GROUPED, *REMOTE_ALONE)):>10,}")
    print(f"  local (submitting host)        {len(local):>10,}")
    print(f"sbatch submissions               {group_jobs + alone:>10,}  ({group_jobs:,} group jobs of <= {args.points_per_job} points"
          f" over {len(points_per_extraction)} extractions + {alone} data/extraction jobs)")
    print(f"CPU-hours (remote jobs)          {hours(remote_cpu):>10}  ({per_point:.1f} s per grid point)")
    print(f"GPU-hours, BERT-base extraction  {hours(texts / args.gpu_texts_per_second):>10}  "
          f"({texts:,} texts at an assumed {args.gpu_texts_per_second:,.0f} texts/s per GPU)")
    print(f"disk, run folders, releases kept {gigabytes(disk_kept):>10}  ({disk_kept / max(points, 1) / 1e6:,.1f} MB per grid point)")
    print(f"  releases removed               {gigabytes(disk_without):>10}  (keep_releases: false; data and features not counted)")
    for nodes in (1, 10, 100):
        wall = max(remote_cpu / (nodes * args.cores_per_node), chain)
        print(f"wall time, {nodes:>3} node(s) x {args.cores_per_node} cores   {hours(wall):>10}")
    print("basis of the per-job seconds (jobs: where the figure came from):")
    for (rule, level), n in sorted(basis.items()):
        if rule != "all":
            print(f"  {rule:<42} {n:>7,}  {level}")
    print("basis of the disk footprint (grid points: where the figure came from):")
    for (part, level), n in sorted(disk_basis.items()):
        print(f"  {part:<42} {n:>7,}  {level}")


if __name__ == "__main__":
    main()
