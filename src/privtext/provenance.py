"""What produced a result: library versions and platform, recorded next to every output."""

from __future__ import annotations

import platform
import sys
from importlib import metadata

PACKAGES = ("privtext", "torch", "numpy", "pandas", "scikit-learn", "scipy", "transformers", "gensim", "nltk", "spacy", "snakemake")


def versions() -> dict[str, str]:
    found = {"python": sys.version.split()[0], "platform": platform.platform()}
    for package in PACKAGES:
        try:
            found[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            continue
    return found
