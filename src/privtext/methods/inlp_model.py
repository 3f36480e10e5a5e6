"""INLP's model (spec and paper facts: :mod:`privtext.methods.inlp`)."""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np
import torch
from sklearn.linear_model import LogisticRegression

from privtext.methods.base import NeuralMethod, Split, as_features, seed_streams, torch_session
from privtext.training.nn import mlp
from privtext.training.loop import TaskClassifier, TensorSplit, batched_apply, train


def nullspace_projection(rows: np.ndarray, dim: int) -> np.ndarray:
    """Orthogonal projection onto {v : w·v = 0 for every row w} (the intersection of their null spaces)."""
    if len(rows) == 0:
        return np.eye(dim)
    _, singular, vt = np.linalg.svd(rows, full_matrices=False)
    rank = int((singular > singular.max() * max(rows.shape) * np.finfo(float).eps).sum())
    basis = vt[:rank]  # orthonormal basis of the row space
    return np.eye(dim) - basis.T @ basis


def _whitening(centred: np.ndarray, floor: float) -> np.ndarray:
    """Map [D, m] from r-space to whitened coordinates of the span of ``centred``, keeping only directions
    whose singular value exceeds ``floor`` (removed directions carry only rounding noise)."""
    _, singular, vt = np.linalg.svd(centred, full_matrices=False)
    keep = singular > floor
    return vt[keep].T * (np.sqrt(len(centred)) / singular[keep])


def _unit_rows(rows: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    return rows[norms[:, 0] > 0] / norms[norms[:, 0] > 0]


def inlp_projection(
    r: np.ndarray, attributes: Mapping[str, np.ndarray], n_iter: int, seed: int,
) -> tuple[np.ndarray, list[dict[str, float]]]:
    """Iterated null-space projection of ``r`` against linear classifiers of each attribute."""
    rows: list[np.ndarray] = []
    projection = np.eye(r.shape[1])
    centred = r - r.mean(axis=0)
    floor = 1e-6 * np.linalg.norm(centred, ord=2)  # relative to the unprojected data, not the remainder
    log: list[dict[str, float]] = []
    for iteration in range(n_iter):
        # Probes see whitened coordinates of the projected data: well conditioned, so lbfgs converges in
        # a few steps; W·transformᵀ maps their weights back to directions in r-space.
        transform = _whitening(centred @ projection, floor)
        if transform.shape[1] == 0:  # every direction already removed
            break
        features = centred @ projection @ transform
        record: dict[str, float] = {"iteration": iteration}
        for name, z in attributes.items():
            probe = LogisticRegression(max_iter=1000, random_state=seed).fit(features, z)
            record[f"train_accuracy_{name}"] = float(probe.score(features, z))
            rows.append(_unit_rows(probe.coef_ @ transform.T))
        projection = nullspace_projection(np.concatenate(rows), r.shape[1])
        record["rank_removed"] = int(round(r.shape[1] - np.trace(projection)))
        log.append(record)
    return projection, log


class INLP(NeuralMethod):
    projection: torch.Tensor | None = None
    head: TaskClassifier | None = None

    def _validate(self) -> None:
        super()._validate()
        n_iter = self.params["n_iter"]
        if isinstance(n_iter, bool) or not isinstance(n_iter, int) or n_iter < 0:
            raise ValueError(f"n_iter must be a non-negative integer, got {n_iter!r}")
        if not self.protected_attributes:
            raise ValueError("method 'inlp' needs at least one private attribute to protect")

    def fit(self, train_split: Split, dev_split: Split) -> dict[str, Any]:
        encoder_history = super().fit(train_split, dev_split)  # NON-PRIV
        train_data, dev_data = self.check_split(train_split, "train"), self.check_split(dev_split, "dev")
        encoder = self._fitted().encoder
        head_seed, shuffle_seed = seed_streams(self.seed + 1, 2)
        with torch_session(self.threads, head_seed):
            r_train, r_dev = (batched_apply(encoder, x.to(self.device)).cpu() for x in (train_data.x, dev_data.x))
            z_train = {a: train_data.z[a].numpy() for a in self.protected_attributes}
            projection, log = inlp_projection(r_train.double().numpy(), z_train, self.params["n_iter"], self.seed)
            self.projection = torch.from_numpy(projection).float()
            p = self.params
            self.head = TaskClassifier(mlp([self.representation_dim, *p["classifier_hidden"], self.n_classes],
                                           p["dropout"], p["activation"])).to(self.device)
            history = train(
                self.head, TensorSplit(r_train @ self.projection, train_data.y, {}).to(self.device),
                TensorSplit(r_dev @ self.projection, dev_data.y, {}).to(self.device), self.settings,
                generator=torch.Generator().manual_seed(shuffle_seed),
            )
        return {"method": self.name, **history, "inlp": log, "encoder": encoder_history}

    def _projected(self, X: np.ndarray) -> torch.Tensor:
        if self.projection is None or self.head is None:
            raise RuntimeError("method 'inlp' is not fitted; call fit(train, dev) first")
        encoder, projection = self._fitted().encoder, self.projection.to(self.device)
        return self.apply(lambda x: encoder(x) @ projection, as_features(X, self.input_dim))

    def release(self, X: np.ndarray) -> np.ndarray:
        return self._projected(X).numpy().astype(np.float32)

    def predict(self, X: np.ndarray) -> np.ndarray:
        return self.predict_released(self.release(X))

    def predict_released(self, R: np.ndarray) -> np.ndarray:
        if self.head is None:
            raise RuntimeError("method 'inlp' is not fitted; call fit(train, dev) first")
        self.head.eval()
        return self.apply(self.head, as_features(R, self.representation_dim)).argmax(dim=1).numpy()

    def state_dict(self) -> dict[str, torch.Tensor]:
        if self.projection is None or self.head is None:
            raise RuntimeError("method 'inlp' is not fitted; call fit(train, dev) first")
        encoder = self._fitted().encoder
        tensors = {f"encoder.{k}": v for k, v in encoder.state_dict().items()}
        tensors.update({f"classifier.{k}": v for k, v in self.head.net.state_dict().items()})
        tensors["projection"] = self.projection
        return {k: v.detach().clone().contiguous() for k, v in tensors.items()}
