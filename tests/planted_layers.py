"""Privacy layers wrong on purpose: the faults every audit must prove wrong (tests/test_audit.py searches for
them, tests/test_release_audit.py finds them on the release path of real texts)."""

from __future__ import annotations

import numpy as np
import torch

from privtext.privacy.layers import PrivacyLayer, laplace_noise


class ScaleOffByD(PrivacyLayer):
    """Wrong on purpose: noise D times smaller than the layer states."""

    def __init__(self, kind: str, epsilon: float, dim: int, *, generator: np.random.Generator) -> None:
        super().__init__(kind, epsilon, dim, generator=generator)
        self.scale = self.scale / dim


class SharedDraw(PrivacyLayer):
    """Wrong on purpose: one noise vector per forward pass, shared by every example of the batch."""

    def forward(self, v: torch.Tensor) -> torch.Tensor:
        return self.normalise(v) + laplace_noise((1, self.dim), self.scale, self.generator, dtype=v.dtype)


class NormaliseAfterNoise(PrivacyLayer):
    """Wrong on purpose: the noise is added to the raw input and the sum normalised (the sensitivity the noise
    is calibrated to is the normalised vector's, not the raw input's)."""

    def forward(self, v: torch.Tensor) -> torch.Tensor:
        return self.normalise(v + laplace_noise(v.shape, self.scale, self.generator, dtype=v.dtype))
