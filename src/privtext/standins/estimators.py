"""The scikit-learn estimators the attackers use, in plain numpy: ``StandardScaler``, ``LogisticRegression``
(``linear``) and ``MLPClassifier`` with Adam (``sklearn_mlp``, FEDERATE's Leakage).

Why hand-written: every train job of the benchmark runs the fresh attackers on its releases, and importing
scikit-learn (which imports scipy) costs about 0.57 s per job, more than the linear attack itself (about
0.03 s); with ~21,000 jobs in the full benchmark that is over 3 CPU-hours of imports. ``import
scipy.optimize`` alone costs 0.3 s, so scipy's L-BFGS-B is not an option either. This module imports only
numpy, and ``tests/test_estimators.py`` holds it to scikit-learn 1.9 itself.

``fit_logistic_regression``: exactly ``LogisticRegression(penalty="l2", C=C, solver="lbfgs",
fit_intercept=True)``, in the scaling of its ``LinearModelLoss``::

    f(W, b) = mean_i loss(y_i, X_i W^T + b) + ||W||^2 / (2 C n)

which has the same minimiser as ``C * sum_i loss + ||W||^2 / 2``. The intercepts ``b`` are not penalised.
Two classes: binomial log-loss with one weight vector, ``classes[1]`` positive. K >= 3 classes: multinomial
(softmax) log-loss with K weight vectors. The solver is L-BFGS (history 10, strong-Wolfe line search)
with scikit-learn's stopping rule: max-abs gradient <= ``tol`` (what it passes to L-BFGS-B as ``gtol``),
or a relative decrease of ``f`` below 64 machine epsilons (its ``ftol``), or ``max_iter`` iterations.
Tests: coefficients, predictions and objective values against real ``LogisticRegression`` fits.

``AdamMLPClassifier``: ``MLPClassifier(solver="adam", activation="relu")`` step for step: the same
initialisation (Glorot-uniform from ``np.random.RandomState(random_state)``), the same shuffle per epoch
from that generator, mini-batches of ``min(200, n)``, the same loss with its L2 term, scikit-learn's Adam
update and its stopping rule (training loss not better by ``tol`` for more than ``n_iter_no_change``
epochs). Tests: in float64 its weights and loss curve equal scikit-learn's to rounding after hundreds of
epochs.
"""


from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
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


@dataclass
class Standardiser:
    """``StandardScaler``: per-column mean and population standard deviation (computed in float64) of the
    data it is fitted on; ``transform`` keeps the input's float dtype."""

    mean: np.ndarray | None = None
    scale: np.ndarray | None = None

    def fit(self, X: np.ndarray) -> "Standardiser":
        # scikit-learn's two-pass computation (sums accumulated in float64, the corrected second pass), call
        # for call: the standardised values, and so everything trained on them, are the same to the last bit.
        X = np.asarray(X, dtype=_float_dtype(X))
        n, eps = len(X), np.finfo(np.float64).eps
        self.mean = X.sum(axis=0, dtype=np.float64) / n
        centred = X - self.mean
        correction = centred.sum(axis=0, dtype=np.float64)
        centred **= 2
        variance = (centred.sum(axis=0, dtype=np.float64) - correction ** 2 / n) / n
        # scikit-learn's test for a constant feature (a variance within rounding of zero): scaled by 1, not 1/0
        constant = variance <= n * eps * variance + (n * self.mean * eps) ** 2
        self.scale = np.where(constant, 1.0, np.sqrt(variance))
        return self

    def transform(self, X: np.ndarray) -> np.ndarray:
        X = np.array(X, dtype=_float_dtype(X))
        X -= self.mean.astype(X.dtype)  # statistics cast to the data's precision first, as scikit-learn does
        X /= self.scale.astype(X.dtype)
        return X


