"""MDL online code: block layout, the two extremes of information, and no training on the coded block."""

from __future__ import annotations

import math

import numpy as np
import pytest

from privtext.measures import mdl


def _separable(n: int, n_classes: int, seed: int = 0):
    """Class c sits in a tight cluster at 5·e_c: perfectly predictable from X."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, n_classes, n)
    X = rng.normal(scale=0.3, size=(n, 10))
    X[np.arange(n), y] += 5.0
    return X, y


def test_block_boundaries_for_1000_examples():
    assert mdl.block_boundaries(1000) == [1, 2, 4, 8, 16, 32, 62, 125, 250, 500, 1000]


def test_block_boundaries_for_small_n_start_at_one_and_strictly_increase():
    assert mdl.block_boundaries(10) == [1, 2, 5, 10]
    assert mdl.block_boundaries(1) == [1]


def test_first_block_is_coded_uniformly():
    X, y = _separable(1000, 4)
    result = mdl.online_code_length(X, y, 4, seed=0)
    assert result["blocks"][0] == {
        "start": 0, "end": 1, "n": 1, "n_train": 0, "coded_by": "uniform", "bits": 2.0, "bits_per_example": 2.0
    }
    assert result["kbits"] == pytest.approx(result["bits"] / 1024)


def test_perfectly_predictable_label_costs_little_beyond_the_first_block():
    X, y = _separable(2000, 4)
    result = mdl.online_code_length(X, y, 4, seed=0)
    assert result["uniform_bits"] == pytest.approx(2000 * 2.0)
    assert result["bits"] < 0.05 * result["uniform_bits"]
    assert result["compression"] > 20


def test_random_label_costs_about_the_uniform_code():
    rng = np.random.default_rng(1)
    X, y = rng.normal(size=(2000, 10)), rng.integers(0, 2, 2000)
    result = mdl.online_code_length(X, y, 2, seed=0)
    assert 0.85 < result["compression"] < 1.05


def test_probe_for_a_block_is_trained_on_exactly_the_earlier_blocks(monkeypatch):
    calls = []

    class SpyProbe:
        """Records which rows (column 0 holds the row id) it was fitted on and which it codes."""

        def fit(self, X, y):
            self.classes_, self.seen = np.unique(y), set(X[:, 0].astype(int))
            return self

        def predict_proba(self, X):
            calls.append((self.seen, set(X[:, 0].astype(int))))
            return np.full((len(X), len(self.classes_)), 1.0 / len(self.classes_))

    monkeypatch.setitem(mdl.PROBES, "spy", lambda seed, y: SpyProbe())
    X = np.column_stack([np.arange(300), np.zeros(300)])
    y = np.arange(300) % 2  # both classes early, so the probe (not the one-class shortcut) codes every block
    result = mdl.online_code_length(X, y, 2, seed=0, probe="spy")
    probe_blocks = [b for b in result["blocks"] if b["coded_by"] == "probe"][-len(calls):]
    expected = calls[0][0]  # everything before the first probe-coded block (earlier ones had one class)
    for (trained_on, coded), block in zip(calls, probe_blocks):
        assert not trained_on & coded
        assert trained_on == expected and len(trained_on) == block["start"]
        assert len(coded) == block["n"]
        expected = expected | coded
    assert expected == set(range(300))


def test_class_absent_from_earlier_blocks_has_finite_cost():
    rng = np.random.default_rng(2)
    X, y = rng.normal(size=(500, 5)), np.zeros(500, dtype=int)
    y[-1] = 2  # a class the earlier blocks may never show
    result = mdl.online_code_length(X, y, 3, seed=0, smoothing=1e-3)
    assert math.isfinite(result["bits"])
    assert all(b["bits_per_example"] <= math.log2(3 / 1e-3) + 1e-9 for b in result["blocks"])


def test_code_length_is_deterministic_for_a_seed():
    X, y = _separable(500, 3)
    assert mdl.online_code_length(X, y, 3, seed=5) == mdl.online_code_length(X, y, 3, seed=5)
