"""The licence check .ci/run runs (.ci/licences.py): what it lets through and what it stops."""

from __future__ import annotations

import importlib.util

import pytest

from conftest import PROJECT_ROOT

_spec = importlib.util.spec_from_file_location("licences", PROJECT_ROOT / ".ci" / "licences.py")
licences = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(licences)


@pytest.mark.parametrize("name, licence, text", [
    ("numpy", "BSD License", ""), ("rich", "MIT", ""), ("shellingham", "ISC License (ISCL)", ""),
    ("torch", "BSD-3-Clause AND 0BSD AND MIT AND Zlib AND CC0-1.0", ""), ("x", "(MIT OR Apache-2.0)", ""),
    ("tqdm", "MPL-2.0 AND MIT", ""), ("gensim", "LGPL-2.1-only", ""),  # reviewed
    ("snakemake-interface-common", "UNKNOWN", "MIT License\n\nPermission is hereby granted, free of charge, to"),
])
def test_permissive_and_reviewed_licences_pass(name, licence, text):
    assert licences.verdict({"Name": name, "License": licence, "LicenseText": text}) is None


@pytest.mark.parametrize("name, licence, text, why", [
    ("newdep", "GPL-3.0-or-later", "", "GPL-3.0-or-later is not permissive"),
    ("otherlib", "LGPL-2.1-only", "", "LGPL-2.1-only is not permissive and not reviewed"),
    ("mixed", "MIT AND MPL-2.0", "", "MPL-2.0 is not permissive"),
    ("quiet", "UNKNOWN", "All rights reserved.", "states no licence"),
])
def test_copyleft_unreviewed_or_unstated_licences_are_refused(name, licence, text, why):
    assert why in licences.verdict({"Name": name, "License": licence, "LicenseText": text})


def test_every_installed_package_passes():
    assert licences.main() == 0
