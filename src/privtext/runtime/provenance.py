"""What produced a result: library versions, platform and input hashes, recorded next to every output."""

from __future__ import annotations

import hashlib
import platform
import sys
from importlib import metadata
from pathlib import Path

PACKAGES = ("privtext", "torch", "numpy", "pandas", "scikit-learn", "scipy", "transformers", "gensim", "nltk", "spacy", "snakemake")


def versions() -> dict[str, str]:
    found = {"python": sys.version.split()[0], "platform": platform.platform()}
    for package in PACKAGES:
        try:
            found[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            continue
    return found


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def sha256_file(path: str | Path) -> str:
    """sha256 of a file's bytes; for a folder, sha256 over its sorted ``relative path \\t file sha256`` lines."""
    path = Path(path)
    if path.is_dir():
        listing = "".join(f"{child.relative_to(path).as_posix()}\t{sha256_file(child)}\n"
                          for child in sorted(p for p in path.rglob("*") if p.is_file()))
        return sha256_bytes(listing.encode())
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
