"""The numpy logistic regression against real scikit-learn: same minimiser, same predictions, no heavy imports."""

from __future__ import annotations

import os
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import privtext
from privtext.estimators import LogisticModel, fit_logistic_regression, logistic_objective

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
    code = ("import sys, privtext.estimators; "
            "print(sorted({m.split('.')[0] for m in sys.modules} & {'scipy', 'sklearn', 'torch', 'pandas'}))")
    src = str(Path(privtext.__file__).resolve().parents[1])  # wherever this test imported privtext from
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([src, os.environ.get("PYTHONPATH", "")])}
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env)
    assert result.stdout.strip() == "[]"
