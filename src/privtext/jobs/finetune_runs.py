"""One fine-tuned grid point end to end, on files: the run folder a frozen-feature point writes.

Reads the dataset's text (parquet) instead of frozen features, fine-tunes the encoder with the method's head
(:mod:`privtext.jobs.finetune`), and writes ``model.safetensors``, ``released_{train,dev,test}.npy``,
``predictions.parquet`` and ``metrics.json`` (``finetune: true``), so the ``attack`` rule and everything
downstream run on it unchanged.
"""

from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import Any, Mapping

import numpy as np
import pandas as pd

from privtext.data import SPLITS, read_meta
from privtext.plan.grid import GridPoint
from privtext.jobs.runs import TrainJob, point_record, write_point_record, write_release
from privtext.data.sampling import seeded_rows

log = logging.getLogger(__name__)

# The method's own optimisation settings are for a head over frozen features; fine-tuning replaces them
# with DPNR's (docs/methods.md, "The reference code's departures"). patience None: every epoch runs, then the best dev epoch is restored.
OPTIMISATION_KEYS = ("lr", "epochs", "batch_size", "weight_decay")


def finetune_hyperparameters(method: str, settings: Mapping[str, Any], grid_params: Mapping[str, Any],
                             tuning: Mapping[str, Any]) -> dict[str, Any]:
    """The method's resolved hyper-parameters (paper defaults < config overrides < grid values) with the
    fine-tuning optimisation in place of the head's, and ``finetune: true``."""
    from privtext.methods import get_spec

    spec = get_spec(method)
    if not spec.finetunable:
        raise ValueError(f"method {method!r} cannot be fine-tuned end to end (only the shared architecture's "
                         "methods can: its model is not privtext.methods.base:NeuralMethod)")
    resolved = spec.resolve(settings, grid_params)
    return {**resolved, **{k: tuning[k] for k in OPTIMISATION_KEYS}, "optimizer": "adamw", "patience": None,
            "finetune": True}