@dataclass
class AdamMLPClassifier:
    """``MLPClassifier(solver="adam", activation="relu", batch_size="auto", shuffle=True,
    early_stopping=False)``; its defaults except ``alpha`` and ``max_iter``, which callers set."""

    hidden_layer_sizes: tuple[int, ...] = (100,)
    alpha: float = 1e-4
    max_iter: int = 200
    learning_rate_init: float = 1e-3
    tol: float = 1e-4
    n_iter_no_change: int = 10
    beta_1: float = 0.9
    beta_2: float = 0.999
    epsilon: float = 1e-8
    random_state: int = 0
    classes_: np.ndarray = field(default=None, init=False, repr=False)
    coefs_: list[np.ndarray] = field(default_factory=list, init=False, repr=False)  # views of one flat array
    intercepts_: list[np.ndarray] = field(default_factory=list, init=False, repr=False)
    loss_curve_: list[float] = field(default_factory=list, init=False, repr=False)
    n_iter_: int = field(default=0, init=False)
    converged_: bool = field(default=False, init=False)

    def fit(self, X: np.ndarray, y: np.ndarray) -> "AdamMLPClassifier":
        X = np.asarray(X, dtype=_float_dtype(X))
        self.classes_, y_index = np.unique(np.asarray(y), return_inverse=True)
        if len(self.classes_) < 2:
            raise ValueError(f"AdamMLPClassifier needs at least two classes, got {self.classes_.tolist()}")
        # One logistic output for two classes, softmax over one-hot targets otherwise (LabelBinarizer's coding).
        Y = (y_index == 1)[:, None] if len(self.classes_) == 2 else np.eye(len(self.classes_), dtype=bool)[y_index]
        rng = np.random.RandomState(self.random_state)
        units = [X.shape[1], *self.hidden_layer_sizes, Y.shape[1]]
        shapes = list(zip(units[:-1], units[1:]))
        # Every weight, and every gradient, is a view into one flat array, so that Adam's elementwise update
        # is a dozen numpy calls per step instead of a dozen per layer (the same arithmetic, element by element).
        size = sum(fan_in * fan_out + fan_out for fan_in, fan_out in shapes)
        params, grads = np.empty(size, X.dtype), np.empty(size, X.dtype)
        param_views, grad_views = _views(params, shapes), _views(grads, shapes)
        for layer, (fan_in, fan_out) in enumerate(shapes):
            bound = np.sqrt(6.0 / (fan_in + fan_out))
            param_views[layer][...] = rng.uniform(-bound, bound, (fan_in, fan_out))
            param_views[len(shapes) + layer][...] = rng.uniform(-bound, bound, fan_out)
        self.coefs_, self.intercepts_ = param_views[:len(shapes)], param_views[len(shapes):]
        first_moment, second_moment = np.zeros_like(params), np.zeros_like(params)
        n, step = len(X), 0
        batch = min(200, n)
        order = np.arange(n)
        best_loss, no_improvement = np.inf, 0
        self.loss_curve_, self.converged_ = [], False
        for self.n_iter_ in range(1, self.max_iter + 1):
            order = order[rng.permutation(n)]  # sklearn.utils.shuffle: the previous order, permuted afresh
            accumulated = 0.0
            for start in range(0, n, batch):
                rows = order[start:start + batch]
                accumulated += self._loss_and_gradients(X[rows], Y[rows], grad_views) * len(rows)
                step += 1
                learning_rate = self.learning_rate_init * np.sqrt(1 - self.beta_2 ** step) / (1 - self.beta_1 ** step)
                first_moment *= self.beta_1
                first_moment += (1 - self.beta_1) * grads
                second_moment *= self.beta_2
                second_moment += (1 - self.beta_2) * grads ** 2
                params += -learning_rate * first_moment / (np.sqrt(second_moment) + self.epsilon)
            self.loss_curve_.append(accumulated / n)
            no_improvement = no_improvement + 1 if self.loss_curve_[-1] > best_loss - self.tol else 0
            best_loss = min(best_loss, self.loss_curve_[-1])
            if no_improvement > self.n_iter_no_change:
                self.converged_ = True
                break
        return self

    def predict(self, X: np.ndarray) -> np.ndarray:
        output = self._forward(np.asarray(X, dtype=self.coefs_[0].dtype))[-1]
        if output.shape[1] == 1:
            return self.classes_[(output.ravel() > 0.5).astype(np.intp)]
        return self.classes_[output.argmax(axis=1)]

    def _forward(self, X: np.ndarray) -> list[np.ndarray]:
        activations = [X]
        last = len(self.coefs_) - 1
        for layer, (coef, intercept) in enumerate(zip(self.coefs_, self.intercepts_)):
            z = activations[-1] @ coef
            z += intercept
            if layer < last:
                np.maximum(z, 0, out=z)
            elif z.shape[1] == 1:
                # The logistic function as scipy's expit computes it, 1 / (1 + exp(-z)) in z's precision, with exp
                # taken in float64 and rounded: numpy's own float32 exp differs from scipy's in the last bit for a
                # sixth of inputs, this for about 3 in 10,000.
                exp = np.exp(-z.astype(np.float64, copy=False)).astype(z.dtype, copy=False)
                z = z.dtype.type(1) / (z.dtype.type(1) + exp)
            else:
                z = np.exp(z - z.max(axis=1, keepdims=True))
                z /= z.sum(axis=1, keepdims=True)
            activations.append(z)
        return activations

    def _loss_and_gradients(self, X: np.ndarray, Y: np.ndarray, grads: list[np.ndarray]) -> float:
        """Mean log-loss of the batch plus ``alpha/2 · ||W||² / n``; its gradients are written into ``grads``
        (coefs, then intercepts)."""
        n, layers = len(X), len(self.coefs_)
        activations = self._forward(X)
        eps = np.finfo(X.dtype).eps
        probability = np.clip(activations[-1], eps, 1 - eps)
        if probability.shape[1] == 1:
            loss = -np.mean(np.where(Y, np.log(probability), np.log(1 - probability)))
        else:
            loss = -np.log(probability[Y]).sum() / n
        loss += 0.5 * self.alpha * sum(float(np.dot(c.ravel(), c.ravel())) for c in self.coefs_) / n
        delta = activations[-1] - Y
        for layer in range(layers - 1, -1, -1):
            coef_grad = grads[layer]
            np.matmul(activations[layer].T, delta, out=coef_grad)
            coef_grad += self.alpha * self.coefs_[layer]
            coef_grad /= n
            np.divide(delta.sum(axis=0), n, out=grads[layers + layer])
            if layer:
                # A one-column delta (two classes) times W.T is an outer product: broadcasting gives the same
                # numbers three times faster than a k = 1 matrix product.
                delta = delta * self.coefs_[layer].T if delta.shape[1] == 1 else delta @ self.coefs_[layer].T
                delta[activations[layer] == 0] = 0  # the ReLU's derivative
        return float(loss)


def _views(flat: np.ndarray, shapes: list[tuple[int, int]]) -> list[np.ndarray]:
    """Coef matrices, then intercept vectors, as consecutive views of ``flat``."""
    views, offset = [], 0
    for shape in [*shapes, *[(b,) for _, b in shapes]]:
        size = int(np.prod(shape))
        views.append(flat[offset:offset + size].reshape(shape))
        offset += size
    return views


def _float_dtype(X: np.ndarray) -> type:
    """float32 stays float32 (as in scikit-learn); anything else is computed in float64."""
    return np.float32 if np.asarray(X).dtype == np.float32 else np.float64
