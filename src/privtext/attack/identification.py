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

import functools
import math
from typing import Callable, Mapping, Protocol, Sequence

import numpy as np
import torch

from privtext.data.sampling import seeded_rows
from privtext.privacy.audit import clopper_pearson_interval
from privtext.privacy.ceiling import above_ceiling_p_value


def identification_ceiling(epsilon: float, candidates: int, top: int = 1) -> float:
    """The largest top-``top`` rate an ε-DP release allows among ``candidates`` equally likely texts:
    k·e^ε / (k·e^ε + N − k) (each of the k guesses is at most e^ε times as likely as each text left out)."""
    if candidates < 1 or not 1 <= top <= candidates:
        raise ValueError(f"need 1 <= top <= candidates, got top={top}, candidates={candidates}")
    if top == candidates or math.isinf(epsilon):
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
    """[n, N] log-likelihood (up to a constant) of release i under each of its candidates' noise-free outputs (rows
    of ``noise_free``): −‖r_i − c‖₁ / scale for i.i.d. Laplace noise, −‖r_i − c‖₁ without noise (``scale`` None)."""
    return np.take_along_axis(pool_scores(releases, noise_free, p=1, scale=scale), sets, axis=1)


def true_ranks(scores: np.ndarray, rng: np.random.Generator, truth: int = 0) -> np.ndarray:
    """0-based rank of column ``truth`` among each row's scores, highest first; among equal scores its place is
    uniform (a randomised tie-break, as an attacker without more information would make)."""
    target = scores[:, truth][:, None]
    above = (scores > target).sum(axis=1)
    tied = (scores == target).sum(axis=1) - 1  # the other candidates with the same score
    return above + np.floor(rng.random(len(scores)) * (tied + 1)).astype(np.int64)


def identification_rates(ranks: np.ndarray, candidates: int, *, epsilons: Mapping[str, float],
                         tops: Sequence[int] = (1, 10), confidence: float = 0.95) -> dict[str, float]:
    """Top-k rates with two-sided Clopper–Pearson intervals, chance (k/N), and the ceiling at each named ε with the
    one-sided p-value of "the rate exceeds it" (the attribute ceiling's binomial test; the runs table corrects
    these with Holm)."""
    n = len(ranks)
    out: dict[str, float] = {"candidates": candidates, "n": n}
    for top in tops:
        if top > candidates:
            continue
        hits = int((ranks < top).sum())
        low, high = clopper_pearson_interval(hits, n, confidence)
        out.update({f"top{top}": hits / n, f"top{top}_low": float(low), f"top{top}_high": float(high),
                    f"top{top}_chance": top / candidates})
        for name, eps in epsilons.items():
            ceiling = identification_ceiling(eps, candidates, top)
            out[f"top{top}_ceiling_{name}"] = ceiling
            out[f"top{top}_p_above_ceiling_{name}"] = above_ceiling_p_value(hits, n, ceiling)
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
        # every penalty from one eigendecomposition of XᵀX = V diag(λ) Vᵀ: W = V diag(1 / (λ + α)) Vᵀ XᵀY (the
        # normal equations; a [d, d] problem, where an SVD of X costs in its rows)
        eigenvalues, vectors = np.linalg.eigh(x.T @ x)
        projected = vectors.T @ (x.T @ np.asarray(train_features, dtype=np.float64))
        sets = candidate_sets(len(dev_releases), min(self.candidates, len(dev_releases)), self.seed)
        dev_x = self._standardised(dev_releases)
        targets = np.asarray(dev_features, dtype=np.float64)
        target_norms = (targets**2).sum(axis=1)
        best = -1.0
        for penalty in self.penalties:
            weights = vectors @ (projected / (np.clip(eigenvalues, 0.0, None) + penalty)[:, None])
            mapped = dev_x @ weights[:-1] + weights[-1]
            # −‖m − h‖² ranks as −‖m − h‖ does; one product of the dev matrices serves every candidate set
            squared = (mapped**2).sum(axis=1)[:, None] + target_norms[None] - 2.0 * (mapped @ targets.T)
            ranks = true_ranks(-np.take_along_axis(squared, sets, axis=1), np.random.default_rng(self.seed))
            rate = float((ranks == 0).mean())
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

