"""Where torch work runs: ``device: auto | cpu | cuda`` resolved once, with a clear error, and recorded.

``auto`` picks CUDA when torch sees a GPU, else the CPU. A GPU is chosen with ``CUDA_VISIBLE_DEVICES`` (the
way cluster schedulers hand them out), so ``cuda`` means the first visible one. torch is imported inside the
functions: importing this module costs nothing (the Snakefile and fairness jobs never load torch).

On CUDA, ``deterministic`` (the config's top-level key, default true) asks torch for deterministic kernels,
so a job rerun on the same GPU gives the same numbers; the CPU needs no such request (its kernels are
deterministic at a fixed thread count, :mod:`privtext.runtime.threads`).
"""

from __future__ import annotations

import contextlib
import os
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import torch

DEVICES = ("auto", "cpu", "cuda")


class DeviceError(ValueError):
    """A device was requested that does not exist here; the message says what to use instead."""


def resolve_device(requested: "str | torch.device" = "auto", deterministic: bool | None = None) -> "torch.device":
    """``auto`` -> CUDA when available, else CPU; ``cpu``; ``cuda`` (or ``cuda:i``) only when a GPU is usable.
    A job's entry point passes ``deterministic`` (:func:`set_deterministic`); None leaves torch as it is."""
    import torch

    if isinstance(requested, torch.device):
        requested = str(requested)
    if requested == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if not isinstance(requested, str) or not (requested in DEVICES or requested.startswith("cuda:")):
        raise DeviceError(f"device: {requested!r} is not one of {', '.join(DEVICES)}")
    try:
        device = torch.device(requested)
    except RuntimeError as error:
        raise DeviceError(f"device: {requested!r} is not a device torch knows ({error})") from error
    if device.type == "cuda" and not torch.cuda.is_available():
        raise DeviceError(
            f"device: {requested} was requested but torch.cuda.is_available() is False "
            "(no GPU / CPU-only torch build); use device: auto or cpu"
        )
    if deterministic is not None:
        set_deterministic(device, deterministic)
    return device


# cuBLAS is deterministic only with a fixed workspace (torch's "Reproducibility" notes); read when cuBLAS
# starts, so it is set before the first CUDA kernel.
CUBLAS_WORKSPACE = ":4096:8"


def set_deterministic(device: "torch.device", deterministic: bool) -> None:
    """On CUDA, make torch use deterministic kernels (``True``: an operation without one fails, naming
    itself; set ``deterministic: false`` to allow the faster nondeterministic kernels). Nothing changes on the
    CPU, whose numbers stay those of every earlier run."""
    import torch

    if device.type != "cuda":
        return
    if deterministic:
        os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", CUBLAS_WORKSPACE)
    torch.use_deterministic_algorithms(bool(deterministic))
    torch.backends.cudnn.deterministic = bool(deterministic)
    torch.backends.cudnn.benchmark = False  # autotuning picks kernels by timing, so by chance


def autocast_dtype(device: "torch.device") -> "torch.dtype | None":
    """Mixed precision used for inference on ``device``: bf16 (or fp16 on GPUs without bf16) on CUDA; none
    on CPU, which stays fp32 so its results are exact and deterministic."""
    import torch

    if device.type != "cuda":
        return None
    return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16


def autocast(device: "torch.device") -> contextlib.AbstractContextManager:
    """``torch.autocast`` with :func:`autocast_dtype` on CUDA, a no-op elsewhere."""
    import torch

    dtype = autocast_dtype(device)
    return contextlib.nullcontext() if dtype is None else torch.autocast(device.type, dtype=dtype)


def device_record(requested: "str | torch.device", device: "torch.device") -> dict[str, Any]:
    """What a result file records: the device actually used, what was asked for, and the GPU's name."""
    import torch

    record: dict[str, Any] = {"device": str(device), "device_requested": str(requested)}
    if device.type == "cuda":
        record["device_name"] = torch.cuda.get_device_name(device)
        record["deterministic"] = torch.are_deterministic_algorithms_enabled()
    return record
