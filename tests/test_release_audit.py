"""The end-to-end audit of a method's release path (docs/audit.md, "The release path, end to end"): a finished run
loads as it was trained, the pairs are what their adjacency says, the mixture likelihood ratio is the density
ratio, a correct path stays within its guarantee and the planted faults are proved wrong on real texts."""

from __future__ import annotations

import json
import math
import re

import numpy as np
import pytest
import torch
from safetensors.torch import save_file

from planted_layers import NormaliseAfterNoise, ScaleOffByD, SharedDraw
from privtext.encoding.encoders import extract_embeddings, load_encoder
from privtext.jobs.release_audit import ADJACENCIES, ReleaseAuditSettings, ReleasePathAudit, exceeds, swap_word
from privtext.jobs.release_audit import release_audit_table
from privtext.jobs.runs import load_trained_method
from privtext.methods import Split, build_method
from privtext.privacy.audit import likelihood_ratio
from privtext.privacy.layers import PrivacyLayer
from privtext.privacy.search import batch_release

torch.set_num_threads(1)
SUBJECTS = ["the council", "a farmer", "our team", "the bank", "my sister", "the company", "a reporter", "the club"]
VERBS = ["announced", "rejected", "delayed", "praised", "questioned", "sold", "bought", "reviewed"]
OBJECTS = ["the new plan", "a late harvest", "its quarterly results", "the river bridge", "an old car",
           "the final match", "a school budget", "the city park"]
PLACES = ["on Monday", "in the north", "after a long debate", "before the storm", "near the station", "last week"]
SETTINGS = ReleaseAuditSettings(samples=3000, masks=16, candidates=40, swaps=4, logistic_samples=1000, seed=3)


def _texts(n: int, seed: int = 0) -> list[str]:
    rng = np.random.default_rng(seed)
    return [" ".join(str(rng.choice(words)) for words in (SUBJECTS, VERBS, OBJECTS, PLACES)) + "."
            for _ in range(n)]


@pytest.fixture(scope="module")
def encode():
    encoder = load_encoder("minilm", device="cpu")
    return lambda texts: extract_embeddings(list(texts), encoder, pooling="mean", max_length=128, threads=1,
                                            device="cpu", progress=False)[0]


def _trained(method: str, features: np.ndarray, seed: int = 0, **params):
    """``method`` fitted briefly on ``features`` with labels from the first coordinate's sign."""
    y = (features[:, 0] > np.median(features[:, 0])).astype(np.int64)
    split = Split(features.astype(np.float32), y, {"a": y[::-1].copy()})
    model = build_method(method, {"epochs": 2, "min_epochs": 1, "max_epochs_factor": 1, **params},
                         input_dim=features.shape[1], n_classes=2, attribute_sizes={"a": 2}, seed=seed)
    model.fit(split, split)
    return model


@pytest.fixture(scope="module")
def pool(encode) -> ReleasePathAudit:
    texts = _texts(60)
    return ReleasePathAudit("toy", texts, [f"toy-{i}" for i in range(len(texts))], encode, SETTINGS)


@pytest.fixture(scope="module")
def noise_method(pool):
    return _trained("noise", pool.features(pool.texts), epsilon=1.0)


# --- a finished run, loaded -------------------------------------------------------------------------------------

@pytest.mark.parametrize("method", ["noise", "dpnr", "cape"])
def test_a_finished_run_loads_as_it_was_trained(tmp_path, method: str) -> None:
    features = np.random.default_rng(1).normal(size=(80, 12))
    trained = _trained(method, features, seed=4, epsilon=1.0)
    save_file(trained.state_dict(), str(tmp_path / "model.safetensors"))
    (tmp_path / "metrics.json").write_text(json.dumps({"method": method, "finetune": False, "seed": 4,
                                                       "hyperparameters": trained.params}))
    (tmp_path / "meta.json").write_text(json.dumps({"label_names": ["no", "yes"],
                                                    "private_attributes": {"a": ["x", "y"]}}))
    loaded = load_trained_method(tmp_path, tmp_path)
    assert np.array_equal(loaded.representation_before_noise(features), trained.representation_before_noise(features))
    released = trained.release(features)
    assert np.array_equal(loaded.predict_released(released), trained.predict_released(released))
    assert loaded.privacy_layer == trained.privacy_layer
    assert loaded.privacy_module.scale == trained.privacy_module.scale


