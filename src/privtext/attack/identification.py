"""Sentence identification: which of N candidate texts did a release come from? (docs/methods.md, "Identification")

In local DP the party that receives the releases is the adversary. It knows the public encoder, the model it
trained itself and the noise law, so it can compute every candidate text's noise-free output and rank the
candidates by the likelihood of the release under each. For an ε-DP release and a uniform prior over N
candidates, no attacker picks the right one more often than e^ε / (e^ε + N − 1) (:func:`identification_ceiling`):
a rate above it, beyond sampling error, proves the release is not ε-DP.

- :func:`candidate_sets`: for each test release, its own text and N − 1 others of the test split (seeded).
- :func:`laplace_scores`: the white-box attacker's log-likelihoods (−L1 distance over the noise scale; with no
  noise, −L1 distance, so an exact match wins).
- :func:`true_ranks`: the true candidate's rank, ties broken at random (a tie resolved toward the true candidate
  would inflate the rate above the ceiling).
"""

from __future__ import annotations

import math
from typing import Mapping, Sequence

import numpy as np
import torch

from privtext.privacy.audit import clopper_pearson_interval


def identification_ceiling(epsilon: float, candidates: int, top: int = 1) -> float:
    """The largest top-``top`` rate an ε-DP release allows among ``candidates`` equally likely texts:
    k·e^ε / (k·e^ε + N − k) (each of the k guesses is at most e^ε times as likely as each text left out)."""
    if candidates < 1 or not 1 <= top <= candidates:
        raise ValueError(f"need 1 <= top <= candidates, got top={top}, candidates={candidates}")
    if top == candidates:
        return 1.0
    if math.isinf(epsilon):
        return 1.0
    # in log space: e^ε overflows past ε ≈ 709 (the published min-max layer's D·ε)
    log_top = math.log(top) + epsilon
    return float(math.exp(log_top - np.logaddexp(log_top, math.log(candidates - top))))


def candidate_sets(n_texts: int, candidates: int, seed: int) -> np.ndarray:
    """[n_texts, candidates] indices into the split: row i holds i first, then ``candidates`` − 1 distinct others
    drawn uniformly (seeded)."""
    if not 1 <= candidates <= n_texts:
        raise ValueError(f"{candidates} candidates need at least as many texts, got {n_texts}")
    rng = np.random.default_rng(np.random.SeedSequence([seed, n_texts, candidates]))
    others = np.empty((n_texts, candidates - 1), dtype=np.int64)
    for i in range(n_texts):
        drawn = rng.choice(n_texts - 1, size=candidates - 1, replace=False)
        others[i] = drawn + (drawn >= i)  # skip i itself
    return np.column_stack([np.arange(n_texts), others])


def laplace_scores(releases: np.ndarray, noise_free: np.ndarray, sets: np.ndarray, scale: float | None) -> np.ndarray:
    """[n, N] log-likelihood (up to a constant) of release i under each of its candidates' noise-free outputs:
    −‖r_i − c‖₁ / scale for i.i.d. Laplace noise, −‖r_i − c‖₁ for a release without noise (``scale`` None)."""
    r = torch.from_numpy(np.ascontiguousarray(releases, dtype=np.float64))
    c = torch.from_numpy(np.ascontiguousarray(noise_free, dtype=np.float64))
    scores = np.empty(sets.shape)
    for start in range(0, len(sets), 512):  # [512, N, D] at a time
        rows = sets[start:start + 512]
        distance = (r[start:start + len(rows), None, :] - c[torch.from_numpy(rows)]).abs().sum(dim=2)
        scores[start:start + len(rows)] = (-distance / (scale or 1.0)).numpy()
    return scores


def true_ranks(scores: np.ndarray, rng: np.random.Generator, truth: int = 0) -> np.ndarray:
    """0-based rank of column ``truth`` among each row's scores, highest first; among equal scores its place is
    uniform (a randomised tie-break, as an attacker without more information would make)."""
    target = scores[:, truth][:, None]
    above = (scores > target).sum(axis=1)
    tied = (scores == target).sum(axis=1) - 1  # the other candidates with the same score
    return above + np.floor(rng.random(len(scores)) * (tied + 1)).astype(np.int64)


def identification_rates(ranks: np.ndarray, candidates: int, *, epsilons: Mapping[str, float],
                         tops: Sequence[int] = (1, 10), confidence: float = 0.95) -> dict[str, float]:
    """Top-k rates with two-sided Clopper–Pearson intervals, chance (k/N) and the ceiling at each named ε."""
    n = len(ranks)
    out: dict[str, float] = {"candidates": candidates, "n": n}
    for top in tops:
        if top > candidates:
            continue
        hits = int((ranks < top).sum())
        low, high = clopper_pearson_interval(hits, n, confidence)
        out.update({f"top{top}": hits / n, f"top{top}_low": float(low), f"top{top}_high": float(high),
                    f"top{top}_chance": top / candidates,
                    **{f"top{top}_ceiling_{name}": identification_ceiling(eps, candidates, top)
                       for name, eps in epsilons.items()}})
    return out
