"""Seconds per grid point (train + attack) for every method on a 20,000 × 384 input.

    .venv/bin/python benchmarks/grid_point.py --n-train 20000 --dim 384 --threads 1

The input is synthetic frozen features of the default encoder's width with a 4-class label and two binary
private attributes planted in a few directions, so the numbers measure compute, not a dataset. Each method runs
with its paper defaults (ε = 1, λ = 1 where it has them) exactly as the `train` and `attack` rules call the
library: fit on train with dev selection, release train/dev/test, then the configured fresh attackers.
Prints one row per method and the mean; the rule-level Python start-up (~4 s per job) is not included here,
see benchmarks/orchestration.py for that.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from privtext.attack.attackers import run_attacks
from privtext.methods import METHODS, Split, build_method

ATTRIBUTES = {"strong": 2, "weak": 2}


def synthetic_splits(n_train: int, n_eval: int, dim: int, seed: int) -> dict[str, Split]:
    rng = np.random.default_rng(seed)
    directions = rng.normal(size=(3, dim)) / np.sqrt(dim)
    splits = {}
    for name, n in (("train", n_train), ("dev", n_eval), ("test", n_eval)):
        y = rng.integers(4, size=n)
        z = {a: rng.integers(k, size=n) for a, k in ATTRIBUTES.items()}
        X = rng.normal(size=(n, dim)) + np.outer(y - 1.5, directions[0]) * 4
        X += np.outer(z["strong"] - 0.5, directions[1]) * 6 + np.outer(z["weak"] - 0.5, directions[2]) * 2
        splits[name] = Split(X=X.astype(np.float32), y=y, Z=z)
    return splits


def time_point(method: str, splits: dict[str, Split], attackers: list[str], threads: int, seed: int) -> tuple[float, float]:
    started = time.perf_counter()
    model = build_method(method, {}, input_dim=splits["train"].X.shape[1], n_classes=4,
                         attribute_sizes=ATTRIBUTES, seed=seed, threads=threads)
    model.fit(splits["train"], splits["dev"])
    released = {name: model.release(split.X) for name, split in splits.items()}
    trained = time.perf_counter()
    run_attacks(released, {name: split.Z for name, split in splits.items()},
                {a: "demographic" for a in ATTRIBUTES}, attackers, seed=seed, threads=threads)
    return trained - started, time.perf_counter() - trained


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n-train", type=int, default=20000)
    parser.add_argument("--n-eval", type=int, default=2500, help="dev and test size each")
    parser.add_argument("--dim", type=int, default=384)
    parser.add_argument("--threads", type=int, default=1, help="as the train and attack rules (threads: 1)")
    parser.add_argument("--methods", nargs="*", default=list(METHODS))
    parser.add_argument("--attackers", nargs="*", default=["mlp", "sklearn_mlp", "linear"])
    parser.add_argument("--seed", type=int, default=10)
    args = parser.parse_args()

    splits = synthetic_splits(args.n_train, args.n_eval, args.dim, args.seed)
    print(f"train {args.n_train} x {args.dim}, dev/test {args.n_eval} each, threads {args.threads}, "
          f"attackers {', '.join(args.attackers)}")
    print(f"{'method':<10} {'train s':>8} {'attack s':>9} {'total s':>8}")
    totals = []
    for method in args.methods:
        train_s, attack_s = time_point(method, splits, args.attackers, args.threads, args.seed)
        totals.append(train_s + attack_s)
        print(f"{method:<10} {train_s:8.1f} {attack_s:9.1f} {train_s + attack_s:8.1f}", flush=True)
    print(f"{'mean':<10} {'':>8} {'':>9} {np.mean(totals):8.1f}")


if __name__ == "__main__":
    main()
