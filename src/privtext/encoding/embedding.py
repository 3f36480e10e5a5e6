"""The ``embed`` stage: every split of a dataset -> frozen features ``{split}.npy`` + ``meta.json``.

Text datasets go through word dropout (docs/methods.md, "Word dropout") and the frozen encoder; tabular datasets pass their ``x_*``
feature columns through unchanged (they have no encoder).
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any, Mapping

import numpy as np
import pandas as pd

from privtext.data import SPLITS
from privtext.runtime.arrays import save_finite
from privtext.runtime.provenance import sha256_file
from privtext.runtime.devices import device_record
from privtext.encoding.encoders import extract_embeddings, load_encoder, tabular_features
from privtext.encoding.names import TABULAR_ENCODER
from privtext.runtime.provenance import versions
from privtext.encoding.word_dropout import apply_word_dropout


def embed_dataset(
    *,
    data_dir: str | Path,
    out_dir: str | Path,
    encoder: str,
    settings: Mapping[str, Any],
    mu: float,
    seed: int,
    threads: int = 1,
    device: str = "auto",
    deterministic: bool = True,
    progress: bool = True,
) -> dict[str, Any]:
    """Write ``{split}.npy`` (float32, row order of the split's parquet) and ``meta.json`` to ``out_dir``.

    ``settings`` are the config's ``encoder`` block (``revision`` pins the weights). ``device`` (``auto``,
    ``cpu``, ``cuda``, with ``deterministic`` kernels on CUDA) is where the encoder runs; ``meta.json``
    records the device used. Features holding NaN or inf (fp16 autocast can overflow) fail the job, naming
    the file, before it is written.
    """
    data_dir, out_dir = Path(data_dir), Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    meta: dict[str, Any] = {"encoder": encoder, "mu": mu, "seed": seed, "splits": {}}
    loaded = None
    if encoder != TABULAR_ENCODER:
        loaded = load_encoder(settings["name"], device, settings.get("revision"), deterministic)
        meta.update(
            **device_record(device, loaded.device),
            pooling=settings["pooling"],
            max_length=settings["max_length"],
            sensitive_words=list(settings.get("sensitive_words", [])),
            **loaded.spec.as_dict(),
        )
    for split in SPLITS:
        frame = pd.read_parquet(data_dir / f"{split}.parquet")
        if loaded is None:
            if mu:
                raise ValueError(f"word dropout mu={mu} does not apply to tabular dataset {data_dir.name}")
            features, stats = tabular_features(frame), {"n": len(frame), "dim": sum(c.startswith("x_") for c in frame)}
        else:
            texts, dropout = apply_word_dropout(
                frame["text"].tolist(), frame["id"].tolist(), mu, seed, settings.get("sensitive_words", ())
            )
            features, stats = extract_embeddings(
                texts,
                loaded,
                pooling=settings["pooling"],
                max_length=settings["max_length"],
                batch_size=settings["batch_size"],
                threads=threads,
                sort_by_length=settings["sort_by_length"],
                progress=progress,
            )
            stats = {**stats, "word_dropout": dropout}
        save_finite(out_dir / f"{split}.npy", features.astype(np.float32, copy=False),
                    hint="CUDA autocast (fp16/bf16) can overflow: try encoder.device: cpu"
                    if loaded is not None and loaded.device.type == "cuda" else "")
        meta["splits"][split] = {"input_sha256": sha256_file(data_dir / f"{split}.parquet"), **stats}
    meta["dim"] = int(features.shape[1])
    meta["seconds"] = round(time.perf_counter() - started, 3)
    meta["versions"] = versions()
    (out_dir / "meta.json").write_text(json.dumps(meta, indent=2, default=str) + "\n")
    return meta
