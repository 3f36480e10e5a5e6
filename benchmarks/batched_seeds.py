"""Prototype for issue 29: S seeds of one small MLP trained one after the other against all at once, stacked.

    .venv/bin/python benchmarks/batched_seeds.py [--seeds 5] [--steps 2250] [--rows 10000] [--dim 97] [--batch 200]
        [--widths 100 50 50 25] [--threads 1] [--repeat 3]

The model has the shape of FEDERATE's on Adult (input → 100 → 50 → 50 → 25 → 2, ReLU, Adam at 1e-3, batch 200,
the training rule's 2,250 steps): the work of one frozen-feature grid point without its adversary or
attackers; ``--widths`` gives other hidden layers (CAPE's on AG: ``--dim 384 --widths 256 256 256 --batch 64``).
``loop`` trains S models one after the other (torch.nn.Linear, torch.optim.Adam); ``stacked`` holds the S models'
weights along a leading axis ([S, in, out]) and runs one ``torch.baddbmm`` per layer and one Adam step for all of
them, each seed with its own initialisation and its own minibatch order. Adam is element-wise, so a seed's update
does not depend on the others; the two paths differ only in the summation order of the matrix products. Prints
seconds per seed for each path (median of --repeat, alternated), their ratio, and the largest difference of the
final weights between the paths (float32 rounding, not a different computation).
Measures the arithmetic and Python overhead only: no process start-up, data loading or attackers.
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch

WIDTHS = (100, 50, 50, 25)


def initial_weights(seed: int, dim: int, classes: int,
                    widths: tuple[int, ...] = WIDTHS) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """One seed's layers as (weight [in, out], bias [out]), torch.nn.Linear's initialisation."""
    generator = torch.Generator().manual_seed(seed)
    layers, fan_in = [], dim
    for width in (*widths, classes):
        bound = 1 / fan_in ** 0.5
        weight = (torch.rand(fan_in, width, generator=generator) * 2 - 1) * bound
        bias = (torch.rand(width, generator=generator) * 2 - 1) * bound
        layers.append((weight, bias))
        fan_in = width
    return layers


def batch_orders(seed: int, rows: int, steps: int, batch: int) -> torch.Tensor:
    """[steps, batch] row indices: a fresh permutation per epoch, from the seed's own generator."""
    generator = torch.Generator().manual_seed(10_000 + seed)
    per_epoch = rows // batch
    epochs = -(-steps // per_epoch)
    order = torch.cat([torch.randperm(rows, generator=generator)[:per_epoch * batch] for _ in range(epochs)])
    return order.view(-1, batch)[:steps]


def train_loop(X, y, seeds, steps, batch, widths=WIDTHS):
    finals = []
    for seed in seeds:
        params = [p.clone().requires_grad_() for layer in initial_weights(seed, X.shape[1], 2, widths) for p in layer]
        optimiser = torch.optim.Adam(params, lr=1e-3)
        for index in batch_orders(seed, len(y), steps, batch):
            h = X[index]
            for i in range(0, len(params), 2):
                h = torch.addmm(params[i + 1], h, params[i])
                if i + 2 < len(params):
                    h = torch.relu(h)
            loss = torch.nn.functional.cross_entropy(h, y[index])
            optimiser.zero_grad(set_to_none=True)
            loss.backward()
            optimiser.step()
        finals.append([p.detach() for p in params])
    return finals


def train_stacked(X, y, seeds, steps, batch, widths=WIDTHS):
    layers = [initial_weights(seed, X.shape[1], 2, widths) for seed in seeds]
    params = [torch.stack([layers[s][j][k] for s in range(len(seeds))]).requires_grad_()
              for j in range(len(layers[0])) for k in (0, 1)]
    optimiser = torch.optim.Adam(params, lr=1e-3)
    orders = torch.stack([batch_orders(seed, len(y), steps, batch) for seed in seeds], dim=1)  # [steps, S, batch]
    for index in orders:
        h = X[index]  # [S, batch, dim]
        for i in range(0, len(params), 2):
            h = torch.baddbmm(params[i + 1].unsqueeze(1), h, params[i])
            if i + 2 < len(params):
                h = torch.relu(h)
        # The mean over each seed's batch, summed over seeds: each seed's gradient is its own loss's.
        loss = torch.nn.functional.cross_entropy(h.flatten(0, 1), y[index].flatten(), reduction="none")
        loss = loss.view(len(seeds), -1).mean(dim=1).sum()
        optimiser.zero_grad(set_to_none=True)
        loss.backward()
        optimiser.step()
    return [[p.detach()[s] for p in params] for s in range(len(seeds))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--steps", type=int, default=2250)
    parser.add_argument("--rows", type=int, default=10_000)
    parser.add_argument("--dim", type=int, default=97)
    parser.add_argument("--batch", type=int, default=200)
    parser.add_argument("--widths", type=int, nargs="+", default=list(WIDTHS), help="hidden layer widths")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    generator = torch.Generator().manual_seed(0)
    X = torch.randn(args.rows, args.dim, generator=generator)
    y = (X[:, 0] + 0.5 * torch.randn(args.rows, generator=generator) > 0).long()
    seeds = list(range(10, 10 + 10 * args.seeds, 10))
    for train in (train_loop, train_stacked):  # warm-up: first calls pay torch's lazy initialisation
        train(X, y, seeds, 5, args.batch, tuple(args.widths))
    times = {"loop": [], "stacked": []}
    results = {}
    for _ in range(args.repeat):
        for name, train in (("loop", train_loop), ("stacked", train_stacked)):
            start = time.perf_counter()
            results[name] = train(X, y, seeds, args.steps, args.batch, tuple(args.widths))
            times[name].append((time.perf_counter() - start) / len(seeds))
    loop, stacked = statistics.median(times["loop"]), statistics.median(times["stacked"])
    difference = max((a - b).abs().max().item() for s in range(len(seeds))
                     for a, b in zip(results["loop"][s], results["stacked"][s]))
    print(f"seeds {len(seeds)}, steps {args.steps}, batch {args.batch}, rows {args.rows}, dim {args.dim}, "
          f"widths {args.widths}, threads {args.threads}, torch {torch.__version__}")
    print(f"loop     {loop:.3f} s per seed  ({', '.join(f'{t:.3f}' for t in times['loop'])})")
    print(f"stacked  {stacked:.3f} s per seed  ({', '.join(f'{t:.3f}' for t in times['stacked'])})")
    print(f"speed-up {loop / stacked:.2f}x; largest weight difference between the paths {difference:.2e}")


if __name__ == "__main__":
    main()