def test_a_run_that_fine_tuned_its_encoder_is_refused(tmp_path) -> None:
    (tmp_path / "metrics.json").write_text(json.dumps({"method": "dpnr", "finetune": True}))
    with pytest.raises(ValueError, match="fine-tuned"):
        load_trained_method(tmp_path, tmp_path)


# --- the pairs and the masks ------------------------------------------------------------------------------------

def test_one_word_pairs_differ_in_exactly_one_word_and_share_their_masks(pool) -> None:
    assert len(pool.swapped) == (SETTINGS.candidates // SETTINGS.swaps) * SETTINGS.swaps
    for pair in pool.swapped:
        first, second = pair.first.split(), pair.second.split()
        assert len(first) == len(second) and sum(a != b for a, b in zip(first, second)) == 1, pair
        a, b = pool.masked(pair, 0.5)
        assert len(a) == SETTINGS.masks
        swapped_at = next(i for i, (x, y) in enumerate(zip(first, second)) if x != y)
        for masked_a, masked_b in zip(a, b):  # the same positions masked in both texts
            assert [w == "[MASK]" for w in masked_a.split()] == [w == "[MASK]" for w in masked_b.split()]
            # they coincide exactly when the swapped word is hidden (what masked_share counts)
            assert (masked_a == masked_b) == (masked_a.split()[swapped_at] == "[MASK]")
    assert pool.masked(pool.swapped[0], 0.0) == ([pool.swapped[0].first], [pool.swapped[0].second])


def test_swap_word_keeps_the_whitespace() -> None:
    assert swap_word("a  b\tc", 1, "X") == "a  X\tc"


def test_the_worst_pairs_are_the_farthest_apart(pool, noise_method) -> None:
    layer = noise_method.privacy_module
    (one_word, one_word_gap), (any_pair, any_gap) = pool.worst_pairs(noise_method, layer)
    assert (one_word.adjacency, any_pair.adjacency) == ADJACENCIES

    def gap(first: str, second: str) -> float:
        out = pool.noise_free(noise_method, layer, [first, second])
        return float((out[0] - out[1]).abs().sum())

    assert one_word_gap == pytest.approx(gap(one_word.first, one_word.second), rel=1e-6)
    assert one_word_gap == pytest.approx(max(gap(p.first, p.second) for p in pool.swapped), rel=1e-6)
    assert any_gap == pytest.approx(max(gap(a, b) for a in pool.texts for b in pool.texts), rel=1e-6)


# --- the tests on a random input --------------------------------------------------------------------------------

def test_the_mixture_likelihood_ratio_is_the_density_ratio() -> None:
    outputs = np.array([[0.5], [-1.0], [3.0]])
    a, b, scale = np.array([[0.0], [2.0]]), np.array([[1.0]]), 0.7

    def laplace(o, centre):
        return math.exp(-abs(o - centre) / scale) / (2 * scale)

    expected = [math.log(laplace(o, 1.0) / (0.5 * laplace(o, 0.0) + 0.5 * laplace(o, 2.0))) for o in outputs[:, 0]]
    assert likelihood_ratio(outputs, a, b, scale) == pytest.approx(expected, abs=1e-8)
    single = np.random.default_rng(0).normal(size=(5, 4))
    centre_a, centre_b = np.zeros(4), np.ones(4)
    assert np.allclose(likelihood_ratio(single, centre_a[None], centre_b[None], 2.0),
                       likelihood_ratio(single, centre_a, centre_b, 2.0))


def test_a_random_input_releases_each_of_its_rows_equally_often() -> None:
    layer = PrivacyLayer("l1", 1e7, 3, generator=np.random.default_rng(0))  # noise far below the rows' distances
    rows = np.array([[1.0, 0, 0], [0, 1.0, 0], [0, 0, 1.0], [0, 0, -1.0]])
    out = batch_release(layer, rows[0], picks=np.random.default_rng(1))(rows, 8000)
    counts = np.bincount(np.abs(out[:, None, :3] - rows[None]).sum(axis=2).argmin(axis=1), minlength=4)
    assert counts.sum() == 8000 and np.all(np.abs(counts - 2000) < 4 * math.sqrt(8000 * 0.25 * 0.75))


# --- the audit: a correct path and the planted faults ---------------------------------------------------------

@pytest.fixture(scope="module")
def loud_noise_method(noise_method):
    """The noise method with its encoder's last map scaled up 1000 times: a model trained under the planted fault
    "normalise after the noise" learns large raw outputs to beat the noise, which is what makes that fault leak
    (a correct layer normalises first, so the scale changes nothing for it)."""
    state = noise_method.state_dict()
    last = max((k for k in state if re.fullmatch(r"encoder\.0\.\d+\.(weight|bias)", k)),
               key=lambda k: int(k.split(".")[2]))
    layer = last.split(".")[2]
    for part in ("weight", "bias"):
        state[f"encoder.0.{layer}.{part}"] = state[f"encoder.0.{layer}.{part}"] * 1000
    noise_method.load_state(state)
    return noise_method


def test_a_correct_release_path_stays_within_its_guarantee(pool, loud_noise_method) -> None:
    table = release_audit_table(pool.audit(loud_noise_method, "toy/noise"))
    assert len(table) == len(ADJACENCIES) * len(SETTINGS.mus) * 2
    assert not exceeds(table).any(), table
    assert (table["epsilon_effective"] == 1.0).all()
    one_word = table[(table["adjacency"] == ADJACENCIES[0]) & (table["mu"] == 0.5)]
    assert np.allclose(one_word["epsilon_prime"], math.log(0.5 * math.e + 0.5))
    # ⌊d·μ⌋ of d words are masked: the swapped word is hidden in at most half the draws, and the audited
    # release's guarantee is Theorem 2's argument at that share, at least the ε' of μ itself
    share = float(one_word["masked_share"].iloc[0])
    assert 0 < share <= 0.5 + 4 * math.sqrt(0.25 / SETTINGS.masks)
    assert np.allclose(one_word["epsilon_prime_audited"], math.log((1 - share) * math.e + share))
    assert (table.loc[table["mu"] == 0, "masked_share"] == 0).all()
    assert (table.loc[table["adjacency"] == ADJACENCIES[1], "masked_share"] == 0).all()


@pytest.mark.parametrize("fault", [ScaleOffByD, SharedDraw, NormaliseAfterNoise])
def test_planted_faults_are_proved_wrong_on_the_release_path(pool, loud_noise_method, fault) -> None:
    kind, epsilon = loud_noise_method.privacy_layer
    layer = fault(kind, epsilon, loud_noise_method.representation_dim, generator=np.random.default_rng(0))
    table = release_audit_table(pool.audit(loud_noise_method, "toy/noise", layer=layer))
    assert exceeds(table).any(), table


@pytest.mark.slow
def test_an_undefined_study_is_refused_when_the_audit_is_planned(tmp_path) -> None:
    from conftest import run_snakemake

    config = {"datasets": ["demo"], "studies": {}, "audit": {"release": {"study": "nosuch"}}}
    result = run_snakemake(tmp_path, config, ["audit"], "-n", check=False)
    assert result.returncode != 0 and "'audit.release.study': 'nosuch' is not defined" in result.stdout + result.stderr
