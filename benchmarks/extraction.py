"""Throughput of frozen-encoder extraction, with and without length sorting.

    .venv/bin/python benchmarks/extraction.py --n 2000 --threads 2

Texts: the DPNR authors' AG file from the offline mirror when present (or ``--texts PATH``: that format, or
one text per line), else synthetic sentences of realistic, varied length. Prints examples/s and tokens/s.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

import numpy as np

from privtext.encoding.encoders import DEFAULT_ENCODER, extract_embeddings, load_encoder

PROJECT_ROOT = Path(__file__).resolve().parents[1]
MIRROR = Path(os.environ.get("PRIVTEXT_DATA_MIRROR", PROJECT_ROOT.parent / "shared" / "data"))
AG_DPNLP = MIRROR / "ag" / "dpnlp_ag_data.txt"


def read_texts(path: Path, n: int) -> list[str]:
    """First ``n`` texts of a ``label \\t text \\t entities`` file (section lines of ``=`` skipped)."""
    texts = []
    with open(path, encoding="utf-8", errors="replace") as handle:
        for line in handle:
            line = line.rstrip("\n")
            if not line.strip() or set(line.strip()) == {"="}:
                continue
            fields = line.split("\t")
            texts.append(fields[1] if len(fields) >= 2 else fields[0])
            if len(texts) == n:
                break
    return texts


def synthetic_texts(n: int, seed: int = 0) -> list[str]:
    """Sentences of lognormal word counts (median ~30, long tail), like news snippets and reviews."""
    rng = np.random.default_rng(seed)
    vocabulary = ["".join(rng.choice(list("abcdefghijklmnopqrstuvwxyz"), size=rng.integers(2, 10)))
                  for _ in range(5000)]
    lengths = np.clip(rng.lognormal(mean=np.log(30), sigma=0.7, size=n).astype(int), 3, 300)
    return [" ".join(rng.choice(vocabulary, size=length)) + "." for length in lengths]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=2000, help="number of texts")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--encoder", default=DEFAULT_ENCODER)
    parser.add_argument("--pooling", default="mean", choices=["cls", "mean", "pooler"])
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--max-length", type=int, default=128)
    parser.add_argument("--texts", type=Path, default=AG_DPNLP, help="text file; synthetic texts if absent")
    parser.add_argument("--json", action="store_true", help="print the full stats as JSON lines too")
    args = parser.parse_args()

    if args.texts.is_file():
        texts, source = read_texts(args.texts, args.n), str(args.texts)
    else:
        texts, source = synthetic_texts(args.n), "synthetic"
    encoder = load_encoder(args.encoder, device="auto")
    # Warm-up: the first forward passes allocate and pick kernels; keep them out of the timings.
    extract_embeddings(texts[:64], encoder, args.pooling, args.max_length, args.batch_size, args.threads,
                       progress=False)

    print(f"encoder={encoder.spec.name} device={encoder.device} threads={args.threads} batch={args.batch_size} "
          f"max_length={args.max_length} texts={len(texts)} ({source})")
    print(f"{'sort_by_length':>14} {'examples/s':>11} {'tokens/s':>10} {'seconds':>8} {'padding':>8}")
    results = {}
    for sort in (True, False):
        embeddings, stats = extract_embeddings(texts, encoder, args.pooling, args.max_length, args.batch_size,
                                               args.threads, sort_by_length=sort, progress=False)
        results[sort] = embeddings
        print(f"{str(sort):>14} {stats['examples_per_second']:>11.1f} {stats['tokens_per_second']:>10.0f} "
              f"{stats['seconds']:>8.2f} {stats['padding_fraction']:>8.1%}")
        if args.json:
            print(json.dumps(stats))
    print(f"max |sorted - unsorted| = {np.abs(results[True] - results[False]).max():.2e}", file=sys.stderr)


if __name__ == "__main__":
    main()
