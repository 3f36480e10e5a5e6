"""What word recovery costs per grid point, beside what the point costs already.

    .venv/bin/python benchmarks/word_recovery.py --results results --study quick [--attackers ridge mlp] [--repeat 3]

For every grid point of the study's runs table on a text dataset, times
``privtext.attack.inversion.recover_words`` on the point's own releases and its dataset's word sets (as the
attack job runs it: the point's seed, ``attack.max_train`` = 10,000, one thread), ``--repeat`` times, and
prints per dataset and attacker the median seconds per point, beside the median of the point's train job
(training and the attribute attackers, from its ``metrics.json`` and ``attack.json``), and the attacker's
median inversion advantage over the points (to compare the attackers' strength on the same releases). A row
``frozen`` does the same on the dataset's frozen encoder features (the ladder's "no defence" rung). The word sets must be
there (a ``make run`` of this version writes them).
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

from privtext.attack.inversion import WORDS_FILE, read_word_sets, recover_words  # noqa: E402
from privtext.data import SPLITS  # noqa: E402
from privtext.plan.grid import FROZEN_FEATURES_DIR  # noqa: E402
from privtext.runtime.threads import limited_threads  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--results", type=Path, default=Path("results"))
    parser.add_argument("--study", default="quick")
    parser.add_argument("--attackers", nargs="+", default=["ridge"])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--max-train", type=int, default=10000)
    parser.add_argument("--seed", type=int, default=10, help="the frozen rung's seed (the config's seed)")
    args = parser.parse_args()

    runs = pd.read_csv(args.results / "tables/studies" / args.study / "runs.csv")
    points = runs.drop_duplicates("run_dir")
    points = points[points["inversion_status"] == "measured"]
    print(f"{len(points)} grid points of study {args.study!r} with word recovery, {args.repeat} timings each")
    print(f"{'dataset':10} {'attacker':8} {'points':>6} {'median s/point':>15} {'max':>7} {'train job s':>12} "
          f"{'median advantage':>17}")
    for dataset, group in points.groupby("dataset"):
        words = read_word_sets(args.results / "data" / dataset / WORDS_FILE)
        frozen_dir = args.results / FROZEN_FEATURES_DIR.format(
            dataset=dataset, encoder=group["encoder"].iloc[0]).removeprefix("results/")
        frozen = {s: np.load(frozen_dir / f"{s}.npy", allow_pickle=False) for s in SPLITS}
        for attacker in args.attackers:
            started = time.perf_counter()
            with limited_threads(1):
                result = recover_words(frozen, words, attacker=attacker, seed=args.seed, max_train=args.max_train)
            print(f"{dataset:10} {attacker:8} {'frozen':>6} {time.perf_counter() - started:15.2f} {'':7} {'':12} "
                  f"{result['advantage']:17.3f}")
        job_seconds = []
        for run_dir in group["run_dir"]:
            attack = json.loads((Path(run_dir) / "attack.json").read_text())
            job_seconds.append(json.loads((Path(run_dir) / "metrics.json").read_text())["seconds"] + attack["seconds"])
        for attacker in args.attackers:
            per_point, advantage = [], []
            for run_dir, seed in zip(group["run_dir"], group["seed"]):
                released = {s: np.load(Path(run_dir) / f"released_{s}.npy", allow_pickle=False) for s in SPLITS}
                times = []
                for _ in range(args.repeat):
                    started = time.perf_counter()
                    with limited_threads(1):
                        result = recover_words(released, words, attacker=attacker, seed=int(seed),
                                               max_train=args.max_train)
                    times.append(time.perf_counter() - started)
                per_point.append(statistics.median(times))
                advantage.append(result["advantage"])
            print(f"{dataset:10} {attacker:8} {len(per_point):6d} {statistics.median(per_point):15.2f} "
                  f"{max(per_point):7.2f} {statistics.median(job_seconds):12.1f} {statistics.median(advantage):17.3f}")


if __name__ == "__main__":
    main()
