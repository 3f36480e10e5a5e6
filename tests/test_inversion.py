"""Word recovery (privtext.attack.inversion): the attacker on constructed releases, the frequency baseline and
the threshold rule on hand cases, and a vocabulary that only the training texts shape."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pytest

from privtext.data import SPLITS
from privtext.attack.inversion import (VocabularySettings, best_threshold, fit_vocabulary, frequency_baseline,
                                       frequency_threshold, micro_scores, recover_words, word_sets,
                                       write_word_sets)

# Content words only (letters): "bac", "bad", ...
WORDS = ["".join(t) for t in itertools.product("bcdfg", "aeiou", "klmnp")][:80]


def corpus(n: int, seed: int) -> list[str]:
    """Texts drawing each word independently, with chances from 0.5 down to 0.01 (a skewed vocabulary)."""
    rng = np.random.default_rng(seed)
    chances = np.geomspace(0.5, 0.01, len(WORDS))
    return [" ".join(w for w, keep in zip(WORDS, rng.random(len(WORDS)) < chances) if keep) or "the"
            for _ in range(n)]


@pytest.fixture(scope="module")
def words() -> dict[str, np.ndarray]:
    texts = {"train": corpus(2000, 1), "dev": corpus(500, 2), "test": corpus(500, 3)}
    vocabulary = fit_vocabulary(texts["train"], VocabularySettings(vocabulary_size=60, min_df=2))
    return {split: word_sets(texts[split], vocabulary) for split in SPLITS}


@pytest.mark.parametrize("attacker", ["ridge", "mlp"])
def test_a_release_that_is_the_bag_of_words_gives_the_words_back(words, attacker):
    rng = np.random.default_rng(0)
    # the bag of words itself, with a little noise so that no coordinate is constant
    released = {s: words[s] + 0.01 * rng.standard_normal(words[s].shape) for s in SPLITS}
    result = recover_words(released, words, attacker=attacker, seed=3, max_train=None)
    assert result["f1"] >= 0.95
    assert result["advantage"] == pytest.approx(result["f1"] - result["baseline"]["f1"])
    assert result["advantage"] > 0.5  # far above guessing the frequent words


def test_a_release_of_independent_noise_has_no_inversion_advantage(words):
    """Tolerance 0.01 of F1 per seed, 0.005 on the mean of five (seen: within 0.001): the attacker reduces to
    the frequency guess (its intercepts), and selecting the penalty on dev keeps it from fitting the noise."""
    advantages = []
    for seed in range(5):
        rng = np.random.default_rng(100 + seed)
        released = {s: rng.standard_normal((len(words[s]), 32)) for s in SPLITS}
        advantages.append(recover_words(released, words, attacker="ridge", seed=seed, max_train=None)["advantage"])
    assert max(abs(a) for a in advantages) < 0.01
    assert abs(np.mean(advantages)) < 0.005


def test_the_frequency_baseline_on_a_hand_computed_case():
    # four words; training frequencies 1, 0.75, 0.25, 0
    train = np.array([[1, 1, 0, 0], [1, 1, 1, 0], [1, 1, 0, 0], [1, 0, 0, 0]], dtype=bool)
    # dev: word 0 in both texts, word 1 in one, word 2 in one. Thresholds: t=1 predicts word 0 in both
    # (TP 2 of 2 predicted, 4 true): F1 = 4/6; t=0.75 adds word 1 (TP 3, 4 predicted): F1 = 6/8 = 0.75;
    # t=0.25 adds word 2 (TP 4, 6 predicted): F1 = 8/10 = 0.8; t=0 predicts all (TP 4, 8): F1 = 8/12. Best 0.25.
    dev = np.array([[1, 1, 0, 0], [1, 0, 1, 0]], dtype=bool)
    # test: predicted words {0, 1, 2} in each of 2 texts (6); true pairs: (0,0), (0,3), (1,1): 3, TP 2
    test = np.array([[1, 0, 0, 1], [0, 1, 0, 0]], dtype=bool)
    baseline = frequency_baseline({"train": train, "dev": dev, "test": test})
    assert baseline["threshold"] == 0.25 and baseline["n_words_predicted"] == 3
    assert baseline["precision"] == pytest.approx(2 / 6)
    assert baseline["recall"] == pytest.approx(2 / 3)
    assert baseline["f1"] == pytest.approx(2 * 2 / (6 + 3))


@pytest.mark.parametrize("seed", range(5))
def test_the_frequency_threshold_is_best_threshold_on_the_broadcast_scores(seed: int) -> None:
    rng = np.random.default_rng(seed)
    frequency = rng.integers(0, 6, size=40) / 5  # tied frequencies, as a small training split gives
    truth = rng.random((30, 40)) < frequency * 0.5
    assert frequency_threshold(frequency, truth) == best_threshold(np.broadcast_to(frequency, truth.shape), truth)[0]
    assert frequency_threshold(frequency, np.zeros_like(truth)) == float("inf")  # nothing to find


def test_the_threshold_rule_and_micro_scores_on_hand_cases():
    scores = np.array([[0.9, 0.2], [0.4, 0.4]])
    truth = np.array([[1, 0], [0, 1]], dtype=bool)
    # t=0.9: F1 2/3; t=0.4: TP 2 of 3 predicted: 4/5; t=0.2: TP 2 of 4: 4/6. Best 0.4.
    assert best_threshold(scores, truth) == (0.4, pytest.approx(0.8))
    assert best_threshold(np.zeros((2, 2)), np.zeros((2, 2), dtype=bool)) == (float("inf"), 0.0)  # nothing to find
    assert micro_scores(truth, scores >= 0.4) == pytest.approx({"precision": 2 / 3, "recall": 1.0, "f1": 0.8})
    assert micro_scores(truth, np.zeros_like(truth)) == {"precision": 0.0, "recall": 0.0, "f1": 0.0}


def test_the_vocabulary_is_fitted_on_training_texts_only(tmp_path):
    train = ["apple banana cherry", "apple banana", "apple cherry the and"]
    dev_a, dev_b = ["zebra zebra", "apple"], ["yak yak", "banana kiwi"]
    settings = VocabularySettings(vocabulary_size=10, min_df=1)
    first = write_word_sets({"train": train, "dev": dev_a, "test": dev_b}, settings, tmp_path / "a.npz")
    second = write_word_sets({"train": train, "dev": dev_b, "test": dev_a}, settings, tmp_path / "b.npz")
    assert first["vocabulary"] == second["vocabulary"] == ["apple", "banana", "cherry"]  # stop words out
    assert first["train_document_frequency"] == pytest.approx([1.0, 2 / 3, 2 / 3])
    capped = fit_vocabulary(train, VocabularySettings(vocabulary_size=1, min_df=1))
    assert capped == ["apple"]  # the word in the most training texts
    assert fit_vocabulary(train, VocabularySettings(vocabulary_size=10, min_df=3)) == ["apple"]
    with pytest.raises(ValueError, match="no vocabulary"):
        fit_vocabulary(["the and of"], VocabularySettings(vocabulary_size=10, min_df=1))
    json.dumps(first)  # the record is plain JSON


def test_the_attacker_fits_on_train_and_its_sample_cap(words):
    rng = np.random.default_rng(5)
    released = {s: words[s] + 0.01 * rng.standard_normal(words[s].shape) for s in SPLITS}
    capped = recover_words(released, words, attacker="ridge", seed=1, max_train=300)
    assert capped["n_train"] == 300 and capped["attacker"]["fit_split"] == "train"
    with pytest.raises(ValueError, match="released rows"):
        recover_words({**released, "dev": released["dev"][:-1]}, words, attacker="ridge", seed=1, max_train=None)
    with pytest.raises(ValueError, match="unknown word attacker"):
        recover_words(released, words, attacker="svm", seed=1, max_train=None)
