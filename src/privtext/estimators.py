"""L2-regularised logistic regression in plain numpy, for the ``linear`` attacker.

Why hand-written: every train job of the benchmark runs fresh attackers on its releases, and importing
scikit-learn (which imports scipy) costs about 0.57 s per job, more than the linear attack itself (about
0.03 s). With ~21,000 jobs in the full benchmark that is over 3 CPU-hours spent on imports alone, and
``import scipy.optimize`` by itself costs 0.3 s, so scipy's L-BFGS-B is not an option either. This module
imports only numpy and is held to scikit-learn's results by ``tests/test_estimators.py`` (coefficients,
intercepts, predictions and objective values against real ``LogisticRegression`` fits).

Objective: exactly scikit-learn 1.9's ``LogisticRegression(penalty="l2", C=C, solver="lbfgs",
fit_intercept=True)``, in the scaling of its ``LinearModelLoss``::

    f(W, b) = mean_i loss(y_i, X_i W^T + b) + ||W||^2 / (2 C n)

which has the same minimiser as ``C * sum_i loss + ||W||^2 / 2``. The intercepts ``b`` are not penalised.
Two classes: binomial log-loss with one weight vector, ``classes[1]`` positive. K >= 3 classes: multinomial
(softmax) log-loss with K weight vectors. The solver is L-BFGS (history 10, strong-Wolfe line search)
with scikit-learn's stopping rule: max-abs gradient <= ``tol`` (what it passes to L-BFGS-B as ``gtol``),
or a relative decrease of ``f`` below 64 machine epsilons (its ``ftol``), or ``max_iter`` iterations.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Callable

import numpy as np

_EPS = float(np.finfo(np.float64).eps)
_FTOL = 64 * _EPS  # relative decrease at which scikit-learn's L-BFGS-B call stops
_HISTORY = 10  # L-BFGS memory, scipy's default
_MAX_LINE_SEARCH = 50  # evaluations per line search (scikit-learn raises scipy's maxls to 50)
_C1, _C2 = 1e-4, 0.9  # sufficient decrease and curvature constants of the Wolfe conditions

LossGrad = Callable[[np.ndarray], tuple[float, np.ndarray]]


@dataclass(frozen=True, eq=False)
class LogisticModel:
    """A fitted model: ``coef`` is (1, d) for two classes, (K, d) for K >= 3; ``intercept`` is (1,) or (K,)."""

    classes: np.ndarray
    coef: np.ndarray
    intercept: np.ndarray
    n_iter: int
    converged: bool

    def decision_function(self, X: np.ndarray) -> np.ndarray:
        """Scores: shape (n,) for two classes (positive → ``classes[1]``), (n, K) otherwise."""
        scores = np.asarray(X, dtype=np.float64) @ self.coef.T + self.intercept
        return scores[:, 0] if len(self.classes) == 2 else scores

    def predict(self, X: np.ndarray) -> np.ndarray:
        scores = self.decision_function(X)
        index = (scores > 0).astype(int) if len(self.classes) == 2 else np.argmax(scores, axis=1)
        return self.classes[index]


def fit_logistic_regression(
    X: np.ndarray,
    y: np.ndarray,
    C: float,
    *,
    max_iter: int = 1000,
    tol: float = 1e-4,
    init: LogisticModel | None = None,
) -> LogisticModel:
    """Minimise scikit-learn's L2 logistic objective (module docstring) from zero, or from ``init``.

    ``init`` warm-starts from a model of the same classes (e.g. the previous ``C`` of a grid); the minimiser
    is unique, so it only saves iterations. Stopping at ``max_iter`` gives ``converged=False`` (no warning),
    as does a line search that can make no more progress (rounding-level flatness).
    """
    X = np.asarray(X, dtype=np.float64)
    classes, y_index = np.unique(np.asarray(y), return_inverse=True)
    if X.ndim != 2 or y_index.shape != (X.shape[0],):
        raise ValueError(f"X must be (n, d) and y (n,); got {X.shape} and {np.shape(y)}")
    if len(classes) < 2:
        raise ValueError(f"logistic regression needs at least two classes; got {classes}")
    if not C > 0:
        raise ValueError(f"C must be positive; got {C}")
    if not np.all(np.isfinite(X)):
        raise ValueError("X has NaN or infinite values")
    n, d = X.shape
    rows = 1 if len(classes) == 2 else len(classes)
    params = np.zeros((rows, d + 1))  # last column: intercept
    if init is not None:
        if not np.array_equal(init.classes, classes) or init.coef.shape != (rows, d):
            raise ValueError("init must be a model of the same classes and number of features")
        params[:, :d], params[:, d] = init.coef, init.intercept
    loss_grad = _loss_gradient_function(X, y_index, rows, 1.0 / (C * n))
    flat, n_iter, converged = _lbfgs(lambda p: _flat(loss_grad(p.reshape(rows, d + 1))), params.ravel(),
                                     max_iter=max_iter, gtol=tol)
    params = flat.reshape(rows, d + 1)
    intercept = params[:, d].copy()
    if rows > 1:
        # A common shift of all multinomial intercepts leaves the loss unchanged; report the zero-sum
        # representative, which is where scikit-learn's lbfgs also stays from its zero start.
        intercept -= intercept.mean()
    return LogisticModel(classes=classes, coef=params[:, :d].copy(), intercept=intercept,
                         n_iter=n_iter, converged=converged)


def logistic_objective(X: np.ndarray, y: np.ndarray, C: float, coef: np.ndarray, intercept: np.ndarray) -> float:
    """The objective ``fit_logistic_regression`` minimises, at any ``coef`` / ``intercept`` of its shapes
    (scikit-learn's ``coef_`` / ``intercept_`` included); classes are the sorted unique labels of ``y``."""
    X = np.asarray(X, dtype=np.float64)
    classes, y_index = np.unique(np.asarray(y), return_inverse=True)
    coef = np.atleast_2d(np.asarray(coef, dtype=np.float64))
    params = np.column_stack([coef, np.asarray(intercept, dtype=np.float64).reshape(len(coef))])
    return _loss_gradient_function(X, y_index, len(coef), 1.0 / (C * X.shape[0]))(params)[0]


def _flat(value_grad: tuple[float, np.ndarray]) -> tuple[float, np.ndarray]:
    return value_grad[0], value_grad[1].ravel()


def _loss_gradient_function(
    X: np.ndarray, y_index: np.ndarray, rows: int, l2: float
) -> Callable[[np.ndarray], tuple[float, np.ndarray]]:
    """``params`` (rows, d + 1) → (f, ∂f/∂params): mean log-loss + ``l2``/2·||W||² (intercepts unpenalised)."""
    n, d = X.shape
    positive = (y_index == 1).astype(np.float64)
    samples = np.arange(n)

    def binomial(params: np.ndarray) -> tuple[float, np.ndarray]:
        w, b = params[0, :d], params[0, d]
        z = X @ w + b
        softplus = np.logaddexp(0.0, z)  # log(1 + e^z) without overflow
        value = float(np.mean(softplus - positive * z)) + 0.5 * l2 * float(w @ w)
        residual = (np.exp(z - softplus) - positive) / n  # sigmoid(z) = e^(z - softplus(z)) ≤ 1, stable
        grad = np.empty_like(params)
        grad[0, :d] = X.T @ residual + l2 * w
        grad[0, d] = residual.sum()
        return value, grad

    def multinomial(params: np.ndarray) -> tuple[float, np.ndarray]:
        W, b = params[:, :d], params[:, d]
        Z = W @ X.T + b[:, None]  # (K, n): sums over classes then run along contiguous rows (2x faster)
        Z -= Z.max(axis=0)  # shift before exp: log-sum-exp without overflow
        E = np.exp(Z)
        total = E.sum(axis=0)
        value = float(np.mean(np.log(total) - Z[y_index, samples])) + 0.5 * l2 * float(np.sum(W * W))
        E /= total  # softmax probabilities, turned into the residual p - onehot(y) below
        E[y_index, samples] -= 1.0
        E /= n
        grad = np.empty_like(params)
        grad[:, :d] = E @ X + l2 * W
        grad[:, d] = E.sum(axis=1)
        return value, grad

    return binomial if rows == 1 else multinomial


def _lbfgs(fun: LossGrad, x: np.ndarray, *, max_iter: int, gtol: float) -> tuple[np.ndarray, int, bool]:
    """Unconstrained L-BFGS; returns (x, iterations, converged) with scipy L-BFGS-B's stopping tests."""
    f, g = fun(x)
    if np.max(np.abs(g)) <= gtol:
        return x, 0, True
    history: deque[tuple[np.ndarray, np.ndarray, float]] = deque(maxlen=_HISTORY)
    for iteration in range(1, max_iter + 1):
        found = _line_search(fun, x, f, g, history)
        if found is None and history:  # the quasi-Newton model misled; retry once along -g
            history.clear()
            found = _line_search(fun, x, f, g, history)
        if found is None:
            return x, iteration - 1, False
        x_new, f_new, g_new = found
        s, dy = x_new - x, g_new - g
        sy = float(s @ dy)
        if sy > _EPS * float(dy @ dy):  # keep only pairs with positive curvature (H stays positive definite)
            history.append((s, dy, 1.0 / sy))
        small_decrease = f - f_new <= _FTOL * max(abs(f), abs(f_new), 1.0)
        x, f, g = x_new, f_new, g_new
        if np.max(np.abs(g)) <= gtol or small_decrease:
            return x, iteration, True
    return x, max_iter, False


def _direction(g: np.ndarray, history: deque[tuple[np.ndarray, np.ndarray, float]]) -> np.ndarray:
    """-H·g by the two-loop recursion, H the L-BFGS inverse-Hessian estimate scaled by the newest pair."""
    q = g.copy()
    alphas = []
    for s, dy, rho in reversed(history):
        alpha = rho * float(s @ q)
        q -= alpha * dy
        alphas.append(alpha)
    s, dy, rho = history[-1]
    q *= 1.0 / (rho * float(dy @ dy))  # H0 = (s·y / y·y)·I
    for (s, dy, rho), alpha in zip(history, reversed(alphas)):
        q += (alpha - rho * float(dy @ q)) * s
    return -q


def _line_search(
    fun: LossGrad, x: np.ndarray, f0: float, g0: np.ndarray, history: deque
) -> tuple[np.ndarray, float, np.ndarray] | None:
    """A step along the L-BFGS direction meeting the strong Wolfe conditions (Nocedal & Wright, Alg. 3.5 and
    3.6, cubic interpolation with bisection as safeguard), or failing that one with sufficient decrease;
    None if no decrease was found within ``_MAX_LINE_SEARCH`` evaluations."""
    if history:
        d, step = _direction(g0, history), 1.0
    else:
        d = -g0
        step = 1.0 / float(np.linalg.norm(d))  # no curvature known yet: unit length, as L-BFGS-B starts
    slope0 = float(g0 @ d)
    if not slope0 < 0:
        if not history:
            return None
        d, slope0 = -g0, -float(g0 @ g0)
        step = 1.0 / float(np.linalg.norm(d))
        history.clear()

    def evaluate(t: float) -> tuple[float, float, float, np.ndarray, np.ndarray]:
        x_t = x + t * d
        f_t, g_t = fun(x_t)
        return t, f_t, float(g_t @ d), x_t, g_t

    def armijo(point: tuple) -> bool:
        return np.isfinite(point[1]) and point[1] <= f0 + _C1 * point[0] * slope0

    def curvature(point: tuple) -> bool:
        return abs(point[2]) <= -_C2 * slope0

    previous = (0.0, f0, slope0, x, g0)
    evaluations = 0
    while evaluations < _MAX_LINE_SEARCH:  # bracketing phase: grow the step until the minimum is passed
        point = evaluate(step)
        evaluations += 1
        if not armijo(point) or (evaluations > 1 and point[1] >= previous[1]):
            lo, hi = previous, point
            break
        if curvature(point):
            return point[3], point[1], point[4]
        if point[2] >= 0:
            lo, hi = point, previous
            break
        previous, step = point, 2.0 * step
    else:
        return (previous[3], previous[1], previous[4]) if previous[0] > 0 else None
    while evaluations < _MAX_LINE_SEARCH:  # zoom: lo meets sufficient decrease, the minimum lies towards hi
        width = hi[0] - lo[0]
        if abs(width) <= _EPS * max(abs(lo[0]), abs(hi[0])):
            break
        trial = _cubic_minimiser(lo, hi)
        if not (min(lo[0], hi[0]) + 0.1 * abs(width) <= trial <= max(lo[0], hi[0]) - 0.1 * abs(width)):
            trial = lo[0] + 0.5 * width
        point = evaluate(trial)
        evaluations += 1
        if not armijo(point) or point[1] >= lo[1]:
            hi = point
            continue
        if curvature(point):
            return point[3], point[1], point[4]
        if point[2] * (hi[0] - lo[0]) >= 0:
            hi = lo
        lo = point
    return (lo[3], lo[1], lo[4]) if lo[0] > 0 else None


def _cubic_minimiser(a: tuple, b: tuple) -> float:
    """Minimiser of the cubic through (t, f, f') at both ends; NaN when it has none (caller bisects)."""
    (ta, fa, da), (tb, fb, db) = a[:3], b[:3]
    if not (np.isfinite(fa) and np.isfinite(fb)) or ta == tb:
        return float("nan")
    d1 = da + db - 3.0 * (fa - fb) / (ta - tb)
    radicand = d1 * d1 - da * db
    if radicand < 0:
        return float("nan")
    d2 = np.copysign(np.sqrt(radicand), tb - ta)
    denominator = db - da + 2.0 * d2
    if denominator == 0:
        return float("nan")
    return float(tb - (tb - ta) * (db + d2 - d1) / denominator)
