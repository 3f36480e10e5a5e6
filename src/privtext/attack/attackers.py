"""Fresh attackers on released representations (docs/methods.md, "Threat model" and "Measures").

An attacker is trained after the model is frozen, on the released (noisy) representation of one split,
selected on another and scored on test. Three are available (``ATTACKERS``):

- ``mlp`` (DPNR): torch MLP, input → 512 → ReLU → classes (two linear layers), Adam, trained on train,
  epoch with the best dev accuracy kept (early stopping), scored on test.
- ``sklearn_mlp`` (FEDERATE's Leakage): StandardScaler + ``MLPClassifier(alpha=1, max_iter=1000)`` as in
  the FEDERATE code, trained on dev only, scored on test; it never reads the train split.
- ``linear``: StandardScaler + ``LogisticRegression`` trained on train, ``C`` chosen on dev from a grid.

``linear`` is scikit-learn's own ``LogisticRegression``, imported when it first runs (a job forked from the warm
interpreter has it already). ``sklearn_mlp`` and the standardisation are numpy ports in
:mod:`privtext.standins.estimators`, held to scikit-learn by its tests: the port of ``MLPClassifier`` is 1.5 to 1.8
times faster on Leakage's shapes, and the claims' attackers then import no scikit-learn at all
(docs/performance.md, "The stand-ins against their libraries").

Every attacker standardises with statistics of its own training data: this is post-processing of the
release, so it cannot change the DP guarantee, and it keeps optimisation stable when Laplace noise makes
coordinates large.
"""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass, field, fields
from typing import Any, Mapping, Sequence

import numpy as np
import torch

from privtext.measures import metrics
from privtext.runtime.devices import resolve_device
from privtext.standins.estimators import AdamMLPClassifier, Standardiser
from privtext.data.sampling import seeded_rows
from privtext.runtime.threads import limited_threads

SPLITS = ("train", "dev", "test")


@dataclass
class AttackData:
    """One attribute's data as an attacker sees it: fit on ``fit``, select on ``select``, predict ``test``."""

    X_fit: np.ndarray
    y_fit: np.ndarray
    X_select: np.ndarray | None
    y_select: np.ndarray | None
    X_test: np.ndarray


@dataclass
class TorchMLPAttacker:
    """DPNR attacker: two linear layers with a 512-unit ReLU hidden layer; best dev-accuracy epoch kept."""

    hidden: int = 512
    lr: float = 1e-3
    batch_size: int = 256
    max_epochs: int = 30
    patience: int = 5
    weight_decay: float = 0.0
    device: str | torch.device = "cpu"  # where it trains; data and predictions stay numpy on the CPU
    fit_split: str = field(default="train", init=False)
    select_split: str | None = field(default="dev", init=False)

    def fit_predict(self, data: AttackData, seed: int) -> tuple[np.ndarray, dict[str, Any]]:
        from privtext.training.loop import TaskClassifier, TensorSplit, TrainingSettings, batched_apply, train

        classes, y_fit = np.unique(data.y_fit, return_inverse=True)
        # Selection labels as class indices; a value the fitting split never had can only be missed
        # (-100 is ignored by the dev loss and never equals a prediction).
        position = np.clip(np.searchsorted(classes, data.y_select), 0, len(classes) - 1)
        y_select = np.where(classes[position] == data.y_select, position, -100)
        scaler = Standardiser().fit(data.X_fit)
        device = resolve_device(self.device)

        def tensors(X: np.ndarray) -> torch.Tensor:
            return torch.as_tensor(scaler.transform(X), dtype=torch.float32, device=device)

        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)  # layer initialisation uses the global generator; fork keeps it local
            model = TaskClassifier(torch.nn.Sequential(
                torch.nn.Linear(data.X_fit.shape[1], self.hidden), torch.nn.ReLU(),
                torch.nn.Linear(self.hidden, len(classes)))).to(device)  # initialised on the CPU: same weights anywhere
        settings = TrainingSettings(epochs=self.max_epochs, batch_size=self.batch_size, lr=self.lr,
                                    weight_decay=self.weight_decay, patience=self.patience, select_on="accuracy",
                                    # the attacker's own schedule (DPNR's), not the methods' training rule
                                    min_steps_per_epoch=1, min_epochs=1)
        history = train(
            model, TensorSplit(tensors(data.X_fit), torch.as_tensor(y_fit, dtype=torch.long, device=device), {}),
            TensorSplit(tensors(data.X_select), torch.as_tensor(y_select, dtype=torch.long, device=device), {}),
            settings, generator=torch.Generator().manual_seed(seed),
        )
        info = {"best_epoch": history["best_epoch"], "epochs_run": history["epochs_run"],
                "selection_accuracy": history["best_dev_accuracy"]}
        return classes[batched_apply(model, tensors(data.X_test)).argmax(dim=1).cpu().numpy()], info

    def config(self) -> dict[str, Any]:
        return {
            "kind": "torch MLP in→hidden→ReLU→classes", "hidden": self.hidden, "lr": self.lr,
            "batch_size": self.batch_size, "max_epochs": self.max_epochs, "patience": self.patience,
            "weight_decay": self.weight_decay, "selection": "best dev accuracy over epochs",
        }


