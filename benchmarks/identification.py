"""What sentence identification costs: its L1 kernel against torch.cdist, and its seconds per grid point.

    .venv/bin/python benchmarks/identification.py [--repeat 5] [--results results --study quick]

First, the white-box attacker's L1 distances (``privtext.attack.identification.l1_distances``) against
``torch.cdist(p=1)`` on random float64 releases of MiniLM's width (384), at the two shapes a DPNR-AG grid point
computes (1,457 test releases against their 1,457 candidates; 200 reconstructed releases against the
10,000-text pool), one thread, alternating the two, ``--repeat`` times each: the median seconds, their ratio,
and the largest difference between the two results. Then, with ``--results``, the identification of every
text grid point of the study's runs table as the attack job runs it (``identify_point``, the config's
``attack.identification``, one thread): the median and total seconds per dataset.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")  # as a one-thread attack job

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import torch  # noqa: E402
import yaml  # noqa: E402

from privtext.attack.identification import l1_distances  # noqa: E402
from privtext.attack.inversion import WORDS_FILE  # noqa: E402
from privtext.data import SPLITS  # noqa: E402
from privtext.jobs.runs import encoder_window, identify_point  # noqa: E402
from privtext.plan.grid import FROZEN_FEATURES_DIR  # noqa: E402
from privtext.runtime.threads import limited_threads  # noqa: E402

SHAPES = {"candidates 1457 x 1457": (1457, 1457), "pool 200 x 10000": (200, 10000)}


def kernels(repeat: int, width: int = 384) -> None:
    rng = np.random.default_rng(0)
    print(f"{'shape':24} {'l1_distances s':>15} {'torch.cdist s':>14} {'ratio':>6} {'max |difference|':>17}")
    for name, (n, pool) in SHAPES.items():
        queries, candidates = rng.laplace(size=(n, width)), rng.laplace(size=(pool, width))
        ours, theirs = [], []
        with limited_threads(1):
            for _ in range(repeat):  # alternating, so a drift in the machine's speed reaches both
                started = time.perf_counter()
                mine = l1_distances(queries, candidates)
                ours.append(time.perf_counter() - started)
                started = time.perf_counter()
                reference = torch.cdist(torch.from_numpy(queries), torch.from_numpy(candidates), p=1).numpy()
                theirs.append(time.perf_counter() - started)
        a, b = statistics.median(ours), statistics.median(theirs)
        print(f"{name:24} {a:15.3f} {b:14.3f} {b / a:6.2f} {float(np.abs(mine - reference).max()):17.2e}")


def grid_points(results: Path, study: str) -> None:
    settings = yaml.safe_load(Path("config.yaml").read_text())["attack"]["identification"]
    runs = pd.read_csv(results / "tables/studies" / study / "runs.csv")
    points = runs.drop_duplicates("run_dir")
    points = points[points["identification_status"] == "measured"]
    print(f"\n{len(points)} grid points of study {study!r} with identification ({settings})")
    print(f"{'dataset':10} {'points':>6} {'median s/point':>15} {'total s':>8}")
    for dataset, group in points.groupby("dataset"):
        data_dir = results / "data" / dataset
        frozen = results / FROZEN_FEATURES_DIR.format(dataset=dataset, encoder=group["encoder"].iloc[0]).removeprefix(
            "results/")
        clean = {s: np.load(frozen / f"{s}.npy", allow_pickle=False) for s in SPLITS}
        seconds = []
        for row in group.itertuples():
            run_dir = results.parent / row.run_dir  # run_dir starts with results/
            released = {s: np.load(run_dir / f"released_{s}.npy", allow_pickle=False) for s in SPLITS}
            metrics = json.loads((run_dir / "metrics.json").read_text())
            started = time.perf_counter()
            with limited_threads(1):
                identify_point(data_dir, run_dir, released, clean, data_dir / WORDS_FILE, data_dir / "words.json",
                               settings, seed=int(row.seed), metrics=metrics,
                               max_words=encoder_window(frozen / "train.npy"))
            seconds.append(time.perf_counter() - started)
        print(f"{dataset:10} {len(seconds):6d} {statistics.median(seconds):15.2f} {sum(seconds):8.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--results", type=Path, help="also time every grid point of this results folder")
    parser.add_argument("--study", default="quick")
    args = parser.parse_args()
    kernels(args.repeat)
    if args.results is not None:
        grid_points(args.results, args.study)


if __name__ == "__main__":
    main()
