"""The attackers' numpy estimators (privtext.standins.estimators) against real scikit-learn: the same minimiser and
predictions for logistic regression, the same training run for the MLP, and no heavy imports."""

from __future__ import annotations

import os
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import privtext
from privtext.standins.estimators import (AdamMLPClassifier, LogisticModel, Standardiser, fit_logistic_regression,
                                 logistic_objective)

C_GRID = (1e-3, 1e-1, 10.0, 1e3)
CASES = [(k, kind, c) for k in (2, 4) for kind in ("informative", "noise") for c in C_GRID]


def _problem(n_classes: int, kind: str, seed: int = 0, n: int = 600, d: int = 10):
    """Fit and held-out sets of ``n`` rows each, standardised with the fit statistics (as the attacker does).
    Labels are drawn from a softmax of X·W (Gumbel-max); ``noise`` has W = 0, i.e. labels independent of X."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(2 * n, d))
    W = rng.normal(size=(n_classes, d)) * (2.0 if kind == "informative" else 0.0)
    y = np.argmax(X @ W.T + rng.gumbel(size=(2 * n, n_classes)), axis=1)
    mean, std = X[:n].mean(axis=0), X[:n].std(axis=0)
    X = (X - mean) / std
    return X[:n], y[:n], X[n:], y[n:]


def _sklearn(X: np.ndarray, y: np.ndarray, C: float, tol: float = 1e-4, max_iter: int = 1000):
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.linear_model import LogisticRegression

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return LogisticRegression(C=C, tol=tol, max_iter=max_iter).fit(X, y)


def _assert_same_fit(X, y, X_out, C, tol, atol_scale, min_agreement):
    ours, theirs = fit_logistic_regression(X, y, C, tol=tol), _sklearn(X, y, C, tol=tol)
    atol = atol_scale * max(1.0, float(np.max(np.abs(theirs.coef_))))
    assert ours.converged
    assert ours.coef.shape == theirs.coef_.shape and ours.intercept.shape == theirs.intercept_.shape
    np.testing.assert_allclose(ours.coef, theirs.coef_, rtol=0, atol=atol)
    np.testing.assert_allclose(ours.intercept, theirs.intercept_, rtol=0, atol=atol)
    assert ours.decision_function(X_out).shape == theirs.decision_function(X_out).shape
    assert np.mean(ours.predict(X_out) == theirs.predict(X_out)) >= min_agreement
    # Our minimum is at least as low as theirs, both measured by our own objective.
    assert logistic_objective(X, y, C, ours.coef, ours.intercept) <= (
        logistic_objective(X, y, C, theirs.coef_, theirs.intercept_) + 1e-7)


@pytest.mark.parametrize("n_classes,kind,C", CASES)
def test_matches_sklearn_at_its_default_tol(n_classes, kind, C):
    """Both stop once max|∇f| <= 1e-4, which leaves each within about sqrt(p)·1e-4/λ of the minimiser (λ the
    smallest curvature, p parameters): ~3e-3 for the noise and small-C fits, up to ~0.1 where C >= 10 lets
    informative coefficients grow and flatten the loss (λ ≈ 0.005, measured when this was written). The two
    L-BFGS runs start from zero with the same first step and in practice land on the same iterate (here
    ≤ 6e-6 apart, 12 of 16 cases within 1e-12), so 2e-3 · max(1, |coef|) keeps room for a line search that picks a different
    step while still failing on a wrong loss or penalty scale (at C = 1e-3 the penalty dominates)."""
    X, y, X_out, _ = _problem(n_classes, kind)
    _assert_same_fit(X, y, X_out, C, tol=1e-4, atol_scale=2e-3, min_agreement=0.995)


@pytest.mark.parametrize("n_classes,kind,C", CASES)
def test_matches_sklearn_strictly_at_tol_1e_8(n_classes, kind, C):
    """With tol = 1e-8 on both sides the same bound is ~1e-5 at worst; every held-out prediction agrees."""
    X, y, X_out, _ = _problem(n_classes, kind, seed=1)
    _assert_same_fit(X, y, X_out, C, tol=1e-8, atol_scale=1e-5, min_agreement=1.0)


@pytest.mark.parametrize("labels", [(3, 7), (-2, 5, 11, 40)])
def test_any_integer_labels_give_the_fit_of_their_indices(labels):
    X, y, X_out, _ = _problem(len(labels), "informative", seed=2)
    labels = np.array(labels)
    relabelled = fit_logistic_regression(X, labels[y], 1.0)
    plain = fit_logistic_regression(X, y, 1.0)
    np.testing.assert_array_equal(relabelled.classes, labels)
    np.testing.assert_array_equal(relabelled.coef, plain.coef)
    np.testing.assert_array_equal(relabelled.intercept, plain.intercept)
    np.testing.assert_array_equal(relabelled.predict(X_out), labels[plain.predict(X_out)])
    np.testing.assert_array_equal(relabelled.predict(X_out), _sklearn(X, labels[y], 1.0).predict(X_out))


@pytest.mark.parametrize("n_classes", [2, 4])
def test_warm_start_along_a_c_grid_reaches_the_cold_solutions(n_classes):
    X, y, _, _ = _problem(n_classes, "informative", seed=3)
    previous, cold_iterations, warm_iterations = None, 0, 0
    for C in (1e-3, 1e-2, 1e-1, 1.0, 10.0, 100.0, 1e3):
        cold = fit_logistic_regression(X, y, C, tol=1e-8)
        warm = fit_logistic_regression(X, y, C, tol=1e-8, init=previous)
        atol = 1e-5 * max(1.0, float(np.max(np.abs(cold.coef))))  # the strict test's bound
        np.testing.assert_allclose(warm.coef, cold.coef, rtol=0, atol=atol)
        np.testing.assert_allclose(warm.intercept, cold.intercept, rtol=0, atol=atol)
        cold_iterations, warm_iterations, previous = cold_iterations + cold.n_iter, warm_iterations + warm.n_iter, warm
    assert warm_iterations < cold_iterations


def test_warm_start_must_have_the_same_classes():
    X, y, _, _ = _problem(2, "informative")
    with pytest.raises(ValueError):
        fit_logistic_regression(X, y + 1, 1.0, init=fit_logistic_regression(X, y, 1.0))
    with pytest.raises(ValueError):
        fit_logistic_regression(X, np.zeros_like(y), 1.0)  # one class


@pytest.mark.parametrize("n_classes", [2, 4])
def test_separable_data_with_weak_regularisation_terminates_and_fits_the_training_set(n_classes):
    X, _, _, _ = _problem(n_classes, "informative", seed=4)
    y = np.argmax(X @ np.random.default_rng(5).normal(size=(n_classes, X.shape[1])).T, axis=1)  # no noise
    model = fit_logistic_regression(X, y, 1e3)
    assert model.converged and model.n_iter <= 1000
    np.testing.assert_array_equal(model.predict(X), y)
    capped = fit_logistic_regression(X, y, 1e3, max_iter=5)
    assert (capped.n_iter, capped.converged) == (5, False)
    assert isinstance(capped, LogisticModel)


def test_importing_the_module_loads_no_heavy_library():
    code = ("import sys, privtext.standins.estimators; "
            "print(sorted({m.split('.')[0] for m in sys.modules} & {'scipy', 'sklearn', 'torch', 'pandas'}))")
    src = str(Path(privtext.__file__).resolve().parents[1])  # wherever this test imported privtext from
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([src, os.environ.get("PYTHONPATH", "")])}
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env)
    assert result.stdout.strip() == "[]"


# --- StandardScaler and MLPClassifier -------------------------------------------------------------------

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