def finetune_grid_point(point: GridPoint, job: TrainJob) -> dict[str, Any]:
    """Fine-tune the encoder ``job.settings['finetune']['name']`` with the point's method's head.

    ``job.settings`` are the config's overrides of the method's defaults plus, under ``finetune``, the encoder
    (``name``, ``pooling``, ``sensitive_words``) and the :class:`~privtext.jobs.finetune.FinetuneSettings` keys
    (and ``save_encoder``). Training uses a seeded sample of at most ``job.max_train`` examples (the same rows
    as the frozen pipeline's cap); dev selects the epoch; every split is released in full."""
    import torch
    from safetensors.torch import save_file

    from privtext.runtime.devices import autocast_dtype, resolve_device
    from privtext.encoding.encoders import EncoderError, load_encoder
    from privtext.jobs.finetune import (
        FinetunedModel, FinetuneSettings, Tokens, dropped_tokens, encode, epoch_seed, fit_end_to_end, parameter_checksum,
    )
    from privtext.methods import build_method
    from privtext.methods.base import NeuralMethod, seed_streams, torch_session

    started = time.perf_counter()
    method, mu, seed, grid_params = point.method, point.mu, point.seed, point.grid_values
    data_dir, threads, max_train = job.data_dir, job.threads, job.max_train
    method_settings = {k: v for k, v in job.settings.items() if k != "finetune"}
    tuning_config = dict(job.settings["finetune"])
    tuning = FinetuneSettings.from_mapping(tuning_config)
    hyperparameters = finetune_hyperparameters(method, method_settings, grid_params, tuning.as_dict())
    sensitive = list(tuning_config.get("sensitive_words", []))

    meta = read_meta(data_dir)
    attributes = list(meta["private_attributes"])
    frames = {s: pd.read_parquet(Path(data_dir) / f"{s}.parquet", columns=["id", "text", "y", *[f"z_{a}" for a in attributes]])
              for s in SPLITS}
    used = resolve_device(job.device, job.deterministic)
    loaded = load_encoder(tuning_config["name"], used, tuning_config.get("revision"))
    limit = getattr(loaded.model.config, "max_position_embeddings", None)
    if limit is not None and tuning.max_length > limit:
        raise EncoderError(f"finetune.max_length {tuning.max_length} exceeds encoder '{loaded.spec.name}' positions ({limit})")
    if tuning.pooling == "pooler" and not loaded.pooler_trained:
        raise EncoderError(f"encoder '{loaded.spec.name}' has no trained pooler; use pooling 'cls' or 'mean'")

    model_method = build_method(
        method, hyperparameters, input_dim=loaded.spec.hidden_size, n_classes=len(meta["label_names"]),
        attribute_sizes={a: len(v) for a, v in meta["private_attributes"].items()}, seed=seed, threads=threads,
        device=used,
    )
    assert isinstance(model_method, NeuralMethod)
    init_seed, shuffle_seed, noise_seed, dropout_seed = seed_streams(seed, 4)

    def release_tokens(split: str) -> Tokens:
        """The split as released: word dropout with the point's seed, as the frozen pipeline extracts it."""
        frame = frames[split]
        return dropped_tokens(loaded, frame["text"].tolist(), frame["id"].tolist(), mu, seed, sensitive, tuning.max_length)

    train_frame = frames["train"].iloc[seeded_rows(len(frames["train"]), max_train, seed)]
    unchanged = mu == 0 and not sensitive
    fixed_train = Tokens(loaded, train_frame["text"].tolist(), tuning.max_length) if unchanged else None

    def train_tokens(epoch: int) -> Tokens:
        """Training texts of one epoch: a fresh word-dropout draw per epoch (DPNR Algorithm 1)."""
        if fixed_train is not None:
            return fixed_train
        return dropped_tokens(loaded, train_frame["text"].tolist(), train_frame["id"].tolist(), mu,
                              epoch_seed(dropout_seed, epoch), sensitive, tuning.max_length)

    y = {s: frames[s]["y"].to_numpy(np.int64) for s in SPLITS}
    z_train = {a: train_frame[f"z_{a}"].to_numpy(np.int64) for a in attributes}
    dev_tokens = release_tokens("dev")
    checksum_before = parameter_checksum(loaded.model)
    with torch_session(threads, init_seed):
        # The head is initialised on the CPU, then moved: a seed gives the same initial head on every device.
        model_method.model = model_method.build_model(noise_seed).to(used)
        model = FinetunedModel(loaded.model, model_method.model, tuning.pooling, loaded.spec.name).to(used)
        history = fit_end_to_end(model_method, model, train_tokens, train_frame["y"].to_numpy(np.int64), z_train,
                                 dev_tokens, y["dev"], tuning, generator=torch.Generator().manual_seed(shuffle_seed))
        train_seconds = time.perf_counter() - started
        features = {s: encode(model, dev_tokens if s == "dev" else release_tokens(s), used, tuning.eval_batch_size)
                    for s in SPLITS}
    checksum_after = parameter_checksum(loaded.model)

    out_dir = Path(job.out_dir)
    # From the fine-tuned encoder's features on, a point is released as a frozen-feature point is.
    metrics = write_release(model_method, features, y, {s: frames[s]["id"].to_numpy() for s in SPLITS}, out_dir)

    # The released .npy are what downstream reads; the weights are for reuse on new text. Saving the fine-tuned
    # encoder is the default because it cannot be rebuilt bit for bit elsewhere (GPU kernels differ) and
    # predicting on new text needs it; save_encoder: false keeps the head only for large BERT-base grids.
    save_encoder = bool(tuning_config.get("save_encoder", True))
    state = {f"head.{k}": v for k, v in model_method.state_dict().items()}
    if save_encoder:
        state.update({f"encoder.{k}": v.detach().cpu().contiguous() for k, v in loaded.model.state_dict().items()})
    state = {k: v.detach().cpu().contiguous() for k, v in state.items()}
    save_file(_untied(state), str(out_dir / "model.safetensors"), metadata={
        "encoder": loaded.spec.name, "encoder_saved": str(save_encoder).lower(),
        "encoder_sha256_before": checksum_before, "encoder_sha256_after": checksum_after})

    result = point_record(
        point, job, meta=meta, model=model_method, hyperparameters=hyperparameters, metrics=metrics,
        n_train=len(train_frame), n_train_available=len(frames["train"]), history=history, started=started,
        finetune_settings={**tuning.as_dict(), "save_encoder": save_encoder, "sensitive_words": sensitive,
                           "lr_schedule": "linear", "word_dropout_in_training": "fresh per epoch"},
        # Parameter checksums (float32 bytes) of the encoder before and after: differ iff fine-tuning moved it.
        encoder_checksum_before=checksum_before, encoder_checksum_after=checksum_after,
        **loaded.spec.as_dict(), train_seconds=round(train_seconds, 3),
        autocast=str(autocast_dtype(used) or "none").replace("torch.", ""),  # inference only; training is fp32
    )
    write_point_record(point, job, meta, result)
    return result


def _untied(state: dict) -> dict:
    """Copies of tensors that share storage (tied embeddings): safetensors refuses shared tensors."""
    seen: set[int] = set()
    out = {}
    for key, value in state.items():
        pointer = value.untyped_storage().data_ptr()
        out[key] = value.clone() if pointer in seen else value
        seen.add(pointer)
    return out