@functools.lru_cache(maxsize=16384)  # the same true texts are scored against each reconstruction
def rouge_tokens(text: str) -> tuple[str, ...]:
    """rouge-score's tokenisation without stemming (its default): lower case, runs of letters and digits."""
    from rouge_score import tokenize

    return tuple(tokenize.tokenize(text, None))


def rouge_l(hypotheses: Sequence[str], references: Sequence[str]) -> np.ndarray:
    """Each pair's ROUGE-L F-measure as rouge-score's RougeScorer(["rougeL"]) computes it: the longest common
    subsequence of the two token sequences, precision over the hypothesis, recall over the reference, F = 2PR/(P+R),
    0 where either is empty. The subsequence is rapidfuzz's (bit-parallel, C++): rouge-score's own table is pure
    Python and quadratic in the length, most of a Blog grid point's identification time; tests hold the two equal."""
    from rapidfuzz.distance import LCSseq

    scores = np.zeros(len(hypotheses))
    for i, (hypothesis, reference) in enumerate(zip(hypotheses, references)):
        h, r = rouge_tokens(hypothesis), rouge_tokens(reference)
        common = LCSseq.similarity(h, r) if h and r else 0
        if common:
            precision, recall = common / len(h), common / len(r)
            scores[i] = 2 * precision * recall / (precision + recall)
    return scores


def first_words(text: str, words: int | None) -> str:
    """The first ``words`` whitespace-separated words of ``text`` (all of it for None)."""
    return text if words is None else " ".join(text.split()[:words])


def reconstruction_scores(reconstructions: Mapping[str, Sequence[str]], references: Sequence[str], *,
                          max_words: int | None = None) -> dict[str, dict[str, float]]:
    """How much of each true text each named reconstruction gives back: corpus BLEU and chrF (sacrebleu, its
    defaults) and the mean ROUGE-L F-measure (:func:`rouge_l`), each on a 0–100 scale. ``max_words``: both texts
    are cut to their first so many words, the part of a text its release can carry (an encoder that reads
    ``max_length`` word pieces reads no more than that many words)."""
    import sacrebleu

    truth = [first_words(text, max_words) for text in references]
    metrics = {"bleu": sacrebleu.BLEU(references=[truth]), "chrf": sacrebleu.CHRF(references=[truth])}
    scores = {}
    for name, texts in reconstructions.items():
        if len(texts) != len(truth):
            raise ValueError(f"{len(texts)} reconstructions {name!r} for {len(truth)} texts")
        guesses = [first_words(text, max_words) for text in texts]
        scores[name] = {**{key: float(metric.corpus_score(guesses, None).score) for key, metric in metrics.items()},
                        "rouge_l": 100.0 * float(np.mean(rouge_l(guesses, truth))) if truth else math.nan}
    return scores


def pool_scores(queries: np.ndarray, pool: np.ndarray, *, p: float, scale: float | None = None) -> np.ndarray:
    """[n, P] −‖q_i − pool_j‖_p (over ``scale`` when given) against a whole pool: the white-box attacker's Laplace
    log-likelihood (p = 1, :func:`l1_distances`) or the features-only attacker's distance (p = 2, torch.cdist in
    chunks of queries)."""
    if p == 1:
        return -l1_distances(queries, pool) / (scale or 1.0)
    q = torch.from_numpy(np.ascontiguousarray(queries, dtype=np.float64))
    c = torch.from_numpy(np.ascontiguousarray(pool, dtype=np.float64))
    return np.vstack([(-torch.cdist(q[start:start + 256], c, p=p) / (scale or 1.0)).numpy()
                      for start in range(0, len(q), 256)])


L1_BLOCK_ELEMENTS = 1 << 18  # one block's differences: 2 MiB of float64, which a core's L2 cache holds