@dataclass
class SklearnMLPAttacker:
    """FEDERATE's Leakage: scikit-learn MLPClassifier fitted on dev, scored on test (never sees train)."""

    # Defaults are those of the FEDERATE code (alpha=1, max_iter=1000, no early stopping).
    hidden_layer_sizes: tuple[int, ...] = (100,)
    alpha: float = 1.0
    max_iter: int = 1000
    early_stopping: bool = False
    fit_split: str = field(default="dev", init=False)
    select_split: str | None = field(default=None, init=False)

    def fit_predict(self, data: AttackData, seed: int) -> tuple[np.ndarray, dict[str, Any]]:
        scaler = Standardiser().fit(data.X_fit)
        X_fit, X_test = scaler.transform(data.X_fit), scaler.transform(data.X_test)
        if self.early_stopping:
            return self._fit_predict_early_stopping(X_fit, data.y_fit, X_test, seed)
        model = AdamMLPClassifier(hidden_layer_sizes=self.hidden_layer_sizes, alpha=self.alpha,
                                  max_iter=self.max_iter, random_state=seed).fit(X_fit, data.y_fit)
        info = {"n_iter": model.n_iter_, "converged": model.converged_, "early_stopping": False}
        return model.predict(X_test), info

    def _fit_predict_early_stopping(self, X_fit: np.ndarray, y_fit: np.ndarray, X_test: np.ndarray,
                                    seed: int) -> tuple[np.ndarray, dict[str, Any]]:
        """scikit-learn's own estimator for this option (not in FEDERATE's code; its stratified validation
        split is not part of the port)."""
        from sklearn.exceptions import ConvergenceWarning
        from sklearn.neural_network import MLPClassifier

        # sklearn's early-stopping split is stratified and fails when a class has a single example.
        early_stopping = bool(np.unique(y_fit, return_counts=True)[1].min() >= 2)
        model = MLPClassifier(hidden_layer_sizes=self.hidden_layer_sizes, alpha=self.alpha, max_iter=self.max_iter,
                              early_stopping=early_stopping, random_state=seed)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", ConvergenceWarning)
            model.fit(X_fit, y_fit)
        converged = not any(issubclass(w.category, ConvergenceWarning) for w in caught)
        return model.predict(X_test), {"n_iter": int(model.n_iter_), "converged": converged,
                                       "early_stopping": early_stopping}

    def config(self) -> dict[str, Any]:
        return {
            "kind": "scikit-learn's MLPClassifier with Adam (privtext.standins.estimators; scikit-learn itself with "
                    "early_stopping), StandardScaler first", "hidden_layer_sizes": list(self.hidden_layer_sizes),
            "alpha": self.alpha, "max_iter": self.max_iter, "early_stopping": self.early_stopping,
            "selection": "held-out tenth of dev" if self.early_stopping else None,
        }


@dataclass
class LinearAttacker:
    """Logistic regression fitted on train; ``C`` is the value with the best dev accuracy (ties → the
    strongest regularisation). The grid is not capped where the choice falls: while the best ``C`` is the
    grid's largest (or smallest) value, the next decade beyond it is tried too, up to ``max_extensions``
    times, so a leak that only weak regularisation exposes is not understated by the grid's edge (a
    one-value grid is a fixed ``C``)."""

    c_grid: tuple[float, ...] = (0.001, 0.01, 0.1, 1.0, 10.0, 100.0)
    max_extensions: int = 4
    max_iter: int = 1000
    fit_split: str = field(default="train", init=False)
    select_split: str | None = field(default="dev", init=False)

    def fit_predict(self, data: AttackData, seed: int) -> tuple[np.ndarray, dict[str, Any]]:
        from sklearn.exceptions import ConvergenceWarning
        from sklearn.linear_model import LogisticRegression

        scaler = Standardiser().fit(data.X_fit)
        X_fit, X_sel = scaler.transform(data.X_fit), scaler.transform(data.X_select)
        models, dev_accuracy = {}, {}

        def fit(c: float) -> None:
            model = LogisticRegression(C=c, solver="lbfgs", max_iter=self.max_iter)
            with warnings.catch_warnings():
                # lbfgs at max_iter is still a valid attacker; its iterations are in the details
                warnings.simplefilter("ignore", ConvergenceWarning)
                model.fit(X_fit, data.y_fit)
            models[c], dev_accuracy[c] = model, float(np.mean(model.predict(X_sel) == data.y_select))

        for c in sorted(self.c_grid):
            fit(c)
        for _ in range(self.max_extensions if len(self.c_grid) > 1 else 0):  # one value: a fixed C
            best = max(sorted(dev_accuracy), key=lambda c: dev_accuracy[c])  # ties: the smallest C
            tried = sorted(dev_accuracy)
            if best == tried[-1]:
                fit(best * 10.0)
            elif best == tried[0]:
                fit(best / 10.0)
            else:
                break
        best = max(sorted(dev_accuracy), key=lambda c: dev_accuracy[c])
        info = {"C": float(best), "selection_accuracy": dev_accuracy[best], "n_iter": int(models[best].n_iter_.max()),
                "dev_accuracy_per_C": {f"{c:g}": a for c, a in sorted(dev_accuracy.items())}}
        return models[best].predict(scaler.transform(data.X_test)), info

    def config(self) -> dict[str, Any]:
        return {
            "kind": "scikit-learn's LogisticRegression, lbfgs, after StandardScaler (privtext.standins' port)", "c_grid": list(self.c_grid),
            "max_extensions": self.max_extensions, "max_iter": self.max_iter,
            "selection": "C with best dev accuracy; the grid extends by a decade past an edge that wins",
        }


