"""MAJORITY's model (spec: :mod:`privtext.methods.majority`)."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from privtext.methods.base import Method, Split, as_features


class Majority(Method):
    majority_class: int | None = None

    def fit(self, train: Split, dev: Split) -> dict[str, Any]:
        train_data, dev_data = self.check_split(train, "train"), self.check_split(dev, "dev")
        counts = torch.bincount(train_data.y, minlength=self.n_classes)
        self.majority_class = int(counts.argmax())  # lowest class index wins ties
        dev_accuracy = float((dev_data.y == self.majority_class).double().mean())
        # nothing is optimised: the rule is exact from the first count (no steps, nothing left to converge)
        return {"method": self.name, "epochs_run": 0, "best_epoch": None, "selected_on": None,
                "optimizer_steps": 0, "converged": True,
                "majority_class": self.majority_class, "best_dev_accuracy": dev_accuracy, "epochs": []}

    def _fitted(self) -> int:
        if self.majority_class is None:
            raise RuntimeError("method 'majority' is not fitted; call fit(train, dev) first")
        return self.majority_class

    def predict(self, X: np.ndarray) -> np.ndarray:
        return np.full(len(as_features(X, self.input_dim)), self._fitted(), dtype=np.int64)

    def release(self, X: np.ndarray) -> np.ndarray:
        self._fitted()
        return np.zeros((len(as_features(X, self.input_dim)), 1), dtype=np.float32)

    def predict_released(self, R: np.ndarray) -> np.ndarray:
        return np.full(len(as_features(R, 1)), self._fitted(), dtype=np.int64)

    def state_dict(self) -> dict[str, torch.Tensor]:
        return {"majority_class": torch.tensor([self._fitted()], dtype=torch.int64)}

    @property
    def representation_dim(self) -> int:
        return 1
