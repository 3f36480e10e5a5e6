"""Sentence identification (docs/methods.md, "Identification"): the ceiling an ε-DP release allows, the white-box
attacker held under it at the layer's worst case and matched to a direct simulation of the maximum-likelihood
rule, and beating the nominal ceiling of the published min-max layer."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from privtext.attack.identification import (
    candidate_sets, identification_ceiling, identification_rates, laplace_scores, true_ranks,
)
from privtext.privacy.layers import PrivacyLayer


def _rate_within(hits: int, n: int, bound: float, sigmas: float = 4.0) -> bool:
    return hits / n <= bound + sigmas * math.sqrt(bound * (1 - bound) / n)


def test_the_ceiling_is_reached_by_randomised_response_over_subsets() -> None:
    """k·e^ε / (k·e^ε + N − k): the k-subset randomised response (sets holding the truth e^ε times as likely) is
    ε-DP and reaches it exactly, so no smaller ceiling is valid."""
    from itertools import combinations

    n, k, epsilon = 6, 2, 1.3
    subsets = list(combinations(range(n), k))
    weight = np.array([[math.exp(epsilon) if i in s else 1.0 for s in subsets] for i in range(n)])
    law = weight / weight.sum(axis=1, keepdims=True)
    assert (law.max(axis=0) / law.min(axis=0) <= math.exp(epsilon) + 1e-12).all()  # ε-DP
    hit = np.mean([sum(law[i, j] for j, s in enumerate(subsets) if i in s) for i in range(n)])
    assert identification_ceiling(epsilon, n, k) == pytest.approx(hit)
    assert identification_ceiling(8.0, 10) == pytest.approx(math.exp(8) / (math.exp(8) + 9))
    assert identification_ceiling(384.0 * 20, 100) == 1.0 and identification_ceiling(math.inf, 100) == 1.0


def test_candidate_sets_hold_the_truth_first_and_distinct_others() -> None:
    sets = candidate_sets(50, 10, seed=3)
    assert sets.shape == (50, 10) and (sets[:, 0] == np.arange(50)).all()
    assert all(len(set(row)) == 10 for row in sets)
    assert np.array_equal(sets, candidate_sets(50, 10, seed=3)) and not np.array_equal(sets, candidate_sets(50, 10, 4))
    with pytest.raises(ValueError, match="candidates"):
        candidate_sets(5, 10, seed=0)


def test_ties_are_broken_at_random() -> None:
    scores = np.zeros((20_000, 4))  # every candidate equally likely: the truth ranks uniformly
    ranks = true_ranks(scores, np.random.default_rng(0))
    assert np.allclose(np.bincount(ranks, minlength=4) / 20_000, 0.25, atol=0.015)


@pytest.mark.parametrize("epsilon", [0.5, 1.0, 2.0, 4.0, 8.0])
def test_the_white_box_attacker_stays_under_the_ceiling_at_the_worst_case(epsilon: float) -> None:
    """Candidates e_1 … e_N (every pair 2 apart in L1: the l1 layer's sensitivity) under Lap(2/ε) noise: the
    attacker's top-1 rate is the maximum-likelihood rule's, under e^ε / (e^ε + N − 1)."""
    n_candidates, trials = 10, 20_000
    rng = np.random.default_rng(int(epsilon * 10))
    noise_free = np.eye(n_candidates)
    truth = rng.integers(n_candidates, size=trials)
    noise = rng.laplace(scale=2.0 / epsilon, size=(trials, n_candidates))
    releases = noise_free[truth] + noise
    sets = (truth[:, None] + np.arange(n_candidates)[None]) % n_candidates  # the truth first, then every other
    ranks = true_ranks(laplace_scores(releases, noise_free, sets, 2.0 / epsilon), np.random.default_rng(1))
    hits = int((ranks == 0).sum())
    assert _rate_within(hits, trials, identification_ceiling(epsilon, n_candidates))
    # the rule simulated directly: ‖r − e_j‖₁ = ‖r‖₁ − |r_j| + |r_j − 1|, so the attacker picks the j with the
    # largest |r_j| − |r_j − 1| (continuous noise: no ties)
    direct = np.argmax(np.abs(releases) - np.abs(releases - 1), axis=1) == truth
    assert abs(hits / trials - direct.mean()) < 4 * math.sqrt(0.25 / trials)
    if epsilon == 8.0:
        assert direct.mean() == pytest.approx(0.85, abs=0.02)  # against a ceiling of 0.997


def test_through_the_published_min_max_layer_it_beats_the_nominal_ceiling() -> None:
    """Lap(1/ε) on min-max vectors of D = 50 (the published layer, really D·ε-DP): at ε = 1 and N = 10, random
    texts' outputs are about D/3 apart in L1, far beyond what ε = 1 allows."""
    rng = np.random.default_rng(5)
    layer = PrivacyLayer("minmax", 1.0, 50, generator=np.random.default_rng(6))
    raw = torch.from_numpy(rng.normal(size=(300, 50)))
    with torch.no_grad():
        noise_free, releases = layer.normalise(raw).numpy(), layer(raw).numpy()
    sets = candidate_sets(300, 10, seed=7)
    rates = identification_rates(true_ranks(laplace_scores(releases, noise_free, sets, layer.scale),
                                            np.random.default_rng(8)), 10, epsilons={"nominal": 1.0, "effective": 50.0})
    assert rates["top1_low"] > rates["top1_ceiling_nominal"]
    assert rates["top1"] <= rates["top1_ceiling_effective"]


def test_a_deterministic_release_identifies_every_text() -> None:
    noise_free = np.random.default_rng(2).normal(size=(200, 16))
    sets = candidate_sets(200, 100, seed=1)
    ranks = true_ranks(laplace_scores(noise_free, noise_free, sets, None), np.random.default_rng(0))
    rates = identification_rates(ranks, 100, epsilons={"nominal": 1.0})
    assert rates["top1"] == 1.0 and rates["top1_chance"] == 0.01 and rates["top10_chance"] == 0.1


# --- the features-only attacker and retrieval ----------------------------------------------------------------

def _linear_release(features: np.ndarray, noise: float, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    mixing = np.random.default_rng(99).normal(size=(features.shape[1], 12))
    return features @ mixing + noise * rng.normal(size=(len(features), 12))


def test_the_features_only_attacker_reads_a_linear_release_and_not_noise() -> None:
    from privtext.attack.identification import FeaturesOnlyAttacker

    rng = np.random.default_rng(0)
    train, dev, test = (rng.normal(size=(n, 8)) for n in (2000, 300, 300))
    attacker = FeaturesOnlyAttacker(candidates=100, seed=1).fit(_linear_release(train, 0.1, 1), train,
                                                                _linear_release(dev, 0.1, 2), dev)
    sets = candidate_sets(300, 100, seed=3)
    ranks = true_ranks(attacker.scores(_linear_release(test, 0.1, 3), test, sets), np.random.default_rng(4))
    assert (ranks == 0).mean() > 0.9 and attacker.penalty in attacker.penalties
    blind = FeaturesOnlyAttacker(candidates=100, seed=1).fit(rng.normal(size=(2000, 12)), train,
                                                             rng.normal(size=(300, 12)), dev)
    ranks = true_ranks(blind.scores(rng.normal(size=(300, 12)), test, sets), np.random.default_rng(4))
    assert _rate_within(int((ranks == 0).sum()), 300, 0.01)  # chance, 1 in 100


def test_pool_scores_are_the_distances_to_every_pool_text() -> None:
    from privtext.attack.identification import pool_scores

    rng = np.random.default_rng(3)
    releases, pool = rng.normal(size=(300, 5)), rng.normal(size=(600, 5))  # more than one chunk of queries
    difference = releases[:, None, :] - pool[None]
    assert np.allclose(pool_scores(releases, pool, p=1, scale=0.5), -np.abs(difference).sum(axis=2) / 0.5)
    assert np.allclose(pool_scores(releases, pool, p=2), -np.sqrt((difference**2).sum(axis=2)))
    sets = candidate_sets(300, 10, seed=0)
    assert np.allclose(laplace_scores(releases, pool[:300], sets, None),
                          np.take_along_axis(-np.abs(difference[:, :300]).sum(axis=2), sets, axis=1))


@pytest.mark.parametrize("block", [1, 7, 64, 1 << 19])
def test_l1_distances_are_torch_cdist_s_in_every_blocking(monkeypatch: pytest.MonkeyPatch, block: int) -> None:
    from privtext.attack import identification

    rng = np.random.default_rng(5)
    queries, pool = rng.normal(size=(37, 11)), rng.normal(size=(53, 11))
    monkeypatch.setattr(identification, "L1_BLOCK_ELEMENTS", block)  # blocks narrower than a row, ragged edges
    expected = torch.cdist(torch.from_numpy(queries), torch.from_numpy(pool), p=1).numpy()
    assert np.allclose(identification.l1_distances(queries, pool), expected, rtol=1e-12, atol=0)
    assert (identification.l1_distances(pool, pool).diagonal() == 0).all()  # an exact match scores exactly 0
    with pytest.raises(ValueError, match="need"):
        identification.l1_distances(queries, pool[:, :5])


def test_rouge_l_is_rouge_score_s_own() -> None:
    from rouge_score import rouge_scorer

    from privtext.attack.identification import reconstruction_scores, rouge_l

    texts = ["Running runners ran: the generously generous generation's 3 games!",
             "Stocks rallied on Tuesday as investors weighed the Fed's comments (AP) -- again & again.",
             "Café owners in São Paulo are hopeful; hopefulness is contagious, isn't it?",
             "the the the cat cats catty categorical", "", "!!! ...", "1999 2000 20001 a an and",
             " ".join(["relational databases organise organisations organically the"] * 60)]
    rng = np.random.default_rng(0)
    vocabulary = "a b c d e f g h".split()  # short random texts with many repeats: every LCS path tried
    texts += [" ".join(rng.choice(vocabulary, size=rng.integers(1, 40))) for _ in range(30)]
    pairs = [(h, r) for h in texts for r in texts]
    hypotheses, references = zip(*pairs)
    library = rouge_scorer.RougeScorer(["rougeL"])  # its default: no stemming
    expected = np.array([library.score(r, h)["rougeL"].fmeasure for h, r in pairs])
    assert np.allclose(rouge_l(hypotheses, references), expected, rtol=0, atol=1e-12)
    assert reconstruction_scores({"x": hypotheses}, references)["x"]["rouge_l"] == pytest.approx(100 * expected.mean())


def test_reconstruction_scores_on_hand_computed_cases() -> None:
    from privtext.attack.identification import nearest, reconstruction_scores

    truth = ["the cat sat on the mat"]
    scores = reconstruction_scores({"same": truth, "short": ["the cat on the mat"], "other": ["dog"]}, truth)
    assert scores["same"] == pytest.approx({"bleu": 100.0, "chrf": 100.0, "rouge_l": 100.0})
    # longest common subsequence 5 words: precision 5/5, recall 5/6, F = 2·1·(5/6) / (1 + 5/6) = 10/11
    assert scores["short"]["rouge_l"] == pytest.approx(100 * 10 / 11)
    assert scores["other"]["rouge_l"] == 0.0
    # cut to the first 3 words, the two texts agree wherever the release could carry them
    assert reconstruction_scores({"x": ["the cat sat by a dog"]}, truth, max_words=3)["x"]["rouge_l"] == 100.0
    with pytest.raises(ValueError, match="2 reconstructions 'x' for 1 texts"):
        reconstruction_scores({"x": ["a", "b"]}, truth)
    picks = nearest(np.array([[1.0, 1.0, 0.0]] * 4000), np.random.default_rng(0))
    assert set(picks) == {0, 1} and abs((picks == 0).mean() - 0.5) < 0.04


# --- one grid point's record -----------------------------------------------------------------------------------

def _point(noise: float | None, seed: int = 0):
    """A toy dataset: texts of 6 words out of 40, encoder features their bag of words, a deterministic 'model'
    (a fixed linear map) and Laplace noise of ``noise`` (None: none)."""
    rng = np.random.default_rng(seed)
    vocabulary = [f"w{i}" for i in range(40)]
    texts = {s: [" ".join(rng.choice(vocabulary, size=6, replace=False)) for _ in range(n)]
             for s, n in (("train", 600), ("dev", 200), ("test", 200))}
    features = {s: np.array([[t.split().count(w) for w in vocabulary] for t in ts], dtype=float)
                for s, ts in texts.items()}
    model = np.random.default_rng(7).normal(size=(40, 16))
    noise_free = {s: f @ model for s, f in features.items()}
    released = {s: v + (rng.laplace(scale=noise, size=v.shape) if noise else 0.0) for s, v in noise_free.items()}
    return released, noise_free, features, texts


def test_a_point_record_identifies_a_deterministic_release_and_reconstructs_it_from_the_pool() -> None:
    from privtext.attack.identification import identification_record

    released, noise_free, features, texts = _point(None)
    record = identification_record(released, noise_free, features, texts, scale=None,
                                   epsilons={"nominal": math.inf}, frequent_words=["w1", "w2"], seed=1)
    assert record["candidates"] == [10, 100] and record["n_test"] == 200  # 1,000 candidates need 1,000 texts
    assert record["white_box"]["N100"]["top1"] == 1.0  # a deterministic release names its text
    assert record["features_only"]["N10"]["top1"] > 0.9  # a linear release read back to its bag of words
    rebuilt = record["reconstruction"]
    # the pool never holds the test text: retrieval finds a text sharing words, above the frequent-word guess
    assert rebuilt["white_box"]["rouge_l"] < 100 and rebuilt["white_box"]["rouge_l"] > rebuilt["frequent_words"]["rouge_l"]
    assert record["n_reconstructed"] == 200
    sampled = identification_record(released, noise_free, features, texts, scale=None,
                                    epsilons={"nominal": math.inf}, frequent_words=["w1", "w2"], seed=1,
                                    max_reconstructed=50)
    assert sampled["n_reconstructed"] == 50 and sampled["white_box"] == record["white_box"]  # identification: all
    assert abs(sampled["reconstruction"]["white_box"]["rouge_l"] - rebuilt["white_box"]["rouge_l"]) < 10


def test_a_point_record_under_heavy_noise_is_at_chance() -> None:
    from privtext.attack.identification import identification_record

    released, noise_free, features, texts = _point(1e4)
    record = identification_record(released, noise_free, features, texts, scale=1e4,
                                   epsilons={"nominal": 1e-3}, frequent_words=["w1"], seed=2)
    for attacker in ("white_box", "features_only"):
        rates = record[attacker]["N10"]
        assert rates["top1_low"] <= 0.1 <= rates["top1_high"] or rates["top1"] < 0.15, (attacker, rates)
        assert _rate_within(int(rates["top1"] * 200), 200, rates["top1_ceiling_nominal"] + 0.01, sigmas=4)


class _BagOfWordsInverter:
    """A toy generative inverter for the plug-in point: least squares from releases to word counts, then the six
    words it reads most strongly, written out."""

    def fit(self, releases: np.ndarray, texts, *, seed: int):
        self.vocabulary = sorted({w for t in texts for w in t.split()})
        counts = np.array([[t.split().count(w) for w in self.vocabulary] for t in texts], dtype=float)
        self.weights = np.linalg.lstsq(np.column_stack([releases, np.ones(len(releases))]), counts, rcond=None)[0]
        return self

    def invert(self, releases: np.ndarray) -> list[str]:
        read = np.column_stack([releases, np.ones(len(releases))]) @ self.weights
        return [" ".join(self.vocabulary[j] for j in np.argsort(-row)[:6]) for row in read]


def test_a_generative_inverter_plugs_in_with_one_registry_line(monkeypatch) -> None:
    from privtext.attack import identification

    monkeypatch.setitem(identification.INVERTERS, "bag_of_words", _BagOfWordsInverter)
    released, noise_free, features, texts = _point(None)
    record = identification.identification_record(released, noise_free, features, texts, scale=None, epsilons={},
                                                  frequent_words=["w1", "w2"], seed=1)
    rebuilt = record["reconstruction"]
    assert set(rebuilt) == {"white_box", "features_only", "bag_of_words", "frequent_words"}
    # it writes most of each text's words back (the order is lost: ROUGE-L counts the common subsequence)
    assert rebuilt["bag_of_words"]["rouge_l"] > 2 * rebuilt["frequent_words"]["rouge_l"]
    assert record["reconstruction_max_words"] is None


def test_the_identification_benchmark_prints_both_kernels_agreeing() -> None:
    import subprocess
    import sys
    from pathlib import Path

    script = Path(__file__).resolve().parents[1] / "benchmarks" / "identification.py"
    printed = subprocess.run([sys.executable, str(script), "--repeat", "1"], capture_output=True, text=True,
                             check=True, timeout=300).stdout
    rows = [line.split() for line in printed.splitlines() if line.startswith(("candidates", "pool"))]
    assert len(rows) == 2
    assert all(float(row[-1]) < 1e-9 and float(row[-2]) > 0 for row in rows)  # same distances; a ratio printed
