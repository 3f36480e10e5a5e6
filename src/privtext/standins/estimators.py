"""Two scikit-learn estimators the attackers use, in plain numpy: ``StandardScaler`` and ``MLPClassifier`` with Adam
(``sklearn_mlp``, FEDERATE's Leakage).

Why hand-written: every train job of the claims runs Leakage on its releases, and a job that does not fork from
the warm interpreter (a SLURM job, ``make claims-full``'s) would pay for importing scikit-learn and scipy, 2.5 s
on an AVX2 machine and 0.6 s on an AVX-512 one; and on Leakage's shapes the port is 1.5 to 1.8 times faster than
``MLPClassifier`` itself (``benchmarks/standins.py``). This module imports only numpy, and
``tests/test_estimators.py`` holds it to scikit-learn 1.9 itself. (The ``linear`` attacker's logistic regression
was ported too, until scikit-learn's proved faster per fit: it is scikit-learn's own now.)

``AdamMLPClassifier``: ``MLPClassifier(solver="adam", activation="relu")`` step for step: the same
initialisation (Glorot-uniform from ``np.random.RandomState(random_state)``), the same shuffle per epoch
from that generator, mini-batches of ``min(200, n)``, the same loss with its L2 term, scikit-learn's Adam
update and its stopping rule (training loss not better by ``tol`` for more than ``n_iter_no_change``
epochs). Tests: in float64 its weights and loss curve equal scikit-learn's to rounding after hundreds of
epochs. In float32 the two round differently, so over many epochs their curves may part, and with them the
epoch at which they stop (on Leakage's shapes in ``benchmarks/standins.py``: the same epochs, 99.9% of the
predictions alike).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


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