ATTACKERS = {"mlp": TorchMLPAttacker, "sklearn_mlp": SklearnMLPAttacker, "linear": LinearAttacker}


def run_attacks(
    released: Mapping[str, np.ndarray],
    Z: Mapping[str, Mapping[str, np.ndarray]],
    attribute_kinds: Mapping[str, str],
    attackers: Sequence[str],
    seed: int,
    max_train: int | None = None,
    threads: int = 1,
    attacker_options: Mapping[str, Mapping[str, Any]] | None = None,
    device: str | torch.device = "cpu",
) -> dict[str, Any]:
    """Train each named attacker for each attribute of ``attribute_kinds`` and score it on test.

    ``released`` maps split → representation matrix, ``Z`` maps split → attribute → int labels. When
    ``max_train`` is set, the attacker's fitting split is capped by a seeded sample (same rows for every
    attribute). ``attacker_options`` maps an attacker name to constructor arguments overriding its
    defaults (e.g. ``{"sklearn_mlp": {"early_stopping": True}}``); the resolved values are in ``config``.
    ``device`` is where torch attackers train (scikit-learn ones always run on the CPU).
    Returns a JSON-serialisable dict::

        {"settings": {...},
         "attackers": {name: {"config": {..., "fit_split", "select_split", "test_split"},
                              "attributes": {attr: {"kind", "accuracy", "macro_f1", "majority_rate",
                                                    "majority_class", "n_train", "n_test", "n_classes_train",
                                                    "single_class", "details", "seconds"}},
                              "empirical_privacy": {"demographic"?: float, "entity"?: float},
                              "demographic_mean_accuracy"?: float, "entity_micro_f1"?: float,
                              "predictions": {attr: [int, ...]},  # test predictions, in test order
                              "seconds": float}}}

    ``majority_rate`` is the test accuracy of always predicting the majority class of the full train split.
    """
    _validate(released, Z, attribute_kinds, attackers, max_train, threads)
    stray = sorted(set(attacker_options or {}) - set(attackers))
    if stray:
        raise ValueError(f"attacker_options given for {stray}, which are not among attackers {list(attackers)}")
    device = resolve_device(device)
    built = {name: _build(name, (attacker_options or {}).get(name, {}), device) for name in attackers}
    results: dict[str, Any] = {
        "settings": {
            "attackers": list(attackers), "seed": int(seed), "max_train": max_train, "threads": int(threads),
            "device": str(device),
            "attribute_kinds": dict(attribute_kinds),
            "attacker_options": {k: dict(v) for k, v in (attacker_options or {}).items()},
        },
        "attackers": {},
    }
    with limited_threads(threads):
        for name in attackers:
            results["attackers"][name] = _run_one(built[name], released, Z, attribute_kinds, seed, max_train)
    return results


def _build(name: str, options: Mapping[str, Any], device: torch.device) -> Any:
    if "device" in {f.name for f in fields(ATTACKERS[name])}:  # torch attackers train on the run's device
        options = {"device": device, **options}
    try:
        return ATTACKERS[name](**options)
    except TypeError as error:
        raise ValueError(f"bad options {dict(options)} for attacker {name!r}: {error}") from None


