"""Word recovery: which words of a text can be read back from its released representation (docs/methods.md,
"Word recovery").

The threat is inversion, not attribute inference: Song & Raghunathan (CCS 2020) recover the set of input
words from sentence embeddings with a multi-label classifier. Here the targets are the bags of words of a
dataset's texts over a vocabulary fitted on the training texts alone (:func:`fit_vocabulary`, written once
per dataset by the ``word_sets`` rule); the attacker reads a release and scores every vocabulary word, and
one threshold, chosen on dev, turns scores into the recovered set. It is scored on test by micro precision,
recall and F1 over (text, word) pairs.

The same F1 can be had without the release: guess for every text the words frequent enough in training.
:func:`frequency_baseline` is that guess with its threshold chosen on dev by the same rule; the *inversion
advantage* is the attacker's F1 minus the baseline's, so a release that carries no word information scores
about 0 whatever the vocabulary's skew.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from privtext.data import SPLITS
from privtext.data.sampling import seeded_rows
from privtext.standins.estimators import Standardiser

NO_TEXT = "not applicable: no text"
# A text dataset's word sets, beside its splits (results/data/{dataset}/), written by the word_sets rule.
WORDS_FILE = "words.npz"
# Letters only, two or more: content words, not numbers or punctuation.
TOKEN_PATTERN = r"(?u)\b[^\W\d_]{2,}\b"


@dataclass(frozen=True)
class VocabularySettings:
    """Which words the attacker is asked to recover (config ``attack.inversion``)."""

    vocabulary_size: int = 1000
    remove_stop_words: bool = True
    min_df: int = 5

    def __post_init__(self) -> None:
        if self.vocabulary_size < 1 or self.min_df < 1:
            raise ValueError(f"attack.inversion: vocabulary_size and min_df must be >= 1, got {self}")


def _vectorizer(**options: Any):
    from sklearn.feature_extraction.text import CountVectorizer  # only the word_sets job needs scikit-learn

    return CountVectorizer(lowercase=True, token_pattern=TOKEN_PATTERN, binary=True, dtype=np.uint8, **options)


def fit_vocabulary(train_texts: Sequence[str], settings: VocabularySettings) -> list[str]:
    """The ``settings.vocabulary_size`` words in the most training texts (after scikit-learn's English stop words if
    removed, and at least ``min_df`` texts), alphabetical. Only training texts are read."""
    vectorizer = _vectorizer(stop_words="english" if settings.remove_stop_words else None,
                             min_df=settings.min_df, max_features=settings.vocabulary_size)
    try:
        vectorizer.fit(train_texts)
    except ValueError as error:  # no word survives min_df / stop words
        raise ValueError(f"no vocabulary: {error} ({len(train_texts)} training texts, {settings})") from None
    return [str(w) for w in vectorizer.get_feature_names_out()]


def word_sets(texts: Sequence[str], vocabulary: Sequence[str]) -> np.ndarray:
    """``(len(texts), len(vocabulary))`` booleans: which vocabulary words occur in each text."""
    return _vectorizer(vocabulary=list(vocabulary)).transform(texts).toarray().astype(bool)


def write_word_sets(texts: Mapping[str, Sequence[str]], settings: VocabularySettings, out_npz: str | Path) -> dict[str, Any]:
    """Fit the vocabulary on ``texts["train"]`` and write every split's word sets to ``out_npz``; return the
    record (vocabulary, settings, document frequencies) its JSON companion keeps. The file is replaced
    atomically: a train job may read it while this job runs."""
    vocabulary = fit_vocabulary(texts["train"], settings)
    sets = {split: word_sets(texts[split], vocabulary) for split in SPLITS}
    out_npz = Path(out_npz)
    partial = out_npz.with_name(out_npz.name + ".partial.npz")
    np.savez_compressed(partial, **sets)
    os.replace(partial, out_npz)
    return {
        "vocabulary_size": settings.vocabulary_size, "remove_stop_words": settings.remove_stop_words, "min_df": settings.min_df,
        "token_pattern": TOKEN_PATTERN, "n_words": len(vocabulary), "vocabulary": vocabulary,
        "train_document_frequency": sets["train"].mean(axis=0).round(6).tolist(),
        "words_per_text": {split: float(sets[split].sum(axis=1).mean()) for split in SPLITS},
        "n": {split: int(len(sets[split])) for split in SPLITS},
    }


def read_word_sets(path: str | Path) -> dict[str, np.ndarray]:
    with np.load(path, allow_pickle=False) as stored:
        return {split: stored[split].astype(bool) for split in SPLITS}


def micro_scores(truth: np.ndarray, predicted: np.ndarray) -> dict[str, float]:
    """Micro precision, recall and F1 over every (text, word) pair; 0 where undefined (nothing predicted)."""
    tp = float(np.logical_and(truth, predicted).sum())
    n_predicted, n_true = float(predicted.sum()), float(truth.sum())
    precision = tp / n_predicted if n_predicted else 0.0
    recall = tp / n_true if n_true else 0.0
    f1 = 2 * tp / (n_predicted + n_true) if n_predicted + n_true else 0.0
    return {"precision": precision, "recall": recall, "f1": f1}


def best_threshold(scores: np.ndarray, truth: np.ndarray) -> tuple[float, float]:
    """The threshold ``t`` (predict ``score >= t``) with the best micro F1 on these scores, and that F1.
    Every distinct score is a candidate, and ``inf`` (predict nothing, F1 0); ties go to the highest ``t``."""
    values, inverse = np.unique(scores.ravel(), return_inverse=True)
    positives = np.bincount(inverse, weights=truth.ravel().astype(float), minlength=len(values))
    counts = np.bincount(inverse, minlength=len(values)).astype(float)
    return _best_of_counts(values, positives, counts, truth.sum())


def frequency_threshold(frequency: np.ndarray, truth: np.ndarray) -> float:
    """:func:`best_threshold` of the same score ``frequency`` [V] for every text of ``truth`` [n, V]: the same
    threshold from per-word sums, without sorting the n·V pairs (a tenth of a grid point's identification time)."""
    values, inverse = np.unique(frequency, return_inverse=True)
    positives = np.bincount(inverse, weights=truth.sum(axis=0, dtype=np.float64), minlength=len(values))
    counts = np.bincount(inverse, minlength=len(values)).astype(float) * len(truth)
    return _best_of_counts(values, positives, counts, truth.sum())[0]


def _best_of_counts(
    values: np.ndarray, positives: np.ndarray, counts: np.ndarray, n_true: float
) -> tuple[float, float]:
    """Of the distinct scores ``values`` (ascending), with the true pairs and all pairs at each, the threshold of
    best micro F1 and that F1; ties go to the highest, and ``(inf, 0.0)`` when no threshold finds a true pair."""
    # predicting score >= values[i] predicts every pair at or above it: cumulative sums from the top
    tp, n_predicted = np.cumsum(positives[::-1])[::-1], np.cumsum(counts[::-1])[::-1]
    f1 = 2 * tp / (n_predicted + n_true)
    best = len(values) - 1 - int(np.argmax(f1[::-1]))  # argmax takes the first: from the top, the highest t
    return (float(values[best]), float(f1[best])) if f1[best] > 0 else (float("inf"), 0.0)


def frequency_baseline(words: Mapping[str, np.ndarray]) -> dict[str, Any]:
    """The best guess without the release: every text gets the words in at least a fraction ``t`` of the
    training texts, ``t`` chosen on dev by :func:`best_threshold`; scored on test."""
    frequency = words["train"].mean(axis=0)
    threshold = frequency_threshold(frequency, words["dev"])
    chosen = frequency >= threshold
    predicted = np.broadcast_to(chosen, words["test"].shape)
    return {**micro_scores(words["test"], predicted), "threshold": threshold, "n_words_predicted": int(chosen.sum())}


def frequent_words(words: Mapping[str, np.ndarray], vocabulary: Sequence[str]) -> list[str]:
    """The words :func:`frequency_baseline` guesses for every text, most frequent in training first."""
    frequency = words["train"].mean(axis=0)
    chosen = np.flatnonzero(frequency >= frequency_threshold(frequency, words["dev"]))
    return [vocabulary[i] for i in chosen[np.argsort(-frequency[chosen], kind="stable")]]


@dataclass
class RidgeWordAttacker:
    """Multi-output ridge regression of the word indicators on the standardised release, fitted on train in
    closed form (one SVD serves every penalty); the penalty and the score threshold are the pair with the best
    dev micro F1. Linear and cheap enough to run at every grid point; ``mlp`` is the stronger, slower probe."""

    alphas: tuple[float, ...] = (1e-2, 1e-1, 1.0, 10.0, 100.0, 1e3, 1e4, 1e5)

    def fit_scores(self, X_fit: np.ndarray, Y_fit: np.ndarray, X_select: np.ndarray, Y_select: np.ndarray,
                   X_test: np.ndarray, seed: int) -> tuple[np.ndarray, float, dict[str, Any]]:
        scaler = Standardiser().fit(X_fit)
        X = scaler.transform(X_fit).astype(np.float64)
        mean = Y_fit.mean(axis=0)
        U, s, Vt = np.linalg.svd(X, full_matrices=False)
        projected = U.T @ (Y_fit - mean)  # (rank, words)
        X_sel = scaler.transform(X_select).astype(np.float64) @ Vt.T
        chosen = None
        dev_f1 = {}
        for alpha in self.alphas:
            shrink = (s / (s ** 2 + alpha))[:, None]
            threshold, f1 = best_threshold(X_sel @ (shrink * projected) + mean, Y_select)
            dev_f1[f"{alpha:g}"] = f1
            if chosen is None or f1 > chosen[2]:  # ties: the smaller penalty seen first
                chosen = (alpha, threshold, f1)
        alpha, threshold, f1 = chosen
        weights = Vt.T @ ((s / (s ** 2 + alpha))[:, None] * projected)
        scores = scaler.transform(X_test).astype(np.float64) @ weights + mean
        return scores, threshold, {"alpha": alpha, "selection_f1": f1, "dev_f1_per_alpha": dev_f1}

    def config(self) -> dict[str, Any]:
        return {"kind": "ridge regression on the standardised release, closed form", "alphas": list(self.alphas),
                "selection": "penalty and threshold with the best dev micro F1"}


@dataclass
class MLPWordAttacker:
    """Song & Raghunathan's multi-set inversion: release → hidden ReLU layer → one logit per word, binary
    cross-entropy, Adam on train, the epoch with the best dev micro F1 (at its best threshold) kept."""

    hidden: int = 512
    lr: float = 1e-3
    batch_size: int = 256
    max_epochs: int = 30
    patience: int = 5

    def fit_scores(self, X_fit: np.ndarray, Y_fit: np.ndarray, X_select: np.ndarray, Y_select: np.ndarray,
                   X_test: np.ndarray, seed: int) -> tuple[np.ndarray, float, dict[str, Any]]:
        import torch

        scaler = Standardiser().fit(X_fit)

        def tensor(X: np.ndarray) -> torch.Tensor:
            return torch.as_tensor(scaler.transform(X), dtype=torch.float32)

        X_fit_t, Y_fit_t, X_sel_t = tensor(X_fit), torch.as_tensor(Y_fit, dtype=torch.float32), tensor(X_select)
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            model = torch.nn.Sequential(torch.nn.Linear(X_fit.shape[1], self.hidden), torch.nn.ReLU(),
                                        torch.nn.Linear(self.hidden, Y_fit.shape[1]))
        optimiser = torch.optim.Adam(model.parameters(), lr=self.lr)
        loss_fn = torch.nn.BCEWithLogitsLoss()
        generator = torch.Generator().manual_seed(seed)
        best = (-1.0, None, None, 0)  # dev F1, state, threshold, epoch
        for epoch in range(1, self.max_epochs + 1):
            model.train()
            for rows in torch.randperm(len(X_fit_t), generator=generator).split(self.batch_size):
                optimiser.zero_grad()
                loss_fn(model(X_fit_t[rows]), Y_fit_t[rows]).backward()
                optimiser.step()
            model.eval()
            with torch.no_grad():
                threshold, f1 = best_threshold(torch.sigmoid(model(X_sel_t)).numpy(), Y_select)
            if f1 > best[0]:
                best = (f1, {k: v.clone() for k, v in model.state_dict().items()}, threshold, epoch)
            elif epoch - best[3] >= self.patience:
                break
        model.load_state_dict(best[1])
        with torch.no_grad():
            scores = torch.sigmoid(model(tensor(X_test))).numpy()
        return scores, best[2], {"best_epoch": best[3], "epochs_run": epoch, "selection_f1": best[0]}

    def config(self) -> dict[str, Any]:
        return {"kind": "torch MLP in→hidden→ReLU→words, binary cross-entropy", "hidden": self.hidden, "lr": self.lr,
                "batch_size": self.batch_size, "max_epochs": self.max_epochs, "patience": self.patience,
                "selection": "epoch and threshold with the best dev micro F1"}


WORD_ATTACKERS = {"ridge": RidgeWordAttacker, "mlp": MLPWordAttacker}


def recover_words(released: Mapping[str, np.ndarray], words: Mapping[str, np.ndarray], *, attacker: str, seed: int,
                  max_train: int | None) -> dict[str, Any]:
    """Fit ``attacker`` on the released train split (a seeded sample of at most ``max_train`` rows, as the
    attribute attackers), select on dev, score on test; with the frequency baseline and the advantage."""
    started = time.perf_counter()
    if attacker not in WORD_ATTACKERS:
        raise ValueError(f"unknown word attacker {attacker!r}; available: {sorted(WORD_ATTACKERS)}")
    for split in SPLITS:
        if len(released[split]) != len(words[split]):
            raise ValueError(f"{split}: {len(released[split])} released rows but {len(words[split])} word sets")
    model = WORD_ATTACKERS[attacker]()
    rows = seeded_rows(len(released["train"]), max_train, seed)
    scores, threshold, details = model.fit_scores(
        np.asarray(released["train"])[rows], words["train"][rows], np.asarray(released["dev"]), words["dev"],
        np.asarray(released["test"]), seed)
    recovered = micro_scores(words["test"], scores >= threshold)
    baseline = frequency_baseline({"train": words["train"][rows], "dev": words["dev"], "test": words["test"]})
    return {
        "status": "measured", **recovered, "baseline": baseline, "advantage": recovered["f1"] - baseline["f1"],
        "attacker": {"name": attacker, **model.config(), "fit_split": "train", "select_split": "dev",
                     "test_split": "test"},
        "threshold": threshold, "details": details, "n_train": int(len(rows)), "n_test": int(len(words["test"])),
        "n_words": int(words["test"].shape[1]), "seed": int(seed), "seconds": round(time.perf_counter() - started, 3),
    }