def l1_distances(queries: np.ndarray, pool: np.ndarray) -> np.ndarray:
    """[n, P] ‖q_i − pool_j‖₁ in float64 (at small ε the candidates' distances differ in their sixth digit, where
    float32 sums over hundreds of coordinates would reorder them). Not torch.cdist(p=1): its L1 kernel is not
    vectorised, about 1.7x slower (docs/performance.md). Differences are taken block by block (queries by pool
    texts), each block small enough to stay in cache; tests hold the result to torch.cdist's."""
    q = torch.from_numpy(np.ascontiguousarray(queries, dtype=np.float64))
    c = torch.from_numpy(np.ascontiguousarray(pool, dtype=np.float64))
    if q.ndim != 2 or c.ndim != 2 or q.shape[1] != c.shape[1]:
        raise ValueError(f"need [n, d] queries and [P, d] pool, got {tuple(q.shape)} and {tuple(c.shape)}")
    out = torch.empty((len(q), len(c)), dtype=torch.float64)
    width = max(1, q.shape[1])
    columns = max(1, L1_BLOCK_ELEMENTS // width)
    for first in range(0, len(c), columns):
        block = c[first:first + columns]
        rows = max(1, L1_BLOCK_ELEMENTS // (width * len(block)))
        for start in range(0, len(q), rows):
            out[start:start + rows, first:first + columns] = (q[start:start + rows, None, :] - block).abs_().sum(-1)
    return out.numpy()


def nearest(scores: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Per row, the column with the highest score, ties broken at random: the retrieved text."""
    best = scores.max(axis=1, keepdims=True)
    tied = scores == best
    return np.array([rng.choice(np.flatnonzero(row)) for row in tied])


# --- one grid point's record ------------------------------------------------------------------------------------

CANDIDATE_COUNTS = (10, 100, 1000)


class GenerativeInverter(Protocol):
    """A model that writes a text from a release (vec2text and its kin): fitted on the released training pool and
    its texts, it writes a text for each test release, which is scored beside retrieval. None ships: such models
    need pretrained decoder weights, which this project cannot fetch offline (docs/methods.md, "Identification").
    One class with these two methods and a line in ``INVERTERS`` measures it at every text grid point."""

    def fit(self, releases: np.ndarray, texts: Sequence[str], *, seed: int) -> "GenerativeInverter": ...

    def invert(self, releases: np.ndarray) -> list[str]: ...


INVERTERS: dict[str, Callable[[], GenerativeInverter]] = {}


def identification_record(released: Mapping[str, np.ndarray], noise_free: Mapping[str, np.ndarray],
                          features: Mapping[str, np.ndarray], texts: Mapping[str, Sequence[str]], *,
                          scale: float | None, epsilons: Mapping[str, float], frequent_words: Sequence[str],
                          seed: int, counts: Sequence[int] = CANDIDATE_COUNTS, max_words: int | None = None,
                          max_reconstructed: int | None = None,
                          inverters: Mapping[str, Callable[[], GenerativeInverter]] | None = None) -> dict:
    """Identification and retrieval reconstruction of one grid point's test releases.

    ``released``: the run's releases (train, dev, test); ``noise_free``: the method's noise-free outputs of the
    clean train and test texts (what the receiving party computes for its candidates and its public pool);
    ``features``: the public encoder's features of the clean train, dev and test texts; ``texts``: train (the
    pool) and test; ``scale``: the Laplace scale (None: no noise); ``frequent_words``: the words the
    frequency baseline of word recovery guesses for every text, whose join is the reconstruction baseline;
    ``max_words``: the words of a text its release can carry (:func:`reconstruction_scores`);
    ``max_reconstructed``: the test texts (a seeded sample; None: all) whose reconstructions are scored, as
    retrieval over the pool and the scorers cost in proportion; ``inverters``: generative inverters scored beside
    retrieval (default: every one in ``INVERTERS``)."""
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
    rows = seeded_rows(n, max_reconstructed, seed)
    retrieved = {
        "white_box": nearest(pool_scores(released["test"][rows], noise_free["train"], p=1, scale=scale), rng),
        "features_only": nearest(pool_scores(mapped[rows], features["train"], p=2), rng),
    }
    guesses = {name: [pool[i] for i in picks] for name, picks in retrieved.items()}
    for name, make in (INVERTERS if inverters is None else inverters).items():
        guesses[name] = make().fit(released["train"], pool, seed=seed).invert(released["test"][rows])
    guesses["frequent_words"] = [" ".join(frequent_words)] * len(rows)
    record["reconstruction"] = reconstruction_scores(guesses, [texts["test"][i] for i in rows], max_words=max_words)
    record.update(reconstruction_max_words=max_words, n_reconstructed=len(rows))
    return record
