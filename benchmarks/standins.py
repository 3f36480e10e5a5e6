"""Each hand-written stand-in of ``privtext.standins`` against the library it replaces (issue 29: return to the
library wherever the stand-in no longer pays).

    .venv/bin/python benchmarks/standins.py [--repeat 3] [--threads 1] [--skip-imports]

Two costs decide it. **The import**: the library's modules imported in a fresh interpreter that has already
imported numpy and torch, as a job has (median of ``--repeat`` processes); a job forked from the warm
interpreter (``privtext.runtime.warm``) pays it once per run if the server preloads the module, a cold job
(SLURM, the fairness jobs, ``--no-warm``) every time. **The work**: the same call on both, on the shapes the
pipeline gives them, alternated (library, stand-in, library, ...), medians:

- ``estimators``: ``MLPClassifier(alpha=1, max_iter=1000)`` against ``AdamMLPClassifier`` (``sklearn_mlp``, FEDERATE's
  Leakage: Adult's dev rows × FEDERATE's 50-wide release, float32 as the attackers pass it, and float64). The
  port of ``LogisticRegression`` was measured here too, and removed: scikit-learn's was faster per fit
  (docs/performance.md, "The stand-ins against their libraries"; this script at 76695fe);
- ``optim``: one optimiser step of FEDERATE's model with its adversary (the training loop's flattened setting)
  for ``torch.optim.Adam`` (its default, ``foreach=True`` and ``fused=True``) and ``privtext.standins.optim.Adam(flatten=True)``;
- ``parquet``: three label columns of a 30,000-row split file, ``pandas.read_parquet`` against ``read_columns``.

Each line also says whether the two gave the same numbers. Prints one table; nothing is written.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path
from typing import Callable

import numpy as np
import torch

from privtext.runtime.threads import limited_threads

IMPORTS = {
    "estimators": "import sklearn.neural_network",
    "optim": "p = torch.zeros(2, requires_grad=True); p.grad = torch.ones(2); torch.optim.Adam([p]).step()",
    "parquet": "import pandas",
}


def import_seconds(statement: str, repeat: int) -> float:
    """Median seconds of ``statement`` in fresh interpreters that have imported numpy and torch."""
    code = ("import time, numpy, torch\nstarted = time.perf_counter()\n" + statement +
            "\nprint(time.perf_counter() - started)")
    return statistics.median(float(subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                                                  text=True).stdout) for _ in range(repeat))


def alternate(library: Callable[[], object], standin: Callable[[], object], repeat: int) -> tuple[float, float, list]:
    """Median seconds of each, run in turns; and both last results."""
    times: dict[str, list[float]] = {"library": [], "standin": []}
    results: list = [None, None]
    for _ in range(repeat):
        for index, (name, call) in enumerate((("library", library), ("standin", standin))):
            started = time.perf_counter()
            results[index] = call()
            times[name].append(time.perf_counter() - started)
    return statistics.median(times["library"]), statistics.median(times["standin"]), results


def labelled(rng: np.random.Generator, rows: int, dim: int, noise: float) -> tuple[np.ndarray, np.ndarray]:
    """Float32 features and two-class labels that a linear model predicts imperfectly."""
    X = rng.normal(size=(rows, dim)).astype(np.float32)
    y = (X @ rng.normal(size=dim) + noise * rng.normal(size=rows) > 0).astype(np.int64)
    return X, y


def estimators_rows(args: argparse.Namespace) -> list[tuple[str, float, float, str]]:
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.neural_network import MLPClassifier

    from privtext.standins.estimators import AdamMLPClassifier, Standardiser

    rng, rows = np.random.default_rng(0), []
    X, y = labelled(rng, args.mlp_rows, args.mlp_dim, noise=3.0)
    X = Standardiser().fit(X).transform(X)
    for dtype in (np.float32, np.float64):
        Xd = X.astype(dtype)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            library, standin, (theirs, ours) = alternate(
                lambda: MLPClassifier(hidden_layer_sizes=(100,), alpha=1.0, max_iter=1000, random_state=10).fit(Xd, y),
                lambda: AdamMLPClassifier(hidden_layer_sizes=(100,), alpha=1.0, max_iter=1000,
                                          random_state=10).fit(Xd, y), args.repeat)
        agree = float(np.mean(theirs.predict(Xd) == ours.predict(Xd)))
        same = f"epochs {theirs.n_iter_} / {ours.n_iter_}, predictions agree {agree:.4f}"
        rows.append((f"MLPClassifier, {np.dtype(dtype).name}, {args.mlp_rows} x {args.mlp_dim}", library, standin, same))
    return rows


def federate_model() -> torch.nn.Module:
    """FEDERATE's encoder, classifier and one adversary on Adult (97 inputs; spec FEDERATE_FAMILY)."""
    from privtext.training.nn import mlp

    return torch.nn.ModuleList([mlp([97, 100, 50, 50], 0.0), mlp([50, 50, 25, 2], 0.0), mlp([50, 50, 2], 0.0)])


