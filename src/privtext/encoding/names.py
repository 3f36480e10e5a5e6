"""Encoder names as the grid spells them, without importing torch (the Snakefile reads these while parsing)."""

from __future__ import annotations

import re
from pathlib import Path

TABULAR_ENCODER = "features"  # tabular datasets: their feature columns, no text encoder
DEFAULT_ENCODER = "minilm"  # the offline default text encoder (privtext.encoding.encoders loads it)
FOLDER_REVISION_PATTERN = r"[0-9a-f]{64}"  # a folder's revision (minilm's too): the sha256 of its files
HUB_REVISION_PATTERN = r"[A-Za-z0-9._/-]{1,255}"  # a Hub id's revision: a commit, tag or branch name


def is_local_folder(name: str) -> bool:
    """Whether an encoder name means a local model folder rather than a Hugging Face id."""
    if name == DEFAULT_ENCODER:
        return False
    return name.startswith(("/", "./", "../", "~")) or Path(name).expanduser().is_dir()


def missing_folder(name: str) -> str | None:
    """Why an encoder name written as a path cannot be used (it is not a folder), or None."""
    if not is_local_folder(name) or Path(name).expanduser().is_dir():
        return None
    return (f"{name!r} is written as a path but is not a folder; expected a local model folder, or a Hugging Face "
            "id such as 'org/model'")


def revision_form_problem(name: str, revision: str) -> str | None:
    """Why ``revision`` has not the form the encoder ``name`` takes (a local encoder's: the sha256 of its files; a
    Hub id's: a commit, tag or branch name), or None. The config refuses it before any job, the encoder at load."""
    local = name == DEFAULT_ENCODER or is_local_folder(name)  # minilm's package is a folder too
    if re.fullmatch(FOLDER_REVISION_PATTERN if local else HUB_REVISION_PATTERN, revision):
        return None
    expected = ("the sha256 of the encoder's files (64 lowercase hex digits, as meta.json records it in "
                "encoder_files_sha256)" if local else "a commit, tag or branch name")
    return f"{revision!r} for encoder {name!r}; expected {expected}"
