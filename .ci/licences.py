"""Check the licence of every Python package installed in .venv against the project's MIT licence.

    .venv/bin/python .ci/licences.py        (make licences; .ci/run runs it after the tests)

pip-licenses reads each package's metadata. A package passes when every part of its licence is permissive
(MIT, BSD, Apache, ISC, PSF and kin), or when it is in REVIEWED, which names each weak-copyleft or mixed
package with the reason it is compatible. A package whose metadata states no licence passes only when its
licence file is the MIT text. Anything else fails, naming the package and its licence: a new dependency under
GPL, or an unreviewed LGPL or MPL one, stops CI until it is reviewed here.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

PERMISSIVE = re.compile(
    r"^(MIT( License)?|MIT-CMU|BSD( License)?|BSD-[23]-Clause|0BSD|Apache( Software License| 2\.0( License)?|-2\.0)?"
    r"|Apache-2\.0 WITH LLVM-exception|ISC( License \(ISCL\))?|PSF-2\.0|Python Software Foundation License"
    r"|CNRI-Python|Zlib|CC0-1\.0|BSL-1\.0|Public Domain|The Unlicense( \(Unlicense\))?|Unlicense|HPND)$")
# Weak copyleft or mixed, reviewed: each is used as an unmodified library, which its licence allows under MIT.
REVIEWED = {
    "gensim": "LGPL-2.1: imported unmodified as a library (Blog's LDA); the LGPL allows that from MIT code",
    "tqdm": "MPL-2.0 AND MIT: file-level copyleft on tqdm's own files, used unmodified",
    "certifi": "MPL-2.0: file-level copyleft on its CA bundle, used unmodified",
    "pathspec": "MPL-2.0: file-level copyleft, used unmodified (snakefmt's formatter, a dev tool)",
    "docutils": "public domain and BSD-2-Clause for the package; GPL only for optional tools it does not install",
}
MIT_TEXT = "Permission is hereby granted, free of charge"


def licence_parts(licence: str) -> list[str]:
    """The parts of a licence expression or classifier list: 'MPL-2.0 AND MIT' -> ['MPL-2.0', 'MIT']."""
    parts = [part.strip() for part in re.split(r";| AND | OR |, ", licence)]
    # an expression's grouping brackets, not those of a name such as "ISC License (ISCL)"
    parts = [part[1:] if part.startswith("(") and ")" not in part else part for part in parts]
    parts = [part[:-1] if part.endswith(")") and "(" not in part else part for part in parts]
    return [part for part in parts if part]


def verdict(package: dict[str, str]) -> str | None:
    """None when ``package`` (pip-licenses' Name, License, LicenseText) may be used; else why not."""
    name, licence = package["Name"], package["License"]
    if name.lower() in REVIEWED:
        return None
    if licence == "UNKNOWN":
        return None if MIT_TEXT in package.get("LicenseText", "") else "states no licence and its file is not MIT's"
    unknown = [part for part in licence_parts(licence) if not PERMISSIVE.fullmatch(part)]
    return f"{' and '.join(unknown)} is not permissive and not reviewed in .ci/licences.py" if unknown else None


def main() -> int:
    pip_licenses = Path(sys.executable).parent / "pip-licenses"
    listed = subprocess.run([str(pip_licenses), "--format=json", "--from=mixed", "--with-license-file",
                             "--no-license-path"], capture_output=True, text=True, check=True).stdout
    packages = json.loads(listed)
    refused = [(p["Name"], p["Version"], p["License"], why) for p in packages if (why := verdict(p))]
    for name, version, licence, why in refused:
        print(f"licence check: {name} {version} ({licence}): {why}")
    reviewed = sorted(p["Name"] for p in packages if p["Name"].lower() in REVIEWED)
    print(f"licence check: {len(packages)} packages, {len(refused)} refused; reviewed: {', '.join(reviewed)}")
    return 1 if refused else 0


if __name__ == "__main__":
    sys.exit(main())