def _run_one(
    attacker: Any,
    released: Mapping[str, np.ndarray],
    Z: Mapping[str, Mapping[str, np.ndarray]],
    attribute_kinds: Mapping[str, str],
    seed: int,
    max_train: int | None,
) -> dict[str, Any]:
    """One attacker over every attribute, with its empirical privacy."""
    started = time.perf_counter()
    fit_rows = seeded_rows(len(released[attacker.fit_split]), max_train, seed)
    per_attribute, predictions = {}, {}
    for attribute, kind in attribute_kinds.items():
        labels = {split: np.asarray(Z[split][attribute]).astype(np.int64) for split in SPLITS}
        per_attribute[attribute], predictions[attribute] = _attack_attribute(attacker, released, labels, fit_rows, seed)
        per_attribute[attribute] = {"kind": kind, **per_attribute[attribute]}
    accuracy = {a: r["accuracy"] for a, r in per_attribute.items()}
    y_test = {a: np.asarray(Z["test"][a]).astype(np.int64) for a in attribute_kinds}
    summary: dict[str, Any] = {
        "config": {**attacker.config(), "fit_split": attacker.fit_split, "select_split": attacker.select_split,
                   "test_split": "test"},
        "attributes": per_attribute,
        "empirical_privacy": metrics.empirical_privacy(attribute_kinds, accuracy, y_test, predictions),
    }
    demographic = [a for a, k in attribute_kinds.items() if k == "demographic"]
    entities = [a for a, k in attribute_kinds.items() if k == "entity"]
    if demographic:
        summary["demographic_mean_accuracy"] = float(np.mean([accuracy[a] for a in demographic]))
    if entities:
        summary["entity_micro_f1"] = metrics.entity_micro_f1(
            {a: y_test[a] for a in entities}, {a: predictions[a] for a in entities}
        )
    summary["predictions"] = {a: p.tolist() for a, p in predictions.items()}
    summary["seconds"] = time.perf_counter() - started
    return summary


def _attack_attribute(
    attacker: Any,
    released: Mapping[str, np.ndarray],
    labels: Mapping[str, np.ndarray],
    fit_rows: np.ndarray,
    seed: int,
) -> tuple[dict[str, Any], np.ndarray]:
    """Fit, predict test and score one attribute; ``labels`` maps split → int labels of this attribute."""
    started = time.perf_counter()
    y_fit = labels[attacker.fit_split][fit_rows]
    classes = np.unique(y_fit)
    if len(classes) == 1:
        # Nothing to learn: the only sensible attacker predicts the one class it has seen.
        y_pred, details = np.full(len(labels["test"]), classes[0], dtype=np.int64), {}
    else:
        select = attacker.select_split
        data = AttackData(
            X_fit=np.asarray(released[attacker.fit_split])[fit_rows], y_fit=y_fit,
            X_select=np.asarray(released[select]) if select else None, y_select=labels[select] if select else None,
            X_test=np.asarray(released["test"]),
        )
        y_pred, details = attacker.fit_predict(data, seed)
    y_pred = np.asarray(y_pred, dtype=np.int64)
    scores = {
        **metrics.attack_scores(labels, y_pred, len(y_fit)),
        "n_classes_train": int(len(classes)),
        "single_class": bool(len(classes) == 1),
        "details": details,
        "seconds": time.perf_counter() - started,
    }
    return scores, y_pred


def _validate(
    released: Mapping[str, np.ndarray],
    Z: Mapping[str, Mapping[str, np.ndarray]],
    attribute_kinds: Mapping[str, str],
    attackers: Sequence[str],
    max_train: int | None,
    threads: int,
) -> None:
    unknown = [a for a in attackers if a not in ATTACKERS]
    if unknown:
        raise ValueError(f"unknown attacker(s) {unknown}; available: {sorted(ATTACKERS)}")
    if not attribute_kinds:
        raise ValueError("attribute_kinds is empty: there is nothing to attack")
    bad_kinds = {a: k for a, k in attribute_kinds.items() if k not in ("demographic", "entity")}
    if bad_kinds:
        raise ValueError(f"unknown attribute kind(s) {bad_kinds}; expected 'demographic' or 'entity'")
    if max_train is not None and max_train < 1:
        raise ValueError(f"max_train must be a positive int or None, got {max_train!r}")
    if threads < 1:
        raise ValueError(f"threads must be >= 1, got {threads!r}")
    for split in SPLITS:
        if split not in released or split not in Z:
            raise ValueError(f"split {split!r} missing from released ({sorted(released)}) or Z ({sorted(Z)})")
        X = np.asarray(released[split])
        if X.ndim != 2 or len(X) == 0:
            raise ValueError(f"released[{split!r}] must be a non-empty 2-D array, got shape {X.shape}")
        if not np.all(np.isfinite(X)):
            raise ValueError(f"released[{split!r}] contains NaN or infinite values")
        for attribute in attribute_kinds:
            if attribute not in Z[split]:
                raise ValueError(f"Z[{split!r}] has no labels for attribute {attribute!r}")
            if len(Z[split][attribute]) != len(X):
                raise ValueError(
                    f"Z[{split!r}][{attribute!r}] has {len(Z[split][attribute])} labels for {len(X)} representations"
                )
