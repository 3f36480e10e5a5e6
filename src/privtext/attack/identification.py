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
    for start in range(0, len(sets), 64):  # [64, N, D] at a time: 200 MB at N = 1,000, D = 384
        rows = sets[start:start + 64]
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


# --- the features-only attacker ---------------------------------------------------------------------------------

RIDGE_PENALTIES = tuple(10.0 ** k for k in range(-3, 5))


class FeaturesOnlyAttacker:
    """An attacker that knows the public encoder but not the method's model: it learns a linear map from
    releases to encoder features on the training split (ridge regression on standardised releases, closed form),
    keeps the penalty whose mapped dev releases identify their own texts best among ``candidates`` dev texts,
    and ranks candidates by the L2 distance between a release's mapped features and theirs."""

    def __init__(self, candidates: int = 100, penalties: Sequence[float] = RIDGE_PENALTIES, seed: int = 0) -> None:
        self.candidates, self.penalties, self.seed = candidates, tuple(penalties), seed
        self.penalty: float | None = None

    def _standardised(self, releases: np.ndarray) -> np.ndarray:
        return (np.asarray(releases, dtype=np.float64) - self.mean) / self.std

    def fit(self, train_releases: np.ndarray, train_features: np.ndarray, dev_releases: np.ndarray,
            dev_features: np.ndarray) -> "FeaturesOnlyAttacker":
        releases = np.asarray(train_releases, dtype=np.float64)
        self.mean, self.std = releases.mean(axis=0), releases.std(axis=0) + 1e-12
        x = np.column_stack([self._standardised(releases), np.ones(len(releases))])  # the last column: intercept
        u, singular, vt = np.linalg.svd(x, full_matrices=False)
        projected = u.T @ np.asarray(train_features, dtype=np.float64)
        sets = candidate_sets(len(dev_releases), min(self.candidates, len(dev_releases)), self.seed)
        best = -1.0
        for penalty in self.penalties:  # every penalty from one SVD: W = V diag(s / (s² + α)) Uᵀ Y
            weights = vt.T @ ((singular / (singular**2 + penalty))[:, None] * projected)
            self.weights = weights
            rate = float((true_ranks(self.scores(dev_releases, dev_features, sets), np.random.default_rng(self.seed))
                          == 0).mean())
            if rate > best:
                best, chosen = rate, (penalty, weights)
        self.penalty, self.weights = chosen
        self.dev_top1 = best
        return self

    def mapped(self, releases: np.ndarray) -> np.ndarray:
        """The encoder features the attacker reads in ``releases``."""
        x = self._standardised(releases)
        return x @ self.weights[:-1] + self.weights[-1]

    def scores(self, releases: np.ndarray, features: np.ndarray, sets: np.ndarray) -> np.ndarray:
        """[n, N] −‖mapped(r_i) − h_c‖₂ for each release's candidates (rows of ``features``)."""
        return np.take_along_axis(pool_scores(self.mapped(releases), features, p=2), sets, axis=1)


# --- retrieval reconstruction -------------------------------------------------------------------------------------

def reconstruction_scores(hypotheses: Sequence[str], references: Sequence[str]) -> dict[str, float]:
    """How much of each true text a reconstruction gives back: corpus BLEU and chrF (sacrebleu, its defaults) and
    the mean ROUGE-L F-measure (rouge-score, with stemming), each on a 0–100 scale."""
    import sacrebleu
    from rouge_score import rouge_scorer

    if len(hypotheses) != len(references):
        raise ValueError(f"{len(hypotheses)} reconstructions for {len(references)} texts")
    scorer = rouge_scorer.RougeScorer(["rougeL"], use_stemmer=True)
    rouge = [scorer.score(ref, hyp)["rougeL"].fmeasure for hyp, ref in zip(hypotheses, references)]
    return {"bleu": float(sacrebleu.corpus_bleu(list(hypotheses), [list(references)]).score),
            "chrf": float(sacrebleu.corpus_chrf(list(hypotheses), [list(references)]).score),
            "rouge_l": 100.0 * float(np.mean(rouge)) if rouge else math.nan}


def pool_scores(queries: np.ndarray, pool: np.ndarray, *, p: float, scale: float | None = None) -> np.ndarray:
    """[n, P] −‖q_i − pool_j‖_p (over ``scale`` when given) against a whole pool, in chunks of queries: the
    white-box attacker's Laplace log-likelihood (p = 1) or the features-only attacker's distance (p = 2)."""
    q = torch.from_numpy(np.ascontiguousarray(queries, dtype=np.float64))
    c = torch.from_numpy(np.ascontiguousarray(pool, dtype=np.float64))
    return np.vstack([(-torch.cdist(q[start:start + 256], c, p=p) / (scale or 1.0)).numpy()
                      for start in range(0, len(q), 256)])


def nearest(scores: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Per row, the column with the highest score, ties broken at random: the retrieved text."""
    best = scores.max(axis=1, keepdims=True)
    tied = scores == best
    return np.array([rng.choice(np.flatnonzero(row)) for row in tied])


# --- one grid point's record ------------------------------------------------------------------------------------

CANDIDATE_COUNTS = (10, 100, 1000)


def identification_record(released: Mapping[str, np.ndarray], noise_free: Mapping[str, np.ndarray],
                          features: Mapping[str, np.ndarray], texts: Mapping[str, Sequence[str]], *,
                          scale: float | None, epsilons: Mapping[str, float], frequent_words: Sequence[str],
                          seed: int, counts: Sequence[int] = CANDIDATE_COUNTS) -> dict:
    """Identification and retrieval reconstruction of one grid point's test releases.

    ``released``: the run's releases (train, dev, test); ``noise_free``: the method's noise-free outputs of the
    clean train and test texts (what the receiving party computes for its candidates and its public pool);
    ``features``: the public encoder's features of the clean train, dev and test texts; ``texts``: train (the
    pool) and test; ``scale``: the Laplace scale (None: no noise); ``frequent_words``: the words the
    frequency baseline of word recovery guesses for every text, whose join is the reconstruction baseline."""
    rng = np.random.default_rng(np.random.SeedSequence([seed, 42]))
    n = len(released["test"])
    white = pool_scores(released["test"], noise_free["test"], p=1, scale=scale)  # [n, n]: each release, each text
    attacker = FeaturesOnlyAttacker(candidates=min(100, len(released["dev"])), seed=seed).fit(
        released["train"], features["train"], released["dev"], features["dev"])
    mapped = attacker.mapped(released["test"])
    blind = pool_scores(mapped, features["test"], p=2)
    record: dict = {"candidates": [k for k in counts if k <= n], "n_test": n, "n_pool": len(texts["train"]),
                    "features_only_penalty": attacker.penalty, "white_box": {}, "features_only": {}}
    for count in record["candidates"]:
        sets = candidate_sets(n, count, seed)
        for name, scores in (("white_box", white), ("features_only", blind)):
            ranks = true_ranks(np.take_along_axis(scores, sets, axis=1), rng)
            record[name][f"N{count}"] = identification_rates(ranks, count, epsilons=epsilons)
    pool = list(texts["train"])
    retrieved = {
        "white_box": nearest(pool_scores(released["test"], noise_free["train"], p=1, scale=scale), rng),
        "features_only": nearest(pool_scores(mapped, features["train"], p=2), rng),
    }
    truth = list(texts["test"])
    record["reconstruction"] = {name: reconstruction_scores([pool[i] for i in picks], truth)
                                for name, picks in retrieved.items()}
    record["reconstruction"]["frequent_words"] = reconstruction_scores([" ".join(frequent_words)] * n, truth)
    return record
