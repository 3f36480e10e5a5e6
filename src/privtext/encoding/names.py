"""Encoder names as the grid spells them, without importing torch (the Snakefile reads these while parsing)."""

from __future__ import annotations

from pathlib import Path

TABULAR_ENCODER = "features"  # tabular datasets: their feature columns, no text encoder
DEFAULT_ENCODER = "minilm"  # the offline default text encoder (privtext.encoding.encoders loads it)
FOLDER_REVISION_PATTERN = r"[0-9a-f]{64}"  # a folder's revision (minilm's too): the sha256 of its files


def is_local_folder(name: str) -> bool:
    """Whether an encoder name means a local model folder rather than a Hugging Face id."""
    if name == DEFAULT_ENCODER:
        return False
    return name.startswith(("/", "./", "../", "~")) or Path(name).expanduser().is_dir()
