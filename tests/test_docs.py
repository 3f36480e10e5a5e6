"""The documentation holds together: links resolve, named make targets and config keys exist, and nothing
cites a document outside the repository."""

from __future__ import annotations

import re
import subprocess
import unicodedata
from pathlib import Path

import pytest
import yaml

from conftest import PROJECT_ROOT

DOCS = [PROJECT_ROOT / "README.md", PROJECT_ROOT / "CHANGELOG.md", *sorted((PROJECT_ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def github_anchor(heading: str) -> str:
    """GitHub's anchor for a Markdown heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[`*_]", "", heading.strip().lower())
    text = "".join(c for c in text if c in " -" or unicodedata.category(c)[0] in "LN")
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    text = re.sub(r"```.*?```", "", path.read_text(), flags=re.S)
    return {github_anchor(m.group(1)) for m in re.finditer(r"^#{1,6} +(.+?) *$", text, flags=re.M)}


def test_anchor_rule_on_hand_cases():
    assert github_anchor("Causes: the reference code's mechanisms") == "causes-the-reference-codes-mechanisms"
    assert github_anchor("`make run` and ε") == "make-run-and-ε"


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(PROJECT_ROOT)))
def test_every_relative_link_resolves(doc: Path):
    broken = []
    for target in LINK.findall(re.sub(r"```.*?```", "", doc.read_text(), flags=re.S)):
        if re.match(r"[a-z]+:", target):  # http:, https:, mailto:
            continue
        file_part, _, anchor = target.partition("#")
        path = (doc.parent / file_part).resolve() if file_part else doc
        if not path.exists():
            broken.append(f"{target}: no such file")
        elif anchor and path.suffix == ".md" and anchor not in anchors(path):
            broken.append(f"{target}: no heading #{anchor}")
    assert not broken, broken


def test_named_make_targets_and_config_keys_exist():
    targets = set(re.findall(r"^([a-z][a-z-]*):", (PROJECT_ROOT / "Makefile").read_text(), flags=re.M))
    schema = yaml.safe_load((PROJECT_ROOT / "schemas" / "config.schema.yaml").read_text())
    keys = set(schema["properties"])
    missing = []
    for doc in DOCS:
        text = doc.read_text()
        # `make results/...` names a file, built by the Makefile's pattern rules: tests/test_reproducing.py checks those
        named = re.findall(r"`make ([a-z][a-z-]*)(?![\w/.-])", text)
        missing += [f"{doc.name}: make {t}" for t in named if t not in targets]
        # keys set on a command line: --config 'key=...', CLAIMS_CONFIG='key=...'
        for command in re.findall(r"(?:--config|CLAIMS_CONFIG=)((?:\s*'?[a-z_]+=[^\s`]*)+)", text):
            missing += [f"{doc.name}: config key {k}" for k in re.findall(r"'?([a-z_]+)=", command) if k not in keys]
    readme = (PROJECT_ROOT / "README.md").read_text()
    table = readme.split("## Configuration", 1)[1].split("\n## ", 1)[0]
    for row in re.findall(r"^\| (`.+?) \|", table, flags=re.M):
        missing += [f"README config table: {k}" for k in re.findall(r"`([a-z_]+)`", row) if k not in keys]
    assert not missing, missing


def test_nothing_cites_a_document_outside_the_repository():
    tracked = subprocess.run(["git", "ls-files"], cwd=PROJECT_ROOT, capture_output=True, text=True, check=True)
    outside = re.compile(r"SPEC §|SPEC\.md|\.\./shared/SPEC|STYLE\.md")
    hits = [f"{name}:{n}" for name in tracked.stdout.split() if name.endswith((".py", ".md", ".smk", ".yaml", ".rst"))
            and name != "tests/test_docs.py" and (PROJECT_ROOT / name).exists()
            for n, line in enumerate((PROJECT_ROOT / name).read_text().splitlines(), 1) if outside.search(line)]
    assert not hits, hits


def test_readme_is_an_entrance():
    assert len((PROJECT_ROOT / "README.md").read_text().splitlines()) <= 250
