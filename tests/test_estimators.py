"""The attackers' numpy estimators (privtext.standins.estimators) against real scikit-learn: the same standardised
values, the same training run for the MLP, and no heavy imports."""

from __future__ import annotations

import os
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import privtext
from privtext.standins.estimators import AdamMLPClassifier, Standardiser


def test_importing_the_module_loads_no_heavy_library():
    code = ("import sys, privtext.standins.estimators; "
            "print(sorted({m.split('.')[0] for m in sys.modules} & {'scipy', 'sklearn', 'torch', 'pandas'}))")
    src = str(Path(privtext.__file__).resolve().parents[1])  # wherever this test imported privtext from
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([src, os.environ.get("PYTHONPATH", "")])}
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env)
    assert result.stdout.strip() == "[]"


def _classes(n: int, d: int, k: int, seed: int, dtype: type = np.float64, labels: tuple[int, ...] | None = None):
    """Standardised features; the class is a noisy function of the first coordinate."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)).astype(dtype)
    score = X[:, 0] + 0.8 * rng.normal(size=n)
    index = np.digitize(score, np.quantile(score, np.linspace(0, 1, k + 1)[1:-1]))
    return X, np.asarray(labels or range(k))[index]


def _sklearn_mlp(X: np.ndarray, y: np.ndarray, **options):
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.neural_network import MLPClassifier

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return MLPClassifier(**options).fit(X, y)


def test_the_standardiser_is_scikit_learns_standard_scaler():
    from sklearn.preprocessing import StandardScaler

    rng = np.random.default_rng(0)
    X = rng.normal(loc=3.0, scale=[0.5, 2.0, 7.0], size=(500, 3))
    X = np.column_stack([X, np.full(500, 4.2)])  # a constant column is centred, not divided by zero
    for dtype in (np.float64, np.float32):  # float32 releases stay float32, as in scikit-learn
        data = X.astype(dtype)
        ours, theirs = Standardiser().fit(data[:300]), StandardScaler().fit(data[:300])
        np.testing.assert_array_equal(ours.transform(data[300:]), theirs.transform(data[300:]))  # to the last bit
        assert ours.transform(data).dtype == dtype
        assert np.all(np.abs(ours.transform(data)[:, 3]) < 1e-6)  # centred (to the mean's rounding), not blown up


@pytest.mark.parametrize("k, labels", [(2, (3, 7)), (4, None)])
def test_the_mlp_is_scikit_learns_mlp_classifier_step_for_step_in_float64(k, labels):
    """Same initial weights, same shuffles, same Adam steps and the same stopping epoch: in float64 the
    weights after hundreds of epochs agree to rounding, and so does every loss of the curve."""
    X, y = _classes(600, 10, k, seed=k, labels=labels)
    options = dict(hidden_layer_sizes=(32,), alpha=1.0, max_iter=1000, random_state=5)
    ours = AdamMLPClassifier(**options).fit(X, y)
    theirs = _sklearn_mlp(X, y, **options)
    assert ours.n_iter_ == theirs.n_iter_ and ours.converged_
    np.testing.assert_allclose(ours.loss_curve_, theirs.loss_curve_, rtol=1e-10)
    for mine, sklearn in zip(ours.coefs_ + ours.intercepts_, theirs.coefs_ + theirs.intercepts_):
        np.testing.assert_allclose(mine, sklearn, rtol=1e-7, atol=1e-10)
    X_new, _ = _classes(300, 10, k, seed=99)
    np.testing.assert_array_equal(ours.predict(X_new), theirs.predict(X_new))


def test_the_mlp_stops_at_max_iter_and_says_it_did_not_converge():
    X, y = _classes(300, 5, 2, seed=1)
    ours = AdamMLPClassifier(alpha=1e-4, max_iter=3, random_state=0).fit(X, y)
    theirs = _sklearn_mlp(X, y, alpha=1e-4, max_iter=3, random_state=0)
    assert ours.n_iter_ == theirs.n_iter_ == 3 and not ours.converged_
    np.testing.assert_allclose(ours.loss_curve_, theirs.loss_curve_, rtol=1e-10)


def test_the_mlp_in_float32_keeps_float32_and_learns_what_scikit_learn_learns():
    """float32 releases stay float32, as in scikit-learn; the logistic output's last-bit rounding differs
    from scipy's expit, so after many epochs the two agree statistically rather than bit for bit."""
    X, y = _classes(3000, 20, 2, seed=2, dtype=np.float32)
    X_test, y_test = _classes(2000, 20, 2, seed=3, dtype=np.float32)
    ours = AdamMLPClassifier(alpha=1.0, max_iter=1000, random_state=1).fit(X, y)
    theirs = _sklearn_mlp(X, y, alpha=1.0, max_iter=1000, random_state=1)
    assert ours.coefs_[0].dtype == np.float32
    assert abs(ours.n_iter_ - theirs.n_iter_) <= 10
    assert np.mean(ours.predict(X_test) == theirs.predict(X_test)) >= 0.97
    assert abs(np.mean(ours.predict(X_test) == y_test) - np.mean(theirs.predict(X_test) == y_test)) <= 0.01


def test_the_mlp_refuses_a_single_class():
    with pytest.raises(ValueError, match="two classes"):
        AdamMLPClassifier().fit(np.zeros((4, 2)), np.ones(4, dtype=int))