def optim_rows(args: argparse.Namespace) -> list[tuple[str, float, float, str]]:
    from privtext.standins.optim import Adam

    steps, rows = args.steps, []

    def run(make: Callable[[list[torch.nn.Parameter]], object]) -> tuple[float, list[torch.Tensor]]:
        """Seconds per ``zero_grad`` + ``step`` (the backward pass that fills the gradients is not timed)."""
        torch.manual_seed(0)
        model = federate_model()
        parameters = list(model.parameters())
        optimizer = make(parameters)
        grads = [torch.randn_like(p) for p in parameters]
        seconds = 0.0
        for _ in range(steps):
            started = time.perf_counter()
            optimizer.zero_grad(set_to_none=True)
            seconds += time.perf_counter() - started
            # a backward pass, as training's: the flattened stand-in learns from autograd's hooks who got a gradient
            sum((p * g).sum() for p, g in zip(parameters, grads)).backward()
            started = time.perf_counter()
            optimizer.step()
            seconds += time.perf_counter() - started
        return seconds / steps, [p.detach().clone() for p in parameters]

    run(lambda ps: torch.optim.Adam(ps, lr=1e-3))  # its first step imports torch._dynamo: not timed here
    variants = (("torch.optim.Adam (default)", {}), ("torch.optim.Adam(foreach=True)", {"foreach": True}),
                ("torch.optim.Adam(fused=True)", {"fused": True}))
    for name, options in variants:
        theirs_seconds, ours_seconds = [], []  # each row's own alternated runs
        for _ in range(args.repeat):
            seconds, theirs = run(lambda ps: torch.optim.Adam(ps, lr=1e-3, **options))
            theirs_seconds.append(seconds)
            seconds, ours = run(lambda ps: Adam(ps, lr=1e-3, flatten=True))
            ours_seconds.append(seconds)
        equal = all(torch.equal(a, b) for a, b in zip(theirs, ours))
        largest = max(float((a - b).abs().max()) for a, b in zip(theirs, ours))
        rows.append((f"{name}, one step of FEDERATE's model", statistics.median(theirs_seconds),
                     statistics.median(ours_seconds), "same bits" if equal else f"differ by up to {largest:.1e}"))
    return rows


def parquet_rows(args: argparse.Namespace) -> list[tuple[str, float, float, str]]:
    import pandas

    from privtext.standins.parquet import read_columns, write_columns

    rng = np.random.default_rng(0)
    columns = {"label": rng.integers(0, 2, 30_000), "gender": rng.integers(0, 2, 30_000),
               "race": rng.integers(0, 5, 30_000), "text": np.array([f"text {i}" for i in range(30_000)], dtype=object)}
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "train.parquet"
        write_columns(path, columns)
        names = ["label", "gender", "race"]
        library, standin, (theirs, ours) = alternate(
            lambda: pandas.read_parquet(path, columns=names), lambda: read_columns(path, names), args.repeat * 10)
    same = all(np.array_equal(theirs[name].to_numpy(), ours[name]) for name in names)
    return [("read_parquet, 3 label columns of 30,000 rows", library, standin, "same values" if same else "DIFFERENT")]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--steps", type=int, default=2000, help="optimiser steps per timing")
    parser.add_argument("--mlp-rows", type=int, default=3_000)
    parser.add_argument("--mlp-dim", type=int, default=50)
    parser.add_argument("--skip-imports", action="store_true", help="time the calls only")
    args = parser.parse_args()
    print(f"torch {torch.__version__}, numpy {np.__version__}, {args.threads} thread(s), repeat {args.repeat}")
    if not args.skip_imports:
        print("\nimport in a fresh interpreter after numpy and torch (median s):")
        for name, statement in IMPORTS.items():
            print(f"  {name:<11} {import_seconds(statement, args.repeat):6.2f}  {statement}")
    print(f"\n{'call':<64} {'library s':>10} {'stand-in s':>11} {'ratio':>6}  numbers")
    with limited_threads(args.threads):  # torch's pool and the BLAS pools, as the jobs run
        rows = [*estimators_rows(args), *optim_rows(args), *parquet_rows(args)]
    for what, library, standin, same in rows:
        print(f"{what:<64} {library:10.4g} {standin:11.4g} {library / standin:6.2f}  {same}")


if __name__ == "__main__":
    main()
